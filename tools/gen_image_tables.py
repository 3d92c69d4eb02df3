#!/usr/bin/env python3
"""Generate wavelift/memory/tables/gfx10_image.json: the GFX10/10.3 image facts wavelift reads
from machine-readable Mesa sources, never typed in (issue 22).

    python3 tools/gen_image_tables.py [MESA_SRC]     # default $MESA_SRC or /tmp/mesasrc/mesa-22.3.6

Sources (Debian's Mesa 22.3.6 source; tools/radv_capture/README.md says how the project fetches
it under /tmp without touching /etc/apt):

* ``src/amd/registers/gfx10-rsrc.json`` (the register database Mesa generates its headers from):
  the GFX10_FORMAT enum (IMG_FORMAT values and names), the T# (SQ_IMG_RSRC_WORD1..6) and S#
  (SQ_IMG_SAMP_WORD0..3) field layouts for gfx10 and gfx103 (WORD4..6 differ: PITCH, BIG_PAGE,
  LLC_NOALLOC), and the BC_SWIZZLE enum; ``src/amd/registers/gfx9.json``: the enums of T#/S#
  fields the GFX10 file leaves out (TYPE, DST_SEL, clamp, filter, compare, border colour).  A format name is split the way Mesa's own
  gfx10_format_table.py splits it: leading numbers are channel sizes from the most significant
  channel down (``10_11_11`` is X:11, Y:11, Z:10 from bit 0 up), the rest is the numeric format.
  Names that are not all channel sizes (BC*, FMASK*, MM_*, GB_GR, 6E4, YCBCR, 1_REVERSED, ...)
  get ``bits: []``: wavelift converts none of them.
* ``src/amd/addrlib/inc/addrtypes.h``: the AddrSwizzleMode names and values (the T#'s SW_MODE
  field holds these values; MISCDEF/reserved names are left out).
* ``src/amd/addrlib/src/gfx10/gfx10SwizzlePattern.h``: addrlib's swizzle-pattern tables for
  colour surfaces (every ``GFX10_SW_*_PATINFO`` row: maxItemCount and the four nibble indices,
  and the GFX10_SW_PATTERN_NIBBLE01/2/3/4 tables, each address bit as the XOR of coordinate bits
  it is written as there, e.g. ``"Y4^X6"``).  wavelift/memory/layout.py computes addresses from
  these patterns with its own code; the compiled addrlib (tools/addrlib_oracle) checks it.

Only numbers and Mesa's own identifiers are written.  tests/memory/test_image_tables.py
regenerates the file and compares it byte for byte (it skips when the Mesa source is absent).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))

import table_json  # tools/, the script's directory

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "wavelift" / "memory" / "tables"
NAME = "gfx10_image.json"
MESA_VERSION = "22.3.6"
DEFAULT_SRC = f"/tmp/mesasrc/mesa-{MESA_VERSION}"
RSRC_JSON = "src/amd/registers/gfx10-rsrc.json"
GFX9_JSON = "src/amd/registers/gfx9.json"
# enums of T#/S# fields that gfx10-rsrc.json leaves out; Mesa's GFX10 descriptor code
# (radv_image.c gfx10_make_texture_descriptor, radv_sampler.c) writes these same V_008F1C_* /
# V_008F30_* values, so they are read from gfx9.json's register database
FIELD_ENUMS = (
    "SQ_RSRC_IMG_TYPE",
    "SQ_SEL_XYZW01",
    "SQ_TEX_CLAMP",
    "SQ_TEX_DEPTH_COMPARE",
    "SQ_TEX_XY_FILTER",
    "SQ_TEX_Z_FILTER",
    "SQ_TEX_MIP_FILTER",
    "SQ_TEX_BORDER_COLOR",
    "SQ_IMG_FILTER_TYPE",
)
PATTERN_H = "src/amd/addrlib/src/gfx10/gfx10SwizzlePattern.h"
ADDRTYPES_H = "src/amd/addrlib/inc/addrtypes.h"

_PLAIN = re.compile(r"X?([0-9]+)")


def split_format(name: str) -> tuple[list[int], str]:
    """('10_11_11_FLOAT') -> ([11, 11, 10], 'FLOAT'): channel sizes from X up, numeric format;
    ([], name) when the name is not channel sizes followed by a numeric format."""
    code = name.split("_")
    sizes = []
    i = 0
    while i < len(code) and _PLAIN.fullmatch(code[i]):
        sizes.append(int(_PLAIN.fullmatch(code[i]).group(1)))
        i += 1
    if not sizes or i == len(code):
        return [], name
    padded = [c.startswith("X") for c in code[:i]]
    if any(padded):  # X24_8_32: a padding channel; not a plain colour format
        return [], name
    return sizes[::-1], "_".join(code[i:])


def formats(db: dict, enum: str = "GFX10_FORMAT") -> dict:
    out = {}
    for e in db["enums"][enum]["entries"]:
        name = e["name"].strip()
        assert name.startswith(enum + "_"), name
        short = name[len(enum) + 1 :]
        bits, numeric = split_format(short)
        if bits and sum(bits) % 8:  # 1_UNORM, 4_4 is 8 bits: kept; sub-byte totals are not texels
            bits, numeric = [], short
        out[str(e["value"])] = {
            "name": short,
            "bits": bits,
            "numeric": numeric if bits else "",
            "bytes": sum(bits) // 8 if bits else 0,
            "buffers_only": "buffers_only" in e.get("flags", []),
        }
    return out


def fields(db: dict, prefix: str) -> dict:
    """{chip: {word index: [[name, lo, hi], ...]}} for the registers named prefix0..N."""
    types = db["register_types"]
    out: dict = {"gfx10": {}, "gfx103": {}} if "gfx10" in str(db["register_mappings"]) else {"gfx11": {}}
    for m in db["register_mappings"]:
        if not m["name"].startswith(prefix):
            continue
        word = int(m["name"][len(prefix) :])
        t = m.get("type_ref")
        fl = [[f["name"], f["bits"][0], f["bits"][1]] for f in types[t]["fields"]] if t else []
        for chip in m["chips"]:
            out[chip][str(word)] = fl
    return out


def patterns(text: str, gfx: str = "GFX10") -> dict:
    text = re.sub(r"//[^\n]*", "", text)
    patinfo = {}
    for name, body in re.findall(
        r"const ADDR_SW_PATINFO (%s_SW_\w+_PATINFO)\[\]\s*=\s*\{(.*?)\};" % gfx, text, re.S
    ):
        rows = re.findall(r"\{\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*\}", body)
        patinfo[name] = [[int(v) for v in r] for r in rows]
    nibbles = {}
    for k in ("01", "2", "3", "4"):
        m = re.search(
            r"const UINT_64 %s_SW_PATTERN_NIBBLE%s\[\]\[(\d+)\]\s*=\s*\{(.*?)\n\};" % (gfx, k), text, re.S
        )
        assert m, k
        width = int(m.group(1))
        rows = []
        for row in re.findall(r"\{([^{}]*)\}", m.group(2)):
            bits = [b.strip() for b in row.split(",") if b.strip()]
            assert len(bits) == width and all(re.fullmatch(r"0|[XYZS]\d+(\^[XYZS]\d+)*", b) for b in bits), (
                row
            )
            rows.append(bits)
        nibbles["nibble" + k] = rows
    return {"patinfo": patinfo, **nibbles}


def sw_modes(text: str, aliases: bool = False) -> dict:
    """SW_MODE value -> name; with ``aliases``, also the names addrtypes.h gives as another
    name (GFX11's ``ADDR_SW_256KB_Z_X = ADDR_SW_MISCDEF28``, ...), reserved names left out."""
    body = re.search(r"typedef enum _AddrSwizzleMode\s*\{(.*?)\}", text, re.S)
    assert body
    out = {}
    values = {}
    for name, value in re.findall(r"ADDR_SW_(\w+)\s*=\s*(\d+)\s*,", body.group(1)):
        values[name] = value
        if not name.startswith(("MISCDEF", "MAX_TYPE")) and int(value) < 32:
            out[value] = name
    if aliases:
        for name, other in re.findall(r"ADDR_SW_(\w+)\s*=\s*ADDR_SW_(\w+)\s*,", body.group(1)):
            if not name.startswith(("RESERVED", "MISCDEF")) and other in values:
                out[values[other]] = name
        out = dict(sorted(out.items(), key=lambda kv: int(kv[0])))
    return out


def build(src: pathlib.Path) -> dict:
    db = json.loads((src / RSRC_JSON).read_text())
    bc = {str(e["value"]): e["name"] for e in db["enums"]["SQ_IMG_RSRC_WORD3__BC_SWIZZLE"]["entries"]}
    gfx9 = json.loads((src / GFX9_JSON).read_text())["enums"]
    enums = {k: {str(e["value"]): e["name"] for e in gfx9[k]["entries"]} for k in FIELD_ENUMS}
    return {
        "source": f"Mesa {MESA_VERSION}: {RSRC_JSON}, {GFX9_JSON}, {ADDRTYPES_H}, {PATTERN_H}",
        "formats": formats(db),
        "tsharp": fields(db, "SQ_IMG_RSRC_WORD"),
        "ssharp": fields(db, "SQ_IMG_SAMP_WORD"),
        "bc_swizzle": bc,
        "enums": enums,
        "sw_modes": sw_modes((src / ADDRTYPES_H).read_text()),
        **patterns((src / PATTERN_H).read_text()),
    }


RSRC11_JSON = "src/amd/registers/gfx11-rsrc.json"
NAME11 = "gfx11_image.json"


PATTERN11_H = "src/amd/addrlib/src/gfx11/gfx11SwizzlePattern.h"


def build11(src: pathlib.Path) -> dict:
    """GFX11's T# field layout (SQ_IMG_RSRC_WORD1..6), S# field layout (SQ_IMG_SAMP_WORD0..3:
    BORDER_COLOR_PTR moved to word 3 [29:18], no MIP_POINT_PRECLAMP / DERIV_ADJUST_EN) and
    GFX11_FORMAT enum (IMG_FORMAT values, renumbered from GFX10's) from ``gfx11-rsrc.json``, in
    gfx10_image.json's shapes; GFX11's swizzle modes (addrtypes.h, with the 256KB names GFX11
    gives the MISCDEF28..31 values) and addrlib's GFX11 swizzle-pattern tables
    (``gfx11SwizzlePattern.h``, every ``GFX11_SW_*_PATINFO`` row and the
    GFX11_SW_PATTERN_NIBBLE01/2/3/4 tables, as for GFX10)."""
    db = json.loads((src / RSRC11_JSON).read_text())
    return {
        "source": f"Mesa {MESA_VERSION}: {RSRC11_JSON}, {ADDRTYPES_H}, {PATTERN11_H}",
        "formats": formats(db, "GFX11_FORMAT"),
        "tsharp": fields(db, "SQ_IMG_RSRC_WORD")["gfx11"],
        "ssharp": fields(db, "SQ_IMG_SAMP_WORD")["gfx11"],
        "sw_modes": sw_modes((src / ADDRTYPES_H).read_text(), aliases=True),
        **patterns((src / PATTERN11_H).read_text(), "GFX11"),
    }


def main(argv: list[str]) -> int:
    src = pathlib.Path(argv[1] if len(argv) > 1 else os.environ.get("MESA_SRC", DEFAULT_SRC))
    if not all((src / f).is_file() for f in (RSRC_JSON, GFX9_JSON, PATTERN_H, ADDRTYPES_H)):
        print(
            f"Mesa {MESA_VERSION} source not found at {src} (tools/radv_capture/README.md)", file=sys.stderr
        )
        return 3
    marker = (
        f"generated by tools/gen_image_tables.py from Mesa {MESA_VERSION}; do not edit: "
        "regenerate with `python3 tools/gen_image_tables.py`"
    )
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / NAME).write_text(table_json.dumps({"_generated": marker, **build(src)}))
    print(OUT_DIR / NAME)
    if (src / RSRC11_JSON).is_file() and (src / PATTERN11_H).is_file():
        (OUT_DIR / NAME11).write_text(table_json.dumps({"_generated": marker, **build11(src)}))
        print(OUT_DIR / NAME11)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
