"""The passes' results a NumPy module keeps (ir/passes/pipeline.Passes, numpy ModeBlocks): made
once for the blocks a dispatch compiles and the native library it asks for, and dropped when the
dispatch ends (ModeBlocks.settle) -- a cached module keeps only the registers live per block."""

from __future__ import annotations

import copy
import pathlib
import sys

from wavelift.backends.numpy import codegen

ROOT = pathlib.Path(__file__).resolve().parents[3]
if str(ROOT / "tests" / "cuda") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "cuda"))

SMALL = "gfx1010/basic-O2-w32-flat:divergent_loop:small"  # (test_cuda_backend.SMALL: < 200 instructions)


def test_a_dispatch_drops_the_blocks_it_kept(monkeypatch):
    from fixture_dispatches import clang_dispatches

    from wavelift.run.execute import execute_dispatch

    (mem, cfg) = next((m, c) for n, m, c in clang_dispatches() if n == SMALL)
    made, settled = [], []
    init, settle = codegen.ModeBlocks.__init__, codegen.ModeBlocks.settle

    def record_init(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    def record_settle(self):
        # (what the dispatch kept: every block it compiled, through the passes once)
        settled.append({m: len(p._done) for m, p in self.passes.items()})
        settle(self)

    monkeypatch.setattr(codegen.ModeBlocks, "__init__", record_init)
    monkeypatch.setattr(codegen.ModeBlocks, "settle", record_settle)
    r = execute_dispatch(copy.deepcopy(mem), cfg, 0, "numpy", "wave", cache={})
    assert r.refusal is None
    (mb,) = made
    assert mb.fns and settled and sum(settled[-1].values()) >= len({i for i, _ in mb.fns})
    for p in mb.passes.values():
        assert p._live is not None  # (kept, as before: liveness once per MODE)
        assert not p._fw and not p._kept and not p._done
