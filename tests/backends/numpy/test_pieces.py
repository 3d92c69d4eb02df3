"""Blocks made of pieces (backends/numpy/codegen.PieceCache, decision 0040) on the clang fixture
kernels: with pieces forced on for every dispatch and cut as finely as the rule allows (blocks
of two or more instructions, a cut wherever one is allowed half the time), every dispatch gives
the same memory bytes and refusal as whole blocks, and pieces are shared across kernels."""

from __future__ import annotations

import copy
import hashlib
import pathlib
import sys

import pytest

from wavelift.backends.numpy import codegen

ROOT = pathlib.Path(__file__).resolve().parents[3]
if str(ROOT / "tests" / "cuda") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "cuda"))


def _outcomes() -> list:
    from fixture_dispatches import clang_dispatches

    from wavelift.run.execute import execute_dispatch

    out = []
    for name, mem, cfg, *_ in clang_dispatches():
        m = copy.deepcopy(mem)
        r = execute_dispatch(m, cfg, 0, "numpy", "wave", cache={})
        h = hashlib.sha256()
        for a in m.allocations:
            h.update(a.base.to_bytes(8, "little") + m.read(a.base, a.size))
        out.append((name, r.refusal.code if r.refusal is not None else None, h.hexdigest()))
    return out


@pytest.mark.slow
def test_pieces_give_the_same_bytes_on_the_clang_fixtures(monkeypatch):
    want = _outcomes()
    monkeypatch.setattr(codegen, "PIECE_MIN_INSTRS", 2)
    monkeypatch.setattr(codegen, "PIECE_CUT", 2)
    monkeypatch.setattr(codegen.PIECES, "on", True)
    monkeypatch.setattr(codegen.PIECES, "fns", {})
    made = []
    orig = codegen.PieceCache.block

    def block(self, *a):
        f = orig(self, *a)
        made.append(f is not None)
        return f

    monkeypatch.setattr(codegen.PieceCache, "block", block)
    hits = codegen.PIECES.hits
    got = _outcomes()
    assert got == want
    assert sum(made) > len(want) and codegen.PIECES.hits > hits
