"""One batch task: replay one capture and say what landed, as plain data.

A task is `{"path": str, "backend": str, "mode": str, "time_limit": float | None}`; the answer
`run_capture(task)` gives is a dict of JSON values (it crosses process and machine boundaries):

    {"sha256": hex | None,                   # of the capture file as read (None: not a file)
     "dispatches": [{"dispatch": i, "result": "landed" | "refused", "code": str | None,
                     "message": str | None, "digest": hex | None, "bytes_written": int,
                     "time_s": float}, ...],
     "error": None | {"dispatch": i | None, "result": "refused" | "error", "code": str,
                      "message": str},      # the capture as a whole: not loaded, or a crash
     "recorded_problems": [str] | None,     # the capture's own expected results (run's check)
     "time_s": float}

The capture is untrusted: whatever it does becomes data here — a capture that does not load is
its `capture.*` refusal, and an exception inside wavelift (a bug the capture found) is an
`error` naming it, with the dispatches before it kept. Only the death of the process itself
escapes, and the executor turns that into a line (executors.py).

Digest of a landed dispatch: SHA-256 over the bytes its write spans cover, taken as maximal
runs of adjacent bytes in ascending address order (`runs`), each run as its guest address
(8 bytes, little-endian, the canonical address as unsigned 64-bit), its length (8 bytes,
little-endian), then the bytes of guest memory there just after the dispatch landed (before
any later dispatch runs). A dispatch that landed and wrote nothing has the digest of no bytes.

Module caches: a worker keeps its translated modules in a dict of its own process (bounded), and
the native tier's libraries and CUDA cubins go through the disk caches of
backends/disk_cache.py, which any number of processes share safely (decision 0016: private to
the user, content-addressed entries, atomic writes, checked before loading). Nothing in memory
is shared between processes.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time

MAX_MODULES = 256  # modules one worker process keeps in memory between captures
_modules: dict = {}
_lock = threading.Lock()  # one replay at a time per process: a Dask worker may run tasks in
# threads, and a replay's engine state (window arenas) is per process


def runs(spans) -> list[tuple[int, int]]:
    """The bytes `spans` cover as maximal runs, in ascending address order (addresses as
    unsigned 64-bit): how the backend or the windows split a write does not matter."""
    out: list[list[int]] = []
    for a, n in sorted((int(a) & (1 << 64) - 1, int(n)) for a, n in spans if n > 0):
        if out and a <= out[-1][0] + out[-1][1]:
            out[-1][1] = max(out[-1][1], a + n - out[-1][0])
        else:
            out.append([a, n])
    return [(a, n) for a, n in out]


def span_digest(memory, spans) -> str:
    from ..memory.guest import canonical

    h = hashlib.sha256()
    for address, size in runs(spans):
        h.update(address.to_bytes(8, "little"))
        h.update(size.to_bytes(8, "little"))
        h.update(memory.peek(canonical(address), size).data)
    return h.hexdigest()


def file_sha256(path: str) -> str | None:
    """The file's SHA-256, or None when it is not a regular file that can be read (a FIFO is
    not waited on; Capture.load names the problem)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb", buffering=0) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        h = hashlib.sha256()
        try:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        except OSError:
            return None
        return h.hexdigest()


def run_capture(task: dict) -> dict:
    with _lock:
        return _run(task)


def _run(task: dict) -> dict:
    from ..errors import Refused
    from ..memory.capture import Capture
    from ..run.replay import default_execute

    t0 = time.perf_counter()
    path = task["path"]
    out: dict = {
        "sha256": file_sha256(path),
        "dispatches": [],
        "error": None,
        "recorded_problems": None,
        "time_s": 0.0,
    }
    try:
        cap = Capture.load(path)
    except Refused as e:
        out["error"] = {
            "dispatch": None,
            "result": "refused",
            "code": e.refusal.code,
            "message": e.refusal.message,
        }
        out["time_s"] = time.perf_counter() - t0
        return out
    except Exception as e:  # noqa: BLE001 - a bug in the loader: a line, not a dead batch
        out["error"] = _crash(None, e)
        out["time_s"] = time.perf_counter() - t0
        return out
    if len(_modules) > MAX_MODULES:
        _modules.clear()
    inner = default_execute(
        task.get("backend", "numpy"),
        task.get("mode", "wave"),
        _modules,
        task.get("time_limit"),
        task.get("budget"),
    )
    digests: dict[int, str] = {}
    failed: list = []

    def execute(memory, config, index):
        try:
            r = inner(memory, config, index)
        except Refused:
            raise
        except Exception as e:
            failed.append(index)
            raise _Crash(e) from e
        if r.refusal is None:
            digests[index] = span_digest(memory, r.write_spans)
        return r

    results: list = []
    try:
        _replay(cap, execute, results)
    except Exception as e:  # noqa: BLE001 - untrusted input found a bug: keep what ran before it
        cause = e.original if isinstance(e, _Crash) else e
        out["error"] = _crash(failed[0] if failed else None, cause)
    for r in results:
        refused = r.refusal is not None
        stats = r.stats or {}
        out["dispatches"].append(
            {
                "dispatch": r.index,
                "result": "refused" if refused else "landed",
                "code": r.refusal.code if refused else None,
                "message": r.refusal.message if refused else None,
                "digest": None if refused else digests.get(r.index),
                "bytes_written": int(stats.get("bytes_written", 0) or 0) if not refused else 0,
                "time_s": float(stats.get("time_s", 0.0) or 0.0),
            }
        )
    if cap.expected and out["error"] is None:
        try:
            out["recorded_problems"] = cap.check_expected(results)
        except Exception as e:  # noqa: BLE001 - a capture's own expectations are guest data
            out["recorded_problems"] = [f"{type(e).__name__}: {e}"]
    out["time_s"] = time.perf_counter() - t0
    return out


def _replay(cap, execute, results: list) -> None:
    """wavelift.run.replay.replay, into `results` as it goes: what landed before an exception stays."""
    from ..errors import Refusal
    from ..run.replay import run_stream
    from ..run.result import DispatchResult
    from ..stream.registers import RegisterFile
    from ..stream.walker import StreamLimits

    try:
        regs = RegisterFile(cap.target)
    except ValueError as e:
        results.append(DispatchResult(0, None, Refusal("dispatch.bad_target", str(e))))
        return
    limits = StreamLimits()
    for address, size in cap.streams:
        if (
            run_stream(cap.memory, cap.target, address, size, regs, execute, results, limits=limits)
            is not None
        ):
            return


class _Crash(Exception):
    def __init__(self, original: BaseException):
        super().__init__(str(original))
        self.original = original


def _crash(index, e: BaseException) -> dict:
    return {
        "dispatch": index,
        "result": "error",
        "code": "batch.internal_error",
        "message": f"{type(e).__name__}: {e} (a bug in wavelift that this capture "
        f"reaches; `wavelift run --debug` on it shows the traceback)",
    }
