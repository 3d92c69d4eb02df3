"""Captures: guest memory + the streams submitted against it, in one versioned file (.wlcap).

Format (docs/capture-format.md): a 64-byte header, then the allocations' non-zero extents, each
at a 64-byte-aligned file offset, then a JSON metadata block. A capture file is untrusted input:
loading checks the header, the metadata (its schema, nesting, counts and sizes against the
documented limits) and the bounds of every region before it allocates anything, then reads the
extents into private memory and checks their CRCs (decision 0018: copy-on-read, so a file that
changes after loading cannot touch this process). Anything else is a CaptureError.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import zlib

import numpy as np

from ..errors import Refused
from ..isa.instruction import RUN_TARGETS as TARGETS
from .guest import GuestMemory, GuestMemoryError, canonical

MAGIC = b"WLCAP\x00\r\n"
VERSION = 1
HEADER = struct.Struct("<8sIIQQQI16sI")  # 64 bytes
assert HEADER.size == 64
ALIGN = 64  # file alignment of each extent
CHUNK = 4096  # zero-detection granularity when saving

# Loading limits (docs/capture-format.md "Limits"), checked before anything is built from the
# file: over one is `capture.too_large`.
MAX_META_BYTES = 4 << 20  # the JSON metadata block (parsed: up to ~25x in RAM)
MAX_META_DEPTH = 32  # nesting of notes and expected results
MAX_ALLOCATIONS = 1 << 14
MAX_EXTENTS = 1 << 17  # over all allocations
MAX_STREAMS = 1 << 14  # entries of the stream list
MAX_NAME = 1024  # characters of an allocation name
MAX_GUEST_BYTES = 4 << 30  # sum of allocation sizes (zero-filled on demand)
MAX_STREAM_DW = 0xFFFFF  # an IB size fits 20 bits (INDIRECT_BUFFER IB_SIZE)


class CaptureError(Refused):
    """A capture file that cannot be loaded; nothing of it is returned."""

    def __init__(self, message: str, code: str = "capture.corrupt"):
        super().__init__(code, message)


def file_kind(mode: int) -> str:
    """'a FIFO', 'a directory', ... for an st_mode that is not a regular file's."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def _read_exactly(f, offset: int, n: int, into=None):
    """n bytes at `offset` (fewer only at the end of the file): bytes, or the count read into
    the writable array `into`."""
    buf = memoryview(into).cast("B") if into is not None else memoryview(bytearray(n))
    got = 0
    f.seek(offset)
    while got < n:
        k = f.readinto(buf[got:])
        if not k:
            break
        got += k
    return got if into is not None else bytes(buf[:got])


def _isint(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{1,16}\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _MetaError(ValueError):
    pass


def _object(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _MetaError("a key appears twice in one object")
    return d


def _constant(c):
    raise _MetaError(f"{c} is not JSON")


def _parse_meta(mb: bytes, bad):
    """The metadata as Python values: strict UTF-8 JSON (no NaN/Infinity, no repeated keys)."""
    try:
        return json.loads(mb.decode("utf-8"), object_pairs_hook=_object, parse_constant=_constant)
    except RecursionError:
        bad(f"metadata nested deeper than {MAX_META_DEPTH} levels", "capture.too_large")
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError, _MetaError, int digits
        bad(f"metadata is not valid JSON ({e})")


def _check_text(v, what, bad) -> None:
    """`v`, a value the capture keeps beyond the checked schema (notes, expected results), nests
    at most MAX_META_DEPTH deep and its strings are Unicode text (no lone surrogates, which JSON
    escapes allow but no output can encode)."""
    stack = [(v, 1)]
    while stack:  # iterative: depth is what it checks
        v, depth = stack.pop()
        if isinstance(v, dict):
            stack.extend((k, depth) for k in v)
            v = list(v.values())
        if isinstance(v, list):
            if depth > MAX_META_DEPTH:
                bad(f"{what} nested deeper than {MAX_META_DEPTH} levels", "capture.too_large")
            stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, str) and _SURROGATE.search(v):
            bad(f"{what} holds a string that is not Unicode text (a lone surrogate)")


def _plan(cap: Capture, meta, moff: int, bad):
    """Check the metadata's schema, limits and regions (docs/capture-format.md); fill in `cap`'s
    target, streams, expected results and notes; return the allocations to build:
    [(base, size, name, extents)]."""

    def address(v, what):
        if not (isinstance(v, str) and _HEX_ADDRESS.match(v)):
            bad(f"{what} {v!r:.40} is not a hex address")
        a = int(v, 16)
        if canonical(a) != a:
            bad(f"{what} {v} is not a canonical address (bits 63:48 copy bit 47)")
        return a

    def count(v, limit, what):
        if len(v) > limit:
            bad(f"{len(v)} {what}; the limit is {limit}", "capture.too_large")

    if not isinstance(meta, dict) or meta.get("format") != "wlcap" or meta.get("version") != VERSION:
        bad("metadata is not a version-1 wlcap record")
    target = meta.get("target")
    if not isinstance(target, str):
        bad("metadata has no target")
    if target not in TARGETS:
        bad(f"target {target!r:.40} is not one wavelift replays ({', '.join(TARGETS)})", "capture.target")
    allocs, streams = meta.get("allocations"), meta.get("streams")
    if not isinstance(allocs, list) or not isinstance(streams, list):
        bad("metadata lacks allocations or streams")
    count(allocs, MAX_ALLOCATIONS, "allocations")
    count(streams, MAX_STREAMS, "streams")

    plan: list[tuple[int, int, str, list[list[int]]]] = []  # (base, size, name, extents)
    files: list[list[int]] = []
    total = 0
    for k, a in enumerate(allocs):
        if not isinstance(a, dict):
            bad(f"allocation {k} is not a record")
        aname = a.get("name", "")
        if not isinstance(aname, str):
            bad(f"allocation {k}: its name is not a string")
        _check_text(aname, f"allocation {k}'s name", bad)
        if len(aname) > MAX_NAME:
            bad(
                f"allocation {k}: a name of {len(aname)} characters; the limit is {MAX_NAME}",
                "capture.too_large",
            )
        what = f"allocation {k} ({aname!r:.60})"
        base, size, ext = address(a.get("base"), f"{what} base"), a.get("size"), a.get("extents")
        if not _isint(size) or size <= 0 or not isinstance(ext, list):
            bad(f"{what} has a bad size or extents")
        total += size
        if total > MAX_GUEST_BYTES:
            bad(f"allocations of more than {MAX_GUEST_BYTES} bytes in all (the limit)", "capture.too_large")
        if plan and base < plan[-1][0] + plan[-1][1]:
            bad(f"{what} at 0x{base:016x} overlaps the one before it or is out of order")
        files.extend(ext)
        if len(files) > MAX_EXTENTS:
            bad(f"more than {MAX_EXTENTS} extents; the limit is {MAX_EXTENTS}", "capture.too_large")
        last = 0
        for e in ext:
            if not (isinstance(e, list) and len(e) == 4 and all(_isint(x) for x in e)):
                bad(f"{what}: bad extent {e!r:.80}")
            off, ln, foff, crc = e
            if off < last or ln <= 0 or off + ln > size:
                bad(f"{what}: extent [{off}, +{ln}) outside [0, {size}) or out of order")
            if foff < HEADER.size or foff + ln > moff:
                bad(f"{what}: extent at file offset {foff} (+{ln}) outside the payload")
            if not 0 <= crc <= 0xFFFFFFFF:
                bad(f"{what}: extent CRC {crc} is not a 32-bit value")
            last = off + ln
        plan.append((base, size, aname, ext))
    # extents never share file bytes: reading them costs at most the file's size
    spans = sorted((e[2], e[2] + e[1]) for e in files)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        if start < end:
            bad(f"two extents share file bytes at offset {start}")
    sl = []
    for k, s in enumerate(streams):
        if not isinstance(s, dict) or not _isint(s.get("size_dw")) or not 0 <= s["size_dw"] <= MAX_STREAM_DW:
            bad(f"stream {k} is malformed")
        sl.append((address(s.get("address"), f"stream {k} address"), s["size_dw"]))
    gb = meta.get("gb_addr_config")
    if gb is not None and not (_isint(gb) and 0 <= gb <= 0xFFFFFFFF):
        bad("metadata gb_addr_config is not a 32-bit register value")
    expected, notes = meta.get("expected"), meta.get("notes")
    _check_expected_schema(expected, address, bad)
    if notes is not None and not isinstance(notes, dict):
        bad("metadata notes is not an object")
    _check_text(expected, "metadata expected", bad)
    _check_text(notes, "metadata notes", bad)
    cap.target = target
    cap.gb_addr_config = gb
    cap.streams = sl
    cap.expected = expected
    cap.notes = notes or {}
    return plan


def _check_expected_schema(exp, address, bad) -> None:
    if exp is None:
        return
    if not isinstance(exp, dict):
        bad("metadata expected is not an object")
    mem, disp = exp.get("memory", []), exp.get("dispatches", [])
    if not isinstance(mem, list) or not isinstance(disp, list):
        bad("metadata expected.memory / expected.dispatches is not a list")
    for k, m in enumerate(mem):
        if not isinstance(m, dict):
            bad(f"expected memory region {k} is not a record")
        address(m.get("address"), f"expected memory region {k} address")
        size, digest, mname = m.get("size"), m.get("sha256"), m.get("name", "")
        if not (_isint(size) and 0 <= size <= MAX_GUEST_BYTES):
            bad(f"expected memory region {k} has a bad size")
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
            bad(f"expected memory region {k} has a bad sha256")
        if not isinstance(mname, str):
            bad(f"expected memory region {k}: its name is not a string")
    if not all(d is None or isinstance(d, str) for d in disp):
        bad("expected dispatch outcomes must each be null or a refusal code")


def _extents(data: np.ndarray) -> list[tuple[int, int]]:
    """(offset, length) runs of CHUNK-sized pieces of `data` that are not all zero."""
    out: list[list[int]] = []
    n = len(data)
    for off in range(0, n, CHUNK):
        c = data[off : off + CHUNK]
        if c.any():
            ln = len(c)
            if out and out[-1][0] + out[-1][1] == off:
                out[-1][1] += ln
            else:
                out.append([off, ln])
    return [(a, b) for a, b in out]


class Capture:
    def __init__(self, target: str = "gfx1030", memory: GuestMemory | None = None):
        self.target = target
        self.memory = memory if memory is not None else GuestMemory()
        self.streams: list[tuple[int, int]] = []  # (IB address, size in dwords), in order
        self.expected: dict | None = None  # optional expected results (JSON-able)
        self.notes: dict = {}  # free-form provenance (JSON-able)
        self.path: str | None = None
        # GB_ADDR_CONFIG of the GPU the streams were recorded for (the _X/_T image swizzle modes
        # depend on it: dispatch/config.py), or None: not recorded (those modes refuse)
        self.gb_addr_config: int | None = None

    # --- building ---------------------------------------------------------------------------
    def alloc(
        self, size: int, data=None, name: str = "", align: int = 256, address: int | None = None
    ) -> int:
        return self.memory.alloc(size, name=name, address=address, align=align, data=data)

    def add(self, base: int, array: np.ndarray, name: str = ""):
        return self.memory.add(base, array, name)

    def submit(self, dwords, name: str | None = None) -> int:
        """Place the dwords in guest memory as an IB and record it as the next submission."""
        arr = np.asarray(list(dwords) if not isinstance(dwords, np.ndarray) else dwords, dtype=np.int64)
        if arr.size == 0:
            raise ValueError("submit: empty stream")
        if arr.min() < 0 or arr.max() > 0xFFFFFFFF:
            raise ValueError("submit: every dword must fit in 32 bits")
        data = arr.astype("<u4").view(np.uint8)
        addr = self.alloc(len(data), data=data, name=name or f"ib{len(self.streams)}", align=256)
        self.streams.append((addr, int(arr.size)))
        return addr

    def submit_at(self, ib_address: int, size_dwords: int) -> None:
        """Record an IB already in guest memory as the next submission."""
        self.streams.append((canonical(ib_address), int(size_dwords)))

    def read(self, address: int, n: int) -> bytes:
        return self.memory.read(address, n)

    def write(self, address: int, data) -> None:
        self.memory.write(address, data)

    def view(self, address: int, n: int) -> np.ndarray:
        return self.memory.view(address, n)

    # --- expected results -------------------------------------------------------------------
    def expect_memory(self, address: int, size: int, sha256: str | None = None, name: str = "") -> None:
        """Record that after replay [address, +size) hashes to `sha256` (default: its bytes now)."""
        if sha256 is None:
            sha256 = hashlib.sha256(self.memory.peek(address, size).data).hexdigest()
        self.expected = self.expected or {}
        self.expected.setdefault("memory", []).append(
            dict(address=f"0x{canonical(address):016x}", size=int(size), sha256=sha256, name=name)
        )

    def check_expected(self, results=None) -> list[str]:
        """Differences between the expected results and the memory now (and `results`)."""
        problems = []
        exp = self.expected or {}
        for m in exp.get("memory", []):
            a, n = int(m["address"], 16), m["size"]
            try:
                h = hashlib.sha256(self.memory.view(a, n).data).hexdigest()
            except GuestMemoryError as e:
                problems.append(str(e))
                continue
            if h != m["sha256"]:
                problems.append(
                    f"memory {m.get('name') or ''} [0x{a:016x}, +{n}) differs from the expected bytes"
                )
        if results is not None and "dispatches" in exp:
            got = [r.refusal.code if r.refusal else None for r in results]
            if got != exp["dispatches"]:
                problems.append(f"dispatch outcomes {got} != expected {exp['dispatches']}")
        return problems

    # --- saving -----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the capture to `path` all or nothing, with a new file's mode (or the replaced
        file's): wavelift.outfile.atomic_output."""
        from ..outfile import atomic_output

        with atomic_output(path) as f:
            f.write(b"\0" * HEADER.size)
            pos = ALIGN
            allocs = []
            for a in self.memory.allocations:
                ext = []
                for off, ln in _extents(a.data):
                    f.seek(pos)
                    piece = a.data[off : off + ln]
                    f.write(np.ascontiguousarray(piece).data)
                    ext.append([off, ln, pos, zlib.crc32(piece.data)])
                    pos = -(-(pos + ln) // ALIGN) * ALIGN
                allocs.append(dict(name=a.name, base=f"0x{a.base:016x}", size=a.size, extents=ext))
            meta = dict(
                format="wlcap",
                version=VERSION,
                target=self.target,
                allocations=allocs,
                streams=[dict(address=f"0x{s:016x}", size_dw=n) for s, n in self.streams],
                expected=self.expected,
                notes=self.notes,
            )
            if self.gb_addr_config is not None:  # (absent: a capture made before it was recorded)
                meta["gb_addr_config"] = self.gb_addr_config
            mb = json.dumps(meta, indent=1, sort_keys=True).encode()
            f.seek(pos)
            f.write(mb)
            size = pos + len(mb)
            f.truncate(size)
            hdr = HEADER.pack(MAGIC, VERSION, 0, pos, len(mb), size, zlib.crc32(mb), b"\0" * 16, 0)
            hdr = hdr[:60] + struct.pack("<I", zlib.crc32(hdr[:60]))
            f.seek(0)
            f.write(hdr)

    # --- loading ----------------------------------------------------------------------------
    @classmethod
    def load(cls, path) -> Capture:
        """Load a .wlcap: every check of docs/capture-format.md ("Loading") and every limit
        ("Limits") passes before anything is allocated; then the stored extents are read into
        private memory and their CRCs checked (copy-on-read: the file may change or vanish once
        this returns). Anything else is a CaptureError; nothing is half-loaded."""
        path = os.fspath(path)
        name = os.path.basename(path)
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat on the descriptor
            # read from, so the file checked is the file read
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise CaptureError(f"{name}: cannot read ({e.strerror})") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise CaptureError(
                    f"{name}: is {file_kind(mode)}, not a capture file (a capture is a regular file)"
                )
            f = os.fdopen(fd, "rb", buffering=0)
        except BaseException:
            os.close(fd)
            raise
        with f:
            try:
                return cls._read(f, path, name)
            except OSError as e:
                raise CaptureError(f"{name}: cannot read ({e.strerror or e})") from None

    @classmethod
    def _read(cls, f, path, name) -> Capture:
        def bad(msg, code="capture.corrupt"):
            raise CaptureError(f"{name}: {msg}", code)

        actual = os.fstat(f.fileno()).st_size
        raw = _read_exactly(f, 0, HEADER.size)
        if len(raw) < HEADER.size:
            bad(f"{len(raw)} bytes, too short for a capture header")
        magic, version, flags, moff, msize, fsize, mcrc, res, hcrc = HEADER.unpack(raw)
        if magic != MAGIC:
            bad(f"not a wavelift capture (magic {magic!r})")
        if zlib.crc32(raw[:60]) != hcrc:
            bad("header checksum mismatch (corrupt header)")
        if version != VERSION:
            bad(f"capture format version {version}; this wavelift reads version {VERSION}", "capture.version")
        if flags:
            bad(f"header flags 0x{flags:x}: format features this wavelift does not read", "capture.version")
        if any(res):
            bad("reserved header bytes are not zero (corrupt header)")
        if fsize != actual:
            bad(
                f"file is {actual} bytes but its header says {fsize} "
                f"({'truncated' if actual < fsize else 'trailing data'})"
            )
        if not (HEADER.size <= moff and moff + msize == fsize):
            bad(f"metadata region [{moff}, +{msize}) is out of bounds")
        if msize > MAX_META_BYTES:
            bad(f"{msize} bytes of metadata; the limit is {MAX_META_BYTES}", "capture.too_large")
        mb = _read_exactly(f, moff, msize)
        if len(mb) != msize:
            bad("the file shrank while it was read")
        if zlib.crc32(mb) != mcrc:
            bad("metadata checksum mismatch (corrupt metadata)")
        meta = _parse_meta(mb, bad)
        cap = cls()
        plan = _plan(cap, meta, moff, bad)
        cap.path = path
        for base, size, aname, ext in plan:
            try:
                arr = np.zeros(size, dtype=np.uint8)  # calloc: pages no extent covers cost nothing
            except MemoryError:
                bad(f"allocation {aname!r}: this machine cannot allocate {size} bytes", "capture.too_large")
            for off, ln, foff, crc in ext:
                piece = arr[off : off + ln]
                if _read_exactly(f, foff, ln, into=piece) != ln:
                    bad("the file shrank while it was read")
                if zlib.crc32(piece.data) != crc:
                    bad(f"allocation {aname!r}: payload checksum mismatch at +{off}")
            try:
                cap.memory.add(
                    base, arr, aname, shared=False
                )  # (the file's bytes: only this memory holds them)
            except GuestMemoryError as e:
                bad(str(e))
        return cap

    def __repr__(self) -> str:
        return f"Capture({self.target}, {len(self.memory)} allocations, {len(self.streams)} streams)"
