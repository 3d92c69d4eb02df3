import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from asm import HAVE_MC  # noqa: E402

collect_ignore = []


def pytest_collection_modifyitems(config, items):
    if not HAVE_MC:
        skip = pytest.mark.skip(reason="llvm-mc-19 not installed")
        for it in items:
            if "execute" in str(it.fspath) and "fixture" not in str(it.fspath):
                it.add_marker(skip)
