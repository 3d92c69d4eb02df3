"""A CUDA module's generation stored beside its cubin, found from the module key alone (issue 24:
a cached build in a new process without generating the source; docs/decisions/0009-cuda.md,
amendment 2026-12-05).

The disk cache names a cubin by a hash of the generated source (compile.disk_name), so finding it
meant generating first (the IR's passes and the lowering: 0.2-1.7 s).  This entry, named by
everything the generation depends on -- the module key, the base address, the arch, NVRTC's
version, the occupancy bound (and WAVELIFT_CUDA_OCCUPANCY_STEP / _FULL), CODEGEN_VERSION, the settings that change the generated code
(WAVELIFT_CUDA_PASSES, WAVELIFT_CUDA_BLENDS, WAVELIFT_CUDA_BARRIERS, WAVELIFT_CUDA_LDS,
WAVELIFT_CUDA_SPANS, WAVELIFT_CUDA_BUDGET,
WAVELIFT_CUDA_RETEST, WAVELIFT_CUDA_WAVESYNC, WAVELIFT_CUDA_EXEC,
WAVELIFT_CUDA_NAN, WAVELIFT_CUDA_HOIST (loops, induction), WAVELIFT_CUDA_LDSBASE,
WAVELIFT_CUDA_MAPMARK, WAVELIFT_CUDA_MAPFILL, WAVELIFT_CUDA_F2I, WAVELIFT_CUDA_STATS,
WAVELIFT_CUDA_COUNT_SLOTS) and a fingerprint of the code that generates it
(path, size and mtime of each file of the packages the translation, the passes and the lowering
live in) -- holds what the module needs from the generation: the source's digest, the slots and
the preloads (the IR ops of ``preload.find``: ``loads`` and ``plan``); the source itself is a
second entry, ``<name>-src``, whose digest must be the one named.

It is data, read back with strict validation (JSON of numbers, strings and the few attribute
shapes the preload ops hold; anything else: a miss, the module is generated), through
backends/disk_cache.py (a private directory, the entry checked against its digest: 0016).  A
miss or a mismatch (the stored key differs, a malformed field) falls back to generating.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pathlib
import re

import numpy as np

from ... import settings
from ...ir.program import Op, Value
from .. import disk_cache

ENTRY_VERSION = "wavelift-cuda-entry-1"
SUFFIX = ".json"
# the packages whose code makes the generated source (the program given to build_module is
# translated by the frontend; the passes and the lowering then make the source)
_PACKAGES = ("isa", "frontend", "ir", "backends/cfamily", "backends/cuda")


@functools.cache
def code_fingerprint() -> str:
    """sha256 over (path, size, mtime) of every source file of _PACKAGES: any edit to the code
    that generates a module names new entries."""
    root = pathlib.Path(__file__).resolve().parent.parent.parent
    h = hashlib.sha256()
    for pkg in _PACKAGES:
        for dirpath, dirs, files in os.walk(root / pkg):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".py", ".h", ".json")):
                    p = os.path.join(dirpath, f)
                    st = os.stat(p)
                    h.update(f"{os.path.relpath(p, root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def entry_name(key, arch: str, base_address: int) -> str:
    from .codegen import COUNT_SLOTS, count_slots, stats_setting
    from .compile import CODEGEN_VERSION, nvrtc_version, occupancy_full_parts, occupancy_threads

    h = hashlib.sha256()
    for part in (
        ENTRY_VERSION,
        CODEGEN_VERSION,
        repr(key),
        str(int(base_address)),
        arch,
        nvrtc_version(),
        str(occupancy_threads()),
        str(settings.get("WAVELIFT_CUDA_OCCUPANCY_STEP")),
        str(settings.get("WAVELIFT_CUDA_PASSES")),
        str(settings.get("WAVELIFT_CUDA_BLENDS")),
        str(settings.get("WAVELIFT_CUDA_BARRIERS")),
        str(settings.get("WAVELIFT_CUDA_LDS")),
        str(settings.get("WAVELIFT_CUDA_SPANS")),
        code_fingerprint(),
        # (only where it changes the code: the names of entries made without it stay)
        *(["budget=straight"] if settings.get("WAVELIFT_CUDA_BUDGET") == "straight" else []),
        *(["retest=off"] if settings.get("WAVELIFT_CUDA_RETEST") == "off" else []),
        *(
            [f"wavesync={settings.get('WAVELIFT_CUDA_WAVESYNC')}"]
            if settings.get("WAVELIFT_CUDA_WAVESYNC")
            else []
        ),
        *(["exec=known"] if settings.get("WAVELIFT_CUDA_EXEC") == "known" else []),
        *(["hoist=loops"] if settings.get("WAVELIFT_CUDA_HOIST") == "loops" else []),
        *(["hoist=induction"] if settings.get("WAVELIFT_CUDA_HOIST") == "induction" else []),
        *(["ldsbase=kept"] if settings.get("WAVELIFT_CUDA_LDSBASE") == "kept" else []),
        # (`group` is the default since h160: entries made before it are the code's before it)
        *(
            [f"mapmark={settings.get('WAVELIFT_CUDA_MAPMARK')}"]
            if settings.get("WAVELIFT_CUDA_MAPMARK") != "group"
            else []
        ),
        *(["mapfill=atomic"] if settings.get("WAVELIFT_CUDA_MAPFILL") == "atomic" else []),
        *(["f2i=cvt"] if settings.get("WAVELIFT_CUDA_F2I") == "cvt" else []),
        *([f"stats={stats_setting()}"] if stats_setting() != "auto" else []),
        *([f"slots={count_slots()}"] if count_slots() != COUNT_SLOTS else []),
        *occupancy_full_parts(),
        *([f"nan={settings.get('WAVELIFT_CUDA_NAN')}"] if settings.get("WAVELIFT_CUDA_NAN") else []),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return "e" + h.hexdigest()[:40]


class _Unstorable(Exception):
    pass


def _enc_attr(v):
    if isinstance(v, bool):
        return ["b", v]
    if isinstance(v, int):
        return ["i", str(v)]
    if isinstance(v, float):
        return ["f", v.hex()]
    if isinstance(v, str):
        return ["s", v]
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        return ["n", v.dtype.str, v.tobytes().hex()]
    if isinstance(v, tuple):
        return ["t", [_enc_attr(x) for x in v]]
    raise _Unstorable(type(v).__name__)


def _dec_attr(e):
    tag = e[0]
    if tag == "b" and len(e) == 2 and isinstance(e[1], bool):
        return e[1]
    if tag == "i" and len(e) == 2 and isinstance(e[1], str) and len(e[1]) < 64:
        return int(e[1])
    if tag == "f" and len(e) == 2 and isinstance(e[1], str) and len(e[1]) < 64:
        return float.fromhex(e[1])
    if tag == "s" and len(e) == 2 and isinstance(e[1], str):
        return e[1]
    if tag == "n" and len(e) == 3 and isinstance(e[1], str) and isinstance(e[2], str):
        dt = np.dtype(e[1])
        if dt.kind not in "biuf":
            raise ValueError("numpy attribute kind")
        b = bytes.fromhex(e[2])
        if len(b) != dt.itemsize:
            raise ValueError("numpy attribute size")
        return np.frombuffer(b, dt)[0]
    if tag == "t" and len(e) == 2 and isinstance(e[1], list):
        return tuple(_dec_attr(x) for x in e[1])
    raise ValueError(f"attribute {tag!r}")


def _enc_value(v) -> list:
    if not isinstance(v, Value):
        raise _Unstorable("an argument that is not a Value")
    return [v.id, v.type, bool(v.uniform)]


def _dec_value(e) -> Value:
    if not (
        isinstance(e, list)
        and len(e) == 3
        and type(e[0]) is int
        and isinstance(e[1], str)
        and isinstance(e[2], bool)
    ):
        raise ValueError("value")
    return Value(e[0], e[1], e[2])


def _enc_op(op: Op) -> list:
    return [
        op.name,
        op.type,
        [_enc_value(a) for a in op.args],
        [[k, _enc_attr(v)] for k, v in op.attrs.items()],
        None if op.out is None else _enc_value(op.out),
        int(op.instr),
    ]


def _dec_op(e) -> Op:
    if not (isinstance(e, list) and len(e) == 6 and isinstance(e[0], str) and isinstance(e[1], str)):
        raise ValueError("op")
    if not isinstance(e[2], list) or not isinstance(e[3], list) or type(e[5]) is not int:
        raise ValueError("op fields")
    attrs = {}
    for kv in e[3]:
        if not (isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str) and isinstance(kv[1], list)):
            raise ValueError("attrs")
        attrs[kv[0]] = _dec_attr(kv[1])
    out = None if e[4] is None else _dec_value(e[4])
    return Op(e[0], e[1], tuple(_dec_value(a) for a in e[2]), attrs, out, e[5])


def encode(key, source: str, slots: tuple, preloads: tuple) -> bytes | None:
    """The entry's bytes, or None when something in it cannot be stored as data."""
    loads, plan = preloads
    at = {id(op): i for i, op in enumerate(plan)}
    try:
        doc = {
            "version": ENTRY_VERSION,
            "key": repr(key),
            "source": hashlib.sha256(source.encode()).hexdigest(),
            "slots": [[int(n), bool(u)] for n, u in slots],
            "plan": [_enc_op(op) for op in plan],
            # a load is one of the plan's ops (evaluate runs it) or an op of its own
            "loads": [["p", at[id(op)]] if id(op) in at else ["o", _enc_op(op)] for op in loads],
        }
    except (_Unstorable, TypeError, ValueError):
        return None
    return json.dumps(doc, separators=(",", ":")).encode()


def decode(data: bytes, key) -> tuple[str, tuple, tuple]:
    """-> (the source's SHA-256, slots, (loads, plan)); ValueError for anything not exactly as encode writes
    it, or stored for another key."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or set(doc) != {"version", "key", "source", "slots", "plan", "loads"}:
        raise ValueError("fields")
    if doc["version"] != ENTRY_VERSION or doc["key"] != repr(key) or not isinstance(doc["source"], str):
        raise ValueError("version or key")
    if not re.fullmatch(r"[0-9a-f]{64}", doc["source"]):
        raise ValueError("source digest")
    slots = []
    if not isinstance(doc["slots"], list):
        raise ValueError("slots")
    for s in doc["slots"]:
        if not (isinstance(s, list) and len(s) == 2 and type(s[0]) is int and isinstance(s[1], bool)):
            raise ValueError("slot")
        slots.append((s[0], s[1]))
    if not isinstance(doc["plan"], list) or not isinstance(doc["loads"], list):
        raise ValueError("preloads")
    plan = [_dec_op(x) for x in doc["plan"]]
    loads = []
    for ld in doc["loads"]:
        if (
            isinstance(ld, list)
            and len(ld) == 2
            and ld[0] == "p"
            and type(ld[1]) is int
            and 0 <= ld[1] < len(plan)
        ):
            loads.append(plan[ld[1]])
        elif isinstance(ld, list) and len(ld) == 2 and ld[0] == "o":
            loads.append(_dec_op(ld[1]))
        else:
            raise ValueError("load")
    return doc["source"], tuple(slots), (loads, plan)


def read(d: pathlib.Path | None, key, arch: str, base_address: int):
    """(source, its SHA-256, slots, preloads) stored for this module, or None (absent, refused,
    malformed, or the source entry is not the one the entry names)."""
    if d is None:
        return None
    name = entry_name(key, arch, base_address)
    data = disk_cache.read(d, name, SUFFIX)
    if data is None:
        return None
    try:
        digest, slots, preloads = decode(data, key)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        return None
    # the source apart (raw bytes: no JSON of megabytes), checked by its own digest and named
    # in the entry
    got = disk_cache.read_digest(d, name + "-src", ".cu")
    if got is None or got[1] != digest:
        return None
    try:
        source = got[0].decode()
    except UnicodeDecodeError:
        return None
    return source, digest, slots, preloads


def write(d: pathlib.Path | None, key, arch: str, base_address: int, source, slots, preloads) -> None:
    if d is None:
        return
    data = encode(key, source, slots, preloads)
    if data is not None:
        name = entry_name(key, arch, base_address)
        disk_cache.write(d, name + "-src", ".cu", source.encode())  # first: the entry names it
        disk_cache.write(d, name, SUFFIX, data)
