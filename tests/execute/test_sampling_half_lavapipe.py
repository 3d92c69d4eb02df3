"""d16 and a16 sampling (issue 22 item 4, decision 0034's 2026-12-05 section) against lavapipe
and NumPy: tests/fixtures/glsl/sampling/half.comp compiled by ACO (navi21 wave32, navi10
wave64; its asm holds image_sample_lz d16, image_sample_lz a16, image_sample_l a16 (NSA),
image_gather4_lz d16 and a16 d16) runs in wavelift with RADV's T#/S# and on lavapipe with the
same SPIR-V, image and sampler (test_sampling_lavapipe.py's harness).  NumPy references: a d16
row is the f32 result of the same lookup (sampling.comp through wavelift) rounded to f16 to
nearest even; an a16 row is the f32 lookup at the f16 coordinates widened exactly.  Refusal
tests for the d16/a16 cases still refused."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import test_sampling
from harness import Rig, ptr
from nvrtc_check import check_cuda_kernels
from test_sampling import sampler as asm_sampler
from test_sampling_lavapipe import BORDER_MODE as BORDER
from test_sampling_lavapipe import (
    EDGE,
    FIX,
    LINEAR,
    MIRRORED,
    NEAREST,
    REPEAT,
    H,
    N,
    W,
    inputs,
    radv_sampler,
    run_lavapipe,
    texels_for,
)

import wavelift
from wavelift.driver.aco import Image, image_descriptor

CASES = {
    "rgba8-nearest-repeat": ("rgba8", (NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0)),
    "rgba16f-nearest-border-white": ("rgba16f", (NEAREST, NEAREST, NEAREST, BORDER, MIRRORED, 4)),
    "rgba8-linear-mirror-edge": ("rgba8", (LINEAR, LINEAR, NEAREST, MIRRORED, EDGE, 0)),
}


def native_default(test_id: str) -> bool:
    """The ACO shaders (half.comp and sampling.comp: ~1 MB of C++ each) take the native compiler
    ~100 s on a shared machine: their native runs are slow (their NumPy runs are default); the
    hand-written d16 and a16 forms (one image instruction a program, below) run natively by
    default: the tests whose only parameter is the tier."""
    return test_id in ("native", "native-blocks")


def run_wavelift(shader, target, mode, fmt, texels, samp, c):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"{shader}.json"))
    bpp = texels.dtype.itemsize * 4
    pitch = -(-W * bpp // 256) * 256 // bpp
    img = np.zeros((H, pitch, 4), texels.dtype)
    img[:, :W] = texels
    src = dev.upload(img.reshape(-1).view(np.uint8))
    inp = dev.upload(c)
    out = dev.upload(np.full((N, 5, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    dev.memory.write(at, struct.pack("<8I", *image_descriptor(Image(src, W, H, fmt), False)))
    dev.memory.write(at + 80, struct.pack("<4I", *radv_sampler(*samp)))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    assert res.landed, res.refusal
    return dev.download(out, np.uint32).reshape(N, 5, 4)


def program(form: str, nregs: int, ndata: int) -> str:
    """test_sampling.program with the modifiers after dim: (llvm-mc's order for d16/a16)."""
    op, _, mods = form.partition(" ")
    mask, _, rest = mods.partition(" ")
    return test_sampling.program(f"{op} {mask}", nregs, ndata).replace(
        "dim:SQ_RSRC_IMG_2D", f"dim:SQ_RSRC_IMG_2D {rest}"
    )


def run_asm(form, nregs, ndata, args, texels, fmt="rgba8", sampler=None, mode="wave"):
    """test_sampling.run for program() above: (result, rows of 4 u32) of 32 lanes."""
    r = Rig(program(form, nregs, ndata))
    img = r.buf(texels, "img")
    t = image_descriptor(Image(test_sampling._Buf(img), W, H, fmt), False)
    a = np.zeros((N, 4), np.uint32)
    a[:, : len(args)] = np.stack([np.asarray(x).view(np.uint32) for x in args], 1)
    cb = r.buf(a, "args")
    out = r.buf(np.full(N * 4, 0xDEAD, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=t + sampler + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3),
        mode=mode,
    )
    return res, r.read(out, np.uint32, N * 4).reshape(N, 4)


def halves(rows):
    """(N, 4) u32 rows packed as half.comp's pk -> (N, 4) f16."""
    return rows[:, :2].copy().view(np.float16).reshape(N, 4)


def f16_of(f32_bits):
    """NumPy's f32 -> f16, round to nearest even (the reference of the d16 conversion)."""
    return f32_bits.view(np.float32).astype(np.float16)


def f16_ulps(a, b):
    def key(x):
        i = x.view(np.int16).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFF), i)

    return np.abs(key(a) - key(b))


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "variant,target,mode",
    [
        ("w32", "gfx1030", "wave"),
        pytest.param("w32", "gfx1030", "lane", marks=pytest.mark.slow),  # ~20 s each
        pytest.param("navi10-w64", "gfx1010", "wave", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_d16_a16_sampling_equals_lavapipe_and_numpy(
    case, variant, target, mode, tier, lavapipe_sample, tmp_path
):  # noqa: F811
    fmt, samp = CASES[case]
    seed = 7 + sorted(CASES).index(case)
    texels = texels_for(fmt, seed)
    c = inputs(seed + 100)
    got = run_wavelift(f"half-{variant}", target, mode, fmt, texels, samp, c)
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c, f"half-{variant}")
    # NumPy references from the 32-bit lookups of sampling.comp, run through wavelift
    f32 = run_wavelift(f"sampling-{variant}", target, mode, fmt, texels, samp, c)
    c16 = c.copy()
    c16[:, :3] = c[:, :3].astype(np.float16).astype(np.float32)  # exact widening of the f16s
    f32_at16 = run_wavelift(f"sampling-{variant}", target, mode, fmt, texels, samp, c16)
    point = samp[0] == samp[1] == NEAREST
    # d16: row 0 is sampling.comp's row 0 rounded to f16, bit for bit; a16: rows 1 and 3 are the
    # f32 lookups at the widened f16 coordinates (and LOD), bit for bit
    np.testing.assert_array_equal(halves(got[:, 0]).view(np.uint16), f16_of(f32[:, 0]).view(np.uint16))
    np.testing.assert_array_equal(got[:, 1], f32_at16[:, 0])
    np.testing.assert_array_equal(got[:, 3], f32_at16[:, 1])
    # the upper words of the d16 rows are the shader's zeros
    assert (got[:, [0, 2, 4], 2:] == 0).all()
    # lavapipe: gathers (rows 2, 4) exact point lookups; rgba8 within lavapipe's one-ulp UNORM
    # reads (test_formats_lavapipe.py), which may move an f16 by one ulp
    tol = 1 if fmt == "rgba8" else 0
    for r in (2, 4):
        assert f16_ulps(halves(got[:, r]), halves(want[:, r])).max() <= tol, (case, r)
    if point:
        assert f16_ulps(halves(got[:, 0]), halves(want[:, 0])).max() <= tol, case
        for r in (1, 3):
            ulps = np.abs(got[:, r].astype(np.int64) - want[:, r].astype(np.int64))
            assert ulps.max() <= tol, (case, r)
    else:  # linear: decision 0025's rgba8 bound (one 8-bit step), plus one f16 ulp for row 0
        g0, w0 = halves(got[:, 0]).astype(np.float64), halves(want[:, 0]).astype(np.float64)
        assert np.abs(g0 - w0).max() <= 1 / 255 + 2.0**-11 + 1e-6, case
        for r in (1, 3):
            d = np.abs(got[:, r].view(np.float32).astype(np.float64) - want[:, r].view(np.float32))
            assert d.max() <= 1 / 255 + 1e-6, (case, r)


def test_the_fixture_holds_the_d16_and_a16_forms():
    for variant in ("w32", "navi10-w64"):
        asm = (FIX / f"half-{variant}.s").read_text()
        lines = [ln for ln in asm.splitlines() if "image_" in ln]
        assert any("image_sample_lz" in ln and " d16" in ln and "a16" not in ln for ln in lines)
        assert any("image_sample_lz" in ln and "a16" in ln for ln in lines)
        assert any("image_sample_l " in ln and "a16" in ln and "[" in ln for ln in lines)  # NSA
        assert any("image_gather4_lz" in ln and " d16" in ln and "a16" not in ln for ln in lines)
        assert any("image_gather4_lz" in ln and "a16 d16" in ln for ln in lines)


# ---- hand-written forms: the rounding at ties, and the refusals ------------------------------
# (the tiers tests here are the default native runs of the d16 and a16 forms: native_default)
@pytest.mark.tiers
def test_d16_rounds_to_nearest_even_at_ties(tier):
    """rgba16f texels read as f32 are exact f16s; rgba8 point samples x / 255 give f32 values
    between f16s: d16 must equal NumPy's RTNE of the f32 sample (and of the f32 gather) for every
    8-bit value."""
    tex = np.zeros((H, 64, 4), np.uint8)
    vals = np.arange(256, dtype=np.uint8)
    rng = np.random.default_rng(3)
    tex[:, :W] = rng.permutation(np.resize(vals, H * W * 4)).reshape(H, W, 4)
    s = ((np.arange(N) % W) + 0.5).astype(np.float32) / W
    t = ((np.arange(N) // W % H) + 0.5).astype(np.float32) / H
    samp = asm_sampler(0, 0, 0, 0)
    res32, f32 = run_asm("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, sampler=samp)
    res16, h = run_asm("image_sample_lz dmask:0xf d16", 2, 2, [s, t], tex, sampler=samp)
    assert res32.landed and res16.landed, (res32.refusal, res16.refusal)
    np.testing.assert_array_equal(halves(h).view(np.uint16), f16_of(f32).view(np.uint16))
    # and the f32 samples are x / 255 correctly rounded, so some of them are not f16s
    assert (f16_of(f32).astype(np.float32).view(np.uint32) != f32).any()
    g32_res, g32 = run_asm("image_gather4_lz dmask:0x2", 2, 4, [s, t], tex, sampler=samp)
    g16_res, g16 = run_asm("image_gather4_lz dmask:0x2 d16", 2, 2, [s, t], tex, sampler=samp)
    assert g32_res.landed and g16_res.landed, (g32_res.refusal, g16_res.refusal)
    np.testing.assert_array_equal(halves(g16).view(np.uint16), f16_of(g32).view(np.uint16))
    assert (f16_of(g32).astype(np.float32).view(np.uint32) != g32).any()


@pytest.mark.tiers
def test_a16_coordinates_widen_exactly(tier):
    tex = np.random.default_rng(4).integers(0, 256, (H, 64, 4), dtype=np.uint8)
    rng = np.random.default_rng(5)
    s16 = rng.uniform(0.01, 0.99, N).astype(np.float16)
    t16 = rng.uniform(0.01, 0.99, N).astype(np.float16)
    packed = s16.view(np.uint16).astype(np.uint32) | t16.view(np.uint16).astype(np.uint32) << 16
    samp = asm_sampler(0, 0, 0, 0)
    s32, t32 = s16.astype(np.float32), t16.astype(np.float32)
    ra, a = run_asm("image_sample_lz dmask:0xf a16", 1, 4, [packed], tex, sampler=samp)
    rf, f = run_asm("image_sample_lz dmask:0xf", 2, 4, [s32, t32], tex, sampler=samp)
    if rf.refusal is not None:  # a coordinate in a precision window refuses both the same way
        assert ra.refusal is not None and ra.refusal.code == rf.refusal.code
        return
    assert ra.landed, ra.refusal
    np.testing.assert_array_equal(a, f)
    # image_sample_l a16 (the LOD an f16 too; point mag, linear min: its sign picks the filter)
    # and image_gather4_lz a16 d16 equal their 32-bit forms at the widened values
    lod16 = rng.choice([-2.5, -1.25, 1.5, 2.25], N).astype(np.float16)
    lsamp = asm_sampler(0, 0, 0, 1)
    rl16, l16 = run_asm(
        "image_sample_l dmask:0xf a16",
        2,
        4,
        [packed, lod16.view(np.uint16).astype(np.uint32)],
        tex,
        sampler=lsamp,
    )
    rl32, l32 = run_asm(
        "image_sample_l dmask:0xf", 3, 4, [s32, t32, lod16.astype(np.float32)], tex, sampler=lsamp
    )
    assert rl16.landed and rl32.landed, (rl16.refusal, rl32.refusal)
    np.testing.assert_array_equal(l16, l32)
    rg16, g16 = run_asm("image_gather4_lz dmask:0x4 a16 d16", 1, 2, [packed], tex, sampler=samp)
    rg32, g32 = run_asm("image_gather4_lz dmask:0x4", 2, 4, [s32, t32], tex, sampler=samp)
    assert rg16.landed and rg32.landed, (rg16.refusal, rg32.refusal)
    np.testing.assert_array_equal(halves(g16).view(np.uint16), f16_of(g32).view(np.uint16))


@pytest.mark.parametrize(
    "form, nregs, ndata, code",
    [
        ("image_sample_lz dmask:0x7 d16", 2, 2, "program.unsupported_instruction"),
        ("image_sample_lz dmask:0x1 d16", 2, 1, "program.unsupported_instruction"),
        # (a16 with _b and _d: carried out since decision 0036, test_sampling_g16_lavapipe.py)
        ("image_sample_lz dmask:0xf r128", 2, 4, "program.unsupported_instruction"),
    ],
)
def test_d16_a16_forms_still_refused(form, nregs, ndata, code):
    tex = np.zeros((H, 64, 4), np.uint8)
    s = np.full(N, 0.3, np.float32)
    res, _ = run_asm(form, nregs, ndata, [s] * min(nregs, 4), tex, sampler=asm_sampler(0, 0, 0, 0))
    assert res.refusal is not None and res.refusal.code == code, (form, res.refusal)


def test_d16_of_an_integer_format_and_of_tiny_or_nan_results_refuse():
    s = np.full(N, 0.3, np.float32)
    tex = np.zeros((H, 64, 4), np.uint8)
    samp = asm_sampler(0, 0, 0, 0)
    res, _ = run_asm("image_sample_lz dmask:0xf d16", 2, 2, [s, s], tex, "rgba8ui", sampler=samp)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler"
    for bad in (np.float32(2.0**-20), np.float32("nan")):
        t32 = np.full((H, 16, 4), bad, np.float32)  # every texel, whatever the pitch
        res, _ = run_asm("image_sample_lz dmask:0xf d16", 2, 2, [s, s], t32, "rgba32f", sampler=samp)
        assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler", bad
    res, _ = run_asm("image_sample_lz dmask:0xf d16", 2, 2, [s, s], tex, sampler=samp)  # zeros: fine
    assert res.landed, res.refusal


# ---- CUDA: NVRTC compiles the kernels (no GPU here) ------------------------------------------
def test_cuda_kernels_of_d16_a16_sampling_compile():
    from wavelift.frontend.program import translate

    forms = (("image_sample_lz dmask:0xf d16", 2, 2), ("image_sample_l dmask:0xf a16", 2, 4))
    check_cuda_kernels([translate(Rig(program(*f)).code, "gfx1030", 32, 0x1000) for f in forms])
