"""tests/fuzz: each fuzz_<target>.py defines case(seed) for tools/fuzz.py (long runs,
docs/fuzzing.md) and a short test over a fixed range of seeds, collected here as a test module."""
import pathlib
import sys

import pytest

_HERE = pathlib.Path(__file__).resolve().parent
for p in (_HERE, _HERE.parent, _HERE.parent / "execute"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def pytest_collect_file(file_path, parent):
    if file_path.name.startswith("fuzz_") and file_path.suffix == ".py" \
            and not parent.session.isinitpath(file_path):     # (named on the command line: pytest collects it)
        return pytest.Module.from_parent(parent, path=file_path)
