"""GFX11 (gfx1100) WMMA against NumPy: random 16x16 matrices placed in VGPRs by the layouts of the
RDNA3 ISA guide / AMD's matrix instruction calculator for gfx11 (written here independently of
frontend/wmma.py), D read back by the same layouts and compared with A @ B + C computed in
float64 / int64.  Integer results are exact; float results are within one unit in the last place
of the output type (the hardware's internal rounding is not documented; wavelift rounds once)."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, run11

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")
A0, B0, C0 = 40, 56, 72  # first VGPR of A, B and C/D


def _pack(vals: np.ndarray, width: int) -> np.ndarray:
    """[..., 16] element bit patterns -> [..., 16 * width // 32] u32 words (element k at bits
    width*(k % per) of word k // per)."""
    per = 32 // width
    v = vals.astype(np.uint64) & ((1 << width) - 1)
    v = v.reshape(*vals.shape[:-1], 16 // per, per) << (width * np.arange(per, dtype=np.uint64))
    return v.sum(axis=-1).astype(np.uint32)


def _place_ab(mat_bits: np.ndarray, width: int, wave: int, rows: bool) -> np.ndarray:
    """A (rows: lane i holds row i) or B (lane j holds column j) as [vgpr, lane] u32 words;
    lanes 16.. hold copies."""
    per_lane = mat_bits if rows else mat_bits.T  # [lane % 16, k]
    words = _pack(per_lane, width)  # [16, nregs]
    return np.tile(words, (wave // 16, 1)).T.copy()


def _cd_index(wave: int):
    """(vgpr, lane) -> (i, j) of C/D: i = (wave/16) * vgpr + lane // 16, j = lane % 16."""
    g = wave // 16
    vg, ln = np.meshgrid(np.arange(16 // g), np.arange(wave), indexing="ij")
    return g * vg + ln // 16, ln % 16


def _program(n_a: int, n_b: int, n_c: int, wave: int, text: str) -> str:
    lines = ["v_lshlrev_b32 v100, 2, v0"]
    regs = [A0 + k for k in range(n_a)] + [B0 + k for k in range(n_b)] + [C0 + k for k in range(n_c)]
    for r, reg in enumerate(regs):
        lines += [f"v_add_nc_u32 v101, {r * wave * 4}, v100", f"global_load_b32 v{reg}, v101, s[2:3]"]
    lines += ["s_waitcnt vmcnt(0)", text]
    for r in range(n_c):
        lines += [f"v_add_nc_u32 v101, {r * wave * 4}, v100", f"global_store_b32 v101, v{C0 + r}, s[0:1]"]
    lines.append("s_endpgm")
    return "\n".join(lines)


def _regs(first: int, n: int) -> str:
    return f"v[{first}:{first + n - 1}]"


def _run_wmma(name, mods, a_words, b_words, c_words, wave, mode):
    n_a, n_b, n_c = len(a_words), len(b_words), len(c_words)
    text = f"{name} {_regs(C0, n_c)}, {_regs(A0, n_a)}, {_regs(B0, n_b)}, {_regs(C0, n_c)} {mods}"
    inputs = np.concatenate([a_words, b_words, c_words]).astype(np.uint32)
    res, out = run11(_program(n_a, n_b, n_c, wave, text), inputs, n_c * wave, mode, wave64=wave == 64)
    assert res.landed, res.refusal
    return out.reshape(n_c, wave)


def _float_case(rng, kind):
    """(A, B values as float64, A/B element bits)."""
    if kind == "f16":
        a = rng.standard_normal((16, 16)).astype(np.float16)
        b = rng.standard_normal((16, 16)).astype(np.float16)
        return a.astype(np.float64), b.astype(np.float64), a.view(np.uint16), b.view(np.uint16)
    a32 = (rng.standard_normal((16, 16)).astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    b32 = (rng.standard_normal((16, 16)).astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    return (
        a32.astype(np.float64),
        b32.astype(np.float64),
        a32.view(np.uint32) >> 16,
        b32.view(np.uint32) >> 16,
    )


def _within_ulp(got, want, t):
    want_t = want.astype(t)
    ulp = np.spacing(np.abs(want_t)).astype(np.float64)
    diff = np.abs(got.astype(np.float64) - want)
    assert (diff <= ulp).all(), (diff / ulp).max()
    assert (got == want_t).mean() > 0.9  # rounding once: almost every element is the nearest


NEG_CASES = [
    ("", 0, 0),
    ("neg_lo:[1,0,0]", 0b001, 0),  # A's even k only
    ("neg_lo:[0,0,1] neg_hi:[0,1,0]", 0b100, 0b010),  # B's odd k, -C
    ("neg_lo:[0,1,1] neg_hi:[1,0,1]", 0b110, 0b101),  # -|C|
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("kind", ["f16", "bf16"])
@pytest.mark.parametrize("mods,neg,neg_hi", NEG_CASES)
def test_wmma_f32_output(mode, wave, kind, mods, neg, neg_hi):
    rng = np.random.default_rng(wave + 7 * len(kind) + 100 * neg)
    a, b, abits, bbits = _float_case(rng, kind)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    i, j = _cd_index(wave)
    name = f"v_wmma_f32_16x16x16_{kind}"
    got = _run_wmma(
        name,
        mods,
        _place_ab(abits, 16, wave, True),
        _place_ab(bbits, 16, wave, False),
        c.view(np.uint32)[i, j],
        wave,
        mode,
    )
    even = np.arange(16) % 2 == 0
    sa = np.where(even, -1.0 if neg & 1 else 1.0, -1.0 if neg_hi & 1 else 1.0)  # A[:, k]
    sb = np.where(even, -1.0 if neg & 2 else 1.0, -1.0 if neg_hi & 2 else 1.0)  # B[k, :]
    c64 = c.astype(np.float64)
    if neg_hi & 4:
        c64 = np.abs(c64)
    if neg & 4:
        c64 = -c64
    want = (a * sa) @ (b * sb[:, None]) + c64
    d = np.zeros((16, 16), np.float32)
    d[i, j] = got.view(np.float32)
    _within_ulp(d, want, np.float32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("hi", [False, True])
def test_wmma_f16_output(mode, wave, hi):
    """v_wmma_f16_16x16x16_f16: C and D in the low halves, or the high halves with op_sel:[0,0,1];
    the other half of each D VGPR is kept."""
    rng = np.random.default_rng(wave + hi)
    a, b, abits, bbits = _float_case(rng, "f16")
    c = rng.standard_normal((16, 16)).astype(np.float16)
    other = rng.integers(0, 1 << 16, (16, 16), dtype=np.uint32)
    i, j = _cd_index(wave)
    cb, ob = c.view(np.uint16).astype(np.uint32)[i, j], other[i, j]
    c_words = (cb << 16 | ob) if hi else (ob << 16 | cb)
    got = _run_wmma(
        "v_wmma_f16_16x16x16_f16",
        "op_sel:[0,0,1]" if hi else "",
        _place_ab(abits, 16, wave, True),
        _place_ab(bbits, 16, wave, False),
        c_words,
        wave,
        mode,
    )
    kept = (got & 0xFFFF) if hi else (got >> 16)
    np.testing.assert_array_equal(kept, ob)
    res_bits = ((got >> 16) if hi else (got & 0xFFFF)).astype(np.uint16)
    d = np.zeros((16, 16), np.float16)
    d[i, j] = res_bits.view(np.float16)
    _within_ulp(d, a @ b + c.astype(np.float64), np.float16)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("kind,width", [("iu8", 8), ("iu4", 4)])
@pytest.mark.parametrize("neg", [0, 1, 2, 3])
def test_wmma_integer(mode, wave, kind, width, neg):
    """v_wmma_i32_16x16x16_iu8/iu4: NEG[0]/NEG[1] make A/B signed; exact, wrapping sum with C."""
    rng = np.random.default_rng(width * 10 + neg + wave)
    abits = rng.integers(0, 1 << width, (16, 16))
    bbits = rng.integers(0, 1 << width, (16, 16))
    c = rng.integers(-(2**31), 2**31, (16, 16), dtype=np.int64)
    c[0, :4] = 2**31 - 1  # sums that wrap

    def val(x, signed):
        return np.where(x >= 1 << (width - 1), x - (1 << width), x) if signed else x

    i, j = _cd_index(wave)
    mods = f"neg_lo:[{neg & 1},{neg >> 1},0]" if neg else ""
    got = _run_wmma(
        f"v_wmma_i32_16x16x16_{kind}",
        mods,
        _place_ab(abits, width, wave, True),
        _place_ab(bbits, width, wave, False),
        (c & 0xFFFFFFFF).astype(np.uint32)[i, j],
        wave,
        mode,
    )
    want = (val(abits, neg & 1) @ val(bbits, neg & 2) + c) & 0xFFFFFFFF
    d = np.zeros((16, 16), np.uint32)
    d[i, j] = got
    np.testing.assert_array_equal(d, want.astype(np.uint32))


@pytest.mark.parametrize(
    "text",
    [
        "v_wmma_bf16_16x16x16_bf16 v[72:79], v[40:47], v[56:63], v[72:79]",
        "v_wmma_i32_16x16x16_iu8 v[72:79], v[40:43], v[56:59], v[72:79] clamp",
        "v_wmma_f32_16x16x16_f16 v[72:79], v[40:47], v[56:63], 1.0",
    ],
)
def test_wmma_forms_without_semantics_are_refused(text):
    res, _ = run11(text + "\ns_endpgm", np.zeros(1, np.uint32), 1, "wave")
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert text.split()[0] in res.refusal.message


def test_gfx12_wmma_is_refused():
    """RDNA4's WMMA packs its matrices differently (A/B in 4 VGPRs in wave32): no semantics are
    written for it, so a gfx1200 WMMA is refused rather than run with GFX11's layout."""
    from asm import assemble
    from harness import Rig

    r = Rig("s_endpgm")
    r.target = "gfx1200"
    r.code = assemble("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]\ns_endpgm", mcpu="gfx1200")
    r.prog = r.mem.alloc(len(r.code) + 256, name="code12", data=r.code + b"\0" * 256)
    res = r.run(r.config(tgid=(False, False, False)))
    # today the gfx1200 decoder already refuses the word; frontend/wmma.py refuses it by name too
    assert not res.landed
    assert res.refusal.code in ("program.decode_error", "program.unsupported_instruction"), res.refusal
