"""tinygrad's mock-GPU emulator hook: ``run_asm`` with the signature of tinygrad's
``test/mockgpu/amd/emu.py run_asm``, carried out by wavelift (docs/tinygrad.md, decision 0024).

tinygrad's mock AMD GPU walks the PM4 its AMD runtime writes and, at each DISPATCH_DIRECT, calls
``run_asm(lib, lib_sz, gx, gy, gz, lx, ly, lz, args_ptr, rsrc2, scratch_size, arch, user_data)``:

- ``lib`` is the host address of the kernel's first instruction (COMPUTE_PGM_LO/HI << 8) and
  ``lib_sz`` the bytes from there to the end of the mapping holding it; ``args_ptr`` the kernarg
  address (COMPUTE_USER_DATA_0/1).  The mock GPU's addresses are host addresses: guest address =
  host address, and this hook reads code, kernargs and buffers from host memory.
- ``gx, gy, gz`` workgroups, ``lx, ly, lz`` threads per workgroup (COMPUTE_NUM_THREAD_*).
- ``rsrc2`` is COMPUTE_PGM_RSRC2 (user SGPR count, workgroup ids enabled, LDS size, scratch);
  ``user_data`` the COMPUTE_USER_DATA_* values loaded into s0..; ``scratch_size`` the bytes of
  scratch per lane (COMPUTE_TMPRING_SIZE.WAVESIZE); ``arch`` "rdna3" (gfx1100), "rdna4" or
  "cdna", or a target name ("gfx1030", "gfx1100").

What this hook adds (keywords a patched mock GPU passes, docs/tinygrad.md):
- ``ranges``: the (host address, size) mappings the kernel may touch (the mock GPU's
  ``mapped_ranges``).  They become guest allocations at the same addresses, over the host bytes
  themselves (no copy); an access outside every one the tracer reaches is an escape: the call
  returns REFUSED and nothing is written.  Without ``ranges`` (tinygrad's instruction tests
  call the emulator's run_asm directly, with a ctypes output buffer): the code's
  ``[lib, lib + lib_sz)`` and, for every pointer the kernel is handed (the kernarg pointer, the
  64-bit words of the kernargs -- the descriptor's kernarg size, else KERNARG_SCAN bytes --, user
  SGPR pairs), the host bytes from it up to NEAR_ABOVE, the end of its read-write mapping (/proc/self/maps) or the next pointer.
- ``rsrc1``: COMPUTE_PGM_RSRC1 (the float mode the runtime sets, from the kernel descriptor).
  Without it, the kernel descriptor whose entry is ``lib`` is looked for near ``lib`` in its
  mapping (tinygrad loads the whole code object there; the descriptor's RSRC2 must equal
  ``rsrc2`` but for the LDS field, which the runtime adds); failing that, the defaults LLVM's
  assembler gives a ``.amdhsa_kernel`` (DEFAULT_RSRC1: f32 denormals flushed, f16/f64 kept,
  DX10_CLAMP and IEEE on) and wave32.

Code must start 256-byte aligned (COMPUTE_PGM_LO holds address bits 47:8; tinygrad's runtime
aligns it); tinygrad's instruction tests hand over a ctypes array that is not, and their code is
then run from a copy at UNALIGNED_CODE (its PC-relative addresses are the copy's).

Returns OK (0) when the dispatch landed; REFUSED (1) when wavelift refused it (an escape, an
instruction it does not run, a budget...: ``last_result()`` says which); BAD_CALL (2) when the
call's own arguments cannot describe a dispatch (an arch wavelift does not run, a grid of zero
threads, code outside the ranges, registers dispatch setup refuses such as too much scratch).  Nothing is written unless OK.

Modules: ``execute_dispatch`` caches them under a key whose code part is the sha256 of the code
bytes read, with the code address beside it (PC-relative code), never the address alone: the
caller reuses addresses for other kernels (decision 0024).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import gc
import os
import struct
import weakref
from bisect import bisect_right
from collections.abc import Iterable, Sequence

import numpy as np

# what the calls use, imported with this module (as tinygrad's emulator module imports its
# own): before, the first call imported them (and, where no .pyc is written, compiled their
# sources), ~0.1-0.35 s inside the first run_asm
from ..backends.numpy import runtime as _runtime  # noqa: F401 (the NumPy backend's run)
from ..backends.numpy.codegen import PIECES
from ..dispatch.setup import MAX_SCRATCH_WAVE_BYTES, MAX_USER_SGPRS, build_config, scratch_unit
from ..errors import Refusal, Refused
from ..frontend import program as _program  # noqa: F401 (execute_dispatch's translation)
from ..frontend.instr_cache import LAZY
from ..isa.instruction import RUN_TARGETS
from ..kept import keep
from ..memory.guest import GuestMemory
from ..run.execute import execute_dispatch
from ..stream import pm4
from ..stream.registers import RegisterFile, gfx_level
from ..trace import tracer as _tracer  # noqa: F401 (execute_dispatch's windows)

OK, REFUSED, BAD_CALL = 0, 1, 2

# COMPUTE_PGM_RSRC1 of a kernel without a descriptor: what llvm-mc-19 writes for an
# `.amdhsa_kernel` that sets no float mode (gfx1030 and gfx1100 alike): FLOAT_MODE 0xC0 (f32
# denormals flushed, f16/f64 denormals kept, round to nearest), DX10_CLAMP and IEEE_MODE set; the
# VGPR/SGPR granule counts at their largest (the descriptor-less caller may use any register).
DEFAULT_RSRC1 = 0x00AC0000 | 0x3F | (0xF << 6)
RSRC2_LDS_MASK = 0x1FF << 15
KD_SIZE = 64
KD_SEARCH = 1 << 20  # bytes either side of `lib` searched for its kernel descriptor
# without ranges: the kernarg bytes scanned for pointers, and the host bytes around each pointer
# (within its mapping) that become memory
KERNARG_SCAN = 64
NEAR_ABOVE = 256 << 10
# where code that is not 256-byte aligned is copied to (the upper half: no host address)
UNALIGNED_CODE = 0xFFFFF00000000000
DISPATCH_PACKET = 64  # hsa_kernel_dispatch_packet_t, placed after the kernargs by tinygrad
ARCH_TARGETS = {"rdna3": "gfx1100", "rdna4": "gfx1201", "cdna": "gfx950"}


class _Bounded(dict):
    """One of this module's caches: a dict of at most ``limit`` entries (its bound, named where
    the cache is made), filled through _keep only."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


def _keep(store: _Bounded, key, value):
    """``value`` kept in ``store`` as its newest entry, past the store's limit the entry put in
    first dropped (kept.keep: a hit refreshes nothing); -> value."""
    return keep(store, key, value, store.limit)


# build_config's DispatchConfig (or its Refusal) by the values _registers writes (a frozen config,
# its system SGPR dict never written after build_config); CONFIG_LIMIT: configs kept (each cache)
CONFIG_LIMIT = 4096
_CONFIGS = _Bounded(CONFIG_LIMIT)
# the config of the same values with the user SGPRs zero, by their count (_config)
_CONFIG_SHAPES = _Bounded(CONFIG_LIMIT)
_last: list = [None]  # the last call's DispatchResult (or a Refusal for BAD_CALL)


def last_result():
    """The last call's ``DispatchResult`` (its ``refusal`` says why a call returned REFUSED),
    or a ``Refusal`` when it returned BAD_CALL; None before any call."""
    return _last[0]


def _bad(code: str, message: str) -> int:
    _last[0] = Refusal(code, message)
    return BAD_CALL


def target_level(target: str) -> int:
    return gfx_level(target)


def target_for(arch: str) -> str:
    """The wavelift target of a tinygrad ``arch`` ("rdna3" -> "gfx1100", or a target name)."""
    return ARCH_TARGETS.get(arch, arch)


class _HostBytes:
    """NumPy's array interface over host bytes (_host_view): no ctypes array type per size
    (``c_uint8 * size`` makes and caches a new type for every new size, ~20 us each; the
    hook's spans have a new size almost every call)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, address: int, size: int):
        self.__array_interface__ = {
            "data": (address, False),
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


def _host_view(address: int, size: int) -> np.ndarray:
    """The host bytes [address, address + size) as a writable uint8 array (no copy)."""
    return np.asarray(_HostBytes(address, size))


def _merged(ranges: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """(start, end) of the ranges, overlapping ones merged, in address order (touching ones stay
    apart: the tracer keeps one window per allocation, and a scratch base's is never one)."""
    spans = sorted([(a, a + n) for a, n in ((int(a), int(n)) for a, n in ranges) if n > 0])
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _find_descriptor(view: np.ndarray, base: int, lib: int, rsrc2: int) -> bytes | None:
    """The 64-byte kernel descriptor in ``view`` (host bytes at ``base``) whose entry is ``lib``
    (kernel_code_entry_byte_offset at +16, signed 64-bit: LLVM places .text below .rodata) and
    whose RSRC2 (+52) is ``rsrc2`` but for the LDS field; the nearest to ``lib``, or None."""
    lo = max(base, lib - KD_SEARCH)
    first = -(-lo // KD_SIZE) * KD_SIZE  # descriptors are 64-byte aligned
    last = min(base + len(view), lib + KD_SEARCH) - KD_SIZE
    if last < first:
        return None
    n = (last - first) // KD_SIZE + 1
    off = first - base
    block = view[off : off + n * KD_SIZE].reshape(n, KD_SIZE)
    entry = block[:, 16:24].copy().view("<i8")[:, 0]
    addrs = first + KD_SIZE * np.arange(n, dtype=np.int64)
    hits = np.flatnonzero(addrs + entry == lib)
    for i in sorted(hits.tolist(), key=lambda i: abs(int(addrs[i]) - lib)):
        raw = bytes(block[i])
        if (struct.unpack_from("<I", raw, 52)[0] ^ rsrc2) & ~RSRC2_LDS_MASK & 0xFFFFFFFF == 0:
            return raw
    return None


# the last /proc/self/maps text read and what it parsed to (and its read-write mappings: their
# starts and (start, end)s, for _near_pointers): the file is read on every call (the caller's
# mappings change between calls), only an unchanged text is not parsed again
_MAPS: list = [None, [], [], []]


def _host_mappings() -> list[tuple[int, int, str]]:
    """(start, end, perms) of this process's mappings (/proc/self/maps), read now."""
    try:
        with open("/proc/self/maps", "rb") as f:
            text = f.read()
    except OSError:
        _MAPS[:] = [None, [], [], []]
        return []
    if text == _MAPS[0]:
        return _MAPS[1]
    out = []
    for line in text.decode("ascii", "replace").splitlines():
        parts = line.split(None, 2)
        if len(parts) < 2:
            continue
        lo, _, hi = parts[0].partition("-")
        out.append((int(lo, 16), int(hi, 16), parts[1]))
    rw = [(lo, hi) for lo, hi, perms in out if perms.startswith("rw")]
    _MAPS[:] = [text, out, [lo for lo, _ in rw], rw]
    return out


def _rw_mapping(p: int):
    """The read-write mapping (start, end) holding ``p`` among those _host_mappings read last
    (ascending and disjoint, as the kernel lists them), or None."""
    i = bisect_right(_MAPS[2], p) - 1
    if i >= 0:
        lo, hi = _MAPS[3][i]
        if p < hi:
            return lo, hi
    return None


class _ProcmapQuery(ctypes.Structure):
    """Linux's struct procmap_query (include/uapi/linux/fs.h, Linux 6.11 on)."""

    _fields_ = [
        ("size", ctypes.c_uint64),
        ("query_flags", ctypes.c_uint64),
        ("query_addr", ctypes.c_uint64),
        ("vma_start", ctypes.c_uint64),
        ("vma_end", ctypes.c_uint64),
        ("vma_flags", ctypes.c_uint64),
        ("vma_page_size", ctypes.c_uint64),
        ("vma_offset", ctypes.c_uint64),
        ("inode", ctypes.c_uint64),
        ("dev_major", ctypes.c_uint32),
        ("dev_minor", ctypes.c_uint32),
        ("vma_name_size", ctypes.c_uint32),
        ("build_id_size", ctypes.c_uint32),
        ("vma_name_addr", ctypes.c_uint64),
        ("build_id_addr", ctypes.c_uint64),
    ]


# PROCMAP_QUERY = _IOWR('f', 17, struct procmap_query): the mapping (VMA) covering an address,
# asked of /proc/self/maps without the kernel writing its text; PROCMAP_RW: its flags
# PROCMAP_QUERY_VMA_READABLE | _WRITABLE (the text's "rw" perms)
PROCMAP_QUERY = (3 << 30) | (ctypes.sizeof(_ProcmapQuery) << 16) | (ord("f") << 8) | 17
PROCMAP_RW = 0x1 | 0x2
# (pid, descriptor of /proc/self/maps) once opened; [None]: the kernel has no PROCMAP_QUERY
_PROCMAP: list = [None, None]
_QUERY = _ProcmapQuery()


def _query_mapping(p: int):
    """The mapping holding ``p`` as (start, end, read-write?), asked with PROCMAP_QUERY, or
    None where none holds it; False: the query is not available (the caller reads the text)."""
    if _PROCMAP[0] is False:
        return False
    pid = os.getpid()
    if _PROCMAP[0] != pid:  # (a forked child's descriptor would ask its parent's mappings)
        try:
            fd = os.open("/proc/self/maps", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            _PROCMAP[0] = False
            return False
        _PROCMAP[:] = [pid, fd]
    # (one query structure, every field the kernel reads set again: size, flags, address, and
    # no name or build-id buffer; the hook is not re-entrant anyway: PIECES.on, LAZY)
    q = _QUERY
    q.size, q.query_flags, q.query_addr = ctypes.sizeof(_ProcmapQuery), 0, p
    q.vma_name_size = q.build_id_size = q.vma_name_addr = q.build_id_addr = 0
    try:
        fcntl.ioctl(_PROCMAP[1], PROCMAP_QUERY, q, True)
    except OSError as e:
        if e.errno == errno.ENOENT:  # (no mapping holds it)
            return None
        _PROCMAP[0] = False  # (ENOTTY, EINVAL...: a kernel without the query)
        return False
    return q.vma_start, q.vma_end, q.vma_flags & PROCMAP_RW == PROCMAP_RW


def _rw_mappings():
    """A function: address -> (start, end) of the read-write mapping holding it, or None, as
    /proc/self/maps says now (the text's line for it: a mapping is one VMA either way).  Asked
    of the kernel per address (PROCMAP_QUERY) where it can, else from the text read now."""
    if _query_mapping(0) is not False:  # (address 0: never mapped; the query answers)
        memo: dict = {}

        def mapping(p: int):
            m = memo.get(p, False)
            if m is False:
                q = _query_mapping(p) if 0 <= p < 1 << 64 else None
                if q is False:  # (cannot happen after the probe; the text then)
                    raise OSError("PROCMAP_QUERY stopped answering")
                m = memo[p] = None if q is None or not q[2] else q[:2]
            return m

        return mapping
    _host_mappings()  # (read now; _rw_mapping looks in it)
    return _rw_mapping


def _near_pointers(
    lib: int, lib_sz: int, args_ptr: int, user: Sequence[int], scan: int = 0
) -> list[tuple[int, int]]:
    """Without ``ranges``: host memory at every pointer the kernel is handed (the kernarg
    pointer, each 64-bit word of the first ``scan`` kernarg bytes -- the descriptor's kernarg
    size, else KERNARG_SCAN --, each user SGPR pair), as
    (start, size): from the pointer up to NEAR_ABOVE bytes, the end of the read-write mapping
    holding it, or the next such pointer or the code, whichever comes first -- so that each
    pointer starts its own allocation and a scratch base (never a window) shares none with a
    buffer.  Words past the real kernargs are host bytes that may look like pointers: memory
    the kernel was not handed, but only what it writes lands."""
    mapping = _rw_mappings()
    ptrs = [args_ptr]
    m = mapping(args_ptr)
    if m is not None:
        n = min(scan or KERNARG_SCAN, m[1] - args_ptr) // 8
        ptrs += np.ctypeslib.as_array((ctypes.c_uint64 * n).from_address(args_ptr)).tolist() if n else []
    ptrs += [user[i] | (user[i + 1] & 0xFFFF) << 32 for i in range(len(user) - 1)]
    # (the code is its own range: a pointer into it is none, and it ends the window below it)
    starts = sorted(p for p in set(ptrs) | {lib} if mapping(p) is not None and not lib < p < lib + lib_sz)
    out = []
    for i, p in enumerate(starts):
        hi = mapping(p)[1]  # type: ignore[index]
        end = min(hi, p + NEAR_ABOVE, starts[i + 1] if i + 1 < len(starts) else hi)
        if p != lib:
            out.append((p, end - p))
    return out


def _cut(spans: Sequence[tuple[int, int]], points: Iterable[int]) -> list[tuple[int, int]]:
    """``spans`` (start, end) with each point strictly inside one made a boundary."""
    out = list(spans)
    for p in sorted(set(points)):
        for i, (s, e) in enumerate(out):
            if s < p < e:
                out[i : i + 1] = [(s, p), (p, e)]
                break
    return out


# (start, host view, name) of each host span a memory was made of, by (start, end): a view is a
# pointer and a size (no bytes of its own), so the same one serves every call over that span
SPAN_LIMIT = 4096  # host spans with a kept view
_SPAN_ITEMS = _Bounded(SPAN_LIMIT)


def _memory(spans: Sequence[tuple[int, int]]):
    """A GuestMemory whose allocations are the host spans themselves (guest = host address)."""
    mem = GuestMemory()  # (a host heap below 4 GiB is traced: tracer._low)
    mem.single_use = True  # (one dispatch: the tracer keeps nothing on it)
    items = _SPAN_ITEMS
    get = items.get
    out = []
    for span in spans:
        item = get(span)
        if item is None:
            start, end = span
            item = _keep(items, span, (start, _host_view(start, end - start), f"host {start:#x}"))
        out.append(item)
    mem.add_many(out)
    return mem


# ---- kept plans for a repeated dispatch (decision 0045, amendment h94) -----------------------
# A call that passes ``ranges`` on the NumPy backend, with aligned code, is a pure function of
# its arguments and of the bytes of the code's span (the descriptor search and the program read
# only those; ranges, cuts, memory, registers and config follow from the arguments).  So it
# keeps, by its arguments, the memory (host views: no bytes of its own) and the config; the
# code's span gets a stamp that changes whenever its bytes differ from a kept copy (compared
# before every such call), given to the memory (GuestMemory.stamps) for execute's program and
# prepared record (decision 0029's stamps), and the memory's trace cache (open_scans) keeps
# the windows while the heads the tracer read are the same bytes (tracer.trace: compared).
KEEP_PLANS = True
PLAN_LIMIT = 256  # plans kept (by call arguments); also descriptors, spans and cuts kept
MEMORY_LIMIT = 8  # memories kept (by host spans)
CODE_LIMIT = 64  # code spans with a kept copy
CODE_CHECK_MAX = 16 << 20  # a code span larger than this has no stamp (no plan)
_PLANS = _Bounded(PLAN_LIMIT)
_MEMORIES = _Bounded(MEMORY_LIMIT)
_CODE = _Bounded(CODE_LIMIT)  # (start, end) -> (copy of the bytes, stamp)
# _find_descriptor's answer by (code span, lib, RSRC2), with the code span's stamp it was
# searched at (a pure function of those bytes and arguments): calls at new ranges over the same
# loaded code (new buffers) search no more
_DESCRIPTORS = _Bounded(PLAN_LIMIT)
_STAMPS = iter(range(1, 1 << 62))
PLAN_HITS = [0]  # calls that took a kept plan (tests)
_libc = ctypes.CDLL(None)
_libc.memcmp.restype = ctypes.c_int
_libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]


def _code_stamp(span: tuple[int, int]):
    """The stamp of the host bytes ``span`` (start, end): the kept one while they equal its
    copy (one memcmp), else a new one with a new copy; None for a span over CODE_CHECK_MAX."""
    start, end = span
    n = end - start
    if n > CODE_CHECK_MAX:
        return None
    kept = _CODE.get(span)
    if kept is not None and _libc.memcmp(start, kept[0], n) == 0:
        return kept[1]
    copy = _host_view(start, n).tobytes()
    stamp = ("host code", next(_STAMPS))  # (a tuple: never a device copy's version number)
    _keep(_CODE, span, (copy, stamp))
    return stamp


# _merged's spans by the ranges (rkey), and _cut's by the ranges and the cut points: pure
# functions of those ints, so a dispatch over the same ranges (a replay's other kernels, new
# kernargs) merges and cuts no more
_SPANS = _Bounded(PLAN_LIMIT)
_CUTS = _Bounded(PLAN_LIMIT)


def _ranges_key(ranges) -> tuple | None:
    """``ranges`` as a tuple of (int, int) pairs when it is a list or tuple of such pairs (what
    a plan is kept by), else None (no plan: the call takes the full path)."""
    if type(ranges) is not list and type(ranges) is not tuple:
        return None
    for r in ranges:
        if type(r) is not tuple or len(r) != 2 or type(r[0]) is not int or type(r[1]) is not int:
            return None
    return tuple(ranges)


def _kept_memory(cut: Sequence[tuple[int, int]]):
    """The kept memory over the host spans ``cut`` (made, and kept by them, when new): traced
    with open scans and cached traces, never single-use."""
    key = tuple(cut)
    mem = _MEMORIES.get(key)
    if mem is None:
        mem = _memory(cut)
        mem.single_use = False
        mem.open_scans = True
        _keep(_MEMORIES, key, mem)
    return mem


class _Plan:
    """What a call's arguments and its code's bytes (``stamp``) gave: the memory (weakly: the
    kept memories, at most MEMORY_LIMIT, hold it), its code allocation, the config and whether
    it runs as one wave (pieces)."""

    __slots__ = ("span", "stamp", "memory", "code", "config", "one_wave")

    def __init__(self, span, stamp, memory, code, config, one_wave: bool):
        self.span, self.stamp, self.memory, self.code = span, stamp, weakref.ref(memory), code
        self.config, self.one_wave = config, one_wave


def _registers(target, lib, gx, gy, gz, lx, ly, lz, rsrc1, rsrc2, rsrc3, scratch_size, wave, user_data):
    """The register file tinygrad's AMD runtime writes for this dispatch, and its initiator."""
    regs = RegisterFile(target)
    regs["COMPUTE_PGM_LO"] = (lib >> 8) & 0xFFFFFFFF
    regs["COMPUTE_PGM_HI"] = (lib >> 40) & 0xFF
    regs["COMPUTE_PGM_RSRC1"] = rsrc1
    regs["COMPUTE_PGM_RSRC2"] = rsrc2
    regs["COMPUTE_PGM_RSRC3"] = rsrc3
    if rsrc2 & 1 and scratch_size:  # SCRATCH_EN: WAVESIZE in the target's units
        unit = scratch_unit(gfx_level(target))
        wavesize = -(-(scratch_size * wave) // unit)
        regs["COMPUTE_TMPRING_SIZE"] = (wavesize << 12) | 32
        if gfx_level(target) == 11:  # architected flat scratch: the base is the module's own
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] = 0
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_HI"] = 0
    # (the USER_DATA registers there are: RSRC2 may ask for more, which build_config refuses by
    # name -- before, writing a 17th raised KeyError out of run_asm)
    for i, v in enumerate(user_data[:MAX_USER_SGPRS]):
        regs[f"COMPUTE_USER_DATA_{i}"] = int(v) & 0xFFFFFFFF
    for axis, n in zip("XYZ", (lx, ly, lz)):
        regs[f"COMPUTE_NUM_THREAD_{axis}"] = n
    regs["COMPUTE_DIM_X"], regs["COMPUTE_DIM_Y"], regs["COMPUTE_DIM_Z"] = gx, gy, gz
    return regs, pm4.initiator(wave32=(wave == 32), force_start_at_000=True, order_mode=False)


def _config(target, pc, dims, block, rsrc1, rsrc2, rsrc3, scratch_size, wave, user):
    """build_config's DispatchConfig (or its Refusal) for what _registers writes.

    Kept by those values (_CONFIGS); a miss there (new buffers: other kernarg and scratch
    addresses in the user SGPRs) takes the config of the same values but the user SGPRs'
    (_CONFIG_SHAPES, by their count) with the user SGPRs put in: build_config copies the
    USER_DATA values into ``user_sgprs`` and reads them for nothing else (whether each was
    written: all are, zeros included; their count is RSRC2's), so the two are equal (checked
    against build_config in tests/compat/test_tinygrad_warm.py)."""
    user = tuple(user)
    ckey = (target, pc, dims, block, rsrc1, rsrc2, rsrc3, scratch_size, wave, user)
    config = _CONFIGS.get(ckey)
    if config is not None:
        return config
    skey = ckey[:-1] + (len(user),)
    shape = _CONFIG_SHAPES.get(skey)
    if shape is None:
        regs, initiator = _registers(
            target, pc, *dims, *block, rsrc1, rsrc2, rsrc3, scratch_size, wave, (0,) * len(user)
        )
        try:
            shape = build_config(regs, target, dims=dims, initiator=initiator)
        except Refused as r:
            shape = r.refusal
        _keep(_CONFIG_SHAPES, skey, shape)
    # (a refusal names no user SGPR value; the system SGPR dict is shared, never written)
    config = shape if isinstance(shape, Refusal) else _with_user(shape, user)
    return _keep(_CONFIGS, ckey, config)


def _with_user(shape, user: tuple):
    """``dataclasses.replace(shape, user_sgprs=user)`` without its __init__ call (~6 us of a
    plan-missing call: the config has ~27 fields): a new object of the same class whose fields
    are ``shape``'s, the user SGPRs ``user`` (DispatchConfig has no __post_init__ nor slots;
    checked equal to replace in tests/compat/test_tinygrad_warm.py)."""
    config = object.__new__(type(shape))
    d = vars(config)
    d.update(vars(shape))
    d["user_sgprs"] = user
    return config


def run_asm(
    lib: int,
    lib_sz: int,
    gx: int,
    gy: int,
    gz: int,
    lx: int,
    ly: int,
    lz: int,
    args_ptr: int,
    rsrc2: int = 0x19C,
    scratch_size: int = 0,
    arch: str = "rdna3",
    user_data: Sequence[int] | None = None,
    *,
    ranges: Iterable[Sequence[int]] | None = None,
    rsrc1: int | None = None,
    rsrc3: int = 0,
    backend: str = "numpy",
    mode: str = "wave",
    budget: int | None = None,
) -> int:
    """Carry out one dispatch as tinygrad's mock GPU asks (module docstring): 0 when it landed.

    Python's cyclic garbage collector is paused for the call (decision 0035): a fresh program
    leaves ~2,400 objects alive (its translation and module, cached) and makes many more that
    die by reference count, and the collections their allocations set off walked the long-lived
    caches again and again (~20% of a fresh instruction-test program's time).  It is enabled
    again on every way out; the first collection after the call collects what it left."""
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        return _run_asm(
            lib,
            lib_sz,
            gx,
            gy,
            gz,
            lx,
            ly,
            lz,
            args_ptr,
            rsrc2,
            scratch_size,
            arch,
            user_data,
            ranges=ranges,
            rsrc1=rsrc1,
            rsrc3=rsrc3,
            backend=backend,
            mode=mode,
            budget=budget,
        )
    finally:
        if enabled:
            gc.enable()


def _run_asm(
    lib,
    lib_sz,
    gx,
    gy,
    gz,
    lx,
    ly,
    lz,
    args_ptr,
    rsrc2,
    scratch_size,
    arch,
    user_data,
    *,
    ranges,
    rsrc1,
    rsrc3,
    backend,
    mode,
    budget,
) -> int:
    target = target_for(arch)
    if target not in RUN_TARGETS:
        return _bad("dispatch.bad_target", f"arch {arch!r}: wavelift runs code for {', '.join(RUN_TARGETS)}")
    dims = (int(gx), int(gy), int(gz))
    block = (int(lx), int(ly), int(lz))
    if min(dims + block) <= 0 or lib <= 0 or lib_sz <= 0:
        return _bad("dispatch.empty_block", f"grid {dims} of blocks {block}, code {lib:#x}+{lib_sz}")
    rsrc2 = int(rsrc2) & 0xFFFFFFFF
    scratch_size = int(scratch_size)
    if scratch_size and target_level(target) == 11:
        # the emulator gives every lane scratch_size bytes whatever SCRATCH_EN says (tinygrad's
        # instruction tests pass RSRC2 0x19c with 64 KiB a lane); on GFX11 SCRATCH_EN adds no
        # SGPR.  At most wavelift's bound a wave: an access past it escapes (refused), never wraps
        rsrc2 |= 1
        scratch_size = min(scratch_size, MAX_SCRATCH_WAVE_BYTES // 64)
    if user_data is None or len(user_data) == 0:  # tinygrad's emulator: the kernarg pointer in s[0:1]
        user_data = [args_ptr & 0xFFFFFFFF, (args_ptr >> 32) & 0xFFFFFFFF]
    n_user = (rsrc2 >> 1) & 0x1F
    user = [int(v) & 0xFFFFFFFF for v in user_data][:n_user]
    user += [0] * (n_user - len(user))  # never-written USER_DATA reads 0 (as the mock GPU does)
    plan_key: tuple | None = None
    rkey: tuple | None = None  # (the ranges as ints: what _SPANS and _CUTS are kept by)
    stamp, stamped = None, None
    # (unaligned code runs from a copy the memory holds: never a plan)
    if KEEP_PLANS and ranges is not None and backend == "numpy" and int(lib) % 256 == 0:
        rkey = _ranges_key(ranges)
        if rkey is not None:
            plan_key = (target, int(lib), int(lib_sz), dims, block, int(args_ptr), rsrc2, scratch_size)
            plan_key += (tuple(user), rkey, None if rsrc1 is None else int(rsrc1), int(rsrc3), mode, budget)
            plan = _PLANS.get(plan_key)
            if plan is not None:
                stamp, stamped = _code_stamp(plan.span), plan.span
                mem = plan.memory()
                if stamp is not None and stamp == plan.stamp and mem is not None:
                    PLAN_HITS[0] += 1
                    mem.stamps = {plan.code: stamp}  # (the only one checked now)
                    return _execute(mem, plan.config, plan.one_wave, backend, mode, budget)
                del _PLANS[plan_key]
    kd0, kd0_span = None, None
    if ranges is None:
        kd0_span = (int(lib), int(lib) + int(lib_sz))
        kd0 = _find_descriptor(_host_view(int(lib), int(lib_sz)), int(lib), int(lib), rsrc2)
        scan = struct.unpack_from("<I", kd0, 8)[0] if kd0 is not None else 0
        ranges = [(lib, lib_sz), *_near_pointers(int(lib), int(lib_sz), int(args_ptr), user, scan)]
    try:
        spans = None if rkey is None else _SPANS.get(rkey)
        if spans is None:
            spans = tuple(_merged(ranges))
            if rkey is not None:
                _keep(_SPANS, rkey, spans)
    except (TypeError, ValueError) as e:
        return _bad("dispatch.bad_address", f"ranges: {e}")
    code_span = next(((s, e) for s, e in spans if s <= lib < e), None)
    if code_span is None:
        return _bad("program.bad_address", f"code {lib:#x} is in none of the ranges")
    if plan_key is not None:
        # (the code's bytes stamped before the descriptor search and the program read them;
        # once only where a stale plan's check just stamped the same span)
        if stamp is None or stamped != code_span:
            stamp = _code_stamp(code_span)
        if stamp is None:
            plan_key = None
    wave = 32
    kd_key = (code_span, int(lib), rsrc2)
    if code_span == kd0_span:  # (the same bytes searched the same way: kd0 again)
        kd = kd0
    elif stamp is not None and (kept := _DESCRIPTORS.get(kd_key)) is not None and kept[0] == stamp:
        kd = kept[1]  # (the same bytes, stamped: the same search)
    else:
        kd = _find_descriptor(
            _host_view(code_span[0], code_span[1] - code_span[0]), code_span[0], int(lib), rsrc2
        )
        if stamp is not None:
            _keep(_DESCRIPTORS, kd_key, (stamp, kd))
    if rsrc1 is None:
        if kd is not None:
            rsrc1 = struct.unpack_from("<I", kd, 48)[0]
            rsrc3 = struct.unpack_from("<I", kd, 44)[0]
        else:
            rsrc1 = DEFAULT_RSRC1
    if kd is not None:
        wave = 32 if struct.unpack_from("<H", kd, 56)[0] & 0x400 else 64
    # the kernargs as their own allocation (a window of their own, not of the whole kernarg ring
    # the runtime carves them from): from args_ptr to past the dispatch packet tinygrad puts after
    # them, when the descriptor gives their size
    cuts = [int(args_ptr)]
    if kd is not None:
        cuts.append(int(args_ptr) + -(-(struct.unpack_from("<I", kd, 8)[0] + DISPATCH_PACKET) // 64) * 64)
    try:
        cutkey = None if rkey is None else (rkey, *cuts)
        cut = None if cutkey is None else _CUTS.get(cutkey)
        if cut is None:
            cut = tuple(_cut(spans, cuts))
            if cutkey is not None:
                _keep(_CUTS, cutkey, cut)
        mem = _memory(cut) if plan_key is None else _kept_memory(cut)
    except Exception as e:  # non-canonical ranges
        return _bad("dispatch.bad_address", f"ranges: {e}")
    code = mem.find(lib)
    assert code is not None
    pc = int(lib)
    if pc % 256:  # COMPUTE_PGM_LO holds address bits 47:8: a copy at an aligned guest address
        n = min(int(lib_sz), code.end - pc)
        pc = mem.alloc(
            n, name="code (copied: not 256-byte aligned)", address=UNALIGNED_CODE, data=_host_view(lib, n)
        )
        # the copy has no host address: no host word points into it, and the tracer neither
        # makes it a window nor scans for pointers into it (decision 0045, amendment)
        mem.never_windows = {pc}
    config = _config(target, pc, dims, block, int(rsrc1), rsrc2, int(rsrc3), int(scratch_size), wave, user)
    if isinstance(config, Refusal):
        _last[0] = config
        return BAD_CALL
    # one wave: a one-shot program (tinygrad's instruction tests) -- its blocks from pieces
    # shared by programs (decision 0040), where code generation and compile() are most of the cost
    # (and its translation keeps the instructions replayed from the instruction cache as
    # entries, their ops made only where a new piece reads them: decision 0045, amendment)
    one_wave = dims == (1, 1, 1) and block[0] * block[1] * block[2] <= wave
    if plan_key is not None:
        plan = _Plan(code_span, stamp, mem, code, config, one_wave)
        # (the memory's one stamp: its other code spans were not compared for this call)
        mem.stamps = {code: stamp}
        _keep(_PLANS, plan_key, plan)
    return _execute(mem, config, one_wave, backend, mode, budget)


def _execute(mem, config, one_wave: bool, backend, mode, budget) -> int:
    """execute_dispatch with the pieces on for a one-wave dispatch; -> OK or REFUSED."""
    was, PIECES.on = PIECES.on, one_wave and PIECES.enabled
    lazy_was, LAZY[0] = LAZY[0], PIECES.on
    try:
        res = execute_dispatch(mem, config, backend=backend, mode=mode, budget=budget)
    finally:
        PIECES.on = was
        LAZY[0] = lazy_was
    _last[0] = res
    return OK if res.refusal is None else REFUSED
