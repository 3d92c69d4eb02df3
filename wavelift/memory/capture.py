"""Captures: guest memory + the streams submitted against it, in one versioned file (.wlcap).

Format (docs/capture-format.md): a 64-byte header, then the allocations' non-zero extents, each
at a 4096-byte-aligned file offset, then a JSON metadata block. Loading maps every extent with a
copy-on-write np.memmap, so a replay never modifies the file and a multi-GB capture needs no
twice-its-size RAM. A corrupt or truncated file is refused (CaptureError) before anything is
returned: magic, version, header CRC, file size, metadata CRC and schema, bounds of every region;
payload CRCs too when `verify` says so.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import zlib

import numpy as np

from ..refusal import Refused
from .guest import GuestMemory, GuestMemoryError, canonical

MAGIC = b"WLCAP\x00\r\n"
VERSION = 1
HEADER = struct.Struct("<8sIIQQQI16sI")       # 64 bytes
assert HEADER.size == 64
ALIGN = 64                                     # file alignment of each extent (np.memmap handles any offset)
CHUNK = 4096                                   # zero-detection granularity when saving
VERIFY_AUTO_LIMIT = 64 << 20                   # verify payload CRCs by default up to 64 MiB


class CaptureError(Refused):
    """A capture file that cannot be loaded; nothing of it is returned."""

    def __init__(self, message: str, code: str = "capture.corrupt"):
        super().__init__(code, message)


def _extents(data: np.ndarray) -> list[tuple[int, int]]:
    """(offset, length) runs of CHUNK-sized pieces of `data` that are not all zero."""
    out: list[list[int]] = []
    n = len(data)
    for off in range(0, n, CHUNK):
        c = data[off: off + CHUNK]
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
        self.streams: list[tuple[int, int]] = []       # (IB address, size in dwords), in order
        self.expected: dict | None = None              # optional expected results (JSON-able)
        self.notes: dict = {}                          # free-form provenance (JSON-able)
        self.path: str | None = None

    # --- building ---------------------------------------------------------------------------
    def alloc(self, size: int, data=None, name: str = "", align: int = 256,
              address: int | None = None) -> int:
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
            sha256 = hashlib.sha256(self.memory.view(address, size)).hexdigest()
        self.expected = self.expected or {}
        self.expected.setdefault("memory", []).append(
            dict(address=f"0x{canonical(address):016x}", size=int(size), sha256=sha256, name=name))

    def check_expected(self, results=None) -> list[str]:
        """Differences between the expected results and the memory now (and `results`)."""
        problems = []
        exp = self.expected or {}
        for m in exp.get("memory", []):
            a, n = int(m["address"], 16), m["size"]
            try:
                h = hashlib.sha256(self.memory.view(a, n)).hexdigest()
            except GuestMemoryError as e:
                problems.append(str(e))
                continue
            if h != m["sha256"]:
                problems.append(f"memory {m.get('name') or ''} [0x{a:016x}, +{n}) differs from the expected bytes")
        if results is not None and "dispatches" in exp:
            got = [r.refusal.code if r.refusal else None for r in results]
            if got != exp["dispatches"]:
                problems.append(f"dispatch outcomes {got} != expected {exp['dispatches']}")
        return problems

    # --- saving -----------------------------------------------------------------------------
    def save(self, path) -> None:
        path = os.fspath(path)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".wlcap-", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b"\0" * HEADER.size)
                pos = ALIGN
                allocs = []
                for a in self.memory.allocations:
                    ext = []
                    for off, ln in _extents(a.data):
                        f.seek(pos)
                        piece = a.data[off: off + ln]
                        f.write(memoryview(np.ascontiguousarray(piece)))
                        ext.append([off, ln, pos, zlib.crc32(piece)])
                        pos = -(-(pos + ln) // ALIGN) * ALIGN
                    allocs.append(dict(name=a.name, base=f"0x{a.base:016x}", size=a.size, extents=ext))
                meta = dict(format="wlcap", version=VERSION, target=self.target, allocations=allocs,
                            streams=[dict(address=f"0x{s:016x}", size_dw=n) for s, n in self.streams],
                            expected=self.expected, notes=self.notes)
                mb = json.dumps(meta, indent=1, sort_keys=True).encode()
                f.seek(pos)
                f.write(mb)
                size = pos + len(mb)
                f.truncate(size)
                hdr = HEADER.pack(MAGIC, VERSION, 0, pos, len(mb), size, zlib.crc32(mb), b"\0" * 16, 0)
                hdr = hdr[:60] + struct.pack("<I", zlib.crc32(hdr[:60]))
                f.seek(0)
                f.write(hdr)
            os.replace(tmp, path)        # an old mapping of `path` stays valid
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    # --- loading ----------------------------------------------------------------------------
    @classmethod
    def load(cls, path, verify: bool | None = None) -> "Capture":
        """Load a .wlcap. Extents are copy-on-write memory maps of the file. `verify`: check
        payload CRCs (default: when the payload is at most 64 MiB)."""
        path = os.fspath(path)
        name = os.path.basename(path)
        try:
            actual = os.path.getsize(path)
            with open(path, "rb") as f:
                raw = f.read(HEADER.size)
                if len(raw) < HEADER.size:
                    raise CaptureError(f"{name}: {len(raw)} bytes, too short for a capture header")
                magic, version, flags, moff, msize, fsize, mcrc, _res, hcrc = HEADER.unpack(raw)
                if magic != MAGIC:
                    raise CaptureError(f"{name}: not a wavelift capture (magic {magic!r})")
                if zlib.crc32(raw[:60]) != hcrc:
                    raise CaptureError(f"{name}: header checksum mismatch (corrupt header)")
                if version != VERSION:
                    raise CaptureError(f"{name}: capture format version {version}; this wavelift "
                                       f"reads version {VERSION}", "capture.version")
                if fsize != actual:
                    raise CaptureError(f"{name}: file is {actual} bytes but its header says {fsize} "
                                       f"({'truncated' if actual < fsize else 'trailing data'})")
                if not (HEADER.size <= moff and moff + msize == fsize):
                    raise CaptureError(f"{name}: metadata region [{moff}, +{msize}) is out of bounds")
                f.seek(moff)
                mb = f.read(msize)
            if zlib.crc32(mb) != mcrc:
                raise CaptureError(f"{name}: metadata checksum mismatch (corrupt metadata)")
            try:
                meta = json.loads(mb)
            except ValueError as e:
                raise CaptureError(f"{name}: metadata is not valid JSON ({e})") from None
            return cls._from_meta(path, name, meta, moff, verify)
        except OSError as e:
            raise CaptureError(f"{name}: cannot read ({e})") from None

    @classmethod
    def _from_meta(cls, path, name, meta, moff, verify) -> "Capture":
        def bad(msg):
            raise CaptureError(f"{name}: {msg}")

        if not isinstance(meta, dict) or meta.get("format") != "wlcap" or meta.get("version") != VERSION:
            bad("metadata is not a version-1 wlcap record")
        target = meta.get("target")
        if not isinstance(target, str):
            bad("metadata has no target")
        allocs = meta.get("allocations")
        streams = meta.get("streams")
        if not isinstance(allocs, list) or not isinstance(streams, list):
            bad("metadata lacks allocations or streams")

        def hexint(v, what):
            try:
                return int(v, 16)
            except (TypeError, ValueError):
                bad(f"{what} {v!r} is not a hex address")

        def isint(v):
            return isinstance(v, int) and not isinstance(v, bool)

        plan = []
        payload = 0
        for k, a in enumerate(allocs):
            if not isinstance(a, dict):
                bad(f"allocation {k} is not a record")
            base, size, ext = hexint(a.get("base"), f"allocation {k} base"), a.get("size"), a.get("extents")
            aname = a.get("name", "")
            if not isint(size) or size <= 0 or not isinstance(ext, list) or not isinstance(aname, str):
                bad(f"allocation {k} ({aname!r}) has a bad size or extents")
            last = 0
            for e in ext:
                if not (isinstance(e, list) and len(e) == 4 and all(isint(x) for x in e)):
                    bad(f"allocation {k} ({aname!r}): bad extent {e!r}")
                off, ln, foff, crc = e
                if off < last or ln <= 0 or off + ln > size:
                    bad(f"allocation {k} ({aname!r}): extent [{off}, +{ln}) outside [0, {size}) or out of order")
                if foff < HEADER.size or foff + ln > moff:
                    bad(f"allocation {k} ({aname!r}): extent at file offset {foff} (+{ln}) outside the payload")
                last = off + ln
                payload += ln
            plan.append((base, size, aname, ext))
        sl = []
        for k, s in enumerate(streams):
            if not isinstance(s, dict) or not isint(s.get("size_dw")) or not 0 <= s["size_dw"] <= 0xFFFFF:
                bad(f"stream {k} is malformed")
            sl.append((canonical(hexint(s.get("address"), f"stream {k} address")), s["size_dw"]))
        if verify is None:
            verify = payload <= VERIFY_AUTO_LIMIT

        mem = GuestMemory()
        ro = None
        try:
            for base, size, aname, ext in plan:
                if len(ext) == 1 and ext[0][0] == 0 and ext[0][1] == size:
                    arr = np.memmap(path, dtype=np.uint8, mode="c", offset=ext[0][2], shape=(size,))
                    if verify and zlib.crc32(arr) != ext[0][3]:
                        bad(f"allocation {aname!r}: payload checksum mismatch")
                else:
                    arr = np.zeros(size, dtype=np.uint8)
                    if ext:
                        if ro is None:
                            ro = np.memmap(path, dtype=np.uint8, mode="r")
                        for off, ln, foff, crc in ext:
                            src = ro[foff: foff + ln]
                            if verify and zlib.crc32(src) != crc:
                                bad(f"allocation {aname!r}: payload checksum mismatch at +{off}")
                            arr[off: off + ln] = src
                try:
                    mem.add(base, arr, aname)
                except GuestMemoryError as e:
                    bad(str(e))
        finally:
            del ro
        cap = cls(target, mem)
        cap.streams = sl
        cap.expected = meta.get("expected")
        cap.notes = meta.get("notes") or {}
        cap.path = path
        return cap

    def __repr__(self) -> str:
        return (f"Capture({self.target}, {len(self.memory)} allocations, "
                f"{len(self.streams)} streams)")
