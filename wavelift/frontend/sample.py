"""MIMG sampling: ``image_sample*`` and ``image_gather4*`` (a T# and an S#).

Translated for null descriptors only (TYPE 0: they read 0); an active lane sampling a real
image refuses the dispatch (``image.sampling``).  Texel addressing and the T# checks are
frontend/image.py's (``describe``, ``texel_address``)."""

from __future__ import annotations

from ..ir.builder import Builder
from . import image
from .common import unsupported

INSTRUCTIONS = ("image_sample", "image_gather4")  # the MIMG names translated here (program.py)


def translate(ins, b: Builder):
    """Sampling is translated for null descriptors only (they read 0); an active lane sampling a
    real image refuses the dispatch."""
    f = ins.fields
    if f.get("d16"):
        unsupported("d16 sampling")
    dmask = f.get("dmask", 0) & 0xF
    # tfe/lwe add a status register whose value we do not know; dmask 0 has no documented
    # meaning here (a field audit found them ignored)
    if f.get("tfe") or f.get("lwe") or not dmask:
        unsupported("tfe/lwe or dmask 0 on sampling")
    r = f["srsrc"] * 4
    typ = image._f(b, {3: b.sget(r + 3)}, "TYPE")
    real = b.cmp("ge", "u32", typ, image.C(b, "u32", image.TYPE_1D))
    image._refuse_reserved_type(b, typ)
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), real), why="sampling a non-null image")
    # a gather returns four texels of the one channel dmask picks; a sample one value per channel
    for k in range(4 if ins.name.startswith("image_gather4") else bin(dmask).count("1")):
        b.vset(f["vdata"] + k, image.C(b, "u32", 0))
