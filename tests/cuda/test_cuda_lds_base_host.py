"""The LDS window's shared address kept (WAVELIFT_CUDA_LDSBASE=kept; decision 0047's amendment
h118): made once in the prologue (``wl_sb``, kept in a register by an empty asm) and each direct
LDS access at ``__cvta_shared_to_generic(wl_sb + offset)`` -- the byte ``wl_smem + offset`` names
(cvta's round trip) -- instead of NVVM making the window's address again inside a predicated
access in a loop (the histogram's LDS atomic).

Checked without a GPU: for lds.cl's five kernels, the source with the setting is the unset one
but for that prologue line and the accesses' form (each access maps back to ``wl_smem +
offset``); NVRTC's PTX of both holds shared loads, stores and atomics alike and no more generic
ones (an address that lost its state space would be a generic access: slower, and not what the
unset build does); a split build's part that reaches the LDS makes wl_sb as the
prologue does; the module entry's name follows the setting.  On a GPU: devjobs/h118.sh (the
CUDA tests with it on, the LDS kernels against NumPy among them)."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

SETTING = "WAVELIFT_CUDA_LDSBASE"
KERNELS = ["histogram", "matmul16", "stencil5", "reduce1024", "scan256"]
MADE = '  u32 wl_sb = (u32)__cvta_generic_to_shared(wl_smem); asm("" : "+r"(wl_sb));\n'
KEPT = re.compile(r"\(\(u8\*\)__cvta_shared_to_generic\(wl_sb \+ ")


def _source(name, monkeypatch, kept: bool):
    from test_cuda_backend import lds_kernel_source

    env = {
        "WAVELIFT_CUDA_PASSES": None,
        "WAVELIFT_CUDA_BLENDS": "atomics",
        "WAVELIFT_CUDA_HOIST": "loops",
        SETTING: "kept" if kept else None,
    }
    return lds_kernel_source(name, monkeypatch, env)


def _unkept(src: str) -> str:
    """Each kept access ``((u8*)__cvta_shared_to_generic(wl_sb + X))`` as ``(wl_smem + X)``."""
    out, i = [], 0
    src = src.replace(MADE, "", 1)
    for m in KEPT.finditer(src):
        if m.start() < i:
            continue
        out.append(src[i : m.start()])
        depth, j = 1, m.end()  # inside the cvta call: to its ')', then the outer one
        while depth:
            c = src[j]
            depth += c == "("
            depth -= c == ")"
            j += 1
        assert src[j] == ")", src[m.start() : j + 1]
        out.append("(wl_smem + " + src[m.end() : j - 1] + ")")
        i = j + 1
    out.append(src[i:])
    return "".join(out)


@pytest.mark.parametrize("name", KERNELS)
def test_kept_source_is_the_unset_one_but_the_address(name, monkeypatch):
    old = _source(name, monkeypatch, False)
    new = _source(name, monkeypatch, True)
    assert not re.search(r"\bwl_sb\b", old)
    body = new[new.index('extern "C" __global__') :]
    assert body.count(MADE) == 1 and body.index(MADE) < body.index("//@wl-prologue-end")
    assert KEPT.search(new)
    assert _unkept(new) == old


def _ptx(src: str) -> str:
    from wavelift.backends.cuda import compile as CC

    nv = CC._nvrtc()
    res = nv.nvrtcCreateProgram(src.encode(), b"wavelift_module.cu", 0, [], [])
    prog = res[1]
    try:
        opts = [b"-arch=compute_90"] + [o.encode() for o in CC.OPTIONS]
        CC._check(nv, nv.nvrtcCompileProgram(prog, len(opts), opts), "nvrtcCompileProgram", prog)
        _, n = nv.nvrtcGetPTXSize(prog)
        buf = bytearray(n)
        nv.nvrtcGetPTX(prog, buf)
        return bytes(buf).decode()
    finally:
        nv.nvrtcDestroyProgram(prog)


def _accesses(ptx: str) -> dict:
    """Memory instructions of the PTX by state space (generic: none named)."""
    out = {}
    for op in ("ld", "st", "atom", "red"):
        out[op, "shared"] = len(re.findall(rf"\b{op}\.shared\.", ptx))
        out[op, "generic"] = len(re.findall(rf"\b{op}\.(?!shared|global|param|const|local)", ptx))
    return out


@pytest.mark.parametrize("name", ["histogram", "matmul16", "stencil5"])
def test_kept_accesses_stay_shared(name, monkeypatch):
    from test_cuda_backend import _needs_nvrtc

    _needs_nvrtc()
    old = _accesses(_ptx(_source(name, monkeypatch, False)))
    new = _accesses(_ptx(_source(name, monkeypatch, True)))
    # (NVVM may merge the kept form's reads into wider ones -- matmul16's tile rows as
    # ld.shared.v4 -- so the shared counts may differ; each kind stays shared, none generic)
    assert sum(v for (_, sp), v in old.items() if sp == "shared") > 0
    for op in ("ld", "st", "atom", "red"):
        assert new[op, "generic"] == old[op, "generic"], (op, old, new)
        assert (new[op, "shared"] > 0) == (old[op, "shared"] > 0), (op, old, new)


def test_split_parts_make_the_lds_base(monkeypatch):
    from wavelift.backends.cuda.split import split_source

    src = _source("histogram", monkeypatch, True)
    units = split_source(src, part_bytes=512)
    assert units is not None and len(units) > 2
    users = 0
    for part in units[1:]:
        body = part[part.index("wl_part_") :]
        if KEPT.search(body):
            users += 1
            made = body.index(MADE.strip())
            assert made < KEPT.search(body).start()
        else:
            assert not re.search(r"\bwl_sb\b", body)
    assert users
