"""A raw radv_capture directory (tools/radv_capture/README.md) as a wavelift capture.

The raw directory is untrusted input: every field of `capture.json` is checked before it is
used, only plain files named in it (a base name, no path) are read, and every limit of the
.wlcap format holds before memory is built; a problem is an ImportRadvError (a UserError) that
names the file and the field, never a traceback.

Mapping: every BO becomes one allocation at its VA (named `bo<id>`, plus `-ib` for IBs); every
IB of the submit becomes one stream, in submit order. A BO file shorter than its BO (or absent)
is only accepted with a `stored.json` next to it (written by tools/radv_capture_raw/trim.py): it
says how many bytes each file holds and gives the sha256 of the full BO, checked here, so a
truncated or altered file is refused; without `stored.json` (the tool's own output) every BO
file must be there in full.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Sequence

import numpy as np

from ..errors import UserError
from ..memory.capture import MAX_ALLOCATIONS, MAX_GUEST_BYTES, MAX_NAME, MAX_STREAM_DW, MAX_STREAMS, Capture
from ..memory.guest import GuestMemoryError

FORMAT = "radv-capture 1"
TARGETS = ("gfx1030", "gfx1010", "gfx1100")  # RADV_FORCE_FAMILY navi21, navi10, gfx1100
MAX_JSON_BYTES = 16 << 20  # capture.json / stored.json (a real one is a few KiB)
_FILE = re.compile(r"[A-Za-z0-9_.-]{1,255}")
_SAME_AS = re.compile(r"(submit[0-9]{1,4})/([A-Za-z0-9_.-]{1,255})")
_HEX = re.compile(r"0x[0-9a-fA-F]{1,16}")


class ImportRadvError(UserError):
    """A raw radv_capture directory that cannot be converted (what and where, in one line)."""


def _read_file(path: str, limit: int, what: str) -> bytes:
    """At most `limit` bytes of the regular file `path` (more is an error). O_NONBLOCK: a FIFO
    planted in the directory must not hang the import."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ImportRadvError(f"{path}: {what} is missing") from None
    except OSError as e:
        raise ImportRadvError(f"{path}: cannot read {what} ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ImportRadvError(f"{path}: {what} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ImportRadvError(f"{path}: {what} is larger than {limit} bytes")
    return data


def _read_json(path: str, what: str) -> dict:
    raw = _read_file(path, MAX_JSON_BYTES, what)
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError too
        raise ImportRadvError(f"{path}: {what} is not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ImportRadvError(f"{path}: {what} is not a JSON object")
    return doc


def _no_constant(c):
    raise ValueError(f"{c} is not a number JSON allows")


_KINDS = {int: "an integer", str: "a string", list: "a list", dict: "an object"}


def _field(obj, key, kind, where: str):
    v = obj.get(key) if isinstance(obj, dict) else None
    if kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    else:
        ok = isinstance(v, kind)
    if not ok:
        raise ImportRadvError(f"{where}: `{key}` is missing or not {_KINDS[kind]}")
    return v


def _va(obj, key, where: str) -> int:
    v = _field(obj, key, str, where)
    if not _HEX.fullmatch(v):
        raise ImportRadvError(f"{where}: `{key}` {v[:40]!r} is not a hex address")
    return int(v, 16)


def default_name(raw_dir: str) -> str:
    """The capture's name: the directory that holds `raw/` (tests/fixtures/radv/NAME/raw)."""
    p = os.path.abspath(raw_dir)
    while os.path.basename(p) == "raw" or re.fullmatch(r"submit[0-9]+", os.path.basename(p)):
        p = os.path.dirname(p)
    return os.path.basename(p) or "radv"


def submit_dir(raw_dir: str, submit: int) -> str:
    """RAW_DIR itself when it holds capture.json (a submitN directory), else RAW_DIR/submitN."""
    if os.path.isfile(os.path.join(raw_dir, "capture.json")):
        return raw_dir
    d = os.path.join(raw_dir, f"submit{submit}")
    if not os.path.isdir(d):
        raise ImportRadvError(
            f"{raw_dir}: neither capture.json nor submit{submit}/ is there "
            f"(give radv_capture's output directory or one of its submitN/)"
        )
    return d


def input_files(raw_dir: str, submit: int = 0) -> list[str]:
    """The files an import may read (for refusing an output that would overwrite one)."""
    d = submit_dir(raw_dir, submit)
    root = os.path.dirname(os.path.abspath(d))
    out = [os.path.join(root, "buffers.txt")]
    try:
        for s in [d] + [os.path.join(root, n) for n in os.listdir(root) if re.fullmatch(r"submit[0-9]+", n)]:
            if os.path.isdir(s):
                out += [os.path.join(s, n) for n in os.listdir(s)]
    except OSError as e:
        raise ImportRadvError(f"{raw_dir}: cannot list it ({e.strerror or e})") from None
    return out


def convert(
    raw_dir: str,
    target: str = "gfx1030",
    name: str | None = None,
    submit: int = 0,
    expect: Sequence[tuple[int, int, str]] = (),
    expect_name: str = "expected",
    converted_by: str = "wavelift import-radv",
) -> Capture:
    """The .wlcap Capture for submit `submit` of radv_capture's output `raw_dir` (or for the
    submitN directory `raw_dir`). `expect`: (set, binding, file) triples whose file holds the
    bytes that buffer must hold after replay (buffers.txt gives its VA): recorded as expected
    memory named `expect_name`."""
    if target not in TARGETS:
        raise ImportRadvError(f"target {target!r}: radv_capture records {' or '.join(TARGETS)}")
    d = submit_dir(raw_dir, submit)
    root = os.path.dirname(os.path.abspath(d))
    cj = os.path.join(d, "capture.json")
    meta = _read_json(cj, "capture.json")
    if meta.get("format") != FORMAT:
        raise ImportRadvError(f"{cj}: format {str(meta.get('format'))[:40]!r}, expected {FORMAT!r}")
    bos = _field(meta, "bos", list, cj)
    submits = _field(meta, "submits", list, cj)
    if len(bos) > MAX_ALLOCATIONS:
        raise ImportRadvError(f"{cj}: {len(bos)} BOs; the limit is {MAX_ALLOCATIONS}")
    stored = None
    sj = os.path.join(d, "stored.json")
    if os.path.lexists(sj):
        stored = _field(_read_json(sj, "stored.json"), "bos", dict, sj)

    cap = Capture(target=target)
    if "gb_addr_config" in meta:  # (radv_capture records RADV's rad_info.gb_addr_config)
        gb = _field(meta, "gb_addr_config", int, cj)
        if not 0 <= gb <= 0xFFFFFFFF:
            raise ImportRadvError(f"{cj}: `gb_addr_config` {gb} is not a 32-bit register value")
        cap.gb_addr_config = gb
    total = 0
    ib_bos = []
    for i, bo in enumerate(bos):
        where = f"{cj}: bos[{i}]"
        bid = _field(bo, "id", int, where)
        va, size = _va(bo, "va", where), _field(bo, "size", int, where)
        fname = _field(bo, "file", str, where)
        if not _FILE.fullmatch(fname) or fname in (".", ".."):
            raise ImportRadvError(f"{where}: `file` {fname[:40]!r} is not a plain file name")
        if not 0 < size <= MAX_GUEST_BYTES:
            raise ImportRadvError(f"{where}: size {size} is not in 1..{MAX_GUEST_BYTES}")
        total += size
        if total > MAX_GUEST_BYTES:
            raise ImportRadvError(
                f"{cj}: the BOs hold more than {MAX_GUEST_BYTES} bytes in all (the .wlcap limit)"
            )
        data = _bo_bytes(d, root, fname, size, stored, where)
        label = f"bo{bid}" + ("-ib" if bo.get("ib") is True else "")
        if len(label) > MAX_NAME:
            raise ImportRadvError(f"{where}: id {bid} makes too long a name")
        try:
            addr = cap.alloc(size, data=data, name=label, address=va, align=4096 if va % 4096 == 0 else 4)
        except (GuestMemoryError, ValueError) as e:
            raise ImportRadvError(f"{where} ({fname}): {e}") from None
        if stored is not None:
            rec = stored[fname]
            if hashlib.sha256(cap.memory.peek(addr, size).data).hexdigest() != rec["sha256"]:
                raise ImportRadvError(
                    f"{os.path.join(d, fname)}: the rebuilt BO does not match "
                    f"stored.json's sha256 (a truncated or altered file)"
                )
        ib_bos.append(bo.get("ib") is True)

    ibs = []
    for si, s in enumerate(submits):
        if not isinstance(s, dict):
            raise ImportRadvError(f"{cj}: submits[{si}] is not a JSON object")
        for ii, ib in enumerate(_field(s, "ibs", list, f"{cj}: submits[{si}]") if "ibs" in s else []):
            where = f"{cj}: submits[{si}].ibs[{ii}]"
            va, n = _va(ib, "va", where), _field(ib, "size_dw", int, where)
            if not 0 < n <= MAX_STREAM_DW:
                raise ImportRadvError(f"{where}: size_dw {n} is not in 1..{MAX_STREAM_DW}")
            try:
                cap.memory.view(va, 4 * n)
            except (GuestMemoryError, ValueError):
                raise ImportRadvError(
                    f"{where}: the IB at {ib['va']} ({n} dwords) is not inside "
                    f"one BO of capture.json (a missing IB)"
                ) from None
            ibs.append((s, ib, va, n))
    if not ibs:
        raise ImportRadvError(
            f"{cj}: this submit has no IBs, nothing to replay"
            + (" (radv_capture's dispatch is submit0)" if submit else "")
        )
    if len(ibs) > MAX_STREAMS:
        raise ImportRadvError(f"{cj}: {len(ibs)} IBs; the limit is {MAX_STREAMS}")
    for _, _, va, n in ibs:
        cap.submit_at(va, n)
    cap.notes = {
        "source": "radv-capture 1 (Mesa RADV 22.3.6 null device)",
        "converted_by": converted_by,
        "name": name if name is not None else default_name(raw_dir),
        "ibs": [
            dict(
                ip=str(s.get("ip")) if s.get("ip") is not None else None,
                role=str(ib["role"]) if ib.get("role") is not None else None,
                va=ib["va"],
                size_dw=n,
            )
            for s, ib, _, n in ibs
        ],
    }
    for sb in expect:
        _expect(cap, root, sb, expect_name)
    return cap


def _bo_bytes(d: str, root: str, fname: str, size: int, stored, where: str):
    path = os.path.join(d, fname)
    if stored is None:
        data = _read_file(path, size, f"the BO file of {where}")
        if len(data) != size:
            raise ImportRadvError(
                f"{path}: {len(data)} bytes, the BO has {size} (a truncated file; "
                f"radv_capture writes every BO in full)"
            )
        return np.frombuffer(data, dtype=np.uint8)
    rec = stored.get(fname)
    if not isinstance(rec, dict) or not isinstance(rec.get("sha256"), str):
        raise ImportRadvError(f"{os.path.join(d, 'stored.json')}: no record (with a sha256) for {fname}")
    n = rec.get("stored_bytes")
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= size:
        raise ImportRadvError(f"{os.path.join(d, 'stored.json')}: {fname}: stored_bytes is not in 0..{size}")
    if n == 0:
        same = rec.get("same_as")
        if same is None:
            if os.path.lexists(path):
                raise ImportRadvError(f"{path}: stored.json says this BO has no file")
            return None  # all zero: the sha256 check says so
        m = _SAME_AS.fullmatch(same) if isinstance(same, str) else None
        if m is None:
            raise ImportRadvError(f"{os.path.join(d, 'stored.json')}: {fname}: same_as is not submitN/FILE")
        path = os.path.join(root, m.group(1), m.group(2))
        data = _read_file(path, size, f"the BO file of {where} (same_as)")
    else:
        data = _read_file(path, size, f"the BO file of {where}")
        if len(data) != n:
            raise ImportRadvError(
                f"{path}: {len(data)} bytes, stored.json says {n} (a truncated or altered file)"
            )
    return np.frombuffer(data, dtype=np.uint8)


def buffers(root: str) -> dict[tuple[int, int], tuple[int, int]]:
    """radv_capture's buffers.txt: {(set, binding): (va, size)}."""
    path = os.path.join(root, "buffers.txt")
    text = _read_file(path, 1 << 20, "buffers.txt").decode("utf-8", "replace")
    out = {}
    for ln, line in enumerate(text.splitlines(), 1):
        kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
        if "set" in kv and "binding" in kv:
            try:
                out[int(kv["set"]), int(kv["binding"])] = (int(kv["va"], 16), int(kv["size"]))
            except (KeyError, ValueError):
                raise ImportRadvError(f"{path}:{ln}: not `set=S binding=B ... va=0x.. size=N`") from None
    return out


def _expect(cap: Capture, root: str, sb: tuple[int, int, str], name: str) -> None:
    s, b, path = sb
    where = buffers(root).get((s, b))
    if where is None:
        raise ImportRadvError(f"{os.path.join(root, 'buffers.txt')}: no buffer set={s} binding={b}")
    va, size = where
    data = _read_file(path, size, "the expected bytes")
    if len(data) != size:
        raise ImportRadvError(f"{path}: {len(data)} bytes, buffer set={s} binding={b} has {size}")
    try:
        cap.memory.view(va, size)
    except (GuestMemoryError, ValueError):
        raise ImportRadvError(f"buffers.txt: set={s} binding={b} at 0x{va:x} is in no BO") from None
    cap.expect_memory(va, size, hashlib.sha256(data).hexdigest(), name=name)
