"""Memory encodings (DS, MUBUF, MTBUF, MIMG, FLAT/GLOBAL/SCRATCH, EXP, VINTRP) vs llvm-mc-19.

Every opcode of every memory encoding in the generated tables is decoded with varied operands
on both targets (wave32 and wave64) and compared, text and size, with what llvm-mc-19 prints
for the same bytes; random words with each encoding's major bits check that LLVM's invalid
encodings raise DecodeError.  `-m slow` runs a larger sweep.
"""

from __future__ import annotations

import collections
import importlib.util
import pathlib
import random
import shutil
import zlib

import pytest

from wavelift.isa.instruction import DecodeContext, DecodeError

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "gen_isa_memory_tables", ROOT / "tools" / "gen_isa_memory_tables.py"
)
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

from wavelift.isa.memory import decode_memory, load_memory_table  # noqa: E402

HAVE_LLVM = shutil.which(GEN.LLVM_MC) is not None
needs_llvm = pytest.mark.skipif(
    not HAVE_LLVM, reason="llvm-mc-19 not installed: cannot compare memory-encoding disassembly with LLVM"
)
TARGETS = ("gfx1030", "gfx1010")
ENC_OF = {
    0xD8000000 >> 26: "DS",
    0xE0000000 >> 26: "MUBUF",
    0xE8000000 >> 26: "MTBUF",
    0xDC000000 >> 26: "FLAT",
    0xF0000000 >> 26: "MIMG",
    0xF8000000 >> 26: "EXP",
    0xC8000000 >> 26: "VINTRP",
}

SOFFSETS = (
    0,
    5,
    101,
    105,
    0x6A,
    0x6B,
    0x6C,
    0x70,
    0x7B,
    0x7C,
    0x7D,
    0x7E,
    0x7F,
    0x80,
    0x81,
    0xC0,
    0xC1,
    0xD0,
    0xF0,
    0xF3,
    0xF7,
    0xF8,
    0xEB,
    0xFB,
    0xFD,
    0xFF,
    0xE0,
)
LITERALS = (0x3F800000, 0xBF800000, 5, 0xFFFFFFF0, 0x12345678, 0x3E22F983, 64, 65)


def _decode(words, target, wave64, pos=0):
    try:
        from wavelift.isa.decoder import decode_one
    except ImportError:  # the core's dispatcher is not there yet
        enc = ENC_OF[words[0] >> 26]
        return decode_memory(enc, tuple(words), pos, DecodeContext(target, wave64))
    b = b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in words)
    return decode_one(b, 0, target, wave64)


_SAFE = [False]


def _vr(rng):
    if _SAFE[0]:
        return rng.randrange(200)
    return rng.choice((0, 1, 7, 100, 200, 250, 252, 253, 254, 255, rng.randrange(256)))


def cases_for(target, rng, per_key):
    """(encoding, opcode-ident, words) covering every table key with varied fields."""
    tab = load_memory_table(target)
    B = GEN.build
    out = []

    def z(e, f, v):  # mostly respect the fields LLVM wants zero, sometimes not
        return 0 if f in e["zero"] and (_SAFE[0] or rng.random() < 0.85) else v

    for k, e in tab["DS"].items():
        op, gds = map(int, k.split(","))
        for i in range(per_key + 1):
            _SAFE[0] = i == 0  # one well-formed case per key, then varied ones
            out.append(
                (
                    "DS",
                    op,
                    B(
                        "DS",
                        op=op,
                        gds=gds,
                        offset0=z(e, "offset0", rng.choice((0, 0, 1, 255, rng.randrange(256)))),
                        offset1=z(e, "offset1", rng.choice((0, 0, 128, 255, rng.randrange(256)))),
                        addr=z(e, "addr", _vr(rng)),
                        data0=z(e, "data0", _vr(rng)),
                        data1=z(e, "data1", _vr(rng)),
                        vdst=z(e, "vdst", _vr(rng)),
                    ),
                )
            )
    for k, e in tab["MUBUF"].items():
        op, offen, idxen, lds, glc, tfe = map(int, k.split(","))
        for i in range(per_key + 1):
            _SAFE[0] = i == 0
            w = B(
                "MUBUF",
                op=op & 0x7F,
                op7=op >> 7,
                offen=offen,
                idxen=idxen,
                lds=lds,
                glc=glc,
                tfe=tfe,
                offset=rng.choice((0, 1, 4095, rng.randrange(4096))),
                slc=z(e, "slc", rng.randrange(2)),
                dlc=z(e, "dlc", rng.randrange(2)),
                vaddr=_vr(rng),
                vdata=_vr(rng),
                srsrc=2 if _SAFE[0] else rng.choice((0, 1, 2, 25, 26, 27, 28, 30, 31)),
                soffset=5 if _SAFE[0] else rng.choice(SOFFSETS),
            )
            out.append(("MUBUF", op, w + ((rng.choice(LITERALS),) if w[1] >> 24 == 255 else ())))
    for k in tab["MTBUF"]:
        op, offen, idxen, tfe = map(int, k.split(","))
        for i in range(per_key + 1):
            _SAFE[0] = i == 0
            w = B(
                "MTBUF",
                op=op & 7,
                op3=op >> 3,
                offen=offen,
                idxen=idxen,
                tfe=tfe,
                offset=rng.choice((0, 4095, rng.randrange(4096))),
                glc=rng.randrange(2),
                slc=rng.randrange(2),
                dlc=rng.randrange(2),
                format=1 if _SAFE[0] else rng.randrange(128),
                vaddr=_vr(rng),
                vdata=_vr(rng),
                srsrc=2 if _SAFE[0] else rng.choice((0, 2, 27, 31)),
                soffset=5 if _SAFE[0] else rng.choice(SOFFSETS),
            )
            out.append(("MTBUF", op, w + ((rng.choice(LITERALS),) if w[1] >> 24 == 255 else ())))
    for k, e in tab["FLAT"].items():
        seg, op, glc, off, lds = map(int, k.split(","))
        for i in range(per_key + 1):
            _SAFE[0] = i == 0
            saddr = (
                0x7D
                if off
                else 10
                if _SAFE[0]
                else rng.choice(
                    (0, 1, 10, 11, 104, 105, 0x6A, 0x6B, 0x6C, 0x7C, 0x7E, 0x7F, rng.randrange(128))
                )
            )
            out.append(
                (
                    "FLAT",
                    (seg, op),
                    B(
                        "FLAT",
                        seg=seg,
                        op=op,
                        glc=glc,
                        lds=lds,
                        saddr=saddr,
                        offset=rng.choice((0, 1, 0x7FF, 0x800, 0xFFF, rng.randrange(4096))),
                        slc=z(e, "slc", rng.randrange(2)),
                        dlc=z(e, "dlc", rng.randrange(2)),
                        addr=_vr(rng),
                        data=_vr(rng),
                        vdst=_vr(rng),
                        nv=z(e, "nv", 1),
                    ),
                )
            )
    _SAFE[0] = False
    for k, e in tab["MIMG"].items():
        op = int(k)
        # one well-formed case per opcode (the generator's base probe), then varied ones
        out.append(
            ("MIMG", op, B("MIMG", op=op & 0x7F, op7=op >> 7, vdata=8, vaddr=40, srsrc=2, **e["base"]))
        )
        for _ in range(per_key * 4):
            b = dict(e["base"])
            for fl in ("unrm", "glc", "slc", "dlc", "r128", "tfe", "lwe", "a16", "d16"):
                if fl not in e.get("fixed", ()):
                    b[fl] = rng.choice((0, 0, 1))
            if "dmask" not in e.get("fixed", ()):
                b["dmask"] = rng.randrange(16)
            nsa = rng.choice((0, 0, 1, 2, 3))
            extra = tuple(
                rng.getrandbits(32)
                if rng.random() < 0.3
                else int.from_bytes(bytes(rng.randrange(250) for _ in range(4)), "little")
                for _ in range(nsa)
            )
            w = B(
                "MIMG",
                op=op & 0x7F,
                op7=op >> 7,
                nsa=nsa,
                dim=rng.randrange(8),
                vaddr=_vr(rng),
                vdata=_vr(rng),
                srsrc=rng.choice((0, 1, 2, 26, 27, 31)),
                ssamp=rng.choice((0, 1, 3, 25, 26, 27, 31)) if e["sampler"] else 0,
                **b,
            )
            out.append(("MIMG", op, w + extra))
    for _ in range(per_key * 40):
        out.append(
            (
                "EXP",
                0,
                B(
                    "EXP",
                    en=rng.randrange(16),
                    target=rng.randrange(64),
                    compr=rng.randrange(2),
                    done=rng.randrange(2),
                    vm=rng.randrange(2),
                    vsrc0=_vr(rng),
                    vsrc1=_vr(rng),
                    vsrc2=_vr(rng),
                    vsrc3=_vr(rng),
                ),
            )
        )
    for _ in range(per_key * 20):
        op = rng.randrange(4)
        out.append(
            (
                "VINTRP",
                op,
                B(
                    "VINTRP",
                    op=op,
                    vsrc=_vr(rng),
                    attrchan=rng.randrange(4),
                    attr=rng.randrange(64),
                    vdst=_vr(rng),
                ),
            )
        )
    return out


def random_words(rng, n):
    """Random bits under each memory encoding's major opcode (invalid ones included)."""
    out = []
    for base, mask in (
        (0xD8000000, 0x03FFFFFF),
        (0xE0000000, 0x03FFFFFF),
        (0xE8000000, 0x03FFFFFF),
        (0xDC000000, 0x03FFFFFF),
        (0xF0000000, 0x03FFFFFF),
        (0xF8000000, 0x03FFFFFF),
        (0xC8000000, 0x03FFFFFF),
    ):
        for _ in range(n):
            w = (
                base | rng.getrandbits(32) & mask,
                rng.getrandbits(32),
                rng.getrandbits(32),
                rng.getrandbits(32),
                rng.getrandbits(32),
            )
            enc = ENC_OF[base >> 26]
            # how many dwords the raw bits ask for (independent of the decoder under test)
            n = {"VINTRP": 1, "MIMG": 2 + (w[0] >> 1 & 3)}.get(enc, 2)
            if enc in ("MUBUF", "MTBUF") and w[1] >> 24 == 255:
                n = 3
            out.append((enc, None, w[:n]))
    return out


def compare(cases, target, wave64):
    """Return (mismatches, covered-opcodes-per-encoding)."""
    ref = GEN.llvm_disassemble([w for _, _, w in cases], target, wave64)
    bad = []
    covered = collections.defaultdict(set)
    for (enc, op, words), (text, size) in zip(cases, ref):
        try:
            ins = _decode(words, target, wave64)
            got = (ins.text, ins.size)
        except DecodeError:
            got = (None, None)
        exp = (text, size)
        if text is not None and size == -1:  # LLVM decoded fewer bytes than we gave it
            exp = (text, got[1] if got[1] is not None and got[1] < 4 * len(words) else "<less>")
        if got != exp:
            bad.append((enc, [hex(w) for w in words], exp, got))
        elif text is not None and op is not None:
            covered[ins.encoding if enc == "FLAT" else enc].add(op)
    return bad, covered


def _report(target, wave64, bad, covered, request=None):
    counts = {k: len(v) for k, v in sorted(covered.items())}
    print(f"\n{target} wave{'64' if wave64 else '32'}: opcodes covered {counts}")
    return counts


@needs_llvm
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("wave64", (False, True))
def test_sweep_every_opcode(target, wave64):
    rng = random.Random(zlib.crc32(f"{target}{wave64}".encode()))
    cases = cases_for(target, rng, per_key=1 if wave64 else 2)
    bad, covered = compare(cases, target, wave64)
    counts = _report(target, wave64, bad, covered)
    assert not bad, f"{len(bad)} of {len(cases)} differ from LLVM, first: " + "\n".join(map(str, bad[:15]))
    tab = load_memory_table(target)
    # every opcode of the tables decoded to LLVM's text at least once
    assert counts["DS"] == len({k.split(",")[0] for k in tab["DS"]})
    assert counts["MUBUF"] == len({k.split(",")[0] for k in tab["MUBUF"]})
    assert counts["MTBUF"] == len({k.split(",")[0] for k in tab["MTBUF"]})
    nflat = len({tuple(k.split(",")[:2]) for k in tab["FLAT"]})
    assert counts["FLAT"] + counts.get("GLOBAL", 0) + counts.get("SCRATCH", 0) == nflat
    assert counts["MIMG"] == len(tab["MIMG"])


@needs_llvm
@pytest.mark.parametrize("target", TARGETS)
def test_mimg_sweep(target):
    rng = random.Random(3)
    cases = [c for c in cases_for(target, rng, per_key=2) if c[0] == "MIMG"]
    bad, covered = compare(cases, target, False)
    print(
        f"\n{target}: MIMG opcodes matching LLVM: {len(covered['MIMG'])} of "
        f"{len(load_memory_table(target)['MIMG'])}; differing cases {len(bad)} of {len(cases)}"
    )
    assert not bad, "\n".join(map(str, bad[:15]))
    assert len(covered["MIMG"]) == len(load_memory_table(target)["MIMG"])


@needs_llvm
@pytest.mark.parametrize("target", TARGETS)
def test_random_words_invalid_and_valid(target):
    rng = random.Random(7 if target == "gfx1030" else 8)
    cases = random_words(rng, 300)
    bad, _ = compare(cases, target, False)
    assert not bad, f"{len(bad)} of {len(cases)} differ from LLVM, first: " + "\n".join(map(str, bad[:15]))


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("wave64", (False, True))
def test_sweep_large(target, wave64):
    rng = random.Random(1000 + wave64)
    cases = cases_for(target, rng, per_key=8) + random_words(rng, 5000)
    bad, covered = compare(cases, target, wave64)
    _report(target, wave64, bad, covered)
    assert not bad, f"{len(bad)} of {len(cases)} differ from LLVM, first: " + "\n".join(map(str, bad[:15]))


@pytest.mark.parametrize("target", TARGETS)
def test_truncated_raises(target):
    ctx = DecodeContext(target, False)
    B = GEN.build
    full = {
        "DS": B("DS", op=13),
        "MUBUF": B("MUBUF", op=12, soffset=0xFF),
        "FLAT": B("FLAT", op=12, seg=2, saddr=0x7D),
        "EXP": B("EXP", en=1),
        "MIMG": B("MIMG", op=0x20, dmask=1, nsa=2, dim=1),
    }
    for enc, w in full.items():
        with pytest.raises(DecodeError):
            decode_memory(enc, w[:1], 0, ctx)
    # NSA: two extra address dwords are announced but only one is there
    with pytest.raises(DecodeError):
        decode_memory("MIMG", B("MIMG", op=0x28, dmask=1, nsa=2, dim=2) + (0x01020304,), 0, ctx)
    # MUBUF literal soffset without its literal
    with pytest.raises(DecodeError):
        decode_memory("MUBUF", full["MUBUF"], 0, ctx)
    with pytest.raises(DecodeError):
        decode_memory("VINTRP", (), 0, ctx)


def test_fields_for_executor():
    ctx = DecodeContext("gfx1030", False)
    B = GEN.build
    ins = decode_memory(
        "FLAT", B("FLAT", op=12, seg=2, saddr=10, addr=3, vdst=4, offset=0xFFF, glc=1), 0x40, ctx
    )
    assert ins.encoding == "GLOBAL" and ins.offset == 0x40 and ins.size == 8
    assert ins.fields["saddr"] == 10 and ins.fields["vdst"] == 4 and ins.fields["glc"] == 1
    assert ins.fields["offset"] == 0xFFF and ins.fields["seg"] == 2
    ins = decode_memory("MIMG", B("MIMG", op=0x20, dmask=1, nsa=1, dim=1, vaddr=5) + (0x0B0A0908,), 0, ctx)
    assert ins.fields["vaddr_nsa"] == (5, 8) and ins.size == 12
    ins = decode_memory("DS", B("DS", op=14, offset0=3, offset1=9, addr=1, data0=2, data1=3), 0, ctx)
    assert (ins.fields["offset0"], ins.fields["offset1"], ins.fields["data1"]) == (3, 9, 3)


def test_result_cache_offsets_and_errors():
    """Cached decodes come back at the caller's offset; cached invalid encodings re-raise with
    the caller's offset; truncated input is never served from the cache."""
    from wavelift.isa import memory as M

    ctx = DecodeContext("gfx1030", False)
    B = GEN.build
    w = B("FLAT", op=12, seg=2, saddr=0x7D, addr=2, vdst=1)
    a = decode_memory("FLAT", w + (0, 0), 0x10, ctx)
    b = decode_memory("FLAT", w + (5,), 0x24, ctx)
    assert (a.offset, b.offset) == (0x10, 0x24) and a.text == b.text and b.size == 8
    assert b.words == w and decode_memory("FLAT", w, 0x10, ctx).offset == 0x10
    ref = M._decode_uncached("FLAT", w, 0x24, ctx)
    assert ref == b
    bad = B("DS", op=22)  # no such DS opcode on gfx10
    for off in (0, 0x40):
        with pytest.raises(DecodeError) as ei:
            decode_memory("DS", bad, off, ctx)
        assert ei.value.offset == off and ei.value.bytes == b"".join(x.to_bytes(4, "little") for x in bad)
    lit = B("MUBUF", op=12, vdata=1, srsrc=2, soffset=0xFF)
    assert decode_memory("MUBUF", lit + (0x1234,), 0, ctx).size == 12
    with pytest.raises(DecodeError):
        decode_memory("MUBUF", lit, 0, ctx)
    nsa = B("MIMG", op=0x20, dmask=1, nsa=1, dim=1, vaddr=5) + (0x0B0A0908,)
    assert decode_memory("MIMG", nsa, 0, ctx).size == 12
    with pytest.raises(DecodeError):
        decode_memory("MIMG", nsa[:2], 0, ctx)
    # other targets keep their own results
    assert (
        decode_memory("DS", B("DS", op=13, addr=1, data0=2), 0, DecodeContext("gfx1010")).text
        == decode_memory("DS", B("DS", op=13, addr=1, data0=2), 0, ctx).text
    )
