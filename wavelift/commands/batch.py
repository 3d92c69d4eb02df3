"""`wavelift batch MANIFEST`: replay many captures, compare each dispatch with the manifest.

One JSON line per dispatch (docs/guide.md, "Batches"), in manifest order whatever the executor
or the number of jobs, written once at the end (--out: all or nothing). Exit status: 0 when
every line matches the manifest (or is unchecked); 1 when one does not, or wavelift failed on a
capture; 2 for a user error. `--make-manifest DIR` writes a manifest from today's results.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..errors import UserError
from ..terminal import shown
from .common import add_backend, add_debug, check_backend, check_outputs, write_output

COMPARED = ("result", "code", "digest", "check")  # what --baseline calls a change


def _tasks(files, a) -> list[dict]:
    return [
        {"path": f, "backend": a.backend, "mode": a.mode, "time_limit": a.time_limit, "budget": a.budget}
        for f in files
    ]


def _execute(a, tasks):
    from ..batch.executors import EXECUTORS
    from ..batch.worker import run_capture

    name = "dask" if a.scheduler else a.executor
    if a.jobs < 1:
        raise UserError(f"--jobs {a.jobs}: give at least 1")
    run = EXECUTORS[name](a.jobs, a.scheduler)
    progress = _Progress(len(tasks), a.progress or sys.stderr.isatty())
    try:
        return run(run_capture, tasks, progress.done), name
    finally:
        progress.finish()


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.n = total, enabled, 0
        self.tty = sys.stderr.isatty()

    def done(self, _i) -> None:
        self.n += 1
        if self.enabled and (self.tty or self.n == self.total or self.n % 50 == 0):
            start = "\r" if self.tty else ""
            end = "" if self.tty and self.n < self.total else "\n"
            sys.stderr.write(f"{start}wavelift: {self.n} of {self.total} capture(s) replayed{end}")
            sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled and self.tty and self.n < self.total:
            sys.stderr.write("\n")


def _jsonl(lines) -> str:
    return "".join(json.dumps(x, ensure_ascii=True) + "\n" for x in lines)


def _emit(a, text: str) -> None:
    """The JSONL: to --out (all or nothing), else to stdout in one write."""
    if a.out:
        from ..outfile import atomic_output

        def write(p):
            with atomic_output(p, binary=False) as f:
                f.write(text)

        write_output("--out", a.out, write)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def load_baseline(path: str) -> dict:
    """{(capture, dispatch): line} of a previous run's JSONL (lines of `gone` entries left out)."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = f.read().splitlines()
    except OSError as e:
        raise UserError(f"--baseline {path}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise UserError(f"--baseline {path}: not a JSONL file of `wavelift batch`") from None
    out = {}
    for n, row in enumerate(rows, 1):
        if not row.strip():
            continue
        try:
            x = json.loads(row)
        except ValueError:
            x = None
        if not (
            isinstance(x, dict)
            and isinstance(x.get("capture"), str)
            and (x.get("dispatch") is None or isinstance(x.get("dispatch"), int))
        ):
            raise UserError(
                f"--baseline {path}: line {n} is not a result line of `wavelift "
                f"batch` (JSON with capture and dispatch)"
            )
        if x.get("change") != "gone":
            out[(x["capture"], x["dispatch"])] = x
    return out


def changes(lines: list[dict], baseline: dict, captures: set[str]) -> list[dict]:
    """The lines that differ from the baseline in any of COMPARED (change "changed") or that it
    lacks ("new"), and the baseline's lines of these captures that are gone ("gone"), each with
    the baseline's values under "before". Captures outside this run (another shard) are not
    compared."""
    out, seen = [], set()
    for x in lines:
        k = (x["capture"], x["dispatch"])
        seen.add(k)
        b = baseline.get(k)
        if b is None:
            out.append(dict(x, change="new", before=None))
        elif any(b.get(f) != x.get(f) for f in COMPARED):
            out.append(dict(x, change="changed", before={f: b.get(f) for f in COMPARED}))
    for k, b in baseline.items():
        if k[0] in captures and k not in seen:
            out.append(
                {
                    "capture": k[0],
                    "dispatch": k[1],
                    "change": "gone",
                    "before": {f: b.get(f) for f in COMPARED},
                }
            )
    return out


def cmd_batch(a) -> int:
    from ..batch import manifest as mf

    if (a.manifest is None) == (a.make_manifest is None):
        raise UserError("give a MANIFEST to run, or --make-manifest DIR to make one")
    check_backend(a.backend)
    if a.budget is not None and a.budget <= 0:
        raise UserError(f"--budget {a.budget}: give a positive number of instructions")
    if a.time_limit is not None and a.time_limit <= 0:
        raise UserError(f"--time-limit {a.time_limit}: give a positive number of seconds")
    if a.make_manifest is not None:
        return _make(a)
    check_outputs({"the manifest": a.manifest, "--baseline": a.baseline}, {"--out": a.out})
    entries = mf.shard(mf.load(a.manifest), a.shard)
    baseline = load_baseline(a.baseline) if a.baseline else None
    t0 = time.perf_counter()
    answers, engine = _execute(a, _tasks([e.file for e in entries], a))
    elapsed = time.perf_counter() - t0
    lines = [x for e, out in zip(entries, answers) for x in mf.result_lines(e, out)]
    shown_lines = lines if baseline is None else changes(lines, baseline, {e.path for e in entries})
    _emit(a, _jsonl(shown_lines))
    # the summary goes where the JSONL does not
    say = sys.stdout if a.out else sys.stderr
    count = {
        k: sum(x[k[0]] == k[1] for x in lines)
        for k in [
            ("result", "landed"),
            ("result", "refused"),
            ("result", "error"),
            ("check", "match"),
            ("check", "mismatch"),
            ("check", "unchecked"),
        ]
    }
    jobs = f"{a.jobs} job(s)" if engine == "local" else (a.scheduler or f"LocalCluster of {a.jobs}")
    print(
        f"{a.manifest}{f' shard {a.shard}' if a.shard else ''}: {len(entries)} capture(s), "
        f"{len(lines)} line(s): {count['result', 'landed']} landed, "
        f"{count['result', 'refused']} refused, {count['result', 'error']} error(s); "
        f"{count['check', 'match']} match, {count['check', 'mismatch']} mismatch, "
        f"{count['check', 'unchecked']} unchecked; {elapsed:.1f}s ({engine}, {jobs})",
        file=say,
    )
    bad = [x for x in lines if x["check"] == "mismatch"]
    for x in bad[:20]:
        d = "capture" if x["dispatch"] is None else f"dispatch {x['dispatch']}"
        print(f"  mismatch: {shown(x['capture'])} {d}: {shown('; '.join(x['problems']))}", file=say)
    if len(bad) > 20:
        print(f"  … and {len(bad) - 20} more (the JSONL has them all)", file=say)
    if baseline is not None:
        print(f"{len(shown_lines)} change(s) against {a.baseline}", file=say)
    if a.out:
        print(f"results: {a.out}", file=say)
    return 1 if bad else 0


def _make(a) -> int:
    from ..batch import manifest as mf

    for opt in ("shard", "baseline"):
        if getattr(a, opt):
            raise UserError(f"--{opt} applies to running a manifest, not to --make-manifest")
    if not os.path.isdir(a.make_manifest):
        raise UserError(f"--make-manifest {a.make_manifest}: not a directory of captures")
    check_outputs({}, {"--out": a.out})
    files = mf.find_captures(a.make_manifest)
    if not files:
        raise UserError(f"--make-manifest {a.make_manifest}: no .wlcap files under it")
    base = os.path.dirname(os.path.abspath(a.out)) if a.out else os.getcwd()
    answers, _ = _execute(a, _tasks([os.path.abspath(f) for f in files], a))
    entries, left = [], 0
    for f, out in zip(files, answers):
        rel = os.path.relpath(os.path.abspath(f), base)
        e = mf.make_entry(rel, out)
        if e is None:
            left += 1
            e = {"path": rel}
            print(
                f"wavelift: {shown(rel)}: {shown(out['error']['message'])}; its entry checks nothing",
                file=sys.stderr,
            )
        elif out.get("recorded_problems"):
            print(
                f"wavelift: note: {shown(rel)}: the capture's own expected results do not hold "
                f"({shown('; '.join(out['recorded_problems']))}); the manifest records what "
                f"the replay gives",
                file=sys.stderr,
            )
        entries.append(e)
    _emit(a, mf.dumps(entries))
    n = sum(len(e.get("dispatches", ())) for e in entries)
    print(
        f"wavelift: manifest of {len(entries)} capture(s), {n} dispatch(es)"
        f"{f', {left} with nothing checked' if left else ''}"
        f"{f': {a.out}' if a.out else ''}",
        file=sys.stderr,
    )
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "batch",
        help="replay the captures of a manifest (locally or on Dask) "
        "and compare every dispatch with it (JSONL)",
        description=__doc__,
    )
    p.add_argument("manifest", nargs="?", help='the manifest (JSON; docs/guide.md, "Batches")')
    p.add_argument(
        "--make-manifest",
        metavar="DIR",
        help="replay every .wlcap under DIR and write a manifest expecting what they "
        "give (paths relative to --out's directory, else to this directory)",
    )
    p.add_argument(
        "--out",
        "-o",
        metavar="FILE",
        help="write the JSONL (or the manifest) here, all or nothing; default: stdout",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="worker processes (local), or workers of the LocalCluster (dask)",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (1-based): the entries at positions k with "
        "k %% N == I-1; the N shards cover the manifest exactly once",
    )
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="a previous run's JSONL: write only the lines that changed (result, "
        "code, digest or check), are new, or are gone",
    )
    p.add_argument(
        "--executor",
        choices=["local", "dask"],
        default="local",
        help="local: worker processes here (default); dask: Dask distributed (pip install 'wavelift[dask]')",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a running Dask scheduler (tcp://host:8786): implies --executor dask; "
        "its workers must reach the capture files at the same paths",
    )
    add_backend(p)
    p.add_argument("--mode", choices=["wave", "lane"], default="wave")
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        default=None,
        help="wall-clock limit for each capture's replay (past it: dispatch.time_exceeded)",
    )
    p.add_argument(
        "--budget",
        type=int,
        metavar="N",
        default=None,
        help="instructions each wave may run (default: sized per dispatch)",
    )
    p.add_argument(
        "--progress", action="store_true", help="print progress on stderr even when it is not a terminal"
    )
    add_debug(p)
    p.set_defaults(func=cmd_batch)
