"""GFX12 buffer instructions (VBUFFER) in clang-19's own code, against a NumPy reference written
from the documented semantics (decision 0027 "VBUFFER"; docs/gfx12-buffer.md), and the
same IR built for gfx1030 (whose MUBUF path is exact) as a second source where GFX10.3's and GFX12's
rules agree.

tests/fixtures/gfx1200/buffers.ll calls llvm.amdgcn.raw.buffer.load/store/atomic.* and
struct.buffer.* on a V# it builds from a pointer argument and three argument words (word 1's
stride/swizzle bits, NUM_RECORDS, word 3), so each case picks the descriptor at run time; built by
tests/fixtures/gfx1200/build_buffers.sh for gfx1200, gfx1201 and gfx1030, wave32 and wave64
(commands: tests/fixtures/build_log/clang-buffers.tsv).  Every case runs in wave and lane mode."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wavelift

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = [
    ln.split("\t") for ln in (ROOT / "tests/fixtures/build_log/clang-buffers.tsv").read_text().splitlines()
]
N = 64  # one workgroup of 64 work-items (two waves in wave32)
SEL = 4 | 5 << 3 | 6 << 6 | 7 << 9  # DST_SEL x, y, z, w
FMT_32_FLOAT = 22  # GFX10 and GFX11/12 buffer format numbers agree on 32_FLOAT


def flags(target: str, oob: int, add_tid: bool = False, extra: int = 0, fmt: int = FMT_32_FLOAT) -> int:
    """Word 3 of the V#: GFX12 (RDNA4: ROCR's SQ_BUF_RSRC_WORD3_GFX12) or GFX10.3 (RESOURCE_LEVEL
    [24] set, as Mesa sets it below GFX11)."""
    w = SEL | fmt << 12 | oob << 28 | (1 << 23 if add_tid else 0) | extra
    return w | (1 << 24 if target == "gfx1030" else 0)


def path(target: str, wave: int) -> str:
    (row,) = [r for r in ROWS if r[3] == target and r[4] == f"w{wave}"]
    return row[1]


# ------------------------------------------------------------------------------ the reference
def oob(sel: int, idx: int, off: int, payload: int, stride: int, nrec: int) -> bool:
    """GFX11+'s range check (Mesa ac_descriptors.c's OOB_SELECT comment), unswizzled V#."""
    if sel == 0:
        return idx >= nrec or off + payload > stride
    if sel == 1:
        return idx >= nrec
    if sel == 2:
        return nrec == 0
    return stride * idx + off + payload > nrec


def lane_idx(t: int, wave: int, add_tid: bool, vindex: int = 0) -> int:
    return vindex + (t % wave if add_tid else 0)


def ref_load(mem: np.ndarray, sel, idx, off, nbytes, stride, nrec, soff):
    """Per dword (at most 4 bytes each): the bytes at base + soff + stride*idx + off, or 0."""
    words = []
    for j in range(max(1, nbytes // 4)):
        o = off + 4 * j
        p = min(4, nbytes)
        if oob(sel, idx, o, p, stride, nrec):
            words.append(0)
            continue
        a = soff + stride * idx + o
        words.append(int.from_bytes(mem[a : a + p].tobytes(), "little"))
    return words


def ref_store(mem: np.ndarray, sel, idx, off, nbytes, vals, stride, nrec, soff):
    for j, v in enumerate(vals):
        o = off + 4 * j
        p = min(4, nbytes)
        if oob(sel, idx, o, p, stride, nrec):
            continue
        a = soff + stride * idx + o
        mem[a : a + p] = np.frombuffer(int(v & (2 ** (8 * p) - 1)).to_bytes(p, "little"), np.uint8)


def sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


# ------------------------------------------------------------------------------------ running
def launch(target, wave, mode, kernel, arrays, words):
    dev = wavelift.Device(target, mode=mode)
    co = dev.load_code_object(str(ROOT / path(target, wave)))
    bufs = [dev.upload(a) for a in arrays]
    r = co.kernel(kernel).launch(
        groups=(1, 1, 1), block=(N, 1, 1), args=bufs + [np.uint32(w & 0xFFFFFFFF) for w in words]
    )
    return r, [dev.download(b, a.dtype) for b, a in zip(bufs, arrays)]


SRC = (np.arange(1024, dtype=np.uint32) * np.uint32(0x9E3779B1) ^ np.uint32(0x5A5A1234)).astype(np.uint32)


def raw_loads_ref(wave, w1, nrec, fl, soff):
    mem = SRC.view(np.uint8)
    stride, sel, add_tid = (w1 >> 16) & 0x3FFF, (fl >> 28) & 3, bool(fl >> 23 & 1)
    out = np.zeros((N, 16), np.uint32)
    for t in range(N):
        idx = lane_idx(t, wave, add_tid)
        v = 4 * t
        got = []
        for off, nb in ((v, 4), (v + 8, 8), (v + 16, 12), (v + 32, 16)):
            got += ref_load(mem, sel, idx, off, nb, stride, nrec, soff)
        (e,) = ref_load(mem, sel, idx, v + 1, 1, stride, nrec, soff)
        (f,) = ref_load(mem, sel, idx, v + 3, 1, stride, nrec, soff)
        (g,) = ref_load(mem, sel, idx, v + 2, 2, stride, nrec, soff)
        (h,) = ref_load(mem, sel, idx, v + 6, 2, stride, nrec, soff)
        got += [e, sx(f, 8) & 0xFFFFFFFF, g, sx(h, 16) & 0xFFFFFFFF]
        out[t, :14] = got
    return out


def raw_stores_ref(wave, w1, nrec, fl, soff, init):
    mem = init.copy().view(np.uint8)
    stride, sel, add_tid = (w1 >> 16) & 0x3FFF, (fl >> 28) & 3, bool(fl >> 23 & 1)
    for t in range(N):
        idx = lane_idx(t, wave, add_tid)
        v, x = 48 * t, (t * 0x01010101) & 0xFFFFFFFF
        x1, x2, x3, x4 = ((x + k) & 0xFFFFFFFF for k in (1, 2, 3, 4))
        for off, nb, vals in (
            (v, 1, [x1]),
            (v + 2, 2, [x2]),
            (v + 4, 4, [x3]),
            (v + 8, 8, [x4, x1]),
            (v + 16, 12, [x2, x3, x4]),
            (v + 32, 16, [x1, x2, x3, t]),
        ):
            ref_store(mem, sel, idx, off, nb, vals, stride, nrec, soff)
    return mem.view(np.uint32)


def struct_ref(wave, w1, nrec, fl, soff, dst_init):
    src = SRC.view(np.uint8)
    dst = dst_init.copy().view(np.uint8)
    stride, sel, add_tid = (w1 >> 16) & 0x3FFF, (fl >> 28) & 3, bool(fl >> 23 & 1)
    out = np.zeros((N, 4), np.uint32)
    for t in range(N):
        idx = lane_idx(t, wave, add_tid, vindex=t)
        vo = (t & 1) * 4
        (a,) = ref_load(src, sel, idx, 4, 4, stride, nrec, soff)
        (b,) = ref_load(src, sel, idx, vo, 4, stride, nrec, soff)
        c = ref_load(src, sel, idx, 8, 8, stride, nrec, soff)
        out[t] = [a, b] + c
        y = t + 1000
        ref_store(dst, sel, idx, 0, 4, [y], stride, nrec, soff)
        ref_store(dst, sel, idx, vo, 8, [a, y], stride, nrec, soff)
    return out, dst.view(np.uint32)


ATOMIC_INIT = (np.arange(2048, dtype=np.uint32) * np.uint32(0x2545F491) + np.uint32(0x1234567)).astype(
    np.uint32
)
for _k in (10, 13):  # make the compare-and-swap slots of even lanes hold the compare value (the lane)
    for _t in range(0, N, 2):
        ATOMIC_INIT[2 * (_k * N + _t)] = _t
        ATOMIC_INIT[2 * (_k * N + _t) + 1] = 0
I32_OPS = ["add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "swap", "cmpswap"]


def atomics_ref(wave, w1, nrec, fl, soff):
    mem = ATOMIC_INIT.copy().view(np.uint8)
    stride, sel, add_tid = (w1 >> 16) & 0x3FFF, (fl >> 28) & 3, bool(fl >> 23 & 1)
    out = np.zeros(15 * N, np.uint64)
    M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
    for t in range(N):
        x = (t * 2654435761) & M32
        xw = ((x << 17) ^ x) & M64
        for k in range(15):
            wide = k in (11, 12, 13)
            nb = 8 if wide else 4
            if k == 14:  # structured: index = lane, offset 7168, stride from word 1
                idx, off = lane_idx(t, wave, add_tid, vindex=t), 7168
            else:
                idx, off = lane_idx(t, wave, add_tid), (k * N + t) * 8
            if oob(sel, idx, off, nb, stride, nrec):
                continue  # returns 0, writes nothing
            a = soff + stride * idx + off
            old = int.from_bytes(mem[a : a + nb].tobytes(), "little")
            if wide:
                new = {
                    11: (old + xw) & M64,
                    12: old if sx(old, 64) >= sx(xw, 64) else xw,
                    13: xw if old == t else old,
                }[k]
            elif k == 14:
                new = (old + x) & M32
            else:
                op = I32_OPS[k]
                new = {
                    "add": (old + x) & M32,
                    "sub": (old - x) & M32,
                    "smin": old if sx(old, 32) <= sx(x, 32) else x,
                    "umin": min(old, x),
                    "smax": old if sx(old, 32) >= sx(x, 32) else x,
                    "umax": max(old, x),
                    "and": old & x,
                    "or": old | x,
                    "xor": old ^ x,
                    "swap": x,
                    "cmpswap": x if old == t else old,
                }[op]
            mem[a : a + nb] = np.frombuffer(new.to_bytes(nb, "little"), np.uint8)
            out[k * N + t] = old
    return out, mem.view(np.uint32)


# --------------------------------------------------------------------------------- the cases
# (kernel, w1 (stride << 16), NUM_RECORDS, OOB_SELECT, ADD_TID, SOFFSET, agrees with GFX10.3)
CASES = {
    "raw_in_range": ("raw_loads", 0, 4096, 3, False, 0, True),
    "raw_nrec_dword_aligned": ("raw_loads", 0, 152, 3, False, 0, True),
    "raw_nrec_mid_dword": ("raw_loads", 0, 150, 3, False, 0, False),
    "raw_soffset": ("raw_loads", 0, 4096, 3, False, 64, True),
    "raw_sel2_empty": ("raw_loads", 0, 0, 2, False, 0, True),
    "raw_sel2_any": ("raw_loads", 0, 1, 2, False, 0, True),
    "raw_sel1_index": ("raw_loads", 0, 1, 1, False, 0, True),
    "raw_sel0_stride": ("raw_loads", 64 << 16, 1, 0, False, 0, False),
    "raw_add_tid": ("raw_loads", 16 << 16, 4096, 3, True, 0, True),
    "raw_add_tid_sel1": ("raw_loads", 16 << 16, 20, 1, True, 0, True),
    "store_in_range": ("raw_stores", 0, 3072, 3, False, 0, True),
    "store_nrec_aligned": ("raw_stores", 0, 1000, 3, False, 0, True),
    "store_nrec_mid_dword": ("raw_stores", 0, 1001, 3, False, 0, False),
    "store_soffset": ("raw_stores", 0, 4096, 3, False, 512, True),
    "struct_in_range": ("struct_ops", 16 << 16, 64, 1, False, 0, True),
    "struct_sel1_index": ("struct_ops", 16 << 16, 40, 1, False, 0, True),
    "struct_sel0_offset": ("struct_ops", 12 << 16, 50, 0, False, 0, False),
    "struct_sel3_bytes": ("struct_ops", 16 << 16, 500, 3, False, 0, True),
    "struct_soffset": ("struct_ops", 16 << 16, 64, 1, False, 8, True),
    "struct_add_tid": ("struct_ops", 8 << 16, 32, 1, True, 0, True),
    "atomic_in_range": ("atomics", 8 << 16, 8192, 3, False, 0, True),
    "atomic_nrec": ("atomics", 8 << 16, 5000, 3, False, 0, True),
    "atomic_nrec_wide": ("atomics", 8 << 16, 5636, 3, False, 0, False),
    "atomic_sel1": ("atomics", 8 << 16, 30, 1, False, 0, True),
}


def run_case(target, wave, mode, case):
    kernel, w1, nrec, sel, add_tid, soff, _ = CASES[case]
    fl = flags(target, sel, add_tid)
    if kernel == "raw_loads":
        out0 = np.zeros(16 * N, np.uint32)
        r, (_, out) = launch(target, wave, mode, kernel, [SRC, out0], [w1, nrec, fl, soff])
        return r, [out], [raw_loads_ref(wave, w1, nrec, fl, soff).reshape(-1)]
    if kernel == "raw_stores":
        init = np.full(1024 + 128, 0xA5C3E1F7, np.uint32)
        r, (buf,) = launch(target, wave, mode, kernel, [init], [w1, nrec, fl, soff])
        return r, [buf], [raw_stores_ref(wave, w1, nrec, fl, soff, init)]
    if kernel == "struct_ops":
        dst0 = np.full(512, 0x77777777, np.uint32)
        r, (_, out, dst) = launch(
            target, wave, mode, kernel, [SRC, np.zeros(4 * N, np.uint32), dst0], [w1, nrec, fl, soff]
        )
        o, d = struct_ref(wave, w1, nrec, fl, soff, dst0)
        return r, [out, dst], [o.reshape(-1), d]
    out0 = np.zeros(15 * N, np.uint64)
    buf0 = np.concatenate([ATOMIC_INIT, np.zeros(64, np.uint32)])
    r, (buf, out) = launch(target, wave, mode, kernel, [buf0, out0], [w1, nrec, fl, soff])
    o, m = atomics_ref(wave, w1, nrec, fl, soff)
    return r, [out, buf[: len(ATOMIC_INIT)]], [o, m]


def test_the_builds_are_logged():
    assert sorted((r[3], r[4]) for r in ROWS) == sorted(
        (t, f"w{w}") for t in ("gfx1200", "gfx1201", "gfx1030") for w in (32, 64)
    )
    assert all((ROOT / r[1]).is_file() and r[7].startswith("clang-19 ") for r in ROWS)


def test_the_code_is_vbuffer():
    """The gfx1200 builds use GFX12's buffer instructions (what the cases exercise)."""
    from wavelift.isa.llvm_oracle import objdump_lines

    text = "\n".join(objdump_lines(ROOT / path("gfx1200", 32), "gfx1200"))
    for m in (
        "buffer_load_b128",
        "buffer_load_i8",
        "buffer_load_u16",
        "buffer_store_b8",
        "buffer_store_b96",
        "idxen offen",
        "buffer_atomic_cmpswap_b64",
        "buffer_atomic_max_i64",
        "th:TH_ATOMIC_RETURN",
    ):
        assert m in text, m


def _params(targets, waves, modes, cases):
    return [(t, w, m, c) for t in targets for w in waves for m in modes for c in cases]


FAST = _params(("gfx1200",), (32,), ("wave", "lane"), CASES) + _params(("gfx1200",), (64,), ("wave",), CASES)
SLOW = [p for p in _params(("gfx1200", "gfx1201"), (32, 64), ("wave", "lane"), CASES) if p not in FAST]


def _check(target, wave, mode, case):
    r, got, want = run_case(target, wave, mode, case)
    assert r.landed, r.refusal
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"{case}: output {k}")


@pytest.mark.parametrize("target,wave,mode,case", FAST)
def test_against_the_reference(target, wave, mode, case):
    _check(target, wave, mode, case)


@pytest.mark.slow
@pytest.mark.parametrize("target,wave,mode,case", SLOW)
def test_against_the_reference_all(target, wave, mode, case):
    _check(target, wave, mode, case)


@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("case", [c for c, v in CASES.items() if v[-1]])
def test_same_as_gfx1030(wave, case):
    """Where GFX10.3's rules and GFX12's agree (NUM_RECORDS on dword/atomic-size boundaries, no
    OOB_SELECT 0 offset check), the gfx1030 build of the same IR lands the same bytes."""
    r10, got10, _ = run_case("gfx1030", wave, "wave", case)
    r12, got12, _ = run_case("gfx1200", wave, "wave", case)
    assert r10.landed and r12.landed, (r10.refusal, r12.refusal)
    for a, b in zip(got10, got12):
        np.testing.assert_array_equal(b, a)


# ----------------------------------------------------------------------------------- refusals
REFUSED = {
    "swizzle": (1 << 30, 0, 4096, 0),
    "swizzle_hi": (2 << 30, 0, 4096, 0),
    "write_compress": (0, 1 << 24, 4096, 0),
    "compression": (0, 1 << 25, 4096, 0),
    "compression_mode": (0, 1 << 26, 4096, 0),
    "type": (0, 1 << 30, 4096, 0),
    "soffset_in_range_check": (0, 0, 150, 64),
}


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("case", REFUSED)
def test_refused_by_name(case, mode):
    """A V# field or mode not carried out exactly refuses the dispatch by name, and nothing of it
    lands (the output buffer stays as it was)."""
    w1, extra, nrec, soff = REFUSED[case]
    out0 = np.full(16 * N, 0xDEADBEEF, np.uint32)
    fl = flags("gfx1200", 3, extra=extra)
    r, (_, out) = launch("gfx1200", 32, mode, "raw_loads", [SRC, out0], [w1, nrec, fl, soff])
    assert not r.landed and r.refusal.code == "program.unsupported_instruction", r.refusal
    np.testing.assert_array_equal(out, out0)


def test_format_invalid_refused_only_in_range():
    """FORMAT 0 (INVALID) with an in-range access refuses; with NUM_RECORDS 0 every access is out
    of range, and the loads give 0 (what hardware gives either way)."""
    fl = flags("gfx1200", 3, fmt=0)
    out0 = np.full(16 * N, 0xDEADBEEF, np.uint32)
    r, _ = launch("gfx1200", 32, "wave", "raw_loads", [SRC, out0], [0, 4096, fl, 0])
    assert not r.landed and "FORMAT" in r.refusal.message
    r, (_, out) = launch("gfx1200", 32, "wave", "raw_loads", [SRC, out0], [0, 0, fl, 0])
    assert r.landed, r.refusal
    np.testing.assert_array_equal(out.reshape(N, 16)[:, :14], 0)


@pytest.mark.parametrize(
    "src,why",
    [
        ("buffer_load_d16_format_x v1, v0, s[8:11], null offen", "odd number"),
        (
            "tbuffer_store_d16_format_xyz v[1:2], v0, s[8:11], null format:[BUF_FMT_32_FLOAT] offen",
            "odd number",
        ),
        ("buffer_load_d16_hi_format_x v1, v0, s[8:11], null offen", "without semantics"),
        ("buffer_load_b32 v[1:2], v0, s[8:11], null offen tfe", "TFE"),
        ("buffer_atomic_add_f32 v1, v0, s[8:11], null offen", "without semantics"),
        ("buffer_atomic_pk_add_f16 v1, v0, s[8:11], null offen", "without semantics"),
    ],
)
def test_instructions_refused_by_name(src, why):
    import subprocess
    import tempfile

    from wavelift.errors import Refused
    from wavelift.frontend.program import translate

    with tempfile.TemporaryDirectory() as d:
        s, o = pathlib.Path(d, "t.s"), pathlib.Path(d, "t.o")
        s.write_text(f".text\n{src}\ns_endpgm\n")
        subprocess.run(
            ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1200", "-filetype=obj", s, "-o", o],
            check=True,
            capture_output=True,
        )
        out = subprocess.run(
            ["llvm-objcopy-19", "-O", "binary", "--only-section=.text", o, pathlib.Path(d, "t.bin")],
            check=True,
            capture_output=True,
        )
        assert out.returncode == 0
        code = pathlib.Path(d, "t.bin").read_bytes()
    with pytest.raises(Refused) as e:
        translate(code, "gfx1200", 32, 0x10000)
    ref = e.value.refusal
    assert ref.code == "program.unsupported_instruction" and why in ref.message, ref


def test_every_vbuffer_mnemonic_has_a_handler():
    """Every VBUFFER mnemonic of LLVM 19's gfx1200 table reaches gfx12._vbuffer: it runs or is
    refused with a reason, never by the generic 'no frontend'."""
    from wavelift.frontend import gfx12
    from wavelift.isa.memory import load_memory_table

    names = {e["name"] for e in load_memory_table("gfx1200")["VBUFFER"].values() if e}
    assert {n for n in names if gfx12.HANDLERS.get(n) is not gfx12._vbuffer} == set()


# -------------------------------------------------------------------------------------- typed
def fmt_number(target: str, name: str) -> int:
    """The buffer format number of BUF_FMT_<name> on ``target``, as llvm-mc-19 assembles it into
    MTBUF (GFX10: dword 0 [25:19]) or VBUFFER (GFX12: dword 1 [29:23])."""
    import re
    import subprocess

    src = f"tbuffer_load_format_x v1, off, s[0:3], s0 format:[BUF_FMT_{name}]\n"
    out = subprocess.run(
        ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}", "-show-encoding"],
        input=src,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    enc = bytes(int(x, 16) for x in re.search(r"encoding: \[(.*)\]", out).group(1).split(","))
    w0, w1 = struct_words(enc)
    return (w0 >> 19) & 0x7F if target == "gfx1030" else (w1 >> 23) & 0x7F


def struct_words(enc: bytes) -> tuple[int, int]:
    return int.from_bytes(enc[0:4], "little"), int.from_bytes(enc[4:8], "little")


RNG = np.random.default_rng(7)
HALFS = RNG.uniform(-4, 4, 2048).astype(np.float16).view(np.uint16)
F32 = RNG.uniform(-100, 100, 1024).astype(np.float32).view(np.uint32)
BITS = RNG.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
# name -> (input words, 4 channels (an out-of-range load of it needs no default 1))
FORMATS = {
    "32_32_32_32_UINT": (BITS, True),
    "8_8_8_8_UINT": (BITS, True),
    "16_16_SINT": (BITS, False),
    "32_FLOAT": (F32, False),
    "32_32_FLOAT": (F32, False),
    "8_8_8_8_UNORM": (BITS, True),
    "8_8_8_8_SNORM": (BITS, True),
    "16_16_16_16_UNORM": (BITS, True),
    "16_16_FLOAT": (HALFS.view(np.uint32), False),
    "16_16_16_16_FLOAT": (HALFS.view(np.uint32), True),
    "2_10_10_10_UNORM": (BITS, True),
}


def typed_ref(name: str, data: np.ndarray, nrec: int):
    """NumPy reference of the `typed` kernel for the formats whose conversion is a bit move or an
    integer extension: (out, None) — the stores are checked against the gfx1030 build."""
    by = data.view(np.uint8)
    out = np.zeros((N, 8), np.uint32)
    for t in range(N):
        a = 16 * t
        if a + 1 > nrec:  # OOB_SELECT 3, the element's first byte (all 4-channel formats here)
            continue
        if name == "32_32_32_32_UINT":
            ch = [int(x) for x in data[4 * t : 4 * t + 4]]
        elif name == "8_8_8_8_UINT":
            ch = [int(x) for x in by[a : a + 4]]
        elif name == "16_16_SINT":
            h = data[4 * t : 4 * t + 1].view(np.int16)
            ch = [int(h[0]) & 0xFFFFFFFF, int(h[1]) & 0xFFFFFFFF, 0, 1]
        elif name == "32_FLOAT":
            ch = [int(data[4 * t]), 0, 0, 0x3F800000]
        else:
            return None
        out[t, :4] = ch
        out[t, 4] = ch[0]
        out[t, 5:7] = ch[:2]
    return out


TYPED_CASES = [(n, 4096) for n in FORMATS] + [(n, 16 * 40) for n, (_, four) in FORMATS.items() if four]


def run_typed(target, wave, mode, name, nrec, kernel="typed"):
    data, _ = FORMATS[name]
    fl = flags(target, 3, fmt=fmt_number(target, name))
    words = 8 if kernel == "typed" else 2
    dst0 = np.full(1024, 0x5555AAAA, np.uint32)
    return launch(target, wave, mode, kernel, [data, np.zeros(words * N, np.uint32), dst0], [0, nrec, fl, 0])


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("name,nrec", TYPED_CASES, ids=[f"{n}-{r}" for n, r in TYPED_CASES])
def test_typed_against_gfx1030_and_numpy(name, nrec, mode):
    """buffer_load_format_{x,xy,xyzw} and buffer_store_format_xyzw with the V#'s FORMAT (GFX12's
    number, from llvm-mc-19): the same bytes as the gfx1030 build with GFX10's number of the same
    format, and the NumPy reference where the conversion is a bit move or an integer extension."""
    r12, (_, out12, dst12) = run_typed("gfx1200", 32, mode, name, nrec)
    r10, (_, out10, dst10) = run_typed("gfx1030", 32, "wave", name, nrec)
    assert r12.landed and r10.landed, (r12.refusal, r10.refusal)
    np.testing.assert_array_equal(out12, out10)
    np.testing.assert_array_equal(dst12, dst10)
    ref = typed_ref(name, FORMATS[name][0], nrec)
    if ref is not None:
        np.testing.assert_array_equal(out12.reshape(N, 8), ref)


@pytest.mark.parametrize("name", ["16_16_16_16_FLOAT", "8_8_8_8_UINT", "16_16_16_16_UINT"])
@pytest.mark.parametrize("wave", [32, 64])
def test_typed_d16(name, wave):
    """buffer_load/store_d16_format_xyzw: four 16-bit channels in two VGPRs; the halves are the
    format's own bits here (16-bit float, 8/16-bit unsigned): NumPy reference and gfx1030."""
    data = FORMATS.get(name, (BITS, True))[0]
    FORMATS.setdefault(name, (BITS, True))
    r12, (_, out12, dst12) = run_typed("gfx1200", wave, "wave", name, 4096, "typed_d16")
    r10, (_, out10, dst10) = run_typed("gfx1030", wave, "wave", name, 4096, "typed_d16")
    assert r12.landed and r10.landed, (r12.refusal, r10.refusal)
    np.testing.assert_array_equal(out12, out10)
    np.testing.assert_array_equal(dst12, dst10)
    by = data.view(np.uint8)
    if name == "8_8_8_8_UINT":
        want = by[: 16 * N].reshape(N, 16)[:, :4].astype(np.uint16)
    else:
        want = data.view(np.uint16)[: 8 * N].reshape(N, 8)[:, :4]
    np.testing.assert_array_equal(out12.view(np.uint16).reshape(N, 4), want)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_tbuffer_format_from_the_instruction(wave, mode):
    """tbuffer_load_format_xyzw reads with the instruction's format (8_8_8_8_UINT), whatever the
    V#'s FORMAT (here 32_FLOAT): each byte zero-extended (NumPy), as the gfx1030 build does."""
    out0 = np.zeros(4 * N, np.uint32)
    r12, (_, out12) = launch(
        "gfx1200", wave, mode, "tbuf_gfx11", [BITS, out0], [0, 4096, flags("gfx1200", 3), 0]
    )
    r10, (_, out10) = launch(
        "gfx1030", wave, "wave", "tbuf_gfx10", [BITS, out0], [0, 4096, flags("gfx1030", 3), 0]
    )
    assert r12.landed and r10.landed, (r12.refusal, r10.refusal)
    want = BITS.view(np.uint8)[: 4 * N + 3]
    want = np.stack([want[4 * t : 4 * t + 4] for t in range(N)]).astype(np.uint32).reshape(-1)
    np.testing.assert_array_equal(out12, want)
    np.testing.assert_array_equal(out10, want)


def test_typed_element_partly_out_of_range_is_refused():
    r, (_, out, dst) = run_typed("gfx1200", 32, "wave", "32_32_32_32_UINT", 16 * 40 + 4)
    assert not r.landed and r.refusal.code == "buffer.unsupported_format", r.refusal


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
@pytest.mark.parametrize(
    "src",
    [
        "buffer_load_format_xyzw v[4:7], v0, s[0:3], 0 idxen",
        "tbuffer_load_format_xyzw v[4:7], v0, s[0:3], 0 format:[BUF_FMT_8_8_8_8_UINT] idxen",
    ],
)
def test_names_shared_with_mubuf_keep_the_mubuf_frontend(target, src):
    """gfx12.HANDLERS is looked up by name for every target: a GFX10/GFX11 MUBUF/MTBUF word with
    a VBUFFER mnemonic (the typed ones) gets the MUBUF frontend's IR, op for op."""
    import subprocess
    import tempfile

    from wavelift.frontend import vector_memory
    from wavelift.frontend.flow import discover
    from wavelift.frontend.program import translate
    from wavelift.ir.builder import Builder

    with tempfile.TemporaryDirectory() as d:
        s, o, bn = pathlib.Path(d, "t.s"), pathlib.Path(d, "t.o"), pathlib.Path(d, "t.bin")
        s.write_text(f".text\n{src}\ns_endpgm\n")
        subprocess.run(
            ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}", "-filetype=obj", s, "-o", o],
            check=True,
            capture_output=True,
        )
        subprocess.run(["llvm-objcopy-19", "-O", "binary", "--only-section=.text", o, bn], check=True)
        code = bn.read_bytes()
    prog = translate(code, target, 32, 0x10000)
    ins = discover(code, target, False, 0x10000)[0][0]
    b = Builder([0], 32)
    b.target, b.scratch = target, None
    vector_memory.translate(ins, b)
    assert [op.name for op in prog.blocks[0].ops][: len(b.ops)] == [op.name for op in b.ops]


TIER_CASES = ["raw_nrec_mid_dword", "store_nrec_mid_dword", "struct_sel0_offset", "atomic_nrec_wide"]


@pytest.mark.slow
@pytest.mark.tiers  # NumPy blocks, the native tier and native blocks (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("case", TIER_CASES)
def test_native_tier(case, mode):
    _check("gfx1200", 32, mode, case)


@pytest.mark.parametrize("case", ["store_nrec_mid_dword", "struct_sel0_offset", "atomic_nrec"])
def test_capture_replays_to_the_same_bytes(case, tmp_path):
    """A Device("gfx1200") run saved as a capture replays (PM4 stream, windows from the tracer) to
    the bytes the live run landed."""
    kernel, w1, nrec, sel, add_tid, soff, _ = CASES[case]
    fl = flags("gfx1200", sel, add_tid)
    dev = wavelift.Device("gfx1200", mode="wave")
    co = dev.load_code_object(str(ROOT / path("gfx1200", 32)))
    if kernel == "raw_stores":
        arrays = [np.full(1024 + 128, 0xA5C3E1F7, np.uint32)]
    elif kernel == "struct_ops":
        arrays = [SRC, np.zeros(4 * N, np.uint32), np.full(512, 0x77777777, np.uint32)]
    else:
        arrays = [np.concatenate([ATOMIC_INIT, np.zeros(64, np.uint32)]), np.zeros(15 * N, np.uint64)]
    bufs = [dev.upload(a) for a in arrays]
    r = co.kernel(kernel).launch(
        groups=(1, 1, 1), block=(N, 1, 1), args=bufs + [np.uint32(w) for w in (w1, nrec, fl, soff)]
    )
    assert r.landed, r.refusal
    live = [dev.download(b, a.dtype) for b, a in zip(bufs, arrays)]
    p = tmp_path / "run.wlcap"
    dev.save_capture(str(p))
    cap = wavelift.Capture.load(str(p))
    (res,) = wavelift.replay(cap)
    assert res.landed, res.refusal
    for b, a, want in zip(bufs, arrays, live):
        np.testing.assert_array_equal(np.frombuffer(cap.read(b.address, a.nbytes), a.dtype), want)


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_typed_dst_sel(mode):
    """The V#'s DST_SEL (word 3 [11:0]) reorders a typed load's channels: (Y, X, 1, 0) on
    8_8_8_8_UINT gives (byte 1, byte 0, 1, 0) — NumPy, and the gfx1030 build."""
    sel = 5 | 4 << 3 | 1 << 6 | 0 << 9
    outs = []
    for target, m in (("gfx1200", mode), ("gfx1030", "wave")):
        fl = (flags(target, 3, fmt=fmt_number(target, "8_8_8_8_UINT")) & ~0xFFF) | sel
        dst0 = np.full(1024, 0x5555AAAA, np.uint32)
        r, (_, out, _) = launch(
            target, 32, m, "typed", [BITS, np.zeros(8 * N, np.uint32), dst0], [0, 4096, fl, 0]
        )
        assert r.landed, r.refusal
        outs.append(out.reshape(N, 8))
    by = BITS.view(np.uint8)
    want = np.stack([[by[16 * t + 1], by[16 * t], 1, 0] for t in range(N)]).astype(np.uint32)
    np.testing.assert_array_equal(outs[0][:, :4], want)
    np.testing.assert_array_equal(outs[0], outs[1])
