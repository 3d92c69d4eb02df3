"""Guest memory kept on the device across dispatches (decision 0026).

Each guest allocation a CUDA dispatch reaches gets a device copy the first time (uploaded
whole) and keeps it.  Two sets of byte ranges per allocation say which side is newer:

    host_dirty  the host wrote them since (GuestMemory.view / write / touched: ``touch``);
                they go up before the next dispatch that reaches the allocation (``prepare``)
    dev_dirty   a dispatch wrote them on the device (``commit``); they come down when the host
                reads or writes them (``pull``: Allocation.data, GuestMemory.read / view / write)

A dispatch never runs on the device copies: ``gather`` copies its windows, device to device,
into an arena laid out as trace/windows.WindowSet lays the host one, and the kernel writes
there and marks its written-byte map.  ``runs`` finds the written runs on the device (only
their list comes back), ``spans`` cuts them at window bounds into guest write spans (the spans
WindowSet.spans finds on the host), and only after the host has seen that nothing escaped and
nothing was refused does ``commit`` copy the written bytes into the device copies (a copy of
the spans' bytes on the device, ``wl_land``: no map byte read) and record them as dev_dirty.
A refused dispatch leaves the device copies and the host's bytes as they were.

The device is an object with a few array operations (``Ops``): CuPyOps on a GPU, NumPyOps (host
arrays standing in for device ones) for the tests of this bookkeeping without a GPU.
"""

from __future__ import annotations

import itertools
import re
import sys
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from ... import settings
from ...errors import Refused

TABLES = 48  # window tables kept on the device (Resident.table)
SPAN_CAPACITY = 1 << 14  # runs the first runs() launch has room for (more: a second launch)
_VERSIONS = itertools.count(1)  # Entry.version
SHADOW_BYTES = 4096  # allocations whose device bytes are shadowed on the host (Entry.shadow)
STAGING = 4  # arenas and written maps kept for the next dispatches (Resident.staging)
# of at most this many window bytes each, and together: a big dispatch's arena kept too (its
# kept plan skips the gather of unchanged windows; a fresh arena per dispatch cost a 2^26-float
# vadd 12x native's wall, session 43), the device memory they hold bounded (counted in window
# bytes: a set's arena and written map hold about twice that)
STAGING_MAX_BYTES = 1 << 30
STAGING_TOTAL_BYTES = 2 << 30
KEPT_COMMITS = 64  # wl_land calls a kept plan keeps (Resident.commit's ``kept``)
DEFER_DEPTH = 16  # deferred dispatches in flight before their reports are read (Resident.flush)
# the device bytes of the queue places' asides beyond the first (Resident.aside: a copy of a
# deferred in-place run's windows' map, kept where its runs overflow the report's room -- h137): an
# in-place plan queues DEFER_DEPTH launches where that many of its maps fit, else one at a time
ASIDE_BYTES = 64 << 20
# wl_runs_bits' and wl_aside's grid: at most this many blocks of 256 threads an SM (CuPyOps.
# _quads_grid; grid-stride beyond) -- twice the 8 an SM holds at once, so no SM idles at the tail
# while a thread keeps one 16-byte load or store in flight (amendment h161)
QUAD_WAVES = 16


class RangeSet:
    """Disjoint, sorted half-open byte ranges [lo, hi) (adjacent ones merged)."""

    def __init__(self):
        self.lo: list[int] = []
        self.hi: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.lo)

    def __len__(self) -> int:
        return len(self.lo)

    def ranges(self) -> list[tuple[int, int]]:
        return list(zip(self.lo, self.hi))

    def add(self, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        i = bisect_left(self.hi, lo)  # first range ending at or after lo (touching merges)
        if i < len(self.lo) and self.lo[i] <= lo and hi <= self.hi[i]:
            return  # (inside that range already: a repeated in-place launch's windows)
        j = bisect_right(self.lo, hi)  # ranges starting at or before hi
        if i < j:
            lo, hi = min(lo, self.lo[i]), max(hi, self.hi[j - 1])
        self.lo[i:j] = [lo]
        self.hi[i:j] = [hi]

    def meets(self, lo: int, hi: int) -> bool:
        """Whether some range of the set shares a byte with [lo, hi)."""
        i = bisect_right(self.hi, lo)  # (the first range ending after lo)
        return lo < hi and i < len(self.lo) and self.lo[i] < hi

    def take(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Remove [lo, hi) and return the parts of it that were in the set, in order."""
        if hi <= lo or not self.lo:
            return []
        i = bisect_right(self.hi, lo)  # first range ending after lo
        j = bisect_left(self.lo, hi)  # ranges starting before hi
        if i >= j:
            return []
        out = [(max(lo, a), min(hi, b)) for a, b in zip(self.lo[i:j], self.hi[i:j])]
        keep_lo, keep_hi = [], []
        if self.lo[i] < lo:
            keep_lo.append(self.lo[i])
            keep_hi.append(lo)
        if self.hi[j - 1] > hi:
            keep_lo.append(hi)
            keep_hi.append(self.hi[j - 1])
        self.lo[i:j] = keep_lo
        self.hi[i:j] = keep_hi
        return out


class Entry:
    """One allocation's device copy and which of its bytes are newer where; ``host`` is the
    allocation's host array, ``shared`` whether its owner uses it behind the memory's back
    (Allocation.shared: uploaded whole before each dispatch, landed in at once).  The copy is
    its own device array (``buf``), or with WAVELIFT_CUDA_HEAP=one the bytes [off, off + size)
    of its Resident's ``heap`` (``buf`` is then a view made when asked: the heap may move)."""

    def __init__(self, buf, host, shared: bool, heap: Heap | None = None, off: int = 0):
        self._buf = buf
        self.heap = heap
        self.off = off
        self.host = host
        self.shared = shared
        self.host_dirty = RangeSet()
        self.dev_dirty = RangeSet()
        # a new number (of the process's one count) whenever the bytes may change on either
        # side (touch: the host may write; commit: a dispatch wrote): unchanged means the bytes
        # are (``stamp``); never the number of another entry, old or new
        self.version = next(_VERSIONS)
        self.small = host.size <= SHADOW_BYTES  # (the allocation's size: prepare's shadow test)
        # small allocations (at most SHADOW_BYTES): a host copy of what the device copy holds
        # while nothing newer is on the device, and the version its bytes had then (``settle``)
        self.shadow: np.ndarray | None = None
        self.clean: int | None = None
        # a dispatch run in place on a proof that failed (decision 0049 step 4) ran on this
        # copy: why (every later dispatch on it is refused ``backend.proof``), and the bytes
        # whose only current copy it may have overwritten (a host read of them is refused too)
        self.broken: str | None = None
        self.lost = RangeSet()

    @property
    def buf(self):
        """The device copy as one device array (a view of the heap's buffer now)."""
        h = self.heap
        if h is None:
            return self._buf
        return h.buf[self.off : self.off + self.host.size]

    def at(self, off: int) -> tuple:
        """(device array, index) of the copy's byte ``off``: for the device operations, which
        take an array and an offset (the heap's buffer as it is now, never a kept view)."""
        h = self.heap
        if h is None:
            return self._buf, off
        return h.buf, self.off + off


HEAP_MIN = 1 << 20  # a heap's first size and the grain of its sizes (it doubles, or more, as it grows)
HEAP_SPARE = 8  # bytes after each device copy in a heap (as after WindowSet's arena: wl_read)
# a copy's heap offset ≡ its guest address mod this: mod 8 as WindowSet places windows (so a
# window's heap offset can be its arena offset), and mod 256 so that every access lines up as it
# did with an array per allocation (cudaMalloc's 256-byte bound) of a 256-aligned allocation --
# wl_land's 16-byte stores, the loads' 32-byte sectors and 128-byte lines, and the bit map's
# words (32 bytes each: a warp's aligned store sets whole words by plain stores, mapbits.h).  Mod
# 16 (before), each copy's HEAP_SPARE bytes moved the next by 16: vadd's c at 16 mod 32, every
# warp's marks two half words by atomicOr, in place ~0.35 ms slower over 2^26 floats (0049 h159)
HEAP_ALIGN = 256


class Heap:
    """One growing device buffer holding every device copy of a Resident (decision 0049, step
    2; WAVELIFT_CUDA_HEAP=one): each copy a range [off, off + size) placed ≡ its allocation's
    guest address mod HEAP_ALIGN (256, so mod 8 as WindowSet places windows: a window's heap
    offset can be its arena offset), with HEAP_SPARE bytes after it that no other copy takes.
    ``place`` takes the first free range that fits, else the top, growing the buffer (a new
    one, the bytes below the top copied, on the stream: ``moves`` counts it and ``on_move`` --
    a weak reference to a call (WeakMethod) -- is called, so that whoever kept a device address
    of the old buffer drops it); ``release`` (an Entry's finalizer) gives a range back, noted
    and merged at the next ``place`` (a finalizer may run in the middle of anything).
    ``written``: a written map over the whole heap (one byte per byte, or with ``bits`` one
    bit: is_bits), made on first use and grown with the buffer -- what a dispatch running on
    the heap itself would mark (step 4; nothing marks it yet)."""

    def __init__(self, ops, bits: bool = False):
        self.ops = ops
        self.bits = bool(bits)
        self.cap = 0
        self.buf = None
        self.top = 0  # [0, top): placed at some time; the free ranges lie below it
        self.free = RangeSet()
        self._freed: list[tuple[int, int]] = []
        self._map = None  # (the map's bytes: ``written`` is its view in the map's form)
        self.moves = 0
        self.on_move = None

    def map_bytes(self, n: int) -> int:
        return 4 * map_words(n) if self.bits else n

    @property
    def written(self):
        if self._map is None:
            self._map = self.ops.zeros(max(self.map_bytes(self.cap), 8))
        return self._map.view(np.uint32) if self.bits else self._map

    def map_over(self, lo: int, hi: int):
        """The written map over heap bytes [lo, hi): with ``bits`` every word they meet."""
        if self.bits:
            return self.written[lo >> 5 : -(-hi // 32)]
        return self.written[lo:hi]

    def place(self, size: int, address: int) -> int:
        """A range for a copy of ``size`` bytes of guest address ``address`` -> its offset."""
        self._drain()
        need = size + HEAP_SPARE
        want = address % HEAP_ALIGN
        for lo, hi in zip(self.free.lo, self.free.hi):
            s = lo + (want - lo) % HEAP_ALIGN
            if s + need <= hi:
                self.free.take(s, s + need)  # (the parts before and after stay free)
                return s
        s = self.top + (want - self.top) % HEAP_ALIGN
        if s + need > self.cap:
            self._grow(s + need)
        self.free.add(self.top, s)  # (the few bytes before it: free, merged with neighbours)
        self.top = s + need
        return s

    def release(self, off: int, size: int) -> None:
        """Give back the range ``place`` gave a copy of ``size`` bytes (at the next place)."""
        self._freed.append((off, off + size + HEAP_SPARE))

    def _drain(self) -> None:
        while self._freed:
            lo, hi = self._freed.pop()
            self.free.add(lo, hi)
        if self.free and self.free.hi[-1] == self.top:  # (a free end: the top comes down)
            lo = self.free.lo[-1]
            self.free.take(lo, self.top)
            self.top = lo

    def used(self) -> int:
        """Bytes placed and not released (the spare bytes and padding included)."""
        self._drain()
        return self.top - sum(hi - lo for lo, hi in self.free.ranges())

    def _grow(self, need: int) -> None:
        cap = max(2 * self.cap, -(-need // HEAP_MIN) * HEAP_MIN)  # (HEAP_MIN at least)
        buf = self.ops.alloc(cap)
        if self.top:
            self.ops.copy(buf, 0, self.buf, 0, self.top)  # (the copies' bytes; on the stream)
        if self._map is not None:
            m = self.ops.zeros(self.map_bytes(cap))
            self.ops.copy(m, 0, self._map, 0, self.map_bytes(self.cap))
            self._map = m
        self.buf, self.cap = buf, cap
        self.moves += 1
        call = self.on_move() if self.on_move is not None else None
        if call is not None:
            call()


class NumPyOps:
    """The device operations on host arrays: tests of the bookkeeping without a GPU.  Counts
    what crosses the (pretend) bus."""

    def __init__(self):
        self.up = self.down = 0  # bytes uploaded / downloaded

    def alloc(self, n: int):
        return np.full(n, 0xA5, np.uint8)  # (not zeroed: nothing may rely on it)

    def zeros(self, n: int):
        return np.zeros(n, np.uint8)

    def clear(self, buf) -> None:
        buf[...] = 0

    def upload(self, buf, off: int, host) -> None:
        buf[off : off + host.size] = host
        self.up += host.size

    def download(self, buf, off: int, n: int):
        self.down += n
        return buf[off : off + n].copy()

    def download_into(self, buf, off: int, out) -> None:
        self.down += out.size
        out[:] = buf[off : off + out.size]

    def copy(self, dst, doff: int, src, soff: int, n: int) -> None:
        dst[doff : doff + n] = src[soff : soff + n]

    def land(self, dst, doff: int, src, mask, o: int, n: int, table, pieces=None) -> None:
        """wl_land: the run table's bytes of the window [o, o + n) of ``src`` (the arena) into
        ``dst`` at ``doff`` (arena index o there), their ``mask`` bytes cleared (``land``)."""
        land(dst[doff:], src, mask, o, n, table)

    def land_launch(self, dst, doff: int, src, mask, o: int, n: int, table, pieces=None):
        """``land`` of these arguments as a call of no arguments, made once (a kept plan's)."""
        return partial(self.land, dst, doff, src, mask, o, n, table)

    def pinned(self, n: int) -> np.ndarray:
        return np.zeros(n, np.uint8)

    def gate_launch(self, rep, at: tuple, ok, sticky, table, bits: bool = False):
        return partial(gate, rep, at, ok, sticky, table, 5 if bits else 4)

    def land_gated_launch(self, dst, doff: int, src, mask, o: int, n: int, table, sticky):
        def go() -> None:
            if not sticky[0]:
                self.land(dst, doff, src, mask, o, n, table)

        return go

    def sync(self, stream=None) -> None:
        pass

    def runs(self, written) -> tuple[np.ndarray, np.ndarray]:
        m = map_flags(written)
        b = np.flatnonzero(np.diff(np.concatenate(([0], m.view(np.int8), [0]))))
        return b[0::2].astype(np.int64), b[1::2].astype(np.int64)


def is_bits(written) -> bool:
    """Whether a written map is the bit form (WAVELIFT_CUDA_MAP=bits, decision 0049's amendment
    h111): 32-bit words, bit i & 31 of word i >> 5 for arena byte i; else one byte per arena
    byte (nonzero: written).  The map's element type is its form (Resident.staging makes it)."""
    return written.dtype.itemsize == 4


def map_words(nbytes: int) -> int:
    """The words of a bit map over an arena of ``nbytes`` bytes."""
    return -(-nbytes // 32)


def piece_shift(written) -> int:
    """log2 of the arena bytes a landing piece covers: 16 with a byte map, 32 -- one map word,
    cleared by one thread with a store -- with a bit map."""
    return 5 if is_bits(written) else 4


def run_table(starts, ends, shift: int = 4) -> np.ndarray:
    """The run table wl_land lands from (uint64): the count c, then per run (sorted, disjoint
    arena ranges) its start, its end and the pieces -- arena blocks [Pq, Pq + P), P = 2^shift
    (piece_shift: 16 bytes, 32 for a bit map) -- that it and the runs before it meet."""
    s = np.asarray(starts, np.uint64)
    e = np.asarray(ends, np.uint64)
    t = np.empty(1 + 3 * s.size, np.uint64)
    t[0] = s.size
    t[1::3], t[2::3] = s, e
    sh, up = np.uint64(shift), np.uint64((1 << shift) - 1)
    t[3::3] = np.cumsum(((e + up) >> sh) - (s >> sh), dtype=np.uint64)
    return t


def map_flags(written) -> np.ndarray:
    """A host map (either form) as one bool per arena byte (a bit map: its words' bits, so a
    multiple of 32 of them; none past the arena is ever set)."""
    w = np.asarray(written)
    if is_bits(w):
        return np.unpackbits(w.view(np.uint8), bitorder="little").view(np.bool_)
    return w != 0


def _clear_bits(mask, ix) -> None:
    """Clear the bit map ``mask``'s bits of the arena bytes ``ix`` (an int array; the words as
    little-endian bytes: bit i & 7 of byte i >> 3 is bit i & 31 of word i >> 5)."""
    if sys.byteorder != "little":  # pragma: no cover
        raise RuntimeError("the bit map's host statement assumes a little-endian host")
    u8 = mask.view(np.uint8)
    np.bitwise_and.at(u8, ix >> 3, ~(np.left_shift(1, ix & 7)).astype(np.uint8))


def land(dst, src, mask, o: int, n: int, table) -> None:
    """wl_land in NumPy (what its CUDA source states): each run's bytes inside the window [o, o + n)
    of ``src`` into ``dst`` (arena index o at dst[0]) and their ``mask`` bytes (a bit map: bits)
    cleared -- every byte of a run is a written one (runs: the maximal spans of marked bytes), so
    no mask is read (the masked copy it replaced: tests/cuda/test_land_host.py,
    test_resident_host.py)."""
    t = np.asarray(table)
    c = int(t[0])
    bits = is_bits(mask)
    if c <= 8:  # (few runs: a slice each)
        for s, e in zip(t[1 : 1 + 3 * c : 3].tolist(), t[2 : 2 + 3 * c : 3].tolist()):
            lo, hi = max(s, o), min(e, o + n)
            if lo < hi:
                dst[lo - o : hi - o] = src[lo:hi]
                if bits:
                    _clear_bits(mask, np.arange(lo, hi))
                else:
                    mask[lo:hi] = 0
        return
    lo = np.maximum(t[1 : 1 + 3 * c : 3].astype(np.int64), o)
    hi = np.minimum(t[2 : 2 + 3 * c : 3].astype(np.int64), o + n)
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    if not lo.size:
        return
    size = hi - lo
    ix = np.arange(int(size.sum())) + np.repeat(lo - np.cumsum(size) + size, size)
    dst[ix - o] = src[ix]
    if bits:
        _clear_bits(mask, ix)
    else:
        mask[ix] = 0


def gate(rep, at: tuple, ok, sticky, table, shift: int = 4) -> None:
    """wl_gate in NumPy (what its CUDA source states; NumPyOps): the verdict, and where it is 0
    the runs as the run table wl_land_gated lands from (``table``, room for ``cap`` runs;
    ``shift``: its pieces', piece_shift -- wl_gate_bits for a bit map)."""
    status_at, esc_at, runs_at, starts_at, ends_at, verdict_at, cap = at
    h = np.asarray(rep)
    st = h[status_at : status_at + 64].view(np.uint32)
    c = int(h[runs_at : runs_at + 4].view(np.uint32)[0])
    s_ = e_ = None
    if sticky[0]:
        v = 2
    elif st[0] or st[4] or int(h[esc_at : esc_at + 8].view(np.uint64)[0]) or c > cap:
        v = 1
    else:
        s_ = np.sort(h[starts_at : starts_at + 8 * c].view(np.uint64))
        e_ = np.sort(h[ends_at : ends_at + 8 * c].view(np.uint64))
        pairs = np.asarray(ok).reshape(-1, 2)
        inside = lambda s, e: any(lo <= s and e <= hi for lo, hi in pairs)  # noqa: E731
        v = 0 if all(inside(s, e) for s, e in zip(s_, e_)) else 1
    h[verdict_at : verdict_at + 4].view(np.uint32)[0] = v
    if v:
        sticky[0] = 1
    else:
        t = run_table(s_, e_, shift)
        table[: t.size] = t


_RUNS_SRC = r"""
typedef unsigned long long u64;
typedef unsigned int u32;
/* every run of nonzero bytes of w[0, n): its first index into starts, one past its last into
   ends (each in the order threads get there; the host sorts), count[0] / count[1] their numbers */
/* the run starts and ends among w[b, b + 4) (b a multiple of 4) */
__device__ __forceinline__ void wl_runs_at(const unsigned char* w, u64 n, u64 b, u64* starts,
                                           u64* ends, u64 cap, u32* count) {
  const u32 x = *(const u32*)(w + b);  /* (n is a multiple of 8) */
  if (x == 0u) return;
  const bool before = b > 0 && w[b - 1] != 0, after = b + 4 < n && w[b + 4] != 0;
  if (((x - 0x01010101u) & ~x & 0x80808080u) == 0u && before && after) return;  /* inside */
  for (u32 k = 0; k < 4; k++) {
    const u64 j = b + k;
    if (!w[j]) continue;
    if (j == 0 || !w[j - 1]) { const u32 s = atomicAdd(&count[0], 1u); if (s < cap) starts[s] = j; }
    if (j + 1 == n || !w[j + 1]) { const u32 e = atomicAdd(&count[1], 1u); if (e < cap) ends[e] = j + 1; }
  }
}
/* the module's guesses (WL_HINT: hn bytes at hs) into the report at hd, by wl_runs' launch
   (amendment h161: a graph node less a pass, at the copy's place in the stream -- after the
   kernel, before the report's read-back; hn 0: none) */
__device__ __forceinline__ void wl_hints(const unsigned char* hs, unsigned char* hd, u64 hn) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < hn; i += (u64)gridDim.x * blockDim.x)
    hd[i] = hs[i];
}
extern "C" __global__ void wl_runs(const unsigned char* w, u64 n, u64* starts, u64* ends, u64 cap,
                                   u32* count, const unsigned char* hs, unsigned char* hd, u64 hn) {
  wl_hints(hs, hd, hn);
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; 4 * i < n; i += (u64)gridDim.x * blockDim.x)
    wl_runs_at(w, n, 4 * i, starts, ends, cap, count);
}
/* the same over a bit map (decision 0049's amendment h111): arena byte j written where bit j & 31
   of w[j >> 5] is set, w[0, nw) -- a run starts at a set bit whose bit before (the word before's
   bit 31 for bit 0) is clear and ends after a set bit whose next is clear.  At memory speed
   (amendment h161): a thread reads 4 words (16 bytes) of the aligned quads b[4q, 4q + 4) (b: w's
   16-byte bound at or below it; words outside w[0, nw) read as 0 and never loaded), its
   neighbours' edge words come from the lanes beside it by shuffle (from memory at the warp's two
   ends), and a warp with no run edge -- a map all ones inside a run, or all zero -- does nothing
   more; one with edges takes its room by one atomicAdd per kind.  The loop is the warp's (its
   shuffles): blockDim.x a multiple of 32, any grid */
#define WL_FULL 0xffffffffu  /* (as cfamily/types.h spells it: a redefinition the same) */
__device__ __forceinline__ u32 wl_word(const u32* b, u64 j, u64 lo, u64 hi) {
  return j >= lo && j < hi ? b[j] : 0u;
}
/* one kind of edge of the warp's quads (e: its lane's 4 words' edge bits; at: the arena byte of
   the quad's bit 0; add 1 for ends) into out: the warp's count of them from count by one atomicAdd
   (lane 31, the inclusive prefix's total), each lane's at its place after the lanes below it */
__device__ __forceinline__ void wl_put(uint4 e, u64 at, u32 add, u64* out, u64 cap, u32* count, u32 lane) {
  const u32 n = __popc(e.x) + __popc(e.y) + __popc(e.z) + __popc(e.w);
  u32 pre = n;
  for (u32 d = 1; d < 32; d <<= 1) {
    const u32 t = __shfl_up_sync(WL_FULL, pre, d);
    if (lane >= d) pre += t;
  }
  u32 base = 0u;
  if (lane == 31u && pre) base = atomicAdd(count, pre);
  u32 s = __shfl_sync(WL_FULL, base, 31) + pre - n;
  u32 x[4] = {e.x, e.y, e.z, e.w};
  for (u32 k = 0; k < 4; k++)
    while (x[k]) {
      const u32 i = (u32)__ffs((int)x[k]) - 1u;
      x[k] &= x[k] - 1u;
      if (s < cap) out[s] = at + 32u * k + i + add;
      s++;
    }
}
#define WL_STARTS(x, p) ((x) & ~(((x) << 1) | ((p) >> 31)))
#define WL_ENDS(x, n) ((x) & ~(((x) >> 1) | ((n) << 31)))
extern "C" __global__ void wl_runs_bits(const u32* w, u64 nw, u64* starts, u64* ends, u64 cap,
                                        u32* count, const unsigned char* hs, unsigned char* hd, u64 hn) {
  wl_hints(hs, hd, hn);
  const u64 a = ((u64)w >> 2) & 3u, hi = nw + a, nq = (hi + 3) >> 2;
  const u32* b = w - a;
  const u32 lane = threadIdx.x & 31u;
  for (u64 q = (u64)blockIdx.x * blockDim.x + threadIdx.x; q - lane < nq; q += (u64)gridDim.x * blockDim.x) {
    const u64 j = 4 * q;
    /* (the warp's end lanes' word beyond, loaded first: in flight with the quad, not after it;
       j = 0: j - 1 wraps, past hi: 0) */
    const u32 out = lane == 0u ? wl_word(b, j - 1, a, hi) : lane == 31u ? wl_word(b, j + 4, a, hi) : 0u;
    const uint4 v = j >= a && j + 4 <= hi ? *(const uint4*)(b + j)
        : make_uint4(wl_word(b, j, a, hi), wl_word(b, j + 1, a, hi), wl_word(b, j + 2, a, hi), wl_word(b, j + 3, a, hi));
    u32 p = __shfl_up_sync(WL_FULL, v.w, 1), n = __shfl_down_sync(WL_FULL, v.x, 1);
    if (lane == 0u) p = out;
    if (lane == 31u) n = out;
    const uint4 s = make_uint4(WL_STARTS(v.x, p), WL_STARTS(v.y, v.x), WL_STARTS(v.z, v.y), WL_STARTS(v.w, v.z));
    const uint4 e = make_uint4(WL_ENDS(v.x, v.y), WL_ENDS(v.y, v.z), WL_ENDS(v.z, v.w), WL_ENDS(v.w, n));
    if (!__any_sync(WL_FULL, (s.x | s.y | s.z | s.w | e.x | e.y | e.z | e.w) != 0u)) continue;
    const u64 at = 32 * (j - a);  /* (mod 2^64: the words below a hold no edge) */
    wl_put(s, at, 0u, starts, cap, count, lane);
    wl_put(e, at, 1u, ends, cap, count + 1, lane);
  }
}
/* a deferred in-place run's map after wl_runs (decision 0049, amendment h137): w[0, nw) -- the
   windows' map, holding only this run's marks -- zeroed (the next run's map must hold only its
   own), and first, where wl_runs counted more runs than the report has room for (count[0] > cap:
   they did not all come back), copied to aside[0, nw), the queue place's own, which the host scans
   for the exact runs when it reads the report.  Words of 32 bits either map form (a byte map's
   range is whole 8-byte pieces: Placed).  The clear by 16-byte stores from w's first 16-byte
   bound (amendment h161); the copy (rare) word by word, each thread copying a word before it
   clears it (aside's bound need not be w's) */
extern "C" __global__ void wl_aside(u32* w, u64 nw, u32* aside, const u32* count, u64 cap) {
  const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x, step = (u64)gridDim.x * blockDim.x;
  if (*count > cap) {
    for (u64 i = t; i < nw; i += step) { aside[i] = w[i]; w[i] = 0u; }
    return;
  }
  const u64 h0 = (4u - (((u64)w >> 2) & 3u)) & 3u, h = h0 < nw ? h0 : nw, nq = (nw - h) >> 2;
  for (u64 i = t; i < h; i += step) w[i] = 0u;
  uint4* q = (uint4*)(w + h);
  for (u64 i = t; i < nq; i += step) q[i] = make_uint4(0u, 0u, 0u, 0u);
  for (u64 i = h + 4 * nq + t; i < nw; i += step) w[i] = 0u;
}
/* WAVELIFT_CUDA_COUNT_SLOTS > 256 (decision 0009's amendment h152): a kernel's counts in its
   own buffer wide (kernel.h's WL_COUNTS: slot k's instructions at word 2k, lanes at 2k + 1),
   groups x 256 slots, added into the report's 256 (stats[8 + t] += wide[512g + t] over every
   group g) and zeroed for the next launch.  Blocks of 512 threads, thread t word t of each
   group (the loads coalesced): block i sums groups [FOLD i, FOLD (i + 1)) and adds once, so
   at most groups / FOLD blocks meet on one word */
#define WL_FOLD 8ull
extern "C" __global__ void wl_fold(u64* wide, u64 groups, u64* stats) {
  u64 s = 0ull;
  for (u64 g = WL_FOLD * blockIdx.x; g < groups && g < WL_FOLD * (blockIdx.x + 1ull); g++) {
    s += wide[512ull * g + threadIdx.x];
    wide[512ull * g + threadIdx.x] = 0ull;
  }
  if (s) atomicAdd(stats + 8 + threadIdx.x, s);
}
/* a dispatch's landing over its runs (decision 0026's amendment h109).  t: a run table
   (resident.run_table) -- t[0] the count c, then per run j its arena start t[1 + 3j] and end
   t[2 + 3j] (sorted, disjoint) and t[3 + 3j] the pieces (arena blocks [Pq, Pq + P), P = 2^SH)
   that runs 0..j meet.  Every byte of a run was written (runs: the maximal spans of marked
   bytes, wl_runs), so no map byte is read: each run's bytes inside the window [o, o + n) go from
   src (the arena) to dst (dst[0]: arena index o) and their marks are cleared, one piece per
   thread at a time -- a piece wholly inside its run and the window as 16 bytes at once (the map
   becomes zero where the dispatch marked it: the next dispatch need not clear it).  SH 4: a
   byte map, 16-byte pieces; SH 5: a bit map (32-bit words), 32-byte pieces, so that a whole
   piece's word is cleared by one store and only a piece's part (a run's or window's edge, where
   another thread may clear the word's other bits) takes an atomicAnd */
__device__ __forceinline__ u64 wl_above(const u64* t, u64 lo, u64 hi, u32 f, u64 x) {
  /* the first run j in [lo, hi) whose field f (0 start, 1 end, 2 pieces so far) exceeds x, else hi */
  while (lo < hi) {
    const u64 m = lo + (hi - lo) / 2;
    if (t[1 + 3 * m + f] > x) hi = m; else lo = m + 1;
  }
  return lo;
}
template <u32 SH>
static __device__ __forceinline__ void land(unsigned char* dst, const unsigned char* src,
                                            unsigned char* mask, u64 o, u64 n, const u64* t) {
  const u64 P = 1ull << SH;
  const u64 c = t[0], top = o + n;
  const u64 j0 = wl_above(t, 0, c, 1, o);        /* the first run ending after o */
  const u64 j1 = wl_above(t, j0, c, 0, top - 1); /* the first starting at or after o + n */
  if (j0 >= j1) return;
  /* (t[3j]: the pieces of the runs before j) the pieces of the window's bytes of runs j0..j1-1 */
  const u64 s0 = t[1 + 3 * j0], s1 = t[1 + 3 * (j1 - 1)], e1 = t[2 + 3 * (j1 - 1)];
  const u64 p0 = (j0 ? t[3 * j0] : 0) + ((s0 > o ? s0 : o) >> SH) - (s0 >> SH);
  const u64 p1 = (j1 > 1 ? t[3 * (j1 - 1)] : 0) + (((e1 < top ? e1 : top) + P - 1) >> SH) - (s1 >> SH);
  const bool wide = (((u64)src | (SH == 4 ? (u64)mask : 0ull)) & 15u) == 0u;
  const u64 da = ((u64)dst - o) & 15u; /* (dst's address of arena index 0, mod 16) */
  for (u64 p = p0 + (u64)blockIdx.x * blockDim.x + threadIdx.x; p < p1; p += (u64)gridDim.x * blockDim.x) {
    const u64 j = wl_above(t, j0, j1, 2, p);
    const u64 s = t[1 + 3 * j], e = t[2 + 3 * j];
    const u64 b = ((s >> SH) + p - (j ? t[3 * j] : 0)) << SH;
    u64 lo = s > b ? s : b, hi = e < b + P ? e : b + P;
    lo = lo > o ? lo : o;
    hi = hi < top ? hi : top;
    if (wide && lo == b && hi == b + P) {
      if (SH == 4) *(uint4*)(mask + b) = make_uint4(0u, 0u, 0u, 0u);
      else ((u32*)mask)[b >> 5] = 0u;
      for (u64 h = b; h < b + P; h += 16) {
        const uint4 v = *(const uint4*)(src + h);
        unsigned char* q = dst + (h - o);
        if (da == 0) *(uint4*)q = v;
        else if ((da & 7u) == 0) {
          ((u64*)q)[0] = (u64)v.x | ((u64)v.y << 32);
          ((u64*)q)[1] = (u64)v.z | ((u64)v.w << 32);
        } else if ((da & 3u) == 0) {
          ((u32*)q)[0] = v.x; ((u32*)q)[1] = v.y; ((u32*)q)[2] = v.z; ((u32*)q)[3] = v.w;
        } else for (u32 k = 0; k < 16; k++) q[k] = src[h + k];
      }
    } else if (SH == 4) {
      for (u64 i = lo; i < hi; i++) { dst[i - o] = src[i]; mask[i] = 0; }
    } else if (lo < hi) {
      for (u64 i = lo; i < hi; i++) dst[i - o] = src[i];
      const u32 k = (u32)(hi - lo);
      atomicAnd((u32*)mask + (b >> 5), ~((k == 32u ? 0xFFFFFFFFu : (1u << k) - 1u) << (u32)(lo - b)));
    }
  }
}
extern "C" __global__ void wl_land(unsigned char* dst, const unsigned char* src, unsigned char* mask,
                                   u64 o, u64 n, const u64* t) {
  land<4>(dst, src, mask, o, n, t);
}
extern "C" __global__ void wl_land_bits(unsigned char* dst, const unsigned char* src, u32* mask,
                                        u64 o, u64 n, const u64* t) {
  land<5>(dst, src, (unsigned char*)mask, o, n, t);
}
/* a deferred dispatch's verdict (one block of 64 threads; cap <= 64): 0 when no dispatch queued
   before it failed (*sticky zero), its report has no flag (status[0]), no escape record
   (status[4]) nor count (stats[2]), at most cap runs (all came back inline), and each run (the
   k-th smallest start with the k-th smallest end) lies inside one of the n ranges
   [ok[2i], ok[2i+1]) (arena offsets); else 1 (2: an earlier one failed) and *sticky set, so that
   no later queued dispatch lands either (wl_land_gated).  The verdict goes into the report's
   word at verdict_at, read back with it; where it is 0 the runs, sorted, go into the run table
   runs (room for cap runs; pieces of 2^SH bytes: wl_gate for wl_land_gated, wl_gate_bits for
   wl_land_gated_bits) that wl_land_gated lands from. */
template <u32 SH>
static __device__ __forceinline__ void gate(unsigned char* rep, u64 status_at, u64 esc_at, u64 runs_at,
                                            u64 starts_at, u64 ends_at, u64 verdict_at, u64 cap,
                                            const u64* ok, u64 n, u32* sticky, u64* runs) {
  __shared__ u64 s_[64], e_[64];
  __shared__ u32 bad, out;
  const u32 t = threadIdx.x;
  const u32* st = (const u32*)(rep + status_at);
  const u32 c = *(const u32*)(rep + runs_at);
  if (t == 0) {
    out = 0u;
    bad = *sticky ? 2u : ((st[0] | st[4]) != 0u || *(const u64*)(rep + esc_at) != 0ull || c > cap) ? 1u : 0u;
  }
  __syncthreads();
  const u64* S = (const u64*)(rep + starts_at);
  const u64* E = (const u64*)(rep + ends_at);
  if (bad == 0u && t < c) {
    const u64 s = S[t], e = E[t];
    u32 rs = 0, re = 0;
    for (u32 j = 0; j < c; j++) { rs += S[j] < s; re += E[j] < e; }  /* (starts distinct, ends too) */
    s_[rs] = s;
    e_[re] = e;
  }
  __syncthreads();
  if (bad == 0u && t < c) {
    bool in = false;
    for (u64 i = 0; i < n; i++) in |= ok[2 * i] <= s_[t] && e_[t] <= ok[2 * i + 1];
    if (!in) atomicOr(&out, 1u);
  }
  __syncthreads();
  if (t == 0) {
    const u32 v = bad ? bad : out;
    *(u32*)(rep + verdict_at) = v;
    if (v) *sticky = 1u;
    else {
      u64 pieces = 0;
      for (u32 j = 0; j < c; j++) {
        pieces += ((e_[j] + (1ull << SH) - 1) >> SH) - (s_[j] >> SH);
        runs[1 + 3 * j] = s_[j];
        runs[2 + 3 * j] = e_[j];
        runs[3 + 3 * j] = pieces;
      }
      runs[0] = c;
    }
  }
}
extern "C" __global__ void wl_gate(unsigned char* rep, u64 status_at, u64 esc_at, u64 runs_at,
                                   u64 starts_at, u64 ends_at, u64 verdict_at, u64 cap,
                                   const u64* ok, u64 n, u32* sticky, u64* runs) {
  gate<4>(rep, status_at, esc_at, runs_at, starts_at, ends_at, verdict_at, cap, ok, n, sticky, runs);
}
extern "C" __global__ void wl_gate_bits(unsigned char* rep, u64 status_at, u64 esc_at, u64 runs_at,
                                        u64 starts_at, u64 ends_at, u64 verdict_at, u64 cap,
                                        const u64* ok, u64 n, u32* sticky, u64* runs) {
  gate<5>(rep, status_at, esc_at, runs_at, starts_at, ends_at, verdict_at, cap, ok, n, sticky, runs);
}
/* wl_land unless *sticky is set (wl_gate: this dispatch or one queued before it failed; else
   wl_gate wrote the run table t) */
extern "C" __global__ void wl_land_gated(unsigned char* dst, const unsigned char* src,
                                         unsigned char* mask, u64 o, u64 n, const u64* t,
                                         const u32* sticky) {
  if (*(volatile const u32*)sticky) return;
  land<4>(dst, src, mask, o, n, t);
}
extern "C" __global__ void wl_land_gated_bits(unsigned char* dst, const unsigned char* src,
                                              u32* mask, u64 o, u64 n, const u64* t,
                                              const u32* sticky) {
  if (*(volatile const u32*)sticky) return;
  land<5>(dst, src, (unsigned char*)mask, o, n, t);
}
"""


# wl_fold's groups of 256 count slots a block sums (its WL_FOLD: the grid the host launches)
_FOLD = re.search(r"^#define WL_FOLD (\d+)ull$", _RUNS_SRC, re.M)
if _FOLD is None:
    raise ImportError("resident._RUNS_SRC has no WL_FOLD: wl_fold's grid is unknown")
FOLD_GROUPS = int(_FOLD.group(1))


class CuPyOps:
    """The device operations with CuPy, all on the current stream (ordered with the launches)."""

    def __init__(self):
        import cupy

        self.cp = cupy
        self.up = self.down = 0
        self._mod = cupy.RawModule(code=_RUNS_SRC, options=("-std=c++14",))
        # (per map form, by is_bits: bytes, bits -- decision 0049's amendment h111)
        get = self._mod.get_function
        self._runs = (get("wl_runs"), get("wl_runs_bits"))
        self._land = (get("wl_land"), get("wl_land_bits"))
        self._gate = (get("wl_gate"), get("wl_gate_bits"))
        self._land_gated = (get("wl_land_gated"), get("wl_land_gated_bits"))
        self._aside = get("wl_aside")
        self._fold = get("wl_fold")
        self._cap = 0
        self._starts = self._ends = None
        self._sms: int | None = None  # (the device's SMs: ``_quads_grid``, asked once)

    def alloc(self, n: int):
        return self.cp.empty(max(n, 1), self.cp.uint8)

    def zeros(self, n: int):
        return self.cp.zeros(n, self.cp.uint8)

    def clear(self, buf) -> None:
        """Zero a device array (a memset on the stream: no wait)."""
        buf.fill(0)

    def upload(self, buf, off: int, host) -> None:
        buf[off : off + host.size].set(np.ascontiguousarray(host))
        self.up += host.size

    def download(self, buf, off: int, n: int):
        self.down += n
        return buf[off : off + n].get()

    def download_into(self, buf, off: int, out) -> None:
        """Into the host array ``out`` (contiguous uint8) itself: no new array to fault in and
        copy again (after the stream's work so far, as every synchronous copy)."""
        n = int(out.size)
        if n:
            rt = self.cp.cuda.runtime
            rt.memcpy(out.ctypes.data, buf.data.ptr + off, n, rt.memcpyDeviceToHost)
        self.down += n

    def copy(self, dst, doff: int, src, soff: int, n: int) -> None:
        if n:
            dst[doff : doff + n].data.copy_from_device_async(src[soff : soff + n].data, n)

    @staticmethod
    def _grid(n: int) -> tuple[int, ...]:
        return (max(1, min(-(-n // 256), 8192)),)

    def _quads_grid(self, words: int) -> tuple[int, ...]:
        """wl_runs_bits' and wl_aside's grid over ``words`` map words (4 a thread, grid-stride):
        a thread a quad up to QUAD_WAVES blocks of 256 an SM -- enough for the device's whole
        residency to keep 16 bytes a thread in flight, no block scheduled for nothing."""
        if self._sms is None:
            self._sms = int(self.cp.cuda.Device().attributes["MultiProcessorCount"])
        return (max(1, min(-(-(words // 4 + 2) // 256), QUAD_WAVES * self._sms)),)

    def land(self, dst, doff: int, src, mask, o: int, n: int, table, pieces=None) -> None:
        """wl_land over the run table ``table`` (device uint64): the runs' bytes of the window
        [o, o + n) of the arena ``src`` into ``dst`` at ``doff`` (arena index o there), their
        bytes of the written map ``mask`` cleared; ``pieces``: how many 16-byte pieces the
        window's runs meet when the caller knows (the grid), else at most the window's."""
        self.land_launch(dst, doff, src, mask, o, n, table, pieces)()

    def land_launch(self, dst, doff: int, src, mask, o: int, n: int, table, pieces=None):
        """``land`` of these arguments as a call of no arguments, its grid and argument views
        made once (a kept plan's: runtime.Again)."""
        if not n or pieces == 0:
            return _nothing
        bits = is_bits(mask)
        grid = self._grid((n >> piece_shift(mask)) + 2 if pieces is None else pieces)
        return partial(
            self._land[bits], grid, (256,), (dst[doff:], src, mask, np.uint64(o), np.uint64(n), table)
        )

    def gate_launch(self, rep, at: tuple, ok, sticky, table, bits: bool = False):
        """wl_gate over the report ``rep`` as a call of no arguments made once (a deferred
        plan's: runtime.Again.defer); ``at``: (status, escape count, runs' count, starts, ends,
        verdict) byte offsets and the inline runs' room; ``ok``: the device u64 table of the
        ranges runs may lie in (pairs); ``table``: the run table it writes when the dispatch
        may land (device uint64, room for the inline runs: wl_land_gated's); ``bits``: the
        dispatch's map is a bit map (the table's pieces are 32 bytes: wl_gate_bits)."""
        args = (rep, *(np.uint64(x) for x in at), ok, np.uint64(ok.size // 2), sticky, table)
        return partial(self._gate[bool(bits)], (1,), (64,), args)

    def land_gated_launch(self, dst, doff: int, src, mask, o: int, n: int, table, sticky):
        """``land_launch`` that lands nothing while ``sticky`` is set (wl_land_gated: the run
        table is wl_gate's, its grid as for the whole window)."""
        if not n:
            return _nothing
        return partial(
            self._land_gated[is_bits(mask)],
            self._grid((n >> piece_shift(mask)) + 2),
            (256,),
            (dst[doff:], src, mask, np.uint64(o), np.uint64(n), table, sticky),
        )

    def sync(self, stream=None) -> None:
        """Wait for ``stream``'s work (None: the current stream's; the deferred dispatches'
        reports read: Resident.flush)."""
        (self.cp.cuda.get_current_stream() if stream is None else stream).synchronize()

    def runs_call(self, written, count, inline, hints=None) -> tuple:
        """``runs_launch(written, count, inline, cleared=True, hints)`` as two calls of no
        arguments made once (a kept plan's: runtime.Again): the kernel's launch, its grid and
        arguments made here, and the note of what ``runs_finish`` reads, as ``runs_launch``
        makes it."""
        n = int(written.size)
        starts, ends = inline
        cap = int(starts.size)
        go = partial(
            self._runs[is_bits(written)],
            self._runs_grid(written),
            (256,),
            (written, np.uint64(n), starts, ends, np.uint64(cap), count, *_hint_args(hints)),
        )
        last = (written, count)

        def note() -> None:
            self._last = last
            self._inline = cap

        return go, note

    def _runs_grid(self, written) -> tuple[int, ...]:
        """wl_runs' grid: a bit map's quads of words (``_quads_grid``), a byte map's 4 bytes a
        thread."""
        n = int(written.size)
        return self._quads_grid(n) if is_bits(written) else self._grid(-(-n // 4))

    def aside_call(self, written, aside, count, cap: int):
        """wl_aside as a call of no arguments made once (a queue place's: runtime.InPlace):
        ``written`` (a map range, whole 32-bit words) zeroed, copied to ``aside`` (as large)
        first where ``count`` (device u32: wl_runs' count) passed ``cap``."""
        w, a = written.view(self.cp.uint32), aside.view(self.cp.uint32)
        n = int(w.size)
        return partial(self._aside, self._quads_grid(n), (256,), (w, np.uint64(n), a, count, np.uint64(cap)))

    def fold_call(self, wide, groups: int, stats):
        """wl_fold as a call of no arguments made once: the count slots ``wide`` (device u64,
        ``groups`` x 512 words, zero again after) added into the report's ``stats`` (its u64
        view: the slots from word 8) -- decision 0009's amendment h152."""
        return partial(self._fold, (-(-groups // FOLD_GROUPS),), (512,), (wide, np.uint64(groups), stats))

    def pinned(self, n: int) -> np.ndarray:
        """A host array of ``n`` bytes in page-locked memory (a kept report's read-back)."""
        return np.frombuffer(self.cp.cuda.alloc_pinned_memory(n), np.uint8, n)

    def runs_launch(self, written, count, inline=None, cleared: bool = False, hints=None) -> None:
        """Start wl_runs over ``written``; ``count`` (2 device u32) gets the number of runs,
        which comes back with the dispatch's report; then ``runs_finish``.  ``inline``: None,
        or (starts, ends) device u64 arrays inside the report: room for that many runs, which
        then come back with it (more: runs_finish runs the scan again with room for all).
        ``cleared``: the caller has zeroed ``count`` on the stream since anything last wrote it
        (the runtime's report, cleared before each launch: no memset here).  ``hints``: None,
        or (report address, WL_HINT's address, bytes): the module's guesses copied into the
        report by the same launch (wl_hints)."""
        if not cleared:
            count.fill(0)
        n = int(written.size)
        if inline is not None:
            starts, ends = inline
            cap = int(starts.size)
        else:
            if self._cap < SPAN_CAPACITY:
                self._grow(SPAN_CAPACITY)
            starts, ends, cap = self._starts, self._ends, self._cap
        self._runs[is_bits(written)](
            self._runs_grid(written),
            (256,),
            (written, np.uint64(n), starts, ends, np.uint64(cap), count, *_hint_args(hints)),
        )
        self._last = (written, count)
        self._inline = cap if inline is not None else 0

    def _grow(self, cap: int) -> None:
        self._cap = cap
        self._starts = self.cp.empty(cap, self.cp.uint64)
        self._ends = self.cp.empty(cap, self.cp.uint64)

    def runs_finish(self, count: int, inline=None) -> tuple[np.ndarray, np.ndarray]:
        """The runs (sorted arena offsets) given their count (read back with the report);
        ``inline``: the (starts, ends) host copies of runs_launch's inline room, read back with
        the report (used when they hold every run)."""
        if count == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if self._inline and count <= self._inline and inline is not None:
            s = inline[0][:count].astype(np.int64)
            e = inline[1][:count].astype(np.int64)
            s.sort()
            e.sort()
            return s, e
        if self._inline or count > self._cap:  # (more runs than room: again, with room for all)
            self._grow(max(count, SPAN_CAPACITY, self._cap))
            self.runs_launch(*self._last)
        s = self._starts[:count].get().astype(np.int64)
        e = self._ends[:count].get().astype(np.int64)
        self.down += 16 * count
        s.sort()
        e.sort()
        return s, e

    def runs(self, written) -> tuple[np.ndarray, np.ndarray]:
        count = self.cp.zeros(2, self.cp.uint32)
        self.runs_launch(written, count)
        return self.runs_finish(int(count[:1].get()[0]))


def _hint_args(hints) -> tuple:
    """wl_runs' last three arguments: WL_HINT's address, the report's place for it, the bytes
    (``hints``: (report address, WL_HINT's address, bytes), as runtime's ``hint_go``; None:
    no copy)."""
    if hints is None:
        return np.uint64(0), np.uint64(0), np.uint64(0)
    dst, src, nb = hints
    return np.uint64(src), np.uint64(dst), np.uint64(nb)


def spans(starts, ends, win) -> list[tuple[int, int]]:
    """The runs (arena offsets, sorted) cut at window bounds as guest (address, size) write spans,
    window by window: what WindowSet.spans finds from the host map."""
    lay = getattr(win, "layout", None)
    offs = lay.offs if lay is not None else [int(o) for o in win.offs]  # (the layout's int list)
    return spans_of(starts.tolist(), ends.tolist(), offs, win.windows)


def spans_of(starts: list, ends: list, offs: list, windows) -> list[tuple[int, int]]:
    """``spans`` of the runs as sorted int lists, the windows' arena offsets ``offs`` (ints, in
    window order: the arena's order); a run outside every window (``outside``: only a broken
    report has one) refuses the dispatch ``backend.bad_report`` before anything of it lands."""
    cut = cut_runs(starts, ends, offs, offs, windows)
    n = outside(cut, starts, ends)
    if n:
        raise Refused(
            "backend.bad_report",
            f"the written map marks {n} arena byte(s) outside every window; a kernel stores only through its windows",
        )
    return cut_spans(cut, offs, windows)


def cut_runs(starts: list, ends: list, firsts: list, offs: Sequence[int], windows, order=None) -> list:
    """The runs (sorted int lists of offsets into an arena or the heap) cut at the bounds of
    the windows placed at ``offs`` (window order) -> [(window index, lo, hi)] in offset order;
    ``firsts``: those offsets sorted, ``order[i]`` the window at ``firsts[i]`` (None: ``offs``
    is sorted already).  A piece outside every window is left out: ``outside`` counts those
    bytes, which a kernel never marks (it stores only through its windows), so every caller
    refuses a report with any (a broken report: nothing of it lands)."""
    out = []
    n = len(firsts)
    for s, e in zip(starts, ends):
        i = bisect_right(firsts, s) - 1
        if i < 0:
            i = 0
        while i < n and firsts[i] < e:
            k = i if order is None else order[i]
            o = offs[k]
            lo, hi = max(s, o), min(e, o + windows[k].size)
            if lo < hi:
                out.append((k, lo, hi))
            i += 1
    return out


def outside(cut: list, starts: list, ends: list) -> int:
    """The bytes of the runs (sorted, disjoint) that ``cut_runs``' pieces ``cut`` leave out:
    marked outside every window.  The one check of both paths (h144): the arena's refuses
    ``backend.bad_report`` (``spans_of``), in place's is a failed proof (runtime._settle_in_place)."""
    return sum(ends) - sum(starts) - sum(hi - lo for _, lo, hi in cut)


def cut_spans(cut: list, offs: list, windows) -> list[tuple[int, int]]:
    """``cut_runs``' pieces as guest (address, size) write spans, in the pieces' order."""
    return [(windows[k].address + lo - offs[k], hi - lo) for k, lo, hi in cut]


class Placed:
    """A dispatch's windows as its plan places them in the heap (an in-place dispatch's: decision
    0049 step 4), worked out once per dispatch and kept by its kept plan: ``offs`` each window's
    heap offset (window order), ``firsts`` / ``order`` those sorted and the window at each,
    ``hull`` the heap bytes [lo, hi) covering every window, widened to whole words of the map
    (32 bytes a word of a bit map, 8-byte pieces of a byte map: what wl_runs reads and wl_aside
    copies; the map at the hull's ends holds no other dispatch's marks), ``marks`` the same over
    the windows its kernel can mark (``written``: their indices, the lean build's -- h157 --;
    None: every window, so ``marks`` is ``hull``; kept: where its queued launches may write,
    h165), and ``scan`` the map over ``marks`` (the view
    wl_runs reads and wl_aside copies and clears, so a run's heap offset is its offset in the
    view plus ``marks[0]``) -- nothing an in-place dispatch does per launch is proportional to
    the heap's size (h134), nor to the windows it only reads where its build cannot mark them
    (h157).  The hull is where a run whose runs cannot be read may have written
    (runtime._lost_in_place, DeferredInPlace.fail: h144)."""

    __slots__ = ("offs", "firsts", "order", "scan", "hull", "marks", "written", "_cut", "_booking", "facts")

    def __init__(self, heap, plan, windows, written: frozenset | None = None):
        self.written = written  # (also where its queued launches may write: InPlace.note)
        self.offs = offs = tuple(e.off + at for e, at in plan)
        self.order = sorted(range(len(offs)), key=offs.__getitem__)
        self.firsts = [offs[k] for k in self.order]
        self.hull = self._words(heap, [(o, o + w.size) for o, w in zip(offs, windows)])
        if written is None:
            self.marks = self.hull
        else:  # (no window it can mark: the hull's first word, which stays zero)
            got = [(offs[k], offs[k] + windows[k].size) for k in written]
            self.marks = self._words(heap, got or [(self.hull[0], self.hull[0])])
        self.scan = heap.map_over(*self.marks)
        # (the last ``cut`` and ``booking``: a stream of launches writes the same runs each time)
        self._cut: tuple | None = None
        self._booking: tuple | None = None
        self.facts: tuple | None = None  # (runtime._settle_in_place's, by the cut they are of)

    @staticmethod
    def _words(heap, ranges: list) -> tuple[int, int]:
        """The heap bytes [lo, hi) covering ``ranges`` (heap lo, hi), widened to whole words of
        the map (at least one)."""
        g = 32 if heap.bits else 8
        lo = min((a for a, _ in ranges), default=0) // g * g
        return lo, max(-(-max((b for _, b in ranges), default=0) // g) * g, lo + g)

    def runs(self, starts: list, ends: list) -> tuple[list, list]:
        """wl_runs' runs over ``scan`` (offsets in it) as heap offsets."""
        b = self.marks[0]
        if not b:
            return starts, ends
        # (a stream's common report, once a launch: one run, added without the comprehensions
        # -- a function call each in 3.11 -- measured ~0.2 us against ~0.55 by timeit (h151);
        # the same lists as the general form: tests/cuda/test_inplace_host.py)
        if len(starts) == 1:
            return [starts[0] + b], [ends[0] + b]
        return [x + b for x in starts], [x + b for x in ends]

    def cut(self, windows, starts: list, ends: list) -> list:
        """``cut_runs`` of the runs (sorted heap offsets; lists not changed after) at these
        windows -- the list handed out last time where the runs and windows are the same (a
        pure function of them and this placing; the caller does not change it)."""
        last = self._cut
        if last is not None and last[0] is windows and last[1] == starts and last[2] == ends:
            return last[3]
        cut = cut_runs(starts, ends, self.firsts, self.offs, windows, self.order)
        self._cut = (windows, starts, ends, cut)
        return cut

    def booking(self, windows, plan, cut: list) -> tuple:
        """What booking ``cut`` (``cut``'s list) writes, worked out once per cut list: ([(whether
        the piece is its window's first, entry, lo, hi in the entry)], write spans in address
        order, bytes, the windows' indices) -- ``Resident.landed_in_place``."""
        last = self._booking
        if last is not None and last[0] is cut and last[1] is windows and last[2] is plan:
            return last[3]
        rows, spans_, total, last_k = [], [], 0, None
        for k, lo, hi in sorted(cut):  # (window order: address order; in a window, heap order)
            w, (e, at) = windows[k], plan[k]
            d = lo - self.offs[k]
            rows.append((k != last_k, e, at + d, at + d + hi - lo))
            last_k = k
            spans_.append((w.address + d, hi - lo))
            total += hi - lo
        got = (rows, spans_, total, frozenset(k for k, _, _ in cut))
        self._booking = (cut, windows, plan, got)
        return got


class Resident:
    """The device copies of one GuestMemory's allocations (kept as weak references: a freed and
    forgotten allocation drops its copy)."""

    def __init__(self, ops):
        self.ops = ops
        # kept dispatch plans (runtime.Again) and written maps left as their landing cleared them
        # (``clear``); WAVELIFT_CUDA_AGAIN=off: every map cleared before each kernel (A/B runs)
        self.again = settings.get("WAVELIFT_CUDA_AGAIN") != "off"
        self.entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._tables: dict = {}  # (dtype, bytes) -> device array (``table``)
        # trace/windows.Layout -> its device window tables (``window_tables``)
        self._layout_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._staging: dict = {}  # (arena bytes, report bytes, bit map) -> arrays (``staging``)
        # id(kept arena) -> (arena, layout, [(entry, version) per window]): the windows as the
        # device copies held them at those versions are in the arena (``gather`` skips them)
        self._arena_state: dict = {}
        self.spare = None  # (runtime: the scratch word of dispatches without wave scratch)
        self.zero_word = None  # (runtime: the one-word wavebase table of whole groups)
        self.events = None  # (runtime: the two timing events around a dispatch's kernel)
        # (layout, memory, generation, [allocation per window], entry_count, plan or None):
        # ``prepare``'s finds, kept, and the plan it made from them
        self._finds: tuple | None = None
        # a new number whenever an entry is made or taken away (``entry``, ``pull_all_of``): the
        # same count, the same entry object for each allocation still held (prepare's kept plan)
        self.entry_count = 0
        # a new number whenever anything a kept dispatch plan (runtime.Again) depends on may
        # have changed: a host write or pull, an entry made or taken away, a settle, a landing, a
        # kernel launched into a kept arena, a staging set dropped -- unchanged since a plan's
        # landing, every device copy, shadow, dirty range and kept arena is as it left them
        self.changes = 0
        # written maps a kernel may have marked since their last landing (``clear``): landing
        # clears the map bytes of the runs it lands (wl_land), so a map that landed is zero again
        self._dirty_maps: dict = {}
        self._pairs: dict = {}  # id(report) -> (report, written map, both: one buffer)
        self._readback: dict = {}  # id(report) -> (report, its host array: ``readback``)
        # run/execute.py's kept runs of dispatches on this memory (its records hold them weakly:
        # a dropped memory drops them), by id of their config
        self.kept: dict = {}
        # deferred dispatches (runtime.Deferred, WAVELIFT_CUDA_DEFER=on) launched and not yet read,
        # in launch order; the device word wl_gate sets when one fails (``flush`` clears it);
        # whether ``flush`` is reading them (no deferral, no new device copy meanwhile)
        self.pending: list = []
        # where they may write (``queue``): {entry: RangeSet of its bytes} over the queue's launches
        # since it was last empty, or None -- one may write anything; a host read elsewhere does
        # not read the queue (``pull``: decision 0049's amendment h165); the last reach merged
        self._reach: dict | None = {}
        self._reach_of: list | None = None
        # the entries a queued in-place launch may store into (``queue``'s ``stores``, merged as
        # ``_reach``): its stores land with no gate, so a launch allocation among them (the
        # kernargs' device copy) may hold other bytes than the host booked -- ``may_store``
        self._stores: set = set()
        self._stores_of: list | None = None
        self.depth = DEFER_DEPTH
        self._sticky = None
        self._gate_runs = None
        self.flushing = False
        # the stream they were launched on (a deferral on another one waits: runtime.Again.defer)
        self.stream = None
        # WAVELIFT_CUDA_HEAP=one: every device copy a range of one Heap (decision 0049, step 2)
        self.heap: Heap | None = None
        self._reports: dict = {}  # (bytes -> an in-place dispatch's report: ``report``)
        self._counts: dict = {}  # (slots -> a wide-count kernel's slots: ``counts``)
        self._asides: list = []  # (the queue places' asides, by place: ``aside``)
        if settings.get("WAVELIFT_CUDA_HEAP") == "one":
            self.heap = Heap(ops, settings.get("WAVELIFT_CUDA_MAP") == "bits")
            # (weakly: the entries' finalizers hold the heap, which must not hold this memory's
            # Resident -- and through its kept runs the memory -- alive)
            self.heap.on_move = weakref.WeakMethod(self._moved)

    def stamp(self, alloc):
        """Something equal to the next stamp of ``alloc`` exactly while its bytes stay the same
        (no host write through GuestMemory and no dispatch landing in it), or None when that is
        not known: no device copy, or a shared array (its owner writes it behind our back).
        What the tracer's cache checks instead of hashing the bytes again (decision 0029)."""
        e = self.entries.get(alloc)
        if e is None or e.shared:
            return None
        if Resident.may_settle(e):  # (most stamps: nothing to settle, no call)
            if self.settle(e, alloc):
                self.changes += 1
        return e.version

    def stamps(self, allocs) -> tuple | None:
        """What ``holds`` checks: each of ``allocs``' device copy and stamp now (None when one
        has no stamp) and the entry count.  For a kept plan's checks of many stamps at once."""
        get = self.entries.get
        pairs = []
        for a in allocs:
            st = self.stamp(a)
            if st is None:
                return None
            pairs.append((get(a), st))
        return self.entry_count, tuple(pairs)

    def holds(self, token) -> bool:
        """Whether each allocation of ``stamps``' token still has the stamp it had then: no
        entry made or taken since (the same entry objects: ``entry_count``) and each entry at
        that version.  (An entry whose version moved is not stamped again here, so a settle
        that would bring it back is not made: False, where ``stamp`` might give the same
        number -- the caller's full path then asks ``stamp``.  While its version is the one
        noted, nothing touched it since, so nothing is there to settle: ``stamp`` gives it.)"""
        if token[0] != self.entry_count:
            return False
        for e, v in token[1]:
            if e.version != v:
                return False
        return True

    @staticmethod
    def may_settle(e) -> bool:
        """Whether settle can change ``e``: a shadow kept, host writes since the clean version."""
        return e.shadow is not None and e.version != e.clean and bool(e.host_dirty)

    @staticmethod
    def settle(e, alloc) -> bool:
        """A small allocation the host wrote again with the bytes its device copy holds (a
        Device's kernargs and dispatch packet, rewritten each launch): nothing to upload, and
        its version goes back to the one those bytes had (the same bytes: the same stamp).
        -> whether it settled."""
        if not Resident.may_settle(e):
            return False
        data = alloc._data
        if all(np.array_equal(data[lo:hi], e.shadow[lo:hi]) for lo, hi in e.host_dirty.ranges()):
            e.host_dirty = RangeSet()
            e.version = e.clean
            return True
        return False

    def window_tables(self, win) -> tuple:
        """The device tables (starts, ends, offsets; one spare entry each) of ``win``'s layout,
        kept while the layout is (the same windows again: no key built from their bytes)."""
        lay = win.layout
        t = self._layout_tables.get(lay)
        if t is None:
            # (never mix uint64 with Python ints: NumPy would go through float64 and round
            # 0xffff8000_xxxxxxxx addresses)
            t = (
                self.table(np.append(np.asarray(win.starts, np.uint64), np.uint64(0))),
                self.table(np.append(np.asarray(win.ends, np.uint64), np.uint64(0))),
                self.table(np.append(np.asarray(win.offs, np.int64), np.int64(0))),
            )
            self._layout_tables[lay] = t
        return t

    def staging(self, nbytes: int, report: int, bits: bool = False):
        """(arena of nbytes + 8, written map, report of ``report`` bytes) device arrays for one
        dispatch -- the map one byte per arena byte, or with ``bits`` (the module's form:
        Module.map_bits) map_words(nbytes) uint32 words of one bit per byte (is_bits):
        kept for the next dispatches of the same sizes and form (the last
        STAGING, each at most STAGING_MAX_BYTES, together at most STAGING_TOTAL_BYTES), else fresh.  The arena's bytes outside the
        windows are zero (a kernel stores only inside windows); the caller gathers the windows
        into it and clears the written map and the report before each launch."""
        key = (nbytes, report, bool(bits))
        st = self._staging.pop(key, None)
        if st is None:
            # (the report and the written map in one buffer, the report first at a 16-byte
            # bound: ``clear`` zeroes both with one memset when the map needs it)
            at = -(-report // 16) * 16
            both = self.ops.zeros(at + (4 * map_words(nbytes) if bits else nbytes))
            rep, written = both[:report], both[at:]
            if bits:
                written = written.view(np.uint32)
            st = (self.ops.zeros(nbytes + 8), written, rep)
            self._pairs[id(rep)] = (rep, written, both)
        if nbytes <= STAGING_MAX_BYTES:
            self._staging[key] = st
            while len(self._staging) > 1 and (
                len(self._staging) > STAGING or sum(k[0] for k in self._staging) > STAGING_TOTAL_BYTES
            ):
                old = self._staging.pop(next(iter(self._staging)))
                for c, kp in list(self.kept.items()):  # (its plans: they could not run again)
                    if kp.ag.arena is old[0]:
                        del self.kept[c]
                self._arena_state.pop(id(old[0]), None)
                self._pairs.pop(id(old[2]), None)
                self._dirty_maps.pop(id(old[1]), None)
                self.changes += 1
        else:
            self._pairs.pop(id(st[2]), None)
        return st

    def readback(self, rep) -> np.ndarray:
        """A host array of ``rep``'s size (page-locked memory) to read the report ``rep`` back
        into (a kept plan's: runtime.Again), kept per report array (the last STAGING)."""
        hit = self._readback.get(id(rep))
        if hit is not None and hit[0] is rep:
            return hit[1]
        host = self.ops.pinned(int(rep.size))
        self._readback[id(rep)] = (rep, host)
        while len(self._readback) > STAGING:
            del self._readback[next(iter(self._readback))]
        return host

    def clear(self, rep, written) -> None:
        """Zero a dispatch's report and written map before its kernel, on the stream: one
        memset of the report, and of the map with it (one buffer: ``staging``) only when a
        kernel may have marked it since it last landed (a landing clears what it reads)."""
        pair = self._pairs.get(id(rep))
        if not self.again or pair is None or pair[0] is not rep or pair[1] is not written:
            self.ops.clear(rep)
            self.ops.clear(written)
        elif id(written) in self._dirty_maps:
            del self._dirty_maps[id(written)]
            self.ops.clear(pair[2])
        else:
            self.ops.clear(rep)

    def clears_report_only(self, rep, written) -> bool:
        """Whether ``clear(rep, written)`` would zero the report alone and change nothing else
        (a kept pair whose map landed): what a captured kept run (runtime.Again) replays."""
        pair = self._pairs.get(id(rep))
        return bool(
            self.again
            and pair is not None
            and pair[0] is rep
            and pair[1] is written
            and id(written) not in self._dirty_maps
        )

    def _kept(self, arena) -> bool:
        for st in self._staging.values():  # (a loop: twice per dispatch)
            if st[0] is arena:
                return True
        return False

    def launched(self, arena, written=None) -> None:
        """A kernel may have stored into ``arena`` (and marked ``written``): nothing in it is
        known to equal the device copies until ``commit`` lands its writes there, and the map
        is not known to be zero (``clear`` clears it whole before the next kernel)."""
        self._arena_state.pop(id(arena), None)
        if written is not None and self._kept(arena):  # (a kept pair's map: ``clear``)
            self._dirty_maps[id(written)] = written
        self.changes += 1

    def table(self, host):
        """A device copy of the small read-only table ``host`` (the window tables), kept for
        the next dispatches with the same windows (the last TABLES of them)."""
        key = (host.dtype.str, host.tobytes())
        t = self._tables.pop(key, None)
        if t is None:
            t = self.ops.zeros(host.nbytes).view(host.dtype)
            self.ops.upload(t.view(np.uint8), 0, host.view(np.uint8))
        self._tables[key] = t  # (last used last)
        while len(self._tables) > TABLES:
            del self._tables[next(iter(self._tables))]
        return t

    def sticky(self):
        """The device word wl_gate sets when a deferred dispatch fails (zero until then)."""
        if self._sticky is None:
            self._sticky = self.ops.zeros(4).view(np.uint32)
        return self._sticky

    def gate_runs(self, cap: int):
        """The run table wl_gate writes when a deferred dispatch may land and its wl_land_gated
        calls land from (device uint64, room for ``cap`` runs): one for every plan -- the
        queue's dispatches run one after another on one stream (``stream``), each dispatch's
        gate before its landings and after the last one's."""
        t = self._gate_runs
        if t is None:
            t = self._gate_runs = self.ops.zeros(8 * (1 + 3 * cap)).view(np.uint64)
        elif t.size < 1 + 3 * cap:  # (never made again: captured graphs hold its address)
            raise ValueError("a gate's run table with room for more runs than the first one")
        return t

    def flush(self, front: int = 0) -> None:
        """Read the reports of the deferred dispatches (``pending``), in launch order: each one
        wl_gate passed landed on the device (its result is filled: ``settle``); from the first
        one it did not (itself failed, or it was queued after one that did: nothing of either
        landed), each is undone on the host's side (``fail``) and run again through
        execute_dispatch (``replay``), so every result is what it would have been without
        deferral.  A deferred in-place dispatch (runtime.DeferredInPlace) has no gate: its bytes
        stand; it settles where its proof held, and from the first that did not, each one's
        copies are made unusable (``fail``: broke_in_place) and its replay is refused
        ``backend.proof``, as each would have been without deferral.  Called before the host
        writes a device copy's allocation or reads bytes of it that a queued launch may write
        (``pull``, ``queue``), before any dispatch not deferred, when a result is read and when
        the queue is full.

        ``front`` (the queue full: runtime's deferrals): only the oldest ``front`` are read,
        after the last of them finished (its stop event), the others left running and queued --
        the device is never drained to read a full queue (a stream of passes kept the GPU idle
        while the host read all sixteen reports: session 52).  Where one of them did not settle,
        the device is waited for and every later one fails as in a whole flush."""
        if not self.pending or self.flushing:
            return
        self.flushing = True
        items, self.pending = self.pending, []
        stream, self.stream = self.stream, None
        done, failed = 0, False
        try:
            if 0 < front < len(items):
                items[front - 1].wait()  # (the reports of items[:front] are in their host arrays)
                self.pending, self.stream = items[front:], stream
                items = items[:front]
            else:
                self.ops.sync(stream)  # (theirs: the reports are in the host arrays after it)
            for it in items:
                if not failed and it.settle():
                    done += 1
                    continue
                if not failed:
                    failed = True
                    if self.pending:  # (the later ones ran on what this one left: all fail --
                        # read on in this loop: the list it walks, extended)
                        items.extend(self.pending)
                        self.pending, self.stream = [], None
                        self.ops.sync(stream)
                    self.ops.clear(self.sticky())  # (on the stream, before any replay's work)
                    for later in items[done:]:
                        later.fail()
                it.replay()
                done += 1
        except BaseException as exc:
            # (the rest neither settled nor run again: booked as failed -- the device copies
            # hold what landed, the host pulls it -- and their results lost: never a refusal
            # of None for a dispatch that did not land; the exception is the caller's); the
            # ones a ``front`` read left queued with them -- all once the device is done with
            # them, where it answers: ``lose`` reads their reports (a wait for the oldest that
            # raised left any of them running)
            items = items + self.pending
            self.pending, self.stream = [], None
            try:
                self.ops.sync(stream)
            except BaseException:  # noqa: BLE001 - the first exception is the caller's (a second
                pass  # interrupt here still loses every one below)
            for it in items[done:]:
                it.lose(exc)
            if not failed:  # (after the results are lost: a faulted device may raise here too)
                try:
                    self.ops.clear(self.sticky())
                except Exception:  # noqa: BLE001 - the first exception is the caller's
                    pass
            raise
        finally:
            self.flushing = False
            if not self.pending:  # (nothing queued: where it may write holds no entry alive)
                self._reach, self._reach_of = {}, None
                self._stores, self._stores_of = set(), None

    def queue(self, item, stream, reach: list | None, stores: list | None = None) -> None:
        """A deferred launch queued (``pending``) on ``stream``, with where it may write whatever
        its report will say, a replay of it included: ``reach``, (entry, lo, hi) of its windows
        -- one list per plan, the same object for each of its launches (merged once) --, or None
        (anywhere: a gated arena launch, which a failed report runs again through the full path)."""
        if not self.pending:
            self._reach, self._reach_of = {}, None
            self._stores, self._stores_of = set(), None
        if stores is not None and stores is not self._stores_of:
            self._stores_of = stores
            self._stores.update(e for e, _, _ in stores)
        self.pending.append(item)
        self.stream = stream
        if reach is None:
            self._reach = None
        elif reach is not self._reach_of and self._reach is not None:
            self._reach_of = reach
            for e, lo, hi in reach:
                got = self._reach.get(e)
                if got is None:
                    got = self._reach[e] = RangeSet()
                got.add(lo, hi)

    def may_store(self, e) -> bool:
        """Whether a queued in-place launch may store into entry ``e`` (``queue``'s ``stores``):
        the driver's kept launch, which makes no put, then takes the full path, whose put reads
        the kernargs after the queue (decision 0029's session-56 amendment)."""
        return bool(self.pending) and e in self._stores

    def _reaches(self, e, lo: int, hi: int) -> bool:
        """Whether a queued launch (``queue``'s reach) may write a byte of [lo, hi) of ``e``."""
        reach = self._reach
        if reach is None:
            return True
        got = reach.get(e)
        return got is not None and got.meets(lo, hi)

    def landed_deferred(self, win, plan, arena, written, ranges) -> None:
        """A deferred dispatch's landing as the host books it when it is launched (wl_gate lands
        it on the device, or nothing of it): each (entry, lo, hi) of ``ranges`` -- the windows
        it may write -- at a new version and noted newer on the device (only bytes the dispatch
        wrote differ: a pull of the others takes the bytes the host holds), then the arena as
        ``commit`` leaves it.  A failed one is undone by ``failed_deferred``."""
        self.launched_in_place(ranges)
        # (what ``launched`` then ``_landed`` leave: a kept arena -- a kept plan's, which
        # ``arm`` found noted -- and its map landed)
        self._dirty_maps.pop(id(written), None)
        self._arena_state[id(arena)] = (arena, win.layout, [(e, e.version) for e, _ in plan])

    def launched_in_place(self, ranges) -> None:
        """What a deferred launch books at once, whatever its report will say: each (entry, lo,
        hi) of ``ranges`` -- the windows it may write -- at a new version and noted newer on the
        device (only bytes it wrote differ: a pull of the others takes the bytes the host holds);
        ``changes`` moved."""
        self.changes += 1
        for e, lo, hi in ranges:
            e.version = next(_VERSIONS)
            e.shadow = e.clean = None
            e.dev_dirty.add(lo, hi)

    def failed_deferred(self, arena, written, ranges) -> None:
        """A deferred dispatch that landed nothing: its arena and map as a refused dispatch
        leaves them (``launched``), its windows' entries at new versions."""
        self.launched(arena, written)
        for e, _, _ in ranges:
            e.version = next(_VERSIONS)

    # ---- the host's side (called by guest.py's hooks) ----------------------------------------
    def pull(self, alloc, off: int, n: int) -> None:
        """Make the host's bytes [off, off+n) of ``alloc`` current (for a read: the queue is read
        first only where a queued launch, or a replay of one, may write them -- ``queue``; the
        host's bytes of the rest are current whatever the queue's reports say: amendment h165)."""
        e = self.entries.get(alloc)
        if e is None:
            return
        if self.pending and self._reaches(e, off, off + n):
            self.flush()
        if e.lost and any(lo < off + n and off < hi for lo, hi in e.lost.ranges()):
            raise Refused("backend.proof", f"{e.broken}; the bytes read were lost with it")
        if not e.dev_dirty:
            return
        for lo, hi in e.dev_dirty.take(off, off + n):
            self.ops.download_into(*e.at(lo), alloc._data[lo:hi])
            self.changes += 1

    def touch(self, alloc, off: int, n: int) -> None:
        """The host may write [off, off+n) of ``alloc`` now (current first, then newer)."""
        e = self.entries.get(alloc)
        if e is None:
            return
        # (the whole queue read first, wherever it writes: a replay of a failed launch must find
        # the memory it was launched on, and the upload must not race a queued launch's reads)
        if self.pending:
            self.flush()
        self.pull(alloc, off, n)
        e.host_dirty.add(off, off + n)
        e.version = next(_VERSIONS)
        self.changes += 1

    def pull_all(self) -> None:
        for alloc in list(self.entries.keys()):
            self.pull(alloc, 0, alloc.size)

    def pull_writable(self, alloc) -> None:
        """``pull`` of the whole of ``alloc`` with the whole queue read first: for
        Allocation.data, which hands out the host's array -- a write through it is told
        (GuestMemory.touched) only after it is made, too late for ``touch``'s read of the queue."""
        if self.pending and alloc in self.entries:
            self.flush()
        self.pull(alloc, 0, alloc.size)

    # ---- the dispatch's side -----------------------------------------------------------------
    def entry(self, alloc) -> Entry:
        e = self.entries.get(alloc)
        if e is None:
            if self.flushing:
                # (a replay reaching an allocation without a device copy: the host may have
                # written it after the dispatch was launched, unseen -- no hook without a copy)
                raise Refused(
                    "dispatch.deferred_reach",
                    f"a deferred dispatch run again reaches allocation {alloc.name!r}, which had no "
                    "device copy when it was launched (WAVELIFT_CUDA_DEFER=off runs it)",
                )
            self.pull_all_of(alloc)
            h = self.heap
            if h is None:
                e = Entry(self.ops.alloc(alloc.size), alloc._data, alloc.shared)
            else:
                if self.pending:  # (their launches hold heap addresses: read before it may move)
                    self.flush()
                off = h.place(alloc.size, alloc.base)
                e = Entry(None, alloc._data, alloc.shared, h, off)
                # (the range goes back when nothing holds the entry: no plan, arena note or
                # kept run can reach it then)
                weakref.finalize(e, h.release, off, alloc.size)
            e.host_dirty.add(0, alloc.size)
            self.entries[alloc] = e
            self.entry_count += 1
            self.changes += 1
            alloc.resident = self
        return e

    @staticmethod
    def pull_all_of(alloc) -> None:
        """(an allocation another memory's device copy held: its bytes come home first)"""
        other = alloc.resident
        if other is not None:
            other.pull_writable(alloc)  # (its copy goes: no replay there may find it gone)
            other.entries.pop(alloc, None)
            other.entry_count += 1
            other.changes += 1
            alloc.resident = None

    def prepare(self, win) -> list:
        """Every window's (entry, offset in its allocation), with what the host changed in
        those allocations uploaded.  A window lies inside one allocation (trace/)."""
        mem = win.memory
        # each window's allocation, kept per (layout, memory, allocation table generation): the
        # same windows in the same table lie in the same allocations (issue 24)
        f = self._finds
        allocs = None
        if f is not None and f[0] is win.layout and f[1]() is mem and f[2] == mem.generation:
            kept = f[5]
            if kept is not None and f[4] == self.entry_count:
                # the plan made last time (the same allocations -- the same table holds them --
                # and no entry made or taken since: the same entries) while no entry in it has
                # anything to upload: what the loop below does then (a shadow made where it
                # makes one, from the entry's host array: the allocation's) and returns (issue 24)
                for e in kept[1]:
                    if e.shared or e.host_dirty.lo:
                        break
                else:
                    for e in kept[1]:
                        if e.shadow is None and e.small and not e.dev_dirty.lo:
                            e.shadow = e.host.copy()
                            e.clean = e.version
                    return kept[0]
            allocs = [r() for r in f[3]]  # (weak: a freed allocation's copy still goes)
            if any(a is None for a in allocs):
                allocs = None
        plan = []
        flushed: set = set()
        if allocs is None:
            allocs = []
            for w in win.windows:
                alloc = mem.find(w.address, w.size)
                if alloc is None:  # (the tracer places windows inside allocations)
                    raise ValueError(f"window {w.address:#x}+{w.size:#x} is not inside one allocation")
                allocs.append(alloc)
            self._finds = (
                win.layout,
                weakref.ref(mem),
                mem.generation,
                [weakref.ref(a) for a in allocs],
                -1,
                None,
            )
        get = self.entries.get
        for w, alloc in zip(win.windows, allocs):
            e = get(alloc)
            if e is None:
                e = self.entry(alloc)
            if id(e) not in flushed:
                flushed.add(id(e))
                if not e.shared and not e.host_dirty:
                    # (nothing to upload; the shadow made when there is none: as below)
                    if e.shadow is None and alloc.size <= SHADOW_BYTES and not e.dev_dirty:
                        e.shadow = alloc._data.copy()
                        e.clean = e.version
                    plan.append((e, w.address - alloc.base))
                    continue
                if e.shared:
                    e.host_dirty.add(0, alloc.size)
                else:
                    self.settle(e, alloc)
                up = e.host_dirty.take(0, alloc.size)
                for lo, hi in up:
                    self.ops.upload(*e.at(lo), alloc._data[lo:hi])
                if (
                    not e.shared
                    and alloc.size <= SHADOW_BYTES
                    and (up or e.shadow is None)
                    and not e.dev_dirty
                ):
                    e.shadow = alloc._data.copy()  # (the device copy's bytes now)
                    e.clean = e.version
            plan.append((e, w.address - alloc.base))
        f = self._finds
        if f is not None and f[0] is win.layout and f[1]() is mem and f[2] == mem.generation:
            # (the plan for the next dispatch of these windows: its entries once each)
            ents = list({id(e): e for e, _ in plan}.values())
            self._finds = f[:4] + (self.entry_count, (plan, ents))
        return plan

    def gather(self, win, plan, arena=None):
        """A device arena holding the windows (as the device copies hold them) at WindowSet's
        offsets, zeros elsewhere, 8 spare bytes (wl_read); ``arena``: one from ``staging`` (its
        bytes outside the windows are zero) to gather into, else a fresh one."""
        if arena is None:
            arena = self.ops.zeros(win.nbytes + 8)
        st = self._arena_state.get(id(arena))
        known = st[2] if st is not None and st[0] is arena and st[1] is win.layout else None
        lay = getattr(win, "layout", None)
        offs = lay.offs if lay is not None else [int(o) for o in win.offs]  # (as spans: ints)
        windows = win.windows
        copied = known is None
        run = None  # (a heap's windows to copy as one range: arena offset, heap offset, bytes)
        for k, (e, at) in enumerate(plan):
            if known is not None:
                was = known[k]
                if was[0] is e and was[1] == e.version:
                    if run is not None:
                        self.ops.copy(arena, run[0], self.heap.buf, run[1], run[2])
                        run = None
                    continue  # (there already: the device copy has not changed since)
            copied = True
            if e.heap is None:
                self.ops.copy(arena, offs[k], e.buf, at, windows[k].size)
                continue
            # (windows next to each other in the arena and at the same distance in the heap --
            # parts of one allocation -- go as one copy; the bytes between them are that
            # allocation's, which no access reads: the kernel reads and writes only in windows)
            h = e.off + at
            if run is not None and offs[k] - run[0] == h - run[1]:
                run = (run[0], run[1], offs[k] + windows[k].size - run[0])
                continue
            if run is not None:
                self.ops.copy(arena, run[0], self.heap.buf, run[1], run[2])
            run = (offs[k], h, windows[k].size)
        if run is not None:
            self.ops.copy(arena, run[0], self.heap.buf, run[1], run[2])
        # (nothing copied: the state noted is already this plan's entries at these versions)
        if copied and self._kept(arena):
            self._arena_state[id(arena)] = (arena, win.layout, [(e, e.version) for e, _ in plan])
        return arena

    def commit(self, win, plan, arena, written, spans_, kept=None) -> int:
        """Land a dispatch that was not refused: the spans' bytes of each window that has one
        into its device copy (and the spans noted as newer on the device); -> bytes written.
        Then the arena's windows equal the device copies (``gather`` may skip them).  One
        ``wl_land`` per window over the run table of the spans at their arena offsets (every
        byte of a span was written: no map byte read; its map bytes cleared).  ``kept``: None,
        or a kept plan's (window addresses, a dict): the run table of the last spans and the
        wl_land calls over it are kept there (``ops.land_launch``; the same window set, plan,
        arena and map each time: the same arguments)."""
        self.changes += 1
        if not spans_:
            self._landed(win, plan, arena, written)
            return 0
        starts, calls = kept if kept is not None else ([w.address for w in win.windows], None)
        last = calls.get("spans") if calls is not None else None
        if last is not None and last[0] == spans_:
            hit, table, lands = last[1:]
        else:
            hit = {}
            for addr, size in spans_:
                hit.setdefault(bisect_right(starts, addr) - 1, []).append((addr, size))
            # (spans_ is in arena order -- runs sorted, cut window by window --, so the table's
            # runs are sorted and each window's are consecutive)
            lay = getattr(win, "layout", None)
            offs = lay.offs if lay is not None else [int(o) for o in win.offs]
            a_s, a_e = [], []
            for k, sp in hit.items():
                d = offs[k] - win.windows[k].address
                for addr, size in sp:
                    a_s.append(addr + d)
                    a_e.append(addr + d + size)
            host = run_table(a_s, a_e, piece_shift(written))
            table = self.table(host)
            pend = host[3::3].tolist()
            pieces, i = {}, 0
            for k, sp in hit.items():
                j = i + len(sp)
                pieces[k] = int(pend[j - 1]) - (int(pend[i - 1]) if i else 0)
                i = j
            lands = self._landings(win, plan, hit, pieces)
            if calls is not None:
                if len(calls) >= KEPT_COMMITS:
                    calls.clear()
                calls["spans"] = (list(spans_), hit, table, lands)
        for k, dst, doff, o, n, p in lands:
            if calls is None:
                self.ops.land(dst, doff, arena, written, o, n, table, p)
            else:
                # (the call holds the table and the device array: their ids stay their own)
                go = calls.get((k, id(table), id(dst)))
                if go is None:
                    go = calls[k, id(table), id(dst)] = self.ops.land_launch(
                        dst, doff, arena, written, o, n, table, p
                    )
                go()
        total = 0
        for k, sp in hit.items():
            w, (e, at) = win.windows[k], plan[k]
            e.version = next(_VERSIONS)
            e.shadow = e.clean = None  # (the device holds newer bytes)
            # a shared allocation's owner may look at any time: its spans land at once (one
            # download of the range they cover)
            got, lo = None, 0
            if e.shared:
                lo = min(a for a, _ in sp) - w.address
                got = self.ops.download(*e.at(at + lo), max(a + n for a, n in sp) - w.address - lo)
            for addr, size in sp:
                d = addr - w.address
                if got is not None:
                    e.host[at + d : at + d + size] = got[d - lo : d - lo + size]
                else:
                    e.dev_dirty.add(at + d, at + d + size)
                total += size
        self._landed(win, plan, arena, written)
        return total

    def _landings(self, win, plan, hit: dict, pieces: dict) -> list:
        """commit's wl_land calls: (first window, device array, offset there of arena index o,
        o, bytes n, pieces) -- one per written window, or with a heap one per written windows
        next to each other at the same distance in the arena and the heap (parts of one
        allocation: a landing over [o, o + n) lands only runs, and runs lie only in windows)."""
        out: list = []
        offs = win.layout.offs if getattr(win, "layout", None) is not None else [int(o) for o in win.offs]
        for k in hit:  # (in arena order: spans_ is)
            (e, at), o, n = plan[k], offs[k], win.windows[k].size
            dst, doff = e.at(at)
            last = out[-1] if out else None
            if e.heap is not None and last is not None and last[1] is dst and doff - last[2] == o - last[3]:
                out[-1] = (last[0], dst, last[2], last[3], o + n - last[3], last[5] + pieces[k])
            else:
                out.append((k, dst, doff, o, n, pieces[k]))
        return out

    def heap_offsets(self, plan) -> list[int] | None:
        """Each window's offset in the heap (its device copy's offset there plus the window's
        in its allocation), ≡ the window's address mod 8 as its arena offset is: the window
        offsets of a dispatch run with arena = heap (decision 0049, step 4); None without a heap."""
        if self.heap is None:
            return None
        return [e.off + at for e, at in plan]

    def placed(self, win, plan, written: frozenset | None = None) -> Placed | None:
        """``win``'s windows as ``plan`` places them in the heap (``Placed``; ``written``: the
        windows its kernel can mark, None: any); None without a heap."""
        return None if self.heap is None else Placed(self.heap, plan, win.windows, written)

    def heap_tables(self, win, plan, placed: Placed | None = None) -> tuple | None:
        """The window tables of ``win`` (starts, ends, offsets; device, one spare entry each)
        with the heap offsets for offsets: what the kernel, unchanged, would index the heap by
        (``arena = heap``, decision 0049 step 4: address - start + offset), kept by their
        bytes (``table``); None without a heap.  ``placed``: the offsets worked out already."""
        hofs = self.heap_offsets(plan) if placed is None else placed.offs
        if hofs is None:
            return None
        starts, ends, _ = self.window_tables(win)
        return starts, ends, self.table(np.array(list(hofs) + [0], np.int64))

    # ---- in place (WAVELIFT_CUDA_INPLACE=proved: decision 0049 step 4) ------------------------
    def report(self, nbytes: int):
        """A report of ``nbytes`` for a dispatch run in place (no arena, so no staging set),
        kept for the next (the caller clears it before each kernel)."""
        r = self._reports.get(nbytes)
        if r is None:
            r = self._reports[nbytes] = self.ops.zeros(nbytes)
        return r

    def counts(self, slots: int):
        """The count slots of a kernel with ``slots`` of them (kernel.h's WL_WIDE: 2 u64 a slot,
        zero between launches -- wl_fold zeroes them), one kept buffer per number of slots."""
        c = self._counts.get(slots)
        if c is None:
            c = self._counts[slots] = self.ops.zeros(16 * slots).view(np.uint64)
        return c

    def aside(self, place: int, nbytes: int):
        """Queue place ``place``'s aside (device bytes, ``nbytes`` at least): one per place for
        every in-place plan -- the queue holds one plan's launches at a time (any launch's booking
        moves ``changes``), so a place's aside serves one queued launch.  A larger one replaces a
        smaller (the plans whose graphs hold the smaller keep it until they go)."""
        a = self._asides
        while len(a) <= place:
            a.append(None)
        if a[place] is None or a[place].nbytes < nbytes:
            a[place] = self.ops.alloc(nbytes)
        return a[place][:nbytes]

    def clear_heap_runs(self, starts: list, ends: list) -> None:
        """Zero the heap map's marks of an in-place run's runs (sorted heap offsets): one memset
        of the map over their hull -- exact, since the map holds no mark but this run's (every
        in-place run clears its own; nothing else marks it), so every map byte or word the hull
        meets holds only marks of these runs."""
        h = self.heap
        if h is None or not starts:
            return
        self.ops.clear(h.map_over(starts[0], ends[-1]))

    def landed_in_place(self, win, plan, placed: Placed, cut: list) -> tuple[list, int, frozenset]:
        """Book a dispatch that ran in place on the heap: its runs cut at its windows
        (``Placed.cut``: a proved dispatch stores only inside windows) as its write spans (in
        address order, as ``spans``), each noted newer on the device (the host pulls it when it
        reads: as ``commit``'s), its entries at new versions -> (spans, bytes, the indices of
        the windows it wrote)."""
        self.changes += 1
        rows, spans_, total, ks = placed.booking(win.windows, plan, cut)
        for first, e, lo, hi in rows:
            if first:  # (each window's entry once, as its first piece is booked)
                e.version = next(_VERSIONS)
                e.shadow = e.clean = None  # (the device holds newer bytes)
            e.dev_dirty.add(lo, hi)
        return list(spans_), total, ks

    def broke_in_place(self, plan, starts: list, ends: list, why: str) -> None:
        """A dispatch ran in place on a proof that failed: each of its device copies unusable
        (``broken``: every later dispatch on it refused), the bytes it wrote (runs, sorted heap
        offsets) whose only current copy was the device's noted ``lost`` (a host read of them
        refused), the rest of the host's bytes still good (the copy's other newer bytes come
        home when read, as before)."""
        self.changes += 1
        for e in {id(e): e for e, _ in plan}.values():
            e.version = next(_VERSIONS)
            e.shadow = e.clean = None
            if e.broken is None:  # (the first failure's words)
                name = next((a.name for a, x in self.entries.items() if x is e), "?")
                e.broken = f"{why} (allocation {name!r})"
            for s, t in zip(starts, ends):
                lo, hi = max(s - e.off, 0), min(t - e.off, e.host.size)
                for a, b in e.dev_dirty.take(lo, hi) if lo < hi else ():
                    e.lost.add(a, b)

    def _moved(self) -> None:
        """The heap moved (Heap.on_move): every kept plan goes -- its landing calls, deferred
        calls and captured graphs hold addresses in the old buffer -- and nothing noted since
        the last change holds (``changes``)."""
        self.changes += 1
        self.kept.clear()

    def _landed(self, win, plan, arena, written=None) -> None:
        # (every marked byte lay in a landed span, whose map bytes wl_land cleared)
        if written is not None:
            self._dirty_maps.pop(id(written), None)
        if self._kept(arena):
            self._arena_state[id(arena)] = (arena, win.layout, [(e, e.version) for e, _ in plan])


def _nothing() -> None:
    pass


_OPS: Any = None  # the process's CuPyOps (its kernels compiled once)


def for_memory(memory) -> Resident:
    """The Resident of ``memory`` (made on its first CUDA dispatch; kept on the memory)."""
    global _OPS
    r = getattr(memory, "resident", None)
    if r is None:
        if _OPS is None:
            _OPS = CuPyOps()
        r = Resident(_OPS)
        memory.resident = r
    return r
