"""Disk caches of compiled modules that a process can trust (docs/decisions/0016-trusted-caches.md):
the native tier's libraries (backends/native/) and CUDA cubins (backends/cuda/compile.py).

A cached library runs as code in this process, so only what this user wrote may be used:

* the directory is created 0700 by this user and refused (``CacheRefused``) when it is a symbolic
  link, not a directory, owned by another user or writable by group/others, or when a directory
  above it lets someone else swap it (owned by a user other than this one and root, or writable
  by group/others without the sticky bit); one that others may only read is made 0700;
* an entry is ``<name>.sha256`` (the SHA-256 of the data, written last) naming
  ``<name>-<digest[:16]><suffix>``; both are opened without following links and must be regular
  files of this user that nobody else may write, with no second name; the data must hash to
  the digest;
* writes go to a temp file in the same directory, then rename (atomic), data before digest and
  the data named by its digest, so concurrent writers of one name each leave a whole pair and a
  reader sees one writer's or misses;
* a library is loaded from a private temp copy of the bytes that were checked (``load_library``),
  so what was checked is what runs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import pathlib
import re
import stat
import tempfile
import warnings

from .. import settings


class CacheRefused(Exception):
    """The cache directory is not private to this user, or cannot be made (the message says why)."""


class CacheWarning(RuntimeWarning):
    """A refused cache: modules are compiled for this process only (the message says why)."""


def cache_path(kind: str, env: str) -> pathlib.Path:
    """Where the ``kind`` cache lives: $<env>, else $XDG_CACHE_HOME or ~/.cache, then
    /wavelift/<kind>."""
    d = settings.get(env)
    if d:
        return pathlib.Path(d)
    base = settings.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "wavelift" / kind


def _swappable(st: os.stat_result) -> str | None:
    """Why a directory above a cache would let another user replace what is below it, or None."""
    if st.st_uid not in (0, os.geteuid()):
        return f"is owned by uid {st.st_uid}"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"is writable by group or others without the sticky bit (mode {st.st_mode & 0o7777:o})"
    return None


def _above(p: str):
    while True:
        q = os.path.dirname(p)
        if q == p:
            return
        yield q
        p = q


def _check_above(p: str, missing_ok: bool) -> None:
    # both the path as written and where its links lead: either could be swapped above
    for a in dict.fromkeys([*_above(p), *_above(os.path.realpath(p))]):
        try:
            why = _swappable(os.stat(a))
        except FileNotFoundError:
            if missing_ok:
                continue
            why = "does not exist"
        except OSError as e:
            why = f"cannot be checked ({e.strerror})"
        if why:
            raise CacheRefused(f"{a}, above the cache {p}, {why}")


def private_dir(path) -> pathlib.Path:
    """``path`` created (0700, each missing level) and checked as the rules above say -> the
    absolute path; CacheRefused naming the rule it breaks."""
    p = os.path.abspath(os.fspath(path))
    _check_above(p, missing_ok=True)  # before creating anything in a place others control
    try:
        missing = []
        q = p
        while not os.path.lexists(q):
            missing.append(q)
            q = os.path.dirname(q)
        for m in reversed(missing):
            try:
                os.mkdir(m, 0o700)
            except FileExistsError:
                pass  # another process made it: checked below like any
        st = os.lstat(p)
    except OSError as e:
        raise CacheRefused(f"{p} cannot be created ({e.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        raise CacheRefused(f"{p} is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise CacheRefused(f"{p} is not a directory")
    if st.st_uid != os.geteuid():
        raise CacheRefused(f"{p} is owned by uid {st.st_uid}, not this user ({os.geteuid()})")
    if st.st_mode & 0o022:
        raise CacheRefused(f"{p} is writable by group or others (mode {st.st_mode & 0o7777:o})")
    _check_above(p, missing_ok=False)
    if st.st_mode & 0o777 != 0o700:
        try:
            os.chmod(p, 0o700)  # others could only read it: made private
        except OSError as e:
            raise CacheRefused(f"{p} cannot be made private ({e.strerror})") from None
    return pathlib.Path(p)


def usable_dir(kind: str, env: str) -> pathlib.Path | None:
    """The ``kind`` cache made private and checked, or None (refused: a CacheWarning says why;
    the caller compiles for this process only)."""
    p = cache_path(kind, env)
    try:
        return private_dir(p)
    except CacheRefused as e:
        warnings.warn(
            f"wavelift: the {kind} module cache is not used: {e} (docs/decisions/0016-trusted-caches.md)",
            CacheWarning,
            stacklevel=3,
        )
        return None


_DIGEST = re.compile(rb"[0-9a-f]{64}\n?")


def _read_own(path: pathlib.Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of this user, with no other name, that nobody
    else may write (not followed when a link; a FIFO is not waited on), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        # (0 links: replaced by a writer since it was opened, whole all the same)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 or st.st_nlink > 1:
            return None
        return f.read()


def _names(name: str, suffix: str, digest: str) -> tuple[str, str]:
    return f"{name}.sha256", f"{name}-{digest[:16]}{suffix}"


def read(d: pathlib.Path, name: str, suffix: str) -> bytes | None:
    """Entry ``name``'s data from private directory ``d`` (private_dir), verified; None: a miss
    (absent, or anything the rules refuse: the caller builds it again and writes it over)."""
    got = read_digest(d, name, suffix)
    return None if got is None else got[0]


def read_digest(d: pathlib.Path, name: str, suffix: str) -> tuple[bytes, str] | None:
    """read(), with the data's SHA-256 (hex) that it was checked against."""
    rec = _read_own(d / f"{name}.sha256")
    if rec is None or not _DIGEST.fullmatch(rec):
        return None
    digest = rec[:64].decode()
    data = _read_own(d / _names(name, suffix, digest)[1])
    if data is None or hashlib.sha256(data).hexdigest() != digest:
        return None
    return data, digest


def _write_atomic(d: pathlib.Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=d)  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, d / name)  # replaces a link itself, never its target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write(d: pathlib.Path, name: str, suffix: str, data: bytes) -> None:
    """Store ``data`` as entry ``name`` in private directory ``d``: data, then its digest, each
    atomically (no fsync: a torn entry after a crash fails its digest and is built again).  A
    cache that cannot be written (full, read-only) is not an error."""
    digest = hashlib.sha256(data).hexdigest()
    rec, blob = _names(name, suffix, digest)
    try:
        _write_atomic(d, blob, data)
        _write_atomic(d, rec, (digest + "\n").encode())
    except OSError:
        pass


# (for caches of other layouts under the same rules: backends/numpy/piece_disk.py's packs)
read_own = _read_own
write_atomic = _write_atomic


def private_temp(prefix: str = "wl-") -> tempfile.TemporaryDirectory:
    """A temp directory only this user can use (mkdtemp: 0700, a fresh name), its place checked
    by the same rules (CacheRefused)."""
    t = tempfile.TemporaryDirectory(prefix=prefix)
    try:
        private_dir(t.name)
    except CacheRefused:
        t.cleanup()
        raise
    return t


def load_library(data: bytes) -> ctypes.CDLL:
    """dlopen ``data`` from a private temp copy named by its digest: the bytes checked are the
    code that runs, and since glibc's dlopen returns an already loaded library of the same path,
    a reused path can only be one of the same content.  (The copy is removed once loaded.)"""
    with private_temp("wl-lib-") as tmp:
        p = os.path.join(tmp, hashlib.sha256(data).hexdigest() + ".so")
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o500)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return ctypes.CDLL(p)
