import subprocess
import sys

import pytest

from wavelift.errors import CODES, Refusal, markdown_table


def test_refusal_codes_are_registered():
    assert Refusal("escape", "x").code == "escape"
    with pytest.raises(ValueError):
        Refusal("no.such.code", "x")
    assert all(c.count(".") <= 1 and c == c.lower() for c in CODES)


def test_refusal_table_in_docs_is_current():
    from testpaths import ROOT

    assert (ROOT / "docs" / "refusals.md").read_text() == markdown_table()


def test_cli_help_runs():
    r = subprocess.run([sys.executable, "-m", "wavelift.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "disasm" in r.stdout
