"""Writing output files (captures, reports, images) the one safe way: all or nothing, with the
mode a file gets.

The bytes go to a temporary file in the target's directory, which is renamed over the target
once complete: a reader (or a crash) never sees half a file, and a failed write leaves the old
file as it was. The new file has the mode a plain `open(path, "w")` would give it: the existing
file's permission bits when it replaces one, else 0666 less the umask (a temporary file's 0600
would silently make a shared capture private). A symbolic link is written through (its target
is replaced, the link kept). Only regular files are replaced: a directory, FIFO or device at
the path is an error, never renamed over.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat


def same_file(a, b) -> bool:
    """Whether paths `a` and `b` name the same file (hard links, symlinks and `./x` vs `x`
    included); a path that does not exist yet is compared by its resolved name."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


@contextlib.contextmanager
def atomic_output(path, binary: bool = True):
    """`with atomic_output(path) as f: f.write(...)`: `path` holds all of what was written once
    the block ends without an exception, and is untouched otherwise (see the module docstring).
    Raises OSError (IsADirectoryError, or errno EINVAL for a FIFO/device) before writing."""
    target = os.path.realpath(os.fspath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "is a directory", os.fspath(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OSError(22, "not a regular file (wavelift replaces only regular files)", os.fspath(path))
    d, base = os.path.split(target)
    tmp = os.path.join(d, f".{base}.{secrets.token_hex(6)}.tmp")
    fd: int | None  # None once the file object owns (and closes) it
    # 0o666 through open() applies the umask, as for any new file; an existing file's bits win
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        if st is not None:
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            fd = None
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
