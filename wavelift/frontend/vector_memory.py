"""MUBUF / MTBUF / FLAT / GLOBAL / SCRATCH: vector memory addressing, OOB rules, loads, stores,
atomics.  Scratch is addressed here (wave-relative byte address in the hardware's interleaved
layout, ``(o/4)*4*W + 4*L + o%4``) and executed by the backend's scratch module; it never reaches
a window.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.program import Value
from . import formats
from .common import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI, C, read_sreg, unsupported
from .scalar_memory import buffer_base

# kind -> (bytes, words, post-processing)
LOADS = {
    "ubyte": (1, 1, "u8"),
    "sbyte": (1, 1, "s8"),
    "ushort": (2, 1, "u16"),
    "sshort": (2, 1, "s16"),
    "dword": (4, 1, None),
    "dwordx2": (8, 2, None),
    "dwordx3": (12, 3, None),
    "dwordx4": (16, 4, None),
    "ubyte_d16": (1, 1, "d16lo_u8"),
    "ubyte_d16_hi": (1, 1, "d16hi_u8"),
    "sbyte_d16": (1, 1, "d16lo_s8"),
    "sbyte_d16_hi": (1, 1, "d16hi_s8"),
    "short_d16": (2, 1, "d16lo"),
    "short_d16_hi": (2, 1, "d16hi"),
}
STORES = {
    "byte": (1, 1, None),
    "short": (2, 1, None),
    "dword": (4, 1, None),
    "dwordx2": (8, 2, None),
    "dwordx3": (12, 3, None),
    "dwordx4": (16, 4, None),
    "byte_d16_hi": (1, 1, "hi"),
    "short_d16_hi": (2, 1, "hi"),
}
ATOMICS = {"swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec"}
NOPS = {"buffer_gl0_inv", "buffer_gl1_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol"}


def _split(name: str):
    prefix, rest = name.split("_", 1)
    for verb in ("load_", "store_", "atomic_"):
        if rest.startswith(verb):
            return prefix, verb[:-1], rest[len(verb) :]
    return prefix, rest, ""


def swizzle(b: Builder, o: Value) -> Value:
    """Per-lane private byte offset (u32) -> wave-relative byte address (u64, so that no offset
    wraps onto a valid one): ``(o/4)*4*W + 4*L + o%4`` (docs/decisions/0008-scratch.md)."""
    W = b.wave_size
    o = b.cvt("u64", o)
    hi = b.bin("mul", "u64", b.bin("shr", "u64", o, C(b, "u64", 2)), C(b, "u64", 4 * W))
    lane = b.cvt("u64", b.bin("shl", "u32", b.lane_id(), C(b, "u32", 2)))
    return b.bin("add", "u64", b.bin("add", "u64", hi, lane), b.bin("and", "u64", o, C(b, "u64", 3)))


def _mubuf_scratch(ins, b: Builder, verb: str, kind: str):
    """A MUBUF access through the scratch V# (the static test in frontend/scratch.py said so):
    per-lane offset ``o = VGPR offset (offen) + inst offset``, each dword swizzled on its own,
    plus ``soffset`` unswizzled.  The V# (base, stride, NUM_RECORDS) is never read: the module's
    scratch array is the wave's scratch and holds its own bounds."""
    f = ins.fields
    if f.get("idxen"):
        unsupported("scratch buffer access with idxen")
    if verb == "load":
        if kind not in LOADS:
            unsupported()
        words = LOADS[kind][1]
    elif verb == "store":
        if kind not in STORES:
            unsupported()
        words = STORES[kind][1]
    else:
        if kind.endswith("_x2"):
            unsupported("64-bit atomic on scratch")
        words = 1
    ex = b.exec()
    soff = b.cvt("u64", read_sreg(b, f.get("soffset", 125), "u32", ins.literal))
    o = C(b, "u32", f.get("offset", 0))
    if f.get("offen"):
        o = b.bin("add", "u32", o, b.vget(f["vaddr"]))
    addrs = [
        b.bin("add", "u64", swizzle(b, b.bin("add", "u32", o, C(b, "u32", 4 * j))), soff)
        for j in range(words)
    ]
    targets = [("scratch", addrs, [ex] * words)]
    b.uses_scratch = True
    if verb == "load":
        _load(b, ins, kind, targets, f["vdata"])
    elif verb == "store":
        _store(b, ins, kind, targets, f["vdata"])
    else:
        _atomic(b, ins, kind, targets, f["vdata"], f["vdata"], bool(f.get("glc")))


# ------------------------------------------------------------------------------- load / store
def _post(b, ins, post, w, old_reg):
    if post is None:
        return w
    if post == "u8" or post == "u16":
        return w
    if post == "s8":
        return b.bitcast("u32", b.cvt("i32", b.cvt("i8", w)))
    if post == "s16":
        return b.bitcast("u32", b.cvt("i32", b.cvt("i16", w)))
    if post.startswith("d16"):
        v = w
        if post.endswith("s8"):
            v = b.cvt("u32", b.bitcast("u16", b.cvt("i16", b.cvt("i8", w))))
        old = b.vget(old_reg)
        if post.startswith("d16hi"):
            return b.bin(
                "or",
                "u32",
                b.bin("and", "u32", old, C(b, "u32", 0xFFFF)),
                b.bin("shl", "u32", v, C(b, "u32", 16)),
            )
        return b.bin("or", "u32", b.bin("and", "u32", old, C(b, "u32", 0xFFFF0000)), v)
    unsupported()


def _load(b, ins, kind, targets, vdst):
    """targets: list of (space, per-dword address list, per-dword mask list)."""
    if kind not in LOADS:
        unsupported()
    nbytes, words, post = LOADS[kind]
    out = [None] * words
    for space, addrs, masks in targets:
        if len(addrs) == 1:
            ld = b.emit(
                "load", "u32", addrs[0], masks[0], uniform=False, space=space, nbytes=nbytes, words=words
            )
            ws = [b.emit("word", "u32", ld, k=j) for j in range(words)]
        else:
            ws = []
            for j in range(words):
                ld = b.emit(
                    "load",
                    "u32",
                    addrs[j],
                    masks[j],
                    uniform=False,
                    space=space,
                    nbytes=min(4, nbytes),
                    words=1,
                )
                ws.append(b.emit("word", "u32", ld, k=0))
        for j in range(words):
            out[j] = ws[j] if out[j] is None else b.bin("or", "u32", out[j], ws[j])
    for j in range(words):
        b.vset(vdst + j, _post(b, ins, post, out[j], vdst + j))


def _store_words(b, ins, kind, data_reg):
    if kind not in STORES:
        unsupported()
    nbytes, words, post = STORES[kind]
    ws = [b.vget(data_reg + j) for j in range(words)]
    if post == "hi":
        ws = [b.bin("shr", "u32", ws[0], C(b, "u32", 16))]
    return nbytes, ws


def _store(b, ins, kind, targets, data_reg):
    nbytes, ws = _store_words(b, ins, kind, data_reg)
    for space, addrs, masks in targets:
        if len(addrs) == 1:
            b.effect("store", "u32", addrs[0], masks[0], *ws, space=space, nbytes=nbytes)
        else:
            for j, w in enumerate(ws):
                b.effect("store", "u32", addrs[j], masks[j], w, space=space, nbytes=min(4, nbytes))


def _atomic(b, ins, op, targets, data_reg, vdst, returns):
    wide = op.endswith("_x2")
    base = op[:-3] if wide else op
    if base not in ATOMICS:
        unsupported()
    t = "u64" if wide else "u32"
    n = 2 if wide else 1

    def rd(r):
        return b.pack64(b.vget(r), b.vget(r + 1)) if wide else b.vget(r)

    data = rd(data_reg)
    cmp = rd(data_reg + n) if base == "cmpswap" else None
    out = None
    for space, addrs, masks in targets:
        args = (addrs[0], masks[0], data) + ((cmp,) if cmp is not None else ())
        old = b.emit("atomic", t, *args, uniform=False, space=space, op=base, bits=32 * n)
        out = old if out is None else b.bin("or", t, out, old)
    if returns:
        if wide:
            b.vset(vdst, b.lo32(out))
            b.vset(vdst + 1, b.hi32(out))
        else:
            b.vset(vdst, out)


# ------------------------------------------------------------------------------------ MUBUF
def mubuf(ins, b: Builder):
    n = ins.name
    if n in NOPS:
        return
    f = ins.fields
    prefix, verb, kind = _split(n)
    if verb not in ("load", "store", "atomic") or f.get("lds") or f.get("tfe"):
        unsupported()
    fmt = kind.startswith("format_")
    nchan = 0
    d16 = False
    if fmt:
        chans = kind[7:]
        if chans in ("d16_xy", "d16_xyzw"):
            d16, chans = True, chans[4:]
        if chans not in ("x", "xy", "xyz", "xyzw"):
            # d16_x / d16_xyz / d16_hi_x: what the last VGPR's other half gets is not established
            unsupported("d16 buffer format access of an odd number of components")
        nchan = len(chans)
        kind = ("dword", "dwordx2", "dwordx3", "dwordx4")[nchan - 1]
    plan = getattr(b, "scratch", None)
    if plan is not None and plan.is_scratch_mubuf(ins.offset):
        if fmt:
            unsupported("buffer format access to scratch")
        return _mubuf_scratch(ins, b, verb, kind)
    ex = b.exec()
    r = f["srsrc"] * 4
    w0, w1, w2, w3 = (b.sget(r + j) for j in range(4))
    stride = b.bin("and", "u32", b.bin("shr", "u32", w1, C(b, "u32", 16)), C(b, "u32", 0x3FFF))
    if b.target.startswith("gfx11"):
        # GFX11: SWIZZLE_ENABLE is word 1 bits [31:30] (an element size); swizzled buffer
        # addressing is not carried out there: an active lane using such a V# refuses
        sw11 = b.cmp("ne", "u32", b.bin("and", "u32", w1, C(b, "u32", 0xC0000000)), C(b, "u32", 0))
        formats.refuse(b, "program.unsupported_instruction", sw11, "a GFX11 V# with SWIZZLE_ENABLE set")
        swz = b.cmp("ne", "u32", C(b, "u32", 0), C(b, "u32", 0))
    else:
        swz = b.cmp("ne", "u32", b.bin("and", "u32", w1, C(b, "u32", 0x80000000)), C(b, "u32", 0))
    add_tid = b.cmp("ne", "u32", b.bin("and", "u32", w3, C(b, "u32", 1 << 23)), C(b, "u32", 0))
    idx_stride = b.bin(
        "shl",
        "u32",
        C(b, "u32", 8),
        b.bin("and", "u32", b.bin("shr", "u32", w3, C(b, "u32", 21)), C(b, "u32", 3)),
    )
    so = f.get("soffset", 128)
    soff = read_sreg(b, so, "u32", ins.literal)
    idx = C(b, "u32", 0)
    if f.get("idxen"):
        idx = b.vget(f["vaddr"])
    idx = b.select(add_tid, b.bin("add", "u32", idx, b.lane_id()), idx)
    voff = C(b, "u32", f.get("offset", 0))
    if f.get("offen"):
        voff = b.bin("add", "u32", voff, b.vget(f["vaddr"] + (1 if f.get("idxen") else 0)))
    nrec = w2
    oob_sel = (
        b.bin("and", "u32", b.bin("shr", "u32", w3, C(b, "u32", 28)), C(b, "u32", 3))
        if b.target != "gfx1010"
        else None
    )
    if verb == "load":
        nbytes, words, _ = LOADS.get(kind, (4, 1, None))
    elif verb == "store":
        nbytes, words, _ = STORES.get(kind, (4, 1, None))
    else:
        words = 2 if kind.endswith("_x2") else 1
    # not scratch (frontend/scratch.py decided statically): a buffer access in guest memory
    base = buffer_base(b, w0, w1)

    def locate(off):
        """(byte address, b1 out of range) of byte offset ``off`` (u32) of the element."""
        # swizzled: ((idx / is) * stride + off/4*4) * is + (idx % is) * 4 + off % 4
        q = b.bin(
            "add",
            "u32",
            b.bin("mul", "u32", _udiv(b, idx, idx_stride), stride),
            b.bin("and", "u32", off, C(b, "u32", ~3 & 0xFFFFFFFF)),
        )
        rel_sw = b.bin(
            "add",
            "u32",
            b.bin(
                "add",
                "u32",
                b.bin("mul", "u32", q, idx_stride),
                b.bin("shl", "u32", _umod(b, idx, idx_stride), C(b, "u32", 2)),
            ),
            b.bin("and", "u32", off, C(b, "u32", 3)),
        )
        rel_lin = b.bin(
            "add", "u64", b.cvt("u64", off), b.bin("mul", "u64", b.cvt("u64", stride), b.cvt("u64", idx))
        )
        rel = b.select(swz, b.cvt("u64", rel_sw), rel_lin)
        # range checking (GFX10 OOB_SELECT; gfx1010: raw when stride == 0, else index)
        raw_oob = b.cmp("ge", "u64", rel, b.cvt("u64", nrec))
        idx_oob = b.cmp("ge", "u32", idx, nrec)
        if oob_sel is None:
            oob = b.select(b.cmp("eq", "u32", stride, C(b, "u32", 0)), raw_oob, idx_oob)
        else:
            s0 = b.bin("or", "b1", idx_oob, b.cmp("ge", "u32", off, stride))
            oob = b.select(
                b.cmp("eq", "u32", oob_sel, C(b, "u32", 3)),
                raw_oob,
                b.select(
                    b.cmp("eq", "u32", oob_sel, C(b, "u32", 1)),
                    idx_oob,
                    b.select(
                        b.cmp("eq", "u32", oob_sel, C(b, "u32", 2)),
                        b.cmp("eq", "u32", nrec, C(b, "u32", 0)),
                        s0,
                    ),
                ),
            )
        return b.bin("add", "u64", b.bin("add", "u64", base, rel), b.cvt("u64", soff)), oob

    if fmt:
        fv = C(b, "u32", f["format"]) if prefix == "tbuffer" else _bits(b, w3, 12, 7)
        if b.target.startswith("gfx11"):
            # GFX11 renumbered the formats: carried out as GFX10's format of the same name
            # (decision 0023, 2026-12-05 amendment); formats.Format reads GFX10's table for a
            # GFX10 target only
            from .gfx11 import format_map

            fv = formats.lut(b, fv, format_map(), 7, "u32")
            target = b.target
            b.target = "gfx1030"
            try:
                return _typed(b, ins, verb, nchan, fv, w3, swz, locate, voff, d16)
            finally:
                b.target = target
        return _typed(b, ins, verb, nchan, fv, w3, swz, locate, voff, d16)
    glob_addrs, glob_masks = [], []
    for j in range(words if verb != "atomic" else 1):
        addr, oob = locate(b.bin("add", "u32", voff, C(b, "u32", 4 * j)))
        glob_addrs.append(addr)
        glob_masks.append(b.bin("and", "b1", ex, b.un("not", "b1", oob)))
    if verb != "atomic":
        contiguous = False
        targets = [("global", glob_addrs, glob_masks)]
        if contiguous:
            pass
        if verb == "load":
            _load(b, ins, kind, targets, f["vdata"])
        else:
            _store(b, ins, kind, targets, f["vdata"])
    else:
        targets = [("global", glob_addrs, glob_masks)]
        _atomic(b, ins, kind, targets, f["vdata"], f["vdata"], bool(f.get("glc")))


def _bits(b, x, lo, n):
    return b.bin("and", "u32", b.bin("shr", "u32", x, C(b, "u32", lo)), C(b, "u32", (1 << n) - 1))


def _typed(
    b: Builder,
    ins,
    verb: str,
    nchan: int,
    fv: Value,
    w3: Value,
    swz: Value,
    locate,
    voff: Value,
    d16: bool = False,
):
    """buffer_load/store_format_* and tbuffer_*: one element of format ``fv`` (the V#'s FORMAT,
    or MTBUF's format field: GFX10 numbers buffer formats as IMG_FORMAT) at byte offset ``voff``
    of the element the index picks, converted by frontend/formats.py; the V#'s DST_SEL applies
    to loads.  An element partly out of range, a swizzled (SWIZZLE_ENABLE) V#, a format not
    converted exactly, and an out-of-range load whose requested channels would hold a 1 (the
    format's default W or DST_SEL "1": whether hardware returns it or 0 there is not
    established) refuse by name (``buffer.unsupported_format``)."""
    f = ins.fields
    ex = b.exec()
    fm = formats.Format(b, fv, nbits=7, gfx10_only=True)
    addr, oob = locate(voff)
    last = b.bin(
        "add",
        "u32",
        voff,
        b.bin("sub", "u32", b.bin("max", "u32", fm.nbytes, C(b, "u32", 1)), C(b, "u32", 1)),
    )
    _, oob_last = locate(last)
    ok = b.bin("and", "b1", ex, b.un("not", "b1", oob))
    code = "buffer.unsupported_format"
    formats.refuse(
        b,
        code,
        b.bin("and", "b1", ok, b.un("not", "b1", fm.known)),
        "a typed buffer access whose format is not converted exactly (SRGB, FLOAT_CLAMP, "
        "packed/compressed/YUV formats)",
    )
    formats.refuse(
        b,
        code,
        b.bin("and", "b1", ok, b.bin("or", "b1", oob_last, swz)),
        "a typed buffer element partly out of range, or a swizzled V# (SWIZZLE_ENABLE)",
    )
    ok = b.bin("and", "b1", ok, fm.known)
    sel = [_bits(b, w3, 3 * c, 3) for c in range(4)]
    if verb == "load":
        words = formats.load_texel(b, fm, addr, ok)
        vals, nan = formats.decode(b, fm, words)
        formats.refuse(b, code, b.bin("and", "b1", ok, nan), "a NaN read from a 16/11/10-bit float channel")
        out, bad_sel = formats.swizzle(b, fm, vals, sel)
        formats.refuse(b, code, b.bin("and", "b1", ok, bad_sel), "V# DST_SEL is a reserved value")
        in_oob = b.bin("and", "b1", ex, oob)
        formats.refuse(
            b,
            code,
            b.bin("and", "b1", in_oob, formats.gives_one(b, fm, sel, nchan)),
            "an out-of-range typed buffer load whose result would hold the format's default 1",
        )
        res = [b.select(ok, out[k], C(b, "u32", 0)) for k in range(nchan)]
        if d16:  # two components a VGPR, the first in the low half
            formats.refuse(
                b,
                code,
                b.bin("and", "b1", ok, formats.d16_sources(b, fm, sel, nchan)),
                "a d16 load of a channel whose 16-bit form needs rounding or narrowing",
            )
            h = [formats.to_d16(b, fm, v) for v in res]
            res = [
                b.bin("or", "u32", h[k], b.bin("shl", "u32", h[k + 1], C(b, "u32", 16)))
                for k in range(0, nchan, 2)
            ]
        for k, v in enumerate(res):
            b.vset(f["vdata"] + k, v)
        return
    # a store gives the first nchan channels in memory order; a format with more channels (what
    # the hardware writes there is not established) refuses
    formats.refuse(
        b,
        code,
        b.bin("and", "b1", ok, b.cmp("gt", "u32", fm.channels(), C(b, "u32", nchan))),
        "a typed buffer store of fewer channels than its format has",
    )
    if d16:
        comp = [b.vget(f["vdata"] + k // 2) for k in range(nchan)]
        comp = [
            formats.from_d16(b, fm, b.bin("shr", "u32", v, C(b, "u32", 16)) if k % 2 else v)
            for k, v in enumerate(comp)
        ]
    else:
        comp = [b.vget(f["vdata"] + k) for k in range(nchan)]
    vals = [comp[c] if c < nchan else C(b, "u32", 0) for c in range(4)]
    words, lossy, unwritable = formats.encode(b, fm, vals)
    formats.refuse(
        b,
        code,
        b.bin("and", "b1", ok, b.bin("or", "b1", lossy, unwritable)),
        "a typed buffer store to a USCALED/SSCALED/5_9_9_9 format, of an integer outside its "
        "channel's range or of a NaN to a 16/11/10-bit float channel",
    )
    formats.store_texel(b, fm, addr, ok, words)


def _udiv(b, x, pow2):
    # idx_stride is a power of two (8 << n)
    sh = b.un("ctz", "u32", pow2)
    return b.bin("shr", "u32", x, b.bitcast("u32", b.cvt("i32", sh)))


def _umod(b, x, pow2):
    return b.bin("and", "u32", x, b.bin("sub", "u32", pow2, C(b, "u32", 1)))


# ------------------------------------------------------------------------ FLAT / GLOBAL / SCRATCH
def flat(ins, b: Builder):
    f = ins.fields
    n = ins.name
    prefix, verb, kind = _split(n)
    if verb not in ("load", "store", "atomic") or f.get("lds"):
        unsupported()
    seg = f.get("seg", 0)
    gfx11 = "sve" in f  # GFX11's layout: 13-bit offset, SCRATCH's SVE bit (decision 0023)
    if "th" in f:  # GFX12's VFLAT/VGLOBAL/VSCRATCH (frontend/gfx12.py): a 24-bit signed offset
        off = f.get("offset", 0) & 0xFFFFFF
        if off & 0x800000:
            off -= 0x1000000
        if seg == 0 and off < 0:
            unsupported("a negative FLAT offset on GFX12")
    elif gfx11:
        off = f.get("offset", 0) & 0x1FFF
        if seg != 0 and off & 0x1000:
            off -= 0x2000  # GLOBAL/SCRATCH: 13-bit signed
        elif seg == 0 and off & 0x1000:
            unsupported("FLAT offset bit 12 (GFX11's FLAT offset is 12-bit unsigned)")
    else:
        off = f.get("offset", 0) & 0xFFF
        if seg != 0 and off & 0x800:
            off -= 0x1000
    ex = b.exec()
    saddr = f.get("saddr", 125)
    if verb == "load":
        nbytes, words, _ = LOADS.get(kind, (4, 1, None))
    elif verb == "store":
        nbytes, words, _ = STORES.get(kind, (4, 1, None))
    else:
        words = 1
    if seg == 2 and gfx11 and saddr == 127:
        unsupported("GLOBAL with SADDR 0x7F on GFX11")
    if seg == 1 and gfx11:  # scratch_*: VGPR (SVE) + SGPR (unless NULL/0x7F) + offset, each optional
        # SADDR 0x7F (exec_hi) adds no SGPR: ACO (Mesa 22.3.6 aco_assembler.cpp) encodes an
        # offset-only scratch access so on GFX11 as on GFX10.3, and RADV runs it on RDNA3
        o = b.vget(f["addr"]) if f.get("sve") else C(b, "u32", 0)
        if saddr not in (125, 127):
            o = b.bin("add", "u32", o, read_sreg(b, saddr, "u32"))
        o = b.bin("add", "u32", o, C(b, "u32", off & 0xFFFFFFFF))
        targets = [
            (
                "scratch",
                [swizzle(b, b.bin("add", "u32", o, C(b, "u32", 4 * j))) for j in range(words)],
                [ex] * words,
            )
        ]
        b.uses_scratch = True
    elif seg == 1:  # scratch_*
        if saddr == 125:
            o = b.vget(f["addr"])
        elif saddr == 127:
            o = C(b, "u32", 0)
        else:
            o = read_sreg(b, saddr, "u32")
        o = b.bin("add", "u32", o, C(b, "u32", off & 0xFFFFFFFF))
        targets = [
            (
                "scratch",
                [swizzle(b, b.bin("add", "u32", o, C(b, "u32", 4 * j))) for j in range(words)],
                [ex] * words,
            )
        ]
        b.uses_scratch = True
    else:
        if seg == 2 and saddr != 125:
            a = b.bin("add", "u64", read_sreg(b, saddr, "u64"), b.cvt("u64", b.vget(f["addr"])))
        else:
            a = b.pack64(b.vget(f["addr"]), b.vget(f["addr"] + 1))
        a = b.bin("add", "u64", a, C(b, "u64", off & 0xFFFFFFFFFFFFFFFF))
        if seg == 0:
            hi = b.hi32(a)
            lo = b.lo32(a)
            is_lds = b.cmp("eq", "u32", hi, C(b, "u32", SHARED_APERTURE_HI))
            is_priv = b.cmp("eq", "u32", hi, C(b, "u32", PRIVATE_APERTURE_HI))
            is_glob = b.un("not", "b1", b.bin("or", "b1", is_lds, is_priv))
            m_l, m_p, m_g = (b.bin("and", "b1", ex, m) for m in (is_lds, is_priv, is_glob))
            targets = [
                ("global", [a], [m_g]),
                ("lds", [lo], [m_l]),
                (
                    "scratch",
                    [swizzle(b, b.bin("add", "u32", lo, C(b, "u32", 4 * j))) for j in range(words)],
                    [m_p] * words,
                ),
            ]
            b.uses_scratch = True
        else:
            targets = [("global", [a], [ex])]
    if verb == "load":
        _load(b, ins, kind, targets, f["vdst"])
    elif verb == "store":
        _store(b, ins, kind, targets, f["data"])
    else:
        _atomic(b, ins, kind, targets, f["data"], f["vdst"], bool(f.get("glc")))


def translate(ins, b: Builder):
    if ins.encoding in ("MUBUF", "MTBUF"):
        return mubuf(ins, b)
    if ins.encoding in ("FLAT", "GLOBAL", "SCRATCH"):
        return flat(ins, b)
    unsupported()
