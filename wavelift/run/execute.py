"""execute_dispatch: carry out one dispatch (or refuse it) — the entry point replay calls.

Pipeline: program bytes → decode/CFG → IR (frontend/) → module (backend, cached by key) →
windows (trace/) → run on private copies → land write spans only if nothing escaped or refused.
Never raises for guest-caused problems and never writes guest memory unless landing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import time
from typing import Any
from weakref import ref

from .. import settings
from ..backends import base as backends
from ..dispatch.config import shape_fields
from ..errors import DeferredLost, OtherTranslation, Refusal, Refused
from ..kept import keep
from .result import DispatchResult

# The default instruction budget of a wave (docs/decisions/0015-bounded-work.md): counted
# instructions, so the same dispatch is refused the same way on every machine and backend.
# Sized from the program (BUDGET_PER_INSTRUCTION per instruction it has: large programs run long
# loops) and from the grid (the dispatch's waves share BUDGET_DISPATCH, so waves x budget, the
# dispatch's work, is bounded), between BUDGET_MIN and BUDGET_MAX.  A spinning small program
# stops after BUDGET_MIN instructions: seconds on NumPy blocks (~30 us per block run).
BUDGET_MIN = 1 << 16
BUDGET_MAX = 1 << 21
BUDGET_PER_INSTRUCTION = 512
BUDGET_DISPATCH = 1 << 30
BUDGET_WAVE_FLOOR = 1 << 10  # a wave's share of BUDGET_DISPATCH is at least this
# Optional wall-clock limit in seconds for services (dispatch.time_exceeded): off by default,
# since it makes results depend on the machine; WAVELIFT_TIME_LIMIT or time_limit=.
TIME_LIMIT_ENV = "WAVELIFT_TIME_LIMIT"
MAX_CODE = 4 << 20
_CACHE: dict = {}
CODE_HASHES = 64  # programs whose code_hash is kept
_CODE_HASHES: dict = {}
# program_for's programs by (cache, code allocation, its content stamp, ...): the last STAMPED
_STAMPED: dict = {}
STAMPED = 64
# program_for's last stamped find: [config object, memory (weakly), cache, allocation table
# generation, a copy of the config's system SGPR dict, code allocation (weakly), its stamp,
# (program, code base)]
_LAST_PROGRAM: list = [None] * 8
# the stages execute_dispatch tells its ``progress`` callable, in order (a module cache hit skips
# "building the module"; a refusal ends the list where it happened)
STAGES = ("translating", "building the module", "placing windows", "running", "landing")


def _silent(stage: str) -> None:
    pass


def default_budget(program, config) -> int:
    """Instructions a wave may run unless the caller gives a budget (see BUDGET_*)."""
    by_program = max(BUDGET_MIN, BUDGET_PER_INSTRUCTION * len(program.instructions))
    by_grid = max(BUDGET_WAVE_FLOOR, BUDGET_DISPATCH // max(1, config.waves))
    return min(BUDGET_MAX, by_program, by_grid)


def time_limit_from_env() -> float | None:
    """WAVELIFT_TIME_LIMIT in seconds (unset, empty or 0: no limit)."""
    v = (settings.raw(TIME_LIMIT_ENV) or "").strip()
    if not v:
        return None
    try:
        t = float(v)
    except ValueError:
        raise ValueError(f"{TIME_LIMIT_ENV}={v!r} is not a number of seconds") from None
    if not t >= 0 or t == float("inf"):
        raise ValueError(f"{TIME_LIMIT_ENV}={v!r} is not a number of seconds")
    return t or None


class Deadline:
    """A dispatch's wall-clock limit: ``check()`` refuses once it has passed; ``ns`` is the same
    moment on CLOCK_MONOTONIC (time.monotonic_ns) for the native driver."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.ns = time.monotonic_ns() + int(seconds * 1e9)

    def check(self):
        if time.monotonic_ns() > self.ns:
            self.refuse()

    def refuse(self):
        raise Refused(
            "dispatch.time_exceeded", f"the dispatch ran past the wall-clock limit of {self.seconds:g} s"
        )


def _program_bytes(memory, config):
    """-> (code bytes, guest address of code[0], entry offset in code).  The code starts up to
    MAX_CODE before the entry (inside its allocation): compilers place callees below kernels."""
    a = memory.find(config.program_address)
    if a is None:
        raise Refused(
            "program.bad_address", f"program address {config.program_address:#x} is not in guest memory"
        )
    off = config.program_address - a.base
    start = max(0, off - MAX_CODE) & ~3
    return bytes(a.data[start : off + MAX_CODE]), a.base + start, off - start


def code_hash(program) -> str:
    """sha256 of the program's instructions (offsets and words): the code part of module_key.
    Kept per program object (a translated program is never changed; program_for hands out the
    same object for the same bytes), so a dispatch of a large program does not hash it again
    (an 8,600-instruction program: 5-12 ms a dispatch)."""
    hit = _CODE_HASHES.get(id(program))
    if hit is not None and hit[0] is program:
        return hit[1]
    words: list = []  # (each offset, then its words: the bytes hashed, as one buffer)
    for ins in program.instructions:
        words.append(ins.offset)
        words.extend(ins.words)
    digest = hashlib.sha256(struct.pack(f"<{len(words)}I", *words)).hexdigest()
    # (holding the program: its id stays its own)
    keep(_CODE_HASHES, id(program), (program, digest), CODE_HASHES)
    return digest


# the CUDA host path (issue 24): the last (program, config object, a copy of its system SGPR
# dict, mode, backend) and its module key -- a Device's repeated launch hands the same objects
_LAST_MODULE_KEY: list = [None, None, None, None, None, None]


def module_key(program, config, mode, backend):
    if backend == "cuda":
        last = _LAST_MODULE_KEY
        if (
            last[0] is program
            and last[1] is config
            and last[2] == config.system_sgprs
            and last[3] == mode
            and last[4] == backend
        ):
            return last[5]
        key = _module_key(program, config, mode, backend)
        last[:] = [program, config, dict(config.system_sgprs), mode, backend, key]
        return key
    return _module_key(program, config, mode, backend)


class ModuleKey(tuple):
    """A module key: a tuple (equal to, and hashing as, the plain tuple of its parts) that keeps
    its hash -- a kept run looks its module up in the cache under it every launch (``_again``),
    and a tuple's hash is worked out anew each time (16 parts, some nested: ~0.5-1 us).  Its
    parts are immutable (it hashes), so the hash never changes.  Copied and pickled as the plain
    tuple: a string's hash differs between processes."""

    _hash: int

    def __new__(cls, parts: tuple):
        key = tuple.__new__(cls, parts)
        key._hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return tuple, (tuple(self),)


def _module_key(program, config, mode, backend):
    key = translation_parts(program, config) + (
        config.program_address,
        mode,
        backend,
        config.scratch_wave_bytes,
        config.float_mode,
    )
    be = _backend(backend)
    return ModuleKey(key + be.key_extra(config) if be is not None else key)


_ABI_FIELDS: dict = {}  # the scratch ABI's dataclass -> its field names (translation_inputs)


def translation_inputs(config, sabi=None) -> tuple:
    """What a translation reads of the dispatch besides its code bytes and where they lie:
    the target, wave size, scratch ABI (its fields: 0008), GB_ADDR_CONFIG (image swizzle
    patterns: frontend/image.py) and border colour base (REGISTER border colours:
    frontend/sample.py, decision 0043) -- the arguments program_for hands translate.  Every key
    of a translated program holds them (program_for's, module_key, and through
    translation_parts the NumPy backend's native index key, shared on disk by every process):
    an input translate is given is added here, once.  (``sabi``: the scratch ABI, where the
    caller has it.)"""
    if sabi is None:
        sabi = _scratch_abi(config)
    names = _ABI_FIELDS.get(type(sabi))
    if names is None:  # (its field names once a class: dataclasses.fields costs ~5 us a call)
        names = _ABI_FIELDS[type(sabi)] = tuple(f.name for f in dataclasses.fields(sabi))
    return (
        config.target,
        config.wave_size,
        tuple([getattr(sabi, n) for n in names]),
        config.gb_addr_config,
        config.border_color_base,
    )


def translation_parts(program, config) -> tuple:
    """Everything ``program``'s translation was made from but where its code lies: its
    instructions' offsets and words (code_hash), its entry's offset, translation_inputs.
    Raises OtherTranslation where ``program`` was translated with other inputs than
    ``config``'s (Program.made_with): the key names the config's, so it would name another
    program (0049, h129).  A program without a record (hand-built) is not checked: no input
    went into it, so none can disagree."""
    entry = program.blocks[0].start if program.blocks else None
    inputs = translation_inputs(config)
    made = program.made_with
    if made is not None and made != _as_made(inputs):
        raise OtherTranslation(
            f"the program was translated with {made} (target, wave size, enabled scratch ABI, "
            f"GB_ADDR_CONFIG, border colour base); the dispatch's are {_as_made(inputs)}: "
            "translate it with execute.program_for"
        )
    return (code_hash(program), entry) + inputs


def _as_made(inputs) -> tuple:
    """translation_inputs as Program.made_with has them (frontend.program.made_with): the
    scratch ABI's fields only where enabled (its first field)."""
    sabi = inputs[2]
    return inputs[:2] + (sabi if sabi[0] else None,) + inputs[3:]


def _backend(name):
    """The registered backend ``name`` (backends/base.py), or None."""
    return backends.find(name)


def _scratch_abi(config):
    """frontend.scratch.abi(config) (imported once: _late)."""
    return _late()[6](config)


def program_for(memory, config, cache=None):
    """The dispatch's translated program and the guest address its code was read from; raises
    Refused. Cached by the exact bytes decoded and everything the translation depends on (the
    scratch ABI, 0008), so `trace` and the backends see the very program that runs."""
    from ..frontend.program import translate
    from ..trace.tracer import content_stamp

    cache = _CACHE if cache is None else cache
    # the last dispatch's config object again (a Device's repeated launch), unchanged (its one
    # mutable field, the system SGPR dict, compared), on the same memory with the same
    # allocation table, its code's allocation with the same stamp: the same program
    last = _LAST_PROGRAM
    if (
        last[0] is config
        and last[1]() is memory
        and last[2] is cache
        and last[3] == memory.generation
        and last[4] == config.system_sgprs
        and (code := last[5]()) is not None
        and content_stamp(memory, code) == last[6]
    ):
        return last[7]
    sabi = _scratch_abi(config)
    inputs = translation_inputs(config, sabi)
    # the code's allocation unchanged since its bytes were last decoded here (a device copy's
    # stamp: decision 0029): the same program, without reading and hashing up to 8 MiB again
    a = memory.find(config.program_address)
    stamp = None if a is None else content_stamp(memory, a)
    last[:] = [None] * 8
    skey = None
    if stamp is not None:
        skey = (id(cache), a.base, a.size, stamp, config.program_address) + inputs
        hit = _STAMPED.get(skey)
        if hit is not None and hit[0] is cache:
            last[:] = [
                config,
                ref(memory),
                cache,
                memory.generation,
                dict(config.system_sgprs),
                ref(a),
                stamp,
            ]
            last.append((hit[1], hit[2]))
            return hit[1], hit[2]
    code, code_base, entry = _program_bytes(memory, config)
    pkey = ("program", hashlib.sha256(code).hexdigest(), config.program_address) + inputs
    program = cache.get(pkey)
    if program is None:
        program = translate(
            code,
            config.target,
            config.wave_size,
            code_base,
            scratch_abi=sabi,
            entry=entry,
            gb_addr_config=config.gb_addr_config,
            border_color_base=config.border_color_base,
        )
        cache[pkey] = program
    if skey is not None:
        last[:] = [config, ref(memory), cache, memory.generation, dict(config.system_sgprs), ref(a), stamp]
        last.append((program, code_base))
        keep(_STAMPED, skey, (cache, program, code_base), STAMPED)
    return program, code_base


# execute_dispatch's prepared records (issue 24): per config object (a Device's repeated launch
# hands the same one: driver/device.py _run_again), what the steps before the run found -- the
# backend, the program, the module key and module, the trace's key, the default budget -- with
# what those steps read, checked on the next dispatch of that config object (_prepared)
_PREPARED: dict = {}
PREPARED = 16
PREPARED_HITS = [0]  # dispatches that took a prepared record (tests)
AGAIN_HITS = [0]  # dispatches that ran again from a record's kept run (_again; tests)
DEFERRED = [0]  # of those, launched without waiting for the GPU (_deferred; tests)


class _Prepared:
    """What execute_dispatch's steps before the run found for one config object on one memory:
    each a pure function of what the record holds or checks (the config object -- frozen but
    for its system SGPR dict, compared with a copy --, backend and mode names, the registered
    backend object, the module cache object, the memory's allocation table generation, the
    code allocation's content stamp or else program_for's program object)."""

    __slots__ = (
        "config",
        "system",
        "memory",
        "backend",
        "mode",
        "be",
        "cache",
        "gen",
        "code",
        "stamp",
        "program",
        "code_base",
        "key",
        "module",
        "tkey",
        "budget",
        "again",
    )


def _prepared(memory, config, backend, mode, cache):
    """(the prepared record of ``config`` when the checks before translation would pass as they
    did for it and nothing the record's lookups read changed, or None: the full path; what a
    miss of the shape's record found, _shaped's, for the full path's _prepare: not worked out
    twice).  The same config object (its one mutable field, the system SGPR dict, compared),
    memory at the same allocation table generation, cache object, backend and mode names and
    registered backend object, which is available now: the target and grid checks, pure
    functions of the config, pass again.  The program and the module are confirmed by
    ``_confirm``."""
    rec = _PREPARED.get(id(config))
    if (
        rec is None
        or rec.config is not config
        or rec.memory() is not memory
        or rec.gen != memory.generation
        or rec.cache is not cache
        or rec.backend != backend
        or rec.mode != mode
        or rec.system != config.system_sgprs
        or backends.find(backend) is not rec.be
        or rec.be.available() is not True
    ):
        return _shaped(memory, config, backend, mode, cache)
    return rec, None


# execute_dispatch's records by the config's shape (decision 0035, amendment h113): what the full
# path found for a config object, kept by everything those steps read but the user SGPRs' values
# (_shape_key) -- a new config object of the same shape (the tinygrad hook's next launch of a
# kernel: new kernarg and buffer addresses in its user SGPRs) takes it as a record of its own,
# only its trace key made anew (the trace reads every user SGPR's value)
_SHAPED: dict = {}
SHAPED = 64
SHAPED_HITS = [0]  # records made from a record of the same shape (tests)
PREPARED_MADE = [0]  # records made by the full path (tests)


def _shape_key(memory, config, backend, mode, cache, be, a) -> tuple | None:
    """The key of _SHAPED for a dispatch, or None where it has none (a code allocation without a
    content stamp: its bytes are read and decoded by program_for on every new config object).
    It holds every input of the steps a record skips but the user SGPRs' values: the cache
    object, backend and mode names, the code's allocation (base, size) and content stamp (the
    same bytes: program_for's program; stamps are unique across memories, decision 0029), every
    config field with the user SGPRs as their count (dispatch/config.shape_fields: the grid, the
    registers, the system SGPRs, the program address...), the translation inputs (the scratch
    ABI, which reads user SGPR 1's swizzle bits: a user SGPR value that is part of the shape)
    and the backend's key_extra (its settings).  ``a``: the code's allocation (memory.find of
    the program address, or None)."""
    stamp = None if a is None else _late()[4](memory, a)
    if stamp is None:
        return None
    return (
        id(cache),
        backend,
        mode,
        a.base,
        a.size,
        stamp,
        type(config),
        shape_fields(config),
        translation_inputs(config),
        be.key_extra(config),
    )


def _shaped(memory, config, backend, mode, cache):
    """(a record for ``config`` made from the record of its shape (_SHAPED), or None; what the
    lookup found: (the shape key, the code's allocation), or None where it found nothing):
    the same cache and registered backend objects, the backend available and the module still
    cached under the key; the code's allocation on this memory (_shape_key: its stamp) and the
    trace key of this config's user SGPRs."""
    be = _backend(backend)
    if be is None:
        return None, None
    a = memory.find(config.program_address)
    skey = _shape_key(memory, config, backend, mode, cache, be, a)
    found = (skey, a)
    try:
        t = None if skey is None else _SHAPED.get(skey)
    except TypeError:  # (a field that cannot be hashed: no record by shape)
        return None, found
    if (
        t is None
        or t[0] is not cache
        or t[1] is not be
        or be.available() is not True
        or cache.get(t[4]) is not t[5]
    ):
        return None, found
    SHAPED_HITS[0] += 1
    _, _, program, code_base, key, module, skip, budget = t
    rec = _Prepared()
    rec.config, rec.system, rec.memory = config, dict(config.system_sgprs), ref(memory)
    rec.backend, rec.mode, rec.be, rec.cache = backend, mode, be, cache
    rec.gen = memory.generation
    rec.code, rec.stamp = ref(a), skey[5]  # (a stamp: the allocation was found)
    rec.program, rec.code_base, rec.key, rec.module = program, code_base, key, module
    rec.tkey = _trace_key(config, None, skip)
    rec.budget = budget
    rec.again = None
    keep(_PREPARED, id(config), rec, PREPARED)
    return rec, found


def _confirm(rec, memory, config, cache) -> tuple:
    """(program, code base, whether the record holds) for a record _prepared gave: the program
    is the recorded one when the code's allocation (the one at the program address in the same
    allocation table) has the recorded content stamp (decision 0029), else program_for runs (as
    the full path does: it may refuse) and the record holds only if it hands out the recorded
    program object and code base; then the module is the recorded one while the cache still
    holds it under the recorded key (module_key is a pure function of the program object, the
    config's fields, mode and backend)."""
    content_stamp = _late()[4]
    code = rec.code()
    if code is not None and rec.stamp is not None and content_stamp(memory, code) == rec.stamp:
        program, code_base = rec.program, rec.code_base
    else:
        program, code_base = program_for(memory, config, cache)
        if program is not rec.program or code_base != rec.code_base or code is None:
            return program, code_base, False
        # (the code's bytes as program_for just read them: their stamp now, for the next check;
        # a first dispatch gives the code allocation its device copy after the record is made)
        rec.stamp = content_stamp(memory, code)
    return program, code_base, cache.get(rec.key) is rec.module


def _prepare(memory, config, backend, mode, cache, be, program, code_base, key, module, tkey, found=None):
    """Record what the full path found for ``config`` (execute_dispatch; _prepared checks it).
    ``found``: what _shaped's lookup found for this dispatch ((shape key, code allocation)),
    else None: the key is worked out here."""
    content_stamp = _late()[4]
    rec = _Prepared()
    rec.config, rec.system, rec.memory = config, dict(config.system_sgprs), ref(memory)
    rec.backend, rec.mode, rec.be, rec.cache = backend, mode, be, cache
    rec.gen = memory.generation
    # (the allocation table is the one _shaped looked in: program_for adds no allocation)
    a = found[1] if found else memory.find(config.program_address)
    rec.code = ref(a) if a is not None else (lambda: None)
    rec.stamp = None if a is None else content_stamp(memory, a)
    rec.program, rec.code_base, rec.key, rec.module, rec.tkey = program, code_base, key, module, tkey
    rec.budget = default_budget(program, config)
    rec.again = None
    keep(_PREPARED, id(config), rec, PREPARED)
    PREPARED_MADE[0] += 1
    # (a key made before program_for read the code holds its stamp then: kept only when it is
    # the stamp now, so the code read was that content; no key then: made now, as without it)
    skey = (
        found[0]
        if found and found[0] is not None
        else _shape_key(memory, config, backend, mode, cache, be, a)
    )
    if skey is not None and skey[5] == rec.stamp:  # (the stamp the program was read at)
        try:
            keep(_SHAPED, skey, (cache, be, program, code_base, key, module, tkey[1], rec.budget), SHAPED)
        except TypeError:  # (a field that cannot be hashed: kept by the config object only)
            pass


_LATE: tuple | None = None


def _keep_again(memory, config, cache, program, tkey, depth, windows, budget, ag) -> None:
    """After a dispatch of ``config`` landed through the full path with its prepared record
    current: keep the backend's plan to run it again (``ag``: runtime.Again) with what the
    steps it skips read -- the windows, budget and trace depth --, when those steps are pure
    functions of device copies whose changes the plan's Resident counts: the trace's scanned
    allocations and the code's allocation each have a device copy (a stamp) that this
    dispatch's landing did not change."""
    rec = _PREPARED.get(id(config))
    if rec is None or rec.config is not config or rec.cache is not cache or rec.program is not program:
        return
    rec.again = None
    if rec.tkey is not tkey or rec.memory() is not memory or rec.gen != memory.generation:
        return
    hit = memory.trace_cache.get(tkey if depth is None else (*tkey, depth))
    if hit is None or hit[0] != memory.generation or hit[2] != tuple(windows):
        return
    checks = [(s[0], s[3]) for s in hit[1]]
    code = rec.code()
    if code is None:
        return
    if rec.stamp is None:
        rec.stamp = _code_stamp(memory, code)
    checks.append((code, rec.stamp))
    if _stamps_hold(memory, checks) and ag.arm():
        # (the same stamps as a token of the Resident's: checked after each landing at once)
        token = memory.resident.stamps([a for a, _ in checks])
        if token is None:
            return
        ag.traced = frozenset(e for e, _ in token[1])  # (where a replay's trace reads: InPlace.defer)
        kept = _Kept(
            ag, tuple(windows), budget, program.deep_pointers, token, frozenset(memory.never_windows)
        )
        _hold(memory, config, kept)
        rec.again = ref(kept)


def _code_stamp(memory, code):
    """A stamp for the code's allocation when it has none: a device copy made for it (never
    uploaded: no window holds it), whose version a host write through the memory moves as any
    copy's.  A program that reads nothing from its code object had no copy of it, so no stamp,
    so its kept plan was never made: lds.cl's 5x5 stencil ran the full path on every pass
    (0.30 ms a pass against a kept plan's ~0.04, session 44).  None while the Resident replays
    deferred dispatches (no copy is made then: Resident.entry refuses)."""
    res = memory.resident
    if res is None or res.flushing:
        return None
    res.entry(code)
    return res.stamp(code)


class _Kept:
    """A record's kept run (_keep_again): the backend's plan, the windows, budget and trace depth
    it ran with, the stamps that must hold (a token of the Resident's: `Resident.stamps`) and
    the never-window bases.  Held by the memory's Resident (``kept``), the record holding it
    weakly: a dropped memory takes its plans, device copies and allocations with it."""

    __slots__ = ("ag", "windows", "budget", "deep", "token", "never", "__weakref__")

    def __init__(self, ag, windows, budget, deep, token, never):
        self.ag, self.windows, self.budget, self.deep = ag, windows, budget, deep
        self.token, self.never = token, never


def _hold(memory, config, kept) -> None:
    keep(memory.resident.kept, id(config), kept, PREPARED)


def _stamps_hold(memory, checks) -> bool:
    res = memory.resident
    if res is None:
        return False
    stamp = res.stamp
    for a, s in checks:
        if s is None or stamp(a) != s:
            return False
    return True


def _settled(name: str) -> property:
    """A DispatchResult field of a deferred dispatch: read once its report is (Resident.flush)."""
    key = "_" + name

    def get(self):
        d = self.__dict__
        if d["_resident"] is not None:
            d["_resident"].flush()
        lost = d.get("_lost")
        if lost is not None:
            raise DeferredLost(
                f"a deferred dispatch was not run: reading the queue raised {lost!r}"
            ) from lost
        return d[key]

    def put(self, value) -> None:
        self.__dict__[key] = value

    return property(get, put)


def _settled_stats() -> property:
    """DeferredResult.stats: ``_settled``'s, the dict made at its first read where the result was
    settled with its report's counts not yet summed (``settled_counted``: a stream whose stats
    nobody reads does not sum them)."""
    plain = _settled("stats")
    read = plain.fget

    def get(self):
        st = read(self)
        if st is None:
            d = self.__dict__
            counted, counts, written, extra = d.pop("_counts")
            instructions, lane = counts if counted is None else counted(counts)
            st = d["_stats"] = _stats(
                d["_waves"], instructions, lane, written, True, d["_t"], d["_budget"], extra
            )
        return st

    return property(get, plain.fset)


class DeferredResult(DispatchResult):
    """The result of a dispatch launched without waiting for the GPU (WAVELIFT_CUDA_DEFER=on:
    runtime.Again.defer): reading its refusal, stats, windows, write spans or escapes first
    reads the reports of the memory's deferred dispatches (Resident.flush), which fills it --
    from its report where it landed, from the dispatch run again where it did not -- as the
    result of the dispatch run without deferral."""

    refusal = _settled("refusal")  # type: ignore[assignment]
    stats = _settled_stats()  # type: ignore[assignment]
    windows = _settled("windows")  # type: ignore[assignment]
    write_spans = _settled("write_spans")  # type: ignore[assignment]
    escapes = _settled("escapes")  # type: ignore[assignment]

    def __init__(self, index, config, resident, waves, budget, windows, args=None):
        # (DispatchResult's fields set here, not through its __init__ and the setters; ``args``:
        # execute_dispatch's, for a rerun)
        self.__dict__ = {
            "index": index,
            "config": config,
            "_refusal": None,
            "_escapes": [],
            "_resident": resident,
            "_waves": waves,
            "_budget": budget,
            "_win": windows,
            "_args": args,
        }

    def settled(self, spans, instructions: int, lane: int, extra: dict) -> None:
        """From its report (it landed: Deferred.settle)."""
        self.settled_counted(spans, sum(n for _, n in spans), None, (instructions, lane), extra)

    def settled_counted(self, spans, written: int, counted, counts, extra: dict) -> None:
        """``settled``, its instruction and lane instruction counts ``counted(counts)`` (a copy
        of its report's counts) when its stats are first read; ``counted`` None: ``counts`` is
        them, summed already (``settled``)."""
        PREPARED_HITS[0] += 1
        AGAIN_HITS[0] += 1
        d = self.__dict__
        d["_resident"] = d["_args"] = None  # (nothing held for a rerun)
        d["_counts"] = (counted, counts, written, extra)
        d["_stats"] = None
        d["_write_spans"] = spans
        d["_windows"] = list(d["_win"])

    def rerun(self) -> None:
        """Run the dispatch again (without deferral: Resident.flush is reading the queue) and
        take its result (Deferred.replay)."""
        d = self.__dict__
        r = execute_dispatch(*d["_args"])
        d["_resident"] = d["_args"] = None
        d["_refusal"], d["_stats"], d["_windows"] = r.refusal, r.stats, r.windows
        d["_write_spans"], d["_escapes"] = r.write_spans, r.escapes

    def lost(self, exc: BaseException) -> None:
        """Neither settled nor run again: Resident.flush raised ``exc`` (its fields raise)."""
        d = self.__dict__
        d["_resident"] = d["_args"] = None
        d["_lost"] = exc

    def __eq__(self, other):
        if not isinstance(other, DispatchResult):
            return NotImplemented
        f = lambda r: (r.index, r.config, r.refusal, r.stats, r.windows, r.write_spans, r.escapes)  # noqa: E731
        return f(self) == f(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return DispatchResult, (
            self.index,
            self.config,
            self.refusal,
            self.stats,
            self.windows,
            self.write_spans,
            self.escapes,
        )


def _deferred(rec, memory, config, index, budget, cache, kept, t0):
    """The dispatch of ``kept`` launched without waiting (runtime.Again.defer), or None."""
    ag, res = kept.ag, memory.resident
    args = (memory, config, index, rec.backend, rec.mode, cache, budget)
    r = DeferredResult(index, config, res, ag.waves, kept.budget, kept.windows, args)
    item = ag.defer(r)
    if item is None:
        return None
    DEFERRED[0] += 1  # (PREPARED_HITS and AGAIN_HITS once it landed: settled)
    r.__dict__["_t"] = time.perf_counter() - t0
    if res.holds(kept.token) and ag.arm():
        rec.again = ref(kept)
    if len(res.pending) >= res.depth:
        res.flush(front=res.depth // 2)  # (the oldest half read: their places are taken again)
    return r


def _again(rec, memory, config, index, budget, cache, t0):
    """The dispatch run again from the record's kept run (_keep_again), or None: the full path
    (nothing done, or the backend's run handed it back before landing anything).  What it
    skips -- the code's confirmation, the trace, the window set, the backend's preparation -- is
    checked unchanged by the record's checks (the config object, memory, allocation table,
    cache, backend: _prepared), the module still cached under the key, the same budget and trace
    depth, and the plan's own check of everything on the device side (runtime.Again.run)."""
    kept = rec.again()
    rec.again = None
    if kept is None:
        return None
    ag, bud, deep = kept.ag, kept.budget, kept.deep
    if (
        (bud if budget is None else int(budget)) != bud
        or rec.program.deep_pointers is not deep
        or cache.get(rec.key) is not rec.module
        or memory.never_windows != kept.never
    ):
        return None
    if ag.defer_on:
        r = _deferred(rec, memory, config, index, budget, cache, kept, t0)
        if r is not None:
            return r
    if memory.resident.pending:  # (deferred dispatches before it: the full path reads them)
        return None
    out = ag.run()
    if not out:
        return None
    spans_, instructions, lane, extra = out
    PREPARED_HITS[0] += 1
    AGAIN_HITS[0] += 1
    stats = _stats(ag.waves, instructions, lane, 0, True, 0.0, bud, extra)
    spans, stats["bytes_written"] = ag.land(spans_)
    res = DispatchResult(index, config, None, stats, list(kept.windows), spans)
    if memory.resident.holds(kept.token) and ag.arm():
        rec.again = ref(kept)
    stats["time_s"] = time.perf_counter() - t0
    return res


def _late() -> tuple:
    """(RUN_TARGETS, check_grid, trace, WindowSet, content_stamp, SHALLOW_DEPTH, scratch.abi,
    trace_key): imported on the first use (not at import: the import graph), then kept (no
    import statement per dispatch: ~1 us each, several a dispatch)."""
    global _LATE
    if _LATE is None:
        from ..dispatch.setup import check_grid
        from ..frontend.scratch import abi
        from ..isa.instruction import RUN_TARGETS
        from ..trace.tracer import SHALLOW_DEPTH, content_stamp, trace, trace_key
        from ..trace.windows import WindowSet

        _LATE = (RUN_TARGETS, check_grid, trace, WindowSet, content_stamp, SHALLOW_DEPTH, abi, trace_key)
    return _LATE


def _trace_key(config, roots, skip=None) -> tuple:
    """tracer.trace_key (imported once: _late)."""
    return _late()[7](config, roots, skip)


def execute_dispatch(
    memory,
    config,
    index=0,
    backend="numpy",
    mode="wave",
    cache=None,
    budget=None,
    time_limit=None,
    progress=None,
) -> DispatchResult:
    """``budget``: instructions per wave (default: default_budget); ``time_limit``: seconds of
    wall clock (default: WAVELIFT_TIME_LIMIT, else none); ``progress``: None, or a callable
    ``progress(stage)`` told each stage as it starts (STAGES: what a person watching a long
    run is waiting for; never called with guest text)."""
    t0 = time.perf_counter()
    tell = progress or _silent
    if time_limit is None:
        time_limit = time_limit_from_env()
    deadline = Deadline(time_limit) if time_limit else None
    cache = _CACHE if cache is None else cache
    win = None
    res: DispatchResult | None = None
    stats: dict = {}  # (the finally below writes into it whatever raised before _fresh)
    try:
        # (found: what a miss of the shape's record found -- _prepare takes it)
        rec, found = _prepared(memory, config, backend, mode, cache)
        if rec is not None and rec.again is not None and progress is None and deadline is None:
            again = _again(rec, memory, config, index, budget, cache, t0)
            if again is not None:
                return again
        RUN_TARGETS, check_grid, trace, WindowSet, _, SHALLOW_DEPTH, _, _ = _late()  # (the full path's)
        # (made after the kept run, which makes its own: none made to be dropped)
        res, stats = _fresh(index, config)
        rs = getattr(memory, "resident", None)
        if rs is not None and rs.pending:  # (deferred dispatches: read, or run again, first)
            rs.flush()
            # (a replay may have made another record; what the flush changed is looked at again)
            rec, found = _prepared(memory, config, backend, mode, cache)
        program: Any = None
        if rec is not None:
            # the same config object again, nothing its checks read changed: they pass as they
            # did (the target and the grid are pure functions of the config); the program, the
            # module and the trace key are the recorded ones when _confirm says so
            be = rec.be
            tell("translating")
            program, code_base, held = _confirm(rec, memory, config, cache)
            if held:
                PREPARED_HITS[0] += 1
                module, tkey = rec.module, rec.tkey
                stats["module_cache_hit"] = True
            else:
                rec = None  # (translated: the full path from the module key on)
        if rec is None:
            if program is None:
                be = _backend(backend)
                if be is None:
                    raise Refused("backend.unavailable", f"backend {backend!r} is not available here")
                why = be.available()
                if why is not True:
                    raise Refused("backend.unavailable", f"{be.missing}: {why}")
                if mode not in backends.MODES:
                    raise Refused("backend.unavailable", f"mode {mode!r} is not 'wave' or 'lane'")
                if config.target not in RUN_TARGETS:  # (a Capture built in Python may name any target)
                    raise Refused(
                        "dispatch.bad_target",
                        f"target {config.target!r}: wavelift runs code for {', '.join(RUN_TARGETS)}",
                    )
                check_grid(config.num_groups, config.block, config.wave_size)
                tell("translating")
                program, code_base = program_for(memory, config, cache)
            key = module_key(program, config, mode, backend)
            module = cache.get(key)
            stats["module_cache_hit"] = module is not None
            if module is None:
                tell("building the module")
                backends.check_program(be, program)
                module = be.build_module(key, program, config, mode, code_base)
                cache[key] = module
            tkey = _trace_key(config, program.scratch.tracer_skip)
            _prepare(memory, config, backend, mode, cache, be, program, code_base, key, module, tkey, found)
        # the windows: first as deep as most programs reach (tracer.SHALLOW_DEPTH), deeper only
        # for a program that escaped or was refused there (decision 0048: a run that escaped
        # landed nothing, and one that did not touched only windows the deeper trace also has)
        skip = program.scratch.tracer_skip
        depth = None if program.deep_pointers else SHALLOW_DEPTH
        tell("placing windows")
        res.windows = trace(memory, config, scratch_roots=skip, key=tkey, depth=depth)
        if deadline is not None:
            deadline.check()  # (before the arena: a replay's time may be up)
        if budget is not None:
            stats["budget"] = int(budget)
        else:
            stats["budget"] = rec.budget if rec is not None else default_budget(program, config)

        def attempt(windows):
            """Run the module over ``windows`` -> (RunCounts, the refusal it raised or None)."""
            nonlocal win
            if win is not None:
                win.release()
            win = WindowSet(windows, memory, **be.window_plan(module))
            rc = backends.RunCounts()
            tell("running")
            if progress is not None:
                rc.progress = lambda done, total: tell(f"running: {done} of {total} workgroups")
            try:
                be.run(module, config, win, mode, stats["budget"], deadline, rc)
            except Refused as r:
                return rc, r
            return rc, None

        rc, refused = attempt(res.windows)
        final = refused is not None and refused.refusal.final  # (never run again: errors.FINAL)
        if depth is not None and not final and (refused is not None or rc.escape_count):
            deeper = trace(memory, config, scratch_roots=skip, key=tkey)
            if deeper != res.windows:
                program.deep_pointers = True  # (its next dispatches go deep at once)
                stats["deep_trace"] = True
                if deadline is not None:
                    deadline.check()
                res.windows = deeper
                tell("placing windows")
                rc, refused = attempt(deeper)
        stats.update(
            waves=rc.waves,
            instructions=rc.instructions,
            lane_instructions=rc.lane_instructions,
            escapes=rc.escape_count,
        )
        stats.update(rc.extra)
        # the runtimes count pcs from the translated code's first byte, which sits before the
        # program address when callees are placed below the entry (0010); reports count
        # from the program address
        shift = config.program_address - code_base
        res.escapes = [dataclasses.replace(e, pc=e.pc - shift) for e in rc.escapes]
        if refused is not None:
            raise refused
        if rc.escape_count:
            e = res.escapes[0]
            raise Refused(
                "escape",
                f"{rc.escape_count} access(es) outside every window; first: "
                f"{e.kind} at pc {e.pc:#x} ({e.instruction}) wave {e.wave} "
                f"lane {e.lane} address {e.address:#x}",
            )
        if deadline is not None and not rc.landed:
            # (a backend that cannot stop on it; nothing has landed -- a run whose bytes stand
            # already had its time checked by its backend before its launch)
            deadline.check()
        tell("landing")
        spans, stats["bytes_written"] = backends.land(win, memory, rc)
        res.write_spans = spans
        if rc.again is not None and progress is None and deadline is None and "deep_trace" not in stats:
            _keep_again(memory, config, cache, program, tkey, depth, res.windows, stats["budget"], rc.again)
    except Refused as r:
        if res is None:
            res, stats = _fresh(index, config)
        res.refusal = r.refusal
    except MemoryError:
        if res is None:
            res, stats = _fresh(index, config)
        res.refusal = Refusal("dispatch.grid_too_large", "the dispatch does not fit in memory")
    finally:
        if win is not None:
            win.release()  # (its arena serves the next dispatch)
    stats["time_s"] = time.perf_counter() - t0
    return res


def _fresh(index, config) -> tuple[DispatchResult, dict]:
    """A dispatch's result before anything ran, and its stats (in the result)."""
    res = DispatchResult(index, config)
    res.stats = stats = _stats()
    return res, stats


def _stats(
    waves=0, instructions=0, lane=0, written=0, hit=False, time_s=0.0, budget=None, extra=None
) -> dict:
    """A dispatch's stats in the full path's key order: its first keys (_fresh's), then -- a run
    again from a kept one (_again, DeferredResult.settled), which has them all at once -- the
    budget and the backend's extra."""
    stats = {
        "waves": waves,
        "instructions": instructions,
        "lane_instructions": lane,
        "bytes_written": written,
        "escapes": 0,
        "module_cache_hit": hit,
        "time_s": time_s,
    }
    if budget is not None:
        stats["budget"] = budget
    if extra:
        stats.update(extra)
    return stats
