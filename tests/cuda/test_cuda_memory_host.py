"""The CUDA kernel's global loads and stores (codegen's wl_gload / wl_gstore: window guess,
direct aligned access, hint, binary search, escapes, written-byte map), compiled for the host with
g++ through wavelift/backends/host.py's shim and run against window tables laid out as WindowSet lays them
out: every access reads or writes exactly the bytes the window arithmetic names, whatever the
guesses say (right, stale, none), the alignment, the size or the table's size (constant-memory
tables up to WL_CW windows, global ones beyond); an address outside every window -- a
non-canonical one, or an access that would wrap past 2^64 onto the window at 0 -- escapes and
touches nothing.  No GPU needed; skips without g++."""

from __future__ import annotations

import ctypes
import pathlib

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

from wavelift.backends.cuda import codegen as G
from wavelift.backends.cuda.codegen import CONST_WINDOWS

HERE = pathlib.Path(__file__).resolve().parent
NSLOT = 64
SIZES = (1, 2, 3, 4, 8, 12, 16)

SHIM = r"""
#define __constant__
template<class T> T atomicAdd(T* p, T v){T o=*p; *p=o+v; return o;}
template<class T> T atomicOr(T* p, T v){T o=*p; *p=o|v; return o;}
"""

# the drivers' common start: the window tables and guesses in the kernel's variables (WL_GA as
# kernel.h defines it, for this arena: test_loads_and_stores_hit_exactly_their_bytes holds it to
# codegen.guess_pointers, what the runtime puts there), one
# context C over the arena, written map, status, stats and escape buffers (a C macro: it declares
# locals the driver's loop uses)
SETUP = r"""
#define WL_TEST_SETUP() \
  for (u32 j = 0; j < n && j < WL_CW; j++) { WL_WS[j] = ws[j]; WL_WE[j] = we[j]; WL_WO[j] = wo[j]; } \
  for (u32 j = 0; j < WL_NGUESS; j++) { WL_GB[j] = gb[j]; WL_GL[j] = gl[j]; WL_GO[j] = go[j]; } \
  for (u32 j = 0; j < WL_NGUESS; j++) WL_GA[j] = gl[j] ? (u64)arena + (u64)go[j] - gb[j] : 0ull; \
  for (u32 j = 0; j < WL_NSLOT; j++) WL_HINT[j] = 0xffffffffu; \
  u32 status[16] = {0}; u64 stats[8 + 2 * 256] = {0}; u32 esc[8 * 16] = {0}; \
  WlCtx C; C.W.start = ws; C.W.end = we; C.W.off = wo; C.W.n = n; \
  C.arena = arena; C.written = written; WL_STATUS = status; WL_STATS = stats; WL_ESC = esc; \
  C.gscr = 0; C.wave = 0;
"""

DRIVER = r"""
extern "C" void wl_test(const u64* ws, const u64* we, const i64* wo, u32 n,
                        const u64* gb, const u64* gl, const i64* go, u8* arena, u8* written,
                        const u64* addr, const u32* nb, const u32* slot, const u32* store,
                        const u32* data, long count, u32* out, u32* escaped) {
  WL_TEST_SETUP();
  for (long i = 0; i < count; i++) {
    const u64 before = stats[2];
    u32 w[4] = {0u, 0u, 0u, 0u};
    if (store[i]) wl_gstore(C, addr[i], nb[i], data + 4 * i, 7u, slot[i], 0u);
    else wl_gload(C, addr[i], true, nb[i], w, 4u, 7u, slot[i], 0u, true);
    for (int k = 0; k < 4; k++) out[4 * i + k] = w[k];
    escaped[i] = stats[2] != before;
  }
}
"""


def build_memory_lib(tmp_path_factory, name: str, driver: str, extra: str = ""):
    """The prelude's address checks and window lookups (shared with the native tier:
    host.prelude_semantics) compiled for the host by g++ with ``driver`` (C++ calling them);
    ``extra``: defines before the kernel's context (e.g. codegen's ``#define WL_RETEST 0``)."""
    host_build.gxx()
    from wavelift.backends.cuda import codegen as G
    from wavelift.backends.cuda.prelude import PRELUDE
    from wavelift.backends.host import HOST_SHIM

    head = PRELUDE[: PRELUDE.index("/* wave64:")]
    win = PRELUDE[
        PRELUDE.index("/* guest addresses") : PRELUDE.index(
            "/* ----------------------------------------------------------------------- atomics */"
        )
    ]
    defs = (
        f"#define WL_MEMFN __forceinline__\n#define WL_NSLOT {NSLOT}u\n#define WL_NGUESS {NSLOT}u\n"
        "#define WL_MIRROR_WORDS 1u\n#define WL_NPRE 1u\n#define WL_PRE_WORDS 1u\n" + extra
    )
    source = HOST_SHIM + SHIM + head + win + defs + G._CTX + SETUP + driver
    flags = ("-O1", "-std=c++17", "-w", "-shared", "-fPIC", f"-I{HERE}")
    return host_build.load(tmp_path_factory.mktemp(name), name, source, flags)


# WL_MAP_BITS 1 (WAVELIFT_CUDA_MAP=bits): the map as bits (mapbits.h), each access here one
# lane's alone -- a warp of one active lane, so its intrinsics are that lane's own values (the
# warp's lanes together: tests/cuda/test_land_host.py)
ONE_LANE = r"""
struct wl_tid { unsigned x; };
static wl_tid threadIdx = {0u};
static inline unsigned __activemask() { return 1u; }
static inline unsigned __match_any_sync(unsigned m, unsigned long long) { return m & 1u; }
static inline unsigned __reduce_or_sync(unsigned, unsigned v) { return v; }
static inline int __any_sync(unsigned, int p) { return p != 0; }
static inline int __all_sync(unsigned, int p) { return p != 0; }
static inline unsigned __ballot_sync(unsigned m, int p) { return p ? m & 1u : 0u; }
static inline unsigned long long __shfl_sync(unsigned, unsigned long long v, int) { return v; }
#define WL_MAP_BITS 1
"""


# WL_RETEST 0 (WAVELIFT_CUDA_RETEST=off): the rare path searches without testing the guess again
@pytest.fixture(
    scope="module",
    params=["", "#define WL_RETEST 0\n", ONE_LANE],
    ids=["retest", "noretest", "bits"],
)
def memlib(tmp_path_factory, request):
    lib = build_memory_lib(tmp_path_factory, "mem", DRIVER, request.param)
    lib.map_bits = request.param is ONE_LANE
    return lib


def u64(x) -> np.ndarray:
    """``x`` as a contiguous uint64 array (a driver's u64* argument)."""
    return np.ascontiguousarray(np.asarray(x, dtype=np.uint64))


def p(x):
    """A NumPy array's data as a driver's pointer argument."""
    return x.ctypes.data_as(ctypes.c_void_p)


def check_access(a, nb, store, data, out, escaped, layout, ref, ref_written) -> None:
    """One access of ``nb`` bytes at guest address ``a`` against the window arithmetic: escaped
    exactly outside every window; a store applied to ``ref`` / ``ref_written``, a load's words
    ``out`` equal to ``ref``'s bytes."""
    ix = _where(a, nb, *layout)
    assert bool(escaped) == (ix is None), (hex(a), nb, ix)
    if ix is None:
        return
    if store:
        ref[ix : ix + nb] = data.view(np.uint8)[:nb]
        ref_written[ix : ix + nb] = 1
    else:
        want = np.zeros(16, np.uint8)
        want[:nb] = ref[ix : ix + nb]
        assert list(out) == list(want.view(np.uint32)), (hex(a), nb)


def check_memory(lib, arena, ref, written, ref_written, size) -> None:
    """After a run of accesses: the arena's first ``size`` bytes are ``ref``'s (the bytes check_access
    stored) and the written map marks exactly ``ref_written``'s bytes -- as bits where ``lib``
    keeps the map as bits (the oracle: NumPy's packbits, little-endian bit order)."""
    assert (arena[:size] == ref[:size]).all()
    if lib.map_bits:
        want = np.packbits(ref_written != 0, bitorder="little")
        assert (written[: want.size] == want).all() and not written[want.size :].any()
    else:
        assert (written == ref_written).all()


def _layout(rng, n):
    """n windows as WindowSet places them: sorted, apart, each at an arena offset congruent to
    its address mod 8; a few in the upper canonical half."""
    starts, ends, offs, pos = [], [], [], 0
    a = -16  # the first window at address 0 (decision 0014)
    for k in range(n):
        a += int(rng.integers(16, 4096)) if k else 16
        if k == n - 2:
            a = 0xFFFF_8000_0000_0000 + int(rng.integers(0, 64))
        size = int(rng.integers(1, 200))
        pos += (a - pos) % 8
        starts.append(a)
        ends.append(a + size)
        offs.append(pos)
        pos += size
        a += size
    return starts, ends, offs, pos + 16


def _accesses(rng, starts, ends, sizes):
    """An address per access of sizes[i] bytes."""
    addr, nb = [], []
    for n in map(int, sizes):
        k = int(rng.integers(0, len(starts)))
        r = rng.random()
        if r < 0.6:  # inside (or straddling the end of) a window
            a = starts[k] + int(rng.integers(0, ends[k] - starts[k]))
            if rng.random() < 0.7:
                a &= ~(min(n, 4) - 1) if n in (1, 2, 4, 8, 12, 16) else ~0
        elif r < 0.75:  # just before / at the end of a window
            a = (
                starts[k] - int(rng.integers(1, 4))
                if rng.random() < 0.5
                else ends[k] - n + int(rng.integers(0, 3))
            )
        elif r < 0.85:  # a non-canonical spelling of a window's address
            a = (
                (starts[k] & 0xFFFF_FFFF_FFFF) | (int(rng.integers(1, 0xFFFF)) << 48)
                if starts[k] < (1 << 47)
                else starts[k] & 0xFFFF_FFFF_FFFF
            )
        elif r < 0.9:  # the top of the space: wraps onto window 0 at 0
            a = (1 << 64) - int(rng.integers(1, 17))
        else:  # anywhere
            a = int(rng.integers(0, 1 << 63))
        addr.append(a & 0xFFFF_FFFF_FFFF_FFFF)
        nb.append(n)
    return addr, nb


def _where(a, n, starts, ends, offs):
    """The arena index of n bytes at a (exact integers), None: an escape -- a non-canonical
    address reaches no window (decision 0014)."""
    if (1 << 47) <= a < 0xFFFF_8000_0000_0000:
        return None
    for s, e, o in zip(starts, ends, offs):
        if s <= a and a + n <= e:
            return o + a - s
    return None


# window tables in constant memory (up to codegen.CONST_WINDOWS) and in global memory beyond
@pytest.mark.parametrize("nwin,seed", [(6, 1), (40, 2), (CONST_WINDOWS + 72, 3)])
def test_loads_and_stores_hit_exactly_their_bytes(memlib, nwin, seed):
    lib = memlib
    rng = np.random.default_rng(seed)
    starts, ends, offs, size = _layout(rng, nwin)
    count = 3000
    # a slot is one access instruction: one size; its guess (codegen.guesses) a window of the
    # table -- the one its next access hits or not (stale) -- or none
    slot_size = rng.choice(SIZES, NSLOT)
    slot = rng.integers(0, NSLOT, count).astype(np.uint32)
    addr, nb = _accesses(rng, starts, ends, slot_size[slot])
    gb, gl, go = (np.zeros(NSLOT, np.uint64), np.zeros(NSLOT, np.uint64), np.zeros(NSLOT, np.int64))
    for j in range(NSLOT):
        k = int(rng.integers(0, nwin))
        if rng.random() < 0.8 and ends[k] - starts[k] >= slot_size[j]:
            gb[j], gl[j], go[j] = starts[k], ends[k] - starts[k] - slot_size[j] + 1, offs[k]
    store = (rng.random(count) < 0.3).astype(np.uint32)
    data = rng.integers(0, 1 << 32, (count, 4), dtype=np.uint64).astype(np.uint32)
    arena = rng.integers(0, 256, size + 8, dtype=np.uint8)
    ref = arena.copy()
    written = np.zeros(size + 8, np.uint8)
    out = np.zeros((count, 4), np.uint32)
    escaped = np.zeros(count, np.uint32)
    ws, we, wo = u64(starts), u64(ends), np.asarray(offs, np.int64)
    A, NB = u64(addr), np.asarray(nb, np.uint32)
    # one access per call, so the reference can follow stores in order
    ref_written = np.zeros_like(written)
    for i in range(count):
        lib.wl_test(
            p(ws),
            p(we),
            p(wo),
            ctypes.c_uint(nwin),
            p(gb),
            p(gl),
            p(go),
            p(arena),
            p(written),
            p(A[i:]),
            p(NB[i:]),
            p(slot[i:]),
            p(store[i:]),
            p(data[i:]),
            ctypes.c_long(1),
            p(out[i:]),
            p(escaped[i:]),
        )
        check_access(
            addr[i], nb[i], store[i], data[i], out[i], escaped[i], (starts, ends, offs), ref, ref_written
        )
    check_memory(lib, arena, ref, written, ref_written, size)
    # (SETUP's WL_GA, which the loads above went through, is the runtime's for these guesses)
    ga = np.ctypeslib.as_array((ctypes.c_uint64 * NSLOT).in_dll(lib, "WL_GA"))
    assert np.array_equal(ga, G.guess_pointers((gb, gl, go), arena.ctypes.data))
