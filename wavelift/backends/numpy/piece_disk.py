"""The NumPy backend's compiled pieces on disk, in packs (decision 0045, amendment "pieces on disk").

A piece (codegen.PieceCache, decision 0040) about to be compiled is first looked for here, under
a name made of its key (codegen._disk_name); a piece compiled is added.  The entries are small
(a code object and its constants, ~2-4 KB) and many (~2 a tinygrad instruction test), and a file
each cost more to create than the compile it saves (~0.3 ms a file on this host), so they are
kept in **packs**: files ``<version>-<first 16 hex digits of the SHA-256 of the body>.pack``
(``version``: the first 16 hex digits of the code's version, codegen._code_version) holding
``PACK_MAGIC``, the body's SHA-256 (hex) and a newline, then the body: entries, each its name
(NAME_BYTES ASCII bytes), its size (4 bytes, little-endian) and its data.

The rules of backends/disk_cache.py (decision 0016) hold: the directory is the checked private
one (``disk_cache.usable_dir``); a pack is read without following links and used only when it is
a regular file of this user that nobody else may write, with no second name
(``disk_cache.read_own``), whose body hashes to its digest and parses whole; anything else is
skipped (its entries miss and are compiled again).  A pack is written to a temp file and renamed
(atomic; named by its content, so two writers of the same entries leave one whole file).

A process reads its version's packs once, at its first lookup (at most LOAD_MAX bytes of them),
and keeps their entries in memory; what it adds is written as a new pack when FLUSH entries are
pending and when the process exits.  When it found more than PACK_MAX packs, it writes their
entries as one pack and removes the packs it merged (a pack another process removed first is
simply gone).  Packs of other versions are never read; those not modified for STALE_DAYS are
removed then.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import struct
import time

from .. import disk_cache

PACK_MAGIC = b"WLPIECES1\n"
NAME_BYTES = 40
FLUSH = 256  # entries added before they are written as a pack
PACK_MAX = 16  # packs found at load above which they are merged into one
LOAD_MAX = 256 << 20  # bytes of packs read at most (the rest miss)
STALE_DAYS = 7  # packs of another version not modified for this long are removed
_PACK = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16})\.pack")


class PieceDisk:
    """Entries (name -> bytes) of one private directory: ``get``, ``add`` (see the module doc)."""

    def __init__(self, d, version: str):
        self.d = d
        self.version = version[:16]
        self.entries: dict[str, bytes] | None = None  # (read at the first get)
        self.pending: dict[str, bytes] = {}
        self.registered = False

    def _load(self) -> dict[str, bytes]:
        entries: dict[str, bytes] = {}
        merged = []
        total = 0
        try:
            found = [m for m in map(_PACK.fullmatch, os.listdir(self.d)) if m]
        except OSError:
            found = []
        names = sorted(m.string for m in found if m[1] == self.version)
        stale = time.time() - STALE_DAYS * 86400
        for m in found:
            if m[1] != self.version:
                try:
                    if os.lstat(self.d / m.string).st_mtime < stale:
                        os.unlink(self.d / m.string)
                except OSError:
                    pass
        for n in names:
            data = disk_cache.read_own(self.d / n)
            if data is None or total + len(data) > LOAD_MAX:
                continue
            got = parse(data)
            # (named by its digest: parse checked the body against the one it holds)
            if got is None or data[len(PACK_MAGIC) : len(PACK_MAGIC) + 16] != n[17:33].encode():
                continue
            total += len(data)
            entries.update(got)
            merged.append(n)
        if len(merged) > PACK_MAX:
            name = _write_pack(self.d, self.version, entries)
            if name is not None:
                for n in merged:
                    if n != name:
                        try:
                            os.unlink(self.d / n)
                        except OSError:
                            pass
        return entries

    def get(self, name: str) -> bytes | None:
        if self.entries is None:
            self.entries = self._load()
        return self.entries.get(name)

    def add(self, name: str, data: bytes) -> None:
        if self.entries is None:
            self.entries = self._load()
        self.entries[name] = data
        self.pending[name] = data
        if len(self.pending) >= FLUSH:
            self.flush()
        elif not self.registered:
            self.registered = True
            atexit.register(self.flush)

    def flush(self) -> None:
        if self.pending:
            pending, self.pending = self.pending, {}
            _write_pack(self.d, self.version, pending)


def pack(entries: dict[str, bytes]) -> bytes:
    """A pack's bytes holding ``entries`` (names of NAME_BYTES ASCII characters)."""
    parts = []
    for name, data in entries.items():
        raw = name.encode("ascii")
        if len(raw) != NAME_BYTES:
            raise ValueError(f"entry name {name!r}: {NAME_BYTES} characters")
        parts += [raw, struct.pack("<I", len(data)), data]
    body = b"".join(parts)
    return PACK_MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def parse(data: bytes) -> dict[str, bytes] | None:
    """The entries of a pack's bytes, or None when they are not a whole pack whose body hashes
    to its digest."""
    head = len(PACK_MAGIC) + 65
    if not data.startswith(PACK_MAGIC) or len(data) < head or data[head - 1 : head] != b"\n":
        return None
    body = data[head:]
    if hashlib.sha256(body).hexdigest().encode() != data[len(PACK_MAGIC) : head - 1]:
        return None
    out: dict[str, bytes] = {}
    i, n = 0, len(body)
    while i < n:
        if i + NAME_BYTES + 4 > n:
            return None
        name = body[i : i + NAME_BYTES]
        (size,) = struct.unpack_from("<I", body, i + NAME_BYTES)
        j = i + NAME_BYTES + 4
        if j + size > n or not name.isascii():
            return None
        out[name.decode("ascii")] = body[j : j + size]
        i = j + size
    return out


def _write_pack(d, version: str, entries: dict[str, bytes]) -> str | None:
    """Write ``entries`` as a pack of ``version`` in ``d`` (atomic); its file name, or None (not
    written: a cache that cannot be written is not an error)."""
    if not entries:
        return None
    data = pack(entries)
    name = f"{version[:16]}-{data[len(PACK_MAGIC) : len(PACK_MAGIC) + 16].decode()}.pack"
    try:
        disk_cache.write_atomic(d, name, data)
    except OSError:
        return None
    return name
