"""What the run/info/trace/show commands share: loading a capture with errors a user can act on,
checking the backend, replaying up to a dispatch, naming addresses, printing tables."""

from __future__ import annotations

import os
import stat
import sys
import time
from typing import Any

from ..backends import base as backends
from ..errors import Refused, UserError
from ..terminal import shown  # the commands' one escape for guest text


class InternalError(Exception):
    """wavelift itself failed (a bug, not the input): one line, exit 3, traceback with --debug."""


def add_debug(p) -> None:
    """--debug after the subcommand as well as before it (`wavelift run X --debug`)."""
    import argparse

    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")


# --- loading -----------------------------------------------------------------------------------
def load_capture(path: str):
    """Capture.load(path), with one-line errors that say what to do."""
    from ..memory.capture import Capture, file_kind

    if not os.path.exists(path):
        raise UserError(f"{path}: no such file (give the path of a .wlcap capture, e.g. examples/vadd.wlcap)")
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):  # a FIFO would make the reader wait (Capture.load refuses it too)
        raise UserError(f"{path}: is {file_kind(mode)}, not a .wlcap capture file")
    try:
        return Capture.load(path)
    except Refused as e:
        code, msg = e.refusal.code, e.refusal.message
        if code == "capture.version":
            raise UserError(f"{msg} (a newer wavelift wrote it: upgrade wavelift)") from None
        if code == "capture.target":
            raise UserError(f"{msg}; the capture was made for another GPU") from None
        if code == "capture.too_large":
            raise UserError(f"{msg} — wavelift does not load captures this large") from None
        raise UserError(
            f"{msg} — this file is not a capture wavelift can read "
            f"(truncated or damaged?); make it again (Device.save_capture, "
            f"Capture.save or `wavelift run --out`)"
        ) from None


def cuda_problem() -> str | None:
    """None if the CUDA backend can run here, else why not."""
    try:
        from ..backends import cuda as cb

        avail = getattr(cb, "available", None)
        if callable(avail):
            ok = avail()
            if ok is True:
                return None
            if isinstance(ok, str):
                return ok
            if ok is False:
                return "the CUDA backend reports that it cannot run here"
    except Exception as e:  # noqa: BLE001 - any import problem means: not available
        return f"the CUDA backend does not load ({type(e).__name__}: {e})"
    try:
        import cupy  # noqa: F401
    except Exception:  # noqa: BLE001
        return "CuPy is not installed (pip install 'wavelift[cuda]')"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return f"no usable NVIDIA GPU ({e})"
    return None if n > 0 else "no NVIDIA GPU found"


def check_backend(backend: str) -> None:
    why = backends.problem(backend)
    if why:
        raise UserError(
            f"backend {backend!r} is not available: {why}; use --backend "
            f"{backends.DEFAULT} (the default, runs anywhere)"
        )


def add_backend(p) -> None:
    p.add_argument("--backend", choices=backends.names(), default=backends.DEFAULT)


def add_budget(p) -> None:
    p.add_argument(
        "--budget",
        type=int,
        metavar="N",
        default=None,
        help="instructions each wave may run (default: sized from the program and "
        "the grid, docs/decisions/0015-bounded-work.md); past it the dispatch "
        "is refused dispatch.budget_exceeded",
    )


def execute_fn(backend: str, mode: str, cache=None, budget: int | None = None, progress=None):
    """The engine's execute(memory, config, index); an engine crash becomes InternalError
    naming the dispatch (a refusal is still a result, not an error). `progress`: a Progress
    told each dispatch's stages."""
    from ..run.replay import default_execute

    if budget is not None and budget <= 0:
        raise UserError(f"--budget {budget}: give a positive number of instructions")
    stage = progress.stage if progress is not None and progress.enabled else None
    inner = default_execute(backend, mode, cache, budget=budget, progress=stage)

    def run(memory, config, index):
        try:
            return inner(memory, config, index)
        except Refused:
            raise
        except Exception as e:  # noqa: BLE001
            raise InternalError(
                f"the execution engine failed on dispatch {index} "
                f"(program 0x{config.program_address:016x}): "
                f"{type(e).__name__}: {e}"
            ) from e

    return run


class _Stop(Exception):
    pass


def replay_until(cap, n: int, execute, before=None):
    """Replay `cap` through dispatch `n` (numbered as replay numbers them) and stop: dispatches
    before it run with `execute`; `before(memory, config)` is called just before dispatch n runs.
    Returns (results[0..n], dispatch count seen) — results has n+1 entries, or fewer if the
    capture has fewer dispatches."""
    from ..run.replay import run_stream
    from ..stream.registers import RegisterFile

    regs = RegisterFile(cap.target)
    results: list = []
    held: list = []

    def ex(memory, config, index):
        if index > n:
            raise _Stop
        if index == n and before is not None:
            before(memory, config)
        r = execute(memory, config, index)
        if index == n:
            held.append(r)
            raise _Stop
        return r

    for address, size in cap.streams:
        try:
            if run_stream(cap.memory, cap.target, address, size, regs, ex, results) is not None:
                break
        except _Stop:
            results.extend(held)
            break
        if len(results) > n:
            break
    return results[: n + 1]


# --- output files ------------------------------------------------------------------------------
def check_outputs(inputs: dict, outputs: dict) -> None:
    """Refuse, before any work, an output that would overwrite an input or another output:
    `inputs` / `outputs` map what the user calls a path ("the capture", "--json") to the path.
    Paths are compared as files (links, `./x` vs `x`), not as text. Also refuses an output whose
    directory does not exist or that is a directory."""
    from ..outfile import same_file

    outs = [(k, v) for k, v in outputs.items() if v]
    for i, (what, path) in enumerate(outs):
        for other, ipath in list(inputs.items()) + outs[:i]:
            if ipath and same_file(path, ipath):
                raise UserError(
                    f"{what} {path} is {other} ({ipath}): wavelift does not overwrite "
                    f"its input; give another file name"
                )
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise UserError(f"{what} {path}: the directory {d} does not exist")
        if os.path.isdir(path):
            raise UserError(f"{what} {path}: is a directory; give a file name")


def write_output(what: str, path: str, write) -> None:
    """`write(path)` (which writes with wavelift.outfile.atomic_output), its OSError as one line."""
    try:
        write(path)
    except OSError as e:
        raise UserError(f"{what} {path}: cannot write it ({e.strerror or e})") from None


# --- naming ------------------------------------------------------------------------------------
def hexa(a: int) -> str:
    return f"0x{int(a) & ((1 << 64) - 1):016x}"


def name_of(allocation) -> str:
    """An allocation's name as text output shows it (guest text: escaped)."""
    return shown(allocation.name) if allocation.name else "(unnamed)"


def where(memory, address: int) -> str:
    """'name+0xOFF' for a guest address, or 'not in guest memory'."""
    a = memory.find(address)
    if a is None:
        return "not in guest memory"
    off = int(address) - a.base
    return f"{name_of(a)}+0x{off:x}" if off else name_of(a)


def find_allocation(memory, spec: str):
    """An allocation by exact name, by unique name prefix, or by an address inside it."""
    allocs = memory.allocations
    exact = [a for a in allocs if a.name == spec]
    if len(exact) == 1:
        return exact[0]
    try:
        addr = int(spec, 0)
    except ValueError:
        addr = None
    if addr is not None:
        a = memory.find(addr)
        if a is None:
            raise UserError(f"no allocation holds address {hexa(addr)} (see `wavelift info`)")
        return a
    pre = [a for a in allocs if a.name.startswith(spec)]
    if len(pre) == 1:
        return pre[0]
    names = ", ".join(repr(a.name) for a in (pre or allocs)[:12])
    if pre:
        raise UserError(f"allocation {spec!r} is ambiguous: {names}")
    raise UserError(
        f"no allocation named {spec!r}; the capture has {names}"
        f"{' …' if len(allocs) > 12 else ''} (names or addresses: `wavelift info`)"
    )


def fmt_grid(config) -> str:
    g = "x".join(str(x) for x in config.num_groups)
    b = "x".join(str(x) for x in config.block)
    return f"{g} x {b}"


def table(rows: list[list[str]], header: list[str], right: set[int] | frozenset[int] = frozenset()) -> str:
    """A plain-text table: columns padded to their widest cell; `right` columns right-aligned."""
    allr = [header] + rows
    w = [max(len(str(r[i])) for r in allr) for i in range(len(header))]
    out = []
    for r in allr:
        cells = [str(c).rjust(w[i]) if i in right else str(c).ljust(w[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


# --- progress ----------------------------------------------------------------------------------
def native_note(stats: dict | None) -> str:
    """What a person should know about the NumPy backend's native tier for one dispatch: that
    it is still compiling in the background (WAVELIFT_NATIVE=auto), so NumPy blocks ran; else
    ''."""
    if (stats or {}).get("native_compiling"):
        return "native tier compiling in the background: NumPy blocks"
    return ""


def module_cache_text(stats: dict | None) -> str:
    """The run table's "module cache" cell: `hit` (this process had built the module), `disk hit`
    (built here from the disk cache: the NumPy backend's native library, the CUDA backend's
    cubin), `miss`, or `-` (no report)."""
    s = stats or {}
    v = s.get("module_cache_hit")
    if v is None:
        return "-"
    if v:
        return "hit"
    return "disk hit" if "disk cache" in (s.get("native_library"), s.get("cubin")) else "miss"


def count_dispatches(cap) -> int:
    """How many dispatches (rows of `wavelift run`) a replay of `cap` has, found by walking its
    streams without running a dispatch and without changing its memory (what the walker writes
    goes to copies): the N of "dispatch i of N".  A stream that writes its own later packets
    could make the replay differ; Progress shows no N past it."""
    from ..run.replay import run_stream
    from ..run.result import DispatchResult
    from ..stream.registers import RegisterFile
    from ..stream.walker import StreamLimits

    class Unchanged:
        """The capture's memory as this walk sees it: reads go through, a view is a copy."""

        def __init__(self, memory):
            self._m = memory

        def view(self, address, n):
            return self._m.view(address, n).copy()

        def __getattr__(self, name):
            return getattr(self._m, name)

    def count(memory, config, index):
        return DispatchResult(index, config, None, stats={})

    regs = RegisterFile(cap.target)
    results: list = []
    limits = StreamLimits()
    mem: Any = Unchanged(cap.memory)  # (duck-typed: the walker's reads and views)
    for address, size in cap.streams:
        if run_stream(mem, cap.target, address, size, regs, count, results, limits=limits) is not None:
            break
    return len(results)


class Progress:
    """One status line per dispatch on stderr (redrawn in place on a terminal, with the stage
    the dispatch is in: execute.STAGES); `total`: the dispatch count, when known ("dispatch i
    (k of N)"). Never on stdout: --json output and tables stay as they are."""

    def __init__(self, enabled: bool, stream=None, total: int | None = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self.total = total
        self._config = None
        self._t_dispatch = self.t0

    def _which(self, index: int) -> str:
        if self.total is not None and index < self.total:
            return f"dispatch {index} ({index + 1} of {self.total})"
        return f"dispatch {index}"

    def _emit(self, text: str, final: bool) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, index: int, config) -> None:
        self._config = config
        self._t_dispatch = time.perf_counter()
        if self.tty:
            self.stage(index, "")

    def stage(self, index: int, stage: str) -> None:
        """The dispatch reached `stage` (execute.STAGES): redrawn on a terminal; elsewhere a line
        only for a module build (seconds, sometimes: the one wait worth announcing)."""
        if not self.enabled:
            return
        c = self._config
        if self.tty:
            now = time.perf_counter()
            where = (
                f"program {hexa(c.program_address)} grid {fmt_grid(c)} wave{c.wave_size}"
                if c is not None
                else ""
            )
            self._emit(
                f"wavelift: {self._which(index)}: {where}"
                + (f": {stage}" if stage else "")
                + f" … ({now - self._t_dispatch:.1f}s; {now - self.t0:.1f}s in all)",
                False,
            )
        elif stage == "building the module":
            self._emit(f"wavelift: {self._which(index)}: {stage}", True)

    def done(self, index: int, result) -> None:
        what = "landed" if result.refusal is None else f"refused ({result.refusal.code})"
        t = result.stats.get("time_s")
        nn = native_note(result.stats)
        self._emit(
            f"wavelift: {self._which(index)} {what}"
            + (f" in {t:.3f}s" if t is not None else "")
            + (f"; {nn}" if nn else ""),
            not self.tty,
        )

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def wrap(self, execute):
        if not self.enabled:
            return execute

        def run(memory, config, index):
            self.start(index, config)
            r = execute(memory, config, index)
            self.done(index, r)
            return r

        return run
