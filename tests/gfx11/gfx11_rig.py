"""A gfx1100 rig for the tests/gfx11/test_gfx11_*.py files: programs assembled by llvm-mc-19
(``.byte`` lines for words LLVM prints but does not assemble), inputs in s[2:3], outputs in s[0:1].
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))

from asm import HAVE_MC, assemble  # noqa: E402
from harness import Rig, ptr  # noqa: E402

from wavelift.memory import tsharp  # noqa: E402

__all__ = ["HAVE_MC", "Rig11", "encode_true16", "radv_tsharp11", "run11", "vop3_opsel", "words"]


class Rig11(Rig):
    """The test harness's rig for gfx1100 code."""

    def __init__(self, src: str, wave64: bool = False):
        super().__init__("s_endpgm", wave64)
        self.target = "gfx1100"
        self.code = assemble(src, wave64, mcpu="gfx1100")
        self.prog = self.mem.alloc(len(self.code) + 256, name="code11", data=self.code + b"\0" * 256)


def encode_true16(text: str) -> bytes:
    """The bytes llvm-mc-19 gives ``text`` for gfx1100 with +real-true16 (its .l/.h syntax)."""
    assert shutil.which("llvm-mc-19")
    p = subprocess.run(
        ["llvm-mc-19", "-triple=amdgcn", "-mcpu=gfx1100", "-mattr=+real-true16", "-show-encoding"],
        input=text + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"encoding: \[([^\]]*)\]", p.stdout)
    assert m, p.stdout + p.stderr
    return bytes(int(x, 16) for x in m.group(1).split(","))


def words(code: bytes) -> str:
    """Assembler lines placing ``code`` as it is."""
    return ".byte " + ",".join(str(x) for x in code)


def vop3_opsel(text: str, opsel: int) -> str:
    """``text`` (a VOP3 instruction) assembled, with its OP_SEL field (word 0 bits 14:11) set."""
    code = bytearray(assemble(text, mcpu="gfx1100"))
    w = int.from_bytes(code[:4], "little") | (opsel << 11)
    code[:4] = w.to_bytes(4, "little")
    return words(bytes(code))


def run11(src: str, inputs, n_out: int, mode: str, wave64: bool = False):
    """Run ``src`` with s[0:1] = an output buffer of ``n_out`` u32 (0xdeadbeef) and s[2:3] the u32
    array ``inputs``; -> (result, output)."""
    r = Rig11(src, wave64)
    out = r.buf(np.full(n_out, 0xDEADBEEF, np.uint32), "out")
    inp = r.buf(np.ascontiguousarray(inputs, np.uint32).reshape(-1), "in")
    block = (64 if wave64 else 32, 1, 1)
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(inp), block=block), mode=mode)
    return res, r.read(out, np.uint32, n_out)


def radv_tsharp11(addr, fmt10, w, h, depth, typ, sw_mode, levels, base_level, last_level, dst_sel):
    """The GFX11 T# gfx10_make_texture_descriptor writes (tests/execute/test_sampling_mips_lavapipe's
    radv_tsharp with GFX11's fields and format numbering: MAX_MIP in word 1, no RESOURCE_LEVEL,
    PERF_MOD 4) for a view of levels base_level..last_level."""
    name = tsharp.formats()[fmt10].name
    (f11,) = [int(k) for k, e in tsharp.tables11()["formats"].items() if e["name"] == name]
    vals = {
        "BASE_ADDRESS_HI": (addr >> 40) & 0xFF,
        "FORMAT": f11,
        "MAX_MIP": levels - 1,
        "WIDTH_LO": (w - 1) & 3,
        "WIDTH_HI": (w - 1) >> 2,
        "HEIGHT": h - 1,
        "DST_SEL_X": dst_sel[0],
        "DST_SEL_Y": dst_sel[1],
        "DST_SEL_Z": dst_sel[2],
        "DST_SEL_W": dst_sel[3],
        "BASE_LEVEL": base_level,
        "LAST_LEVEL": last_level,
        "SW_MODE": sw_mode,
        "TYPE": typ,
        "DEPTH": depth - 1,
        "PERF_MOD": 4,
    }
    d = [(addr >> 8) & 0xFFFFFFFF] + [0] * 7
    for n, v in vals.items():
        wd, lo, hi = tsharp.field_bits11(n)
        assert v < 1 << (hi - lo + 1), n
        d[wd] |= v << lo
    return d
