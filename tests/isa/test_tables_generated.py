"""The committed ISA tables are exactly what their generators write from LLVM 19 today.

Each generator (tools/gen_isa_*tables.py), run into a temporary directory, must reproduce the
committed files byte for byte: a table cannot be edited by hand, go stale against its generator
or LLVM, or depend on the order a run happened to meet things.  Wall time on two cores (idle ..
busy): a gfx*_w* table 40..90 s, a DPP target 10..17 s, a memory target 25..55 s, so the default
run regenerates gfx1030_w32 alone and `-m slow` the other thirteen (GFX11/12 tables take longer:
VOP3 holds the promoted VOP1/VOP2/VOPC forms).  Without LLVM these skip; the
format check (every table as tools/table_json.py writes it) always runs.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

from wavelift.isa.llvm_oracle import have_llvm

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
TABLES = ROOT / "wavelift" / "isa" / "tables"
_spec = importlib.util.spec_from_file_location("table_json", TOOLS / "table_json.py")
table_json = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table_json)

# (generator, its one argument): what the default run regenerates, what `-m slow` adds
RUNS = [("gen_isa_tables.py", "gfx1030_w32")]
SLOW_RUNS = (
    [
        ("gen_isa_tables.py", t)
        for t in (
            "gfx1030_w64",
            "gfx1010_w32",
            "gfx1010_w64",
            "gfx1100_w32",
            "gfx1100_w64",
            "gfx1150_w32",
            "gfx1150_w64",
            "gfx1200_w32",
            "gfx1200_w64",
        )
    ]
    + [(f"gen_isa_{kind}_tables.py", t) for kind in ("dpp", "memory") for t in ("gfx1030", "gfx1010")]
    + [
        (f"gen_isa_{kind}_tables.py", t)
        for kind in ("dpp", "memory")
        for t in ("gfx1100", "gfx1150", "gfx1200")
    ]
)
OUTPUT = {
    "gen_isa_tables.py": "{}.json",
    "gen_isa_dpp_tables.py": "dpp_{}.json",
    "gen_isa_memory_tables.py": "memory_{}.json",
}

# The generators write next to themselves (OUT / OUT_DIR); the child points that elsewhere.
_CHILD = """
import importlib.util, pathlib, sys
script, arg, out = sys.argv[1:]
sys.path.insert(0, str(pathlib.Path(script).parent))
spec = importlib.util.spec_from_file_location("generator", script)
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
gen.OUT, gen.OUT_DIR = out, pathlib.Path(out)
gen.ROOT = gen.OUT_DIR          # gen_isa_memory_tables.py prints the path relative to it
sys.argv = [script, arg]
gen.main(sys.argv) if script.endswith("memory_tables.py") else gen.main()
"""


def _regenerate(script, arg, tmp_path):
    if not have_llvm():
        pytest.skip("llvm-mc-19/llvm-objdump-19 not installed: cannot regenerate the ISA tables")
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, str(TOOLS / script), arg, str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, f"{script} {arg} failed:\n{p.stdout[-2000:]}{p.stderr[-4000:]}"
    name = OUTPUT[script].format(arg)
    want = (TABLES / name).read_text()
    got = (tmp_path / name).read_text()
    if got != want:
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), f"committed/{name}", f"regenerated/{name}", lineterm="", n=2
        )
        pytest.fail(
            f"python3 tools/{script} {arg} changes the committed {name}:\n" + "\n".join(list(diff)[:60])
        )


@pytest.mark.parametrize(("script", "arg"), RUNS)
def test_regenerated_table_is_committed(script, arg, tmp_path):
    _regenerate(script, arg, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("script", "arg"), SLOW_RUNS)
def test_regenerated_table_is_committed_slow(script, arg, tmp_path):
    _regenerate(script, arg, tmp_path)


def test_every_table_is_regenerated():
    names = {OUTPUT[s].format(a) for s, a in RUNS + SLOW_RUNS}
    assert names == {p.name for p in TABLES.glob("*.json")}


@pytest.mark.parametrize("path", sorted(TABLES.glob("*.json")), ids=lambda p: p.name)
def test_table_is_in_generated_format(path):
    text = path.read_text()
    table = json.loads(text)
    assert next(iter(table)) == "_generated" and "do not edit" in table["_generated"]
    assert text == table_json.dumps(table), f"{path.name} was not written by tools/table_json.py"
