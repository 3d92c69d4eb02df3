"""The batch manifest: which captures to replay and what each must give (docs/guide.md "Batches").

A manifest is a JSON file (strict: no repeated keys, no NaN):

    {"format": "wavelift-batch", "version": 1,
     "captures": [
      {"path": "caps/vadd.wlcap",           # relative to the manifest's directory
       "sha256": "…",                        # optional: the capture file's SHA-256
       "dispatches": [{"result": "landed", "digest": "…"},     # digest optional
                      {"result": "refused", "code": "escape"}]},
      {"path": "caps/damaged.wlcap", "refused": "capture.corrupt"},
      {"path": "caps/new.wlcap"}]}           # replayed, nothing checked

Per capture: `dispatches`, one expectation per dispatch in replay order (the replay must have
exactly as many), or `refused`, the code of a capture that does not load (`capture.*`), or
neither (its lines are `unchecked`). The digest of a landed dispatch is worker.span_digest's.

Each result line (`result_lines`) says how it compares: `check` is `match`, `mismatch` (with
`problems`) or `unchecked`.
"""

from __future__ import annotations

import json
import os
import re

from ..errors import UserError

FORMAT, VERSION = "wavelift-batch", 1
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CODE = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)*")


class Entry:
    """One capture of a manifest: `path` as the manifest writes it, `file` where it is."""

    def __init__(
        self,
        index: int,
        path: str,
        file: str,
        sha256: str | None,
        dispatches: list[dict] | None,
        refused: str | None,
    ):
        self.index, self.path, self.file = index, path, file
        self.sha256, self.dispatches, self.refused = sha256, dispatches, refused

    @property
    def checked(self) -> bool:
        return self.dispatches is not None or self.refused is not None


def _no_repeats(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"key {k!r} appears twice in one object")
        d[k] = v
    return d


def _bad_constant(name):
    raise ValueError(f"{name} is not JSON")


def load(path: str) -> list[Entry]:
    """The manifest's entries, in order; a UserError naming the entry for anything malformed."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise UserError(
            f"{path}: no such file (a batch manifest; `wavelift batch --make-manifest DIR` makes one)"
        ) from None
    except IsADirectoryError:
        raise UserError(
            f"{path}: is a directory; give the manifest file "
            f"(`--make-manifest {path}` makes one from its captures)"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read the manifest ({getattr(e, 'strerror', None) or e})") from None
    try:
        doc = json.loads(text, object_pairs_hook=_no_repeats, parse_constant=_bad_constant)
    except ValueError as e:
        raise UserError(f"{path}: not a JSON manifest ({e})") from None
    return parse(doc, path)


def parse(doc, path: str) -> list[Entry]:
    def bad(msg):
        raise UserError(f'{path}: {msg} (docs/guide.md, "Batches", gives the format)')

    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        bad(f'not a batch manifest (its "format" must be "{FORMAT}")')
    if doc.get("version") != VERSION:
        bad(f"manifest version {doc.get('version')!r}; this wavelift reads version {VERSION}")
    extra = set(doc) - {"format", "version", "captures", "notes"}
    if extra:
        bad(f"unknown key(s) {', '.join(sorted(extra))}")
    caps = doc.get("captures")
    if not isinstance(caps, list):
        bad('"captures" must be a list')
    base = os.path.dirname(os.path.abspath(path))
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, c in enumerate(caps):
        where = f"captures[{i}]"
        if not isinstance(c, dict):
            bad(f"{where} is not an object")
        extra = set(c) - {"path", "sha256", "dispatches", "refused", "notes"}
        if extra:
            bad(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        p = c.get("path")
        if not isinstance(p, str) or not p:
            bad(f'{where}: "path" must be a non-empty string')
        if p in seen:
            bad(f"{where}: {p!r} is also captures[{seen[p]}] (each capture once)")
        seen[p] = i
        sha = c.get("sha256")
        if sha is not None and not (isinstance(sha, str) and _HEX64.fullmatch(sha)):
            bad(f'{where}: "sha256" must be 64 lower-case hex digits')
        refused = c.get("refused")
        if refused is not None and not (isinstance(refused, str) and _CODE.fullmatch(refused)):
            bad(f'{where}: "refused" must be a refusal code such as "capture.corrupt"')
        ds = c.get("dispatches")
        if ds is not None and refused is not None:
            bad(f'{where}: give "dispatches" or "refused", not both')
        if ds is not None:
            if not isinstance(ds, list):
                bad(f'{where}: "dispatches" must be a list')
            for k, d in enumerate(ds):
                _check_dispatch(d, f"{where}.dispatches[{k}]", bad)
        entries.append(Entry(i, p, os.path.join(base, p), sha, ds, refused))
    return entries


def _check_dispatch(d, where, bad) -> None:
    if not isinstance(d, dict):
        bad(f"{where} is not an object")
    extra = set(d) - {"result", "code", "digest"}
    if extra:
        bad(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    r = d.get("result")
    if r == "landed":
        if "code" in d:
            bad(f'{where}: a landed dispatch has no "code"')
        dg = d.get("digest")
        if dg is not None and not (isinstance(dg, str) and _HEX64.fullmatch(dg)):
            bad(f'{where}: "digest" must be 64 lower-case hex digits')
    elif r == "refused":
        if "digest" in d:
            bad(f'{where}: a refused dispatch has no "digest" (nothing lands)')
        code = d.get("code")
        if not (isinstance(code, str) and _CODE.fullmatch(code)):
            bad(f'{where}: a refused dispatch needs its "code" (e.g. "escape")')
    else:
        bad(f'{where}: "result" must be "landed" or "refused"')


def shard(entries: list[Entry], spec: str | None) -> list[Entry]:
    """Entries of shard `i/N` (1 <= i <= N): those whose manifest position k has k % N == i - 1,
    so the N shards cover each entry exactly once and depend on the manifest alone."""
    if spec is None:
        return entries
    m = re.fullmatch(r"(\d+)/(\d+)", spec)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise UserError(f"--shard {spec}: give i/N with 1 <= i <= N (e.g. --shard 2/4)")
    i, n = int(m[1]), int(m[2])
    return [e for e in entries if e.index % n == i - 1]


# --- results ----------------------------------------------------------------------------------
def result_lines(entry: Entry, out: dict) -> list[dict]:
    """The JSONL lines of one capture: one per dispatch of `out` (worker.run_capture's answer
    for `entry`); a line with dispatch null when the capture as a whole was refused (did not
    load), or with the dispatch's index when wavelift failed on it (result `error`); a `missing`
    line for each dispatch the manifest expects that did not run; and one `empty` line (dispatch
    null) for a capture that loaded and has no dispatches. Timings are under "timing" alone, so
    the rest of a line is the same on every run."""
    lines = []
    file_problem = None
    if entry.sha256 is not None and out.get("sha256") != entry.sha256:
        file_problem = (
            f"the capture file is not the one the manifest names (sha256 "
            f"{_short(out.get('sha256')) or 'unreadable'}, the manifest has "
            f"{_short(entry.sha256)})"
        )
    exp, err, got = entry.dispatches, out.get("error"), out["dispatches"]
    loaded = err is None or err["result"] == "error"

    def add(line, problems):
        if file_problem:
            problems = [file_problem] + problems
        line["problems"] = problems
        line["check"] = "mismatch" if problems else "match" if entry.checked else "unchecked"
        lines.append(line)

    for d in got:
        problems = []
        if exp is not None:
            problems += (
                _compare(exp[d["dispatch"]], d)
                if d["dispatch"] < len(exp)
                else [f"the manifest expects {len(exp)} dispatch(es); this is one more"]
            )
        add(
            _line(
                entry,
                d["dispatch"],
                d["result"],
                d["code"],
                d["message"],
                d["digest"],
                d["bytes_written"],
                {"dispatch_s": round(d["time_s"], 6)},
            ),
            problems,
        )
    if err is not None:
        if err["result"] == "error":
            problems = [f"{err['code']}: {err['message']}"]
        elif entry.refused is not None:
            problems = (
                []
                if err["code"] == entry.refused
                else [f"refused {err['code']}; the manifest expects {entry.refused}"]
            )
        else:
            problems = [f"refused {err['code']}; the manifest expects it to load"] if exp is not None else []
        add(
            _line(
                entry,
                err["dispatch"],
                err["result"],
                err["code"],
                err["message"],
                None,
                0,
                {"capture_s": round(out.get("time_s", 0.0), 6)},
            ),
            problems,
        )
    if exp is not None and loaded:
        for i in range(len(got), len(exp)):
            if err is None or err["dispatch"] != i:
                add(
                    _line(entry, i, "missing", None, None, None, 0, {}),
                    [f"the manifest expects dispatch {i}; the replay had {len(got)}"],
                )
    if not lines:
        add(
            _line(entry, None, "empty", None, None, None, 0, {"capture_s": round(out.get("time_s", 0.0), 6)}),
            [],
        )
    if entry.refused is not None and (err is None or err["dispatch"] is not None or got):
        for line in lines:
            line["problems"].append(f"the manifest expects the capture refused {entry.refused}; it loaded")
            line["check"] = "mismatch"
    return lines


def _line(entry, dispatch, result, code, message, digest, written, timing) -> dict:
    return {
        "capture": entry.path,
        "dispatch": dispatch,
        "result": result,
        "code": code,
        "message": message,
        "digest": digest,
        "bytes_written": written,
        "check": None,
        "problems": [],
        "timing": timing,
    }


def _short(digest: str | None) -> str | None:
    """A digest in a problem's text (the line and the manifest hold it whole)."""
    return digest and digest[:16] + "..."


def _compare(exp: dict, d: dict) -> list[str]:
    if exp["result"] != d["result"]:
        got = "landed" if d["result"] == "landed" else f"refused {d['code']}"
        want = "landed" if exp["result"] == "landed" else f"refused {exp['code']}"
        return [f"{got}; the manifest expects {want}"]
    if d["result"] == "refused" and exp["code"] != d["code"]:
        return [f"refused {d['code']}; the manifest expects {exp['code']}"]
    if d["result"] == "landed" and exp.get("digest") is not None and exp["digest"] != d["digest"]:
        return [
            (f"landed bytes with digest {_short(d['digest'])}; the manifest expects {_short(exp['digest'])}")
        ]
    return []


# --- making a manifest ------------------------------------------------------------------------
def find_captures(directory: str) -> list[str]:
    """Every *.wlcap file under `directory`, sorted by path (symbolic links are not followed)."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".wlcap")]
    return sorted(found)


def make_entry(path: str, out: dict) -> dict | None:
    """The manifest entry that expects what `out` (run_capture's answer) gave; None when a crash
    left nothing to expect."""
    err = out.get("error")
    if err is not None and err["result"] == "error":
        return None
    e: dict = {"path": path}
    if out.get("sha256"):
        e["sha256"] = out["sha256"]
    if err is not None:
        e["refused"] = err["code"]
        return e
    e["dispatches"] = [
        {"result": "landed", "digest": d["digest"]}
        if d["result"] == "landed"
        else {"result": "refused", "code": d["code"]}
        for d in out["dispatches"]
    ]
    return e


def dumps(entries: list[dict]) -> str:
    """The manifest as text: one line per capture field, one per dispatch (diffs stay small)."""
    out = [f'{{"format": "{FORMAT}", "version": {VERSION}, "captures": [']
    for n, e in enumerate(entries):
        head = {k: v for k, v in e.items() if k != "dispatches"}
        text = " " + json.dumps(head)[:-1]
        if "dispatches" in e:
            ds = ",\n".join("   " + json.dumps(d) for d in e["dispatches"])
            text += ', "dispatches": [' + ("\n" + ds + "]" if ds else "]")
        out.append(text + "}" + ("," if n < len(entries) - 1 else ""))
    out.append("]}")
    return "\n".join(out) + "\n"
