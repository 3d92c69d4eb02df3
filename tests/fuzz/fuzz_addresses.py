"""Fuzz target: malicious addresses against an exact model (docs/decisions/0014-addresses.md).

One case = guest memory with allocations at the edges of the address space (at VA 0, ending at
the canonical hole, at the start of the upper half, just below the top of the space, and an
ordinary one) and one access template -- a global store, global load or atomic of 1-16 bytes per
lane, or a scalar load of 4-64 bytes -- whose base address and per-lane stride come from user
SGPRs: addresses that wrap past 2^64, sit at window edges, cross the hole, are not canonical, or
spread lanes (wave32 and wave64, random EXEC) over a window's end.  The program text depends only
on the template, so the native tier compiles each once.

The model: the windows are the tracer's; an access lands only when its address is canonical and
every byte lies in one window (an atomic: its aligned cell), exactly (Python integers).  A case
fails (AssertionError naming the seed) when an exception escapes, when the dispatch is refused
but some access was inside or guest memory changed, when it lands although some access was
outside, when the escape count differs, or when the landed bytes differ from the model's.  Runs
on NumPy blocks (wave and lane mode) and, for every fourth seed, on the native tier.

    python3 tools/fuzz.py addresses --count 1000 --jobs 2        (docs/fuzzing.md)
"""

from __future__ import annotations

import atexit
import copy
import functools
import os
import pathlib
import random
import shutil
import sys
import tempfile

import numpy as np

# tests/execute (the Rig and the assembler), also when tools/fuzz.py imports this file
_EXECUTE = str(pathlib.Path(__file__).resolve().parent.parent / "execute")
if _EXECUTE not in sys.path:
    sys.path.insert(0, _EXECUTE)

from harness import Rig, ptr  # noqa: E402

TIME_LIMIT = 60.0
TOP = 1 << 64
HOLE = 1 << 47
UPPER = 0xFFFF_8000_0000_0000
# allocations an attacker aims at: (address, size); the one at 0 is windowed through an image T#
EDGES = ((0, 0x100), (HOLE - 0x100, 0x100), (UPPER, 0x100), (TOP - 0x200, 0x100), (0x3_0000_0000, 0x100))
STORES = {
    1: "global_store_byte",
    2: "global_store_short",
    4: "global_store_dword",
    8: "global_store_dwordx2",
    12: "global_store_dwordx3",
    16: "global_store_dwordx4",
}
LOADS = {
    1: "global_load_ubyte",
    2: "global_load_ushort",
    4: "global_load_dword",
    8: "global_load_dwordx2",
    12: "global_load_dwordx3",
    16: "global_load_dwordx4",
}
SLOADS = {
    4: "s_load_dword",
    8: "s_load_dwordx2",
    16: "s_load_dwordx4",
    32: "s_load_dwordx8",
    64: "s_load_dwordx16",
}
VREGS = {1: "v4", 2: "v4", 4: "v4", 8: "v[4:5]", 12: "v[4:6]", 16: "v[4:7]"}
SREGS = {4: "s20", 8: "s[20:21]", 16: "s[20:23]", 32: "s[20:27]", 64: "s[20:35]"}
# user SGPRs: s0:s1 base, s2:s3 the result buffer, s4 stride, s5 EXEC_HI, s6 EXEC_LO, s7 data,
# s8..s15 pointers that window the allocations
HEAD = """
    s_mov_b32 exec_lo, s6
    {exec_hi}
    v_mul_lo_u32 v3, v0, s4
    v_mov_b32 v2, s1
    v_add_co_u32 v1, vcc_lo, s0, v3
    v_add_co_ci_u32_e32 v2, vcc_lo, 0, v2, vcc_lo
    v_mul_lo_u32 v4, v0, 0x01010101
    v_add_nc_u32 v4, s7, v4
    v_xor_b32 v5, 0x5a5a5a5a, v4
    v_xor_b32 v6, 0xa5a5a5a5, v4
    v_not_b32 v7, v4
    v_lshlrev_b32 v8, 4, v0
"""


def template(kind: str, nb: int, wave64: bool) -> str:
    head = HEAD.format(exec_hi="s_mov_b32 exec_hi, s5" if wave64 else "")
    if wave64:
        head = head.replace("vcc_lo", "vcc")
    if kind == "store":
        body = f"{STORES[nb]} v[1:2], {VREGS[nb]}, off\n"
    elif kind == "atomic":
        body = "global_atomic_add v[1:2], v4, off\n"
    elif kind == "load":
        body = (
            "v_mov_b32 v4, 0\nv_mov_b32 v5, 0\nv_mov_b32 v6, 0\nv_mov_b32 v7, 0\n"
            f"{LOADS[nb]} {VREGS[nb] if nb > 2 else 'v4'}, v[1:2], off\ns_waitcnt vmcnt(0)\n"
            "global_store_dwordx4 v8, v[4:7], s[2:3]\n"
        )
    else:  # scalar load: its first 16 bytes stored per lane
        body = (
            f"{SLOADS[nb]} {SREGS[nb]}, s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n"
            + "".join(f"v_mov_b32 v{4 + k}, {'s' + str(20 + k) if 4 * k < nb else '0'}\n" for k in range(4))
            + "global_store_dwordx4 v8, v[4:7], s[2:3]\n"
        )
    return head + body + "s_endpgm\n"


def _native_cache():
    if "WAVELIFT_NATIVE_CACHE" not in os.environ:
        d = tempfile.mkdtemp(prefix="wl-fuzz-addr-")
        atexit.register(shutil.rmtree, d, True)
        os.environ["WAVELIFT_NATIVE_CACHE"] = d


@functools.cache
def _code(kind, nb, wave64):
    from asm import assemble

    return assemble(template(kind, nb, wave64), wave64)


def _address(r: random.Random, allocs) -> int:
    """A base address an attacker would pick."""
    base, size = r.choice(allocs)
    k = r.choice((0, 1, 2, 4, 8, 12, 15, 16, 64, r.randrange(1, 256)))
    x = r.randrange(8)
    if x == 0:
        a = base - k  # before a window (wraps below 0)
    elif x == 1:
        a = base + size - k  # at its end
    elif x == 2:
        a = base + r.randrange(size)  # inside
    elif x == 3:
        a = TOP - k  # the top of the space: wraps onto VA 0
    elif x == 4:
        a = HOLE - k  # the hole's edges
    elif x == 5:
        a = UPPER - k
    elif x == 6:  # a non-canonical spelling of an address inside
        a = (base + r.randrange(size)) & ((1 << 48) - 1) | (r.randrange(1, 0xFFFF) << 48)
    else:
        a = (base + r.randrange(size)) & ((1 << 48) - 1)  # the 48-bit form
    return a % TOP


def build(seed: int):
    r = random.Random(seed)
    wave64 = r.random() < 0.3
    kind = r.choice(("store", "store", "load", "atomic", "smem"))
    nb = 4 if kind == "atomic" else r.choice(sorted(SLOADS if kind == "smem" else STORES))
    rig = Rig.__new__(Rig)  # (Rig's memory, this template's code)
    from wavelift.memory.guest import GuestMemory

    rig.mem, rig.code = GuestMemory(), _code(kind, nb, wave64)
    rig.prog = rig.mem.alloc(len(rig.code) + 256, name="code", data=rig.code + b"\0" * 256)
    rig.wave_size, rig.target = (64 if wave64 else 32), "gfx1030"
    allocs = [e for e in EDGES if r.random() < 0.7] or [EDGES[0]]
    for a, s in allocs:
        rig.mem.alloc(
            s, name=f"edge{a:x}", address=a, align=64, data=bytes(r.getrandbits(8) for _ in range(s))
        )
    result = rig.mem.alloc(64 * 16, name="result")
    base = _address(r, allocs)
    stride = r.choice((0, nb, nb, 4, 1, r.randrange(0, 64), 0x100, 0xFFFFFFFF, 0xFFFFFFF0))
    if kind == "atomic" and stride not in (0,) and stride < 4:
        stride = 4  # (overlapping unaligned cells: order-dependent)
    mask = r.choice((1, 0xFFFFFFFF, 0x80000001, r.getrandbits(32), 0))
    hi = r.choice((0, 0xFFFFFFFF, r.getrandbits(32), 0x80000000)) if wave64 else 0
    words = [w for a, _ in allocs if a != 0 for w in ptr(a)]
    tsharp = [0x10, 0, 0, 0x80000000] if any(a == 0 for a, _ in allocs) else []
    user = (
        list(ptr(base))
        + list(ptr(result))
        + [stride & 0xFFFFFFFF, hi, mask, r.getrandbits(32)]
        + words
        + tsharp
    )[:16]
    info = dict(
        kind=kind,
        nb=nb,
        wave64=wave64,
        base=hex(base),
        stride=hex(stride),
        exec=hex(hi << 32 | mask),
        allocs=[hex(a) for a, _ in allocs],
    )
    return rig, user, info


def model(mem, L, user, info, windows):
    """-> (escapes, {address: byte} the dispatch must land when nothing escapes), from guest
    memory ``mem`` as it was before the dispatch."""
    kind, nb = info["kind"], info["nb"]
    ex = int(info["exec"], 16) & ((1 << L) - 1)
    base, stride = user[0] | user[1] << 32, user[4]
    result = user[2] | user[3] << 32
    wins = [(w.address, w.address + w.size) for w in windows]

    def inside(a, n):  # canonical, and every byte in one window
        return (a < HOLE or a >= UPPER) and any(s <= a and a + n <= e for s, e in wins)

    def data(lane):
        v = (user[7] + lane * 0x01010101) & 0xFFFFFFFF
        return [v, v ^ 0x5A5A5A5A, v ^ 0xA5A5A5A5, ~v & 0xFFFFFFFF]

    lanes = [k for k in range(L) if ex >> k & 1]
    if kind == "smem":  # (a scalar load runs whatever EXEC says)
        a = base & ~3
        if not inside(a, nb):
            return 1, {}
        src = mem.read(a, nb)[:16].ljust(16, b"\0")
        return 0, {result + 16 * k + i: src[i] for k in lanes for i in range(16)}
    out, esc = {}, 0
    for k in lanes:
        a = (base + (k * stride & 0xFFFFFFFF)) % TOP
        if kind == "atomic":
            a &= ~3
        if not inside(a, nb):
            esc += 1
            continue
        if kind == "store":
            b = b"".join(x.to_bytes(4, "little") for x in data(k))[:nb]
            out.update({a + i: b[i] for i in range(nb)})
        elif kind == "atomic":
            old = int.from_bytes(bytes(out.get(a + i, mem.read(a + i, 1)[0]) for i in range(4)), "little")
            new = (old + data(k)[0]) & 0xFFFFFFFF
            out.update({a + i: new >> 8 * i & 0xFF for i in range(4)})
        else:
            src = mem.read(a, nb).ljust(16, b"\0")
            out.update({result + 16 * k + i: src[i] for i in range(16)})
    return esc, out


def run(seed: int, tier: str, mode: str):
    from wavelift.backends.numpy import runtime

    rig, user, info = build(seed)
    cfg = rig.config(user_sgprs=user, block=(rig.wave_size, 1, 1))
    where = f"seed {seed} ({tier}, {mode}, {info})"
    mem = copy.deepcopy(rig.mem)
    old = runtime.NATIVE, runtime.NATIVE_DRIVER
    if tier == "native":
        _native_cache()
    runtime.NATIVE, runtime.NATIVE_DRIVER = ("on", True) if tier == "native" else ("off", True)
    try:
        res = rig.run(cfg, mode=mode)
    except Exception as e:
        raise AssertionError(f"{where}: raised {type(e).__name__}: {e}") from e
    finally:
        runtime.NATIVE, runtime.NATIVE_DRIVER = old
    esc, want = model(mem, rig.wave_size, user, info, res.windows)
    if esc:
        assert res.refusal is not None and res.refusal.code == "escape", f"{where}: {res.refusal}"
        assert res.stats["escapes"] == esc, f"{where}: {res.stats['escapes']} escapes, model {esc}"
        for a, b in zip(mem, rig.mem):
            assert bytes(a.data) == bytes(b.data), f"{where}: refused but {b.name} changed"
        return
    assert res.refusal is None, f"{where}: refused {res.refusal} (model: every access inside)"
    for a, b in zip(mem, rig.mem):  # every byte: the model's or as before
        exp = bytearray(a.data)
        for k, v in want.items():
            if a.base <= k < a.base + a.size:
                exp[k - a.base] = v
        bad = np.flatnonzero(np.frombuffer(bytes(exp), np.uint8) != b.data)
        assert not bad.size, (
            f"{where}: {b.name} bytes {[hex(a.base + int(i)) for i in bad[:8]]} differ from the model"
        )


def case(seed: int) -> None:
    run(seed, "numpy", "wave")
    run(seed, "numpy", "lane")
    if seed % 4 == 0:
        run(seed, "native", "wave")


def test_addresses_short():
    """A fixed range of seeds on NumPy blocks, one on the native tier (its compile: ~1-2 s)."""
    for seed in range(12):
        run(seed, "numpy", "wave")
        run(seed, "numpy", "lane")
    run(0, "native", "wave")
