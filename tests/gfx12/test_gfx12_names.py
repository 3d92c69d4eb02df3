"""frontend/gfx12.py's renames against LLVM: every GFX12 name mapped to a GFX11 name must be one
instruction to llvm-mc-19 (the GFX11 mnemonic, assembled for gfx1200, gives the same encoding as
the GFX12 one), and the GFX11 name must be one frontend/gfx11.py or the family frontends know."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from wavelift.frontend import gfx12

pytestmark = pytest.mark.skipif(shutil.which("llvm-mc-19") is None, reason="llvm-mc-19 not installed")


def _operands(name: str) -> str:
    if name.startswith("s_"):
        return "s1, s2, s3"
    if name.startswith("v_mad_co_"):
        return "v[2:3], s0, v0, s0, v[2:3]"
    if name.endswith("f64"):
        return "v[2:3], v[4:5], v[6:7]"
    if any(k in name for k in ("3_num", "maxmin", "minmax")):
        return "v1, v2, v3, v4"
    return "v1, v2, v3"


def _encode_all(lines: list[str], mcpu: str = "gfx1200") -> list[str]:
    """llvm-mc-19's encoding of each line for ``mcpu`` (one run; every line must assemble)."""
    p = subprocess.run(
        ["llvm-mc-19", "--triple=amdgcn", f"--mcpu={mcpu}", "-show-encoding"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0 and "error" not in p.stderr, p.stderr
    out = [ln.split("encoding:")[1].strip() for ln in p.stdout.splitlines() if "encoding:" in ln]
    assert len(out) == len(lines)
    return out


def test_renames_are_one_instruction_to_llvm():
    pairs = [
        (f"{new} {_operands(new)}", f"{old} {_operands(new)}") for new, old in sorted(gfx12.RENAMES.items())
    ]
    new = _encode_all([a for a, _ in pairs])
    old = _encode_all([b for _, b in pairs])
    bad = [(a, b, x, y) for (a, b), x, y in zip(pairs, new, old) if x != y]
    assert not bad, bad


def test_no_ops_are_gfx12_instructions():
    """Every name normalize makes a no-op is an instruction llvm-mc-19 assembles for gfx1200."""
    text = {
        "global_wb": "global_wb scope:SCOPE_DEV",
        "global_inv": "global_inv scope:SCOPE_DEV",
        "global_wbinv": "global_wbinv scope:SCOPE_DEV",
        "s_wait_alu": "s_wait_alu 0xfffe",
        "s_prefetch_inst": "s_prefetch_inst s[14:15], 0x0, m0, 7",
        "s_prefetch_data": "s_prefetch_data s[14:15], 0x0, m0, 7",
        "s_prefetch_inst_pc_rel": "s_prefetch_inst_pc_rel 0x100, m0, 7",
        "s_prefetch_data_pc_rel": "s_prefetch_data_pc_rel 0x100, m0, 7",
        "s_buffer_prefetch_data": "s_buffer_prefetch_data s[20:23], 0x100, m0, 7",
    }
    _encode_all([text.get(n, f"{n} 0x0") for n in sorted(gfx12.NOPS)])


def test_vopd_renames_are_the_same_bytes():
    """A VOPD pair with the GFX12 names, assembled for gfx1200, is the same bytes as the pair with
    the GFX11 names assembled for gfx1100; each half's VOP2 form is an alias (RENAMES, above)."""
    pairs = []
    for new, old in sorted(gfx12.VOPD_RENAMES.items()):
        pairs.append(
            (f"{new} v1, v2, v3 :: v_dual_mov_b32 v4, v5", f"{old} v1, v2, v3 :: v_dual_mov_b32 v4, v5")
        )
        pairs.append(
            (f"v_dual_mov_b32 v4, v5 :: {new} v1, v2, v3", f"v_dual_mov_b32 v4, v5 :: {old} v1, v2, v3")
        )
        assert gfx12.RENAMES[new.replace("v_dual_", "v_")] == old.replace("v_dual_", "v_")
    new = _encode_all([a for a, _ in pairs], "gfx1200")
    old = _encode_all([b for _, b in pairs], "gfx1100")
    assert new == old
