"""Replay: walk a capture's streams in order and carry out every dispatch.

`run_stream` is the one path from a stream to DispatchResults: replay() uses it for each
submission of a capture, and Device.launch (wavelift.driver) for the IB it builds. Execution is
`wavelift.run.execute.execute_dispatch(memory, config, index, backend, mode, cache)`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable

from ..dispatch.setup import build_config
from ..errors import Refusal, Refused
from ..memory.capture import Capture
from ..memory.guest import GuestMemory
from ..stream.registers import RegisterFile
from ..stream.walker import DispatchEvent, StreamLimits, StreamWalker
from . import execute as engine  # looked up per call: tools and tests wrap execute_dispatch
from .result import DispatchResult

Execute = Callable[[GuestMemory, object, int], DispatchResult]


def default_execute(
    backend: str = "numpy",
    mode: str = "wave",
    cache=None,
    time_limit: float | None = None,
    budget: int | None = None,
    progress=None,
) -> Execute:
    """An `execute(memory, config, index)` calling wavelift.run.execute.execute_dispatch.
    `time_limit`: wall-clock seconds for all the dispatches it runs together (a replay's); a
    dispatch started past it is refused at once (dispatch.time_exceeded).  None: each dispatch
    has WAVELIFT_TIME_LIMIT, if set.  `budget`: instructions per wave (None: each dispatch's
    execute.default_budget, decision 0015).  `progress`: None, or `progress(index, stage)`
    told each dispatch's stages (execute.STAGES)."""
    end = None if not time_limit else time.monotonic() + time_limit

    def run(memory, config, index):
        if end is None and progress is None:  # (a Device's launches: no keywords made per launch)
            return engine.execute_dispatch(memory, config, index, backend, mode, cache, budget)
        left = None if end is None else max(end - time.monotonic(), 1e-9)
        kw = {} if progress is None else {"progress": lambda stage: progress(index, stage)}
        return engine.execute_dispatch(
            memory, config, index, backend, mode, cache, budget=budget, time_limit=left, **kw
        )

    return run


def run_stream(
    memory: GuestMemory,
    target: str,
    ib_address: int,
    size_dw: int,
    regs: RegisterFile,
    execute: Execute | None,
    results: list,
    on_packet=None,
    limits: StreamLimits | None = None,
    index_base: int = 0,
    gb_addr_config: int | None = None,
) -> Refusal | None:
    """Walk one stream; append one DispatchResult per dispatch to `results` (index =
    `index_base` + its position there). A bad packet appends a DispatchResult(config=None,
    refusal) and stops the stream; that refusal is returned (None if the stream ran to its end).
    `limits`: what the capture's streams may do in all (shared by its streams; default: this
    stream alone). `gb_addr_config`: the GPU's GB_ADDR_CONFIG (the capture's, or the Device's),
    given to every dispatch's config (None: not known)."""
    limits = StreamLimits() if limits is None else limits
    if execute is None:
        execute = default_execute()

    def on_dispatch(ev: DispatchEvent):
        index = index_base + len(results)
        try:
            config = build_config(ev.regs, target, ev.dims, ev.initiator)
            if gb_addr_config is not None:
                config = dataclasses.replace(config, gb_addr_config=gb_addr_config)
        except Refused as e:
            results.append(
                DispatchResult(index, None, e.refusal, stats=dict(ib=ev.ib_address, offset=ev.offset))
            )
            return
        try:
            r = execute(memory, config, index)
        except Refused as e:
            r = DispatchResult(index, config, e.refusal)
        limits.used_instructions += int((r.stats or {}).get("instructions", 0))
        results.append(r)

    walker = StreamWalker(memory, regs, on_dispatch, on_packet=on_packet, limits=limits)
    try:
        walker.walk(ib_address, size_dw)
    except Refused as e:
        results.append(
            DispatchResult(
                index_base + len(results),
                None,
                e.refusal,
                stats=dict(stream=True, packets=walker.stats.packets),
            )
        )
        return e.refusal
    return None


def replay(
    cap_or_path,
    backend: str = "numpy",
    mode: str = "wave",
    cache=None,
    execute: Execute | None = None,
    time_limit: float | None = None,
    limits: StreamLimits | None = None,
    budget: int | None = None,
) -> list[DispatchResult]:
    """One DispatchResult per dispatch of every submitted stream, in order. SH registers persist
    across submissions (one register file), as on hardware. A stream refusal ends the replay.
    `time_limit`: wall-clock seconds for the whole replay (default: each dispatch has
    WAVELIFT_TIME_LIMIT, if set);
    `limits`: what the capture's streams may do in all (default: StreamLimits());
    `budget`: instructions per wave for every dispatch (default: execute.default_budget)."""
    cap = cap_or_path if isinstance(cap_or_path, Capture) else Capture.load(os.fspath(cap_or_path))
    if execute is None:
        execute = default_execute(backend, mode, cache, time_limit, budget)
    try:
        regs = RegisterFile(cap.target)
    except ValueError as e:
        return [DispatchResult(0, None, Refusal("dispatch.bad_target", str(e)))]
    results: list[DispatchResult] = []
    limits = StreamLimits() if limits is None else limits  # the streams in all (0015)
    for address, size in cap.streams:
        if (
            run_stream(
                cap.memory,
                cap.target,
                address,
                size,
                regs,
                execute,
                results,
                limits=limits,
                gb_addr_config=cap.gb_addr_config,
            )
            is not None
        ):
            break
    return results
