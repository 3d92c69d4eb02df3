"""Opcode coverage of the decoder, per encoding and target, read from the generated tables.

    python -m wavelift.isa.coverage > docs/isa-coverage.md

Prints docs/isa-coverage.md (tests/isa/test_coverage_doc.py checks that the committed file is
current).  An opcode counts as covered for an encoding when its table (generated from LLVM 19,
docs/decisions/0001) holds an entry for it: every such opcode decodes to LLVM's text.
"""

from __future__ import annotations

import sys

from .decoder import load_table
from .dpp_sdwa import load_dpp_table
from .instruction import TARGETS
from .memory import load_memory_table

ALU = ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
EXT = (
    ("VOP1", "dpp"),
    ("VOP2", "dpp"),
    ("VOP1", "dpp8"),
    ("VOP2", "dpp8"),
    ("VOP1", "sdwa"),
    ("VOP2", "sdwa"),
    ("VOPC", "sdwa"),
)
MEM = ("DS", "MUBUF", "MTBUF", "MIMG", "FLAT", "SCRATCH", "GLOBAL", "EXP", "VINTRP")
CONFIGS = tuple((t, w) for t in TARGETS for w in (False, True))
# GFX11/GFX12: the encodings decoded so far (the others are refused by name: NOT_DECODED11)
ALU11 = ALU + ("VOPDX", "VOPDY", "VINTERP", "LDSDIR")
MEM11 = (
    "DS",
    "MUBUF",
    "MTBUF",
    "MIMG",
    "VIMAGE",
    "VSAMPLE",
)  # memory encodings decoded so far on GFX11/12 (0 where the generation lacks one)
# (and GFX11's FLAT and GFX12's VFLAT, as their FLAT/SCRATCH/GLOBAL segments)
CONFIGS11 = tuple((t, w) for t in ("gfx1100", "gfx1150", "gfx1200") for w in (False, True))
NOT_DECODED11 = (
    (
        "gfx1100, gfx1150",
        "MIMG BVH (`image_bvh*_intersect_ray`) with NSA; VOP3P with DPP whose src1/src2 is not a VGPR "
        "(true16 DPP forms such as `v_mov_b16_dpp v5.l, v40.h` decode: a slot's bit 7 picks the half)",
    ),
    (
        "gfx1200",
        "VIMAGE BVH (`image_bvh*_intersect_ray`); VIMAGE/VSAMPLE whose srsrc or ssamp is the "
        "literal code (255: LLVM reads a fourth dword); VOP3P with DPP whose "
        "src1/src2 is not a VGPR; the fp8/bf8 conversions' VOP3 DPP with op_sel bits set",
    ),
)
# where LLVM 19 rejects or misprints what the RDNA3/RDNA4 ISA guides describe (decoding follows
# LLVM: such words raise DecodeError as LLVM calls them invalid)
LLVM_VS_HARDWARE = (
    "VOPD whose X or Y half takes one source (`v_dual_mov_b32`): LLVM 19 rejects the word unless "
    "that half's VSRC1 field is 0; the RDNA3 ISA guide lists no use of the field for such an "
    "opcode and the hardware ignores it (tinygrad's hardware-validated `v_dual_mov_b32` with a "
    "literal).  wavelift decodes it with the text LLVM prints for the word with that field 0 and "
    "names it (`isa.decoder.hardware_only`; the sweeps count it apart; decision 0023).",
    "gfx1200 `v_cndmask_b32_dpp` with src1's abs bit: LLVM 19 prints `|v60, vcc_lo|` (the bars around "
    "the carry-in too); wavelift refuses that DPP16 opcode by name (not decoded yet) rather than copy "
    "the misprint.",
    "DS without a return value (`ds_store_b32`, `ds_add_u32`, ...) with a non-zero VDST field: "
    "LLVM 19 rejects the word (gfx1100, gfx1150, gfx1200); the RDNA3/RDNA4 ISA guides give such an "
    "opcode no destination, and the hardware runs it, ignoring the field.  wavelift decodes it as the "
    "op without a return value, with the text LLVM prints for the word with VDST 0, and names it "
    "(`isa.memory.hardware_only`; the sweeps count it apart; decision 0023).  "
    "(gfx1010/gfx1030 keep LLVM's verdict: invalid.)",
    "VOP3 with DPP (gfx1100, gfx1150, gfx1200): LLVM 19 decodes an SGPR, an inline constant or a "
    "literal (a fourth dword) in src1/src2 and prints it, where the ISA guides describe DPP without "
    "a literal constant.  The text follows LLVM; what runs must check such words against the guide.",
    "VOP3 with DPP of 16-bit integer ops (`v_mad_u16`, `v_min3_i16`, ...): LLVM 19 prints a "
    "source's neg bit as `sext(v40)`, which the e64 form ignores; the text follows LLVM (table "
    "`sx`).  VOP3P with DPP (`v_fma_mix*`, `v_dot2_f32_f16`) prints a non-VGPR src1/src2 with "
    "`/*Invalid register, operand has 'VGPR_32' register class*/`: refused by name.  gfx1200's "
    "`v_cvt_*fp8*`/`*bf8*` VOP3 DPP: LLVM takes op_sel bits the e64 form rejects and prints "
    "nothing for them: refused by name.",
    "gfx1200 VINTERP: LLVM 19 decodes opcode values 32/64/96 above each VINTERP opcode as that "
    "instruction (opcode bits 5-6, word bits 21-22, ignored); so does wavelift (24 table entries).",
    "gfx1200 VIMAGE with vaddr1..3 all 0 (and more than one address needed): LLVM 19 decodes the "
    "one-address variant and keeps it as decoded (`image_load v8, v5 ... dmask:0xf "
    "dim:SQ_RSRC_IMG_2D_MSAA_ARRAY`: one data and one address register); so does wavelift's text.",
    "MIMG BVH with NSA (gfx1100, gfx1150): LLVM 19 prints the addresses as several ranges "
    "(`[v253, v75, v[42:44], v[112:114], v[85:87]]`); refused by name.  Other NSA forms with more "
    "than five addresses print the rest in the last register's range (`v[42:44]`), as decoded.",
    "16-bit e32 operands in v128 and up: LLVM 19 prints the high halves of `v_mov_b16`-like true16 "
    "forms as `vN.h`, but other 16-bit e32 forms (fake16) as `v128`..`v255` (some with "
    "`/*Invalid register, operand has 'VS_32_Lo128' register class*/`); the hardware reads the "
    "high half of v(N-128) (RDNA3 ISA guide: VGPR bit 7 of a 16-bit e32 operand selects the half).",
)


def _col(t, w):
    return f"{t} w{64 if w else 32}"


def opcodes(target: str, wave64: bool) -> dict:
    """{row label: {opcode value: mnemonic}} for one target and wave size."""
    out = {}
    tab = load_table(target, wave64)
    for enc in ALU:
        out[enc] = {op: e["name"] for op, e in tab[enc].items()}
    dpp = load_dpp_table(target)["w64" if wave64 else "w32"]
    for enc, var in EXT:
        out[f"{enc} {'DPP16' if var == 'dpp' else var.upper()}"] = {
            op: byv[var]["name"]
            for op, byv in dpp.get(enc, {}).items()
            if var in byv and not byv[var].get("plain")
        }
    mem = load_memory_table(target)
    for enc in ("DS", "MUBUF", "MTBUF"):
        out[enc] = {int(k.split(",")[0]): e["name"] for k, e in mem[enc].items() if e}
    for seg, enc in enumerate(("FLAT", "SCRATCH", "GLOBAL")):
        out[enc] = {
            int(k.split(",")[1]): e["name"]
            for k, e in mem["FLAT"].items()
            if e and int(k.split(",")[0]) == seg
        }
    out["MIMG"] = {int(k): e["name"] for k, e in mem["MIMG"].items() if e}
    out["EXP"] = {0: "exp"}
    out["VINTRP"] = {
        i: n[:-4] if n.endswith("_e32") else n for i, n in enumerate(mem["names"]["vintrp"]) if n
    }
    return out


def render() -> str:
    data = {c: opcodes(*c) for c in CONFIGS}
    rows = list(data[CONFIGS[0]])
    lines = [
        "# ISA coverage: opcodes the decoder knows, per encoding and target",
        "",
        "Generated by `python -m wavelift.isa.coverage > docs/isa-coverage.md` from the committed tables",
        "(`wavelift/isa/tables/`, generated from LLVM 19: see "
        "docs/decisions/0001-opcode-tables-from-llvm.md and",
        "tools/README.md); "
        "tests/isa/test_coverage_doc.py fails when this file is not current.  Each number is",
        "the count of opcode values LLVM 19 decodes in that encoding, all of them decoded by wavelift to",
        "LLVM's exact text (checked by the sweeps in tests/isa/).  VOP3 includes VOP3B and the e64 forms of",
        "VOP1/VOP2/VOPC; FLAT/SCRATCH/GLOBAL are the segments of the FLAT encoding.",
        "",
        "| encoding | " + " | ".join(_col(*c) for c in CONFIGS) + " |",
        "|---|" + "---:|" * len(CONFIGS),
    ]
    for r in rows:
        lines.append(f"| {r} | " + " | ".join(str(len(data[c][r])) for c in CONFIGS) + " |")
    lines.append(
        "| **total** | " + " | ".join(str(sum(len(v) for v in data[c].values())) for c in CONFIGS) + " |"
    )
    lines += [
        "",
        "## Opcodes not on every target / wave size",
        "",
        "Mnemonics that some columns above lack (wave size matters only for a few VOPC/VOP3 forms).",
        "",
    ]
    diff = False
    for r in rows:
        names = {c: set(data[c][r].values()) for c in CONFIGS}
        every = set.union(*names.values())
        for nm in sorted(every):
            have = [c for c in CONFIGS if nm in names[c]]
            if len(have) != len(CONFIGS):
                if not diff:
                    lines += ["| encoding | mnemonic | only in |", "|---|---|---|"]
                    diff = True
                lines.append(f"| {r} | `{nm}` | {', '.join(_col(*c) for c in have)} |")
    if not diff:
        lines.append("(none)")
    lines += _render11()
    return "\n".join(lines) + "\n"


def _render11():
    data = {c: {enc: load_table(*c).get(enc, {}) for enc in ALU11} for c in CONFIGS11}
    for t, w in CONFIGS11:
        dpp = load_dpp_table(t)["w64" if w else "w32"]
        for enc in ("VOP1", "VOP2", "VOPC"):
            for var, label in (("dpp", "DPP16"), ("dpp8", "DPP8")):
                data[(t, w)][f"{enc} {label}"] = {
                    op: byv[var]["name"]
                    for op, byv in dpp.get(enc, {}).items()
                    if var in byv and not byv[var].get("plain") and not byv[var].get("nd")
                }
        tab = load_table(t, w)
        for enc in ("VOP3", "VOP3P"):  # VOP3 with DPP: the e64 entry under its _dpp mnemonic
            for var, label in (("dpp", "DPP16"), ("dpp8", "DPP8")):
                data[(t, w)][f"{enc} {label}"] = {
                    op: tab[enc][op]["name"]
                    for op, byv in dpp.get(enc, {}).items()
                    if var in byv and not byv[var].get("nd")
                }
        mem = load_memory_table(t)
        for enc in MEM11:
            data[(t, w)][enc] = {int(k.split(",")[0]): e["name"] for k, e in mem.get(enc, {}).items() if e}
        for enc in ("MUBUF", "MTBUF"):  # GFX12's VBUFFER: buffer_* and tbuffer_*
            data[(t, w)][enc].update(
                {
                    int(k.split(",")[0]): e["name"]
                    for k, e in mem.get("VBUFFER", {}).items()
                    if e and e["name"].startswith("tbuffer_") == (enc == "MTBUF")
                }
            )
        for seg, enc in enumerate(("FLAT", "SCRATCH", "GLOBAL")):
            data[(t, w)][enc] = {
                int(k.split(",")[1]): e["name"]
                for k, e in mem.get("FLAT", mem.get("VFLAT", {})).items()
                if e and int(k.split(",")[0]) == seg
            }
        data[(t, w)]["EXP"] = {0: mem["EXP"]["name"]} if "EXP" in mem else {}
    lines = [
        "",
        "## GFX11 (gfx1100, gfx1150) and GFX12 (gfx1200)",
        "",
        "Decoded to LLVM 19's exact text (tests/isa/test_gfx11_sweep.py, test_gfx11_encodings.py);",
        "gfx1101/1102/1103 use gfx1100's tables, gfx1151/1152 gfx1150's (which adds SALU float opcodes) and gfx1201 gfx1200's (LLVM 19 prints",
        "them alike; the slow sweeps check it).  VOPDX/VOPDY are VOPD's two halves (opx, opy); LLVM 19",
        "decodes VOPD in wave32 only.  FLAT/SCRATCH/GLOBAL are GFX12's VFLAT/VSCRATCH/VGLOBAL,",
        "MUBUF/MTBUF its VBUFFER's `buffer_*`/`tbuffer_*` opcodes.  VOP3/VOP3P DPP16/DPP8: the opcodes",
        "whose e64 form LLVM 19 also decodes with a DPP16/DPP8 control dword (`v_add_f32_e64_dpp`).",
        "",
        "| encoding | " + " | ".join(_col(*c) for c in CONFIGS11) + " |",
        "|---|" + "---:|" * len(CONFIGS11),
    ]
    for r in data[CONFIGS11[0]]:
        lines.append(f"| {r} | " + " | ".join(str(len(data[c][r])) for c in CONFIGS11) + " |")
    lines += ["", "Not decoded yet (refused by name, `not decoded yet: ...`, never guessed):", ""]
    lines += [f"- {t}: {what}" for t, what in NOT_DECODED11]
    lines += ["", "### Where LLVM 19 and the ISA guides disagree", ""]
    lines += [f"- {x}" for x in LLVM_VS_HARDWARE]
    return lines


if __name__ == "__main__":
    from wavelift.terminal import quiet_broken_pipe  # `| head`: no BrokenPipeError traceback

    sys.exit(quiet_broken_pipe(lambda: sys.stdout.write(render()) and 0))
