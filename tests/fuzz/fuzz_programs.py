"""Fuzz target: malicious programs, dispatched through a real PM4 stream.

One case = one capture built from the seed: a program (random instructions drawn from the
decoder's tables with random operands, or a template: spinning loops, wild M0 and lane indices,
LDS and scratch at their extremes, global/scalar/buffer addresses near 2^64 and non-canonical,
huge grids, huge LDS/scratch sizes in RSRC2/TMPRING), a buffer of random bytes, an allocation
at VA 0 or at the top of a half of the address space, and random user data; replayed on NumPy
blocks and on the native tier (the driver or its blocks under the Python scheduler, by seed), in
wave mode or (a quarter of the seeds) lane mode; with WAVELIFT_FUZZ_CUDA=1 also on the CUDA backend.

Violations (AssertionError naming the seed): an exception escaping replay, a refusal whose code
says "internal", guest memory that changed although the dispatch was refused, a replay past
CASE_BUDGET_S seconds of wall clock.  The translator is also checked alone on every random
instruction drawn (only `Refused` may come out of it).

    python3 tools/fuzz.py programs --count 1000 --jobs 1        (docs/fuzzing.md)
"""

from __future__ import annotations

import atexit
import functools
import os
import random
import shutil
import struct
import tempfile
import time

from wavelift import pm4, settings
from wavelift.errors import Refused
from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import load_table
from wavelift.isa.encodings import _MAJOR6, FIXED, LAYOUTS
from wavelift.memory.capture import Capture
from wavelift.memory.guest import GuestMemoryError
from wavelift.run.replay import replay

# wall clock per replay (one tier); a longer run is a violation.  Decision 0015 bounds a
# dispatch's work by count (waves x budget <= 2^32 instructions, grids <= 2^22 waves), not time:
# its worst case here is a 2^22-wave grid of short programs on forced NumPy blocks, ~40-70 s on
# this 2-core host (seed 539: 69 s; seeds 0..999: everything else under 40 s), so 120 s
CASE_BUDGET_S = 120.0
TIME_LIMIT = 400.0  # tools/fuzz.py's watchdog (a case replays on two tiers)
TIERS = ("numpy", "native", "native-blocks", "cuda")

# addresses an attacker would try: wraps at 2^64, the canonical hole, each half's ends, 0
WILD = (
    0xFFFFFFFFFFFFFFFC,
    0xFFFFFFFFFFFFFFC0,
    0xFFFFFFFFFFFFFFF0,
    0xFFFFFFFFFFFFF000,
    0x0000800000000000,
    0x00007FFFFFFFFFFC,
    0x00007FFFFFFFF000,
    0xFFFF800000000000,
    0xFFFF7FFFFFFFFFFC,
    0x0001000000000000,
    0x8000000000000000,
    0,
    4,
    0xFFFFFFFF,
    0x100000000 - 4,
    0x0000FFFFFFFFFFFC,
)
LOW_END, UPPER, TOP = 1 << 47, 0xFFFF800000000000, 1 << 64
EXTREME32 = (
    0,
    1,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0xFFFFFFFC,
    0xFFFF,
    0x10000,
    0xFFFC,
    63,
    64,
    65,
    31,
    32,
    0x40000000,
    0xFFFFFF00,
)


def _native_cache():
    """A private native cache for this process (the fuzzer compiles a library per program)."""
    if "WAVELIFT_NATIVE_CACHE" not in os.environ:
        d = tempfile.mkdtemp(prefix="wl-fuzz-native-")
        atexit.register(shutil.rmtree, d, True)
        os.environ["WAVELIFT_NATIVE_CACHE"] = d


# ----------------------------------------------------------------------------- random instructions
ALU = ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
MEMORY = ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG")
_MEM_PREFIX = {v: k for k, v in _MAJOR6.items()}


def random_instruction(r: random.Random, target: str, wave64: bool) -> bytes | None:
    """Bytes of one instruction that decodes: an opcode from the tables with random fields
    (memory encodings: the prefix and random bits), or None after too many tries."""
    tab = load_table(target, wave64)
    for _ in range(40):
        enc = r.choice(ALU) if r.random() < 0.75 else r.choice(MEMORY)
        ws = [r.getrandbits(32) for _ in range(3)]
        if r.random() < 0.3:
            ws[1] = r.choice(EXTREME32)  # a literal / second dword at an edge
        if enc in ALU:
            op = r.choice(sorted(tab[enc]))
            v, lo = FIXED[enc]
            w = (ws[0] | ws[1] << 32) & ((1 << 64) - 1)
            for name, flo, width in LAYOUTS[enc]:
                if name == "op":
                    w = w & ~(((1 << width) - 1) << flo) | op << flo
            w = w & ~(((1 << (32 - lo)) - 1) << lo) | v << lo
            ws[0], ws[1] = w & 0xFFFFFFFF, w >> 32
        else:
            ws[0] = ws[0] & ((1 << 26) - 1) | _MEM_PREFIX[enc] << 26
        code = struct.pack("<3I", *ws)
        try:
            ins = decode_one(code, 0, target, wave64)
        except DecodeError:
            continue
        return code[: ins.size]
    return None


def translate_alone(seed, code: bytes, target: str, wave64: bool) -> bool:
    """The translator on one instruction and s_endpgm: True when translated, False when refused
    (e.g. program.unsupported_instruction); anything else is a violation."""
    from wavelift.frontend.program import translate

    try:
        translate(code + S_ENDPGM, target, 64 if wave64 else 32, 0x10000)
    except Refused:
        return False
    except Exception as e:
        raise AssertionError(
            f"seed {seed}: translate({code.hex()}, {target}, "
            f"wave{64 if wave64 else 32}) raised {type(e).__name__}: {e}"
        ) from e
    return True


S_ENDPGM = struct.pack("<I", 0xBF810000)


def random_program(seed, r, target, wave64) -> bytes:
    """Random translatable instructions; most branches are pointed back or forward inside the
    program (loops), the rest keep their random 16-bit offset."""
    out = []
    n = r.randrange(1, 24)
    for i in range(n):
        for _ in range(20):
            code = random_instruction(r, target, wave64)
            if code is None or not translate_alone(seed, code, target, wave64):
                continue
            name = decode_one(code, 0, target, wave64).name
            if name.startswith(("s_branch", "s_cbranch")) and r.random() < 0.8:
                off = r.randrange(-i - 1, n - i + 1) & 0xFFFF  # dwords after this one
                code = struct.pack("<I", struct.unpack_from("<I", code)[0] & ~0xFFFF | off) + code[4:]
            out.append(code)
            break
    return b"".join(out) + S_ENDPGM


# ----------------------------------------------------------------------------- templates
# user data of every template: s[0:1] the buffer, s[2:3] a wild address, s[4:7] a buffer V#
# (base/num_records/stride from the seed), s8..s11 random 32-bit values (M0, lane indices,
# offsets), s12 workgroup id x.  The buffer is 4 KiB of random bytes.
TEMPLATES = {
    "spin_branch": "L: s_branch L",
    "spin_cbranch": """
        L: s_add_u32 s20, s20, 1
        s_cmp_lg_u32 s20, 0
        s_cbranch_scc1 L
        s_endpgm""",
    "spin_vector": """
        L: v_add_nc_u32 v1, 1, v1
        v_cmp_ne_u32 vcc_lo, 0, v1
        s_cbranch_vccnz L
        s_endpgm""",
    "spin_setpc": """
        s_getpc_b64 s[20:21]
        s_sub_u32 s20, s20, 4
        s_subb_u32 s21, s21, 0
        s_setpc_b64 s[20:21]""",
    "spin_swappc": """
        s_getpc_b64 s[20:21]
        s_sub_u32 s20, s20, 4
        s_subb_u32 s21, s21, 0
        s_swappc_b64 s[22:23], s[20:21]
        s_endpgm""",
    "wild_setpc": """
        s_setpc_b64 s[8:9]
        s_endpgm""",
    "wild_setpc_near": """
        s_getpc_b64 s[20:21]
        s_add_u32 s20, s20, s8
        s_addc_u32 s21, s21, 0
        s_setpc_b64 s[20:21]
        s_endpgm""",
    "m0": """
        s_mov_b32 m0, s8
        v_mov_b32 v1, s9
        v_add_nc_u32 v1, v1, v0
        v_readlane_b32 s20, v1, m0
        v_writelane_b32 v2, m0, m0
        s_add_u32 m0, m0, s9
        s_lshl_b32 m0, m0, 2
        v_mov_b32 v3, m0
        v_add_nc_u32 v3, v3, v0
        ds_write_b32 v3, v1
        ds_read_b32 v4, v3
        s_waitcnt lgkmcnt(0)
        v_lshlrev_b32 v6, 2, v0
        v_mov_b32 v5, s20
        global_store_dword v6, v2, s[0:1]
        global_store_dword v6, v4, s[0:1] offset:256
        global_store_dword v6, v5, s[0:1] offset:512
        s_endpgm""",
    "lanes": """
        v_mov_b32 v1, s9
        v_add_nc_u32 v1, v1, v0
        v_readlane_b32 s20, v1, s8
        v_writelane_b32 v2, s9, s8
        v_readfirstlane_b32 s21, v1
        v_mov_b32 v4, s8
        v_mad_u32_u24 v4, v0, s10, v4
        ds_bpermute_b32 v3, v4, v1
        ds_permute_b32 v5, v4, v1
        ds_bpermute_b32 v7, v4, v1 offset:65532
        v_permlane16_b32 v6, v1, s8, s9
        v_permlanex16_b32 v8, v1, s9, s8
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v9, s20
        v_add_nc_u32 v9, v9, s21
        v_lshlrev_b32 v10, 2, v0
        global_store_dword v10, v3, s[0:1]
        global_store_dword v10, v5, s[0:1] offset:256
        global_store_dword v10, v6, s[0:1] offset:512
        global_store_dword v10, v2, s[0:1] offset:768
        global_store_dword v10, v9, s[0:1] offset:1024
        global_store_dword v10, v7, s[0:1] offset:1280
        global_store_dword v10, v8, s[0:1] offset:1536
        s_endpgm""",
    "lds_edges": """
        v_mov_b32 v1, s8
        v_mad_u32_u24 v1, v0, s10, v1
        v_mov_b32 v2, s9
        ds_write_b32 v1, v2
        ds_write_b32 v1, v2 offset:65535
        ds_write_b64 v1, v[2:3] offset:65528
        ds_write_b128 v1, v[2:5] offset:65520
        ds_write2_b32 v1, v2, v3 offset0:255 offset1:254
        ds_write2st64_b64 v1, v[2:3], v[4:5] offset0:255 offset1:255
        ds_add_u32 v1, v2 offset:4
        ds_cmpst_b32 v1, v2, v3 offset:8
        s_waitcnt lgkmcnt(0)
        ds_read_b128 v[6:9], v1 offset:65520
        ds_read2_b32 v[10:11], v1 offset0:255 offset1:0
        ds_read_u8 v12, v1 offset:65535
        s_waitcnt lgkmcnt(0)
        v_lshlrev_b32 v13, 4, v0
        global_store_dwordx4 v13, v[6:9], s[0:1]
        global_store_dword v13, v12, s[0:1] offset:2044
        s_endpgm""",
    "wild_global": """
        v_mov_b32 v1, s2
        v_mov_b32 v2, s3
        v_mov_b32 v3, s9
        v_mov_b32 v4, s9
        v_mov_b32 v5, s9
        v_mov_b32 v6, s9
        global_store_dwordx4 v[1:2], v[3:6], off
        global_store_dword v[1:2], v3, off offset:-4
        global_store_dwordx2 v[1:2], v[3:4], off offset:2044
        global_load_dwordx4 v[7:10], v[1:2], off
        global_atomic_add v[1:2], v3, off
        global_atomic_cmpswap_x2 v[11:12], v[1:2], v[3:6], off glc
        s_waitcnt vmcnt(0)
        v_lshlrev_b32 v13, 4, v0
        global_store_dwordx4 v13, v[7:10], s[0:1]
        s_endpgm""",
    "wild_global_saddr": """
        v_mov_b32 v1, s8
        v_mad_u32_u24 v1, v0, s10, v1
        v_mov_b32 v3, s9
        global_store_dword v1, v3, s[2:3]
        global_store_dword v1, v3, s[2:3] offset:-2048
        global_load_dword v4, v1, s[2:3] offset:2047
        s_waitcnt vmcnt(0)
        v_lshlrev_b32 v5, 2, v0
        global_store_dword v5, v4, s[0:1]
        s_endpgm""",
    "wild_flat": """
        v_mov_b32 v1, s2
        v_mov_b32 v2, s3
        v_mov_b32 v3, s9
        flat_store_dword v[1:2], v3
        flat_load_dwordx4 v[4:7], v[1:2]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        v_lshlrev_b32 v8, 4, v0
        global_store_dwordx4 v8, v[4:7], s[0:1]
        s_endpgm""",
    "wild_scalar": """
        s_load_dwordx16 s[20:35], s[2:3], 0x0
        s_load_dwordx8 s[36:43], s[2:3], s8
        s_load_dword s44, s[2:3], 0xfffff
        s_buffer_load_dwordx16 s[48:63], s[4:7], s8
        s_buffer_load_dword s64, s[4:7], 0x0
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v1, s20
        v_mov_b32 v2, s35
        v_mov_b32 v3, s43
        v_mov_b32 v4, s44
        v_mov_b32 v5, s63
        v_mov_b32 v6, s64
        v_lshlrev_b32 v7, 2, v0
        global_store_dword v7, v1, s[0:1]
        global_store_dword v7, v2, s[0:1] offset:256
        global_store_dword v7, v3, s[0:1] offset:512
        global_store_dword v7, v4, s[0:1] offset:768
        global_store_dword v7, v5, s[0:1] offset:1024
        global_store_dword v7, v6, s[0:1] offset:1280
        s_endpgm""",
    "wild_buffer": """
        v_mov_b32 v1, s8
        v_mad_u32_u24 v1, v0, s10, v1
        v_mov_b32 v2, s11
        v_mov_b32 v3, s9
        buffer_store_dword v3, v1, s[4:7], 0 offen
        buffer_store_dwordx4 v[3:6], v1, s[4:7], s9 offen offset:4095
        buffer_store_dword v3, v[1:2], s[4:7], 0 idxen offen
        buffer_load_dwordx4 v[7:10], v1, s[4:7], s11 offen offset:4092
        buffer_load_dword v11, v2, s[4:7], 0 idxen
        buffer_atomic_add v3, v1, s[4:7], 0 offen
        s_waitcnt vmcnt(0)
        v_lshlrev_b32 v16, 4, v0
        global_store_dwordx4 v16, v[7:10], s[0:1]
        global_store_dword v16, v11, s[0:1] offset:1024
        s_endpgm""",
    "scratch_edges": """
        v_mov_b32 v1, s8
        v_mad_u32_u24 v1, v0, s10, v1
        v_mov_b32 v2, s9
        scratch_store_dword v1, v2, off
        scratch_store_dwordx4 v1, v[2:5], off offset:2047
        scratch_store_dword v1, v2, off offset:-2048
        scratch_load_dwordx4 v[6:9], v1, off offset:16
        buffer_store_dword v2, v1, s[12:15], s17 offen offset:4095
        buffer_load_dword v10, v1, s[12:15], s17 offen
        s_waitcnt vmcnt(0)
        v_lshlrev_b32 v11, 4, v0
        global_store_dwordx4 v11, v[6:9], s[0:1]
        global_store_dword v11, v10, s[0:1] offset:2044
        s_endpgm""",
    "store_tid": """
        v_lshlrev_b32 v1, 2, v0
        v_and_b32 v1, 0xffc, v1
        global_store_dword v1, v0, s[0:1]
        s_endpgm""",
}
SPINS = tuple(k for k in TEMPLATES if k.startswith("spin"))


@functools.cache
def assemble_template(name: str, wave64: bool, target: str) -> bytes:
    from asm import assemble

    src = TEMPLATES[name]
    if wave64:
        src = src.replace("vcc_lo", "vcc")
    return assemble(src, wave64, target)


# ----------------------------------------------------------------------------- the capture
def vsharp(r: random.Random, base: int) -> list:
    records = r.choice((0, 1, 4096, 0xFFFFFFFF, 0x7FFFFFFF, r.getrandbits(32)))
    stride = r.choice((0, 4, 16, 0x3FFF, r.getrandbits(14)))
    w1 = (base >> 32) & 0xFFFF | stride << 16 | r.getrandbits(2) << 30
    w3 = r.choice((0x31016FAC, 0x31C16000, 0x31E16000, r.getrandbits(32)))
    return [base & 0xFFFFFFFF, w1, records, w3]


def choose(seed: int):
    """The case's random stream, target, wave size and program kind."""
    r = random.Random(seed)
    target = r.choice(("gfx1030", "gfx1030", "gfx1010"))
    wave64 = r.random() < 0.4
    return r, target, wave64, "random" if r.random() < 0.5 else r.choice(sorted(TEMPLATES))


def build(seed: int) -> tuple[Capture, dict]:
    """The capture of one case (the same bytes for the same seed)."""
    r, target, wave64, kind = choose(seed)
    info = {
        "seed": seed,
        "target": target,
        "wave64": wave64,
        "kind": kind,
        "mode": "lane" if r.random() < 0.25 else "wave",
    }
    cap = Capture(target=target)
    buf = cap.alloc(4096, data=r.randbytes(4096), name="buf")
    extra = r.choice(("none", "zero", "top_low", "top_high", "hole_edge"))
    info["extra"] = extra
    at = {
        "zero": 0,
        "top_low": 0x7FFFFFFFF000,
        "top_high": 0xFFFFFFFFFFFFF000,
        "hole_edge": 0xFFFF800000000000,
    }.get(extra)
    if at is not None:
        try:  # an allocation wavelift may refuse to create (issue 19 item 1)
            cap.alloc(4096, data=r.randbytes(4096), name=extra, address=at, align=4096)
        except (GuestMemoryError, OverflowError, ValueError):
            info["extra"] = extra + " (refused)"
    wild = r.choice(WILD + (r.getrandbits(64), buf + r.choice((-4, 4092, 4096, -1 << 32))))
    if kind == "random":
        code = random_program(seed, r, target, wave64)
    else:
        code = assemble_template(kind, wave64, target)
    size = len(code) + 256
    size += -size % 256
    # the program at an edge of the address space: the end of the lower half, the start of the
    # upper half, just below 2^64 (pc arithmetic, s_getpc, falling off the end)
    at = r.choice((None, None, None, LOW_END - size, UPPER, TOP - 256 - size))
    info["code_at"] = hex(at) if at is not None else "low"
    try:
        prog = cap.alloc(size, data=code + b"\0" * 256, name="code", align=256, address=at)
    except GuestMemoryError:
        prog = cap.alloc(size, data=code + b"\0" * 256, name="code", align=256)
    rnd = lambda: r.choice(EXTREME32 + (r.getrandbits(32), r.getrandbits(8)))  # noqa: E731
    vs_base = r.choice((buf, wild, buf + 4096 - 16))
    user = [buf & 0xFFFFFFFF, buf >> 32 & 0xFFFFFFFF, wild & 0xFFFFFFFF, wild >> 32]
    user += vsharp(r, vs_base) + [rnd(), rnd(), r.choice((0, 4, 16, 1 << 16, 0xFFFFFFFF)), rnd()]
    scratch = kind == "scratch_edges" or r.random() < 0.15
    if kind == "scratch_edges":  # s[12:15] the scratch V#, s17 wave offset
        user += vsharp(r, r.choice((0x7F0000000000, wild)))
    n_user = len(user)
    lanes = 64 if wave64 else 32
    hostile = r.random() < 0.15 or kind == "store_tid"  # registers at their extremes
    block = r.choice(
        ((lanes, 1, 1), (1, 1, 1), (lanes * 2, 1, 1), (16, 4, 2), (r.randrange(1, 65), r.randrange(1, 5), 1))
        + (((1024, 1, 1), (0xFFFF, 0xFFFF, 1)) if hostile else ())
    )
    groups = r.choice(((1, 1, 1), (2, 1, 1), (3, 2, 1)))
    lds_size = r.choice((0, 1, 8, 128, r.getrandbits(7)))  # units of 512 bytes
    if hostile:
        groups = r.choice(
            (
                (0xFFFFFFFF, 1, 1),
                (1 << 16, 1 << 16, 1),
                (1 << 20, 1, 1),
                (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
                (1 << 22, 1, 1),
                (1 << 12, 1, 1),
                groups,
            )
        )
        lds_size = r.choice((0x1FF, 129, lds_size))
    rsrc2 = (1 if scratch else 0) | n_user << 1 | 1 << 7 | lds_size << 15
    if hostile and r.random() < 0.3:
        rsrc2 |= r.getrandbits(32) & ~0x3E  # every other bit random
    regs = {
        "COMPUTE_PGM_LO": (prog >> 8) & 0xFFFFFFFF,
        "COMPUTE_PGM_HI": prog >> 40,
        "COMPUTE_PGM_RSRC1": (0xF0 << 12) | (1 << 21),
        "COMPUTE_PGM_RSRC2": rsrc2,
        "COMPUTE_NUM_THREAD_X": block[0],
        "COMPUTE_NUM_THREAD_Y": block[1],
        "COMPUTE_NUM_THREAD_Z": block[2],
    }
    for i, v in enumerate(user):
        regs[f"COMPUTE_USER_DATA_{i}"] = v
    if scratch:
        wavesize = r.choice((1, 4, 256) + ((0x1FFF, r.getrandbits(13), 0) if hostile else ()))
        regs["COMPUTE_TMPRING_SIZE"] = wavesize << 12 | r.choice((1, 8, 0xFFF))
    init = 1 | (1 << 2) | (0 if wave64 else 1 << 15)  # SHADER_EN, START_AT_000, W32
    cap.submit(pm4.set_sh_regs(regs) + pm4.dispatch_direct(*groups, initiator=init))
    info.update(hostile=hostile, groups=groups, block=block, rsrc2=hex(rsrc2), user=[hex(u) for u in user])
    return cap, info


def _snapshot(cap) -> list:
    return [(a.base, a.data.tobytes()) for a in cap.memory]


def _set_tier(tier):
    """Switch the NumPy backend's tier the way tests/conftest.py does; returns the undo."""
    if tier == "cuda":
        return lambda: None
    from wavelift.backends.numpy import runtime

    names = ("NATIVE", "NATIVE_DRIVER", "NATIVE_THREADS", "NATIVE_THREAD_MIN_WAVES")
    old = {n: getattr(runtime, n) for n in names}
    if tier == "numpy":
        runtime.NATIVE = "off"
    else:
        _native_cache()
        runtime.NATIVE = "on"
        runtime.NATIVE_DRIVER = tier == "native"
        runtime.NATIVE_THREADS, runtime.NATIVE_THREAD_MIN_WAVES = 2, 0

    def undo():
        for n, v in old.items():
            setattr(runtime, n, v)

    return undo


def run_tier(seed: int, tier: str) -> list:
    cap, info = build(seed)
    before = _snapshot(cap)
    undo = _set_tier(tier)
    t0 = time.perf_counter()
    try:
        results = replay(cap, backend="cuda" if tier == "cuda" else "numpy", mode=info["mode"], cache={})
    except Exception as e:
        raise AssertionError(f"seed {seed} ({tier}, {info}): replay raised {type(e).__name__}: {e}") from e
    finally:
        undo()
    dt = time.perf_counter() - t0
    where = f"seed {seed} ({tier}, {info})"
    assert dt <= CASE_BUDGET_S, f"{where}: ran {dt:.1f} s (budget {CASE_BUDGET_S:g} s)"
    assert results, f"{where}: no result"
    for res in results:
        ref = res.refusal
        if ref is None:
            assert info["kind"] not in SPINS, f"{where}: a program that never ends landed"
            continue
        assert "internal" not in ref.code, f"{where}: internal error refusal {ref}"
        assert _snapshot(cap) == before, f"{where}: refused ({ref}) but guest memory changed"
    return results


def case(seed: int) -> None:
    run_tier(seed, "numpy")
    run_tier(seed, TIERS[1 + seed % 2])
    if settings.get("WAVELIFT_FUZZ_CUDA") == "1":  # on the device machine (docs/fuzzing.md)
        run_tier(seed, "cuda")


def test_templates_on_numpy_blocks():
    """Each template but the spinning ones once, on NumPy blocks (the default run: seconds)."""
    seen = set()
    for seed in range(400):
        kind = choose(seed)[3]
        if kind in seen or kind in SPINS:
            continue
        seen.add(kind)
        run_tier(seed, "numpy")
    assert seen == set(TEMPLATES) - set(SPINS) | {"random"}


def test_the_checks_catch_violations(monkeypatch):
    """A refused dispatch that wrote guest memory, and an exception out of execution, are each
    reported with the seed (the checks can fail)."""
    import pytest

    from wavelift.errors import Refusal
    from wavelift.run import execute

    real = execute.execute_dispatch
    seed = next(s for s in range(400) if choose(s)[3] == "lds_edges" and not build(s)[1]["hostile"])

    def writes_then_refuses(memory, config, *a, **kw):
        res = real(memory, config, *a, **kw)
        a0 = next(iter(memory))
        a0.data[0] ^= 1
        res.refusal = Refusal("escape", "made up")
        return res

    monkeypatch.setattr(execute, "execute_dispatch", writes_then_refuses)
    with pytest.raises(AssertionError, match=f"seed {seed} .*guest memory changed"):
        run_tier(seed, "numpy")

    def raises(memory, config, *a, **kw):
        raise IndexError("boom")

    monkeypatch.setattr(execute, "execute_dispatch", raises)
    with pytest.raises(AssertionError, match=f"seed {seed} .*IndexError: boom"):
        run_tier(seed, "numpy")
