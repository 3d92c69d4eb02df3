"""The Backend interface and its registry: what execute_dispatch, the CLI and Device see of a
backend, whichever it is.

A backend is an object with
    name                    the --backend / Device(backend=...) name
    missing                 what a refusal says is missing when it cannot run here
    available()             True, or a sentence saying why not (never raises)
    lower(program)          generate the code of every block, nothing else (no compiler, no
                            device); an op it does not lower raises ``refused`` naming it
    lowers()                the IR ops (ir/ops.py) its lowering lowers
    unsupported()           op -> why, the ops it declares it does not lower (a program that
                            needs one is refused by name, backend.unavailable)
    tiers                   parts that lower a subset of the ops, each with its own lowers() and
                            unsupported() (the NumPy backend's native tier)
    key_extra(config)       what its modules fold in besides the program (execute.module_key)
    build_module(key, program, config, mode, base_address) -> module      (raises Refused)
    window_plan(module)     WindowSet's keyword arguments for the next run of module
    run(module, config, windows, mode, budget, deadline, counts) -> RunCounts

``lowers()`` is never a list someone keeps: it is what the backend's own lowering does with a
sample of each op (``probe(lower, refused)``), so tests/ir/test_ops.py, which walks the op table against
every registered backend, fails for a backend that forgets an op.

The registry knows the backends by name and imports one on first use (``get``), so naming them
(``names()``: argparse choices, Device's check) loads no backend.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..ir.ops import EFFECT, OPS, OpRow

DEFAULT = "numpy"
MODES = ("wave", "lane")
# name -> module whose BACKEND is the backend (imported on first use)
_MODULES = {"numpy": "wavelift.backends.numpy", "cuda": "wavelift.backends.cuda"}
_LOADED: dict[str, Backend] = {}


@dataclasses.dataclass
class RunCounts:
    """What a run leaves for the result's stats, filled even when the run is refused."""

    waves: int = 0
    instructions: int = 0
    lane_instructions: int = 0
    escape_count: int = 0
    escapes: list = dataclasses.field(default_factory=list)  # the first few (runtime pcs)
    extra: dict = dataclasses.field(default_factory=dict)  # backend-specific stats
    # None, or progress(workgroups done, of) called by a runtime as workgroups finish (given,
    # not filled: execute's progress stage "running: i of N workgroups")
    progress: Any = None
    # None, or land() -> (write spans, bytes written): a runtime that lands the dispatch itself
    # (the CUDA backend's device copies, decision 0026); None: the host's WindowSet lands
    land: Any = None
    # None, or (copy, min bytes): the host's landing copies spans that large with copy (the
    # NumPy runtime's native driver: streaming stores, decision 0013 amendment h91)
    stream: Any = None
    # None, or the runtime's plan for running the same dispatch again (runtime.Again: the CUDA
    # backend), which execute_dispatch keeps once the dispatch has landed
    again: Any = None
    # True: the run's bytes stand already (the CUDA backend in place, decision 0049 step 4), so
    # nothing checked after the run (execute's time limit) may refuse it
    landed: bool = False


class Part(Protocol):
    name: str
    refused: type[Exception]

    def lower(self, program) -> None: ...

    def lowers(self) -> frozenset[str]: ...

    def unsupported(self) -> Mapping[str, str]: ...


class Backend(Part, Protocol):
    missing: str
    tiers: tuple[Part, ...]

    def available(self) -> bool | str: ...

    def key_extra(self, config) -> tuple: ...

    def build_module(self, key, program, config, mode: str, base_address: int) -> Any: ...

    def window_plan(self, module) -> dict: ...

    def run(
        self, module, config, windows, mode: str, budget: int, deadline=None, counts: RunCounts | None = None
    ) -> RunCounts: ...


def names() -> tuple[str, ...]:
    """Every registered backend's name (imports none of them)."""
    return tuple(_MODULES)


def get(name: str) -> Backend:
    """The backend called ``name`` (KeyError for an unknown name)."""
    b = _LOADED.get(name)
    if b is None:
        b = _LOADED[name] = importlib.import_module(_MODULES[name]).BACKEND
    return b


def find(name: str) -> Backend | None:
    """``get(name)`` for a registered name, else None."""
    if name not in _MODULES:
        return None
    b = _LOADED.get(name)  # (get's first step inline: every dispatch asks)
    return get(name) if b is None else b


def registered() -> tuple[Backend, ...]:
    return tuple(get(n) for n in names())


def register(name: str, backend: Backend | str) -> None:
    """Another backend: the object, or the name of a module whose BACKEND it is (loaded on first
    use)."""
    _LOADED.pop(name, None)
    if isinstance(backend, str):
        _MODULES[name] = backend
    else:
        _MODULES[name] = ""
        _LOADED[name] = backend


def unregister(name: str) -> None:
    _MODULES.pop(name, None)
    _LOADED.pop(name, None)


def problem(name: str) -> str | None:
    """None when backend ``name`` can run here, else why not (a backend that does not even
    load says so)."""
    try:
        ok = get(name).available()
    except Exception as e:  # noqa: BLE001 - any import problem means: not available
        return f"the {name} backend does not load ({type(e).__name__}: {e})"
    return None if ok is True else (ok or f"the {name} backend reports that it cannot run here")


def check_program(backend: Part, program) -> None:
    """Refuse (by name) a program that needs an op ``backend`` declares it does not lower."""
    bad = backend.unsupported()
    if not bad:
        return
    for blk in program.blocks:
        for op in blk.ops:
            why = bad.get(op.name)
            if why is not None:
                from ..errors import Refused

                raise Refused(
                    "backend.unavailable",
                    f"the {backend.name} backend does not lower the IR op {op.name} "
                    f"({why}; instruction #{op.instr})",
                )


_RUNTIMES: dict[str, Any] = {}  # backend package -> its runtime.Runtime (run_backend)


def run_backend(package: str, module, config, windows, mode, budget, deadline, counts) -> RunCounts:
    """run_runtime with the Runtime of ``package``'s runtime module: imported on the backend's
    first run (not at import: the import graph; CUDA's runtime imports CuPy's users), then kept
    (no import statement per dispatch)."""
    rt = _RUNTIMES.get(package)
    if rt is None:
        rt = _RUNTIMES[package] = importlib.import_module(".runtime", package).Runtime
    return run_runtime(rt, module, config, windows, mode, budget, deadline, counts)


def run_runtime(Runtime, module, config, windows, mode, budget, deadline, counts) -> RunCounts:
    """Run a runtime class with the (module, config, windows, mode, budget) constructor and
    run(), which both backends' runtimes share; ``counts`` filled even when it raises."""
    counts = RunCounts() if counts is None else counts
    rt = Runtime(module, config, windows, mode, budget)
    # (the NumPy runtime stops on it; the CUDA one checks it before a launch in place, and
    # execute after the run where nothing landed yet)
    rt.deadline = deadline
    rt.progress = counts.progress  # (runtimes that report workgroups done call it)
    try:
        rt.run()
    finally:
        counts.waves, counts.instructions = rt.waves_run, rt.instructions
        counts.lane_instructions, counts.escape_count = rt.lane_instructions, rt.escape_count
        counts.escapes = list(rt.escapes)
        counts.extra = dict(getattr(rt, "extra_stats", {}))
        counts.land = getattr(rt, "land", None)
        counts.stream = getattr(rt, "land_stream", None)
        counts.again = getattr(rt, "again", None)
        counts.landed = getattr(rt, "landed", False)
    return counts


def land(windows, memory, counts: RunCounts) -> tuple[list, int]:
    """Land a dispatch that escaped nothing and was not refused: -> (write spans, bytes).  The
    runtime's own landing where it has one (counts.land), else the host's windows' spans into
    guest memory (trace/windows.WindowSet)."""
    if counts.land is not None:
        return counts.land()
    spans = windows.spans()
    if counts.stream is not None:
        return spans, windows.land(memory, spans, *counts.stream)
    return spans, windows.land(memory, spans)


# ---- what a lowering lowers, asked of the lowering itself -------------------------------------


def sample_program(row: OpRow, wave_size: int = 32, attrs: dict | None = None):
    """A one-block Program that holds one instance of op ``row`` (its example: op type, operand
    types, attrs; ``attrs`` overrides some), its operands made from SGPR reads, its result
    written to v1 or s1 so that no lowering drops it.  -> (program, the op)."""
    from ..ir.builder import Builder
    from ..ir.program import Block, Program

    b = Builder([0], wave_size)
    b.instr = 0
    t, ats, at = row.example
    at = {**at, **(attrs or {})}
    args = [_operand(b, x, k) for k, x in enumerate(ats)]
    if row.name == "word":  # (the word of a load's result)
        args = [
            b.emit(
                "load",
                "u32",
                _operand(b, "u64", 0),
                _operand(b, "b1", 1),
                uniform=False,
                space="global",
                nbytes=4,
                words=1,
            )
        ]
    at_op = len(b.ops)
    if row.kind == EFFECT:
        b.effect(row.name, t, *args, **at)
    else:
        given = {"uniform": False} if row.uniform == "given" else {}
        v = b.emit(row.name, t, *args, **given, **at)
        if v.uniform:
            b.sset(1, _to_u32(b, v))
        else:
            b.vset(1, _to_u32(b, v))
    op = b.ops[at_op]
    blk = Block(0, 0, [], b.ops, ("end",))
    blk.uses_float = b.uses_float
    return Program([blk], [], {0: 0}, max(b.max_vgpr, 2)), op


def _operand(b, t: str, k: int):
    x = b.sget(2 + k)
    if t == "u32":
        return x
    if t == "b1":
        return b.cmp("ne", "u32", x, b.const("u32", 0))
    if t in ("u64", "i64", "f64"):
        return b.bitcast(t, b.pack64(x, b.sget(10 + k)))
    if t in ("i32", "f32"):
        return b.bitcast(t, x)
    if t == "f16":
        return b.bitcast(t, b.cvt("u16", x))
    return b.cvt(t, x)  # u8 i8 u16 i16


def _to_u32(b, v):
    from ..ir.ops import BITS

    if v.type == "b1":
        return b.cvt("u32", v)
    if BITS[v.type] == 64:
        return b.lo32(b.bitcast("u64", v))
    if BITS[v.type] == 32:
        return b.bitcast("u32", v)
    return b.cvt("u32", b.bitcast({8: "u8", 16: "u16"}[BITS[v.type]], v))


def probe(
    lower: Callable[[Any], None], refused: type[Exception] | tuple, names: Any = None
) -> frozenset[str]:
    """The ops of the table (or ``names``) that ``lower(program)`` lowers: a sample program of
    each is lowered, and an op counts as not lowered when the lowering refuses it *by name*
    (``refused`` raised with the op's name as its message).  Anything else it raises is a bug
    of the lowering or the sample, and propagates."""
    out = set()
    for name in OPS if names is None else names:
        program, _ = sample_program(OPS[name])
        try:
            lower(program)
        except refused as e:
            if str(e) == name:
                continue
            raise
        out.add(name)
    return frozenset(out)
