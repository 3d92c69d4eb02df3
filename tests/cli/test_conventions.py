"""What a user expects of any Python command-line tool (issue 26 items 7 and "Conventions"):
--version, `python -m wavelift`, py.typed, a LICENSE and complete metadata with one version
source, user help without developer notes, option values that look negative, quiet output
into a closed pipe, and an unsupported target refused by name where it is given."""

import importlib.metadata
import os
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from clipaths import ROOT

import wavelift


def test_version(wavelift_cmd):
    p = wavelift_cmd("--version")
    assert p.returncode == 0 and p.stdout == f"wavelift {wavelift.__version__}\n"
    assert wavelift.__version__ == importlib.metadata.version("wavelift")
    m = subprocess.run(
        [sys.executable, "-m", "wavelift", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert (m.returncode, m.stdout, m.stderr) == (0, p.stdout, "")


def test_python_m_wavelift_runs_the_command(built):
    p = subprocess.run(
        [sys.executable, "-m", "wavelift", "info", str(built["vadd"])],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "gfx1030" in p.stdout
    p = subprocess.run(
        [sys.executable, "-m", "wavelift", "run", "nope.wlcap"], capture_output=True, text=True, cwd=ROOT
    )
    assert p.returncode == 2 and p.stderr.startswith("wavelift: nope.wlcap: no such file")


def test_packaging_metadata():
    """One version source (wavelift/__init__.py, read by setuptools), the metadata PyPI shows,
    a permissive LICENSE, and py.typed shipped as package data."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    proj = meta["project"]
    assert "version" not in proj and proj["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "wavelift.__version__"}
    hits = [
        p
        for p in ROOT.glob("**/*")
        if p.suffix in (".py", ".toml", ".cfg")
        and "tests" not in p.parts
        and ".egg-info" not in str(p)
        and f'"{wavelift.__version__}"' in p.read_text(errors="replace")
    ]
    assert [p.relative_to(ROOT).as_posix() for p in hits] == ["wavelift/__init__.py"]
    assert proj["license"] == {"text": "MIT"} and proj["readme"] == "README.md"
    assert (ROOT / "README.md").is_file()
    assert "License :: OSI Approved :: MIT License" in proj["classifiers"]
    assert "Typing :: Typed" in proj["classifiers"]
    lic = (ROOT / "LICENSE").read_text()
    assert lic.startswith("MIT License") and "the wavelift authors" in lic
    assert (ROOT / "wavelift" / "py.typed").is_file()
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["wavelift"]


@pytest.mark.slow
def test_wheel_ships_py_typed_and_license(tmp_path):
    """The built wheel (pip wheel) holds py.typed, __main__.py, the LICENSE and the metadata."""
    import shutil
    import zipfile

    src = tmp_path / "src"  # a copy: setuptools writes build/ into the tree
    shutil.copytree(ROOT / "wavelift", src / "wavelift", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for f in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / f, src / f)
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    (whl,) = tmp_path.glob("wavelift-*.whl")
    names = zipfile.ZipFile(whl).namelist()
    v = wavelift.__version__
    assert {"wavelift/py.typed", "wavelift/__main__.py", f"wavelift-{v}.dist-info/licenses/LICENSE"} <= set(
        names
    )
    m = zipfile.ZipFile(whl).read(f"wavelift-{v}.dist-info/METADATA").decode()
    assert "License: MIT" in m and "Classifier: Typing :: Typed" in m


def test_help_is_for_users(wavelift_cmd):
    p = wavelift_cmd("--help")
    assert p.returncode == 0
    for dev in ("this file only parses", "lives next to the code"):
        assert dev not in p.stdout
    assert "--version" in p.stdout and "docs/guide.md" in p.stdout
    from wavelift.cli import _parsers, build_parser

    helps = {sp.prog: sp.format_help() for sp in _parsers(build_parser())}
    assert len(helps) >= 6  # wavelift and each subcommand
    for prog, h in helps.items():
        for dev in ("decision 0", "wavelift.cli", "wavelift.driver", "(0018)"):
            assert dev not in h, (prog, dev)


def test_negative_option_values(cli, built, tmp_path):
    """`--range -1,1` as `--range=-1,1` (argparse would take -1,1 for an option)."""
    for argv in (["--range", "-1,3"], ["--range=-1,3"], ["--range", "-1e0,3"]):
        rc, out, err = cli(
            "show",
            built["images"],
            "floats",
            "-f",
            "r32f",
            "-W",
            12,
            "-H",
            10,
            *argv,
            "--png",
            tmp_path / "f.png",
        )
        assert rc == 0, (argv, err)
        assert "range [-1, 3]" in out
    # an option's name after an option that takes a value is still an option
    with pytest.raises(SystemExit):
        cli("show", built["images"], "floats", "-f", "r32f", "-W", 12, "--png", "--opaque")


@pytest.mark.parametrize(
    "argv",
    [
        ["wavelift", "info", "{vadd}"],
        ["wavelift", "--help"],
        ["python", "-m", "wavelift.run.report"],
        ["python", "-m", "wavelift.errors"],
        ["python", "-m", "wavelift.isa.coverage"],
    ],
)
def test_closed_pipe_is_quiet(built, argv, wavelift_cmd):
    """Output into a pipe whose reader is gone (`| head`): no traceback, no 'Exception ignored',
    status 0. The read end is closed before the command starts, so every write fails."""
    r, w = os.pipe()
    os.close(r)
    argv = [a.format(vadd=built["vadd"]) for a in argv]
    try:
        if argv[0] == "python":
            p = subprocess.run(
                [sys.executable] + argv[1:],
                stdout=w,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                timeout=120,
            )
        else:
            p = wavelift_cmd(*argv[1:], stdout=w, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (0, "")


def test_device_refuses_an_unsupported_target():
    """Device("gfx90a") (a real target wavelift does not run; every decoded target runs since
    decision 0027) is refused where it is made, naming the target (was, for gfx1100 before it ran:
    accepted, then a user-SGPR error at launch)."""
    from wavelift.errors import UserError

    with pytest.raises(UserError, match=r"target 'gfx90a': unknown target .*gfx1030"):
        wavelift.Device("gfx90a")
    with pytest.raises(UserError, match="target 'gfx42': unknown target"):
        wavelift.Device("gfx42")


def test_engine_refuses_an_unsupported_target(built):
    """A Capture whose target is changed in Python reaches the engine: dispatch.bad_target,
    memory unchanged (was: ValueError from the decoder)."""
    cap = wavelift.Capture.load(built["vadd"])
    cap.target = "gfx90a"
    before = [np.array(a.data) for a in cap.memory]
    (r,) = wavelift.replay(cap)
    assert r.refusal is not None and r.refusal.code == "dispatch.bad_target"
    assert "gfx90a" in r.refusal.message
    for a, b in zip(cap.memory, before):
        np.testing.assert_array_equal(np.array(a.data), b)
