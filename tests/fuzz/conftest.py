"""tests/fuzz: each fuzz_<target>.py defines case(seed) for tools/fuzz.py (long runs,
docs/fuzzing.md) and a short test over a fixed range of seeds, collected here as a test module."""

import fuzzing_paths
import pytest

fuzzing_paths.add()


def pytest_collect_file(file_path, parent):
    # (a file named on the command line is collected by pytest itself)
    if (
        file_path.name.startswith("fuzz_")
        and file_path.suffix == ".py"
        and not parent.session.isinitpath(file_path)
    ):
        return pytest.Module.from_parent(parent, path=file_path)
