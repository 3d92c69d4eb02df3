"""Sampling (frontend/sample.py, decision 0025): image_sample(_l/_lz/_b/_o) and image_gather4
on linear 2-D images through hand-built T#/S# descriptors, each lane's address operands from a
buffer, compared with a reference written here from the decision's rules (per lane, in NumPy
f32/f64 arithmetic, not the IR); and each refusal by name.  The compiled-GLSL comparison with
lavapipe is test_sampling_lavapipe.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.driver.aco import IMAGE_FORMATS, Image, image_descriptor
from wavelift.memory import ssharp

CLAMP = ssharp.enum("SQ_TEX_CLAMP")
BORDER = ssharp.enum("SQ_TEX_BORDER_COLOR")
POINT, LINEAR = 0, 1
W, H, N = 8, 4, 32
PITCH = 64  # texels: rows 256 bytes apart for 4-byte texels (linear layout)


class _Buf:
    def __init__(self, address):
        self.address = address


def program(form: str, nregs: int, ndata: int) -> str:
    """Each lane loads its ``nregs`` address operands (v1..) from s[16:17] + 16 * lane, samples
    into v[10:13] and stores ``ndata`` results at s[12:13] + 16 * lane."""
    vaddr = "v1" if nregs == 1 else f"v[1:{nregs}]"
    vdata = "v10" if ndata == 1 else f"v[10:{9 + ndata}]"
    op, _, mods = form.partition(" ")
    return f"""
  v_lshlrev_b32 v5, 4, v0
  global_load_dwordx4 v[1:4], v5, s[16:17]
  s_waitcnt vmcnt(0)
  v_mov_b32 v10, 0
  v_mov_b32 v11, 0
  v_mov_b32 v12, 0
  v_mov_b32 v13, 0
  {op} {vdata}, {vaddr}, s[0:7], s[8:11] {mods} dim:SQ_RSRC_IMG_2D
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v5, v[10:13], s[12:13]
  s_endpgm"""


def run(form, nregs, ndata, args, texels, fmt="rgba8", sampler=None, mode="wave", tsharp_patch=None):
    """(result, rows of 4 u32) of one dispatch of 32 lanes."""
    r = Rig(program(form, nregs, ndata))
    img = r.buf(texels, "img")
    t = image_descriptor(Image(_Buf(img), W, H, fmt), False)
    if tsharp_patch:
        t = tsharp_patch(t)
    a = np.zeros((N, 4), np.uint32)
    a[:, : len(args)] = np.stack([np.asarray(x).view(np.uint32) for x in args], 1)
    cb = r.buf(a, "args")
    out = r.buf(np.full(N * 4, 0xDEAD, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=t + sampler + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3),
        mode=mode,
    )
    return res, r.read(out, np.uint32, N * 4).reshape(N, 4)


# ---- the reference: decision 0025's rules, per lane


def unorm8(tex):
    """(H, PITCH, 4) u8 -> (H, W, 4) f32: x / 255 correctly rounded."""
    return (tex[:, :W].astype(np.float32) / np.float32(255)).astype(np.float32)


def wrap(i, n, mode):
    """(index, border?) of integer texel index i."""
    if mode == CLAMP["WRAP"]:
        return i % n, False
    if mode == CLAMP["MIRROR"]:
        m = i % (2 * n)
        return (m if m < n else 2 * n - 1 - m), False
    if mode == CLAMP["CLAMP_LAST_TEXEL"]:
        return min(max(i, 0), n - 1), False
    if mode == CLAMP["MIRROR_ONCE_LAST_TEXEL"]:
        return min(max(-1 - i if i < 0 else i, 0), n - 1), False
    assert mode == CLAMP["CLAMP_BORDER"]
    inside = 0 <= i < n
    return (i if inside else 0), not inside


def texel(vals, i, j, modes, border):
    x, bx = wrap(i, W, modes[0])
    y, by = wrap(j, H, modes[1])
    return np.array(border, np.float32) if bx or by else vals[y, x]


def coord(s, n, unnorm):
    return np.float32(s) if unnorm else np.float32(np.float32(s) * np.float32(n))


def near_boundary(x):
    return x - math.floor(x) >= 1 - 2.0**-7


def ref_point(vals, s, t, modes, border, off=(0, 0), unnorm=False):
    u, v = coord(s, W, unnorm), coord(t, H, unnorm)
    if near_boundary(float(u)) or near_boundary(float(v)):
        return None
    return texel(vals, math.floor(u) + off[0], math.floor(v) + off[1], modes, border)


def fixed8(u):
    return int(np.rint(np.float32(np.float32(u) - np.float32(0.5)) * np.float32(256)))


def ref_linear(vals, s, t, modes, border, off=(0, 0), unnorm=False):
    fu, fv = fixed8(coord(s, W, unnorm)), fixed8(coord(t, H, unnorm))
    i0, a = (fu >> 8) + off[0], fu & 255
    j0, bw = (fv >> 8) + off[1], fv & 255
    acc = np.zeros(4, np.float64)
    for di, wi in ((0, 256 - a), (1, a)):
        for dj, wj in ((0, 256 - bw), (1, bw)):
            acc += texel(vals, i0 + di, j0 + dj, modes, border).astype(np.float64) * (wi * wj)
    return (acc * 2.0**-16).astype(np.float32)


def ref_gather(vals, s, t, modes, border, comp, off=(0, 0)):
    u = float(np.float32(coord(s, W, False) - np.float32(0.5)))
    v = float(np.float32(coord(t, H, False) - np.float32(0.5)))
    if near_boundary(u) or near_boundary(v):
        return None
    i0, j0 = math.floor(u) + off[0], math.floor(v) + off[1]
    order = [(0, 1), (1, 1), (1, 0), (0, 0)]
    return np.array([texel(vals, i0 + a, j0 + c, modes, border)[comp] for a, c in order], np.float32)


def coords(rng, lo, hi, n, size, avoid=0.0):
    """n normalized coordinates whose texel-space values stay clear of texel boundaries by
    ``avoid`` (0: anywhere)."""
    out = []
    while len(out) < n:
        s = np.float32(rng.uniform(lo, hi))
        u = float(np.float32(s * np.float32(size)))
        fr = u - math.floor(u)
        if avoid and (fr < avoid or fr > 1 - avoid or abs(fr - 0.5) < avoid):
            continue
        out.append(s)
    return np.array(out, np.float32)


def sampler(mode_x, mode_y, mag, mn, border=0, **kw):
    return ssharp.encode(
        CLAMP_X=mode_x,
        CLAMP_Y=mode_y,
        XY_MAG_FILTER=mag,
        XY_MIN_FILTER=mn,
        BORDER_COLOR_TYPE=border,
        MAX_LOD=15 * 256,
        TRUNC_COORD=int(mag == mn == POINT),
        **kw,
    )


BORDERS = {
    BORDER["TRANS_BLACK"]: (0, 0, 0, 0),
    BORDER["OPAQUE_BLACK"]: (0, 0, 0, 1),
    BORDER["OPAQUE_WHITE"]: (1,) * 4,
}
MODES = ["WRAP", "MIRROR", "CLAMP_LAST_TEXEL", "MIRROR_ONCE_LAST_TEXEL", "CLAMP_BORDER"]


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("filt", [POINT, LINEAR])
@pytest.mark.parametrize("addr", MODES)
def test_sample_lz_address_modes_and_filters(addr, filt, mode):
    rng = np.random.default_rng(MODES.index(addr) * 2 + filt)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    vals = unorm8(tex)
    bt = BORDER["OPAQUE_BLACK"] if addr == "CLAMP_BORDER" else 0
    s = coords(rng, -1.3, 2.3, N, W, 0.02)
    t = coords(rng, -1.3, 2.3, N, H, 0.02)
    samp = sampler(CLAMP[addr], CLAMP[addr], filt, filt, bt)
    res, got = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, sampler=samp, mode=mode)
    assert res.landed, res.refusal
    modes = (CLAMP[addr],) * 2
    for k in range(N):
        f = ref_point if filt == POINT else ref_linear
        want = f(vals, s[k], t[k], modes, BORDERS[bt])
        assert want is not None
        np.testing.assert_array_equal(got[k].view(np.float32), want, err_msg=f"lane {k}")


@pytest.mark.tiers  # NumPy blocks and the native tier (C++), alike
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_gather4_offsets_and_dmask(mode):
    rng = np.random.default_rng(7)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    vals = unorm8(tex)
    s = coords(rng, -0.5, 1.5, N, W, 0.02)
    t = coords(rng, -0.5, 1.5, N, H, 0.02)
    ox, oy = rng.integers(-8, 8, N), rng.integers(-8, 8, N)
    offs = ((ox & 63) | (oy & 63) << 8).astype(np.uint32)
    samp = sampler(CLAMP["WRAP"], CLAMP["MIRROR"], POINT, POINT)
    for comp in (0, 2):
        res, got = run(
            f"image_gather4_lz_o dmask:{1 << comp:#x}", 3, 4, [offs, s, t], tex, sampler=samp, mode=mode
        )
        assert res.landed, res.refusal
        for k in range(N):
            want = ref_gather(vals, s[k], t[k], (CLAMP["WRAP"], CLAMP["MIRROR"]), None, comp, (ox[k], oy[k]))
            np.testing.assert_array_equal(got[k].view(np.float32), want, err_msg=f"lane {k}")


def test_sample_o_unnormalized_and_dmask():
    rng = np.random.default_rng(3)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    vals = unorm8(tex)
    u = coords(rng, -2, W + 2, N, 1, 0.02)
    v = coords(rng, -2, H + 2, N, 1, 0.02)
    samp = sampler(CLAMP["CLAMP_BORDER"], CLAMP["CLAMP_LAST_TEXEL"], LINEAR, LINEAR, BORDER["OPAQUE_WHITE"])
    samp[0] |= 1 << ssharp.field_bits("FORCE_UNNORMALIZED")[1]
    res, got = run("image_sample_lz dmask:0x5", 2, 2, [u, v], tex, sampler=samp)
    assert res.landed, res.refusal
    modes = (CLAMP["CLAMP_BORDER"], CLAMP["CLAMP_LAST_TEXEL"])
    for k in range(N):
        want = ref_linear(vals, u[k], v[k], modes, (1, 1, 1, 1), unnorm=True)
        np.testing.assert_array_equal(got[k, :2].view(np.float32), want[[0, 2]], err_msg=f"lane {k}")
    # offsets with unnormalized coordinates are not carried out
    res, _ = run("image_sample_lz_o dmask:0xf", 3, 4, [np.zeros(N, np.uint32), u, v], tex, sampler=samp)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler"


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_explicit_lod_picks_min_or_mag(mode):
    """Min linear, mag point: image_sample_l's λ > 0 filters linearly, λ <= 0 point-samples;
    a λ just above 0 refuses."""
    rng = np.random.default_rng(11)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    vals = unorm8(tex)
    s = coords(rng, 0, 1, N, W, 0.02)
    t = coords(rng, 0, 1, N, H, 0.02)
    lod = np.where(np.arange(N) % 2, 0.75, -0.5).astype(np.float32)
    lod[4] = 0.0
    samp = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, LINEAR)
    res, got = run("image_sample_l dmask:0xf", 3, 4, [s, t, lod], tex, sampler=samp, mode=mode)
    assert res.landed, res.refusal
    modes = (CLAMP["WRAP"],) * 2
    for k in range(N):
        f = ref_linear if lod[k] > 0 else ref_point
        np.testing.assert_array_equal(
            got[k].view(np.float32), f(vals, s[k], t[k], modes, None), err_msg=str(k)
        )
    lod[9] = 2.0**-10
    res, _ = run("image_sample_l dmask:0xf", 3, 4, [s, t, lod], tex, sampler=samp, mode=mode)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision"
    # an LOD bias in the S# where the filters differ is not carried out
    samp2 = list(samp)
    samp2[2] |= 5
    lod[9] = 1.0
    res, _ = run("image_sample_l dmask:0xf", 3, 4, [s, t, lod], tex, sampler=samp2, mode=mode)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler"


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_implicit_lod_from_the_quad(mode):
    """image_sample / image_sample_b in a compute wave: each 2x2 quad of lanes (4k..4k+3)
    gives coarse derivatives; quads spread over several texels per lane minify (linear), quads
    within a texel magnify (point); _b's bias moves the choice."""
    rng = np.random.default_rng(5)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    vals = unorm8(tex)
    s = np.zeros(N, np.float32)
    t = np.zeros(N, np.float32)
    big = np.zeros(N // 4, bool)
    for q in range(N // 4):
        big[q] = q % 2 == 1
        step = 3.0 if big[q] else 0.125  # texels between neighbouring lanes
        bu, bv = rng.uniform(0.2, 0.8, 2)
        for j, (dx, dy) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
            s[4 * q + j] = np.float32((bu * W + dx * step) / W)
            t[4 * q + j] = np.float32((bv * H + dy * step) / H)
    # keep the point-sampled quads clear of texel boundaries
    for k in range(N):
        for arr, n in ((s, W), (t, H)):
            u = float(np.float32(arr[k] * np.float32(n)))
            if not big[k // 4] and (u - math.floor(u) > 0.98 or u - math.floor(u) < 0.02):
                arr[k] = np.float32((math.floor(u) + 0.5) / n)
    samp = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, LINEAR)
    modes = (CLAMP["WRAP"],) * 2
    for form, args, bias in (
        ("image_sample dmask:0xf", [s, t], 0.0),
        ("image_sample_b dmask:0xf", [np.full(N, -4.0, np.float32), s, t], -4.0),
    ):
        res, got = run(form, len(args), 4, args, tex, sampler=samp, mode=mode)
        if bias == 0:
            # the big quads recompute their derivative from lanes whose coordinates moved
            # above: reference λ from the same lanes
            assert res.landed, res.refusal
        else:
            assert res.landed, res.refusal
        for k in range(N):
            q = 4 * (k // 4)
            du = [
                abs(float(np.float32(s[q + d] * np.float32(W)) - np.float32(s[q] * np.float32(W))))
                for d in (1, 2)
            ]
            dv = [
                abs(float(np.float32(t[q + d] * np.float32(H)) - np.float32(t[q] * np.float32(H))))
                for d in (1, 2)
            ]
            rho_lo = max(max(du[0], dv[0]), max(du[1], dv[1]))
            lam = math.log2(rho_lo) + bias if rho_lo else -math.inf
            f = ref_linear if lam > 0 else ref_point
            np.testing.assert_array_equal(
                got[k].view(np.float32), f(vals, s[k], t[k], modes, None), err_msg=str(k)
            )


def test_point_sample_near_a_texel_boundary_refuses():
    tex = np.zeros((H, PITCH, 4), np.uint8)
    s = np.full(N, np.float32(0.5), np.float32)
    s[3] = np.nextafter(np.float32(0.5), np.float32(0))  # u = 4 - ulp: within 2**-7 below 4
    t = np.full(N, np.float32(0.3), np.float32)
    samp = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, POINT)
    res, _ = run("image_sample_lz dmask:0x1", 2, 1, [s, t], tex, sampler=samp)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision"
    s[3] = 0.5
    res, got = run("image_sample_lz dmask:0x1", 2, 1, [s, t], tex, sampler=samp)
    assert res.landed, res.refusal


@pytest.mark.parametrize(
    "what, patch",
    [
        ("aniso", lambda w: [w[0] | 2 << 9, *w[1:]]),
        ("min reduction", lambda w: [w[0] | 1 << 29, *w[1:]]),
        ("compare", lambda w: [w[0] | 3 << 12, *w[1:]]),
        ("half border", lambda w: [(w[0] & ~7) | 4, *w[1:]]),
        ("reserved word 3", lambda w: [*w[:3], w[3] | 1 << 20]),
        ("aniso filter", lambda w: [w[0], w[1], w[2] | 2 << 20, w[3]]),
    ],
)
def test_unsupported_samplers_refuse(what, patch):
    tex = np.zeros((H, PITCH, 4), np.uint8)
    s = np.full(N, 0.3, np.float32)
    samp = patch(sampler(CLAMP["WRAP"], CLAMP["WRAP"], LINEAR, LINEAR))
    res, got = run("image_sample_lz dmask:0x1", 2, 1, [s, s], tex, sampler=samp)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler", what


def test_register_border_without_the_table():
    """A REGISTER (custom) border colour whose stream never wrote TA_CS_BC_BASE_ADDR (this
    dispatch's): refused by name on a lane that takes a border texel; lanes whose footprint
    stays inside the image never read the colour and land (decision 0043)."""
    tex = np.zeros((H, PITCH, 4), np.uint8)
    samp = sampler(CLAMP["CLAMP_BORDER"], CLAMP["WRAP"], LINEAR, LINEAR)
    samp = [samp[0], samp[1], samp[2], samp[3] | 3 << 30 | 5]
    s = np.full(N, 0.3, np.float32)
    res, got = run("image_sample_lz dmask:0x1", 2, 1, [s, s], tex, sampler=samp)
    assert res.landed, res.refusal
    s[5] = np.float32(-0.3)  # u < 0: border texels on x
    res, got = run("image_sample_lz dmask:0x1", 2, 1, [s, s], tex, sampler=samp)
    assert res.refusal is not None and res.refusal.code == "image.custom_border_color"


def test_linear_filtering_of_an_integer_format_refuses_and_point_is_exact():
    fmt = "rgba8ui"
    tex = np.random.default_rng(2).integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    rng = np.random.default_rng(9)
    s, t = coords(rng, 0, 1, N, W, 0.02), coords(rng, 0, 1, N, H, 0.02)
    res, _ = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, fmt, sampler(0, 0, LINEAR, LINEAR))
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler"
    res, got = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, fmt, sampler(0, 0, POINT, POINT))
    assert res.landed, res.refusal
    ints = tex[:, :W].astype(np.uint32)
    for k in range(N):
        want = ref_point(ints, s[k], t[k], (0, 0), None)
        np.testing.assert_array_equal(got[k], want)
    assert IMAGE_FORMATS[fmt][1] == 4


def test_null_descriptor_reads_zero_whatever_the_sampler():
    r = Rig(program("image_sample_lz dmask:0xf", 2, 4))
    out = r.buf(np.full(N * 4, 7, np.uint32), "out")
    cb = r.buf(np.zeros((N, 4), np.uint32), "args")
    samp = [0xFFFFFFFF] * 4  # not read for a null T#
    res = r.run(
        r.config(user_sgprs=[0] * 8 + samp + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3)
    )
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, N * 4) == 0).all()


def TWO_LEVELS(t):
    return [*t[:3], t[3] | 1 << 16, t[4], t[5] | 1 << 4, *t[6:]]


@pytest.mark.parametrize(
    "what, form, nregs, samp, code",
    [
        # whether the hardware adds the S# LOD_BIAS to an explicit LOD is not established
        (
            "LOD_BIAS with _l",
            "image_sample_l dmask:0x1",
            3,
            {"LOD_BIAS": 256, "MIP_FILTER": 1},
            "image.unsupported_sampler",
        ),
        (
            "MIN_LOD > MAX_LOD",
            "image_sample_lz dmask:0x1",
            2,
            {"MIN_LOD": 512, "MIP_FILTER": 1},
            "image.unsupported_sampler",
        ),
        # λ = 0.5: the nearest level is not established
        (
            "nearest level at k + 0.5",
            "image_sample_l dmask:0x1",
            3,
            {"MIP_FILTER": 1},
            "image.sampling_precision",
        ),
    ],
)
def test_mip_chain_refusals(what, form, nregs, samp, code):
    """Decision 0025 (amended): a two-level view's LOD rules refuse by name where not established
    (the lavapipe comparison of mip chains is test_sampling_mips_lavapipe.py)."""
    tex = np.zeros((H, PITCH, 4), np.uint8)
    s = np.full(N, 0.3, np.float32)
    lod = np.full(N, 0.5, np.float32)
    kw = dict(samp)
    if "MIN_LOD" in kw:
        kw["MAX_LOD"] = 256
        smp = ssharp.encode(CLAMP_X=0, CLAMP_Y=0, TRUNC_COORD=1, **kw)
    else:
        smp = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, POINT, **kw)
    res, _ = run(form, nregs, 1, [s, s, lod][:nregs], tex, sampler=smp, tsharp_patch=TWO_LEVELS)
    assert res.refusal is not None and res.refusal.code == code, (what, res.refusal)


@pytest.mark.slow  # the native tier's first build of this program takes ~20 s
@pytest.mark.tiers  # NumPy blocks and the native tier (C++), alike: the quad's lane shuffles
def test_implicit_lod_from_the_quad_on_every_tier():
    test_implicit_lod_from_the_quad("wave")


def test_gather4_needs_no_lod():
    """A gather reads the same footprint whatever the min/mag filters: plain image_gather4 (an
    implicit LOD) with differing filters and an S# LOD bias carries out, and equals _lz."""
    rng = np.random.default_rng(21)
    tex = rng.integers(0, 256, (H, PITCH, 4), dtype=np.uint8)
    s, t = coords(rng, 0, 1, N, W, 0.02), coords(rng, 0, 1, N, H, 0.02)
    samp = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, LINEAR)
    samp[2] |= 7  # LOD_BIAS
    res, got = run("image_gather4 dmask:0x2", 2, 4, [s, t], tex, sampler=samp)
    assert res.landed, res.refusal
    res, lz = run("image_gather4_lz dmask:0x2", 2, 4, [s, t], tex, sampler=samp)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(got, lz)
    vals = unorm8(tex)
    for k in range(N):
        want = ref_gather(vals, s[k], t[k], (CLAMP["WRAP"],) * 2, None, 1)
        np.testing.assert_array_equal(got[k].view(np.float32), want)


def test_precision_refusals_nan_coordinate_and_open_implicit_lod():
    """A NaN coordinate, and an implicit LOD that Vulkan's ρ approximations leave on either side
    of 0 (du = (1, 0.5) texels: max 1, sum 1.5), refuse by name; a quad whose derivatives give
    ρ <= 1 under every approximation does not."""
    tex = np.zeros((H, PITCH, 4), np.uint8)
    lin = sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, LINEAR)
    s = np.full(N, 0.3, np.float32)
    s[7] = np.nan
    res, _ = run("image_sample_lz dmask:0x1", 2, 1, [s, s], tex, sampler=lin)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision"
    s = np.zeros(N, np.float32)
    t = np.zeros(N, np.float32)
    for q in range(N // 4):
        for j, (dx, dy) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
            s[4 * q + j] = (2.25 + dx * 0.5) / W  # 0.5 texel a lane: ρ <= 1 whatever the rule
            t[4 * q + j] = (1.25 + dy * 0.5) / H
    res, _ = run("image_sample dmask:0x1", 2, 1, [s, t], tex, sampler=lin)
    assert res.landed, res.refusal
    s[4:8] = [(2.25 + a) / W for a in (0, 1, 0, 1)]
    t[4:8] = [(1.25 + a) / H for a in (0, 0.5, 0, 0.5)]  # d/dx = (1, 0.5) texels
    res, _ = run("image_sample dmask:0x1", 2, 1, [s, t], tex, sampler=lin)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision"


def test_implicit_lod_with_an_inactive_lane_in_the_quad_refuses():
    """Derivatives take every lane of the quad; a quad with a lane outside EXEC refuses where the
    filters differ (what hardware reads from an inactive lane is not established), and samples
    with equal filters need no LOD."""
    src = program("image_sample dmask:0x1", 2, 1).replace(
        "  v_mov_b32 v10, 0\n", "  v_mov_b32 v10, 0\n  v_cmpx_ne_u32 v0, 5\n", 1
    )
    tex = np.zeros((H, PITCH, 4), np.uint8)
    s = np.full(N, 0.3, np.float32)
    for samp, code in (
        (sampler(CLAMP["WRAP"], CLAMP["WRAP"], POINT, LINEAR), "image.sampling_precision"),
        (sampler(CLAMP["WRAP"], CLAMP["WRAP"], LINEAR, LINEAR), None),
    ):
        r = Rig(src)
        img = r.buf(tex, "img")
        t = image_descriptor(Image(_Buf(img), W, H, "rgba8"), False)
        a = np.zeros((N, 4), np.uint32)
        a[:, 0] = a[:, 1] = s.view(np.uint32)
        cb = r.buf(a, "args")
        out = r.buf(np.zeros(N * 4, np.uint32), "out")
        res = r.run(
            r.config(user_sgprs=t + samp + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3)
        )
        if code is None:
            assert res.landed, res.refusal
        else:
            assert res.refusal is not None and res.refusal.code == code, res.refusal
