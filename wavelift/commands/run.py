"""`wavelift run CAPTURE`: replay every dispatch of a capture and say what happened to each.

Exit status: 0 when every dispatch landed (and the capture's recorded expectations, if any, hold);
1 when a dispatch was refused or an expectation does not hold; 2 for a user error.
"""

from __future__ import annotations

import os
import sys
import time

from ..terminal import shown
from .common import (
    Progress,
    add_backend,
    add_budget,
    add_debug,
    check_backend,
    check_outputs,
    count_dispatches,
    execute_fn,
    fmt_grid,
    hexa,
    load_capture,
    write_output,
)


def result_rows(results) -> list[list[str]]:
    from .common import module_cache_text

    rows = []
    for r in results:
        c, s = r.config, r.stats or {}

        def st(k, fmt=str):
            v = s.get(k)
            return "-" if v is None else fmt(v)

        rows.append(
            [
                str(r.index),
                hexa(c.program_address) if c else "-",
                fmt_grid(c) if c else "-",
                str(c.wave_size) if c else "-",
                "landed" if r.refusal is None else f"refused: {r.refusal.code}",
                st("waves"),
                st("instructions"),
                st("bytes_written"),
                st("escapes"),
                module_cache_text(s),
                st("time_s", lambda v: f"{v:.3f}s"),
            ]
        )
    return rows


HEADER = [
    "#",
    "program",
    "grid (groups x block)",
    "wave",
    "result",
    "waves",
    "instructions",
    "bytes written",
    "escapes",
    "module cache",
    "time",
]
RIGHT = {0, 3, 5, 6, 7, 8, 10}


def format_results(results) -> str:
    from .common import table

    lines = [table(result_rows(results), HEADER, RIGHT)]
    refused = [r for r in results if r.refusal is not None]
    if refused:
        lines.append("")
        for r in refused:
            lines.append(f"dispatch {r.index} refused: {shown(r.refusal)}")
    return "\n".join(lines)


def cmd_run(a) -> int:
    from ..run.replay import replay
    from ..run.report import build_report, write_report

    check_outputs({"the capture": a.capture}, {"--out": a.out, "--json": a.json})
    cap = load_capture(a.capture)
    check_backend(a.backend)
    progress = Progress(a.progress or sys.stderr.isatty())
    t0 = time.perf_counter()
    if progress.enabled:
        progress.total = count_dispatches(cap)
    execute = progress.wrap(execute_fn(a.backend, a.mode, {}, a.budget, progress))
    try:
        results = replay(cap, backend=a.backend, mode=a.mode, execute=execute)
    finally:
        progress.finish()
    elapsed = time.perf_counter() - t0
    landed = sum(r.refusal is None for r in results)
    print(f"{a.capture}: {cap.target}, {len(cap.streams)} stream(s), backend {a.backend}, mode {a.mode}")
    print()
    if results:
        print(format_results(results))
    else:
        print("no dispatches in this capture")
    print()
    problems = None
    if cap.expected:
        problems = cap.check_expected(results)
        if problems:
            print(f"expected results: {len(problems)} difference(s)")
            for p in problems:
                print(f"  {shown(p)}")
        else:
            print("expected results: all match")
    print(f"{landed} of {len(results)} dispatch(es) landed, {len(results) - landed} refused, {elapsed:.2f}s")
    if a.json:
        report = build_report(
            results,
            capture=cap,
            capture_path=a.capture,
            backend=a.backend,
            mode=a.mode,
            expected_problems=problems,
            time_s=elapsed,
        )
        write_output("--json", a.json, lambda p: write_report(p, report))
        print(f"report: {a.json}")
    if a.out:
        cap.notes = dict(
            cap.notes or {},
            after_replay_of=os.path.basename(a.capture),
            after_replay_backend=a.backend,
            after_replay_mode=a.mode,
        )
        cap.expected = None  # they describe the original capture, not this state
        write_output("--out", a.out, cap.save)
        print(f"guest memory after the replay: {a.out}")
    ok = landed == len(results) and not problems
    return 0 if ok else 1


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="replay a capture and report what happened to each dispatch", description=__doc__
    )
    p.add_argument("capture", help=".wlcap file")
    add_backend(p)
    p.add_argument(
        "--mode",
        choices=["wave", "lane"],
        default="wave",
        help="wave: one module invocation per wave; lane: one per lane",
    )
    p.add_argument("--json", metavar="FILE", help="write the report (docs/report-schema.md)")
    p.add_argument("--out", metavar="FILE", help="save guest memory after the replay as a new capture")
    p.add_argument(
        "--progress", action="store_true", help="print progress on stderr even when it is not a terminal"
    )
    add_budget(p)
    add_debug(p)
    p.set_defaults(func=cmd_run)
