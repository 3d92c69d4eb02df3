"""Paths and tool checks shared by the tests (import as `from testpaths import ...`)."""

import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None


def set_sh_register(cap, reg_name: str, value: int, only_if=None) -> int:
    """In a loaded capture's IBs, replace the value SET_SH_REG writes to ``reg_name`` (only where
    it equals ``only_if``, when given) -> how many were replaced (tests assert the count)."""
    from wavelift import pm4
    from wavelift.stream import registers as R

    reg = (R.address_of(reg_name, "SH") - R.SH_BASE) >> 2
    hits = 0
    for a in cap.memory.allocations:
        if not a.name.endswith("-ib"):
            continue
        dw = a.data.view("<u4")
        for i in range(dw.size - 2):
            h = int(dw[i])
            if h >> 30 == 3 and (h >> 8) & 0xFF == pm4.SET_SH_REG:
                first, count = int(dw[i + 1]) & 0xFFFF, (h >> 16) & 0x3FFF
                k = i + 2 + reg - first
                if first <= reg < first + count and (only_if is None or dw[k] == only_if):
                    dw[k] = value
                    hits += 1
    return hits
