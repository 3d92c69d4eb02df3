"""DS: LDS loads/stores (incl. read2/write2, st64), LDS atomics, ds_swizzle, ds_permute/bpermute."""

from __future__ import annotations

from typing import Literal

from ..ir.builder import Builder
from .common import C, unsupported
from .lanes import swizzle_source

READS = {
    "ds_read_b32": (4, 1, None),
    "ds_read_b64": (8, 2, None),
    "ds_read_b96": (12, 3, None),
    "ds_read_b128": (16, 4, None),
    "ds_read_u8": (1, 1, None),
    "ds_read_i8": (1, 1, "s8"),
    "ds_read_u16": (2, 1, None),
    "ds_read_i16": (2, 1, "s16"),
    "ds_read_u8_d16": (1, 1, "d16lo"),
    "ds_read_u8_d16_hi": (1, 1, "d16hi"),
    "ds_read_i8_d16": (1, 1, "d16lo_s8"),
    "ds_read_i8_d16_hi": (1, 1, "d16hi_s8"),
    "ds_read_u16_d16": (2, 1, "d16lo"),
    "ds_read_u16_d16_hi": (2, 1, "d16hi"),
}
# name -> (bytes, dwords from data0; "hi": data0's high 16 bits)
WRITES: dict[str, tuple[int, int | Literal["hi"]]] = {
    "ds_write_b32": (4, 1),
    "ds_write_b64": (8, 2),
    "ds_write_b96": (12, 3),
    "ds_write_b128": (16, 4),
    "ds_write_b8": (1, 1),
    "ds_write_b16": (2, 1),
    "ds_write_b8_d16_hi": (1, "hi"),
    "ds_write_b16_d16_hi": (2, "hi"),
}
# ds atomic name (without _rtn) -> IR atomic op
DS_ATOMIC = {
    "ds_add_u32": "add",
    "ds_sub_u32": "sub",
    "ds_inc_u32": "inc",
    "ds_dec_u32": "dec",
    "ds_min_i32": "smin",
    "ds_max_i32": "smax",
    "ds_min_u32": "umin",
    "ds_max_u32": "umax",
    "ds_and_b32": "and",
    "ds_or_b32": "or",
    "ds_xor_b32": "xor",
    "ds_wrxchg_b32": "swap",
    "ds_cmpst_b32": "cmpst",
}
NOPS = {"ds_nop"}


def _addr(b, ins, extra=0):
    f = ins.fields
    off = f.get("offset0", 0) | (f.get("offset1", 0) << 8)
    return b.bin("add", "u32", b.vget(f["addr"]), C(b, "u32", off + extra))


def _post(b, post, w, old_reg):
    from .vector_memory import _post as vpost

    return vpost(b, None, {"s8": "s8", "s16": "s16"}.get(post, post), w, old_reg)


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n in NOPS:
        return
    if f.get("gds"):
        unsupported("GDS")
    ex = b.exec()
    if n in READS:
        nbytes, words, post = READS[n]
        ld = b.emit("load", "u32", _addr(b, ins), ex, uniform=False, space="lds", nbytes=nbytes, words=words)
        for j in range(words):
            w = b.emit("word", "u32", ld, k=j)
            b.vset(f["vdst"] + j, _post(b, post, w, f["vdst"] + j) if post else w)
        return
    if n in WRITES:
        nbytes, dwords = WRITES[n]
        if dwords == "hi":
            ws = [b.bin("shr", "u32", b.vget(f["data0"]), C(b, "u32", 16))]
        else:
            ws = [b.vget(f["data0"] + j) for j in range(dwords)]
        b.effect("store", "u32", _addr(b, ins), ex, *ws, space="lds", nbytes=nbytes)
        return
    if n.startswith(("ds_read2", "ds_write2")):
        size = 8 if n.endswith("b64") else 4
        scale = size * (64 if "st64" in n else 1)
        base = b.vget(f["addr"])
        words = size // 4
        for k, o in enumerate((f.get("offset0", 0), f.get("offset1", 0))):
            a = b.bin("add", "u32", base, C(b, "u32", o * scale))
            if n.startswith("ds_read2"):
                ld = b.emit("load", "u32", a, ex, uniform=False, space="lds", nbytes=size, words=words)
                for j in range(words):
                    b.vset(f["vdst"] + k * words + j, b.emit("word", "u32", ld, k=j))
            else:
                reg = f["data0"] if k == 0 else f["data1"]
                b.effect(
                    "store", "u32", a, ex, *[b.vget(reg + j) for j in range(words)], space="lds", nbytes=size
                )
        return
    if n == "ds_swizzle_b32":
        off = f.get("offset0", 0) | (f.get("offset1", 0) << 8)
        src, _ = swizzle_source(b, off)
        v = b.emit("shuffle", "u32", b.vget(f["addr"]), src, uniform=False)
        act = b.emit("shuffle", "u32", b.cvt("u32", ex), src, uniform=False)
        b.vset(f["vdst"], b.select(b.cmp("ne", "u32", act, C(b, "u32", 0)), v, C(b, "u32", 0)))
        return
    if n in ("ds_bpermute_b32", "ds_permute_b32"):
        lane = b.bin(
            "and", "u32", b.bin("shr", "u32", _addr(b, ins), C(b, "u32", 2)), C(b, "u32", b.wave_size - 1)
        )
        data = b.vget(f["data0"])
        if n == "ds_bpermute_b32":
            # backward permute: each active lane reads the source lane's VGPR whether or not
            # that lane is active (ISA pseudo-code; ACO's GFX10 wave64 shuffle relies on it)
            b.vset(f["vdst"], b.emit("shuffle", "u32", data, lane, uniform=False))
        else:
            # forward permute: lane (addr/4) receives this lane's data; lanes nobody writes get 0
            v = b.emit("permute", "u32", data, lane, ex, uniform=False)
            b.vset(f["vdst"], v)
        return
    if n.startswith("ds_wrxchg2"):
        # DS_STOREXCHG_2ADDR[_STRIDE64]_RTN_B32/B64 (RDNA3 guide): MEM[base + OFFSET0 * size
        # (* 64)] = DATA0, MEM[base + OFFSET1 * size (* 64)] = DATA1; returns both old values
        size = 8 if n.endswith("b64") else 4
        scale = size * (64 if "st64" in n else 1)
        base = b.vget(f["addr"])
        words = size // 4
        for k, o in enumerate((f.get("offset0", 0), f.get("offset1", 0))):
            a = b.bin("add", "u32", base, C(b, "u32", o * scale))
            old = _ds_atomic(b, a, ex, "swap", f["data0"] if k == 0 else f["data1"], None, words)
            _set_words(b, f["vdst"] + k * words, old, words)
        return
    # atomics: ds_<op>[_rtn]_<type>
    rtn = "_rtn_" in n
    plain = n.replace("_rtn", "")
    words = 2 if plain.endswith("64") else 1
    if words == 2:  # the 64-bit form of a 32-bit atomic: ds_add_u64, ds_wrxchg_rtn_b64, ...
        plain = plain[:-2] + "32"
    op = DS_ATOMIC.get(plain)
    if op is None:
        unsupported()
    data, other = f["data0"], None
    if op == "cmpst":
        # ds_cmpst_b32 addr, cmp (data0), src (data1): mem = (mem == cmp) ? src : mem
        data, other = f["data1"], f["data0"]
        op = "cmpswap"
    old = _ds_atomic(b, _addr(b, ins), ex, op, data, other, words)
    if rtn:
        _set_words(b, f["vdst"], old, words)


def _ds_atomic(b, addr, ex, op, data_reg, cmp_reg, words):
    """The LDS atomic ``op`` of ``words`` dwords from VGPRs data_reg (and cmp_reg): the old value."""

    def rd(r):
        return b.pack64(b.vget(r), b.vget(r + 1)) if words == 2 else b.vget(r)

    t = "u64" if words == 2 else "u32"
    args = [addr, ex, rd(data_reg)] + ([rd(cmp_reg)] if cmp_reg is not None else [])
    return b.emit("atomic", t, *args, uniform=False, space="lds", op=op, bits=32 * words)


def _set_words(b, reg, v, words):
    if words == 2:
        b.vset(reg, b.lo32(v))
        b.vset(reg + 1, b.hi32(v))
    else:
        b.vset(reg, v)
