"""The import paths every fuzz target may rely on (tests/, tests/execute/ for `asm` and
`harness`, tests/fuzz/), added by tests/fuzz/conftest.py and by tools/fuzz.py alike."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def add() -> None:
    for p in (HERE, HERE.parent, HERE.parent / "execute", HERE.parents[1]):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))
