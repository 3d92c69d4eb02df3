"""The compiled per-entry decoders and the result cache give exactly what the reference renderer
(`decoder.render_entry`, the one the table generators check against LLVM) gives (no LLVM)."""

import struct

import pytest

from wavelift.isa import DecodeError, decode_one
from wavelift.isa import decoder as D
from wavelift.isa.encodings import classify

from .sweep import ENCS, gen_words

CONFIGS = [("gfx1030", False), ("gfx1030", True), ("gfx1010", False), ("gfx1010", True)]


def reference(code, target, wave64):
    """decode_one's result the slow way: table entry + render_entry (None = DecodeError)."""
    tab = D.load_table(target, wave64)
    w0 = struct.unpack_from("<I", code)[0]
    enc = classify(w0)
    two = enc in ("VOP3", "SMEM", "VOP3P")
    val = w0 | (struct.unpack_from("<I", code, 4)[0] << 32 if two else 0)
    size = 8 if two else 4
    e = tab[enc].get((w0 >> D._LAY_POS[enc]["op"][0]) & D._LAY_POS[enc]["op"][1])
    if e is None:
        return None
    lay = e.get("enc") or enc
    if enc in ("VOP1", "VOP2", "VOPC") and w0 & 0x1FF in (249, 250, 233, 234):
        return "ext"
    D._prep(e, lay, tab["_cm"]) if e.get("_prep") != lay or "_cache" not in e else None
    if val & e["_rej"]:
        return None
    lit = None
    if e.get("lit") or any((val >> lo) & mk == lc for lo, mk, lc in e["_lits"]):
        lit = struct.unpack_from("<I", code, size)[0]
        size += 4
    try:
        text, ops = D.render_entry(e, lay, val, lit, target, wave64)
    except D.BadEncoding:
        return None
    return (text, ops, size, lit, D._fields(lay, val), lay, e.get("variant", ""), e["name"])


@pytest.mark.parametrize("target,wave64", CONFIGS, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS])
def test_compiled_equals_reference(target, wave64):
    old = D.set_result_cache(False)
    try:
        n = 0
        for k, enc in enumerate(ENCS):
            for op, b in gen_words(enc, target, wave64, 6, 7 + k):
                want = reference(b, target, wave64)
                if want == "ext":
                    continue
                try:
                    ins = decode_one(b, 0, target, wave64, base=0x100)
                    got = (
                        ins.text,
                        ins.operands,
                        ins.size,
                        ins.literal,
                        ins.fields,
                        ins.encoding,
                        ins.variant,
                        ins.name,
                    )
                    assert ins.offset == 0x100 and ins.opcode == op
                    assert b[: ins.size] == struct.pack(f"<{len(ins.words)}I", *ins.words)
                except DecodeError as ex:
                    got = None
                    assert ex.offset == 0x100
                assert got == want, (enc, b.hex())
                n += 1
        assert n > 3000
    finally:
        D.set_result_cache(old)


def test_result_cache_offsets_and_errors():
    """Cached decodes come back at the caller's offset with the same content; longer
    instructions (literal, 2-3 dwords) are matched on all their dwords; truncated input and
    invalid bytes are never served from the cache."""
    D.set_result_cache(True)
    lit = struct.pack("<II", 0x060204FF, 0x3F800000)  # v_add_f32_e32 v1, 1.0, v2
    lit2 = struct.pack("<II", 0x060204FF, 0x40000000)  # same first dword, other literal
    a = decode_one(lit, 0, base=0x10)
    b = decode_one(b"\0" * 4 + lit2, 4)
    c = decode_one(lit, 0, base=0x40)
    assert (a.text, b.text, c.text) == (
        "v_add_f32_e32 v1, 1.0, v2",
        "v_add_f32_e32 v1, 2.0, v2",
        "v_add_f32_e32 v1, 1.0, v2",
    )
    assert (a.offset, b.offset, c.offset) == (0x10, 4, 0x40) and c.words == a.words
    with pytest.raises(DecodeError):
        decode_one(lit[:4], 0)  # literal missing
    mubuf = struct.pack("<III", 0xE0300000, 0xFF020100, 0x1234)  # literal soffset
    x = decode_one(mubuf, 0)
    assert x.size == 12 and decode_one(mubuf, 0, base=8).offset == 8
    with pytest.raises(DecodeError):
        decode_one(mubuf[:8], 0)
    for off in (0, 4):
        with pytest.raises(DecodeError) as ei:
            decode_one(b"\0" * off + b"\xff\xff\xff\xff", off)
        assert ei.value.offset == off
    D.set_result_cache(False)
    y = decode_one(mubuf, 0)
    D.set_result_cache(True)
    assert y == x
