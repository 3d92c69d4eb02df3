"""MIMG sampling on GFX10/10.3: ``image_sample`` (_l, _lz, _b, _o and their _o forms) and
``image_gather4`` (_l, _b, _lz, _o and their _o forms) of 1-D and 2-D images with one mip
level, through a T# (frontend/image.py: ``describe``, ``texel_address``; every T# field
image_load refuses refuses here too) and an S# (memory/ssharp.py names its fields).  The rules,
what is exact, what is bounded and what refuses: docs/decisions/0025-sampling.md.

Per axis of size N (texels), with the coordinate s (f32): u = s * N rounded to f32, or u = s
when the coordinates are unnormalized (S# FORCE_UNNORMALIZED or the instruction's UNRM).

* Point filtering: texel floor(u) + offset.  Gathers: the bilinear footprint floor(u - 0.5) +
  offset and the next texel.  Hardware selects these texels from a fixed-point coordinate (8 or
  fewer fraction bits, rounded): where x (u, or u - 0.5) lies within 2**-7 texel below an
  integer the texel is not established and the lane refuses (``image.sampling_precision``).
* Linear filtering: x = u - 0.5 in 16.8 fixed point, rounded to nearest even (the sub-texel
  precision D3D requires and AMD hardware is observed to use); texels i0 = x >> 8, i0 + 1,
  weight a = (x & 255) / 256 per axis; the result is sum(w * texel), the integer weights
  (256 - a) * (256 - b), ... exact, summed in f64 and rounded once to f32.  The hardware's
  filter arithmetic is not public: the bound is in the decision record.  Integer formats and
  non-finite float texels under linear filtering refuse.
* Address modes on the integer texel index: WRAP, MIRROR, CLAMP_LAST_TEXEL,
  MIRROR_ONCE_LAST_TEXEL, CLAMP_BORDER (border colours TRANS_BLACK, OPAQUE_BLACK,
  OPAQUE_WHITE placed in the texel's channels, then DST_SEL as for a texel; OPAQUE_BLACK with a
  BC_SWIZZLE other than XYZW refuses); the half-border and mirror-once-border modes and the
  REGISTER (custom) border colour refuse (``image.unsupported_sampler``).
* Minification or magnification: with one level the LOD only chooses XY_MIN_FILTER or
  XY_MAG_FILTER (the same filter: no LOD is needed).  Where they differ, λ comes from the
  _l operand, 0 for _lz, or (image_sample, _b) from the derivatives across each 2x2 quad of
  lanes (lanes 4k..4k+3: d/dx = lane 1 - lane 0, d/dy = lane 2 - lane 0 of the quad, coarse,
  in texel space) as log2(ρ) + bias; λ > 0 minifies.  ρ may be any of Vulkan's
  approximations (between max(|du|, |dv|) and |du| + |dv| per direction): where those, or a λ
  within 2**-8 above 0, could choose differently, or a lane of the quad is inactive, the lane
  refuses (``image.sampling_precision``).  Then S# MIN_LOD must be 0, MAX_LOD above 0 and the
  LOD biases 0, else ``image.unsupported_sampler``.
* ``image.unsupported_sampler`` also: anisotropy, FILTER_MODE min/max, a depth-compare
  function, MIP_FILTER POINT_ANISO_ADJ, MC_COORD_TRUNC, FORCE_DEGAMMA, SKIP_DEGAMMA,
  MIP_POINT_PRECLAMP, DERIV_ADJUST_EN, reserved bits of word 3, unnormalized coordinates with
  offsets or a WRAP/MIRROR mode.  Fields that change nothing for a 1-D/2-D image of one level
  are ignored: CLAMP_Z, Z_FILTER, MIP_FILTER (NONE/POINT/LINEAR), DISABLE_CUBE_WRAP, the
  anisotropy tuning fields (ANISO_THRESHOLD, ANISO_BIAS, ANISO_OVERRIDE, PERF_MIP, PERF_Z) when
  MAX_ANISO_RATIO is 0, BLEND_ZERO_PRT (partially resident textures), TRUNC_COORD (it changes
  only texels inside the refused window above), BORDER_COLOR_PTR unless the colour is REGISTER.

Null descriptors (T# TYPE 0) read 0.  A T# whose view has more than one level, a BASE_LEVEL
other than 0, or an array TYPE refuses (``image.unsupported_descriptor``).  Not translated (``program.unsupported_instruction``):
the _c (compare), _d/_cd (derivatives), _cl (LOD clamp), _g16, gather4h and gather4_c forms,
d16, a16, tfe/lwe, dmask 0, a gather whose dmask is not one channel, 3-D/cube/array/MSAA dims.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.program import Value
from ..memory import ssharp
from . import formats, image
from .common import unsupported
from .image import C, _eq, _ne
from .image import _any as _or

INSTRUCTIONS = ("image_sample", "image_gather4")  # the MIMG names translated here (program.py)
SAMPLE_FORMS = ("", "_l", "_lz", "_b", "_o", "_l_o", "_lz_o", "_b_o")
FORMS = {f"image_sample{s}" for s in SAMPLE_FORMS} | {f"image_gather4{s}" for s in SAMPLE_FORMS}
CLAMP = ssharp.enum("SQ_TEX_CLAMP")
XY = ssharp.enum("SQ_TEX_XY_FILTER")
MIP = ssharp.enum("SQ_TEX_MIP_FILTER")
BORDER = ssharp.enum("SQ_TEX_BORDER_COLOR")
BC_XYZW = ssharp.bc_swizzle()["XYZW"]
WINDOW = 2.0**-7  # texel selection is not established this close below a texel boundary
LOD_EPS = 2.0**-8  # nor the min/mag choice for 0 < λ < LOD_EPS
SLACK = 2.0**-16  # margin for log2's own rounding in the λ comparisons
MAX_U = 2.0**15  # |u| at or above this (16.8 fixed point's range) refuses
UNSUPPORTED = "image.unsupported_sampler"
PRECISION = "image.sampling_precision"


def _sf(b: Builder, s: list, name: str) -> Value:
    """S# field ``name`` of the sampler words ``s``."""
    word, lo, hi = ssharp.field_bits(name)
    return image._u(b, s[word], lo, (1 << (hi - lo + 1)) - 1)


def _and(b, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = b.bin("and", "b1", out, x)
    return out


def _f(b, x):
    return b.bitcast("f32", x)


def _i(b, v):
    return C(b, "i32", v)


def translate(ins, b: Builder):
    f = ins.fields
    name = ins.name
    if name not in FORMS:
        unsupported(f"{name}: compare, derivative, LOD-clamp and 16-bit-gradient forms")
    if f.get("d16") or f.get("a16") or f.get("r128"):
        unsupported("d16/a16/r128 sampling")
    dmask = f.get("dmask", 0) & 0xF
    # tfe/lwe add a status register whose value we do not know; dmask 0 has no documented
    # meaning here (a field audit found them ignored)
    if f.get("tfe") or f.get("lwe") or not dmask:
        unsupported("tfe/lwe or dmask 0 on sampling")
    gather = name.startswith("image_gather4")
    if gather and bin(dmask).count("1") != 1:
        unsupported("image_gather4 with a dmask of other than one channel")
    dim = f.get("dim", 0)
    if dim not in (image.DIM_1D, image.DIM_2D) or (gather and dim != image.DIM_2D):
        unsupported("sampling an image dimension other than 1D/2D (gathers: 2D)")
    parts = name.split("_")[2:]
    has_o, has_b, has_l, has_lz = "o" in parts, "b" in parts, "l" in parts, "lz" in parts
    naxes = 2 if dim == image.DIM_2D else 1
    nargs = int(has_o) + int(has_b) + naxes + int(has_l)
    regs = f.get("vaddr_nsa")
    if regs is None:
        regs = tuple(f["vaddr"] + i for i in range(nargs))
    args = [b.vget(r) for r in regs[:nargs]]
    k = 0
    offs = None
    if has_o:
        offs, k = args[0], 1
    bias = None
    if has_b:
        bias, k = args[k], k + 1
    coords = args[k : k + naxes]
    lod = args[k + naxes] if has_l else None

    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    img = image.describe(b, d, dim)
    real, fm = img.real, img.fm
    ss = f["ssamp"] * 4
    s = [b.sget(ss + j) for j in range(4)]
    live = b.bin("and", "b1", b.exec(), real)

    def refuse(code, cond, why):
        b.effect("refuse_if", "b1", b.bin("and", "b1", live, cond), why=why, code=code)

    # one level, no layers: the view sampled is level 0 of a plain 1-D/2-D T#
    want_type = image.TYPE_2D if dim == image.DIM_2D else image.TYPE_1D
    refuse(
        "image.unsupported_descriptor",
        _or(
            b,
            _ne(b, image._f(b, d, "TYPE"), want_type),
            _ne(b, image._f(b, d, "BASE_LEVEL"), 0),
            _ne(b, image._f(b, d, "LAST_LEVEL"), 0),
        ),
        "sampling a T# with more than one level in its view, a base level other than 0, or "
        "array layers (mip filtering and layer selection are not carried out)",
    )

    # ---- S# fields that are not carried out
    clamp = [_sf(b, s, "CLAMP_X"), _sf(b, s, "CLAMP_Y")][:naxes]
    mag, mn = _sf(b, s, "XY_MAG_FILTER"), _sf(b, s, "XY_MIN_FILTER")
    unnorm = _ne(b, _sf(b, s, "FORCE_UNNORMALIZED"), 0)
    if f.get("unrm"):
        unnorm = C(b, "b1", 1)
    border_type = _sf(b, s, "BORDER_COLOR_TYPE")
    modes = (
        CLAMP["WRAP"],
        CLAMP["MIRROR"],
        CLAMP["CLAMP_LAST_TEXEL"],
        CLAMP["MIRROR_ONCE_LAST_TEXEL"],
        CLAMP["CLAMP_BORDER"],
    )
    bad = [b.un("not", "b1", _or(b, *[_eq(b, c, m) for m in modes])) for c in clamp]
    bad += [
        b.cmp("gt", "u32", mag, C(b, "u32", XY["BILINEAR"])),
        b.cmp("gt", "u32", mn, C(b, "u32", XY["BILINEAR"])),
        _eq(b, _sf(b, s, "MIP_FILTER"), MIP["POINT_ANISO_ADJ"]),
    ]
    for fld in (
        "MAX_ANISO_RATIO",
        "DEPTH_COMPARE_FUNC",
        "FILTER_MODE",
        "MC_COORD_TRUNC",
        "FORCE_DEGAMMA",
        "SKIP_DEGAMMA",
        "MIP_POINT_PRECLAMP",
        "DERIV_ADJUST_EN",
    ):
        bad.append(_ne(b, _sf(b, s, fld), 0))
    bad.append(_ne(b, b.bin("and", "u32", s[3], C(b, "u32", 0x3FFFF000)), 0))  # word 3 [29:12]
    uses_border = _or(b, *[_eq(b, c, CLAMP["CLAMP_BORDER"]) for c in clamp])
    bad.append(_and(b, uses_border, _eq(b, border_type, BORDER["REGISTER"])))
    bad.append(
        _and(
            b,
            uses_border,
            _eq(b, border_type, BORDER["OPAQUE_BLACK"]),
            _ne(b, image._f(b, d, "BC_SWIZZLE"), BC_XYZW),
        )
    )
    wrapping = _or(b, *[b.cmp("lt", "u32", c, C(b, "u32", CLAMP["CLAMP_LAST_TEXEL"])) for c in clamp])
    if has_o:
        wrapping = C(b, "b1", 1)
    bad.append(_and(b, unnorm, wrapping))
    refuse(
        UNSUPPORTED,
        _or(b, *bad),
        "S# not carried out: anisotropy, min/max reduction, depth compare, a half-border or "
        "mirror-once-border address mode, a REGISTER border colour (or OPAQUE_BLACK through a "
        "BC_SWIZZLE other than XYZW), degamma/coordinate-truncation/derivative-adjust bits, "
        "reserved bits, or unnormalized coordinates with offsets or WRAP/MIRROR",
    )

    # ---- texel-space coordinates
    sizes = [img.width, img.height][:naxes]
    us = []
    for crd, n in zip(coords, sizes, strict=True):
        norm = b.bin("fmul", "f32", _f(b, crd), b.cvt("f32", n))
        us.append(b.select(unnorm, _f(b, crd), norm))
    big = _or(
        b,
        *[b.un("not", "b1", b.cmp("lt", "f32", b.un("fabs", "f32", u), C(b, "f32", MAX_U))) for u in us],
    )
    refuse(PRECISION, big, "a sampling coordinate that is not finite or lies 2**15 texels or more from 0")
    # keep every value below finite and in range on the lanes that refused (they land nothing)
    us = [b.select(big, C(b, "f32", 0.0), u) for u in us]
    off = []
    for a in range(naxes):
        if offs is None:
            off.append(_i(b, 0))
        else:  # 6-bit signed offsets at bits [5:0], [13:8]
            o = b.bitcast("i32", b.bin("shl", "u32", offs, C(b, "u32", 26 - 8 * a)))
            off.append(b.bin("sar", "i32", o, _i(b, 26)))

    # ---- which filter: min or mag (the LOD matters only where they differ)
    # a gather reads its footprint whatever the filters: with one level no LOD is needed
    differ = C(b, "b1", 0) if gather else b.cmp("ne", "u32", mag, mn)
    minified, lod_refuse, lod_why = _minified(b, has_l, has_lz, lod, bias, us, naxes)
    refuse(PRECISION, _and(b, differ, lod_refuse), lod_why)
    refuse(
        UNSUPPORTED,
        _and(
            b,
            differ,
            _or(
                b,
                _ne(b, _sf(b, s, "MIN_LOD"), 0),
                _eq(b, _sf(b, s, "MAX_LOD"), 0),
                _ne(b, _sf(b, s, "LOD_BIAS"), 0),
                _ne(b, _sf(b, s, "LOD_BIAS_SEC"), 0),
            ),
        ),
        "S# MIN_LOD, MAX_LOD 0 or an LOD bias where the min and mag filters differ (which "
        "filter applies is not carried out then)",
    )
    filt = b.select(b.bin("and", "b1", differ, minified), mn, mag)
    linear = _eq(b, filt, XY["BILINEAR"])
    if gather:
        linear = C(b, "b1", 0)
    else:
        refuse(UNSUPPORTED, _and(b, linear, fm.integer()), "linear filtering of an integer format")

    # ---- texel indices per axis
    point_i, lin_i, weights = [], [], []
    near = []
    for a in range(naxes):
        u = us[a]
        x = u if not gather else b.bin("fsub", "f32", u, C(b, "f32", 0.5))
        fl = b.un("floor", "f32", x)
        near.append(b.cmp("ge", "f32", b.bin("fsub", "f32", x, fl), C(b, "f32", 1.0 - WINDOW)))
        point_i.append(b.bin("add", "i32", b.cvt("i32", fl), off[a]))
        fx = b.cvt(
            "i32",
            b.un(
                "rndne",
                "f32",
                b.bin("fmul", "f32", b.bin("fsub", "f32", u, C(b, "f32", 0.5)), C(b, "f32", 256.0)),
            ),
        )
        lin_i.append(b.bin("add", "i32", b.bin("sar", "i32", fx, _i(b, 8)), off[a]))
        weights.append(b.bitcast("u32", b.bin("and", "i32", fx, _i(b, 255))))
    refuse(
        PRECISION,
        _and(b, b.un("not", "b1", linear), _or(b, *near)),
        "a point-sampled or gathered coordinate within 2**-7 texel below a texel boundary (the "
        "texel the hardware's fixed-point coordinate selects there is not established)",
    )

    # ---- fetch
    sel = [image._f(b, d, f"DST_SEL_{c}") for c in "XYZW"]
    one = fm.one()
    bcol = {
        BORDER["TRANS_BLACK"]: [C(b, "u32", 0)] * 4,
        BORDER["OPAQUE_BLACK"]: [C(b, "u32", 0)] * 3 + [one],
        BORDER["OPAQUE_WHITE"]: [one] * 4,
    }
    border_val = []
    for c in range(4):
        v = C(b, "u32", 0)
        for bt, cols in bcol.items():
            v = b.select(_eq(b, border_type, bt), cols[c], v)
        border_val.append(v)
    nan_any: list[Value] = []

    def fetch(ij):
        """The four channels (before DST_SEL) of the texel at integer index ij, after the
        address modes."""
        js, outside = [], []
        for a in range(naxes):
            j, out = _address(b, ij[a], sizes[a], clamp[a])
            js.append(b.bitcast("u32", j))
            outside.append(out)
        border = _or(b, *outside)
        addr, inb = image.texel_address(b, img, js)
        ok = _and(b, live, fm.known, inb, b.un("not", "b1", border))
        vals, nan = formats.decode(b, fm, formats.load_texel(b, fm, addr, ok))
        nan_any.append(b.bin("and", "b1", ok, nan))
        return [b.select(border, border_val[c], vals[c]) for c in range(4)]

    if gather:
        comp = (dmask & -dmask).bit_length() - 1
        i0 = point_i
        i1 = [b.bin("add", "i32", v, _i(b, 1)) for v in point_i]
        order = [(0, 1), (1, 1), (1, 0), (0, 0)]  # x: (i0, j1), y: (i1, j1), z: (i1, j0), w: (i0, j0)
        res = []
        for ox, oy in order:
            t = fetch([(i1 if ox else i0)[0], (i1 if oy else i0)[1]])
            sw, _ = formats.swizzle(b, fm, t, sel)
            res.append(sw[comp])
        const_sel = b.cmp("lt", "u32", sel[comp], C(b, "u32", formats.SEL_X))
        refuse(
            "image.unsupported_format",
            const_sel,
            "image_gather4 of a component whose DST_SEL is a constant (what hardware gathers then is not established)",
        )
    else:
        corners = [(0, 0), (1, 0), (0, 1), (1, 1)] if naxes == 2 else [(0, 0), (1, 0)]
        texels = []
        for ox, oy in corners:
            ij = [b.bin("add", "i32", lin_i[0], _i(b, ox))]
            if naxes == 2:
                ij.append(b.bin("add", "i32", lin_i[1], _i(b, oy)))
            texels.append(fetch(ij))
        # the point texel floor(u) is always one of the linear footprint's: floor(u) - i0 is 0
        # or 1 per axis (i0 = floor of u - 0.5 rounded to 1/256, which never passes floor(u))
        up = [b.cmp("eq", "i32", b.bin("sub", "i32", point_i[a], lin_i[a]), _i(b, 1)) for a in range(naxes)]
        pt = []
        for c in range(4):
            v = texels[0][c]
            for (ox, oy), tx in zip(corners[1:], texels[1:], strict=True):
                hit = up[0] if ox else b.un("not", "b1", up[0])
                if naxes == 2:
                    hit = b.bin("and", "b1", hit, up[1] if oy else b.un("not", "b1", up[1]))
                v = b.select(hit, tx[c], v)
            pt.append(v)
        wa = weights[0]
        wts = []
        for ox, oy in corners:
            w = wa if ox else b.bin("sub", "u32", C(b, "u32", 256), wa)
            if naxes == 2:
                wb = weights[1] if oy else b.bin("sub", "u32", C(b, "u32", 256), weights[1])
                w = b.bin("mul", "u32", w, wb)
            wts.append(b.cvt("f64", w))
        scale = C(b, "f64", 2.0 ** (-16 if naxes == 2 else -8))
        blended, nonfinite = [], []
        for c in range(4):
            acc: Value | None = None
            for tx, w in zip(texels, wts, strict=True):
                v = _f(b, tx[c])
                nonfinite.append(
                    b.un("not", "b1", b.cmp("lt", "f32", b.un("fabs", "f32", v), C(b, "f32", float("inf"))))
                )
                p = b.bin("fmul", "f64", b.cvt("f64", v), w)
                acc = p if acc is None else b.bin("fadd", "f64", acc, p)
            assert acc is not None
            blended.append(b.bitcast("u32", b.cvt("f32", b.bin("fmul", "f64", acc, scale))))
        refuse(
            PRECISION,
            _and(b, linear, fm.is_kind(formats.FLOAT), _or(b, *nonfinite)),
            "linear filtering over an infinite or NaN texel (the hardware's result is not established)",
        )
        chans = [b.select(linear, blended[c], pt[c]) for c in range(4)]
        out, bad_sel = formats.swizzle(b, fm, chans, sel)
        refuse("image.unsupported_format", bad_sel, "T# DST_SEL is a reserved value")
        res = [out[c] for c in range(4) if dmask >> c & 1]
    refuse(
        "image.unsupported_format",
        _or(b, *nan_any),
        "a NaN read from a 16/11/10-bit float channel (the bits it widens to are not established)",
    )
    for k, v in enumerate(res):
        b.vset(f["vdata"] + k, b.select(live, v, C(b, "u32", 0)))


def _address(b: Builder, i: Value, n: Value, mode: Value) -> tuple[Value, Value]:
    """(texel index in [0, n), outside: b1) of integer index ``i`` (i32) on an axis of ``n``
    texels under the S# CLAMP mode ``mode`` (modes other than these five refuse before)."""
    ni = b.bitcast("i32", n)
    zero, last = _i(b, 0), b.bin("sub", "i32", ni, _i(b, 1))
    wrap = _mod(b, i, ni)
    m2 = _mod(b, i, b.bin("add", "i32", ni, ni))
    mirror = b.select(
        b.cmp("lt", "i32", m2, ni),
        m2,
        b.bin("sub", "i32", b.bin("sub", "i32", b.bin("add", "i32", ni, ni), _i(b, 1)), m2),
    )
    clamped = b.bin("max", "i32", b.bin("min", "i32", i, last), zero)
    folded = b.select(b.cmp("lt", "i32", i, zero), b.bin("sub", "i32", _i(b, -1), i), i)
    once = b.bin("max", "i32", b.bin("min", "i32", folded, last), zero)
    out = b.bin("or", "b1", b.cmp("lt", "i32", i, zero), b.cmp("ge", "i32", i, ni))
    j = clamped
    for m, v in (
        (CLAMP["WRAP"], wrap),
        (CLAMP["MIRROR"], mirror),
        (CLAMP["MIRROR_ONCE_LAST_TEXEL"], once),
        (CLAMP["CLAMP_BORDER"], b.select(out, zero, i)),
    ):
        j = b.select(_eq(b, mode, m), v, j)
    return j, b.bin("and", "b1", _eq(b, mode, CLAMP["CLAMP_BORDER"]), out)


def _mod(b: Builder, i: Value, n: Value) -> Value:
    """i mod n in [0, n) for i32 i (|i| < 2**17) and 0 < n <= 2**15: an f32 quotient (off by at
    most one) corrected once each way."""
    q = b.cvt("i32", b.un("floor", "f32", b.bin("fdiv", "f32", b.cvt("f32", i), b.cvt("f32", n))))
    r = b.bin("sub", "i32", i, b.bin("mul", "i32", q, n))
    r = b.select(b.cmp("lt", "i32", r, _i(b, 0)), b.bin("add", "i32", r, n), r)
    return b.select(b.cmp("ge", "i32", r, n), b.bin("sub", "i32", r, n), r)


def _minified(b: Builder, has_l, has_lz, lod, bias, us, naxes):
    """(minified: b1, refuse: b1, why) for the LOD the instruction implies."""
    if has_lz:
        return C(b, "b1", 0), C(b, "b1", 0), ""
    if has_l:
        lam = _f(b, lod)
        mini = b.cmp("ge", "f32", lam, C(b, "f32", LOD_EPS))
        # mag for sure: λ <= 0; between 0 and LOD_EPS (and NaN) not established
        sure = b.bin("or", "b1", mini, b.cmp("le", "f32", lam, C(b, "f32", 0.0)))
        return (
            mini,
            b.un("not", "b1", sure),
            "an explicit LOD within 2**-8 above 0 (or NaN) choosing between the min and mag filters",
        )
    # implicit: coarse derivatives across the quad of lanes
    lane = b.lane_id()
    q0 = b.bin("and", "u32", lane, C(b, "u32", ~3 & 0xFFFFFFFF))
    q1 = b.bin("add", "u32", q0, C(b, "u32", 1))
    q2 = b.bin("add", "u32", q0, C(b, "u32", 2))
    act = b.select(b.exec(), C(b, "u32", 1), C(b, "u32", 0))
    allq: Value = C(b, "b1", 1)
    for j in range(4):
        e = b.cmp(
            "ne",
            "u32",
            b.emit("shuffle", "u32", act, b.bin("add", "u32", q0, C(b, "u32", j))),
            C(b, "u32", 0),
        )
        allq = b.bin("and", "b1", allq, e)
    dx, dy = [], []
    for u in us:
        ub = b.bitcast("u32", u)
        u0 = _f(b, b.emit("shuffle", "u32", ub, q0))
        dx.append(b.un("fabs", "f32", b.bin("fsub", "f32", _f(b, b.emit("shuffle", "u32", ub, q1)), u0)))
        dy.append(b.un("fabs", "f32", b.bin("fsub", "f32", _f(b, b.emit("shuffle", "u32", ub, q2)), u0)))
    if naxes == 2:
        lo = b.bin("fmax", "f32", b.bin("fmax", "f32", dx[0], dx[1]), b.bin("fmax", "f32", dy[0], dy[1]))
        hi = b.bin("fmax", "f32", b.bin("fadd", "f32", dx[0], dx[1]), b.bin("fadd", "f32", dy[0], dy[1]))
    else:
        lo = hi = b.bin("fmax", "f32", dx[0], dy[0])
    bf = _f(b, bias) if bias is not None else C(b, "f32", 0.0)
    lam_lo = b.bin("fadd", "f32", b.un("log2", "f32", lo), bf)
    lam_hi = b.bin("fadd", "f32", b.un("log2", "f32", hi), bf)
    mini = b.cmp("ge", "f32", lam_lo, C(b, "f32", LOD_EPS + SLACK))
    mag = b.cmp("le", "f32", lam_hi, C(b, "f32", -SLACK))
    if bias is None:  # exact: ρ <= 1 is λ <= 0
        mag = b.bin("or", "b1", mag, b.cmp("le", "f32", hi, C(b, "f32", 1.0)))
    sure = b.bin("and", "b1", allq, b.bin("or", "b1", mini, mag))
    return (
        mini,
        b.un("not", "b1", sure),
        "an implicit LOD (derivatives across the 2x2 quad of lanes) whose min/mag choice the "
        "hardware's approximation of ρ or its LOD precision could change, or a quad with an "
        "inactive lane",
    )
