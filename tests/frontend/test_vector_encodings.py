"""``lane_instructions`` counts every vector instruction: each encoding the decoder can name
(isa/encodings.py, every generation) is scalar (SOP*, SMEM), export, or in frontend.program.VECTOR.
GFX12's VFLAT/VBUFFER were once missing, so a gfx1200 program's loads and stores went uncounted."""

from __future__ import annotations

from wavelift.frontend.program import VECTOR
from wavelift.isa import encodings

SCALAR = {"SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "EXP"}


def _named_encodings() -> set[str]:
    names: set[str] = set()
    for v in vars(encodings).values():
        if isinstance(v, dict):
            names |= {x for x in [*v.keys(), *v.values()] if isinstance(x, str) and x.isupper()}
    return names


def test_every_vector_encoding_is_counted():
    names = _named_encodings()
    assert {"VOP1", "VFLAT", "VBUFFER", "VOPD", "SMEM"} <= names  # the walk finds the tables
    assert sorted(names - SCALAR - VECTOR) == []
    assert not (VECTOR & SCALAR)
