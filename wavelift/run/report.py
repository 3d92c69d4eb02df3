"""The JSON report of a replay (`wavelift run --json FILE`), built from DispatchResults.

Schema: docs/report-schema.md (`SCHEMA` below is the same schema as JSON Schema, draft 2020-12;
`validate(doc)` checks a document against it without any extra dependency). Other tools build
reports with `build_report(results, ...)` and read them back with `json.load` + `validate`.

Addresses are strings `0x` + 16 hex digits (canonical 64-bit form), because JSON numbers above
2**53 lose precision in many readers; everything else is a plain number, string, bool or null.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..backends import base as backends

SCHEMA_NAME = "wavelift-report"
SCHEMA_VERSION = 1

STAT_KEYS = (
    "waves",
    "instructions",
    "lane_instructions",
    "bytes_written",
    "escapes",
    "module_cache_hit",
    "time_s",
)


def hexaddr(a: int) -> str:
    return f"0x{int(a) & ((1 << 64) - 1):016x}"


def _config(c) -> dict | None:
    if c is None:
        return None
    return {
        "target": c.target,
        "program_address": hexaddr(c.program_address),
        "wave_size": int(c.wave_size),
        "dims": [int(x) for x in c.dims],
        "groups": [int(x) for x in c.num_groups],
        "group_start": [int(x) for x in c.group_start],
        "block": [int(x) for x in c.block],
        "partial": [int(x) for x in c.partial] if c.partial_tg else None,
        "user_sgprs": [int(x) & 0xFFFFFFFF for x in c.user_sgprs],
        "unwritten_user_sgprs": [int(x) for x in c.unwritten_user_sgprs],
        "system_sgprs": {k: int(v) for k, v in sorted(c.system_sgprs.items())},
        "rsrc1": int(c.rsrc1),
        "rsrc2": int(c.rsrc2),
        "rsrc3": int(c.rsrc3),
        "initiator": int(c.initiator),
        "lds_bytes": int(c.lds_bytes),
        "scratch_enabled": bool(c.scratch_enabled),
        "scratch_wave_bytes": int(c.scratch_wave_bytes),
    }


def _stats(s: dict) -> dict:
    out: dict[str, Any] = {}
    for k in STAT_KEYS:
        v = s.get(k)
        if v is None:
            out[k] = None
        elif k == "module_cache_hit":
            out[k] = bool(v)
        elif k == "time_s":
            out[k] = float(v)
        else:
            out[k] = int(v)
    extra = {k: v for k, v in s.items() if k not in STAT_KEYS}
    out["extra"] = json.loads(json.dumps(extra, default=_jsonable))
    return out


def _jsonable(v):
    if hasattr(v, "item"):  # NumPy scalars
        return v.item()
    if isinstance(v, (set, tuple)):
        return list(v)
    return str(v)


def dispatch_record(r) -> dict:
    """The report record of one DispatchResult."""
    return {
        "index": int(r.index),
        "landed": r.refusal is None,
        "refusal": None if r.refusal is None else {"code": r.refusal.code, "message": r.refusal.message},
        "config": _config(r.config),
        "stats": _stats(r.stats or {}),
        "windows": [
            {"address": hexaddr(w.address), "size": int(w.size), "name": w.name, "reason": w.reason}
            for w in r.windows
        ],
        "write_spans": [{"address": hexaddr(a), "size": int(n)} for a, n in r.write_spans],
        "escapes": [
            {
                "pc": int(e.pc),
                "instruction": e.instruction,
                "wave": int(e.wave),
                "lane": int(e.lane),
                "address": hexaddr(e.address),
                "kind": e.kind,
            }
            for e in r.escapes
        ],
    }


def build_report(
    results: Iterable,
    *,
    capture=None,
    capture_path: str | None = None,
    backend: str = "numpy",
    mode: str = "wave",
    expected_problems=None,
    time_s: float | None = None,
) -> dict:
    """A schema-valid report of `results` (DispatchResults, in order). `capture` (a Capture),
    if given, fills in the target, allocation and stream counts; `expected_problems` is the
    list Capture.check_expected returned (None: the capture records no expectations)."""
    from .. import __version__

    records = [dispatch_record(r) for r in results]
    landed = sum(1 for d in records if d["landed"])
    codes: dict[str, int] = {}
    for d in records:
        if d["refusal"]:
            codes[d["refusal"]["code"]] = codes.get(d["refusal"]["code"], 0) + 1
    cap = None
    if capture is not None or capture_path is not None:
        cap = {
            "path": capture_path if capture_path is not None else getattr(capture, "path", None),
            "target": getattr(capture, "target", None),
            "allocations": len(capture.memory) if capture is not None else None,
            "streams": len(capture.streams) if capture is not None else None,
        }
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "wavelift": __version__,
        "capture": cap,
        "backend": backend,
        "mode": mode,
        "summary": {
            "dispatches": len(records),
            "landed": landed,
            "refused": len(records) - landed,
            "refusals": dict(sorted(codes.items())),
            "time_s": float(time_s)
            if time_s is not None
            else float(sum((d["stats"]["time_s"] or 0.0) for d in records)),
            "expected": None
            if expected_problems is None
            else {"ok": not expected_problems, "problems": list(expected_problems)},
        },
        "dispatches": records,
    }


def write_report(path, report: dict) -> None:
    from ..outfile import atomic_output

    with atomic_output(path, binary=False) as f:
        json.dump(report, f, indent=1, sort_keys=False)
        f.write("\n")


# --- schema ----------------------------------------------------------------------------------
_ADDR = {"type": "string", "pattern": "^0x[0-9a-f]{16}$"}
_U = {"type": "integer", "minimum": 0}
_U3 = {"type": "array", "items": _U, "minItems": 3, "maxItems": 3}
_NUL = lambda t: {"type": [t, "null"]}  # noqa: E731

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://wavelift/report-schema/v1",
    "title": "wavelift replay report, version 1",
    "type": "object",
    "required": ["schema", "version", "wavelift", "capture", "backend", "mode", "summary", "dispatches"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": SCHEMA_NAME},
        "version": {"const": SCHEMA_VERSION},
        "wavelift": {"type": "string"},
        "capture": {
            "type": ["object", "null"],
            "required": ["path", "target", "allocations", "streams"],
            "additionalProperties": False,
            "properties": {
                "path": _NUL("string"),
                "target": _NUL("string"),
                "allocations": {"type": ["integer", "null"], "minimum": 0},
                "streams": {"type": ["integer", "null"], "minimum": 0},
            },
        },
        "backend": {"enum": list(backends.names())},
        "mode": {"enum": ["wave", "lane"]},
        "summary": {
            "type": "object",
            "required": ["dispatches", "landed", "refused", "refusals", "time_s", "expected"],
            "additionalProperties": False,
            "properties": {
                "dispatches": _U,
                "landed": _U,
                "refused": _U,
                "refusals": {"type": "object", "additionalProperties": _U},
                "time_s": {"type": "number", "minimum": 0},
                "expected": {
                    "type": ["object", "null"],
                    "required": ["ok", "problems"],
                    "additionalProperties": False,
                    "properties": {
                        "ok": {"type": "boolean"},
                        "problems": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
        },
        "dispatches": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "index",
                    "landed",
                    "refusal",
                    "config",
                    "stats",
                    "windows",
                    "write_spans",
                    "escapes",
                ],
                "additionalProperties": False,
                "properties": {
                    "index": _U,
                    "landed": {"type": "boolean"},
                    "refusal": {
                        "type": ["object", "null"],
                        "required": ["code", "message"],
                        "additionalProperties": False,
                        "properties": {
                            "code": {"type": "string", "pattern": "^[a-z_]+(\\.[a-z_0-9]+)*$"},
                            "message": {"type": "string"},
                        },
                    },
                    "config": {
                        "type": ["object", "null"],
                        "required": [
                            "target",
                            "program_address",
                            "wave_size",
                            "dims",
                            "groups",
                            "group_start",
                            "block",
                            "partial",
                            "user_sgprs",
                            "unwritten_user_sgprs",
                            "system_sgprs",
                            "rsrc1",
                            "rsrc2",
                            "rsrc3",
                            "initiator",
                            "lds_bytes",
                            "scratch_enabled",
                            "scratch_wave_bytes",
                        ],
                        "additionalProperties": False,
                        "properties": {
                            "target": {"type": "string"},
                            "program_address": _ADDR,
                            "wave_size": {"enum": [32, 64]},
                            "dims": _U3,
                            "groups": _U3,
                            "group_start": _U3,
                            "block": _U3,
                            "partial": {"type": ["array", "null"], "items": _U, "minItems": 3, "maxItems": 3},
                            "user_sgprs": {"type": "array", "items": _U, "maxItems": 16},
                            "unwritten_user_sgprs": {"type": "array", "items": _U},
                            "system_sgprs": {"type": "object", "additionalProperties": _U},
                            "rsrc1": _U,
                            "rsrc2": _U,
                            "rsrc3": _U,
                            "initiator": _U,
                            "lds_bytes": _U,
                            "scratch_enabled": {"type": "boolean"},
                            "scratch_wave_bytes": _U,
                        },
                    },
                    "stats": {
                        "type": "object",
                        "required": list(STAT_KEYS) + ["extra"],
                        "additionalProperties": False,
                        "properties": {
                            "waves": {"type": ["integer", "null"], "minimum": 0},
                            "instructions": {"type": ["integer", "null"], "minimum": 0},
                            "lane_instructions": {"type": ["integer", "null"], "minimum": 0},
                            "bytes_written": {"type": ["integer", "null"], "minimum": 0},
                            "escapes": {"type": ["integer", "null"], "minimum": 0},
                            "module_cache_hit": {"type": ["boolean", "null"]},
                            "time_s": {"type": ["number", "null"], "minimum": 0},
                            "extra": {"type": "object"},
                        },
                    },
                    "windows": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["address", "size", "name", "reason"],
                            "additionalProperties": False,
                            "properties": {
                                "address": _ADDR,
                                "size": _U,
                                "name": {"type": "string"},
                                "reason": {"type": "string"},
                            },
                        },
                    },
                    "write_spans": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["address", "size"],
                            "additionalProperties": False,
                            "properties": {"address": _ADDR, "size": _U},
                        },
                    },
                    "escapes": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["pc", "instruction", "wave", "lane", "address", "kind"],
                            "additionalProperties": False,
                            "properties": {
                                "pc": _U,
                                "instruction": {"type": "string"},
                                "wave": _U,
                                "lane": _U,
                                "address": _ADDR,
                                "kind": {"enum": ["load", "store", "atomic", "scratch"]},
                            },
                        },
                    },
                },
            },
        },
    },
}


# --- a small validator for the subset of JSON Schema that SCHEMA uses -------------------------
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _check(v, s: dict, path: str, out: list[str]) -> None:
    if "const" in s and v != s["const"]:
        out.append(f"{path}: {v!r} is not {s['const']!r}")
        return
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: {v!r} is not one of {s['enum']}")
        return
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](v) for t in types):
            out.append(f"{path}: {type(v).__name__} is not {'/'.join(types)}")
            return
    if "minimum" in s and _TYPES["number"](v) and v < s["minimum"]:
        out.append(f"{path}: {v} < {s['minimum']}")
    if "pattern" in s and isinstance(v, str) and not re.search(s["pattern"], v):
        out.append(f"{path}: {v!r} does not match {s['pattern']}")
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                out.append(f"{path}: missing {k!r}")
        for k, x in v.items():
            if k in props:
                _check(x, props[k], f"{path}.{k}", out)
            elif s.get("additionalProperties") is False:
                out.append(f"{path}: unexpected key {k!r}")
            elif isinstance(s.get("additionalProperties"), dict):
                _check(x, s["additionalProperties"], f"{path}.{k}", out)
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"]:
            out.append(f"{path}: {len(v)} items < {s['minItems']}")
        if "maxItems" in s and len(v) > s["maxItems"]:
            out.append(f"{path}: {len(v)} items > {s['maxItems']}")
        if "items" in s:
            for i, x in enumerate(v):
                _check(x, s["items"], f"{path}[{i}]", out)


def validate(doc) -> list[str]:
    """Problems of `doc` against SCHEMA (an empty list: it is a valid version-1 report), plus
    the cross-field rules JSON Schema cannot say: summary counts match the dispatches, `landed`
    is true exactly when `refusal` is null, and indices run 0, 1, 2, ..."""
    out: list[str] = []
    _check(doc, SCHEMA, "$", out)
    if out:
        return out
    ds = doc["dispatches"]
    for i, d in enumerate(ds):
        if d["index"] != i:
            out.append(f"$.dispatches[{i}].index is {d['index']}")
        if d["landed"] != (d["refusal"] is None):
            out.append(f"$.dispatches[{i}]: landed={d['landed']} but refusal={d['refusal']}")
    s = doc["summary"]
    landed = sum(d["landed"] for d in ds)
    if (s["dispatches"], s["landed"], s["refused"]) != (len(ds), landed, len(ds) - landed):
        out.append("$.summary: counts do not match $.dispatches")
    return out


def schema_json() -> str:
    return json.dumps(SCHEMA, indent=1)


if __name__ == "__main__":  # python -m wavelift.run.report: print the JSON Schema
    import sys

    from wavelift.terminal import quiet_broken_pipe

    sys.exit(quiet_broken_pipe(lambda: print(schema_json())))
