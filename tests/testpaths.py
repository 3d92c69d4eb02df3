"""Paths and tool checks shared by the tests (import as `from testpaths import ...`)."""
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None
