"""The clang-19 fixture matrix of one GFX11/GFX12 target, run against the gfx1030 fixtures'
references (PoCL and the NumPy references of tests/test_fixture_kernels.py).

tests/fixtures/<gfx>/<file>-<O>-<w32|w64>.hsaco are built by `tools/build_fixtures.sh clang11x`
from tests/fixtures/opencl/{basic,math,stack}.cl; each command is in
tests/fixtures/build_log/clang-<gfx>.tsv.  `params(targets)` gives every binary x kernel x case x
mode (wave, lane); the default run takes -O2 wave32 in wave and lane mode and -O2 wave64 in wave
mode on the small shapes, the rest is marked slow.
"""

from __future__ import annotations

import pathlib

import pytest
import test_fixture_kernels as TFK
from reference import cases as C

ROOT = pathlib.Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "fixtures" / "build_log"
DEFAULT = {("O2", 32, "wave"), ("O2", 64, "wave"), ("O2", 32, "lane")}


def rows(target: str) -> list[dict]:
    out = []
    for line in (LOGS / f"clang-{target}.tsv").read_text().splitlines():
        kind, path, source, tgt, wave, opt, scratch, cmd = line.split("\t")
        out.append(
            {
                "kind": kind,
                "path": path,
                "source": source,
                "target": tgt,
                "wave_size": int(wave[1:]),
                "opt_level": opt,
                "command": cmd,
            }
        )
    return out


def params(targets, default=DEFAULT):
    for t in targets:
        for b in rows(t):
            stem = pathlib.Path(b["path"]).stem
            src = pathlib.Path(b["source"]).name
            for kname in C.KERNELS:
                for case in C.cases_for(kname, b["wave_size"]):
                    if case.source != src:
                        continue
                    for mode in ("wave", "lane"):
                        slow = case.shape.slow or (b["opt_level"], b["wave_size"], mode) not in default
                        yield pytest.param(
                            t,
                            b["path"],
                            kname,
                            case.shape.name,
                            mode,
                            marks=[pytest.mark.slow] if slow else [],
                            id=f"{t}-{stem}-{kname}-{case.shape.name}-{mode}",
                        )


def check_logged(target: str) -> None:
    """12 binaries (basic/math/stack x -O0/-O2 x wave32/wave64), each present, with its command."""
    rs = rows(target)
    assert len(rs) == 12
    for b in rs:
        assert (ROOT / b["path"]).is_file(), b["path"]
        assert b["target"] == target and b["command"].startswith("clang-19 ")
        assert f"-mcpu={target}" in b["command"] and b["path"] in b["command"]
        assert (b["wave_size"] == 64) == ("-mwavefrontsize64" in b["command"])


def check(target: str, path: str, kname: str, shape: str, mode: str) -> None:
    b = next(r for r in rows(target) if r["path"] == path)
    case = TFK._case(kname, shape, b["wave_size"])
    expected, source = TFK.expected_for(case)
    where = (
        f"{target}/{pathlib.Path(path).stem} kernel {kname} shape {shape} mode {mode}; expected from {source}"
    )
    args, got = TFK._launch(b, case, mode, where)
    for a in args:
        if a.role == "in":
            same = (C._uview(a.value).reshape(-1) == C._uview(got[a.name]).reshape(-1)).all()
            assert same, f"{where}: input {a.name!r} was written"
    try:
        C.compare(case, expected, got, C._by_name(args))
    except AssertionError as e:
        raise AssertionError(f"{where}\n{e}") from None
