"""wavelift.Device: our own runtime.  It does what ROCr/CLR (HSA code objects) or RADV (ACO
shaders, see aco.py) do before the GPU sees anything, into a Capture, and runs the result through
the same stream walker a replay uses, so launch -> save_capture -> replay reproduces it.

    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    co = dev.load_code_object("kernel.hsaco")
    k = co.kernel("vadd")
    a = dev.upload(np.arange(1024, dtype=np.float32)); out = dev.alloc(4096)
    r = k.launch(groups=(4, 1, 1), block=(256, 1, 1), args=[a, a, out, np.uint32(1024)])
    dev.download(out, np.float32)

Sources and choices: docs/decisions/0004-driver.md.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends import base as backends
from ..errors import Refused, UserError
from ..kept import keep
from ..stream import pm4
from .aco import AcoShader
from .codeobject import CodeObject, CodeObjectError, KernelInfo
from .codeobject import load as _load_co
from .hsa import (
    AMD_QUEUE_SIZE,
    DISPATCH_PACKET_SIZE,
    TARGETS,
    LaunchError,
    Local,
    align_up,
    build_kernargs,
    ceil_div,
    dispatch_packet,
    hsa_user_sgprs,
    make_grid,
    plan_scratch,
)
from .launch import _MUTABLE, Buffer, LaunchRecord, record_fields

WINDOW_HI = 0xFFFF8000  # address32_hi of RADV on GFX9+ (radv_null_winsys.c:153)
WINDOW_BASE = WINDOW_HI << 32
WINDOW_SIZE = 1 << 32

LDS_GRANULE = 512  # RSRC2.LDS_SIZE unit (Mesa lds_encode_granularity, GFX7+)
LDS_MAX = 64 * 1024
RSRC2_LDS_MASK = 0x1FF << 15
# GB_ADDR_CONFIG a Device has unless told (docs/capture-format.md): the configurations Mesa
# 22.3.6's own surface tests give addrlib (src/amd/common/ac_surface_test_common.h): init_navi10
# (0x00100044: 16 pipes) for gfx1010, and gfx103_16pipe (0x40 | NUM_PIPES 4 | NUM_PKRS 4:
# 16 pipes, 16 packers) for gfx1030; Navi31's for gfx1100 (0x40 | NUM_PIPES 5 | NUM_PKRS 5:
# 32 pipes, 32 packers, a later Mesa's ac_surface_test_common.h navi31; decision 0039)
DEFAULT_GB_ADDR_CONFIG = {"gfx1010": 0x00100044, "gfx1030": 0x00000444, "gfx1100": 0x00000545}
DEFAULT_STACK_SIZE = 1024  # per-work-item stack for USES_DYNAMIC_STACK kernels (CLR default)


AGAIN_ENTRIES = 16  # streams a Device(record=False) keeps for _run_again
PUT_COPY_BYTES = 1 << 16  # Device.put compares ranges up to this size as a bytes copy


@dataclass(frozen=True)
class _Again:
    """A launch's stream as the full path ran it (Device._run with `learn`): its dwords and IB
    bytes, the register writes it made (byte address -> value, first-write order; `count`
    writes in all), the register file it left (`after`) and the DispatchConfig it built."""

    dwords: list[int]
    ib: np.ndarray
    writes: dict[int, int]
    count: int
    after: dict[int, int]
    config: Any


class _FastLaunch:
    """A kernel's launch kept for the next one with the same key (Device._keep_fast): the launch
    key, the launch record made (its fields copied into each new one), the kept stream, the
    three launch allocations ((free-list key, address): kernargs, packet, IB), the stamps of
    those of the kernargs and packet with a device copy, the bytes of the others and of the IB
    (``pieces``), the allocation table generation and the register file's write count after it;
    and ``seen``, the argument objects of a launch found to have its key (`_seen`; None: none
    yet, or not all of fixed value)."""

    __slots__ = (
        "seen",
        "fixed",
        "key",
        "rec",
        "again",
        "pooled",
        "stamped",
        "pieces",
        "generation",
        "writes",
        "gb_addr_config",
        "pool_at",
    )

    def __init__(self, key, rec, again, pooled, stamped, pieces, generation, writes, gb_addr_config):
        self.seen: tuple | None = None
        self.key, self.rec, self.again, self.pooled = key, rec, again, pooled
        # (its record's fields but the mutable ones, which `record_fields` copies: a new record's dict)
        self.fixed = {k: v for k, v in rec.items() if k not in _MUTABLE}
        self.stamped, self.generation, self.writes = stamped, generation, writes
        # ((address, bytes, (allocation, view of the bytes there)): the launch allocations
        # checked by their bytes -- the IB, and the kernargs or packet where no device copy
        # stamps it (a kernel that never reads its packet: the tracer gave it no window) --, the
        # views the same while the table's generation is: `_fast_holds`)
        self.pieces = pieces
        self.gb_addr_config = gb_addr_config  # (part of the stream's key)
        # (`Device._pool_moves` when the free lists were last found as ``pooled`` says: while it
        # is the same, no free list was taken from or given to since -- `_fast_holds`)
        self.pool_at = -1

    @property
    def ib_bytes(self) -> bytes:
        """The IB's bytes as the kept stream writes them (the last of ``pieces``)."""
        return self.pieces[-1][1]


def _piece(alloc, addr: int, data: bytes) -> tuple:
    """A launch allocation's bytes ``data`` at ``addr`` as `_FastLaunch.pieces` keeps them, with
    a view of them in ``alloc``'s array (`_fast_holds` compares there while it has no device copy)."""
    return addr, data, (alloc, alloc._data[addr - alloc.base :][: len(data)])


_RESULT: Any = None


def _dispatch_result():
    """run.result.DispatchResult, imported on first use (then kept: no import per launch)."""
    global _RESULT
    if _RESULT is None:
        from ..run.result import DispatchResult

        _RESULT = DispatchResult
    return _RESULT


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


def _address(v: Buffer) -> int:
    return v.address


def _ints(v: tuple):
    """A tuple of ints itself (a grid triple: the common case), else _NO_KEY (keyed element by
    element: _value_key)."""
    for x in v:  # (a loop, not a generator: this runs every launch)
        if type(x) is not int:
            return _NO_KEY
    return v


_NO_KEY = ("no key",)

# The launch key of a value of *fixed value* -- one whose key can never change: an int, bool,
# float, None, Buffer (frozen), NumPy number or bool scalar (immutable), tuple of ints -- is
# (its type, _PARTS[its type](value)), or (its type, value) where the entry is None.  The one
# statement of those keys: _value_key makes them, _fixed says which values have one, _same_key
# compares two without making either (the kept launch's fast check, Kernel.launch), so the
# fast check says "the same" exactly where the keys are equal (tests/driver/test_grid_key.py).
_PARTS: dict[type, Any] = {
    int: None,
    bool: None,
    type(None): None,
    float: _bits,  # (by its bits: -0.0 is not 0.0)
    Buffer: _address,  # (the only field a launch reads)
    tuple: _ints,
    **{t: t.tobytes for t in set(np.sctypeDict.values()) if issubclass(t, (np.number, np.bool_))},
}
_NO_PART = object()  # (a type not in _PARTS)


def _value_key(v):
    """A launch argument (or grid argument) as a hashable value equal exactly when the launch
    builds the same bytes from it, or _NO_KEY: the values of fixed value as _PARTS keys them,
    other NumPy scalars (type and bytes), Locals, and tuples/lists of these."""
    t = type(v)
    part = _PARTS.get(t, _NO_PART)
    if part is None:
        return (t, v)
    if part is not _NO_PART:
        got = part(v)
        if got is not _NO_KEY:
            return (t, got)
    elif isinstance(v, np.generic):
        return (t, v.tobytes())
    if t is Local:
        return (t, _value_key(v.nbytes))
    if t is tuple or t is list:
        out = tuple(_value_key(x) for x in v)
        return _NO_KEY if _NO_KEY in out else (t, out)
    return _NO_KEY


def _fixed(v) -> bool:
    """Whether ``v`` is of fixed value: its launch key (`_value_key`) can never change (_PARTS)."""
    part = _PARTS.get(type(v), _NO_PART)
    return part is None or (part is not _NO_PART and part(v) is not _NO_KEY)


def _same_key(x, y) -> bool:
    """Whether ``x`` makes the launch key that ``y`` makes, ``y`` of fixed value (`_fixed`):
    _PARTS' comparison, no key made."""
    t = type(y)
    if type(x) is not t:
        return False
    part = _PARTS[t]
    return x == y if part is None else part(x) == part(y)


def _grid_of(groups, block, global_size, global_offset, dims, dynamic_stack, queue) -> tuple:
    """The launch's arguments besides its kernel arguments, in the one order its key (`_launch_key`),
    its kept objects (`_seen`) and their comparison (`_same_launch`) take them: Kernel.launch's
    parameters and the queue's address (part of the kernargs)."""
    return (groups, block, global_size, global_offset, dims, dynamic_stack, queue)


def _seen(grid: tuple, args) -> tuple | None:
    """A launch's argument objects (``grid``: `_grid_of`'s) as `Kernel.launch` compares them
    with a kept launch's (`_FastLaunch.seen`, `_same_launch`), or None where one is not of fixed
    value (a list, an array: its contents may change)."""
    for v in grid:
        if not _fixed(v):
            return None
    for a in args:
        if not _fixed(a):
            return None
    return (grid, tuple(args))


def _launch_key(grid: tuple, args):
    """Kernel.prepare's key: everything its plan reads besides the kernel itself (``grid``:
    `_grid_of`'s), or None."""
    ak = []
    for a in args:  # (those of fixed value keyed inline, as _value_key keys them: _PARTS)
        t = type(a)
        part = _PARTS.get(t, _NO_PART)
        if part is None:
            ak.append((t, a))
            continue
        if part is not _NO_PART:
            x = part(a)
            if x is not _NO_KEY:
                ak.append((t, x))
                continue
        x = _value_key(a)
        if x is _NO_KEY:
            return None
        ak.append(x)
    k = _grid_key(grid)
    return None if k is _NO_KEY else (k, tuple(ak))


def _same_launch(seen: tuple, grid: tuple, args) -> bool:
    """Whether a launch's arguments (``grid``: `_grid_of`'s) make the key of the launch whose
    objects ``seen`` holds (`_seen`): each the same object, or one that makes the same key
    (`_same_key`) -- the key compared a value at a time, nothing made.  (This runs every launch:
    indexed loops, faster than zip's in 3.11; two of them, not one over itertools.chain of a flat
    kept tuple: ~0.83 against ~0.99 us, timeit, h151.)"""
    kept, given = seen
    if len(args) != len(given):
        return False
    i = 0
    for x in grid:
        y = kept[i]
        if x is not y and not _same_key(x, y):
            return False
        i += 1
    i = 0
    for x in args:
        y = given[i]
        if x is not y and not _same_key(x, y):
            return False
        i += 1
    return True


def _grid_key(v: tuple):
    """_value_key(v) for a tuple of the launch's grid arguments, with its common elements (None,
    ints, tuples of ints) keyed inline: the same key _value_key gives (anything else: its)."""
    out = []
    ints = True
    for x in v:  # (loops, not generators: this runs every launch)
        t = type(x)
        if t is int:
            out.append((t, x))
            continue
        ints = False
        if x is None:
            out.append((t, x))
        elif t is tuple:
            for y in x:
                if type(y) is not int:
                    return _value_key(v)
            out.append((t, x))
        else:
            return _value_key(v)
    return (tuple, v) if ints else (tuple, tuple(out))


class Device:
    """A simulated AMD GPU: guest memory + a command stream (a Capture), and a runtime."""

    def __init__(
        self,
        target: str = "gfx1030",
        backend: str = "numpy",
        mode: str = "wave",
        execute=None,
        budget: int | None = None,
        record: bool = True,
        gb_addr_config: int | None | str = "default",
    ):
        """`execute`, if given, replaces the backend: a callable (memory, config, index) ->
        DispatchResult, as replay.run_stream takes it (tools and config-only tests use it).
        `budget`: instructions per wave of every launch (default: execute.default_budget).
        `record`: keep everything submitted, so that `save_capture` can replay it (each launch
        leaves its kernargs, dispatch packet and IB in guest memory, and its LaunchRecord and
        DispatchResult in `launches` and `results`).  `record=False`: a Device for long runs,
        whose memory and per-launch cost stay flat: those three allocations are reused by later
        launches of the same sizes, host writes go straight to memory, `launches` and `results`
        hold the last launch's only, and `save_capture` is refused.  Such a Device also runs a
        launch whose stream (register writes, dims, initiator) it has run before without
        building the PM4, walking it or build_config, when its register file given that
        stream's writes is what the stream left last time (`_run_again`; `fast_launch = False`:
        always the full path; `fast_launches` counts them): the same IB bytes, register file,
        config and dispatch as the full path (tests/driver/test_launch_again.py).
        `gb_addr_config`: the GB_ADDR_CONFIG this GPU has (the _X/_T image swizzle modes depend
        on it; a saved capture records it); default ``DEFAULT_GB_ADDR_CONFIG[target]``, None:
        unknown (those modes refuse)."""
        from ..isa.instruction import DECODE_TARGETS
        from ..isa.instruction import RUN_TARGETS as RUNS  # the targets whose code wavelift runs

        if target not in RUNS:
            why = "its ISA is not supported" if target in DECODE_TARGETS else "unknown target"
            raise UserError(f"target {target!r}: {why} (wavelift runs {', '.join(RUNS)})")
        if backend not in backends.names():
            raise UserError(f"unknown backend {backend!r} ({' or '.join(backends.names())})")
        if mode not in ("wave", "lane"):
            raise UserError(f"unknown mode {mode!r} (wave or lane)")
        from ..memory.capture import Capture

        self.target = target
        self.level = TARGETS[target]["level"]
        self.gfx11 = TARGETS[target]["gfx11"]
        self.backend = backend
        self.mode = mode
        self.budget = budget
        self.capture = Capture(target=target)
        gb = DEFAULT_GB_ADDR_CONFIG.get(target) if gb_addr_config == "default" else gb_addr_config
        if gb is not None and not (isinstance(gb, int) and 0 <= gb <= 0xFFFFFFFF):
            raise UserError(f"gb_addr_config {gb!r} is not a 32-bit register value")
        self.gb_addr_config: int | None = gb
        self.capture.gb_addr_config = gb
        self.record = bool(record)
        self.launches: list[LaunchRecord] = []
        self.launch_count = 0  # launches so far (with record=False, `launches` holds the last)
        self.dispatch_count = 0  # dispatches so far (as replay numbers them)
        # record=False: free launch-scoped allocations by (size, align, window, name), and those the
        # launch being prepared or run holds (given back when its stream has run: _run)
        self._pool: dict[tuple[int, int, bool, str], list[int]] = {}
        # a new number whenever a free list of _pool is taken from or given to (launch_alloc,
        # _give_back: the only writers): a kept launch's look at them stands while it is the same
        self._pool_moves = 0
        self._held: list[tuple[tuple[int, int, bool, str], int]] = []
        # allocations made since _initial was brought up to date, and the memory generation
        # then (record=True: _run snapshots only those, not every allocation)
        self._fresh: list[int] = []
        self._seen_generation = -1
        self._queue = 0
        self._scratch = (0, 0)  # (address, size) of the scratch backing in use
        self._code_objects: list[LoadedCodeObject] = []
        from ..stream.registers import RegisterFile

        self._regs = RegisterFile(target)
        # record=False: streams seen (submit_dispatch), by (registers, dims, initiator,
        # GB_ADDR_CONFIG), the last AGAIN_ENTRIES; `fast_launch` False: always the full path
        self._again: dict[tuple, _Again] = {}
        self.fast_launch = True
        self.fast_launches = 0  # launches that took _run_again
        self._execute = execute
        self.results: list = []  # every DispatchResult, in order (as replay numbers them)
        # each allocation's bytes as the first submission after its creation found them: a saved
        # capture holds these, so that replaying its streams redoes what this Device did
        self._initial: dict[int, np.ndarray] = {}

    # ---- memory ------------------------------------------------------------------------------
    @property
    def memory(self):
        return self.capture.memory

    def _alloc(self, size: int, name: str, align: int = 256, data=None, address: int | None = None) -> int:
        size = max(int(size), 1)
        if address is None:
            addr = self.capture.alloc(size, name=name, align=align, data=data)
        else:
            addr = self.capture.alloc(size, name=name, align=align, data=data, address=address)
        self._fresh.append(addr)
        return addr

    def launch_alloc(self, size: int, name: str, align: int = 256, data=None, window: bool = False) -> int:
        """A launch-scoped allocation (kernargs, dispatch packet, IB, a RADV launch's descriptor
        sets): a new one per launch when the Device records (a saved capture replays each),
        else one of the same size and alignment that an earlier launch gave back, its bytes
        `data` then zeros, exactly as a new one would hold them (given back by _run)."""
        size = max(int(size), 1)
        if self.record:
            if window:
                return self.alloc_window(size, name, align=align, data=data)
            return self._alloc(size, name, align=align, data=data)
        label = name.rsplit("#", 1)[0]  # (what and for which kernel; not the launch number)
        key = (size, align, window, label)
        free = self._pool.get(key)
        if free:
            self._pool_moves += 1
            addr = free.pop()
            self.put(addr, size, data)
        else:
            if window:
                addr = self.alloc_window(size, label + " (reused)", align=align, data=data)
            else:
                addr = self._alloc(size, label + " (reused)", align=align, data=data)
        self._held.append((key, addr))
        return addr

    def put(self, addr: int, size: int, data=None) -> None:
        """[addr, addr + size) of guest memory to hold ``data`` then zeros -- written only when
        it holds something else (record=False: a launch allocation reused with the bytes it
        already holds is not written, so a device copy of it stays as it was, same stamp:
        decision 0029).  The bytes are compared as the memory holds them now (peek: a device
        copy's newer bytes come down first), so the memory ends the same either way."""
        src = data if type(data) is bytes else b"" if data is None else memoryview(data).cast("B")
        n = len(src)
        if n > size:
            raise ValueError(f"{n} bytes of data for a {size}-byte allocation")
        mem = self.memory
        # (a small range compared as a bytes copy -- read pulls as peek does -- with its zero
        # tail as bytes, a memcmp; a large one in place, its tail by an array reduction: no
        # zero buffer the size of the allocation)
        if size <= PUT_COPY_BYTES:
            cur = mem.read(addr, size)
            if cur == src if n == size else cur[:n] == src and cur[n:] == bytes(size - n):
                return
        else:
            arr = mem.peek(addr, size)
            if arr[:n].data == src and not arr[n:].any():
                return
        v = mem.view(addr, size)
        if n:
            v[:n] = np.frombuffer(src, np.uint8)
        v[n:] = 0

    def _give_back(self) -> None:
        self._pool_moves += 1
        for key, addr in self._held:
            self._pool.setdefault(key, []).append(addr)
        self._held.clear()

    def alloc_window(self, size: int, name: str, align: int = 256, data=None) -> int:
        """An allocation in RADV's 32-bit window 0xffff8000_00000000 + [0, 4 GiB) (descriptor
        sets, push constants and code must lie there: their pointers are 32 bits)."""
        size = max(int(size), 1)
        cand = WINDOW_BASE + 0x100000
        for a in self.memory.allocations:
            if a.end + 4096 <= cand or a.base < WINDOW_BASE:
                continue
            if a.base >= cand + size + 4096:
                break
            cand = align_up(a.end + 4096, align)
        if cand + size > WINDOW_BASE + WINDOW_SIZE:
            raise UserError("the 32-bit descriptor window (4 GiB) is full")
        return self._alloc(size, name, align=align, data=data, address=cand)

    def scratch_window(self, size: int) -> int:
        """Scratch backing for RADV-style dispatches, in the upper half like RADV's BOs (ACO's
        prologue forces address bits 63:48 to ones); grown when a launch needs more."""
        cur, cur_size = getattr(self, "_scratch_hi", (0, 0))
        if cur and cur_size >= size:
            return cur
        size = align_up(size, 4096)
        addr = self.alloc_window(size, "scratch_radv", align=4096)
        self._scratch_hi = (addr, size)
        return addr

    def upload(self, array, name: str = "") -> Buffer:
        """Copy a NumPy array (or bytes) into a new guest allocation."""
        if isinstance(array, (bytes, bytearray, memoryview)):
            arr = np.frombuffer(bytes(array), dtype=np.uint8)
        else:
            arr = np.ascontiguousarray(array)
        n = arr.nbytes
        addr = self._alloc(
            n, name or f"buffer{len(self.memory)}", data=arr.view(np.uint8).reshape(-1) if n else None
        )
        return Buffer(addr, n, arr.dtype, arr.shape, name)

    def alloc(self, nbytes: int, name: str = "", fill: int | None = None) -> Buffer:
        """A new zeroed guest allocation of `nbytes` bytes (or filled with byte `fill`)."""
        nbytes = int(nbytes)
        if nbytes <= 0:
            raise UserError(f"alloc: size must be positive, not {nbytes}")
        addr = self._alloc(nbytes, name or f"buffer{len(self.memory)}")
        if fill is not None:
            self.memory.view(addr, nbytes)[:] = fill & 0xFF
        return Buffer(addr, nbytes, None, (), name)

    def write(self, buf, array) -> None:
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        addr = buf.address if isinstance(buf, Buffer) else int(buf)
        a = self.memory.find(addr, max(len(data), 1))
        if not self.record or a is None or a.base not in self._initial or not len(data):
            self.memory.write(addr, data)  # not yet seen by a submission: part of its start
            return
        # memory a submission has seen: the host's write goes through the stream (DMA_DATA from a
        # staging copy), so that a saved capture replays it in order
        staging = self._alloc(len(data), name="host_write", data=data)
        dw = []
        for off in range(0, len(data), 1 << 25):
            n = min(1 << 25, len(data) - off)
            dw += pm4.dma_data(staging + off, addr + off, n)
        self._run(dw)

    def download(self, buf, dtype=None, count: int | None = None) -> np.ndarray:
        """A copy of a Buffer's bytes as `dtype` (default: the uploaded dtype, else uint8)."""
        if isinstance(buf, Buffer):
            addr, n = buf.address, buf.nbytes
            dtype = dtype if dtype is not None else (buf.dtype if buf.dtype is not None else np.uint8)
        else:
            addr, n = int(buf), None
            dtype = dtype if dtype is not None else np.uint8
        dt = np.dtype(dtype)
        if count is not None:
            n = int(count) * dt.itemsize
        if n is None:
            raise UserError("download: give a Buffer, or an address and count")
        n -= n % dt.itemsize
        out = np.frombuffer(self.memory.read(addr, n), dtype=dt).copy()
        if isinstance(buf, Buffer) and buf.shape and count is None and dt == buf.dtype:
            out = out.reshape(buf.shape)
        return out

    def save_capture(self, path) -> None:
        """Everything submitted, replayable: each allocation as the first submission after its
        creation found it, and the streams in order (`replay` then redoes this Device's work)."""
        from ..memory.capture import Capture

        if not self.record:
            raise UserError("save_capture: this Device does not record its launches (Device(record=False))")

        cap = Capture(target=self.target)
        for a in self.memory.allocations:
            cap.add(a.base, self._initial.get(a.base, a.data), a.name)
        cap.streams = list(self.capture.streams)
        cap.notes, cap.expected = dict(self.capture.notes), self.capture.expected
        cap.gb_addr_config = self.gb_addr_config
        cap.save(path)

    # ---- code ------------------------------------------------------------------------------
    def load_code_object(self, source, name: str = "") -> LoadedCodeObject:
        """Load an AMDHSA code object (path or bytes): every PT_LOAD segment at one load base,
        dynamic relocations applied, as ROCr's loader does."""
        co = source if isinstance(source, CodeObject) else _load_co(source)
        if co.target != self.target:
            raise CodeObjectError(f"code object is for {co.target}, the device is {self.target}")
        label = name or (str(getattr(source, "name", "")) or co.path or "code_object")
        base = self._alloc(co.image_size, f"code:{label}", align=co.image_align)
        self.memory.write(base, co.load_image(base))
        lco = LoadedCodeObject(self, co, base)
        self._code_objects.append(lco)
        return lco

    def load_aco_shader(self, json_path, bin_path=None):
        """Load a shader made by tools/aco_compile (OUT.json + OUT.bin)."""
        return AcoShader.load(self, json_path, bin_path)

    # ---- runtime state -----------------------------------------------------------------------
    def queue_address(self) -> int:
        """A zeroed amd_queue_t for the queue pointer SGPR / hidden_queue_ptr."""
        if not self._queue:
            self._queue = self._alloc(AMD_QUEUE_SIZE, "hsa_queue", align=64)
        return self._queue

    def scratch_backing(self, size: int, name: str = "scratch", address: int | None = None) -> int:
        """The scratch backing memory, grown (reallocated) when a launch needs more."""
        if size <= 0:
            return 0
        cur, cur_size = self._scratch
        if cur and cur_size >= size and address is None:
            return cur
        size = align_up(size, 4096)
        addr = self._alloc(size, name, align=4096, address=address)
        self._scratch = (addr, size)
        return addr

    # ---- submission --------------------------------------------------------------------------
    def submit_dispatch(
        self,
        registers: dict[str, int],
        dims: tuple[int, int, int],
        initiator: int,
        preamble: list[int] | None = None,
    ) -> tuple[list[int], Any]:
        """SET_SH_REG for every register, then DISPATCH_DIRECT; submitted to the Capture and run
        through the stream walker.  Returns (dwords, DispatchResult)."""
        if self.record or preamble or not self.fast_launch:
            dw = (
                list(preamble or [])
                + pm4.set_sh_regs(registers)
                + pm4.dispatch_direct(*dims, initiator=initiator)
            )
            return dw, self._run(dw)
        # record=False: a launch's stream is a pure function of (registers, dims, initiator);
        # a repeat of one seen before skips building, walking and build_config (_run_again)
        key = (tuple(registers.items()), tuple(map(int, dims)), int(initiator), self.gb_addr_config)
        entry = self._again.get(key)
        if entry is not None:
            done, result = self._run_again(entry)
            if done:
                self.fast_launches += 1
                return list(entry.dwords), result
        dw = pm4.set_sh_regs(registers) + pm4.dispatch_direct(*dims, initiator=initiator)
        learned: list[_Again] = []
        result = self._run(dw, learn=learned)
        if learned:
            keep(self._again, key, learned[0], AGAIN_ENTRIES)
        return dw, result

    def record_launch(self, rec: LaunchRecord) -> None:
        """A launch done (Kernel.launch, AcoShader.launch): into `launches` (with record=False,
        in place of the one before)."""
        if self.record:
            self.launches.append(rec)
        else:
            self.launches[:] = [rec]
        self.launch_count += 1

    def _run(self, dwords: list[int], learn: list | None = None):
        """Submit one IB to the Capture and walk it with the same run_stream a replay uses
        (one register file for the whole device, as replay keeps one per capture).  With
        record=False the IB is a reused allocation, not a submission of the Capture, and the
        launch's allocations are given back once it has run.  `learn` (record=False): a list
        that gets the stream's _Again when it was one dispatch, last, that build_config took:
        the register writes it made, in order, the register file it left, and the config."""
        from ..run.replay import default_execute, run_stream

        if self._execute is None:
            self._execute = default_execute(self.backend, self.mode, budget=self.budget)
        new: list = []
        execute = self._execute
        regs = self._regs
        writes: dict[int, int] = {}
        seen: list = []
        w0 = regs.writes
        if learn is not None:
            inner = execute

            def execute(memory, config, index):  # (the state build_config saw, then run)
                seen.append((config, regs.writes))
                return inner(memory, config, index)

            plain = regs.write

            def write(address: int, value: int) -> None:
                writes[int(address)] = int(value) & 0xFFFFFFFF
                plain(address, value)

            regs.write = write  # type: ignore[method-assign]
        ib_bytes = None
        try:
            if self.record:
                ib = self.capture.submit(dwords, name=f"ib{len(self.capture.streams)}")
                self._fresh.append(ib)
                self._snapshot()
            else:
                ib_bytes = np.asarray(dwords, "<u4").view(np.uint8)
                ib = self.launch_alloc(4 * len(dwords), "ib", data=ib_bytes)
            stopped = run_stream(
                self.memory,
                self.target,
                ib,
                len(dwords),
                regs,
                execute,
                new,
                index_base=self.dispatch_count,
                gb_addr_config=self.gb_addr_config,
            )
            if (
                learn is not None
                and ib_bytes is not None
                and stopped is None
                and len(new) == 1
                and len(seen) == 1
                and seen[0][1] == regs.writes  # (the dispatch was the stream's last write)
            ):
                ib_bytes.flags.writeable = False
                learn.append(
                    _Again(list(dwords), ib_bytes, writes, regs.writes - w0, regs.values(), seen[0][0])
                )
        finally:
            if learn is not None:
                del regs.write  # (the instance's wrapper; the class's method again)
            self._give_back()
            self.dispatch_count += len(new)
            if self.record:
                self.results += new
            elif new:
                self.results[:] = new[-1:]
        return new[-1] if new else None

    def _keep_fast(self, k: Kernel, rec: LaunchRecord) -> _FastLaunch | None:
        """After Kernel ``k``'s launch ``rec`` ran through the full path (record=False): what a
        launch with the same key may skip, or None.  Kept only when that launch's stream is a
        kept one (`_again`) whose register file is the one it left, it has no scratch and no
        dispatch id (no address or number of its own per launch), and its kernargs and packet
        have device copies (stamps: unchanged, they hold the bytes `put` compared) and its three
        allocations are the last ones given back to their free lists (the next launch's
        `launch_alloc` takes them again)."""
        memo = k._memo
        if memo is None or k._dispatch_id or rec.scratch.total or not self.fast_launch or self._held:
            return None
        skey = (
            tuple(rec.registers.items()),
            tuple(map(int, rec.dims)),
            int(rec.initiator),
            self.gb_addr_config,
        )
        e = self._again.get(skey)
        if e is None or e.config is not rec.result.config or self._regs._values != e.after:
            return None
        mem = self.memory
        res = mem.resident
        if res is None:
            return None
        plan = memo[1]
        ka_size, ka_align = plan[6], plan[7]
        ib_key = (max(len(e.ib), 1), 256, False, "ib")
        ib = self._pool.get(ib_key)
        if not ib:
            return None
        pooled = (
            ((ka_size, ka_align, False, f"kernargs:{k.name}"), rec.kernarg_address),
            ((DISPATCH_PACKET_SIZE, 64, False, f"aql_packet:{k.name}"), rec.packet_address),
            (ib_key, ib[-1]),
        )
        if set(rec.extra) != {"kernarg_fill", "dynamic_lds"}:
            return None
        # (the kernargs and packet: by their device copy's stamp, or where they have none -- a
        # dispatch stores only into device copies -- by their bytes, as the IB; whole, as `put`
        # compares them: its data and zero tail)
        stamp, pieces = [], []
        for addr, size in (
            (rec.kernarg_address, max(ka_size, 1)),
            (rec.packet_address, DISPATCH_PACKET_SIZE),
        ):
            a = mem.find(addr)
            if a is None:
                return None
            if a.resident is not None:
                stamp.append(a)
            else:
                pieces.append(_piece(a, addr, mem.read(addr, size)))
        ib_alloc = mem.find(pooled[2][1])
        if ib_alloc is None:
            return None
        pieces.append(_piece(ib_alloc, pooled[2][1], e.ib.tobytes()))  # (the IB last: `ib_bytes`)
        if not self._fast_holds(pooled, None, pieces):
            return None
        stamped = res.stamps(stamp)
        if stamped is None:
            return None
        t = record_fields(rec.__dict__)  # (copies: the caller holds the record itself)
        t["pm4"] = t["result"] = None
        return _FastLaunch(
            memo[0],
            t,
            e,
            pooled,
            stamped,
            tuple(pieces),
            mem.generation,
            self._regs.writes,
            self.gb_addr_config,
        )

    def _fast_holds(self, pooled, stamped, pieces, fp=None) -> bool:
        """Whether a kept launch's allocations are as it keeps them: each (free-list key,
        address) of ``pooled`` the last on its free list (the next `launch_alloc` of that key
        takes it), the stamps of ``stamped`` (None: not asked; else a token of the memory's
        Resident: `Resident.stamps`) held, and each (address, bytes, (allocation, view)) of
        ``pieces`` holding its bytes: compared in the view, when the allocation still has no
        device copy and ``fp`` says the table is the one they were found in (nothing to pull:
        GuestMemory.read's; an allocation's array is never replaced), else read (a device
        copy's newer bytes come down first).  (`_keep_fast` and `_launch_fast`.)  ``fp``: the
        kept launch, whose ``pool_at`` says the free lists were found so while `_pool_moves` is
        the same (nothing taken from or given to them since: not looked at again)."""
        if fp is None or fp.pool_at != self._pool_moves:
            pool = self._pool
            for key, addr in pooled:
                free = pool.get(key)
                if not free or free[-1] != addr:
                    return False
            if fp is not None:
                fp.pool_at = self._pool_moves
        if stamped is not None:
            res = self.capture.memory.resident
            if not res.holds(stamped):
                return False
            # (a queued in-place launch that may store into the kernargs' or packet's device
            # copy: their bytes are known only once it is read -- the full path's put reads them)
            if res.pending and any(res.may_store(e) for e, _ in stamped[1]):
                return False
        for addr, data, at in pieces:
            if fp is not None and at[0].resident is None:
                if at[1].tobytes() != data:
                    return False
            elif self.memory.read(addr, len(data)) != data:
                return False
        return True

    def _launch_fast(self, k: Kernel, fp: _FastLaunch):
        """Kernel ``k``'s launch with the key of its kept one ``fp`` (`_keep_fast`), or None
        (nothing done: the full path).  What the full path would do when nothing it read
        changed: `prepare` hands out the kept plan, packet and registers; `launch_alloc` takes
        the same three allocations (the last of their free lists) and `put` writes nothing
        (the kernargs' and packet's device copies have their stamps, the IB its bytes);
        `submit_dispatch` finds the kept stream and `replay_writes` takes the register file as it
        is (no register written since: its write count); the dispatch runs as `_run_again` runs
        it; the allocations go back to the same places.  Checked: record off and the repeated-
        launch path on, GB_ADDR_CONFIG (in the stream's key), the memory's allocation table,
        the register file's write count, nothing held, the free lists, the two stamps, the IB's
        bytes."""
        mem = self.capture.memory  # (the memory property's, without its call)
        regs = self._regs
        if (
            not self.fast_launch
            or self.record
            or self._held
            or self.gb_addr_config != fp.gb_addr_config
            or mem.generation != fp.generation
            or regs.writes != fp.writes
            or self._execute is None
        ):
            return None
        res = mem.resident
        # (the table's generation is the kept one, checked above: fp.pieces' views are their places)
        if res is None or not self._fast_holds(fp.pooled, fp.stamped, fp.pieces, fp):
            return None
        e, t = fp.again, fp.rec
        regs.writes += e.count  # (replay_writes: the file holds what the stream leaves)
        index = self.dispatch_count
        k._fast = None  # (kept again below once the dispatch ran as expected)
        try:
            r = self._execute(mem, e.config, index)
        except Refused as ex:
            r = _dispatch_result()(index, e.config, ex.refusal)
        self.dispatch_count += 1  # (as `_run_again`: counted once the dispatch has a result)
        self.results[:] = [r]
        self.fast_launches += 1
        rec = LaunchRecord.__new__(LaunchRecord)
        # (prepare's record: the kept fields, the mutable ones copied at their first read)
        rec.__dict__ = d = fp.fixed.copy()
        d["index"] = self.launch_count
        d["result"] = r
        d["_kept"] = (t, e.dwords)
        self.record_launch(rec)
        k.last_launch = rec
        # (kept while the dispatch changed neither the kernargs nor the packet nor the table)
        if mem.generation == fp.generation and res.holds(fp.stamped):
            fp.writes = regs.writes
            k._fast = fp
        return r

    def _run_again(self, e: _Again) -> tuple[bool, Any]:
        """A stream seen before (`submit_dispatch`, record=False) run again without building,
        walking or build_config: when the register file, given the writes that stream made,
        holds exactly what that stream left, the walk would make the same writes and
        build_config would give the same config (a pure function of the register file, the
        target, dims, initiator and GB_ADDR_CONFIG, all in the key or checked).  The IB is still
        written (the memory holds what the full path leaves) and the dispatch runs as
        run_stream runs it.  (False, None) when the register file differs: nothing changed."""
        DispatchResult = _dispatch_result()
        if self._execute is None or not self._regs.replay_writes(e.writes, e.count, e.after):
            return False, None
        new: list = []
        index = self.dispatch_count
        try:
            self.launch_alloc(len(e.ib), "ib", data=e.ib)
            try:
                r = self._execute(self.memory, e.config, index)
            except Refused as ex:
                r = DispatchResult(index, e.config, ex.refusal)
            new.append(r)
        finally:
            self._give_back()
            self.dispatch_count += len(new)
            if new:
                self.results[:] = new
        return True, new[0]

    def _snapshot(self) -> None:
        """_initial: each allocation's bytes as the first submission after its creation finds
        them -- only those made since the last submission when nothing else changed the table
        (the memory's generation tells), else every allocation checked."""
        mem = self.memory
        if mem.generation == self._seen_generation + len(self._fresh):
            for base in self._fresh:
                a = mem.find(base)
                if a is not None and a.base == base and base not in self._initial:
                    self._initial[base] = a.data.copy()
        else:
            for a in mem.allocations:
                if a.base not in self._initial:
                    self._initial[a.base] = a.data.copy()
        self._fresh.clear()
        self._seen_generation = mem.generation

    def __repr__(self) -> str:
        return f"Device({self.target!r}, backend={self.backend!r}, mode={self.mode!r})"


class LoadedCodeObject:
    """A code object placed in a Device's memory."""

    def __init__(self, device: Device, co: CodeObject, base: int):
        self.device = device
        self.code_object = co
        self.base = base

    @property
    def kernels(self) -> list[str]:
        return [k.name for k in self.code_object.kernels]

    def kernel(self, name: str) -> Kernel:
        return Kernel(self, self.code_object.kernel(name))

    def address_of(self, symbol: str) -> int:
        s = self.code_object.symbol(symbol)
        if s is None:
            raise CodeObjectError(f"no symbol {symbol!r} in the code object")
        return self.base + s.value


class Kernel:
    """One kernel of a loaded code object; `launch` dispatches it."""

    def __init__(self, lco: LoadedCodeObject, info: KernelInfo):
        self.loaded = lco
        self.device = lco.device
        self.info = info
        self.last_launch: LaunchRecord | None = None
        # record=False: [launch key, plan, (kernarg address, packet), (addresses, made)] of the
        # last launch (prepare); whether the kernel takes a dispatch id SGPR (found once)
        self._memo: list | None = None
        self._dispatch_id: bool | None = None
        self._fast: _FastLaunch | None = None  # record=False: the last launch kept (launch)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def kd_address(self) -> int:
        return self.loaded.base + self.info.kd_address

    @property
    def code_address(self) -> int:
        return self.loaded.base + self.info.code_address

    def launch(
        self,
        groups=None,
        block=None,
        args=(),
        *,
        global_size=None,
        global_offset=(0, 0, 0),
        dims: int | None = None,
        dynamic_stack: int | None = None,
    ):
        """Dispatch the kernel: `groups` workgroups of `block` work-items, or a `global_size`
        grid (the last workgroup in a dimension may be partial).  Returns a DispatchResult.
        A Device(record=False) runs a launch that repeats this kernel's last one (the same
        launch key) from what it kept of it (`_FastLaunch`, `Device._launch_fast`) while
        nothing that launch's preparation and stream read has changed."""
        fp = self._fast
        args = args if type(args) is list or type(args) is tuple else list(args)
        key: Any = _NO_KEY  # (not computed yet: prepare computes it)
        if fp is not None:
            dev = self.device
            seen = fp.seen
            grid = _grid_of(groups, block, global_size, global_offset, dims, dynamic_stack, dev._queue)
            if seen is not None and _same_launch(seen, grid, args):
                # (the objects of a launch that had the kept key, each of fixed value, or ones
                # that make the same key: that key, not worked out again)
                key = fp.key
                got = dev._launch_fast(self, fp)
                if got is not None:
                    return got
            else:
                key = _launch_key(grid, args)
                if key is not None and key == fp.key:
                    got = dev._launch_fast(self, fp)
                    if got is not None:
                        fp.seen = _seen(grid, args)
                        return got
            self._fast = None
        rec = self._prepare(groups, block, args, global_size, global_offset, dims, dynamic_stack, key)
        dw, result = self.device.submit_dispatch(rec.registers, rec.dims, rec.initiator)
        rec.pm4 = dw
        rec.result = result
        self.device.record_launch(rec)
        self.last_launch = rec
        if not self.device.record and self._memo is not None and result is not None:
            self._fast = self.device._keep_fast(self, rec)
        return result

    def _block(self, block):
        if block is not None:
            return block
        req = self.info.metadata.get(".reqd_workgroup_size")
        if req:
            return tuple(int(x) for x in req)
        raise LaunchError(f"kernel {self.name}: give block= (the work-group size)")

    def prepare(
        self,
        groups=None,
        block=None,
        args=(),
        *,
        global_size=None,
        global_offset=(0, 0, 0),
        dims=None,
        dynamic_stack=None,
    ) -> LaunchRecord:
        """Build kernargs, dispatch packet, scratch and registers in guest memory (no submit).
        A Device(record=False) keeps the last launch's plan (kernarg bytes, grid, scratch
        sizes: a pure function of the launch's arguments, its queue address and this kernel)
        and the packet, user SGPRs and registers made from it (a pure function of the plan and
        the addresses of the scratch backing, kernargs and packet, and the launch number where
        the kernel takes a dispatch id): a launch that repeats them builds nothing again, and
        the reused allocations are written only where their bytes differ (Device.put)."""
        args = args if type(args) is list or type(args) is tuple else list(args)
        return self._prepare(groups, block, args, global_size, global_offset, dims, dynamic_stack, _NO_KEY)

    def _prepare(
        self, groups, block, args, global_size, global_offset, dims, dynamic_stack, key
    ) -> LaunchRecord:
        """`prepare` with ``args`` a list or tuple and ``key`` the launch key (`_launch_key`)
        when `launch` computed it already (its kept launch did not hold), else _NO_KEY."""
        dev, kd = self.device, self.info.kd
        # (the queue's address is part of the kernargs; none yet: the full path makes it)
        if dev.record or not dev._queue:
            key = None
        elif key is _NO_KEY:
            key = _launch_key(
                _grid_of(groups, block, global_size, global_offset, dims, dynamic_stack, dev._queue), args
            )
        memo = self._memo
        if key is not None and memo is not None and memo[0] == key:
            plan = memo[1]
        else:
            plan = self._plan(groups, block, args, global_size, global_offset, dims, dynamic_stack)
            memo = self._memo = None if key is None else [key, plan, None, None]
        grid, kernargs, filled, dynamic_lds, group_size, scratch, ka_size, ka_align, queue = plan
        if dev.gfx11:
            # only COMPUTE_DISPATCH_SCRATCH_BASE carries it (architected flat scratch): placed
            # in the upper half, where no small values in a packet or kernarg (the workgroup
            # size the code reads from the dispatch packet) look like a pointer into it
            scratch_addr = dev.scratch_window(scratch.total) if scratch.total else 0
        else:
            scratch_addr = dev.scratch_backing(scratch.total) if scratch.total else 0
        kernarg_addr = dev.launch_alloc(
            ka_size, f"kernargs:{self.name}#{dev.launch_count}", align=ka_align, data=kernargs
        )
        if memo is not None and memo[2] is not None and memo[2][0] == kernarg_addr:
            pkt = memo[2][1]
        else:
            pkt = dispatch_packet(grid, scratch.per_lane, group_size, self.kd_address, kernarg_addr)
            if memo is not None:
                memo[2] = (kernarg_addr, pkt)
        pkt_addr = dev.launch_alloc(
            DISPATCH_PACKET_SIZE, f"aql_packet:{self.name}#{dev.launch_count}", align=64, data=pkt
        )
        if self._dispatch_id is None:
            self._dispatch_id = any(w == "dispatch_id" for w, _, _ in kd.user_sgpr_layout())
        key2 = (scratch_addr, kernarg_addr, pkt_addr, dev.launch_count if self._dispatch_id else 0)
        if memo is not None and memo[3] is not None and memo[3][0] == key2:
            user, regs, initiator = memo[3][1]
        else:
            made = self._registers(plan, queue, scratch_addr, kernarg_addr, pkt_addr)
            user, regs, initiator = made
            if memo is not None:
                memo[3] = (key2, made)
        return LaunchRecord(
            index=dev.launch_count,
            kernel=self.name,
            kind="hsa",
            grid=grid,
            registers=dict(regs),  # (copies: the kept ones are not the caller's to change)
            initiator=initiator,
            dims=grid.groups,
            user_sgprs=list(user),
            pm4=[],
            program_address=self.code_address,
            kernarg_address=kernarg_addr,
            kernargs=kernargs,
            packet_address=pkt_addr,
            packet=pkt,
            queue_address=queue,
            scratch_address=scratch_addr,
            scratch=scratch,
            lds_bytes=group_size,
            extra={"kernarg_fill": list(filled), "dynamic_lds": dynamic_lds},
        )

    def _plan(self, groups, block, args, global_size, global_offset, dims, dynamic_stack) -> tuple:
        """(grid, kernarg bytes, their fill record, dynamic LDS, group segment bytes, scratch
        plan, kernarg allocation size and alignment, queue address): what a launch's arguments
        make, before any address of this launch is known."""
        dev, info, kd = self.device, self.info, self.info.kd
        target, gfx11 = dev.target, dev.gfx11
        grid = make_grid(groups, self._block(block), global_size, global_offset, dims)
        req = info.metadata.get(".reqd_workgroup_size")
        if req and tuple(int(x) for x in req) != grid.block:
            raise LaunchError(f"kernel {self.name} requires work-group size {tuple(req)}, not {grid.block}")
        maxwg = info.metadata.get(".max_flat_workgroup_size")
        nthreads = grid.block[0] * grid.block[1] * grid.block[2]
        if maxwg and nthreads > int(maxwg):
            raise LaunchError(
                f"kernel {self.name}: work-group of {nthreads} work-items exceeds "
                f".max_flat_workgroup_size {maxwg}"
            )
        wave = kd.wave_size
        if gfx11 and (kd.enable_sgpr_private_segment_buffer or kd.enable_sgpr_flat_scratch_init):
            raise LaunchError(
                f"kernel {self.name}: private segment buffer / flat scratch init "
                f"SGPRs are not allowed on {target} (architected flat scratch)"
            )
        if kd.user_sgpr_count > 16:
            raise LaunchError(f"kernel {self.name}: {kd.user_sgpr_count} user SGPRs (max 16)")

        queue = dev.queue_address()
        kplan = build_kernargs(info, args, grid, queue_address=queue)
        group_size = info.group_segment_fixed_size + kplan.dynamic_lds
        if group_size > LDS_MAX:
            raise LaunchError(f"kernel {self.name}: {group_size} bytes of LDS (max {LDS_MAX})")

        # Private segment: fixed size, plus the stack for dynamic-stack kernels.
        private = info.private_segment_fixed_size
        if info.uses_dynamic_stack:
            private = max(private, dynamic_stack if dynamic_stack is not None else DEFAULT_STACK_SIZE)
        if kd.scratch_en and private == 0:
            private = 16  # SCRATCH_EN with no size: give one granule (see 0004)
        scratch = plan_scratch(target, private, wave, grid.total_waves(wave))
        kernargs = bytes(kplan.data)
        ka_size = max(align_up(len(kernargs), 16), 16)
        ka_align = max(256, info.kernarg_segment_align)
        return (
            grid,
            kernargs,
            tuple(kplan.filled),
            kplan.dynamic_lds,
            group_size,
            scratch,
            ka_size,
            ka_align,
            queue,
        )

    def _registers(self, plan, queue, scratch_addr, kernarg_addr, pkt_addr) -> tuple:
        """(user SGPRs, SH registers by name, dispatch initiator) of a launch with ``plan``
        (_plan) and these addresses."""
        dev, kd = self.device, self.info.kd
        target, gfx11 = dev.target, dev.gfx11
        grid, kernargs, _, _, group_size, scratch, _, _, _ = plan
        wave = kd.wave_size
        user = hsa_user_sgprs(
            kd,
            target=target,
            wave_size=wave,
            scratch_base=scratch_addr,
            scratch_total=scratch.total,
            dispatch_ptr=pkt_addr,
            queue_ptr=queue,
            kernarg_ptr=kernarg_addr,
            dispatch_id=dev.launch_count,
            private_segment_size=scratch.per_lane,
            kernargs=kernargs,
        )
        system = sum(kd.tgid_enabled) + kd.tg_size_en
        if gfx11 and len(user) + system < 16 and kd.user_sgpr_count + system == 16:
            # GFX11's user-SGPR-init bug: LLVM pads the user SGPRs with dead inputs up to 16
            # user + system SGPRs (hasUserSGPRInit16Bug); the hardware loads them from
            # COMPUTE_USER_DATA, which we write as 0 (decision 0023)
            user = list(user) + [0] * (kd.user_sgpr_count - len(user))
        if len(user) != kd.user_sgpr_count:
            raise CodeObjectError(
                f"kernel {self.name}: kernel_code_properties enable {len(user)} user SGPRs but "
                f"COMPUTE_PGM_RSRC2.USER_SGPR says {kd.user_sgpr_count}"
            )

        pc = self.code_address
        rsrc2 = (kd.compute_pgm_rsrc2 & ~RSRC2_LDS_MASK) | (ceil_div(group_size, LDS_GRANULE) << 15)
        regs = {
            "COMPUTE_PGM_LO": (pc >> 8) & 0xFFFFFFFF,
            "COMPUTE_PGM_HI": (pc >> 40) & 0xFF,
            "COMPUTE_PGM_RSRC1": kd.compute_pgm_rsrc1,
            "COMPUTE_PGM_RSRC2": rsrc2,
            "COMPUTE_PGM_RSRC3": kd.compute_pgm_rsrc3,
            "COMPUTE_TMPRING_SIZE": scratch.tmpring_size(),
            "COMPUTE_RESOURCE_LIMITS": 0,
        }
        if gfx11 and scratch.total:
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] = (scratch_addr >> 8) & 0xFFFFFFFF
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_HI"] = (scratch_addr >> 40) & 0xFF
        for i, v in enumerate(user):
            regs[f"COMPUTE_USER_DATA_{i}"] = v & 0xFFFFFFFF
        rem = grid.remainder
        for i, axis in enumerate("XYZ"):
            regs[f"COMPUTE_NUM_THREAD_{axis}"] = grid.block[i] | (rem[i] << 16)
        initiator = pm4.initiator(
            wave32=(wave == 32), force_start_at_000=True, partial_tg=any(rem), order_mode=False
        )
        return tuple(user), regs, initiator

    def __repr__(self) -> str:
        return f"Kernel({self.name!r} at 0x{self.code_address:x})"


__all__ = ["Device", "Buffer", "Kernel", "LoadedCodeObject", "LaunchRecord", "Local", "LaunchError"]
