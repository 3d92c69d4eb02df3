"""Buffer tracer: which guest allocations can the program reach?

Roots are the user SGPRs: every consecutive pair as a 64-bit pointer (this also covers V# bases,
whose word 1 carries address bits 47:32 in its low half), and every single SGPR as a 32-bit
pointer whose high half is 0xffff8000 (how RADV passes descriptor-set and push-constant
pointers).  Each allocation a root points into becomes a window; its first SCAN_BYTES are then
scanned for more pointers the same way (64-bit words, 32-bit RADV pointers, V# words 0-1), to
a bounded depth (execute_dispatch first to SHALLOW_DEPTH, decision 0048).  Scratch is not
traced: the user SGPRs holding the scratch base are left out by the same test the translation
makes (``frontend/scratch.py``, docs/decisions/0008-scratch.md).

Bounded (docs/decisions/0015-bounded-work.md): a scan keeps one candidate per allocation it
points into (the first: the one whose reason is reported), reasons are made only for the
windows placed and quote at most NAME_CHARS of a name, the scan cache holds at most
SCAN_CACHE_BYTES, and windows that would total more than MAX_DISPATCH_WINDOW_BYTES refuse the
dispatch (``dispatch.windows_too_large``) before any arena is built.
"""

from __future__ import annotations

import bisect
import hashlib
import weakref

import numpy as np

from ..errors import Refused
from ..kept import keep
from ..memory.guest import canonical
from ..run.result import Window

RADV_HI = 0xFFFF8000
SCAN_BYTES = 64 << 10
MAX_DEPTH = 3
# execute_dispatch traces this deep first: the user SGPRs' targets (depth 0: kernel arguments,
# descriptor sets, push constants) and what their heads point to (depth 1: the buffers);
# deeper only where a run there escaped or was refused (docs/decisions/0048)
SHALLOW_DEPTH = 1
MAX_WINDOWS = 256
MAX_WINDOW_BYTES = 512 << 20  # one window covers at most this much of its allocation
MAX_DISPATCH_WINDOW_BYTES = 1 << 30  # all of a dispatch's windows (arena and written map: 2x)
SCAN_CACHE = 256  # scans kept per memory (_scan)
SCAN_CACHE_BYTES = 64 << 20  # and at most this many bytes of candidates
NAME_CHARS = 64  # of an allocation's name quoted in a window's name or reason
TRACE_CACHE = 64  # traces kept per memory (trace)
HEAD_COPIES = 64  # scanned heads kept per memory as bytes, for trace's cache checks (_same)
FEW_ALLOCATIONS = 8  # up to this many allocations, _first_per_target compares instead of searching


def short_name(name: str) -> str:
    """An allocation's name as windows carry it: at most NAME_CHARS characters (a capture's
    names are guest text of any length)."""
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS] + f"...(+{len(name) - NAME_CHARS})"


def scratch_sgprs(config) -> set[int]:
    """User SGPRs holding the scratch base by value (never traced) — the config half of the
    scratch test in ``frontend/scratch.py``; the program half (pairs written into FLAT_SCRATCH)
    arrives as ``trace(..., scratch_roots=program.scratch.tracer_skip)``."""
    from ..frontend.scratch import scratch_sgprs as ss

    return ss(config)


MASK48 = (1 << 48) - 1
RADV48 = (RADV_HI << 32) & MASK48


def _candidates(words: np.ndarray, hit=None, low: bool = False):
    """Pointer candidates from a uint32 array: (address, word index), in order (64-bit pairs,
    then RADV pointers before a 0xffff8000 word, then every word as a RADV pointer).  Addresses
    are the 48 bits the memory system sees (``canonical`` restores the rest).  ``hit`` (uint64
    array of 48-bit addresses -> bool array) keeps only the candidates it accepts — a
    vectorised test that spares the per-candidate lookups in big data buffers."""
    return _keep(_all_candidates(words, low), hit)


def _keep(found, hit):
    """(addresses, indices) arrays -> the (address, index) pairs ``hit`` accepts (None: all)."""
    a, k = found
    if hit is not None and a.size:
        keep = hit(a) >= 0
        a, k = a[keep], k[keep]
    return [(int(x), int(j)) for x, j in zip(a.tolist(), k.tolist())]


def _first_per_target(found, hit):
    """(addresses, indices) arrays -> (allocation, address, index) of the first candidate (in
    candidate order) into each allocation ``hit`` finds: a later one into the same allocation
    could add nothing (the tracer keeps one window per allocation), so a buffer of a million
    pointers costs one entry per allocation it reaches, not one per pointer."""
    a, k = found
    if not a.size:
        return []
    spans = getattr(hit, "spans", None)
    if spans is not None and len(spans[0]) <= FEW_ALLOCATIONS:
        # few allocations: each one's first candidate found by a comparison over the candidates
        # (allocations never overlap, so this is the allocation the binary search finds)
        firsts = []
        for t, (lo, hi) in enumerate(zip(*spans)):
            m = (a >= lo) & (a < hi)
            j = int(m.argmax())
            if m[j]:
                firsts.append((j, t))
        firsts.sort()
        return [(t, int(a[j]), int(k[j])) for j, t in firsts]
    t = hit(a)
    sel = np.flatnonzero(t >= 0)
    _, first = np.unique(t[sel], return_index=True)
    sel = sel[np.sort(first)]
    return list(zip(t[sel].tolist(), a[sel].tolist(), k[sel].tolist()))


def _low(memory) -> bool:
    """Whether a 64-bit pair whose high word is 0 is a pointer candidate: when the memory has an
    allocation below 4 GiB (the tinygrad hook's memory is host memory, and a non-PIE Python's
    heap lies there).  wavelift's own placements (DEFAULT_BASE) and the captures we know are
    above it, where a small integer beside a zero stays no pointer; a candidate outside every
    allocation is rejected by the hit test anyway."""
    hull = memory.address_index()[2]
    return hull is not None and hull[0] < 1 << 32


def _all_candidates(words: np.ndarray, low: bool = False):
    """_candidates' arrays, unfiltered; ``low``: pairs below 4 GiB too (_low)."""
    if words.dtype == np.uint32:
        return _all_candidates32(words, low)
    return _all_candidates64(words, low)


REACH_RANGES = 4  # _reach: at most this many runs of 4 GiB regions, else the hull alone


def _reach(memory) -> tuple | None:
    """What _reachable_candidates32 filters by: (lo, hi, regions, bounds) -- the 48-bit hull of
    the memory's allocations, the 4 GiB regions (address bits 47:32) they touch as at most
    REACH_RANGES inclusive runs (lo16, hi16), or None (more runs: the hull alone), and each
    run's own 48-bit hull [lo48, hi48) (None with regions None); None when there is no
    allocation."""
    starts, ends, hull = memory.address_index()
    if hull is None:
        return None
    return _reach_of(starts, ends, hull)


def _reach_of(starts: np.ndarray, ends: np.ndarray, hull: tuple) -> tuple:
    """_reach of allocations given by their sorted 48-bit ``starts`` and ``ends`` and hull."""
    runs: list[list[int]] = []
    for s, e, a, b in zip(
        (starts >> np.uint64(32)).tolist(),
        ((ends - np.uint64(1)) >> np.uint64(32)).tolist(),
        starts.tolist(),
        ends.tolist(),
    ):
        if runs and s <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], e)
            runs[-1][2] = min(runs[-1][2], a)
            runs[-1][3] = max(runs[-1][3], b)
        else:
            runs.append([s, e, a, b])
    if len(runs) > REACH_RANGES:
        return (hull[0], hull[1], None, None)
    return (hull[0], hull[1], tuple((s, e) for s, e, _, _ in runs), tuple((a, b) for _, _, a, b in runs))


def _in_regions(h: np.ndarray, regions) -> np.ndarray | None:
    """Whether each uint32 of ``h`` (address bits 47:32) is in one of ``regions``; None: all."""
    if regions is None:
        return None
    m = None
    for lo, hi in regions:
        r = (h == np.uint32(lo)) if lo == hi else ((h >= np.uint32(lo)) & (h <= np.uint32(hi)))
        m = r if m is None else (m | r)
    return m


def _pair_reach(w: np.ndarray, h: np.ndarray, regions, bounds) -> np.ndarray | None:
    """Whether each 64-bit pair (low word ``w``, address bits 47:32 ``h``) can be in an
    allocation by its region: in a run of one region, inside that run's 48-bit hull (the
    low word between its ends' low words: both ends lie in that region), else in the run's
    regions; None: all."""
    if bounds is None:  # (with regions None: every region)
        return None
    m = None
    for (r0, r1), (b0, b1) in zip(regions, bounds):
        if r0 == r1:
            t = (
                (h == np.uint32(r0))
                & (w >= np.uint32(b0 & 0xFFFFFFFF))
                & (w <= np.uint32((b1 - 1) & 0xFFFFFFFF))
            )
        else:
            t = (h >= np.uint32(r0)) & (h <= np.uint32(r1))
        m = t if m is None else (m | t)
    return m


def _reachable_candidates32(u: np.ndarray, low: bool, reach: tuple):
    """_all_candidates32's arrays less candidates that can be in no allocation: those outside
    the allocations' hull or the 4 GiB regions they touch (``reach``: _reach), tested on the
    32-bit words before any 64-bit address is built.  The kept ones stay in their order, so
    each allocation's first candidate (_first_per_target) is the same: a candidate dropped here
    is one the hit test rejects.  Most of a scanned data buffer's words are RADV candidates
    (every nonzero word: region 0x8000) and few of its pairs fall in the regions."""
    lo, hi, regions, bounds = np.uint64(reach[0]), np.uint64(reach[1]), reach[2], reach[3]
    addrs, idxs = [], []

    def inside(a, i):
        k = (a >= lo) & (a < hi)
        addrs.append(a[k])
        idxs.append(i[k])

    def sel(m, pre):
        return np.flatnonzero(m if pre is None else (m & pre))

    if u.size >= 2:
        h = u[1:] & np.uint32(0xFFFF)
        pre = _pair_reach(u[:-1], h, regions, bounds)
        # _all_candidates32's test: (lo32 | hi16) != 0 with ``low``, else hi16 != 0
        i = sel((u[:-1] | h) != 0 if low else h != 0, pre)
        inside(u[i].astype(np.uint64) | (h[i].astype(np.uint64) << np.uint64(32)), i)
    radv_hi = RADV48 >> 32
    if regions is None or any(a <= radv_hi <= b for a, b in regions):
        is_radv = u == np.uint32(RADV_HI)
        i = np.flatnonzero(is_radv)
        i = i[i > 0]
        inside(np.uint64(RADV48) | u[i - 1].astype(np.uint64), i - 1)
        i = np.flatnonzero((u != 0) & ~is_radv)
        inside(np.uint64(RADV48) | u[i].astype(np.uint64), i)
    if u.size >= 4:
        # image T# (dwords 0-3): TYPE (dword3[31:28]) >= 8, i.e. dword3 >= 2^31, tested first
        # (few words have the top bit set); then bits 47:32 of BASE_ADDRESS, dword1[7:0] << 8 |
        # dword0 >> 24, in a region -- the same indices, in the same order, as both tests at once
        i = np.flatnonzero(u[3:] >= np.uint32(0x80000000))
        if regions is not None and i.size:
            keep = _in_regions(
                ((u[i + 1] & np.uint32(0xFF)) << np.uint32(8)) | (u[i] >> np.uint32(24)), regions
            )
            i = i[keep]
        w0, w1 = u[i].astype(np.uint64), u[i + 1].astype(np.uint64)
        inside((w0 | ((w1 & np.uint64(0xFF)) << np.uint64(32))) << np.uint64(8), i)
    if not addrs:  # (fewer than 2 words and no RADV region)
        return np.zeros(0, np.uint64), np.zeros(0, np.intp)
    return np.concatenate(addrs), np.concatenate(idxs)


def _all_candidates32(u: np.ndarray, low: bool):
    """_all_candidates64 of uint32 words, the same arrays: each test made on the 32-bit words,
    the 64-bit addresses built for the candidates found only (a scan's 16 K words: a third of
    the time)."""
    w = u.astype(np.uint64)
    addrs, idxs = [], []
    if u.size >= 2:
        hi16 = u[1:] & np.uint32(0xFFFF)
        i = np.flatnonzero((u[:-1] | hi16) if low else hi16)
        addrs.append(w[i] | (hi16[i].astype(np.uint64) << np.uint64(32)))
        idxs.append(i)
    radv = u == np.uint32(RADV_HI)
    i = np.flatnonzero(radv)
    i = i[i > 0]
    addrs.append(np.uint64(RADV48) | w[i - 1])
    idxs.append(i - 1)
    i = np.flatnonzero((u != 0) & ~radv)
    addrs.append(np.uint64(RADV48) | w[i])
    idxs.append(i)
    if u.size >= 4:
        i = np.flatnonzero((u[3:] >> np.uint32(28)) >= 8)
        addrs.append((w[i] | ((w[i + 1] & np.uint64(0xFF)) << np.uint64(32))) << np.uint64(8))
        idxs.append(i)
    return np.concatenate(addrs), np.concatenate(idxs)


SMALL_WORDS = 64  # a head of at most this many dwords is scanned in Python (_small_firsts)


def _small_candidates(u: list[int], low: bool, radv: bool = True) -> list[tuple[int, int]]:
    """_all_candidates32's (address, index) pairs of the uint32 words ``u`` (Python ints), in
    its order: pairs, RADV pairs, RADV words, T# words; ``radv=False``: without the two RADV
    kinds (whose addresses lie in [RADV48, RADV48 + 2^32): a caller whose allocations lie
    elsewhere).  For a few words: NumPy's per-call cost is most of a small scan."""
    n = len(u)
    out = []
    for i in range(n - 1):
        w, h = u[i], u[i + 1] & 0xFFFF
        if h or (low and w):
            out.append((w | h << 32, i))
    if radv:
        for i in range(1, n):
            if u[i] == RADV_HI:
                out.append((RADV48 | u[i - 1], i - 1))
        for i in range(n):
            if u[i] and u[i] != RADV_HI:
                out.append((RADV48 | u[i], i))
    for i in range(n - 3):
        if u[i + 3] >> 28 >= 8:
            out.append(((u[i] | (u[i + 1] & 0xFF) << 32) << 8, i))
    return out


def _small_firsts(found, starts: list[int], ends: list[int]) -> list[tuple[int, int, int]]:
    """_first_per_target of the (address, index) pairs ``found`` over the allocations whose
    sorted 48-bit ``starts`` and ``ends`` are given (lists): (allocation, address, index) of
    the first candidate into each, in candidate order."""
    out = []
    seen = set()
    lo, hi = (starts[0], max(ends)) if starts else (0, 0)
    for a, j in found:
        if lo <= a < hi:
            t = bisect.bisect_right(starts, a) - 1
            if t >= 0 and a < ends[t] and t not in seen:
                seen.add(t)
                out.append((t, a, j))
    return out


def _all_candidates64(words: np.ndarray, low: bool = False):
    """_all_candidates, the words taken as 64-bit integers (the definition _all_candidates32
    is held to)."""
    w = words.astype(np.uint64)
    addrs, idxs = [], []
    if w.size >= 2:
        pair = w[:-1] | ((w[1:] & np.uint64(0xFFFF)) << np.uint64(32))
        i = np.flatnonzero(pair if low else pair >> np.uint64(32))
        addrs.append(pair[i])
        idxs.append(i)
    i = np.flatnonzero(w == RADV_HI)
    i = i[i > 0]
    addrs.append(np.uint64(RADV48) | w[i - 1])
    idxs.append(i - 1)
    i = np.flatnonzero((w != 0) & (w != RADV_HI))
    addrs.append(np.uint64(RADV48) | w[i])
    idxs.append(i)
    if w.size >= 4:
        # image T# (dwords 0-3): BASE_ADDRESS = (dword0 | dword1[7:0] << 32) << 8, with TYPE
        # (dword3[31:28]) an image type (8..15)
        i = np.flatnonzero((w[3:] >> np.uint64(28)) >= 8)
        addrs.append((w[i] | ((w[i + 1] & np.uint64(0xFF)) << np.uint64(32))) << np.uint64(8))
        idxs.append(i)
    return np.concatenate(addrs), np.concatenate(idxs)


def _head(memory, a):
    """The dwords of allocation ``a`` that a scan reads: its first SCAN_BYTES, read through
    ``memory.peek`` so that a device-resident allocation brings down only those (decision 0026)."""
    return memory.peek(a.base, 4 * (min(a.size, SCAN_BYTES) // 4))


def _scanned(memory, a):
    """(n, digest): the dwords of allocation ``a`` that a scan reads and a digest of them -- all
    that a scan's result depends on besides the allocation table."""
    head = _head(memory, a)
    return head.size // 4, (hashlib.blake2b(head, digest_size=16).digest() if head.size else b"")


def content_stamp(memory, a):
    """Something that stays equal exactly while the bytes of allocation ``a`` stay the same, or
    None where the memory cannot tell: the device copies' versions (backends/cuda/resident.py
    ``stamp``: a host write through the memory or a dispatch landing in it changes it; decision
    0029), else the stamp the memory's owner gives it (``GuestMemory.stamps``: the tinygrad hook
    compares its code with a copy before each dispatch).  Otherwise None (host writes are not
    watched)."""
    res = memory.resident
    if res is not None:
        return res.stamp(a)
    # (else a stamp the memory's owner vouches for: GuestMemory.stamps; tuples, never equal to
    # a device copy's version number)
    stamps = getattr(memory, "stamps", None)
    return stamps.get(a) if stamps else None


def _scan(memory, a, hit, scanned=None):
    """Pointer candidates in the first SCAN_BYTES of allocation ``a`` that ``hit`` accepts, one
    per allocation reached (_first_per_target).  The
    unfiltered candidates depend on those bytes only: they are kept on the memory, by address,
    length and a digest of the bytes (a data buffer scanned again costs a hash and the hit test).
    A single-use memory, which nothing scans twice, keeps nothing and hashes nothing: its
    candidates are those that can be in an allocation (_reachable_candidates32, the same
    result).
    ``scanned``: a list to which [a, n, digest, stamp] is appended (trace's cache checks them)."""
    if scanned is None and getattr(memory, "single_use", False):
        data = _head(memory, a)
        reach = _reach(memory)
        if not data.size or reach is None:
            return []
        return _first_per_target(_reachable_candidates32(data.view(np.uint32), _low(memory), reach), hit)
    stamp = content_stamp(memory, a) if scanned is not None else None
    n, digest = _scanned(memory, a)
    if scanned is not None:
        scanned.append([a, n, digest, stamp])
    if not n:
        return []
    data = _head(memory, a)
    low = _low(memory)
    key = (a.base, n, digest, low)
    cache = memory.pointer_scans
    found = cache.get(key)
    if found is None:
        found = _all_candidates(data.view(np.uint32), low)  # (new arrays: nothing aliases memory)
        cache[key] = found
        memory.pointer_scan_bytes += found[0].nbytes + found[1].nbytes
        while len(cache) > SCAN_CACHE or memory.pointer_scan_bytes > SCAN_CACHE_BYTES:
            x, y = cache.pop(next(iter(cache)))
            memory.pointer_scan_bytes -= x.nbytes + y.nbytes
    return _first_per_target(found, hit)


def _scan_open(memory, a, starts: np.ndarray, ends: np.ndarray, open_: list[int], low: bool):
    """A single-use memory's _scan less the candidates into allocations other than ``open_``
    (indices into the memory's address_index, in base order): those the tracer has made
    windows already, or scratch backing, which it drops whatever the candidate.  The same
    (allocation, address, index) entries for the open allocations, in the same order: their
    reach (_reach_of: hull, regions, runs' hulls) keeps every candidate into them, and each one's
    first candidate is the first of all candidates into it.  No open allocation: nothing
    scanned."""
    if not open_:
        return []
    data = _head(memory, a)
    if not data.size:
        return []
    reach, hit, lists = _open_reach(memory, starts, ends, open_)
    if data.size <= 4 * SMALL_WORDS:  # (a kernarg segment: Python's loop beats NumPy's calls)
        u = data.view(np.uint32).tolist()
        found_ = _small_candidates(u, low, _radv_reach(reach))
        return [(open_[t], p, j) for t, p, j in _small_firsts(found_, *lists)]
    found = _reachable_candidates32(data.view(np.uint32), low, reach)
    # (indices among the open allocations back to the memory's)
    return [(open_[t], p, j) for t, p, j in _first_per_target(found, hit)]


# memory -> (allocation table generation, open allocations, (reach, hit test)): the last
# _open_reach per memory (a kept memory's dispatches open the same allocations again)
_OPEN_REACH: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _radv_reach(reach) -> bool:
    """Whether RADV candidates ([RADV48, RADV48 + 2^32)) can be in an allocation of ``reach``
    (_reach_of): as _reachable_candidates32's region test, less what its hull test drops."""
    regions = reach[2]
    radv_hi = RADV48 >> 32
    return regions is None or any(a <= radv_hi <= b for a, b in regions)


def _open_reach(memory, starts: np.ndarray, ends: np.ndarray, open_: list[int]) -> tuple:
    """(_reach_of, _hit_of, (starts, ends) as lists) of the allocations ``open_`` (indices into
    ``starts``/``ends``, the memory's address_index): pure functions of those arrays (the
    allocation table at its generation) and ``open_``, kept for the next scan of the same
    memory."""
    key = tuple(open_)
    gen = memory.generation
    try:
        last = _OPEN_REACH.get(memory)
    except TypeError:  # (a memory that takes no weak reference)
        last = None
    if last is not None and last[0] == gen and last[1] == key:
        return last[2]
    sel = np.array(open_, np.intp)
    s, e = starts[sel], ends[sel]
    hull = (int(s[0]), int(e.max()))
    out = (_reach_of(s, e, hull), _hit_of(s, e, hull), (s.tolist(), e.tolist()))
    try:
        _OPEN_REACH[memory] = (gen, key, out)
    except TypeError:
        pass
    return out


def _hit_test(memory):
    """-> function(uint64 array of 48-bit addresses) -> int64 array: the index of the allocation
    each is inside (in base order), or -1.
    (An allocation never crosses the canonical hole, so the 48-bit images of the allocations
    keep their order and an address is inside one exactly when its 48 bits are.)"""
    return _hit_of(*memory.address_index())  # (kept sorted by the memory, not sorted here)


def _hit_of(starts: np.ndarray, ends: np.ndarray, hull: tuple | None):
    """_hit_test over the allocations given by their sorted 48-bit ``starts``, ``ends`` and
    hull (indices into those arrays)."""

    def hit(c):
        out = np.full(c.shape, -1, np.int64)
        if hull is None:
            return out
        # the allocations' hull first: most candidates from data are far outside it
        i = np.flatnonzero((c >= np.uint64(hull[0])) & (c < np.uint64(hull[1])))
        if i.size:
            k = np.searchsorted(starts, c[i], side="right").astype(np.int64) - 1
            out[i] = np.where((k >= 0) & (c[i] < ends[np.maximum(k, 0)]), k, -1)
        return out

    hit.spans = (starts, ends)  # type: ignore[attr-defined]
    return hit


def trace_key(config, scratch_roots=None, skip=None) -> tuple:
    """trace's cache key of a dispatch with ``config`` and ``scratch_roots``: (the user SGPRs'
    values, the SGPRs never traced) -- a pure function of the two (the config is frozen but for
    its system SGPR dict, which scratch_sgprs reads: a caller keeping the key compares it).
    ``skip``: the SGPRs never traced, where the caller kept them from another key of the same
    config shape and scratch roots (execute's records by shape: scratch_sgprs reads the config's
    scratch ABI only)."""
    if skip is None:
        skip = frozenset(scratch_sgprs(config)) | frozenset(scratch_roots or ())
    return (tuple(map(int, config.user_sgprs)), skip, getattr(config, "border_color_base", None))


def trace(memory, config, program_alloc=None, scratch_roots=None, key=None, depth=None) -> list[Window]:
    """The windows of a dispatch: the allocations its user SGPRs reach (see the module's doc).

    Cached on the memory (``memory.trace_cache``) by the user SGPRs' values and the scratch
    roots: an entry holds when the allocation table is the one it was traced against
    (``memory.generation``) and the bytes every scan read are still the same, which is all a
    trace reads, so a hit returns exactly what tracing again would (checked against
    ``trace_uncached`` in tests/memory/test_trace_cache.py).  The same bytes: an allocation's
    ``content_stamp`` as it was when it was last checked (device copies: nothing wrote it since,
    decision 0029), else the digest of its scanned head again (read; hashed only where its bytes
    differ from the copy last hashed for that allocation, _same; the stamp is then noted for
    the next check).  A refusal is not cached.  ``key``: trace_key(config,
    scratch_roots) when the caller has it (execute's prepared record).  ``depth``: windows to
    that depth only, the last depth's heads not scanned (None: MAX_DEPTH; a shallower trace
    places a prefix of the deeper one's windows)."""
    if key is None:
        key = trace_key(config, scratch_roots)
    skip = key[1]
    if getattr(memory, "single_use", False):  # (traced once: nothing kept)
        return _trace(memory, config, skip, None, depth)[0]
    if depth is not None:
        key = (*key, depth)
    if getattr(memory, "open_scans", False):
        return _trace_variants(memory, config, skip, key, depth)
    cache = memory.trace_cache
    hit = cache.get(key)
    if hit is not None:
        gen, scanned, windows = hit
        if gen == memory.generation:
            res = memory.resident
            for s in scanned:
                # (an unchanged device-copy stamp: the same bytes, no call further; else _same)
                if s[3] is not None and res is not None and res.stamp(s[0]) == s[3]:
                    continue
                if not _same(memory, s):
                    break
            else:
                return list(windows)
        del cache[key]
    scanned_now: list = []
    gen = memory.generation
    windows = _trace(memory, config, skip, scanned_now, depth)[0]
    keep(cache, key, (gen, scanned_now, tuple(windows)), TRACE_CACHE)
    return windows


VARIANTS = 64  # _trace_variants: traces kept per key, by what the first scanned head gave
VARIANT_HEAD = 512  # of a first scanned head at most this long (its scan's result is the index)


def _trace_variants(memory, config, skip, key, depth) -> list[Window]:
    """trace's cache for a memory with ``open_scans`` (the tinygrad hook's kept memory, whose
    kernarg segment holds other pointers, and other values, on each dispatch of a kernel): per
    key, traces indexed by what the first head they scanned gave -- its scan's result
    (_scan_open's (allocation, address, index) entries) against the allocations open at that
    scan.  At one allocation table generation the first allocation scanned and the allocations
    open at its scan are the same for every trace of a key (depth 0 is a function of the user
    SGPRs and the table; they are kept with the entry), and _trace reads that head through its
    scan's result alone, so a trace whose first scan gave the same entries placed the same
    windows to depth 1 and scanned the same heads after it, which ``_same`` compares; equal
    throughout, its windows are the ones tracing again would give.  (Indexed by the result
    rather than the bytes: a kernel dispatched with new scalar arguments and the same pointers
    scans to the same entries; decision 0045, amendment h107.)  The result is kept by the
    head's bytes too (a head seen before: no scan).  A first head longer than VARIANT_HEAD is
    no index: one trace is kept for it (under None), every head it scanned compared by
    ``_same``, as ``trace`` does.  Kept in ``memory.trace_variants`` (not trace_cache, whose
    entries are (gen, scanned, windows)): (generation, first allocation, {index: (scanned,
    windows)}, the allocations open at its scan, {head bytes: index})."""
    cache = memory.trace_variants
    gen = memory.generation
    entry = cache.get(key)
    if entry is not None and entry[0] != gen:
        entry = None
    index: tuple | None = ()
    known = None  # (the first scan's allocation, open allocations and result: not scanned twice)
    head: bytes | None = b""
    if entry is not None:
        head = _first_head(memory, entry[1])
        index = None if head is None else entry[4].get(head)
        if index is None and head is not None:
            index = _first_index(memory, entry[1], entry[3])
            _remember(entry[4], head, index)
            known = (entry[1], entry[3], index)
        hit = entry[2].get(index)
        # (a first head too long to index by: the one trace kept, every head compared by _same)
        if hit is not None and all(_same(memory, s) for s in (hit[0] if index is None else hit[0][1:])):
            VARIANT_HITS[0] += 1
            return list(hit[1])
    scanned: list = []
    windows, opened = _trace(memory, config, skip, scanned, depth, known)
    first = scanned[0][0] if scanned else None
    if entry is None or entry[1] is not first:
        entry = (gen, first, {}, opened[0] if opened else (), {})
        keep(cache, key, entry, TRACE_CACHE)
        head = _first_head(memory, first)
        # (the index is _first_index(memory, first, entry[3]): the scan _trace made of ``first``
        # against those open allocations just now, at this table and these bytes -- not made twice)
        index = None if head is None else (opened[1] if opened else ())
        if head is not None:
            _remember(entry[4], head, index)
    _remember(entry[2], index, (scanned, tuple(windows)))
    return windows


VARIANT_HITS = [0]  # traces _trace_variants took from a kept one (tests)


def _remember(store: dict, key, value) -> None:
    """``store[key] = value``, the newest last, at most VARIANTS kept (oldest dropped first)."""
    keep(store, key, value, VARIANTS)


def _first_head(memory, a) -> bytes | None:
    """The bytes of the scanned head of ``a`` (b"" for no scan), or None for a head longer than
    VARIANT_HEAD (not read here)."""
    if a is None:
        return b""
    if 4 * (min(a.size, SCAN_BYTES) // 4) > VARIANT_HEAD:
        return None
    return _head(memory, a).tobytes()


def _first_index(memory, a, open_: tuple) -> tuple:
    """_trace_variants' index of a head of at most VARIANT_HEAD bytes: () for no scan, else the
    first scan's result -- _scan_open of allocation ``a`` against the allocations ``open_``
    (what _trace's first scan was given), as _trace computes it."""
    if a is None:
        return ()
    starts, ends, _ = memory.address_index()
    return tuple(_scan_open(memory, a, starts, ends, list(open_), _low(memory)))


# memory -> {allocation base: (n, digest, the head's bytes)}: the last head _same hashed per
# allocation (at most HEAD_COPIES per memory, oldest dropped first; kept off the memory so that
# nothing of it is pickled)
_HEADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _same(memory, s) -> bool:
    """Whether the scanned head recorded in ``s`` ([a, n, digest, stamp]) is still the same
    (a stamp that still holds, else the digest; the current stamp is noted in ``s``).  The
    digest of a head whose bytes equal the bytes last hashed for that allocation (_HEADS) is
    that hash's: a byte comparison (~2 us for 64 KiB) stands for blake2b (~70 us), the same
    answer."""
    a, n, digest, stamp = s
    now = content_stamp(memory, a)
    if stamp is not None and now == stamp:
        return True
    try:
        heads = _HEADS.setdefault(memory, {})
    except TypeError:  # (a memory that takes no weak reference: hash every time)
        heads = None
    head = _head(memory, a).tobytes()
    kept = None if heads is None else heads.get(a.base)
    if kept is not None and kept[0] == len(head) // 4 and kept[2] == head:
        got = kept[:2]
    else:
        got = (len(head) // 4, hashlib.blake2b(head, digest_size=16).digest() if head else b"")
        if heads is not None:
            heads.pop(a.base, None)
            heads[a.base] = (*got, head)
            while len(heads) > HEAD_COPIES:
                del heads[next(iter(heads))]
    if got != (n, digest):
        return False
    s[3] = now
    return True


def trace_uncached(memory, config, program_alloc=None, scratch_roots=None, depth=None) -> list[Window]:
    """trace() without its cache (tests compare the two)."""
    skip = frozenset(scratch_sgprs(config)) | frozenset(scratch_roots or ())
    return _trace(memory, config, skip, None, depth)[0]


def _trace(memory, config, skip, scanned, last=None, known=None) -> tuple[list[Window], tuple | None]:
    """-> (the windows, sorted by address; the first scan of an open_scans or single-use memory:
    (the allocations open at it -- _scan_open's ``open_`` --, its result -- _scan_open's
    entries: _trace_variants' index --), both tuples, or None where no such scan was made).
    ``known``: (allocation, open allocations, result) of a _scan_open made at this allocation
    table just now (_trace_variants' index): the first scan's result where it scans that
    allocation with the same open allocations (the same scan, not made twice)."""
    last = MAX_DEPTH if last is None else min(last, MAX_DEPTH)  # (the deepest windows placed)
    windows: dict[int, Window] = {}
    # a scratch-base word takes part in no candidate (not even as half of a neighbour's pair)
    # (uint32 words as Python ints: what _small_candidates reads)
    user = [0 if i in skip else int(v) & 0xFFFFFFFF for i, v in enumerate(config.user_sgprs)]
    low = _low(memory)  # (a function of the allocation table, which a trace does not change)
    # the allocation the scratch base points into is the scratch backing: never a window, even
    # when some other word happens to look like a pointer into it
    backing = set()
    raw = config.user_sgprs
    for r in sorted(skip):
        if r + 1 in skip and r + 1 < len(raw):
            try:
                a = memory.find(canonical(raw[r] | ((raw[r + 1] & 0xFFFF) << 32)))
            except Exception:
                a = None
            if a is not None:
                backing.add(a.base)
    # allocations a memory says are never windows (the tinygrad hook's copy of unaligned code:
    # no host address, so no host word points into it; decision 0045, amendment)
    backing |= getattr(memory, "never_windows", set())
    # a candidate's reason is (where, word offset) -- text only for the windows placed
    frontier: list[tuple[int, tuple[str, int | None]]] = [
        (addr, (f"user SGPR s{i}", None))
        for addr, i in _small_candidates(user, low)  # (_candidates' pairs, in order)
        if i not in skip
    ]
    # the border-colour table (TA_CS_BC_BASE_ADDR, decision 0043): guest memory the sampler
    # reads for a REGISTER border colour -- the allocation holding the table's base is a window
    # (colours, not pointers: not scanned, unless a user SGPR reaches it first); an entry past
    # it escapes
    bc = getattr(config, "border_color_base", None)
    if bc is not None:
        frontier.append((bc, ("TA_CS_BC_BASE_ADDR", None)))
    depth = 0
    total = 0
    # a single-use memory's scans look only for the allocations not yet windows (nor scratch
    # backing): a candidate into one of those is dropped below anyway (_scan_open)
    # (a memory kept over host bytes, open_scans: the same scans, each head's digest recorded
    # for trace's cache check)
    single = (scanned is None and getattr(memory, "single_use", False)) or getattr(
        memory, "open_scans", False
    )
    open_: list[int] = []
    opened: tuple | None = None  # (the first scan: open allocations, result)
    if single:
        starts, ends, _ = memory.address_index()
    else:
        hit = _hit_test(memory)  # (_scan's; a single-use or open_scans memory's scans: _scan_open)
    while frontier and depth <= last:
        # allocation -> its first candidate at this depth
        nxt: dict[int, tuple[int, tuple[str, int | None]]] = {}
        placed = []
        for addr, (where, off) in frontier:
            try:
                a = memory.find(canonical(addr))
            except Exception:
                a = None
            if a is None or a.base in windows or a.base in backing or len(windows) >= MAX_WINDOWS:
                continue
            size = min(a.size, MAX_WINDOW_BYTES)
            total += size
            if total > MAX_DISPATCH_WINDOW_BYTES:
                raise Refused(
                    "dispatch.windows_too_large",
                    f"the windows the program can reach need more than "
                    f"{MAX_DISPATCH_WINDOW_BYTES} bytes (at {short_name(a.name)!r}, "
                    f"{a.size} bytes at {a.base:#x})",
                )
            why = where if off is None else f"pointer in {where}+{off:#x}"
            windows[a.base] = Window(a.base, size, short_name(a.name), f"{why} -> {canonical(addr):#x}")
            if depth == last:
                continue  # (no depth follows: the pointers in its head would go nowhere)
            if depth == 0 and bc is not None and addr == bc and where == "TA_CS_BC_BASE_ADDR":
                continue  # the colour table holds no pointers
            placed.append(a)
        # the windows placed at this depth scanned after all of them are placed: a scan adds
        # only to the next depth's frontier, so the order of placing and scanning is the same
        # (and a single-use memory's scans look for fewer allocations: _scan_open)
        if single and placed:
            closed = {b & MASK48 for b in windows} | {b & MASK48 for b in backing}
            open_ = [t for t, b in enumerate(starts.tolist()) if b not in closed]
        for a in placed:
            src = short_name(a.name) if a.name else hex(a.base)
            if single:
                if scanned is not None:  # (what _scan records: the stamp, then the head's digest)
                    stamp = content_stamp(memory, a)
                    scanned.append([a, *_scanned(memory, a), stamp])
                if opened is None:
                    was = tuple(open_)
                    if known is not None and a is known[0] and was == known[1]:
                        found = list(known[2])
                    else:
                        found = _scan_open(memory, a, starts, ends, open_, low)
                    opened = (was, tuple(found))  # (the first scan's result: the variants' index)
                else:
                    found = _scan_open(memory, a, starts, ends, open_, low)
            else:
                found = _scan(memory, a, hit, scanned)
            for t, p, j in found:
                nxt.setdefault(t, (p, (src, 4 * j)))
        frontier = list(nxt.values())
        depth += 1
    return sorted(windows.values(), key=lambda w: w.address), opened
