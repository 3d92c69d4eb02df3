"""SMEM: s_load_dword*, s_buffer_load_dword* (uniform loads through the window check)."""

from __future__ import annotations

from ..ir.builder import Builder
from .common import read_sreg, sext48, unsupported, write_sdst

_WIDTH = {"dword": 1, "dwordx2": 2, "dwordx4": 4, "dwordx8": 8, "dwordx16": 16}
NOPS = {"s_dcache_inv", "s_dcache_wb", "s_gl1_inv", "s_memtime", "s_memrealtime"}


def _c(b, t, v):
    return b.const(t, v)


def _offset(b, ins):
    f = ins.fields
    bits = 24 if "cpol" in f else 21  # GFX12's SMEM (its cache policy field): 24-bit signed
    off = f.get("offset", 0) & ((1 << bits) - 1)
    if off >> (bits - 1):
        off -= 1 << bits
    v = _c(b, "u64", off & 0xFFFFFFFFFFFFFFFF)
    so = f.get("soffset", 125)
    if so != 125:
        v = b.bin("add", "u64", v, b.cvt("u64", read_sreg(b, so, "u32")))
    return v


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n in ("s_memtime", "s_memrealtime"):
        write_sdst(b, f["sdata"], _c(b, "u64", 0))
        return
    if n in NOPS:
        return
    true = b.cmp("eq", "u32", _c(b, "u32", 0), _c(b, "u32", 0))
    sbase = f["sbase"] * 2
    if n.startswith("s_load_"):
        k = _WIDTH.get(n[7:])
        if k is None:
            unsupported()
        base = read_sreg(b, sbase, "u64")
        addr = b.bin(
            "and", "u64", b.bin("add", "u64", base, _offset(b, ins)), _c(b, "u64", ~3 & 0xFFFFFFFFFFFFFFFF)
        )
        ld = b.emit("load", "u32", addr, true, uniform=True, space="global", nbytes=4 * k, words=k)
        for j in range(k):
            b.sset(f["sdata"] + j, b.emit("word", "u32", ld, k=j))
        return
    if n.startswith("s_buffer_load_"):
        k = _WIDTH.get(n[14:])
        if k is None:
            unsupported()
        w0, w1, w2 = (b.sget(sbase + j) for j in range(3))
        base = buffer_base(b, w0, w1)
        off = b.bin("and", "u64", _offset(b, ins), _c(b, "u64", 0xFFFFFFFC))
        for j in range(k):
            o = b.bin("add", "u64", off, _c(b, "u64", 4 * j))
            ok = b.cmp("lt", "u64", o, b.cvt("u64", w2))
            ld = b.emit(
                "load",
                "u32",
                b.bin("add", "u64", base, o),
                ok,
                uniform=True,
                space="global",
                nbytes=4,
                words=1,
            )
            v = b.select(ok, b.emit("word", "u32", ld, k=0), _c(b, "u32", 0))
            b.sset(f["sdata"] + j, v)
        return
    unsupported()


def buffer_base(b, w0, w1):
    """48-bit V# base address, sign-extended from bit 47 (canonical form)."""
    return sext48(b, b.pack64(w0, b.bin("and", "u32", w1, _c(b, "u32", 0xFFFF))))
