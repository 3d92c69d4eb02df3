import sys
import pathlib

import pytest

# Make tests/testpaths.py importable from every test folder (`from testpaths import FIXTURES`).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from testpaths import FIXTURES, ROOT, have_tool  # noqa: E402,F401


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    return FIXTURES
