"""Guest memory: a sparse 48-bit GPU virtual address space made of allocations.

Addresses are kept in *canonical* form: bits 63:48 copy bit 47, as RADV's BOs carry them
(0xffff8000_00000000 and up for the upper half). Registers and packets hold 48-bit forms;
`canonical()` accepts either.  A 64-bit address a program computes is taken only when it is
canonical (`is_canonical`), and an access of n bytes at a only when every byte lies in the range
(`holds`, computed so that no term wraps): docs/decisions/0014-addresses.md.  An allocation lies
inside one canonical half and never touches the top of the 64-bit space (its end is a 64-bit
number), so no window check can overflow.

Each allocation owns one writable uint8 NumPy array (`Allocation.data`; captures are read into
such arrays, never left mapped: decision 0018). Reads and writes never cross allocations: an access
that leaves its allocation raises GuestMemoryError naming the allocation and the range. `view()`
returns a view, never a copy, so large allocations are never duplicated.

An allocation a CUDA dispatch reached may have a newer device copy (decision 0026): every host
access goes through `Allocation.data`, `view`, `peek`, `read`, `write` (or says so with
`touched`), which first land the device's newer bytes of what they cover and mark what may be
written, so the host never sees stale bytes and the device never misses a host write.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

VA_BITS = 48
MASK48 = (1 << VA_BITS) - 1
MASK64 = (1 << 64) - 1
HIGH_HALF = 0xFFFF_8000_0000_0000  # first canonical address of the upper half
LOW_HALF_END = 1 << 47  # one past the last lower-half address
DEFAULT_BASE = 0x0000_0001_0000_0000  # where alloc() starts placing (above 4 GiB)
GUARD = 4096  # alloc() leaves this gap after each allocation


def canonical(addr: int) -> int:
    """The canonical 64-bit form of a GPU VA: bits 63:48 copy bit 47 (48-bit forms accepted)."""
    a = int(addr) & MASK48
    return a | (0xFFFF << 48) if a >> 47 else a


def is_canonical(addr):
    """A 64-bit address the memory system takes: bits 63:48 copy bit 47 (decision 0014).
    An int, or a uint64 array (element-wise)."""
    if isinstance(addr, np.ndarray):
        return (addr < np.uint64(LOW_HALF_END)) | (addr >= np.uint64(HIGH_HALF))
    return 0 <= addr < LOW_HALF_END or HIGH_HALF <= addr <= MASK64


def holds(offset, nbytes, size):
    """``nbytes`` bytes at ``offset`` (from a range's start) lie inside a range of ``size`` bytes,
    computed so that no term wraps: ``0 <= offset < size and nbytes <= size - offset`` (nbytes >
    size fails).  Ints or NumPy arrays (int64 offsets may be negative, uint64 ones may be a
    wrapped difference); the one range test of every window, LDS and scratch check in Python."""
    return (offset >= 0) & (offset < size) & (nbytes <= size - offset)


def va48(addr: int) -> int:
    """The 48-bit form of a GPU VA (what registers and packets carry)."""
    return int(addr) & MASK48


def _half_end(base: int) -> int:
    return LOW_HALF_END if base < LOW_HALF_END else 1 << 64


def _adopted(base: int, array: np.ndarray, name: str, shared: bool) -> Allocation:
    """``add``'s allocation of ``array`` at ``base``, its array, size and place checked (not
    what else is in the memory: ``_check_free``'s overlap test)."""
    if not isinstance(array, np.ndarray) or array.dtype != np.uint8 or array.ndim != 1:
        raise GuestMemoryError(f"allocation {name!r}: add() needs a 1-D uint8 array")
    if not array.flags.writeable:
        raise GuestMemoryError(f"allocation {name!r}: add() needs a writable array")
    a = _given(base, name)
    _check_range(a, len(array), name)
    return Allocation(a, len(array), name, array, shared=bool(shared))


class GuestMemoryError(Exception):
    """An access or allocation that the guest address space does not allow."""


def _given(address: int, name: str) -> int:
    """The canonical base of an allocation placed at ``address``: a 48-bit form (as registers
    and packets carry addresses) is sign-extended; a wider one must already be canonical."""
    a = int(address)
    if a < 0 or a > MASK64 or (a > MASK48 and not is_canonical(a)):
        raise GuestMemoryError(
            f"allocation {name!r}: address {a:#x} is not a canonical 64-bit or a 48-bit address"
        )
    return canonical(a)


def _check_range(base: int, size: int, name: str) -> None:
    """An allocation's size and place alone (not what else is there): positive, canonical,
    inside one canonical half, the end a 64-bit number."""
    if size <= 0:
        raise GuestMemoryError(f"allocation {name!r}: size must be positive, not {size}")
    if not is_canonical(base):
        raise GuestMemoryError(f"allocation {name!r}: 0x{base:016x} is not canonical")
    # inside one canonical half, and the end a 64-bit number (touching the top of the
    # space would make every window end 2^64: decision 0014)
    if base + size > _half_end(base) or base + size > MASK64:
        raise GuestMemoryError(
            f"allocation {name!r} at 0x{base:016x} size 0x{size:x} leaves the 48-bit address "
            f"space (crosses the canonical hole at bit 47, wraps or touches the top of the "
            f"space)"
        )


@dataclass(eq=False)
class Allocation:
    base: int  # canonical address
    size: int  # bytes
    name: str
    _data: np.ndarray  # uint8, writable, len == size (``data``)
    # None, or the device copy's keeper (backends/cuda/resident.py, decision 0026): told of every
    # host access first, so it lands the device's newer bytes (pull) and learns what the host
    # changed (touched)
    resident: Any = field(default=None, repr=False, compare=False)
    # the array is the caller's too (add(shared=True)): it may read or write it directly at any
    # time, so a device copy takes it whole before each dispatch and lands in it at once
    shared: bool = field(default=False, repr=False, compare=False)

    @property
    def data(self) -> np.ndarray:
        """The host bytes, current (a device copy's newer bytes land first).  A read: code that
        writes into it directly says so with GuestMemory.touched (view() and write() do) --
        after the write, so the device copy's keeper reads what it has queued first (its
        ``pull_writable``), as before a write through view()."""
        if self.resident is not None:
            self.resident.pull_writable(self)
        return self._data

    def __getstate__(self):
        """(a copy holds the current bytes and no device copy)"""
        state = dict(self.__dict__)
        if self.resident is not None:
            self.resident.pull(self, 0, self.size)
        state["resident"] = None
        return state

    def __setstate__(self, state):
        if "data" in state:  # (pickled before the device copies)
            state["_data"] = state.pop("data")
        state.setdefault("resident", None)
        state.setdefault("shared", False)
        self.__dict__.update(state)

    @property
    def end(self) -> int:
        return self.base + self.size

    def __contains__(self, address: int) -> bool:
        return self.base <= canonical(address) < self.end

    def __repr__(self) -> str:
        return f"Allocation({self.name!r}, 0x{self.base:016x}, size=0x{self.size:x})"


class GuestMemory:
    def __init__(self):
        self._bases: list[int] = []
        self._allocs: list[Allocation] = []
        # the tracer's pointer candidates per (base, length, digest of the bytes) (tracer._scan)
        self.pointer_scans: dict = {}
        self.pointer_scan_bytes = 0  # (the bytes of the candidates in pointer_scans)
        # first fit resumes where the last request of the same (size, align) was placed: every
        # gap below that was too small then, and until a free() gaps only shrink (a Device's
        # per-launch kernargs: no scan of every earlier launch's allocations)
        self._fit_from: dict = {}
        # bumped by every allocation added or freed: what the tracer's caches of the allocation
        # table (address_index, tracer.trace's windows) are checked against
        self.generation = 0
        self._index: tuple | None = None  # address_index(), with the generation it is for
        self._index_log: list | None = []  # allocations added since _index was built
        # the tracer's windows per (user data, scratch roots): tracer.trace, as
        # (generation, scanned heads, windows)
        self.trace_cache: dict = {}
        # an open_scans memory's traces instead (tracer._trace_variants): per the same key,
        # (generation, first allocation scanned, {its head's bytes: (scanned heads, windows)});
        # a store of their own, so that no reader of trace_cache meets the other shape
        self.trace_variants: dict = {}
        # True: made for one dispatch and then dropped (the tinygrad hook's host memory): the
        # tracer keeps nothing on it (no scan or trace cache, no digests of the bytes it scans)
        self.single_use = False
        # the bases of allocations the tracer never makes windows (nor scans for pointers into):
        # the tinygrad hook's copy of unaligned code, which has no host address
        self.never_windows: set[int] = set()
        # True: the tracer's scans keep nothing and look only for allocations not yet windows
        # (as a single-use memory's), while its traces are cached (trace_cache): a memory kept
        # over host bytes that change between dispatches (the tinygrad hook's kept plans)
        self.open_scans = False
        # stamps an owner vouches for where no device copy gives one (tracer.content_stamp):
        # allocation -> a value that changes whenever its bytes may have (the tinygrad hook's
        # code, compared with a kept copy before each dispatch; decision 0045, amendment h94)
        self.stamps: dict = {}
        # None, or the CUDA backend's device copies of these allocations (decision 0026)
        self.resident = None

    def __getstate__(self):
        """(a copy is host memory only: the allocations bring their current bytes; no owner
        watches the copy's bytes, so it has no stamps)"""
        return {**self.__dict__, "resident": None, "stamps": {}}

    def __setstate__(self, state):
        """(memories pickled before a field existed get its default)"""
        self.__dict__.update(state)
        self.__dict__.setdefault("resident", None)
        self.__dict__.setdefault("pointer_scans", {})
        self.__dict__.setdefault(
            "pointer_scan_bytes", sum(x.nbytes + y.nbytes for x, y in self.pointer_scans.values())
        )
        self.__dict__.setdefault("_fit_from", {})
        self.__dict__.setdefault("generation", 0)
        self.__dict__.setdefault("_index", None)
        self.__dict__.setdefault("_index_log", [])
        self.__dict__.setdefault("trace_cache", {})
        self.__dict__.setdefault("trace_variants", {})
        self.__dict__.setdefault("single_use", False)
        self.__dict__.setdefault("never_windows", set())
        self.__dict__.setdefault("open_scans", False)
        self.__dict__.setdefault("stamps", {})

    def address_index(self):
        """(starts, ends, (lo, hi)): the allocations' 48-bit start and end addresses as uint64
        arrays in base order, and their hull (None when there are none) -- kept up to date as
        allocations are added (a few inserted into the arrays) or freed (rebuilt), so a caller
        per dispatch does not rebuild or sort it.  (An allocation never crosses the canonical
        hole, so the 48-bit images keep the allocations' order.)"""
        ix = self._index
        if ix is not None and ix[0] == self.generation:
            return ix[1]
        log = self._index_log
        if ix is not None and log is not None and ix[0] + len(log) == self.generation:
            # only additions since (a free drops the log): merged in at their places
            starts, ends, _ = ix[1]
            add = sorted(a.base & MASK48 for a in log)
            size = {a.base & MASK48: a.size for a in log}
            new = np.array(add, np.uint64)
            at = np.searchsorted(starts, new)
            starts = np.insert(starts, at, new)
            ends = np.insert(ends, at, new + np.array([size[x] for x in add], np.uint64))
        else:
            starts = np.fromiter((a.base & MASK48 for a in self._allocs), np.uint64, len(self._allocs))
            ends = starts + np.fromiter((a.size for a in self._allocs), np.uint64, len(self._allocs))
        hull = (int(starts[0]), int(ends.max())) if starts.size else None
        out = (starts, ends, hull)
        self._index = (self.generation, out)
        self._index_log = []
        return out

    # --- allocation -------------------------------------------------------------------------
    @property
    def allocations(self) -> list[Allocation]:
        """All allocations, sorted by canonical base address."""
        return list(self._allocs)

    def __iter__(self):
        return iter(list(self._allocs))

    def __len__(self) -> int:
        return len(self._allocs)

    def _check_free(self, base: int, size: int, name: str) -> None:
        _check_range(base, size, name)
        self._check_overlap(base, size, name)

    def _check_overlap(self, base: int, size: int, name: str) -> None:
        i = bisect.bisect_right(self._bases, base)
        for j in (i - 1, i):
            if 0 <= j < len(self._allocs):
                o = self._allocs[j]
                if o.base < base + size and base < o.end:
                    raise GuestMemoryError(
                        f"allocation {name!r} [0x{base:016x}, 0x{base + size:016x}) overlaps "
                        f"{o.name!r} [0x{o.base:016x}, 0x{o.end:016x})"
                    )

    def _table_changes(self) -> None:
        """The allocation table is about to change: deferred CUDA dispatches are read first (one
        that is run again must find the table it was launched with: decision 0029, helper-96)."""
        r = self.resident
        if r is not None and r.pending:
            r.flush()

    def _insert(self, a: Allocation) -> None:
        self._table_changes()
        i = bisect.bisect_right(self._bases, a.base)
        self._bases.insert(i, a.base)
        self._allocs.insert(i, a)
        self._added([a])

    def _added(self, new: list) -> None:
        """The table grew by ``new`` (inserted): the generation and address_index's log."""
        self.generation += len(new)
        if self._index_log is not None:
            self._index_log.extend(new)
            if len(self._index_log) > 64:
                self._index_log = None  # (address_index rebuilds)

    def _place(self, size: int, align: int) -> int:
        cand = self._fit_from.get((size, align), DEFAULT_BASE)
        allocs = self._allocs
        for j in range(max(bisect.bisect_right(self._bases, cand) - 1, 0), len(allocs)):
            a = allocs[j]
            if a.base >= LOW_HALF_END:
                break
            if a.end + GUARD <= cand:
                continue
            if a.base >= cand + size + GUARD:
                break
            cand = -(-(a.end + GUARD) // align) * align
        if cand + size > LOW_HALF_END:
            raise GuestMemoryError(f"no room for 0x{size:x} bytes in the lower half")
        self._fit_from[(size, align)] = cand
        return cand

    def alloc(
        self, size: int, name: str = "", address: int | None = None, align: int = 256, data=None
    ) -> int:
        """Allocate `size` zeroed bytes (at `address`, or the first free `align`-aligned place);
        `data` (bytes-like or array), if given, is copied to the start. Returns the address."""
        size = int(size)
        if align <= 0 or align & (align - 1):
            raise GuestMemoryError(f"allocation {name!r}: align must be a power of two, not {align}")
        src = None
        if data is not None:
            src = (
                np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
                if not isinstance(data, np.ndarray)
                else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
            )
            if len(src) > size:
                raise GuestMemoryError(
                    f"allocation {name!r}: {len(src)} bytes of data do not fit in size 0x{size:x}"
                )
        if address is None:
            if size <= 0:
                raise GuestMemoryError(f"allocation {name!r}: size must be positive, not {size}")
            base = self._place(size, align)
        else:
            base = _given(address, name)
            if base % align:
                raise GuestMemoryError(
                    f"allocation {name!r}: address 0x{base:016x} is not {align}-byte aligned"
                )
        self._check_free(base, size, name)
        arr = np.zeros(size, dtype=np.uint8)
        if src is not None:
            arr[: len(src)] = src
        self._insert(Allocation(base, size, name, arr))
        return base

    def add(self, base: int, array: np.ndarray, name: str = "", shared: bool = True) -> Allocation:
        """Adopt `array` (uint8, 1-D, writable) as the allocation at `base`,
        without copying it.  `shared`: the caller keeps using `array` directly (a device copy
        is refreshed before each dispatch and lands in it at once: decision 0026); False: only
        through this memory."""
        a = _adopted(base, array, name, shared)
        self._check_overlap(a.base, a.size, name)
        self._insert(a)
        return a

    def add_many(self, items: Iterable[tuple[int, np.ndarray, str]], shared: bool = True) -> None:
        """``add(base, array, name, shared)`` of each (base, array, name) of ``items``, in order:
        the same allocations, table and checks, in one pass where the memory is empty, every
        item would pass add()'s checks and none overlaps another (the tinygrad hook's memory of
        ~40 host spans a call: decision 0045, amendment h93); otherwise one add() per item, so
        an item add() refuses raises the same error with the items before it added."""
        items = list(items)
        cls = type(self)
        new: list[Allocation] = []  # (in the items' order: add()'s order in the index log)
        order: list[Allocation] = []
        if not self._allocs and cls.add is GuestMemory.add and cls._insert is GuestMemory._insert:
            try:
                new = [_adopted(b, arr, n, shared) for b, arr, n in items]
            except GuestMemoryError:  # (add() tells which, with the items before it added)
                new = []
            order = sorted(new, key=lambda x: x.base)
            if any(p.end > q.base for p, q in zip(order, order[1:])):
                order = []
        if len(order) != len(items) or not items:
            for base, array, name in items:
                self.add(base, array, name, shared=shared)
            return
        self._table_changes()
        self._allocs = order
        self._bases = [x.base for x in order]
        self._added(new)

    def free(self, address: int) -> None:
        a = self.find(address)
        if a is None or a.base != canonical(address):
            raise GuestMemoryError(f"free: no allocation starts at 0x{canonical(address):016x}")
        self._table_changes()
        i = self._allocs.index(a)
        del self._allocs[i], self._bases[i]
        self._fit_from.clear()  # (a gap grew)
        self.generation += 1
        self._index_log = None  # (address_index rebuilds)

    # --- lookup -----------------------------------------------------------------------------
    def find(self, address: int, size: int = 1) -> Allocation | None:
        """The allocation holding all of [address, address+size), or None."""
        a = canonical(address)
        i = bisect.bisect_right(self._bases, a) - 1
        if i < 0:
            return None
        al = self._allocs[i]
        if a < al.end and a + max(int(size), 1) <= al.end:
            return al
        return None

    def _locate(self, address: int, n: int, what: str) -> tuple[Allocation, int]:
        n = int(n)
        if n < 0:
            raise GuestMemoryError(f"{what}: negative size {n}")
        a = canonical(address)
        i = bisect.bisect_right(self._bases, a) - 1
        al = self._allocs[i] if i >= 0 else None
        if al is None or a >= al.end:
            raise GuestMemoryError(f"{what} of {n} bytes at 0x{a:016x}: no allocation holds this address")
        if a + n > al.end:
            raise GuestMemoryError(
                f"{what} of {n} bytes at 0x{a:016x} runs past the end of allocation {al.name!r} "
                f"[0x{al.base:016x}, 0x{al.end:016x}) by {a + n - al.end} bytes"
            )
        if al.resident is not None:  # (a device copy: decision 0026)
            if what == "read":
                al.resident.pull(al, a - al.base, n)
            else:  # (a view may be written)
                al.resident.touch(al, a - al.base, n)
        return al, a - al.base

    def touched(self, address: int, n: int) -> None:
        """The host wrote [address, address+n) other than through view() or write() (into an
        Allocation's ``data``): a device copy takes it before its next dispatch."""
        self._locate(address, n, "touched")

    def contains(self, address: int, size: int = 1) -> bool:
        return self.find(address, size) is not None

    # --- access -----------------------------------------------------------------------------
    def view(self, address: int, n: int) -> np.ndarray:
        """A writable uint8 view (no copy) of [address, address+n), inside one allocation."""
        al, off = self._locate(address, n, "view")
        return al._data[off : off + int(n)]

    def peek(self, address: int, n: int) -> np.ndarray:
        """A read-only uint8 view of [address, address+n), current (a device copy's newer bytes
        in that range land first; nothing else): for readers of part of a large allocation."""
        al, off = self._locate(address, n, "read")
        v = al._data[off : off + int(n)].view()
        v.flags.writeable = False
        return v

    def read(self, address: int, n: int) -> bytes:
        al, off = self._locate(address, n, "read")
        return al._data[off : off + int(n)].tobytes()

    def write(self, address: int, data) -> None:
        src = data if isinstance(data, np.ndarray) else np.frombuffer(memoryview(data).cast("B"), np.uint8)
        src = np.ascontiguousarray(src).reshape(-1).view(np.uint8)
        al, off = self._locate(address, len(src), "write")
        al._data[off : off + len(src)] = src

    # (the readers peek: a read must not mark the range as written by the host, which would
    # send it to a device copy again before the next dispatch -- decision 0026)
    def read_u32(self, address: int) -> int:
        return int(self.peek(address, 4).view("<u4")[0])

    def write_u32(self, address: int, value: int) -> None:
        self.view(address, 4).view("<u4")[0] = int(value) & 0xFFFFFFFF

    def read_u64(self, address: int) -> int:
        return int(self.peek(address, 8).view("<u8")[0])

    def write_u64(self, address: int, value: int) -> None:
        self.view(address, 8).view("<u8")[0] = int(value) & MASK64

    def read_dwords(self, address: int, count: int) -> np.ndarray:
        """A copy of `count` little-endian dwords at `address` (uint32)."""
        return self.peek(address, 4 * int(count)).view("<u4").astype(np.uint32)

    def write_dwords(self, address: int, values) -> None:
        self.write(address, np.asarray(values, dtype="<u4").view(np.uint8))

    def __repr__(self) -> str:
        return f"GuestMemory({len(self._allocs)} allocations)"
