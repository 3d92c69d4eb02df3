"""docs/isa-coverage.md is what `python -m wavelift.isa.coverage` prints from the committed
tables (regenerate it after regenerating a table)."""

import os

from wavelift.isa import coverage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_coverage_doc_is_current():
    with open(os.path.join(ROOT, "docs", "isa-coverage.md")) as f:
        assert f.read() == coverage.render(), (
            "docs/isa-coverage.md is stale: python -m wavelift.isa.coverage > docs/isa-coverage.md"
        )


def test_coverage_counts_are_real():
    ops = coverage.opcodes("gfx1030", False)
    assert ops["SOPP"][1] == "s_endpgm" and ops["VOP2"][3] == "v_add_f32"
    assert len(ops["VOP3"]) > 400 and len(ops["MUBUF"]) > 60 and len(ops["VOPC SDWA"]) > 100
