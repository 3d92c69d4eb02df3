"""MIMG sampling on GFX10/10.3 and GFX11 (decision 0044: GFX11's T# through image.py, GFX11's
S# fields through ``_sf``, the reserved bits of each generation refused):
``image_sample[_c][_d|_cd][_l|_b|_lz][_cl][_o]`` and ``image_gather4[_c][_l|_b|_lz][_cl][_o]`` of 1-D, 2-D, 3-D images and 1-D/2-D arrays (gathers
2-D and 2-D arrays), cube maps (below), mip chains included, through a T# (frontend/image.py: ``describe``,
``texel_address``; every T# field image_load refuses refuses here too) and an S#
(memory/ssharp.py names its fields).  The rules, what is exact, what is bounded and what
refuses: docs/decisions/0025-sampling.md and its amendment (LOD selection, mip filters, layers,
3-D, depth compare); the notes below describe one level.  The _lz forms (without _cl) translate
one level: their mip blend, uniform, refuses (decision 0030).

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
  OPAQUE_WHITE placed in the texel's channels through the T#'s BC_SWIZZLE -- channel k gets the
  component its name's k-th letter names, decision 0041 -- then DST_SEL as for a texel); the
  half-border and mirror-once-border modes and a BC_SWIZZLE the register database does not
  name refuse (``image.unsupported_sampler``).  The REGISTER (custom) border colour (decision
  0043): the 16 bytes at TA_CS_BC_BASE_ADDR + 16 x BORDER_COLOR_PTR, (R, G, B, A) placed the
  same way; refused by name (``image.custom_border_color``) without the register, or where a
  component is not one of the format's values.
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

Cube maps (dim CUBE, decision 0034): image_sample with an explicit LOD (_l, _lz), with given
derivatives (_d, _cd, decision 0041: face-space derivatives, ACO transforms them, of the face
coordinates below; the LOD then as for a 2-D image of the face's size; the implicit and _b
forms only where the LOD changes nothing), compare included, and image_gather4 (decision
0036: its footprint floor(u - 0.5), + 1 inside the face), through RADV's sampled cube
T# (TYPE CUBE, BASE_ARRAY..DEPTH the view's layers), sampled as the 2-D array of its faces: the
coordinates are ACO's face coordinates s, t in [1, 2] (v_cubesc / |v_cubema| + 1.5) and the face
id + 8 x the cube's layer; u = (s - 1) x N (exact subtraction), the layer 6 x cube + face, then
the rules above.  Point sampling and linear filtering whose texels all lie inside the face;
``image.cube_edge`` where they do not (the seamless rule at edges and corners is not
established), for a coordinate outside [1, 2], a face id not an integer 0..5 (+ 8 x layer), a
cube past the view's, a T# of another TYPE, or an LOD from the quad's derivatives that matters.

d16 and a16 (decision 0034, 2026-12-05; ACO emits both on GFX10/10.3 for f16 results and f16
coordinates/LODs): d16 results are the f32 results above rounded to f16 to nearest even (the
rounding RADV assumes when it folds f2f16 into d16 sampling), component k in half k % 2 of VGPR
k // 2 (gathers: four components, two VGPRs); refused by name (``image.unsupported_sampler``):
integer formats, a result that is NaN or nonzero below f16's smallest normal.  a16: the
coordinates, layer, LOD and LOD clamp are f16, two a VGPR (low half first) after the 32-bit
offset / z-compare dwords, each widened to f32 exactly, then the rules above.  Decision 0036:
the a16 bias (_b) is an f16 in the low half of its own dword; a16 derivatives stay 32-bit;
_g16 forms take f16 derivatives, each derivative vector packed two a VGPR (padded to a dword).

image_get_lod (decisions 0036, 0041, ``_get_lod``) of 1-D, 2-D and 3-D images and 1-D/2-D
arrays (not cubes): the LOD from the quad's implicit
derivatives, clamped (x) and unclamped (y), log2 of ρ = the largest texel-space derivative
where Vulkan's approximations of ρ agree to 2**-8; other quads, all-zero derivatives, |λ| >= 16
and a clamped LOD past the view's last level refuse.

Null descriptors (T# TYPE 0) read 0.  Not translated (``program.unsupported_instruction``):
the gather4h forms, d16 of an odd number of components other than a gather (the last VGPR's
upper half is not established), a16 of a cube, r128, lwe (tfe: decision 0041), dmask 0, a gather whose dmask is not one channel, a compare whose dmask
is not 0x1, MSAA dims, cube samples and gathers with 16-bit derivatives (_g16) or offsets.
"""

from __future__ import annotations

import itertools
import re

from ..ir.builder import Builder
from ..ir.program import Value
from ..memory import ssharp, tsharp
from . import formats, image
from .common import C, sext48, unsupported
from .image import _any as _or
from .image import _eq, _ne

# the MIMG names translated here (program.py)
INSTRUCTIONS = ("image_sample", "image_gather4", "image_get_lod")
# image_sample[_c][_d|_cd][_l|_b|_lz][_cl][_o], image_gather4[_c][_l|_b|_lz][_cl][_o]
FORM = re.compile(r"image_(sample|gather4)(_c)?(_d|_cd)?(_l|_b|_lz)?(_cl)?(_o)?(_g16)?")
SAMPLE_FORMS = ("", "_l", "_lz", "_b", "_o", "_l_o", "_lz_o", "_b_o")  # (decision 0025's first set)
CLAMP = ssharp.enum("SQ_TEX_CLAMP")
XY = ssharp.enum("SQ_TEX_XY_FILTER")
MIP = ssharp.enum("SQ_TEX_MIP_FILTER")
BORDER = ssharp.enum("SQ_TEX_BORDER_COLOR")
COMPARE = ssharp.enum("SQ_TEX_DEPTH_COMPARE")
# BC_SWIZZLE value -> the texel channel (before DST_SEL) that receives the border colour's alpha:
# the name's k-th letter is the colour component channel k receives (decision 0041)
BC_ALPHA_AT = {v: n.index("W") for n, v in ssharp.bc_swizzle().items()}
WINDOW = 2.0**-7  # texel selection is not established this close below a texel boundary
LOD_EPS = 2.0**-8  # nor the min/mag choice for 0 < λ < LOD_EPS, nor a level within it of k + 0.5
SLACK = 2.0**-16  # margin for log2's own rounding in the λ comparisons
MAX_U = 2.0**15  # |u| at or above this (16.8 fixed point's range) refuses
MAX_LAYER = 8192.0  # layers are clamped to the view's; this only keeps the conversion in range
UNSUPPORTED = "image.unsupported_sampler"
PRECISION = "image.sampling_precision"
CUBE = "image.cube_edge"
CUSTOM_BORDER = "image.custom_border_color"
MASK48 = (1 << 48) - 1
DIM_CUBE = 3  # MIMG dim SQ_RSRC_IMG_CUBE (cube and cube array)
# spatial axes of each dim sampled (arrays add a layer coordinate)
SPATIAL = {image.DIM_1D: 1, image.DIM_2D: 2, image.DIM_3D: 3, image.DIM_1D_ARRAY: 1, image.DIM_2D_ARRAY: 2}
ARRAYS = (image.DIM_1D_ARRAY, image.DIM_2D_ARRAY)


def parse(name: str) -> dict | None:
    """The parts of a sampling instruction's name, or None for one not translated here (_g16,
    gather4h, the _d forms of gathers)."""
    m = FORM.fullmatch(name)
    if not m or (m.group(1) == "gather4" and m.group(3)) or (m.group(7) and not m.group(3)):
        return None
    return {
        "gather": m.group(1) == "gather4",
        "c": bool(m.group(2)),
        "d": bool(m.group(3)),
        "lod": (m.group(4) or "")[1:],  # "", "l", "b", "lz"
        "cl": bool(m.group(5)),
        "o": bool(m.group(6)),
        "g16": bool(m.group(7)),  # 16-bit derivatives (decision 0036)
    }


def _sf(b: Builder, s: list, name: str) -> Value:
    """S# field ``name`` of the sampler words ``s``: GFX11's place on a GFX11 target (decision
    0044), where a field GFX11 does not have (MIP_POINT_PRECLAMP, DERIV_ADJUST_EN) reads 0: its
    bits are reserved there, refused by ``_reserved``."""
    gfx11 = image.gfx11(b)
    try:
        word, lo, hi = ssharp.field_bits(name, gfx11)
    except KeyError:
        if not gfx11:
            raise
        return C(b, "u32", 0)
    return image._u(b, s[word], lo, (1 << (hi - lo + 1)) - 1)


def _reserved(b: Builder, s: list, d: list) -> Value:
    """True where the S# sets a bit its generation names no field for (GFX10/10.3: word 3
    [29:12]; GFX11: word 2 bits 28 and 31, word 3 [17:0]) or the T# sets CORNER_SAMPLES (texel
    centres on integer coordinates: not carried out)."""
    bad = [
        _ne(b, b.bin("and", "u32", s[w], C(b, "u32", m)), 0)
        for w, m in ssharp.reserved(image.gfx11(b)).items()
        if m
    ]
    return _or(b, *bad, _ne(b, image._f(b, d, "CORNER_SAMPLES"), 0))


def _custom_border(b: Builder, s: list, live: Value, is_reg: Value, bc_sw: Value, fm, sel: list):
    """The REGISTER border colour (decision 0043): the 16-byte entry BORDER_COLOR_PTR of the
    table at TA_CS_BC_BASE_ADDR (Builder.border_color_base; None: never written -> None), its
    dwords (R, G, B, A) the format's kind of value (f32; UINT/SINT: the integers) placed in the
    texel's channels through BC_SWIZZLE as decision 0041 places the predefined colours; and a
    b1 true where the colour is not established for the format: a channel's value that is not
    one of the format's (encode then decode does not give it back bit for bit), a NaN, an
    infinity or an f32 denormal, a USCALED/SSCALED/5_9_9_9 format, or a DST_SEL reading a
    channel the format lacks."""
    base = b.border_color_base
    if base is None:
        return None
    ptr = _sf(b, s, "BORDER_COLOR_PTR")
    off = b.bin("shl", "u64", b.cvt("u64", ptr), C(b, "u64", 4))
    addr = sext48(b, b.bin("add", "u64", C(b, "u64", int(base) & MASK48), off))
    ld = b.emit(
        "load",
        "u32",
        addr,
        b.bin("and", "b1", live, is_reg),
        uniform=False,
        space="global",
        nbytes=16,
        words=4,
    )
    rgba = [b.emit("word", "u32", ld, k=k) for k in range(4)]
    chans = []
    for c in range(4):
        v = rgba[0]
        for name, val in ssharp.bc_swizzle().items():
            v = b.select(_eq(b, bc_sw, val), rgba["XYZW".index(name[c])], v)
        chans.append(v)
    words, lost, no_write = formats.encode(b, fm, chans)
    back, nan_small = formats.decode(b, fm, words)
    bad = [lost, no_write, nan_small]
    for c in range(4):
        has = _ne(b, fm.width[c], 0)
        bad.append(_and(b, has, b.cmp("ne", "u32", back[c], chans[c])))
        e = b.bin("and", "u32", b.bin("shr", "u32", chans[c], C(b, "u32", 23)), C(b, "u32", 0xFF))
        m = b.bin("and", "u32", chans[c], C(b, "u32", 0x7FFFFF))
        odd = _or(b, _eq(b, e, 0xFF), _and(b, _eq(b, e, 0), _ne(b, m, 0)))  # NaN/inf, denormal
        bad.append(_and(b, has, _not(b, fm.integer()), odd))
        missing = _eq(b, fm.width[c], 0)
        bad.append(_and(b, missing, _or(b, *[_eq(b, sel[k], formats.SEL_X + c) for k in range(4)])))
    return chans, _or(b, *bad)


def _and(b, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = b.bin("and", "b1", out, x)
    return out


def _not(b, x):
    return b.un("not", "b1", x)


def _f(b, x):
    return b.bitcast("f32", x)


def _i(b, v):
    return C(b, "i32", v)


def _fc(b, v):
    return C(b, "f32", v)


def _isnan(b, x):
    return b.cmp("u", "f32", x, x)


def _clampf(b, x, lo, hi):
    return b.bin("fmin", "f32", b.bin("fmax", "f32", x, lo), hi)


def translate(ins, b: Builder):
    f = ins.fields
    name = ins.name
    if name == "image_get_lod":
        return _get_lod(ins, b)
    form = parse(name)
    if form is None:
        unsupported(f"{name}: gather4h forms")
    assert form is not None
    if f.get("r128"):
        unsupported("r128 sampling")
    d16, a16 = bool(f.get("d16")), bool(f.get("a16"))
    dmask = f.get("dmask", 0) & 0xF
    # lwe: the LOD warning's condition is not established (tfe: image.tfe_status, decision
    # 0041); dmask 0 has no documented meaning here (a field audit found them ignored)
    if f.get("lwe") or not dmask:
        unsupported("lwe or dmask 0 on sampling")
    gather, compare = form["gather"], form["c"]
    if gather and bin(dmask).count("1") != 1:
        unsupported("image_gather4 with a dmask of other than one channel")
    if compare and dmask != 1:
        unsupported("a depth-compare sample or gather with a dmask other than 0x1")
    dim = f.get("dim", 0)
    cube = dim == DIM_CUBE
    if cube and (form["o"] or form["g16"]):
        # offsets: Vulkan has none for cubes (ACO never emits them); 16-bit derivatives of a
        # cube: not checked against an oracle.  _d/_cd: decision 0041 (face-space derivatives)
        unsupported("cube samples and gathers with offsets (_o) or 16-bit derivatives (_g16)")
    if d16 and not gather and bin(dmask).count("1") % 2:
        # the upper half of the last VGPR: what the hardware leaves there is not established
        unsupported("d16 sampling of an odd number of components")
    if a16 and cube:
        # ACO never emits a16 cube sampling (it asserts so)
        unsupported("a16 sampling of a cube")
    if not cube and (dim not in SPATIAL or (gather and dim not in (image.DIM_2D, image.DIM_2D_ARRAY))):
        unsupported("sampling an MSAA dim (gathers: 2D and 2D arrays only)")
    # a cube is sampled as the 2-D array of its faces (decision 0034): face coordinates s, t in
    # [1, 2] (ACO: sc / |ma| + 1.5) and the face id (+ 8 x the cube's layer)
    sdim = image.DIM_2D_ARRAY if cube else dim
    nsp = SPATIAL[sdim]
    layered = sdim in ARRAYS
    has_o, has_cl, has_d = form["o"], form["cl"], form["d"]
    lodk = form["lod"]
    # operands in the ISA's order: offset, bias, z-compare, derivatives (d/dx of each spatial
    # axis, then d/dy), coordinates (and the layer), LOD or LOD clamp.  a16 (decision 0034,
    # 0036): the coordinates, the layer, the LOD and the LOD clamp are f16, packed two a VGPR
    # (low half first; ACO's visit_tex: emit_pack_v1 of coord, lod, clamp), and the bias is
    # an f16 in the low half of its own dword ("we pack it into its own dword anyway"); the
    # offset and z-compare stay 32-bit, and so do the derivatives on GFX10 (ACO: "a16 == g16
    # || gfx_level >= GFX10"; llvm-mc asks 4 + 1 dwords for a 2-D _d a16).  _g16: each
    # derivative vector is f16s packed two a VGPR, low half first (d/dx's, then d/dy's, each
    # padded to a dword: ACO's emit_pack_v1 per vector, llvm-mc asks 2 + 2 dwords for a 2-D
    # _d_g16 and 2 + 1 for 1-D).  Every f16 widens to f32 exactly.
    cursor = 0
    regs = f.get("vaddr_nsa")

    def dword():
        # GFX11 NSA: the last of the (at most 5) address registers holds the rest, in order
        nonlocal cursor
        r = (
            f["vaddr"] + cursor
            if regs is None
            else regs[min(cursor, len(regs) - 1)] + max(0, cursor - len(regs) + 1)
        )
        cursor += 1
        return b.vget(r)

    def half(w, hi):
        h = b.bin("shr", "u32", w, C(b, "u32", 16)) if hi else w
        return b.bitcast("u32", formats._f16_to_f32(b, h))

    def packed(n):
        out, w = [], None
        for i in range(n):
            if i % 2 == 0:
                w = dword()
            out.append(half(w, i % 2))
        return out

    offs = dword() if has_o else None
    bias = None
    if lodk == "b":
        bias = half(dword(), 0) if a16 else dword()
    zref = dword() if compare else None
    derivs = None
    if has_d:
        if form["g16"]:
            derivs = [packed(nsp), packed(nsp)]
        else:
            derivs = [[dword() for _ in range(nsp)] for _ in range(2)]
    nrest = nsp + int(layered) + int(lodk == "l") + int(has_cl)
    rest = packed(nrest) if a16 else [dword() for _ in range(nrest)]
    coords = rest[:nsp]
    rest = rest[nsp:]
    layer_arg = rest.pop(0) if layered else None
    lod = rest.pop(0) if lodk == "l" else None
    lod_clamp = rest.pop(0) if has_cl else None

    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    cube_bad: list[Value] = []
    if cube:  # RADV's sampled cube T#: TYPE CUBE, BASE_ARRAY/DEPTH its first and last layer
        typ = image._f(b, d, "TYPE")
        is_cube = _eq(b, typ, tsharp.TYPE_CUBE)
        cube_bad.append(_and(b, b.cmp("ge", "u32", typ, C(b, "u32", image.TYPE_1D)), _not(b, is_cube)))
        as_array = b.bin(
            "or",
            "u32",
            b.bin("and", "u32", d[3], C(b, "u32", 0x0FFFFFFF)),
            C(b, "u32", image.TYPE_2D_ARRAY << 28),
        )
        d = d[:3] + [b.select(is_cube, as_array, d[3])] + d[4:]
        for k in range(2):
            v = _f(b, coords[k])
            inside = _and(b, b.cmp("ge", "f32", v, _fc(b, 1.0)), b.cmp("le", "f32", v, _fc(b, 2.0)))
            cube_bad.append(_not(b, inside))
            # the face coordinate s - 1 in [0, 1]: exact (Sterbenz) where s is in [1, 2]
            coords[k] = b.bitcast("u32", b.select(inside, b.bin("fsub", "f32", v, _fc(b, 1.0)), _fc(b, 0.0)))
    img = image.describe(b, d, sdim)
    real, fm = img.real, img.fm
    ss = f["ssamp"] * 4
    s = [b.sget(ss + j) for j in range(4)]
    live = b.bin("and", "b1", b.exec(), real)

    def refuse(code, cond, why):
        b.effect("refuse_if", "b1", b.bin("and", "b1", live, cond), why=why, code=code)

    if cube_bad:
        # (a T# of another TYPE refuses whether or not it is a real image: describe reads it
        # as a 2-D array)
        image._refuse(
            b,
            CUBE,
            cube_bad[0],
            "a cube sample through a T# whose TYPE is not CUBE (what the hardware does is not established)",
        )
        refuse(
            CUBE,
            _or(b, *cube_bad[1:]),
            "a cube sample with a face coordinate outside [1, 2] (not on one face: the hardware's "
            "rule there is not established)",
        )

    # ---- S# fields that are not carried out
    clamp = [_sf(b, s, "CLAMP_X"), _sf(b, s, "CLAMP_Y"), _sf(b, s, "CLAMP_Z")][:nsp]
    mag, mn = _sf(b, s, "XY_MAG_FILTER"), _sf(b, s, "XY_MIN_FILTER")
    mipf = _sf(b, s, "MIP_FILTER")
    unnorm = _ne(b, _sf(b, s, "FORCE_UNNORMALIZED"), 0)
    if f.get("unrm"):
        unnorm = C(b, "b1", 1)
    border_type = _sf(b, s, "BORDER_COLOR_TYPE")
    cfunc = _sf(b, s, "DEPTH_COMPARE_FUNC")
    modes = (
        CLAMP["WRAP"],
        CLAMP["MIRROR"],
        CLAMP["CLAMP_LAST_TEXEL"],
        CLAMP["MIRROR_ONCE_LAST_TEXEL"],
        CLAMP["CLAMP_BORDER"],
    )
    bad = [_not(b, _or(b, *[_eq(b, c, m) for m in modes])) for c in clamp]
    bad += [
        b.cmp("gt", "u32", mag, C(b, "u32", XY["BILINEAR"])),
        b.cmp("gt", "u32", mn, C(b, "u32", XY["BILINEAR"])),
        _eq(b, mipf, MIP["POINT_ANISO_ADJ"]),
    ]
    for fld in (
        "MAX_ANISO_RATIO",
        "FILTER_MODE",
        "MC_COORD_TRUNC",
        "FORCE_DEGAMMA",
        "SKIP_DEGAMMA",
        "MIP_POINT_PRECLAMP",
        "DERIV_ADJUST_EN",
        "LOD_BIAS_SEC",
    ):
        bad.append(_ne(b, _sf(b, s, fld), 0))
    if not compare:
        bad.append(_ne(b, cfunc, 0))
    if dim == image.DIM_3D:  # RADV leaves Z_FILTER 0: the z axis filters as x and y
        bad.append(_ne(b, _sf(b, s, "Z_FILTER"), 0))
    bad.append(_reserved(b, s, d))  # reserved S# bits, T# CORNER_SAMPLES
    uses_border = _or(b, *[_eq(b, c, CLAMP["CLAMP_BORDER"]) for c in clamp])
    is_reg = _and(b, uses_border, _eq(b, border_type, BORDER["REGISTER"]))
    bc_sw = image._f(b, d, "BC_SWIZZLE")
    # BC_SWIZZLE values 6 and 7 are not named by the register database: not established
    bad.append(_and(b, uses_border, b.cmp("gt", "u32", bc_sw, C(b, "u32", max(BC_ALPHA_AT)))))
    # unnormalized coordinates: one level, 1-D/2-D, no offsets, no WRAP/MIRROR (Vulkan's rules)
    wrapping = _or(b, *[b.cmp("lt", "u32", c, C(b, "u32", CLAMP["CLAMP_LAST_TEXEL"])) for c in clamp])
    q = b.bin("sub", "u32", img.last_level, img.base_level)  # the view's last level, from its base
    if has_o or dim not in (image.DIM_1D, image.DIM_2D):
        wrapping = C(b, "b1", 1)
    bad.append(_and(b, unnorm, _or(b, wrapping, _ne(b, q, 0))))
    refuse(
        UNSUPPORTED,
        _or(b, *bad),
        "S# not carried out: anisotropy, min/max reduction, a depth-compare function on a "
        "sample without compare, a half-border or mirror-once-border address mode, "
        "a BC_SWIZZLE the register database does not name (6, 7) with a border mode, "
        "degamma/coordinate-truncation/derivative-adjust/mip-preclamp bits, LOD_BIAS_SEC, "
        "a Z_FILTER on a 3-D image, reserved bits, T# CORNER_SAMPLES, or unnormalized "
        "coordinates with offsets, "
        "WRAP/MIRROR, layers, 3-D or more than one level",
    )

    # ---- level sizes (texels; the API's rounded-down sizes of level BASE_LEVEL + m)
    full = [img.width, img.height, b.bin("add", "u32", img.depth, C(b, "u32", 1))][:nsp]

    def sizes_at(m):
        lv = b.bin("add", "u32", img.base_level, m)
        return [b.bin("max", "u32", b.bin("shr", "u32", n, lv), C(b, "u32", 1)) for n in full]

    # ---- texel-space coordinates of the base level, for the range check and derivatives
    base_sizes = sizes_at(C(b, "u32", 0))

    def texel_space(crd, n):
        norm = b.bin("fmul", "f32", _f(b, crd), b.cvt("f32", n))
        return b.select(unnorm, _f(b, crd), norm)

    us0 = [texel_space(c, n) for c, n in zip(coords, base_sizes, strict=True)]
    big = _or(
        b,
        *[_not(b, b.cmp("lt", "f32", b.un("fabs", "f32", u), _fc(b, MAX_U))) for u in us0],
    )
    refuse(PRECISION, big, "a sampling coordinate that is not finite or lies 2**15 texels or more from 0")
    # keep every value below finite and in range on the lanes that refused (they land nothing)
    coords = [b.select(big, C(b, "u32", 0), c) for c in coords]
    us0 = [b.select(big, _fc(b, 0.0), u) for u in us0]
    off = []
    for a in range(nsp):
        if offs is None:
            off.append(_i(b, 0))
        else:  # 6-bit signed offsets at bits [5:0], [13:8], [21:16]
            o = b.bitcast("i32", b.bin("shl", "u32", offs, C(b, "u32", 26 - 8 * a)))
            off.append(b.bin("sar", "i32", o, _i(b, 26)))

    # ---- the layer: an integer (ACO rounds it in the shader), clamped to the view's layers
    layer = None
    if layer_arg is not None and cube:
        # the face id + 8 x the cube's layer (ACO: v_cubeid_f32, then fmac(layer, 8, id)): an
        # integer whose low 3 bits are a face 0..5; the face's layer in the view 6 x cube + face
        lf = _f(b, layer_arg)
        whole = _and(
            b,
            b.cmp("eq", "f32", b.un("rndne", "f32", lf), lf),
            b.cmp("ge", "f32", lf, _fc(b, 0.0)),
            b.cmp("lt", "f32", lf, _fc(b, 8 * MAX_LAYER)),
        )
        zi = b.bitcast("u32", b.cvt("i32", b.select(whole, lf, _fc(b, 0.0))))
        face = b.bin("and", "u32", zi, C(b, "u32", 7))
        fl = b.bin(
            "add", "u32", b.bin("mul", "u32", b.bin("shr", "u32", zi, C(b, "u32", 3)), C(b, "u32", 6)), face
        )
        last = b.bin("sub", "u32", img.depth, img.base_array)
        refuse(
            CUBE,
            _or(b, _not(b, whole), b.cmp("gt", "u32", face, C(b, "u32", 5)), b.cmp("gt", "u32", fl, last)),
            "a cube sample whose face id is not an integer 0..5 (+ 8 x layer), or whose cube lies "
            "past the view's last layer (how the hardware clamps it is not established)",
        )
        layer = b.bin("min", "u32", fl, last)
    elif layer_arg is not None:
        lf = _f(b, layer_arg)
        refuse(
            PRECISION,
            b.cmp("neq", "f32", b.un("rndne", "f32", lf), lf),
            "an array layer that is not an integer (or NaN): how the hardware converts it is "
            "not established (ACO rounds layers in the shader)",
        )
        is_array = _or(b, _eq(b, img.typ, image.TYPE_1D_ARRAY), _eq(b, img.typ, image.TYPE_2D_ARRAY))
        last = b.select(is_array, b.bin("sub", "u32", img.depth, img.base_array), C(b, "u32", 0))
        li = b.cvt(
            "i32", _clampf(b, b.select(_isnan(b, lf), _fc(b, 0.0), lf), _fc(b, 0.0), _fc(b, MAX_LAYER))
        )
        layer = b.bin("min", "u32", b.bitcast("u32", li), last)

    # ---- the LOD: λ' (before the clamps) as a range [lo, hi] the hardware's ρ may lie in
    lam_lo, lam_hi, mag_exact, lod_refuse, lod_why, slack = _lambda(
        b, lodk, lod, bias, derivs, us0, base_sizes, nsp, s, unnorm
    )
    differ = C(b, "b1", 0) if gather else b.cmp("ne", "u32", mag, mn)
    mip_on = _and(b, _ne(b, q, 0), _ne(b, mipf, MIP["NONE"]))
    matters = b.bin("or", "b1", differ, mip_on)
    if cube and lodk not in ("l", "lz") and derivs is None:
        refuse(
            CUBE,
            matters,
            "a cube sample whose LOD comes from derivatives (implicit LOD, _b: the cube's "
            "derivative rule is not established) where the LOD matters",
        )
    refuse(PRECISION, _and(b, matters, lod_refuse), lod_why)
    refuse(
        PRECISION,
        _and(b, matters, _or(b, _isnan(b, lam_lo), _isnan(b, lam_hi))),
        "a NaN LOD (the level or filter it selects is not established)",
    )
    min_lod = b.bin("fmul", "f32", b.cvt("f32", _sf(b, s, "MIN_LOD")), _fc(b, 1 / 256))
    max_lod = b.bin("fmul", "f32", b.cvt("f32", _sf(b, s, "MAX_LOD")), _fc(b, 1 / 256))
    if lod_clamp is not None:
        cl = _f(b, lod_clamp)
        refuse(PRECISION, _and(b, matters, _isnan(b, cl)), "a NaN LOD clamp")
        min_lod = b.bin("fmax", "f32", min_lod, b.select(_isnan(b, cl), _fc(b, 0.0), cl))
    bias_l = lodk in ("l", "lz")
    refuse(
        UNSUPPORTED,
        _and(
            b,
            matters,
            _or(
                b,
                b.cmp("gt", "f32", min_lod, max_lod),
                _and(b, C(b, "b1", int(bias_l)), _ne(b, _sf(b, s, "LOD_BIAS"), 0)),
            ),
        ),
        "S# MIN_LOD (or the LOD clamp) above MAX_LOD, or an S# LOD_BIAS with an explicit LOD "
        "(_l, _lz: whether the hardware adds it is not established)",
    )
    refuse(
        UNSUPPORTED,
        _and(
            b,
            differ,
            _or(b, b.cmp("gt", "f32", min_lod, _fc(b, 0.0)), _eq(b, _sf(b, s, "MAX_LOD"), 0)),
        ),
        "S# MIN_LOD (or an LOD clamp) above 0 or MAX_LOD 0 where the min and mag filters differ "
        "(whether the clamped or the unclamped LOD chooses the filter is not established)",
    )
    # min or mag: λ' > 0 minifies (λ' within 2**-8 above 0 is not established)
    mini = b.cmp("ge", "f32", lam_lo, _fc(b, LOD_EPS + slack))
    mag_sure = b.bin("or", "b1", b.cmp("le", "f32", lam_hi, _fc(b, -slack)), mag_exact)
    refuse(
        PRECISION,
        _and(b, differ, _not(b, b.bin("or", "b1", mini, mag_sure))),
        "an LOD within 2**-8 above 0 (or one whose min/mag choice the hardware's approximation "
        "of ρ could change) where the min and mag filters differ",
    )
    filt = b.select(b.bin("and", "b1", differ, mini), mn, mag)
    linear = _eq(b, filt, XY["BILINEAR"])
    if gather:
        linear = C(b, "b1", 0)
    else:
        refuse(UNSUPPORTED, _and(b, linear, fm.integer()), "linear filtering of an integer format")

    # ---- the level(s): d' = clamp(λ', MIN_LOD, MAX_LOD), at most the view's last level
    qf = b.cvt("f32", q)

    def dclamp(x):
        return b.bin("fmin", "f32", _clampf(b, x, min_lod, max_lod), qf)

    dl, dh = (
        dclamp(b.select(_isnan(b, lam_lo), _fc(b, 0.0), lam_lo)),
        dclamp(b.select(_isnan(b, lam_hi), _fc(b, 0.0), lam_hi)),
    )

    # POINT: the nearest level, not established within 2**-8 of k + 0.5
    def near_half(x):
        fr = b.bin("fsub", "f32", x, b.un("floor", "f32", x))
        return b.cmp(
            "lt", "f32", b.un("fabs", "f32", b.bin("fsub", "f32", fr, _fc(b, 0.5))), _fc(b, LOD_EPS + slack)
        )

    pl = b.bitcast("u32", b.cvt("i32", b.un("floor", "f32", b.bin("fadd", "f32", dl, _fc(b, 0.5)))))
    ph = b.bitcast("u32", b.cvt("i32", b.un("floor", "f32", b.bin("fadd", "f32", dh, _fc(b, 0.5)))))
    is_point = _eq(b, mipf, MIP["POINT"])
    is_lin = _eq(b, mipf, MIP["LINEAR"])
    refuse(
        PRECISION,
        _and(b, mip_on, is_point, _or(b, near_half(dl), near_half(dh), b.cmp("ne", "u32", pl, ph))),
        "a nearest mip level the LOD's fixed-point precision (or the hardware's approximation of "
        "ρ) could change: the LOD within 2**-8 of k + 0.5",
    )
    # LINEAR: the LOD in 8 fraction bits, rounded to nearest even; levels l0 and l0 + 1
    refuse(
        PRECISION,
        _and(b, mip_on, is_lin, b.cmp("gt", "f32", b.bin("fsub", "f32", dh, dl), _fc(b, LOD_EPS))),
        "a linear mip blend whose weight the hardware's approximation of ρ could change by more "
        "than 2**-8 (derivatives that are not axis-aligned)",
    )
    fx = b.bitcast("u32", b.cvt("i32", b.un("rndne", "f32", b.bin("fmul", "f32", dl, _fc(b, 256.0)))))
    l0 = b.bin("shr", "u32", fx, C(b, "u32", 8))
    wm = b.bin("and", "u32", fx, C(b, "u32", 255))
    wm = b.select(b.cmp("ge", "u32", l0, q), C(b, "u32", 0), wm)
    l0 = b.bin("min", "u32", l0, q)
    zero = C(b, "u32", 0)
    m0 = b.select(mip_on, b.select(is_point, pl, b.select(is_lin, l0, zero)), zero)
    m0 = b.bin("min", "u32", m0, q)
    wm = b.select(_and(b, mip_on, is_lin), wm, zero)
    m1 = b.bin("min", "u32", b.bin("add", "u32", m0, C(b, "u32", 1)), q)
    blend = _ne(b, wm, 0)
    one_level = gather or (lodk == "lz" and not has_cl)  # only level m0 is fetched
    if gather:
        refuse(
            UNSUPPORTED,
            blend,
            "image_gather4 between two mip levels (a linear mip filter with a fractional LOD)",
        )
        blend = C(b, "b1", 0)
    else:
        refuse(UNSUPPORTED, _and(b, blend, fm.integer()), "a linear mip blend of an integer format")
        if has_d:  # (lavapipe disagrees beyond the bound at λ = 2.26; not yet explained)
            refuse(
                UNSUPPORTED,
                blend,
                "a linear mip blend with given derivatives (_d/_cd): not yet checked against an oracle",
            )
        if one_level:
            # λ' = 0: d', both levels and the blend are uniform, and a blend needs an S#
            # MIN_LOD with a fraction under a linear mip filter; the second level's fetch (half
            # the instruction's per-lane work) is not translated (decision 0030)
            refuse(
                UNSUPPORTED,
                blend,
                "a linear mip blend under image_sample_lz (an S# MIN_LOD with a fraction and a "
                "linear mip filter): the second level is not translated for _lz",
            )
            blend = C(b, "b1", 0)

    # ---- fetch
    sel = [image._f(b, d, f"DST_SEL_{c}") for c in "XYZW"]
    one = fm.one()
    # the predefined border colours (R, G, B, A) in the texel's channels before DST_SEL: texel
    # channel k gets the colour's component BC_SWIZZLE names k-th (decision 0041; R = G = B, so
    # only where the alpha lands matters: OPAQUE_BLACK's "1")
    alpha_here = [_or(b, *[_eq(b, bc_sw, v) for v, at in BC_ALPHA_AT.items() if at == c]) for c in range(4)]
    border_val = []
    for c in range(4):
        black_a = b.select(alpha_here[c], one, C(b, "u32", 0))
        v = C(b, "u32", 0)
        v = b.select(_eq(b, border_type, BORDER["OPAQUE_BLACK"]), black_a, v)
        v = b.select(_eq(b, border_type, BORDER["OPAQUE_WHITE"]), one, v)
        border_val.append(v)
    # the REGISTER (custom) border colour: the table entry BORDER_COLOR_PTR at TA_CS_BC_BASE_ADDR
    # (decision 0043), placed and checked like the predefined ones
    custom = _custom_border(b, s, live, is_reg, bc_sw, fm, sel)
    if custom is not None:
        border_val = [b.select(is_reg, custom[0][c], border_val[c]) for c in range(4)]
    border_hits: list[Value] = []
    nan_any: list[Value] = []
    cmp_bad: list[Value] = []
    if compare:
        assert zref is not None
        refuse(
            "image.unsupported_format",
            _or(b, _not(b, fm.is_kind(formats.FLOAT)), _ne(b, sel[0], formats.SEL_X)),
            "a depth compare on a format that is not a float (UNORM depth compares: the "
            "reference's conversion is not established) or through a DST_SEL_X other than X",
        )
        zf = _f(b, zref)
        cmp_bad.append(_isnan(b, zf))

    def fetch(ij, sizes, m, active):
        """The four channels (before DST_SEL) of the texel at integer index ij of level m, after
        the address modes; with compare, [1.0 or 0.0, 0, 0, 0]."""
        js, outside = [], []
        for a in range(nsp):
            j, out = _address(b, ij[a], sizes[a], clamp[a])
            js.append(b.bitcast("u32", j))
            outside.append(out)
        border = _or(b, *outside)
        border_hits.append(_and(b, active, border))
        if layer is not None:
            js.append(layer)
        addr, inb = image.texel_address(b, img, js, mip=m)
        ok = _and(b, live, active, fm.known, inb, _not(b, border))
        vals, nan = formats.decode(b, fm, formats.load_texel(b, fm, addr, ok))
        nan_any.append(b.bin("and", "b1", ok, nan))
        out = [b.select(border, border_val[c], vals[c]) for c in range(4)]
        if compare:
            t = _f(b, out[0])
            cmp_bad.append(b.bin("and", "b1", active, _isnan(b, t)))
            res = _compare(b, cfunc, zf, t)
            out = [b.select(res, b.bitcast("u32", _fc(b, 1.0)), C(b, "u32", 0))] + [C(b, "u32", 0)] * 3
        return out

    nonfinite: list[Value] = []

    def level(m, active):
        """(per-level indices) -> point/linear channels of level m (or the gathered texels)."""
        sizes = sizes_at(m)
        us = [texel_space(c, n) for c, n in zip(coords, sizes, strict=True)]
        point_i, lin_i, weights, near = [], [], [], []
        for a in range(nsp):
            u = us[a]
            x = u if not gather else b.bin("fsub", "f32", u, _fc(b, 0.5))
            fl = b.un("floor", "f32", x)
            near.append(b.cmp("ge", "f32", b.bin("fsub", "f32", x, fl), _fc(b, 1.0 - WINDOW)))
            point_i.append(b.bin("add", "i32", b.cvt("i32", fl), off[a]))
            fxu = b.cvt(
                "i32",
                b.un(
                    "rndne",
                    "f32",
                    b.bin("fmul", "f32", b.bin("fsub", "f32", u, _fc(b, 0.5)), _fc(b, 256.0)),
                ),
            )
            lin_i.append(b.bin("add", "i32", b.bin("sar", "i32", fxu, _i(b, 8)), off[a]))
            weights.append(b.bitcast("u32", b.bin("and", "i32", fxu, _i(b, 255))))
        refuse(
            PRECISION,
            _and(b, active, _not(b, linear), _or(b, *near)),
            "a point-sampled or gathered coordinate within 2**-7 texel below a texel boundary "
            "(the texel the hardware's fixed-point coordinate selects there is not established)",
        )
        if cube:  # every texel inside the face: point [0, n), linear's footprint i0, i0 + 1,
            # a gather's footprint floor(u - 0.5) and the next texel (decision 0036)
            edge = []

            def pair(i0, ni):
                return _and(
                    b,
                    b.cmp("ge", "i32", i0, _i(b, 0)),
                    b.cmp("lt", "i32", b.bin("add", "i32", i0, _i(b, 1)), ni),
                )

            for a in range(nsp):
                ni = b.bitcast("i32", sizes[a])
                if gather:
                    edge.append(_not(b, pair(point_i[a], ni)))
                    continue
                pin = _and(b, b.cmp("ge", "i32", point_i[a], _i(b, 0)), b.cmp("lt", "i32", point_i[a], ni))
                edge.append(_not(b, b.select(linear, pair(lin_i[a], ni), pin)))
            refuse(
                CUBE,
                _and(b, active, _or(b, *edge)),
                "a cube sample whose texels are not all inside one face (at or across a face "
                "edge or corner: the hardware's seamless rule is not established)",
            )
        if gather:
            i1 = [b.bin("add", "i32", v, _i(b, 1)) for v in point_i]
            order = [(0, 1), (1, 1), (1, 0), (0, 0)]  # x: (i0,j1), y: (i1,j1), z: (i1,j0), w: (i0,j0)
            return [
                fetch([(i1 if ox else point_i)[0], (i1 if oy else point_i)[1]], sizes, m, active)
                for ox, oy in order
            ]
        corners = list(itertools.product((0, 1), repeat=nsp))
        texels = [
            fetch([b.bin("add", "i32", lin_i[a], _i(b, o)) for a, o in enumerate(cn)], sizes, m, active)
            for cn in corners
        ]
        # the point texel floor(u) is always one of the linear footprint's: floor(u) - i0 is 0
        # or 1 per axis (i0 = floor of u - 0.5 rounded to 1/256, which never passes floor(u))
        up = [b.cmp("eq", "i32", b.bin("sub", "i32", point_i[a], lin_i[a]), _i(b, 1)) for a in range(nsp)]
        pt = []
        for c in range(4):
            v = texels[0][c]
            for cn, tx in zip(corners[1:], texels[1:], strict=True):
                hit = _and(b, *[up[a] if o else _not(b, up[a]) for a, o in enumerate(cn)])
                v = b.select(hit, tx[c], v)
            pt.append(v)
        wts = []
        for cn in corners:
            w: Value | None = None
            for a, o in enumerate(cn):
                wa = weights[a] if o else b.bin("sub", "u32", C(b, "u32", 256), weights[a])
                w = wa if w is None else b.bin("mul", "u32", w, wa)
            assert w is not None
            wts.append(b.cvt("f64", w))
        scale = C(b, "f64", 2.0 ** (-8 * nsp))
        blended = []
        for c in range(4):
            acc: Value | None = None
            for tx, w in zip(texels, wts, strict=True):
                p = b.bin("fmul", "f64", b.cvt("f64", _f(b, tx[c])), w)
                acc = p if acc is None else b.bin("fadd", "f64", acc, p)
            assert acc is not None
            # the sum is finite exactly when every texel is: weights are integers in [0, 2**24]
            # (0 * inf is NaN), finite products cannot overflow f64, and +inf + -inf is NaN
            nonfinite.append(
                _and(
                    b,
                    active,
                    _not(b, b.cmp("lt", "f64", b.un("fabs", "f64", acc), C(b, "f64", float("inf")))),
                )
            )
            blended.append(b.bitcast("u32", b.cvt("f32", b.bin("fmul", "f64", acc, scale))))
        return [b.select(linear, blended[c], pt[c]) for c in range(4)]

    one_b = C(b, "b1", 1)
    if gather:
        comp = (dmask & -dmask).bit_length() - 1
        raw = level(m0, one_b)
        res = []
        for t in raw:
            if compare:
                res.append(t[0])
            else:
                sw, _ = formats.swizzle(b, fm, t, sel)
                res.append(sw[comp])
        if not compare:
            refuse(
                "image.unsupported_format",
                b.cmp("lt", "u32", sel[comp], C(b, "u32", formats.SEL_X)),
                "image_gather4 of a component whose DST_SEL is a constant (what hardware gathers "
                "then is not established)",
            )
    else:
        c0 = level(m0, one_b)
        c1 = c0 if one_level else level(m1, blend)
        wf = b.cvt("f64", wm)
        chans = list(c0)
        for c in range(0 if one_level else 4):
            v0, v1 = _f(b, c0[c]), _f(b, c1[c])
            nonfinite.append(
                _and(b, blend, _not(b, b.cmp("lt", "f32", b.un("fabs", "f32", v1), _fc(b, float("inf")))))
            )
            nonfinite.append(
                _and(b, blend, _not(b, b.cmp("lt", "f32", b.un("fabs", "f32", v0), _fc(b, float("inf")))))
            )
            mixed = b.bin(
                "fadd",
                "f64",
                b.bin("fmul", "f64", b.cvt("f64", v0), b.bin("fsub", "f64", C(b, "f64", 256.0), wf)),
                b.bin("fmul", "f64", b.cvt("f64", v1), wf),
            )
            mixed_u = b.bitcast("u32", b.cvt("f32", b.bin("fmul", "f64", mixed, C(b, "f64", 1 / 256))))
            chans[c] = b.select(blend, mixed_u, c0[c])
        refuse(
            PRECISION,
            _and(b, b.bin("or", "b1", linear, blend), fm.is_kind(formats.FLOAT), _or(b, *nonfinite)),
            "linear filtering over an infinite or NaN texel (the hardware's result is not established)",
        )
        if compare:
            res = [chans[0]]
        else:
            out, bad_sel = formats.swizzle(b, fm, chans, sel)
            refuse("image.unsupported_format", bad_sel, "T# DST_SEL is a reserved value")
            res = [out[c] for c in range(4) if dmask >> c & 1]
    if compare:
        refuse(
            PRECISION,
            _or(b, *cmp_bad),
            "a depth compare with a NaN reference or texel (the hardware's result is not established)",
        )
    refuse(
        "image.unsupported_format",
        _or(b, *nan_any),
        "a NaN read from a 16/11/10-bit float channel (the bits it widens to are not established)",
    )
    refuse(
        CUSTOM_BORDER,
        _and(b, is_reg, _or(b, *border_hits), C(b, "b1", 1) if custom is None else custom[1]),
        "a REGISTER (custom) border colour without a border-colour table (the stream never wrote "
        "TA_CS_BC_BASE_ADDR; GFX11's table is not carried out)"
        if custom is None
        else "a REGISTER (custom) border colour with a component that is not a value of the "
        "image's format (out of range, between two of its values, a NaN, an infinity or an f32 "
        "denormal), of a USCALED/SSCALED/5_9_9_9 format, or read through a DST_SEL of a channel "
        "the format lacks (the hardware's conversion of the table entry is not established there)",
    )
    if d16:
        res = _d16(b, fm, res, lambda cond, why: refuse(UNSUPPORTED, cond, why))
    for k, v in enumerate(res):
        b.vset(f["vdata"] + k, b.select(live, v, C(b, "u32", 0)))
    if f.get("tfe"):
        image.tfe_status(b, real)


def _d16(b: Builder, fm, res: list[Value], refuse) -> list[Value]:
    """d16 results: each f32 result rounded to f16 to nearest even (RADV folds only f2f16 in
    the shader's default RTNE mode into d16 sampling: radv_pipeline.c's
    nir_fold_16bit_tex_image with rounding_mode rtne), component k in half k % 2 of VGPR
    k // 2.  Refused: integer formats (the hardware's narrowing is not established), and a
    result that is NaN or in f16's subnormal range (its NaN bits and denormal handling are
    not established)."""
    refuse(fm.integer(), "d16 sampling of an integer format (the hardware's narrowing is not established)")
    hs = []
    for v in res:
        x = b.bitcast("f32", v)
        ax = b.bin("and", "u32", v, C(b, "u32", 0x7FFFFFFF))
        tiny = _and(
            b, b.cmp("ne", "u32", ax, C(b, "u32", 0)), b.cmp("lt", "u32", ax, C(b, "u32", 0x38800000))
        )
        refuse(
            b.bin("or", "b1", _isnan(b, x), tiny),
            "a d16 sampling result that is NaN or below f16's smallest normal (its f16 bits are not established)",
        )
        hs.append(b.cvt("u32", b.bitcast("u16", b.cvt("f16", x))))
    out = []
    for k in range(0, len(hs), 2):
        lo = hs[k]
        out.append(
            lo
            if k + 1 == len(hs)
            else b.bin("or", "u32", lo, b.bin("shl", "u32", hs[k + 1], C(b, "u32", 16)))
        )
    return out


def _compare(b: Builder, func: Value, ref: Value, t: Value) -> Value:
    """S# DEPTH_COMPARE_FUNC ``func`` of (reference, texel): Vulkan's D_ref op texel (RADV maps
    VkCompareOp onto the enum one to one, radv_tex_compare); NEVER is 0 (RADV writes it for
    compareOp NEVER as for compare disabled)."""
    res = C(b, "b1", 0)
    for nm, cond in (
        ("LESS", "lt"),
        ("EQUAL", "eq"),
        ("LESSEQUAL", "le"),
        ("GREATER", "gt"),
        ("NOTEQUAL", "ne"),
        ("GREATEREQUAL", "ge"),
    ):
        res = b.select(_eq(b, func, COMPARE[nm]), b.cmp(cond, "f32", ref, t), res)
    return b.select(_eq(b, func, COMPARE["ALWAYS"]), C(b, "b1", 1), res)


def _address(b: Builder, i: Value, n: Value, mode: Value) -> tuple[Value, Value]:
    """(texel index in [0, n), outside: b1) of integer index ``i`` (i32) on an axis of ``n``
    texels under the S# CLAMP mode ``mode`` (modes other than these five refuse before)."""
    ni = b.bitcast("i32", n)
    zero, last = _i(b, 0), b.bin("sub", "i32", ni, _i(b, 1))
    m2 = _mod(b, i, b.bin("add", "i32", ni, ni))
    wrap = b.select(b.cmp("lt", "i32", m2, ni), m2, b.bin("sub", "i32", m2, ni))  # (i mod 2n) mod n
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
    """i mod n in [0, n) for i32 i (|i| < 2**17) and 0 < n <= 2**16 (_address: twice an axis of
    at most 2**15 texels): an f32 quotient (off by at most one) corrected once each way."""
    q = b.cvt("i32", b.un("floor", "f32", b.bin("fdiv", "f32", b.cvt("f32", i), b.cvt("f32", n))))
    r = b.bin("sub", "i32", i, b.bin("mul", "i32", q, n))
    r = b.select(b.cmp("lt", "i32", r, _i(b, 0)), b.bin("add", "i32", r, n), r)
    return b.select(b.cmp("ge", "i32", r, n), b.bin("sub", "i32", r, n), r)


def _lambda(b: Builder, lodk, lod, bias, derivs, us0, base_sizes, nsp, s, unnorm):
    """(λ' low, λ' high, magnified for sure, refuse: b1, why, slack) of the LOD the instruction
    implies, before the S#'s clamps: _lz 0, _l its operand, otherwise log2(ρ) + S# LOD_BIAS (+
    the _b operand), ρ from the _d operands or the derivatives across the 2x2 quad, in texel
    space of the view's base level; [low, high] spans Vulkan's approximations of ρ (between
    max(|du|, |dv|, |dw|) and |du| + |dv| + |dw| per direction)."""
    no = C(b, "b1", 0)
    if lodk == "lz":
        return _fc(b, 0.0), _fc(b, 0.0), no, no, "", 0.0
    if lodk == "l":
        lam = _f(b, lod)
        return lam, lam, no, no, "", 0.0
    if derivs is not None:
        refuse = no
        why = ""
        dx: list[Value] = []
        dy: list[Value] = []
        for a in range(nsp):
            for src, dst in ((derivs[0][a], dx), (derivs[1][a], dy)):
                t = b.bin("fmul", "f32", _f(b, src), b.cvt("f32", base_sizes[a]))
                dst.append(b.un("fabs", "f32", b.select(unnorm, _f(b, src), t)))
    else:
        # implicit: coarse derivatives across the quad of lanes (lanes 4k..4k+3: d/dx = lane 1 -
        # lane 0, d/dy = lane 2 - lane 0)
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
        for u in us0:
            ub = b.bitcast("u32", u)
            u0 = _f(b, b.emit("shuffle", "u32", ub, q0))
            dx.append(b.un("fabs", "f32", b.bin("fsub", "f32", _f(b, b.emit("shuffle", "u32", ub, q1)), u0)))
            dy.append(b.un("fabs", "f32", b.bin("fsub", "f32", _f(b, b.emit("shuffle", "u32", ub, q2)), u0)))
        refuse = _not(b, allq)
        why = "an implicit LOD (derivatives across the 2x2 quad of lanes) of a quad with an inactive lane"

    def mx(xs):
        out = xs[0]
        for x in xs[1:]:
            out = b.bin("fmax", "f32", out, x)
        return out

    def sm(xs):
        out = xs[0]
        for x in xs[1:]:
            out = b.bin("fadd", "f32", out, x)
        return out

    lo = b.bin("fmax", "f32", mx(dx), mx(dy))
    hi = b.bin("fmax", "f32", sm(dx), sm(dy))
    raw = b.bitcast("i32", b.bin("shl", "u32", _sf(b, s, "LOD_BIAS"), C(b, "u32", 18)))
    bf = b.bin("fmul", "f32", b.cvt("f32", b.bin("sar", "i32", raw, _i(b, 18))), _fc(b, 1 / 256))
    if bias is not None:
        bf = b.bin("fadd", "f32", bf, _f(b, bias))
    lam_lo = b.bin("fadd", "f32", b.un("log2", "f32", lo), bf)
    lam_hi = b.bin("fadd", "f32", b.un("log2", "f32", hi), bf)
    # exact: with no bias, ρ <= 1 is λ <= 0
    mag_exact = _and(b, b.cmp("eq", "f32", bf, _fc(b, 0.0)), b.cmp("le", "f32", hi, _fc(b, 1.0)))
    return lam_lo, lam_hi, mag_exact, refuse, why, SLACK


LOD_RANGE = 16.0  # |λ| at or above this refuses for image_get_lod (the S# LOD fields' range)


def _get_lod(ins, b: Builder):
    """image_get_lod (decision 0036; 1-D, 3-D and arrays decision 0041) of a 1-D, 2-D or 3-D
    image or a 1-D/2-D array: the LOD the sampler computes from the
    implicit derivatives across the lane's quad (lanes 4k..4k+3, coarse: d/dx = lane 1 - lane
    0, d/dy = lane 2 - lane 0, in texel space of the view's base level), as two f32 results:
    x (dmask bit 0) clamped to [S# MIN_LOD, MAX_LOD], y (bit 1) unclamped.  The value is
    log2(ρ) with ρ the largest texel-space derivative (|du/dx|, |dv/dx|, |dw/dx|, |du/dy|, ...
    of the image's spatial axes; an array's layer takes no part); the lane refuses
    (``image.sampling_precision``) where Vulkan's approximations of ρ differ by more than
    2**-8 in log2 (derivatives not axis-aligned), where every derivative is 0 (the hardware's
    unclamped LOD there is not what Vulkan wants: RADV replaces it, nir_lower_lod_zero_width),
    where |λ| >= 16, or a lane of the quad is inactive; where the clamp to the view's last level
    would matter (the clamped value past it: not established whether the hardware clamps there)
    it refuses too.  S# fields that could change the LOD and are not carried out refuse
    (``image.unsupported_sampler``): LOD_BIAS (whether the hardware adds it here is not
    established), LOD_BIAS_SEC, anisotropy, DERIV_ADJUST_EN, MIP_POINT_PRECLAMP, unnormalized
    coordinates, MIN_LOD above MAX_LOD.  The hardware computes the LOD in fixed point (its LOD
    fields have 8 fraction bits): the stated bound is in the decision."""
    f = ins.fields
    dmask = f.get("dmask", 0) & 0xF
    if f.get("r128") or f.get("tfe") or f.get("lwe") or f.get("d16") or f.get("a16"):
        unsupported("image_get_lod with r128/tfe/lwe/d16/a16")
    if not dmask or dmask & 0xC:
        unsupported("image_get_lod with a dmask other than x and/or y (z and w are not defined)")
    dim = f.get("dim", 0)
    if dim not in SPATIAL:
        # cube: ACO differentiates the face coordinates (v_cubesc/tc / |ma| + 1.5) across the
        # quad, and the hardware's cube LOD from them is not established; MSAA has no LOD
        unsupported("image_get_lod of a cube or MSAA image")
    nsp = SPATIAL[dim]  # (an array's layer operand follows; the LOD does not read it)
    regs = f.get("vaddr_nsa")
    if regs is None:
        regs = tuple(f["vaddr"] + i for i in range(nsp))
    coords = [b.vget(r) for r in regs[:nsp]]
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    img = image.describe(b, d, dim)
    ss = f["ssamp"] * 4
    s = [b.sget(ss + j) for j in range(4)]
    live = b.bin("and", "b1", b.exec(), img.real)

    def refuse(code, cond, why):
        b.effect("refuse_if", "b1", b.bin("and", "b1", live, cond), why=why, code=code)

    bad = [_ne(b, _sf(b, s, fld), 0) for fld in (
        "LOD_BIAS",
        "LOD_BIAS_SEC",
        "MAX_ANISO_RATIO",
        "DERIV_ADJUST_EN",
        "MIP_POINT_PRECLAMP",
        "FORCE_UNNORMALIZED",
    )]  # fmt: skip
    if f.get("unrm"):
        bad.append(C(b, "b1", 1))
    bad.append(_reserved(b, s, d))
    min_lod = b.bin("fmul", "f32", b.cvt("f32", _sf(b, s, "MIN_LOD")), _fc(b, 1 / 256))
    max_lod = b.bin("fmul", "f32", b.cvt("f32", _sf(b, s, "MAX_LOD")), _fc(b, 1 / 256))
    bad.append(b.cmp("gt", "f32", min_lod, max_lod))
    refuse(
        UNSUPPORTED,
        _or(b, *bad),
        "image_get_lod through an S# with an LOD bias, anisotropy, derivative adjustment, mip "
        "preclamp, unnormalized coordinates, MIN_LOD above MAX_LOD or reserved bits set, or a T# "
        "with CORNER_SAMPLES (not established here)",
    )
    full = [img.width, img.height, b.bin("add", "u32", img.depth, C(b, "u32", 1))][:nsp]
    base = [b.bin("max", "u32", b.bin("shr", "u32", n, img.base_level), C(b, "u32", 1)) for n in full]
    us0 = [b.bin("fmul", "f32", _f(b, c), b.cvt("f32", n)) for c, n in zip(coords, base, strict=True)]
    big = _or(b, *[_not(b, b.cmp("lt", "f32", b.un("fabs", "f32", u), _fc(b, MAX_U))) for u in us0])
    refuse(PRECISION, big, "a sampling coordinate that is not finite or lies 2**15 texels or more from 0")
    us0 = [b.select(big, _fc(b, 0.0), u) for u in us0]
    lam_lo, lam_hi, _mag, quad_bad, why, slack = _lambda(
        b, "", None, None, None, us0, base, nsp, s, C(b, "b1", 0)
    )
    refuse(PRECISION, quad_bad, why)
    # all-zero derivatives give λ = -inf: inside the |λ| >= 16 refusal
    refuse(
        PRECISION,
        _or(
            b,
            _isnan(b, lam_lo),
            _isnan(b, lam_hi),
            b.cmp("gt", "f32", b.bin("fsub", "f32", lam_hi, lam_lo), _fc(b, LOD_EPS + slack)),
            b.cmp("le", "f32", lam_lo, _fc(b, -LOD_RANGE)),
            b.cmp("ge", "f32", lam_hi, _fc(b, LOD_RANGE)),
        ),
        "image_get_lod whose LOD the hardware's approximation of ρ could change by more than "
        "2**-8 (derivatives not axis-aligned), of a quad whose derivatives are all 0, or with "
        "|λ| >= 16 (the hardware's values there are not established)",
    )
    y = b.select(_isnan(b, lam_lo), _fc(b, 0.0), lam_lo)
    x = b.bin("fmin", "f32", b.bin("fmax", "f32", y, min_lod), max_lod)
    q = b.cvt("f32", b.bin("sub", "u32", img.last_level, img.base_level))
    if dmask & 1:
        refuse(
            PRECISION,
            b.cmp("gt", "f32", x, q),
            "image_get_lod whose clamped LOD lies past the view's last level (whether the hardware "
            "clamps it to the view's levels is not established)",
        )
    res = [v for k, v in enumerate((x, y)) if dmask >> k & 1]
    for k, v in enumerate(res):
        b.vset(f["vdata"] + k, b.select(live, b.bitcast("u32", v), C(b, "u32", 0)))
