#!/usr/bin/env python3
"""How much of the fixture dispatches globalrange proves (decision 0049's amendment h110), each
proof checked against the NumPy backend's record of the accesses (tests/cuda/globalrange_oracle.py).

    python bench/globalrange_coverage.py [--only PATTERN] [--scratch] [--aco] [--captures]
                                         [--targets] [--resident] [--unrefusable]

One line per dispatch: slots proved / global access slots, "BAD ..." for an access outside
the window claimed for its slot (none may appear); then the totals: dispatches, dispatches
with every slot proved, slots proved.  ``--scratch``: also the scratch tests' dispatches
(bench/gpu_check.py records them by running those tests; llvm-mc-19 needed); ``--aco``: also
the ACO / RADV-LLVM shaders' dispatches (buffer accesses through V#s), ``--captures``: the RADV
captures' (fixture_dispatches), ``--targets``: the GFX11 / GFX12 clang builds'
(tests/clang_targets.py), ``--resident``: bench/bench_resident.py's (shade and stencil5 at
1920x1080, vadd over 2^20 floats).  ``--unrefusable``: also whether each dispatch is proved
unrefusable (globalrange.unrefusable, 0049's amendments h124 / h126: "unrefusable" or its first
reason), each proved one run on NumPy in lane mode ("LANDED" or "BAD: refused / escaped" -- none may
appear), and the counts per reason."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "cuda"), str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--scratch", action="store_true")
    ap.add_argument("--aco", action="store_true")
    ap.add_argument("--captures", action="store_true")
    ap.add_argument("--no-clang", action="store_true")
    ap.add_argument("--unrefusable", action="store_true")
    ap.add_argument("--targets", action="store_true")
    ap.add_argument("--resident", action="store_true")
    args = ap.parse_args()
    import fixture_dispatches as F
    import globalrange_oracle as O

    t0 = time.time()
    print("load average", os.getloadavg())
    ds = [] if args.no_clang else F.clang_dispatches()
    if args.targets:
        ds += F.clang_target_dispatches()
    if args.resident:
        ds += F.resident_dispatches()
    if args.aco:
        ds += [d for d in F.aco_dispatches() if d[1] is not None]
    if args.captures:
        ds += F.capture_dispatches()
    if args.scratch:
        import gpu_check

        ds += gpu_check.scratch_test_dispatches()
    nd = full = none = slots = proved = bad = 0
    reasons: dict = {}
    for name, mem, cfg in ds:
        if args.only not in name:
            continue
        try:
            n, p, b = O.check(name, mem, cfg)
        except Exception as e:  # noqa: BLE001 - a dispatch the oracle cannot run: said, not counted
            print(f"{name}: not checked ({type(e).__name__}: {e})")
            continue
        nd += 1
        full += n > 0 and n == p
        none += n == 0
        slots += n
        proved += p
        bad += len(b)
        line = f"{name}: {p}/{n}" + (f" BAD {b}" if b else "")
        if args.unrefusable:
            why, ran = unrefusable(mem, cfg)
            reasons[why or "unrefusable"] = reasons.get(why or "unrefusable", 0) + 1
            line += f"; {why or 'unrefusable'}" + (f" {ran}" if ran else "")
            bad += ran.startswith("BAD")
        print(line)
    print(
        f"dispatches {nd} (with no global access {none}), every slot proved {full}; "
        f"slots proved {proved} / {slots}; accesses outside their proved window {bad}; "
        f"{time.time() - t0:.0f} s"
    )
    if args.unrefusable:
        print(
            f"proved unrefusable {reasons.get('unrefusable', 0)} of {nd}; first reasons of the rest: "
            + ", ".join(
                f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda x: -x[1]) if k != "unrefusable"
            )
        )
    print("load average", os.getloadavg())
    return 1 if bad else 0


def unrefusable(mem, cfg) -> tuple:
    """(globalrange.unrefusable's reason or None, and for a proved dispatch the NumPy lane-mode
    run's verdict: "LANDED", or "BAD ..." where it was refused or escaped)."""
    import copy

    import globalrange_oracle as O

    from wavelift.run.execute import execute_dispatch

    why = O.unrefusable_of(copy.deepcopy(mem), cfg)
    if why is not None:
        return why, ""
    r = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane")
    if r.refusal is not None or r.escapes:
        return None, f"BAD refused {r.refusal} escapes {r.escapes[:2]}"
    return None, "LANDED"


if __name__ == "__main__":
    sys.exit(main())
