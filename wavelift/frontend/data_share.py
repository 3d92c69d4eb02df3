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
    # atomics: ds_<op>[_rtn]_<type>
    rtn = "_rtn_" in n
    op = DS_ATOMIC.get(n.replace("_rtn", ""))
    if op is None:
        unsupported()
    data = b.vget(f["data0"])
    args = [_addr(b, ins), ex, data]
    if op == "cmpst":
        # ds_cmpst_b32 addr, cmp (data0), src (data1): mem = (mem == cmp) ? src : mem
        args = [_addr(b, ins), ex, b.vget(f["data1"]), data]
        op = "cmpswap"
    old = b.emit("atomic", "u32", *args, uniform=False, space="lds", op=op, bits=32)
    if rtn:
        b.vset(f["vdst"], old)
