import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from asm import HAVE_MC  # noqa: E402

collect_ignore = []


def _uses_asm(module) -> bool:
    """The test file imports the assembler helper (tests/execute/asm.py) or something from it."""
    return any(
        getattr(v, "__name__", None) == "asm" or getattr(v, "__module__", None) == "asm"
        for v in vars(module).values()
    )


def pytest_collection_modifyitems(config, items):
    if not HAVE_MC:
        skip = pytest.mark.skip(reason="llvm-mc-19 not installed")
        for it in items:
            if "execute" in str(it.fspath) and "fixture" not in str(it.fspath):
                # a GPU test of a file that assembles nothing runs where LLVM is not installed
                # (the GPU machine): the RADV image captures on CUDA
                if it.get_closest_marker("cuda") and not _uses_asm(it.module):
                    continue
                it.add_marker(skip)


@pytest.fixture(scope="session")
def lavapipe_sample(tmp_path_factory):
    """tools/lavapipe_run/lavapipe_sample built once per worker: the sampling tests' lavapipe
    oracle (skips where gcc or the Vulkan loader is missing)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    exe = tmp_path_factory.mktemp("lvp") / "lavapipe_sample"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(root / "tools/lavapipe_run/lavapipe_sample.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_sample does not build here: " + p.stderr[-200:])
    return exe
