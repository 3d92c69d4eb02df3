"""Hand-assembled scratch programs on hand-built guest memory, dispatched through a PM4 stream
(so dispatch setup, tracing, the module cache and landing are all the real ones)."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "execute"))

from asm import HAVE_MC, assemble  # noqa: E402

from wavelift import Capture, pm4, replay  # noqa: E402

SCRATCH_BASE = 0x7F00_0000_0000  # where the "scratch backing" of the stream lies
W3_W32 = 0x31C16000  # ACO's scratch V# word 3 (GFX10, wave32): ADD_TID ...
W3_W64 = 0x31E16000


def vsharp(wave64: bool, base: int = SCRATCH_BASE, records: int = 0xFFFFFFFF):
    """The scratch V# as the HSA runtime / RADV hand it over: SWIZZLE_ENABLE, ADD_TID_ENABLE."""
    return [base & 0xFFFFFFFF, ((base >> 32) & 0xFFFF) | (1 << 31), records, W3_W64 if wave64 else W3_W32]


class ScratchRig:
    """s[0:3] scratch V#, s[4:5] output pointer, then s6 = workgroup id x, s7 = wave offset."""

    def __init__(
        self,
        src: str | None = None,
        wave64: bool = False,
        out_bytes: int = 4096,
        user=None,
        target: str = "gfx1030",
    ):
        self.wave64 = wave64
        self.cap = Capture(target=target)
        self.out = self.cap.alloc(
            out_bytes, data=np.full(out_bytes // 4, 0x5A5A5A5A, np.uint32).tobytes(), name="out"
        )
        self.out_bytes = out_bytes
        self.user = (
            list(user) if user is not None else vsharp(wave64) + [self.out & 0xFFFFFFFF, self.out >> 32]
        )
        if src is not None:
            self.program(src)

    def program(self, src: str):
        code = assemble(src, self.wave64)
        self.code = self.cap.alloc(len(code) + 256, data=code + b"\0" * 256, name="code", align=256)

    def regs(self, wavesize_kib=1, scratch=True, tmpring=True, waves=8, lanes=None, groups=1):
        lanes = lanes or (64 if self.wave64 else 32)
        rsrc2 = (len(self.user) << 1) | (1 << 7) | (1 if scratch else 0)  # USER_SGPR, TGID_X
        r = {
            "COMPUTE_PGM_LO": (self.code >> 8) & 0xFFFFFFFF,
            "COMPUTE_PGM_HI": self.code >> 40,
            "COMPUTE_PGM_RSRC1": (0xF0 << 12) | (1 << 21),
            "COMPUTE_PGM_RSRC2": rsrc2,
            "COMPUTE_NUM_THREAD_X": lanes,
            "COMPUTE_NUM_THREAD_Y": 1,
            "COMPUTE_NUM_THREAD_Z": 1,
        }
        for i, v in enumerate(self.user):
            r[f"COMPUTE_USER_DATA_{i}"] = v
        if tmpring:
            r["COMPUTE_TMPRING_SIZE"] = (wavesize_kib << 12) | waves
        return r, groups

    def run(self, mode="wave", cache=None, **kw):
        regs, groups = self.regs(**kw)
        init = 1 | (1 << 2) | (0 if self.wave64 else 1 << 15)  # SHADER_EN, START_AT_000, W32
        self.cap.submit(pm4.set_sh_regs(regs) + pm4.dispatch_direct(groups, 1, 1, initiator=init))
        res = replay(self.cap, backend="numpy", mode=mode, cache=cache)
        return res[-1]

    def out_words(self, n=None):
        n = n or self.out_bytes // 4
        return np.frombuffer(self.cap.read(self.out, 4 * n), np.uint32).copy()


__all__ = ["HAVE_MC", "ScratchRig", "vsharp", "SCRATCH_BASE"]
