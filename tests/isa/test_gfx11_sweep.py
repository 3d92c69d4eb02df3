"""GFX11 (gfx1100) and GFX12 (gfx1200) decoding vs llvm-objdump-19 (live), wave32 and wave64.

Per-encoding sweeps: every opcode of SOP1/SOP2/SOPC/SOPK/SOPP/SMEM/VOP1/VOP2/VOPC/VOP3/VOP3P
with random fields, and every (opx, opy) pair of VOPD; exact text and size must match and bytes
LLVM calls invalid must raise DecodeError.  The random-word sweep draws first dwords uniformly:
each decodes as LLVM prints it, is invalid for both, or is refused by name ("not decoded yet")
because its encoding is one wavelift does not decode yet (the memory encodings not in MEM_ENCS,
true16 DPP forms; VINTERP/LDSDIR and VOP3/VOP3P with DPP decode: tests/isa/test_gfx11_encodings.py).  Memory encodings (MEM_ENCS): every entry
(opcode x mode) of the target's memory table with random fields, mostly with the fields LLVM
requires to be zero cleared; words LLVM rejects but the hardware runs are refused by name.  DPP16/DPP8 forms of VOP1/VOP2/VOPC: every opcode with
each mark and random controls.  gfx1101/1102/1103, gfx1151/1152 and gfx1201 share gfx1100's, gfx1150's and
gfx1200's tables; the `slow` sweeps check them against LLVM for those targets (and gfx1150 wave64)."""

import functools
import os
import random
import shutil
import struct
import subprocess

import pytest

from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import NOT_DECODED, load_table
from wavelift.isa.encodings import ISAS, generation
from wavelift.isa.llvm_oracle import NOP, llvm_disasm

from .gfx11_compare import CONFIGS, IDS, SHARED, against_llvm, needs_llvm, ours
from .sweep import ENCS, SRC_POOL, compare_many


@functools.cache
def _alu(target, wave64, n_per_op, seed):
    hw: dict = {}
    return compare_many(ENCS, target, wave64, n_per_op=n_per_op, seed=seed, hardware=hw), hw


def _check_alu(enc, target, wave64, n_per_op, seed):
    out, hw = _alu(target, wave64, n_per_op, seed)
    ops, bad, total = out[enc]
    named = {c: n for (e, c), n in hw.items() if e == enc}
    print(
        f"{target} w{64 if wave64 else 32} {enc}: {len(ops)} opcodes matched, {total} words, {len(bad)} bad, "
        f"LLVM rejects and the hardware runs: {named}"
    )
    assert ops, "no opcode decoded"
    assert not bad, bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
@pytest.mark.parametrize("enc", ENCS)
def test_sweep(enc, target, wave64):
    _check_alu(enc, target, wave64, 2, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize(
    "target,wave64", CONFIGS + SHARED, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS + SHARED]
)
@pytest.mark.parametrize("enc", ENCS)
def test_sweep_slow(enc, target, wave64, seed):
    _check_alu(enc, target, wave64, 12, seed)


# ----------------------------------------------------------------------------- VOPD
def vopd_words(target, wave64, n_per_pair, seed):
    """Every (opx, opy) pair of the tables, ``n_per_pair`` random field sets each, a literal after."""
    rnd = random.Random(seed)
    tab = load_table(target, wave64)
    isa = ISAS[generation(target)]
    items = []
    for opx in range(16):
        for opy in range(32):
            if opx not in tab["VOPDX"] and opy not in tab["VOPDY"] and rnd.random() < 0.8:
                continue
            for _k in range(n_per_pair):
                f = {"opx": opx, "opy": opy}
                for name, _lo, w in isa.layouts["VOPD"]:
                    if name in ("opx", "opy"):
                        continue
                    if name in ("src0x", "src0y"):
                        v = rnd.choice(SRC_POOL) if rnd.random() < 0.4 else 256 + rnd.randrange(256)
                    elif name.startswith("vsrc1") and rnd.random() < 0.5:
                        v = 0
                    else:
                        v = rnd.randrange(1 << w)
                    f[name] = v
                lit = rnd.choice([0x3F800000, 0x12345678, 0x40, 0xFFFFFFF0, 0x3E22F983])
                items.append(struct.pack("<3I", *isa.encode("VOPD", **f), lit))
    return items


def _check_vopd(target, wave64, n, seed):
    items = vopd_words(target, wave64, n, seed)
    t = against_llvm(items, target, wave64, pad=0, refusals="none")
    print(f"{target} w{64 if wave64 else 32} VOPD: {len(items)} words, {t.valid} valid, {len(t.bad)} bad")
    assert t.valid or wave64, "no VOPD word decoded"  # VOPD is wave32 only: LLVM rejects it in wave64
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
def test_vopd(target, wave64):
    _check_vopd(target, wave64, 1, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize(
    "target,wave64", CONFIGS + SHARED, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS + SHARED]
)
def test_vopd_slow(target, wave64):
    _check_vopd(target, wave64, 8, 5)


# ----------------------------------------------------------------------------- random words
def random_words(n, seed):
    """``n`` instructions: a uniform first dword and three random dwords after it."""
    rnd = random.Random(seed)
    return [struct.pack("<4I", *(rnd.getrandbits(32) for _ in range(4))) for _ in range(n)]


def _check_random(target, wave64, n, seed):
    t = against_llvm(random_words(n, seed), target, wave64)
    same = t.same + t.invalid  # (equal: valid or invalid for both)
    print(
        f"{target} w{64 if wave64 else 32}: {n} random words, {same} equal, {t.refused} not decoded yet, "
        f"LLVM rejects and the hardware runs: {t.hardware}"
    )
    assert same > n // 3
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
def test_random_words(target, wave64):
    _check_random(target, wave64, 3000, 11)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize(
    "target,wave64", CONFIGS + SHARED, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS + SHARED]
)
def test_random_words_slow(target, wave64):
    _check_random(target, wave64, 100_000, 12)


# ----------------------------------------------------------------------------- s_delay_alu, s_waitcnt
def _sopp_all(target, name, values):
    isa = ISAS[generation(target)]
    tab = load_table(target, False)["SOPP"]
    op = next(o for o, e in tab.items() if e["name"] == name)
    items = [struct.pack("<I", *isa.encode("SOPP", op=op, simm16=v)) for v in values]
    ref = llvm_disasm(items, target, False)
    return [(b.hex(), o, r) for b, r in zip(items, ref) if (o := ours(b + NOP, target, False)) != r]


@needs_llvm
@pytest.mark.parametrize("target", ["gfx1100", "gfx1200"])
@pytest.mark.parametrize("name", ["s_delay_alu", "s_waitcnt", "s_clause"])
def test_simm16_texts(target, name):
    """Every value of the low 12 bits and a sample of the rest (``-m slow``: all 65536)."""
    values = list(range(4096)) + random.Random(3).sample(range(4096, 65536), 512)
    assert not _sopp_all(target, name, values)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx1100", "gfx1200"])
@pytest.mark.parametrize("name", ["s_delay_alu", "s_waitcnt", "s_clause", "s_sendmsg"])
def test_simm16_texts_all(target, name):
    assert not _sopp_all(target, name, range(65536))


# ----------------------------------------------------------------------------- targets
def test_unknown_target_refused_by_name():
    for t in ("gfx1035", "gfx900", "gfx1300"):
        with pytest.raises(ValueError, match=t):
            decode_one(b"\x00\x00\x80\xbf", 0, t, False)


def test_not_decoded_is_named():
    """Words LLVM 19 decodes but wavelift does not yet are refused by name: a GFX12 VIMAGE BVH and
    a VSAMPLE whose srsrc is the literal code (VIMAGE/VSAMPLE otherwise decode:
    test_gfx12_vimage_decode.py), gfx1200's v_cndmask_b32_dpp with src1's abs bit (LLVM
    misprints it), a GFX11 MIMG BVH with NSA (several address ranges)."""
    from wavelift.isa.memory import load_memory_table

    # image_bvh_intersect_ray (VIMAGE op 25, dmask 0xf, r128); image_sample_l (VSAMPLE op 29) with
    # srsrc 255
    cases = [
        ("gfx1200", (0xD3C00000 | 25 << 14 | 1 << 4, 8 << 9, 0x2B2A2928, 0)),
        ("gfx1200", (0xE4400000 | 29 << 14 | 1, 255 << 9 | 16 << 23, 0x2A2928, 0)),
    ]
    w0 = ISAS["gfx12"].encode("VOP2", op=1, src0=0xFA, vdst=5, vsrc1=60)[0]
    cases.append(("gfx1200", (w0, 0xFF00E428 | 1 << 23, 0, 0)))
    op, e = next((int(k), e) for k, e in load_memory_table("gfx1100")["MIMG"].items() if e.get("nsa_nd"))
    b = e["base"]
    w0 = 0xF0000001 | b.get("unrm", 0) << 7 | b.get("dmask", 0) << 8 | b.get("r128", 0) << 15 | op << 18
    cases.append(("gfx1100", (w0, 0x00020828, 0x04030201, 0)))
    for target, words in cases:
        with pytest.raises(DecodeError, match=NOT_DECODED):
            decode_one(struct.pack("<4I", *words), 0, target, False)


# ----------------------------------------------------------------------------- clang-19 code
FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "opencl")


@needs_llvm
@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed")
@pytest.mark.parametrize("src", ["basic", "math", "stack"])
@pytest.mark.parametrize(
    "target,wave64,opt",
    [
        pytest.param(t, w, o, id=f"{t}-w{64 if w else 32}{o}", marks=() if fast else pytest.mark.slow)
        for t, w in CONFIGS
        for o in ("-O0", "-O2")
        for fast in [o == "-O2" and not w and t in ("gfx1100", "gfx1200")]
    ],
)
def test_clang_kernel_listing(target, wave64, opt, src, tmp_path):
    """The fixture kernels (tests/fixtures/opencl) built by clang-19 for the target: every function's
    listing equals llvm-objdump-19's line for line up to its first instruction of an encoding not
    decoded yet (an image access, say, ends the comparison of that function)."""
    from wavelift.driver.codeobject import CodeObject
    from wavelift.isa.disasm_cli import entries
    from wavelift.isa.llvm_oracle import _LINE, objdump_lines

    obj = tmp_path / "k.hsaco"
    subprocess.run(
        ["clang-19", "-x", "cl", "-cl-std=CL2.0", "-Xclang", "-finclude-default-header", "-nogpulib"]
        + ["-target", "amdgcn-amd-amdhsa", f"-mcpu={target}", opt]
        + (["-mwavefrontsize64"] if wave64 else [])
        + ["-include", os.path.join(FIX, "wl_builtins.h"), os.path.join(FIX, f"{src}.cl"), "-o", str(obj)],
        check=True,
        capture_output=True,
    )
    co = CodeObject(obj.read_bytes())
    code = co.section_data(co.text)
    base = co.text.address
    want = {}
    for ln in objdump_lines(obj, target, wave64):
        m = _LINE.match(ln)
        if m:
            want[int(m.group(2), 16)] = m.group(1)
    funcs = sorted({s.value for s in co.symbols if s.section_index == co.text.index and s.value >= base})
    n = 0
    for k, start in enumerate(funcs):
        end = funcs[k + 1] if k + 1 < len(funcs) else base + len(code)
        chunk = code[start - base : end - base]
        for pos, _size, text in entries(chunk, target, wave64):
            if text.startswith(f"; {NOT_DECODED}"):
                break
            assert want.get(start + pos) == text, (hex(start + pos), text, want.get(start + pos))
            n += 1
    # then every instruction at the addresses objdump found: equal, or its encoding not decoded yet
    same = refused = 0
    for addr, text in sorted(want.items()):
        got = ours(code[addr - base :], target, wave64)
        if got == "not decoded":
            refused += 1
            continue
        assert got is not None and got[0] == text, (hex(addr), got, text)
        same += 1
    print(
        f"{target} w{64 if wave64 else 32} {opt} {src}: listings equal for {n} instructions up to the "
        f"first encoding not decoded yet; of all {len(want)}: {same} equal, {refused} not decoded yet"
    )
    assert n >= 10


# ----------------------------------------------------------------------------- DPP16 / DPP8
def dpp_words(target, wave64, n_per_op, seed):
    """Every VOP1/VOP2/VOPC opcode of the ALU table with each DPP mark (0xFA DPP16, 0xE9/0xEA
    DPP8) in src0, random vdst/vsrc1 and a random control dword (its src0 byte a VGPR)."""
    rnd = random.Random(seed)
    tab = load_table(target, wave64)
    isa = ISAS[generation(target)]
    items = []
    for enc in ("VOP1", "VOP2", "VOPC"):
        for op in sorted(tab[enc]):
            for mark in (0xFA, 0xE9, 0xEA):
                for _k in range(n_per_op):
                    f = {"op": op, "src0": mark}
                    for name, _lo, w in isa.layouts[enc]:
                        if name not in f:
                            f[name] = rnd.randrange(1 << w)
                    w1 = rnd.getrandbits(32)
                    if mark == 0xFA and rnd.random() < 0.5:
                        w1 = (w1 & ~0x1FF00) | (
                            rnd.choice([0xE4, 0x1B, 0x111, 0x121, 0x130, 0x141, 0x150]) << 8
                        )
                    items.append(struct.pack("<2I", isa.encode(enc, **f)[0], w1))
    return items


def _check_dpp(target, wave64, n, seed):
    items = dpp_words(target, wave64, n, seed)
    t = against_llvm(items, target, wave64, pad=2)
    print(
        f"{target} w{64 if wave64 else 32} DPP: {len(items)} words, {t.same} equal, {t.refused} not decoded yet"
    )
    assert t.same > len(items) // 4
    assert t.refused < len(items) // 20  # only the true16 forms
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
def test_dpp(target, wave64):
    _check_dpp(target, wave64, 1, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize(
    "target,wave64", CONFIGS + SHARED, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS + SHARED]
)
def test_dpp_slow(target, wave64):
    _check_dpp(target, wave64, 8, 2)


# ----------------------------------------------------------------------------- memory encodings
# which fields of a table key (tools/gen_isa_memory_tables.py) fix the entry, per encoding
MEM_KEYS = {
    ("gfx11", "DS"): ("op", "gds"),
    ("gfx12", "DS"): ("op", "gds"),
    ("gfx11", "FLAT"): ("seg", "op", "glc", "saddr_off", "sve"),
    ("gfx11", "MUBUF"): ("op", "offen", "idxen", "lds", "glc", "tfe"),
    ("gfx11", "MTBUF"): ("op", "offen", "idxen", "tfe"),
    ("gfx12", "VFLAT"): ("seg", "op", "th0", "saddr_off", "sve"),
    ("gfx12", "VBUFFER"): ("op", "offen", "idxen", "tfe", "th0"),
}
MEM_ENCS = {"gfx11": ("DS", "FLAT", "MUBUF", "MTBUF"), "gfx12": ("DS", "VFLAT", "VBUFFER")}
SADDR_OFF = {"gfx11": 0x7C, "gfx12": 0x7C}  # the saddr code LLVM prints as ``off`` (null)
MEM_NWORDS = {"VFLAT": 3, "VBUFFER": 3}


def _major(target, enc):
    isa = ISAS[generation(target)]
    (m,) = [m for m in range(64) if isa.classify(m << 26) == enc]
    return m << 26


def mem_words(enc, target, n_per_entry, seed):
    """Every entry (opcode x mode) of the target's memory table for ``enc``: ``n_per_entry`` words
    with random fields; in about two of three the fields LLVM requires to be zero are zero."""
    from wavelift.isa.instruction import TABLE_TARGET
    from wavelift.isa.memory import load_memory_table

    rnd = random.Random(seed)
    tab = load_memory_table(TABLE_TARGET.get(target, target))
    lay = tab["layout"][enc]
    items = []
    for k, e in sorted(tab[enc].items()):
        fixed = dict(zip(MEM_KEYS[(generation(target), enc)], map(int, k.split(","))))
        for _ in range(n_per_entry):
            if "th0" in fixed:  # th bit 0 is the mode bit, the rest random
                fixed["th"] = rnd.randrange(4) * 2 + fixed["th0"]
            if "saddr_off" in fixed:
                off = SADDR_OFF[generation(target)]
                fixed["saddr"] = (
                    off if fixed["saddr_off"] else rnd.choice([v for v in range(128) if v != off])
                )
            ws = [_major(target, enc)] + [0] * (MEM_NWORDS.get(enc, 2) - 1)
            keep_zero = rnd.random() < 0.67
            for name, (w, lo, width) in lay.items():
                v = fixed[name] if name in fixed else rnd.getrandbits(width)
                if keep_zero and name in e["zero"]:
                    v = 0
                ws[w] |= v << lo
            items.append(struct.pack(f"<{len(ws)}I", *ws))
    return items


def _check_mem(enc, target, wave64, n, seed):
    items = mem_words(enc, target, n, seed)
    t = against_llvm(items, target, wave64, refusals="invalid")  # named: LLVM rejects what the hardware runs
    print(
        f"{target} w{64 if wave64 else 32} {enc}: {len(items)} words, {t.same} equal, {t.invalid} invalid "
        f"for both, {t.refused} refused by name"
    )
    assert t.same > len(items) // 3
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
@pytest.mark.parametrize("enc", sorted({e for v in MEM_ENCS.values() for e in v}))
def test_memory_sweep(enc, target, wave64):
    if enc not in MEM_ENCS[generation(target)]:
        pytest.skip(f"{enc} is not a {generation(target)} encoding")
    _check_mem(enc, target, wave64, 3, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize(
    "target,wave64", CONFIGS + SHARED, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS + SHARED]
)
@pytest.mark.parametrize("enc", sorted({e for v in MEM_ENCS.values() for e in v}))
def test_memory_sweep_slow(enc, target, wave64):
    if enc not in MEM_ENCS[generation(target)]:
        pytest.skip(f"{enc} is not a {generation(target)} encoding")
    _check_mem(enc, target, wave64, 40, 2)
