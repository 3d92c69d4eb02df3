"""frontend/gfx11.py's renames against LLVM: every GFX11 name mapped to a GFX10 name must be one
instruction to llvm-mc-19 (the GFX10 mnemonic, assembled for gfx1100, gives the same encoding as
the GFX11 one), and ds_cmpstore (whose operands are swapped) must not be an alias of ds_cmpst."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from wavelift.frontend import gfx11

pytestmark = pytest.mark.skipif(shutil.which("llvm-mc-19") is None, reason="llvm-mc-19 not installed")


def _operands(name: str) -> str:
    """Operands valid for both mnemonics of a rename."""
    w64 = name.endswith("64")
    if name.startswith(("s_and_not", "s_or_not")) and ("saveexec" in name or "wrexec" in name):
        return "s[2:3], s[4:5]" if w64 else "s2, s4"
    if name.startswith(("s_and_not1_b", "s_or_not1_b")):
        return "s[2:3], s[4:5], s[6:7]" if w64 else "s2, s4, s6"
    if name in ("s_ctz_i32_b64", "s_clz_i32_u64", "s_cls_i32_i64"):
        return "s2, s[4:5]"
    if name.startswith(("s_ctz_", "s_clz_", "s_cls_")):
        return "s2, s4"
    if name == "s_set_inst_prefetch_distance":
        return "0x2"
    if name.startswith(("v_cvt_pk_rtz", "v_mul_dx9", "v_fmac_dx9", "v_dot2acc", "v_cvt_pk_norm")):
        return "v1, v2, v3"
    if name == "v_fma_dx9_zero_f32":
        return "v1, v2, v3, v4"
    if name.startswith("v_"):
        return "v1, v2"
    if name.startswith("ds_"):
        return _ds(name)
    raise KeyError(name)


def _ds(name: str) -> str:
    wide = {"b64": "v[2:3]", "b96": "v[2:4]", "b128": "v[2:5]"}
    size = next((k for k in wide if name.endswith(k)), None)
    reg = wide.get(size or "", "v2")
    if "_load_2addr" in name:
        return ("v[2:5]" if size == "b64" else "v[2:3]") + ", v1 offset1:1"
    if "storexchg_2addr" in name:
        return "v[4:7], v1, v[2:3], v[8:9] offset1:1" if size == "b64" else "v[4:5], v1, v2, v3 offset1:1"
    if "storexchg" in name:
        return f"{reg}, v1, {reg.replace('v2', 'v6').replace('[2:', '[6:').replace(':3]', ':7]')}"
    if "_load_addtid" in name:
        return "v2"
    if "_store_addtid" in name:
        return "v2"
    if "_load" in name:
        return f"{reg}, v1"
    if "_store_2addr" in name:
        return f"v1, {reg}, {'v[4:5]' if size == 'b64' else 'v3'} offset1:1"
    if "_store" in name:
        return f"v1, {reg}"
    raise KeyError(name)


def _encode_all(lines: list[str]) -> list[str]:
    """llvm-mc-19's encoding of each line for gfx1100 (one run; every line must assemble)."""
    p = subprocess.run(
        ["llvm-mc-19", "--triple=amdgcn", "--mcpu=gfx1100", "-show-encoding"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0 and "error" not in p.stderr, p.stderr
    out = [ln.split("encoding:")[1].strip() for ln in p.stdout.splitlines() if "encoding:" in ln]
    assert len(out) == len(lines)
    return out


def _encode(text: str) -> str | None:
    p = subprocess.run(
        ["llvm-mc-19", "--triple=amdgcn", "--mcpu=gfx1100", "-show-encoding"],
        input=text + "\n",
        capture_output=True,
        text=True,
    )
    if p.returncode or "error" in p.stderr:
        return None
    return p.stdout.split("encoding:")[1].strip()


def _same(pairs: list[tuple[str, str]]) -> None:
    """Each (GFX11 text, GFX10 text) pair is one encoding to llvm-mc-19 for gfx1100."""
    new = _encode_all([a for a, _ in pairs])
    old = _encode_all([b for _, b in pairs])
    bad = [(a, b, x, y) for (a, b), x, y in zip(pairs, new, old) if x != y]
    assert not bad, bad


def test_renames_are_one_instruction_to_llvm():
    pairs = []
    for new, old in sorted(gfx11.RENAMES.items()):
        ops = _operands(new)
        pairs.append((f"{new} {ops}", f"{old} {ops}"))
    _same(pairs)


def _n(kind: str) -> int:
    return 4 if kind.endswith("128") else 3 if kind.endswith("96") else 2 if kind.endswith("64") else 1


def test_memory_kinds_are_llvm_aliases():
    pairs = []
    for prefix, tail in (("global", "v[8:9], off"), ("flat", "v[8:9]"), ("scratch", "off, off")):
        for new, old in gfx11.LOAD_KINDS.items():
            n = _n(new)
            dst = "v1" if n == 1 else f"v[1:{n}]"
            pairs.append((f"{prefix}_load_{new} {dst}, {tail}", f"{prefix}_load_{old} {dst}, {tail}"))
        for new, old in gfx11.STORE_KINDS.items():
            n = _n(new)
            src = "v1" if n == 1 else f"v[1:{n}]"
            addr, rest = tail.split(", ", 1) if prefix != "flat" else (tail, "")
            text = f"{addr}, {src}" + (f", {rest}" if rest else "")
            pairs.append((f"{prefix}_store_{new} {text}", f"{prefix}_store_{old} {text}"))
    for new, old in gfx11.ATOMIC_KINDS.items():
        n = (2 if new.endswith("64") else 1) * (2 if "cmpswap" in new else 1)
        data = "v1" if n == 1 else f"v[1:{n}]"
        pairs.append((f"global_atomic_{new} v[8:9], {data}, off", f"global_atomic_{old} v[8:9], {data}, off"))
    for new, old in gfx11.SMEM_KINDS.items():
        n = {"b32": 1, "b64": 2, "b128": 4, "b256": 8, "b512": 16}[new]
        first = 4 if n < 8 else 8
        dst = "s4" if n == 1 else f"s[{first}:{first + n - 1}]"
        pairs.append((f"s_load_{new} {dst}, s[0:1], 0x4", f"s_load_{old} {dst}, s[0:1], 0x4"))
    _same(pairs)


def test_ds_cmpstore_is_not_an_alias():
    """LLVM 19 gives ds_cmpst_* no alias on gfx1100: its operands are in the other order, so
    frontend/gfx11.py swaps DATA0/DATA1 (tests/gfx11/test_gfx11_semantics.py runs it)."""
    assert _encode("ds_cmpstore_b32 v1, v2, v3") is not None
    assert _encode("ds_cmpst_b32 v1, v2, v3") is None


def test_scalar_code_swap():
    """NULL is 124 and M0 125 on gfx1100 (llvm-mc-19's encodings of s_mov_b32 m0, null)."""
    enc = _encode("s_mov_b32 m0, null")
    assert enc is not None
    words = [int(x, 16) for x in enc.strip("[]").split(",")]
    w = int.from_bytes(bytes(words), "little")
    assert (w & 0xFF, (w >> 16) & 0x7F) == (gfx11.GFX11_NULL, gfx11.GFX11_M0)
