"""16-bit gradients (_g16) and a16 with derivatives or a bias (decision 0036) against lavapipe
and the 32-bit forms: tests/fixtures/glsl/sampling/grad16.comp compiled by ACO (navi21 wave32,
navi10 wave64; its asm holds image_sample_d_g16, image_sample_d a16, image_sample_d_g16 a16,
image_sample_d_o_g16 and image_sample_b a16 beside image_sample_d, _d_o and _b) runs in
wavelift on a tiled mip chain with RADV's T#/S# (test_sampling_mips_lavapipe.py's harness) and
on lavapipe with the same SPIR-V, image, view and sampler.

Inputs are f16 values (coordinates, gradients, biases), so every 16-bit form must give, in
wavelift, bit for bit what its 32-bit form gives (the f16s widen exactly): rows 1, 2, 3 equal
row 0, row 5 row 4, row 7 row 6.  Against lavapipe every row is compared with lavapipe's own
row: point sampling bit for bit, linear filtering within decision 0025's bound.  LODs keep
clear of the nearest-mip boundaries k + 0.5 by more than lavapipe's LOD precision (0.043,
decision 0036), so both choose the same level.  texture() (rows 6, 7) takes its LOD from the
quad's derivatives (derivative_group_linearNV): the quads are axis-aligned."""

from __future__ import annotations

import math

import numpy as np
import pytest
import test_sampling_mips_lavapipe as mips
from test_sampling_mips_lavapipe import EDGE, LINEAR, MIRRORED, NEAREST, REPEAT, VIEW_2D, Case

N = mips.N
NRES = 8
SIZE = (16, 8, 1)
LEVELS = 5
SAMPLERS = {
    "point": (NEAREST, NEAREST, NEAREST, REPEAT, MIRRORED, EDGE),
    "linear": (LINEAR, LINEAR, NEAREST, MIRRORED, REPEAT, EDGE),
}
MARGIN = 0.07  # > lavapipe's LOD precision (0.043) + 2**-8


def native_default(test_id: str) -> bool:
    """The ACO shader (eight samples of a mip chain) takes the native compiler minutes on a
    shared machine: its native runs are slow; the hand-written forms run natively by default."""
    return "image_sample_" in test_id and "wave" in test_id and ("_d-" in test_id or "cl_o" in test_id)


def make_case(samp_name, shader="grad16-w32", sw="64KB_S"):
    c = Case(shader, VIEW_2D, "rgba16f", SIZE, LEVELS, 0, LEVELS, SAMPLERS[samp_name], seed=41)
    c.samp_lod, c.sw_mode, c.compare = (0.0, 1000.0), sw, None
    return c


def _h(x):
    return np.float32(np.float16(x))


def _lod_ok(lam):
    """λ chooses the same nearest level under every LOD within lavapipe's precision."""
    c = min(max(lam, 0.0), LEVELS - 1)
    return lam < 0 or abs(c - math.floor(c) - 0.5) > MARGIN or c == LEVELS - 1


def _texel_ok(s, t):
    for m in range(LEVELS):
        w, h, _ = mips.level_dims(*SIZE, m)
        for v, n in ((s, w), (t, h)):
            u = float(np.float32(np.float32(v) * np.float32(n)))
            if not mips._clear(u, 0.03) or not mips._clear(u - 0.5, 0.03):
                return False
    return True


def inputs(seed):
    """(N, 4) f32 of f16 values (s, t, z, bias): quads (s, t), (s + a, t), (s, t + b),
    (s + a, t + b); z the textureGrad derivative scale; λs clear of the mip boundaries."""
    rng = np.random.default_rng(seed)
    w0, h0 = SIZE[0], SIZE[1]
    c = np.zeros((N, 4), np.float32)
    q = 0
    while q < N // 4:
        s, t = _h(rng.uniform(-0.2, 1.2)), _h(rng.uniform(-0.2, 1.2))
        a, b = _h(rng.uniform(-0.3, 0.3)), _h(rng.uniform(-0.3, 0.3))
        bias = _h(rng.choice([0.0, 0.5, -1.25, 1.75]))
        quad = [(s, t), (_h(s + a), t), (s, _h(t + b)), (_h(s + a), _h(t + b))]
        u = [np.float32(np.float32(p[0]) * np.float32(w0)) for p in quad]
        v = [np.float32(np.float32(p[1]) * np.float32(h0)) for p in quad]
        rho = max(abs(float(np.float32(u[1] - u[0]))), abs(float(np.float32(v[2] - v[0]))))
        if rho == 0 or not _lod_ok(math.log2(rho) + float(bias)):
            continue
        if not all(_texel_ok(*p) for p in quad):
            continue
        zs = []
        for _ in range(4):
            while True:
                z = _h(rng.choice([-1, 1]) * 2.0 ** rng.uniform(-7, 0))
                lam = math.log2(max(abs(float(z)) * w0, abs(float(z)) * 0.5 * h0))
                if _lod_ok(lam) and _h(z * np.float32(0.5)) == z * np.float32(0.5):
                    zs.append(z)
                    break
        for k in range(4):
            c[4 * q + k] = quad[k][0], quad[k][1], zs[k], bias
        q += 1
    return c


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "variant,target,mode",
    [
        ("w32", "gfx1030", "wave"),
        ("w32", "gfx1030", "lane"),
        ("navi10-w64", "gfx1010", "wave"),
    ],
)
@pytest.mark.parametrize("samp", sorted(SAMPLERS))
def test_g16_and_a16_derivative_bias_forms_equal_32bit_and_lavapipe(
    samp, variant, target, mode, tier, lavapipe_sample, tmp_path
):  # noqa: F811
    case = make_case(samp, sw="4KB_S" if samp == "linear" else "64KB_S")  # (one SPIR-V for both)
    tex = mips.texels(case)
    c = inputs(17 + sorted(SAMPLERS).index(samp))
    got = mips.run_wavelift(case, tex, c, target, mode, variant, nres=NRES)
    for row, ref in ((1, 0), (2, 0), (3, 0), (5, 4), (7, 6)):
        np.testing.assert_array_equal(got[:, row], got[:, ref], err_msg=f"row {row} vs {ref}")
    want = mips.run_lavapipe(lavapipe_sample, tmp_path, case, tex, c, nres=NRES)
    if samp == "point":
        np.testing.assert_array_equal(got, want)
    else:
        span = max(float(np.ptp(t.astype(np.float64))) for t in tex)
        g, w = got.view(np.float32).astype(np.float64), want.view(np.float32).astype(np.float64)
        bound = 2 * 2.0**-9 * span + 4 * float(np.spacing(np.float32(np.abs(w).max())))
        assert np.abs(g - w).max() <= bound, (np.abs(g - w).max(), bound)


def test_the_fixture_holds_the_g16_and_a16_forms():
    for variant in ("w32", "navi10-w64"):
        lines = [ln for ln in (mips.FIX / f"grad16-{variant}.s").read_text().splitlines() if "image_" in ln]
        for op, a16 in (
            ("image_sample_d ", False),
            ("image_sample_d_g16 ", False),
            ("image_sample_d ", True),
            ("image_sample_d_g16 ", True),
            ("image_sample_d_o_g16 ", False),
            ("image_sample_b ", True),
        ):
            assert any(op in ln and ("a16" in ln) == a16 for ln in lines), (variant, op, a16)


# ---- hand-written _g16 forms: each equals its 32-bit form at the widened derivatives -------
def _program(op: str, nregs: int, mods: str) -> str:
    """Each lane loads 12 dwords (v1..v12) from s[16:17] + 64 * lane, samples into v[20:23]
    with vaddr v[1:nregs] and stores v[20:23] at s[12:13] + 16 * lane."""
    vdata = "v20" if "dmask:0x1" in mods else "v[20:23]"
    return f"""
  v_lshlrev_b32 v30, 6, v0
  global_load_dwordx4 v[1:4], v30, s[16:17]
  global_load_dwordx4 v[5:8], v30, s[16:17] offset:16
  global_load_dwordx4 v[9:12], v30, s[16:17] offset:32
  v_lshlrev_b32 v31, 4, v0
  s_waitcnt vmcnt(0)
  v_mov_b32 v20, 0
  v_mov_b32 v21, 0
  v_mov_b32 v22, 0
  v_mov_b32 v23, 0
  {op} {vdata}, v[1:{nregs}], s[0:7], s[8:11] {mods} dim:SQ_RSRC_IMG_2D
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v31, v[20:23], s[12:13]
  s_endpgm"""


def _run_form(op, words, texels, fmt, samp, mods="dmask:0xf", mode="wave"):
    from harness import Rig, ptr
    from test_sampling import H, W, _Buf

    from wavelift.driver.aco import Image, image_descriptor

    r = Rig(_program(op, len(words), mods))
    img = r.buf(texels, "img")
    t = image_descriptor(Image(_Buf(img), W, H, fmt), False)
    a = np.zeros((N, 16), np.uint32)
    a[:, : len(words)] = np.stack([np.asarray(x).view(np.uint32) for x in words], 1)
    cb = r.buf(a, "args")
    out = r.buf(np.full(N * 4, 0xDEAD, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=t + samp + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3),
        mode=mode,
    )
    return res, r.read(out, np.uint32, N * 4).reshape(N, 4)


def _pack(lo, hi):
    return lo.astype(np.float16).view(np.uint16).astype(np.uint32) | (
        hi.astype(np.float16).view(np.uint16).astype(np.uint32) << 16
    )


# form: (compare, offset, clamp)
G16_FORMS = {
    "image_sample_d": (False, False, False),
    "image_sample_cd": (False, False, False),
    "image_sample_d_o": (False, True, False),
    "image_sample_d_cl": (False, False, True),
    "image_sample_c_d": (True, False, False),
    "image_sample_c_cd_cl_o": (True, True, True),
}


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("form", sorted(G16_FORMS))
def test_g16_forms_equal_their_32bit_forms(form, mode, tier):
    """A one-level image whose min and mag filters differ (point mag, linear min): the
    derivatives choose the filter.  Derivatives (z, w) and (-w, z) with w = 0 or z / 64 (λ
    clear of 0), coordinates clear of the point windows; the g16 form gets the same f16
    derivatives packed two a dword."""
    import test_sampling as ts

    compare, offset, clamp = G16_FORMS[form]
    rng = np.random.default_rng(sorted(G16_FORMS).index(form))
    lam = rng.choice([-2.5, -1.3, 1.4, 2.2], N)
    z = (2.0**lam / ts.W * rng.choice([-1, 1], N)).astype(np.float16)
    w = np.where(rng.random(N) < 0.5, 0, z / np.float16(64)).astype(np.float16)
    dudx, dvdx, dudy, dvdy = z, w, -w, z
    s = ((rng.integers(0, ts.W, N) + rng.uniform(0.1, 0.9, N)) / ts.W).astype(np.float32)
    t = ((rng.integers(0, ts.H, N) + rng.uniform(0.1, 0.9, N)) / ts.H).astype(np.float32)
    head = []
    if offset:
        head.append(np.full(N, 0x3F01, np.uint32))  # (1, -1)
    if compare:
        head.append(rng.uniform(0, 1, N).astype(np.float32))
    tail = [np.zeros(N, np.float32)] if clamp else []
    d32 = [x.astype(np.float32) for x in (dudx, dvdx, dudy, dvdy)]
    d16 = [_pack(dudx, dvdx), _pack(dudy, dvdy)]
    if compare:
        texels = rng.uniform(0, 1, (ts.H, ts.PITCH)).astype(np.float32)
        fmt, mods = "r32f", "dmask:0x1"
        samp = ts.sampler(0, 0, 0, 1, DEPTH_COMPARE_FUNC=1)
    else:
        texels = rng.integers(0, 256, (ts.H, ts.PITCH, 4), dtype=np.uint8)
        fmt, mods = "rgba8", "dmask:0xf"
        samp = ts.sampler(0, 0, 0, 1)
    r32, o32 = _run_form(form, [*head, *d32, s, t, *tail], texels, fmt, samp, mods, mode)
    r16, o16 = _run_form(form + "_g16", [*head, *d16, s, t, *tail], texels, fmt, samp, mods, mode)
    assert r32.landed, r32.refusal
    assert r16.landed, r16.refusal
    np.testing.assert_array_equal(o16, o32)
    # the derivatives did choose: both filters occur
    assert (lam > 0).any() and (lam < 0).any()
