"""Run hand-assembled programs on hand-built guest memory (no driver)."""

from __future__ import annotations

import numpy as np
from asm import assemble

from wavelift.dispatch.config import DispatchConfig
from wavelift.memory.guest import GuestMemory
from wavelift.run.execute import execute_dispatch


class Rig:
    def __init__(self, src: str, wave64: bool = False, target: str = "gfx1030"):
        self.mem = GuestMemory()
        self.code = assemble(src, wave64)
        self.prog = self.mem.alloc(len(self.code) + 256, name="code", data=self.code + b"\0" * 256)
        self.wave_size = 64 if wave64 else 32
        self.target = target

    def buf(self, arr, name="buf"):
        arr = np.ascontiguousarray(arr)
        return self.mem.alloc(arr.nbytes, name=name, data=arr.tobytes())

    def read(self, addr, dtype, count):
        return np.frombuffer(self.mem.read(addr, np.dtype(dtype).itemsize * count), dtype).copy()

    def config(
        self,
        user_sgprs=(),
        groups=(1, 1, 1),
        block=(32, 1, 1),
        tgid=(True, False, False),
        tidig=0,
        lds=0,
        float_mode=0xF0,
        **kw,
    ):
        n = len(user_sgprs)
        sys = {}
        r = n
        for i, k in enumerate("xyz"):
            if tgid[i]:
                sys[f"workgroup_id_{k}"] = r
                r += 1
        rsrc1 = (float_mode << 12) | (1 << 21)
        return DispatchConfig(
            target=self.target,
            program_address=self.prog,
            wave_size=self.wave_size,
            rsrc1=rsrc1,
            rsrc2=0,
            rsrc3=0,
            user_sgprs=tuple(int(v) & 0xFFFFFFFF for v in user_sgprs),
            tgid_enabled=tuple(tgid),
            tidig_comp_cnt=tidig,
            lds_bytes=lds,
            block=tuple(block),
            partial=(0, 0, 0),
            partial_tg=False,
            group_start=(0, 0, 0),
            group_end=tuple(groups),
            system_sgprs=sys,
            **kw,
        )

    def run(self, cfg, **kw):
        return execute_dispatch(self.mem, cfg, **kw)


def ptr(addr):
    return (addr & 0xFFFFFFFF, addr >> 32 & 0xFFFFFFFF)
