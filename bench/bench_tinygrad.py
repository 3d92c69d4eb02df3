"""tinygrad's own kernels through wavelift's hook vs tinygrad's own Python emulator.

    python bench/bench_tinygrad.py --tinygrad-src /tmp/tinygrad [--target gfx1100] [--set tests|bench]
                                   [--json F]

The kernels are tests/fixtures/tinygrad/<target>/*.npz (--set tests: the test fixtures, small
shapes) or <target>-bench/*.npz (--set bench: larger shapes of a few ops), both compiled by
tinygrad 0.14.0 (tests/fixtures/tinygrad/build.py), replayed by tests/compat/harness.py the way tinygrad's AMD
runtime and mock GPU dispatch them: once through ``wavelift.compat.tinygrad.run_asm`` in this
process, and once through tinygrad's ``test/mockgpu/amd/emu.py run_asm`` in a child process whose
``sys.path`` starts with ``--tinygrad-src``: a checkout of tinygrad's repository (its test/ folder
is not in the pip package; get it into /tmp, e.g. ``git clone --depth 1
https://github.com/tinygrad/tinygrad /tmp/tinygrad``; never commit it).  The emulator's CPU
device compiles with ``clang``: /usr/lib/llvm-19/bin goes first on the child's PATH.

Each fixture runs twice per side: *cold* (the first replay in the process: wavelift translates
and builds its modules, the emulator compiles its per-instruction runners; both keep them) and
*warm* (the same replay again, the code objects still loaded at the same addresses, as
tinygrad's runtime keeps a program loaded: wavelift's module keys hold the code address, so a
kernel loaded elsewhere is translated again).  Times are the wall time spent inside the hook (the sum over the
fixture's dispatches); every result is checked against tinygrad's CPU device (tests/compat/
bounds.py: OK or WRONG).  Ratios are emulator / wavelift (> 1: wavelift is faster).  Only the
gfx1100 fixtures can run on the emulator (it runs rdna3/rdna4/cdna); --target gfx1030 times the
hook alone.  The host's load average is printed before and after (a shared machine).

Exit status: 0 ran; 1 a result was WRONG or a dispatch refused; 3 the emulator could not run
(the wavelift half still prints).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.compat import bounds, harness  # noqa: E402

CHILD = r"""
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from tests.compat import bounds, harness
from test.mockgpu.amd.emu import run_asm
out = {}
for p in harness.fixtures(sys.argv[3]):
    fx = harness.load(p)
    row = {}
    for phase in ("cold", "warm"):
        try:
            r = harness.replay(fx, run_asm, extras=False, keep_code=True)
        except Exception as e:
            row[phase] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
            break
        ok = all(c == 0 for c in r.codes) and bounds.check(fx.name, r.output, fx.expected(), fx.inputs()) is None
        row[phase] = {"seconds": sum(r.seconds), "dispatches": len(r.codes), "ok": ok}
    out[fx.name] = row
    print(json.dumps({fx.name: row}), flush=True)
"""


def run_hook(target: str) -> dict:
    from wavelift.compat import tinygrad as tg

    out = {}
    for p in harness.fixtures(target):
        fx = harness.load(p)
        row = {}
        for phase in ("cold", "warm"):
            r = harness.replay(fx, tg.run_asm, keep_code=True)
            ok = all(c == tg.OK for c in r.codes) and (
                bounds.check(fx.name, r.output, fx.expected(), fx.inputs()) is None
            )
            row[phase] = {"seconds": sum(r.seconds), "dispatches": len(r.codes), "ok": ok}
        out[fx.name] = row
    return out


def run_emulator(src: str, target: str) -> tuple[dict, str]:
    env = dict(os.environ, PATH="/usr/lib/llvm-19/bin:" + os.environ.get("PATH", ""), PYTHONPATH="")
    p = subprocess.run(
        [sys.executable, "-c", CHILD, src, str(ROOT), target],
        env=env,
        cwd=src,
        capture_output=True,
        text=True,
    )
    out: dict = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            out.update(json.loads(line))
    return out, ("" if p.returncode == 0 else p.stderr[-2000:])


def _fmt(x: dict | None) -> str:
    if not x:
        return "      -"
    if "error" in x:
        return "  error"
    return f"{x['seconds']:7.3f}" + ("" if x["ok"] else " WRONG")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tinygrad-src", help="a checkout of tinygrad's repository (with test/mockgpu)")
    ap.add_argument("--target", default="gfx1100", choices=["gfx1100", "gfx1030"])
    ap.add_argument("--set", default="tests", choices=["tests", "bench"])
    ap.add_argument(
        "--native",
        default="auto",
        choices=["auto", "on", "off"],
        help="wavelift's native tier (WAVELIFT_NATIVE): auto (default), on (every dispatch, its C++ "
        "compiled first: a slow cold run, then cached on disk), off (NumPy blocks only)",
    )
    ap.add_argument("--json", help="also write the numbers here")
    a = ap.parse_args(argv)
    from wavelift.backends.numpy import runtime

    runtime.NATIVE = a.native
    print(f"load average before: {os.getloadavg()}")
    where = a.target + ("-bench" if a.set == "bench" else "")
    hook = run_hook(where)
    emu, err = ({}, "")
    if a.tinygrad_src and a.target == "gfx1100":
        emu, err = run_emulator(a.tinygrad_src, where)
    print(f"load average after:  {os.getloadavg()}")
    print(
        f"\nfixtures {where}, wavelift native tier {a.native}: seconds inside run_asm (sum over a fixture's dispatches)"
    )
    print(
        f"{'op':18s} {'n':>3s} {'wl cold':>8s} {'wl warm':>8s} {'emu cold':>9s} {'emu warm':>9s} {'cold x':>7s} {'warm x':>7s}"
    )
    tot = {"wl": [0.0, 0.0], "emu": [0.0, 0.0]}
    bad = False
    for name, row in hook.items():
        e = emu.get(name, {})
        ratios = []
        for i, ph in enumerate(("cold", "warm")):
            bad |= not row[ph]["ok"]
            ep = e.get(ph)
            if ep and "seconds" in ep:
                tot["wl"][i] += row[ph]["seconds"]
                tot["emu"][i] += ep["seconds"]
                ratios.append(f"{ep['seconds'] / row[ph]['seconds']:7.1f}")
            else:
                ratios.append("      -")
        print(
            f"{name:18s} {row['cold']['dispatches']:3d} {_fmt(row['cold']):>8s} {_fmt(row['warm']):>8s} "
            f"{_fmt(e.get('cold')):>9s} {_fmt(e.get('warm')):>9s} {ratios[0]} {ratios[1]}"
        )
    if tot["wl"][0]:
        print(
            f"{'total (both ran)':18s}     {tot['wl'][0]:8.3f} {tot['wl'][1]:8.3f} {tot['emu'][0]:9.3f} "
            f"{tot['emu'][1]:9.3f} {tot['emu'][0] / tot['wl'][0]:7.1f} {tot['emu'][1] / tot['wl'][1]:7.1f}"
        )
    if err:
        print(f"\nthe emulator failed:\n{err}")
    if a.json:
        pathlib.Path(a.json).write_text(
            json.dumps({"target": a.target, "wavelift": hook, "emulator": emu}, indent=1)
        )
    if bad:
        return 1
    return 3 if (a.tinygrad_src and a.target == "gfx1100" and (err or not emu)) else 0


if __name__ == "__main__":
    sys.exit(main())
