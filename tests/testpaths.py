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


def execute_rig(conftest_file: str):
    """For the conftest.py of a test folder whose tests run programs through tests/execute's rig
    (harness.Rig, asm.assemble): puts tests/execute on sys.path and returns the
    pytest_collection_modifyitems hook that skips, where llvm-mc-19 is missing, the tests of the
    folder's modules that use the rig (as tests/execute/conftest.py does for its own)."""
    import sys

    import pytest

    folder = pathlib.Path(conftest_file).resolve().parent
    execute = ROOT / "tests" / "execute"
    if str(execute) not in sys.path:
        sys.path.insert(0, str(execute))
    from asm import HAVE_MC

    def pytest_collection_modifyitems(config, items):
        if HAVE_MC:
            return
        skip = pytest.mark.skip(reason="llvm-mc-19 not installed")
        uses: dict = {}
        for it in items:
            f = pathlib.Path(str(it.fspath)).resolve()
            if not f.is_relative_to(folder):
                continue
            if f not in uses:
                text = f.read_text()
                uses[f] = any(f"from {m} import" in text for m in ("harness", "asm", "test_basic"))
            if uses[f]:
                it.add_marker(skip)

    return pytest_collection_modifyitems


def one_wave_config(user_sgprs, target: str = "gfx1030"):
    """A one-workgroup, one-wave32 DispatchConfig at program address 0x1000 with these user SGPRs
    (the tracer/host-path tests' dispatch)."""
    from wavelift.dispatch.config import DispatchConfig

    return DispatchConfig(
        target=target,
        program_address=0x1000,
        wave_size=32,
        rsrc1=0,
        rsrc2=0,
        rsrc3=0,
        user_sgprs=tuple(user_sgprs),
        tgid_enabled=(False, False, False),
        tidig_comp_cnt=0,
        lds_bytes=0,
        block=(32, 1, 1),
        partial=(0, 0, 0),
        partial_tg=False,
        group_start=(0, 0, 0),
        group_end=(1, 1, 1),
    )
