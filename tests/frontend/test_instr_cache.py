"""frontend/instr_cache.py (decision 0035): a program translated with instructions' IR replayed
from the cache is, op for op and value id for value id, the program a fresh translation gives.

Checked on every function symbol of the clang fixture code objects (gfx1030, gfx1100, gfx1200,
wave32 and wave64: scalar and vector ALU, memory, scratch, branches, calls) and on hand-made
words whose IR reads the instruction's address (s_getpc_b64) or the program's scratch decision:
each translated three times -- cache off, cache filling, cache hit -- and compared as the IR's
text (ir/dump.py op_text, with each op's instruction index, the block's fields and terminator).
"""

from __future__ import annotations

import struct

import pytest
from testpaths import FIXTURES

from wavelift.driver.codeobject import CodeObject
from wavelift.frontend import instr_cache
from wavelift.frontend.program import translate
from wavelift.ir.dump import op_text

TARGETS = ("gfx1030", "gfx1100", "gfx1200")


def _text(prog) -> list[str]:
    out = []
    for blk in prog.blocks:
        out.append(f"block {blk.index} {blk.start} {blk.instrs} {blk.valu} {blk.uses_float} {blk.term!r}")
        out += [f"{op_text(op)} @{op.instr}" for op in blk.ops]
    out.append(f"{prog.max_vgpr} {prog.uses_scratch} {prog.max_lds_offset}")
    return out


def _translate(code: bytes, target: str, wave: int, base: int, entry: int) -> list[str]:
    try:
        return _text(translate(code, target, wave, base, entry=entry))
    except Exception as e:  # a refusal must be the same refusal
        return [type(e).__name__, str(e)]


def _three(code, target, wave, base=0x1000, entry=0):
    instr_cache._CACHE.clear()
    instr_cache.ENABLED[0] = False
    try:
        fresh = _translate(code, target, wave, base, entry)
    finally:
        instr_cache.ENABLED[0] = True
    filling = _translate(code, target, wave, base, entry)
    hit = _translate(code, target, wave, base, entry)
    return fresh, filling, hit


def _programs(target: str, kinds):
    for path in sorted((FIXTURES / target).glob("*.hsaco")):
        if not path.name.startswith(kinds):
            continue
        co = CodeObject.from_file(path)
        text = co.text
        if text is None:
            continue
        data = co.section_data(text)
        wave = 64 if "w64" in path.name else 32
        for sym in co.symbols:
            off = sym.value - text.address
            if sym.defined and sym.type == 2 and 0 <= off < len(data) and off % 4 == 0:
                yield path.name, sym.name, data, wave, off


def _check_fixtures(target, kinds):
    n = hits = 0
    for _, _, data, wave, off in _programs(target, kinds):
        fresh, filling, hit = _three(data, target, wave, entry=off)
        assert fresh == filling
        assert fresh == hit
        n += 1
        hits += fresh[0] not in ("Refused", "Unsupported")
    assert n >= 2 and hits >= 2, (n, hits)


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_programs_translate_the_same_from_the_cache(target):
    _check_fixtures(target, ("basic-O2-", "stack-O2-", "stack-O0-w32"))  # ALU, memory, scratch, calls


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_other_fixture_programs_translate_the_same_from_the_cache(target):
    _check_fixtures(target, ("math-", "basic-O0-", "stack-O0-w64"))  # ~30 s a target


def test_the_cache_is_used_and_keyed_by_words_not_offsets():
    # s_mov_b32 s0, 7 at two offsets of two programs: one entry
    mov = struct.pack("<I", 0xBE800087)
    end = struct.pack("<I", 0xBFB00000)  # s_endpgm (gfx11)
    instr_cache._CACHE.clear()
    translate(mov + end, "gfx1100", 32, 0x1000)
    n = len(instr_cache._CACHE)
    assert n >= 1
    translate(mov + mov + end, "gfx1100", 32, 0x1000)
    assert len(instr_cache._CACHE) == n


def test_an_address_read_by_the_ir_is_in_the_key():
    # s_getpc_b64 s[0:1] (gfx11: SOP1 op 0x47) at different offsets and program addresses: the
    # constant it writes follows the instruction's address, never a cached one
    getpc = struct.pack("<I", 0xBE804700)
    nop = struct.pack("<I", 0xBF800000)  # s_nop 0
    end = struct.pack("<I", 0xBFB00000)
    for code, base in ((getpc + end, 0x1000), (nop + getpc + end, 0x1000), (getpc + end, 0x20000)):
        fresh, filling, hit = _three(code, "gfx1100", 32, base=base)
        assert fresh == filling == hit
        want = base + code.index(getpc) + 4
        assert any(f"({want:#x})" in line or f"{want} (" in line for line in hit), hit


def test_a_full_cache_is_cleared_and_results_stay_the_same(monkeypatch):
    monkeypatch.setattr(instr_cache, "CACHE_MAX", 3)
    movs = b"".join(struct.pack("<I", 0xBE800080 | (k << 16) | j) for k in range(4) for j in range(3))
    code = movs + struct.pack("<I", 0xBFB00000)
    fresh, filling, hit = _three(code, "gfx1100", 32)
    assert fresh == filling == hit
    assert len(instr_cache._CACHE) <= 3
