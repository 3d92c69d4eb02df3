"""Touched flags of the written map (WAVELIFT_CUDA_TOUCHED=on; decision 0029's amendment h102):
a kernel's store also flags the chunk of its first and of its last map byte (kernel.h wl_touch),
wl_runs_touched scans only flagged chunks and clears their flags (resident.runs_in_chunks states
it in NumPy; the stand-in CuPy runs that).  Without a GPU: the NumPy statement against a
byte-by-byte oracle and the whole scan; kernel.h's stores compiled for the host by g++ (every
written byte's chunk flagged, no other); the runtime's landing through the stand-in CuPy with a
kernel that writes scattered floats across chunk and window edges (spans exact, every written
float lands, a refused dispatch lands nothing).  Oracles: NumPy, Python loops."""

from __future__ import annotations

import ctypes
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_cuda_memory_host import SIZES, _accesses, _layout, _where, build_memory_lib  # noqa: E402

from wavelift.backends.cuda import resident as R  # noqa: E402


def _runs_oracle(w, flags, shift):
    """wl_runs_touched byte by byte: a start at each marked byte of a flagged chunk whose left
    neighbour is unmarked, an end after each whose right one is."""
    starts, ends = [], []
    n = len(w)
    for j in range(n):
        if not w[j] or not flags[j >> shift]:
            continue
        if j == 0 or not w[j - 1]:
            starts.append(j)
        if j + 1 == n or not w[j + 1]:
            ends.append(j + 1)
    return starts, ends


@pytest.mark.parametrize("seed", range(6))
def test_runs_in_chunks_against_bytes_and_the_whole_scan(seed):
    rng = np.random.default_rng(seed)
    shift = int(rng.choice([3, 4, 6]))
    n = 8 * int(rng.integers(1, 200))
    w = np.zeros(n, np.uint8)
    for _ in range(int(rng.integers(0, 12))):  # runs, some across chunk edges
        lo = int(rng.integers(0, n))
        w[lo : lo + int(rng.integers(1, 3 << shift))] = 1
    nch = -(-n >> shift)
    marked = np.array([w[c << shift : (c + 1) << shift].any() for c in range(nch)])
    # every marked chunk flagged (what the kernel leaves), some others too (stale flags)
    flags = (marked | (rng.random(nch) < 0.2)).astype(np.uint8)
    t = np.concatenate((flags, np.full(8, 7, np.uint8)))  # (past the chunks: not touched)
    s, e = R.runs_in_chunks(w, t, shift)
    whole = R.NumPyOps().runs(w)
    assert s.tolist() == whole[0].tolist() and e.tolist() == whole[1].tolist()
    assert not t[:nch].any() and (t[nch:] == 7).all()
    # a marked chunk left unflagged: its bytes start and end nothing (the map must be zero
    # there: the runtime clears a map whole when a kernel marked it and it did not land)
    if marked.any():
        drop = int(rng.choice(np.flatnonzero(marked)))
        flags2 = flags.copy()
        flags2[drop] = 0
        want = _runs_oracle(w, flags2, shift)
        s, e = R.runs_in_chunks(w, flags2.copy(), shift)
        assert (s.tolist(), e.tolist()) == want


# ------------------------------------------------------------------ kernel.h's stores, on the host
DRIVER = r"""
extern "C" void wl_test(const u64* ws, const u64* we, const i64* wo, u32 n,
                        const u64* gb, const u64* gl, const i64* go, u8* arena, u8* written,
                        u8* touched, const u64* addr, const u32* nb, const u32* slot,
                        const u32* kind, const u32* data, long count) {
  WL_TEST_SETUP();
#ifdef WL_TOUCH
  WL_TOUCHED = touched;
#endif
  for (long i = 0; i < count; i++) {
    if (kind[i] == 0) wl_gstore(C, addr[i], nb[i], data + 4 * i, 7u, slot[i], 0u);
    else wl_gwrite_at(C, arena + addr[i], nb[i], data + 4 * i);  /* (addr: the arena index) */
  }
}
"""


@pytest.fixture(scope="module", params=["touch", "plain"])
def touchlib(tmp_path_factory, request):
    extra = "#define WL_TOUCH 1\n#define WL_TOUCH_SHIFT 4\n" if request.param == "touch" else ""
    return request.param, build_memory_lib(tmp_path_factory, f"touch_{request.param}", DRIVER, extra)


@pytest.mark.parametrize("seed", [1, 2])
def test_stores_flag_exactly_the_chunks_they_mark(touchlib, seed):
    """Stores of 1 to 16 bytes -- through the guess, the search, escaping, at any alignment, or
    a span member's direct write (wl_gwrite_at: aligned) -- across 16-byte chunk edges and window edges:
    the flags set are exactly the chunks holding a marked map byte (WL_TOUCH), none without it."""
    kind_, lib = touchlib
    rng = np.random.default_rng(seed)
    starts, ends, offs, size = _layout(rng, 12)
    count = 1500
    nb = rng.choice(SIZES, count).astype(np.uint32)
    addr, _ = _accesses(rng, starts, ends, nb)
    kind = (rng.random(count) < 0.25).astype(np.uint32)
    for i in np.flatnonzero(kind):  # a span member's write: aligned, inside a window
        k = int(rng.integers(0, len(starts)))
        al = min(int(nb[i]), 4)
        lo = -(-offs[k] // al) * al
        if nb[i] == 3 or lo + nb[i] > offs[k] + ends[k] - starts[k]:
            kind[i] = 0
            continue
        addr[i] = lo + al * int(rng.integers(0, (offs[k] + ends[k] - starts[k] - nb[i] - lo) // al + 1))
    nslot = 64
    slot = rng.integers(0, nslot, count).astype(np.uint32)
    gb, gl, go = np.zeros(nslot, np.uint64), np.zeros(nslot, np.uint64), np.zeros(nslot, np.int64)
    for j in range(nslot):  # (half the slots with a guess: the direct path; the rest search)
        k = int(rng.integers(0, len(starts)))
        if j % 2 and ends[k] - starts[k] >= 16:
            gb[j], gl[j], go[j] = starts[k], ends[k] - starts[k] - 15, offs[k]
    arena = rng.integers(0, 256, size + 8, dtype=np.uint8)
    written = np.zeros(size + 8, np.uint8)
    nch = -(-(size + 8) >> 4)
    touched = np.zeros(nch + 8, np.uint8)
    data = rng.integers(0, 1 << 32, (count, 4), dtype=np.uint64).astype(np.uint32)
    u64 = lambda x: np.ascontiguousarray(np.asarray(x, dtype=np.uint64))  # noqa: E731
    p = lambda x: x.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    ws, we, wo = u64(starts), u64(ends), np.asarray(offs, np.int64)
    A = u64(addr)
    ref = np.zeros_like(written)
    for i in range(count):  # (one store per call: its own flags, from zero)
        touched[:] = 0
        lib.wl_test(
            *(p(x) for x in (ws, we, wo)),
            ctypes.c_uint(len(starts)),
            *(
                p(x)
                for x in (gb, gl, go, arena, written, touched, A[i:], nb[i:], slot[i:], kind[i:], data[i:])
            ),
            ctypes.c_long(1),
        )
        # the bytes it marks (the window arithmetic, independent of the kernel's paths) and
        # the chunks they lie in
        ix = int(addr[i]) if kind[i] else _where(int(addr[i]), int(nb[i]), starts, ends, offs)
        want = np.zeros_like(touched)
        if ix is not None:
            ref[ix : ix + int(nb[i])] = 1
            if kind_ == "touch":
                want[ix >> 4 : ((ix + int(nb[i]) - 1) >> 4) + 1] = 1
        assert touched.tolist() == want.tolist(), (i, ix, int(nb[i]))
    bad = np.flatnonzero(written != ref)
    assert not bad.size, (bad[:8], written[bad[:8]], ref[bad[:8]])


# ------------------------------------------------------------------ the runtime's landing
from test_resident_runtime_host import FakeModule, _run, rig_with  # noqa: E402


class TouchModule(FakeModule):
    """vadd played in Python that writes only the floats ``keep`` names and marks them as a
    WL_TOUCH kernel does: map bytes and the flag of each chunk (R.TOUCH_SHIFT) they lie in --
    or, ``forget``, not the flags of chunks past the first (a wrong kernel)."""

    source = "/* ... */\n#define WL_TOUCH 1\n/* ... */"

    def __init__(self, *a):
        super().__init__(*a)
        self.keep = np.ones(self.n, bool)
        self.forget = False

    def _kernel(self, grid, block, args, shared_mem=0):
        arena, written, c, out = self._operands(args)
        idx = np.flatnonzero(self.keep)
        tp = int(self.consts["WL_TOUCHED"][0])
        flags = np.ctypeslib.as_array(
            ctypes.cast(tp, ctypes.POINTER(ctypes.c_uint8)), (R.touch_bytes(int(written.size)),)
        )
        first = None
        for i in idx:
            arena[c + 4 * i : c + 4 * i + 4] = out[i : i + 1].view(np.uint8)
            written[c + 4 * i : c + 4 * i + 4] = 1
            for j in (c + 4 * i, c + 4 * i + 3):
                ch = j >> R.TOUCH_SHIFT
                first = ch if first is None else first
                if not self.forget or ch == first:
                    flags[ch] = 1
        self._report()


@pytest.fixture
def trig(monkeypatch, request):
    monkeypatch.setenv("WAVELIFT_CUDA_TOUCHED", "on")
    monkeypatch.setattr(R, "TOUCH_SHIFT", request.param)  # (small chunks: many edges)
    return rig_with(monkeypatch, TouchModule)


def _spans(keep, c):
    """The write spans of the floats ``keep`` names at c (runs of them), an independent oracle."""
    out, i, n = [], 0, len(keep)
    while i < n:
        if keep[i]:
            j = i
            while j < n and keep[j]:
                j += 1
            out.append((c + 4 * i, 4 * (j - i)))
            i = j
        else:
            i += 1
    return out


@pytest.mark.parametrize("trig", [3, 5, 8], indirect=True, ids=["8B", "32B", "256B"])
def test_scattered_stores_land_exactly_with_touched_chunks(trig):
    """Dispatches that each write a random subset of c's floats (runs across chunk edges, a chunk
    untouched by one dispatch written by the next, more runs than come back inline): their spans
    are the subset's runs, c holds exactly what each wrote over what was there, the flags are
    clear after each; a refused one lands nothing and the next lands in full."""
    mem, cfg, (a, b, c), n, fm = trig
    rng = np.random.default_rng(fm.n + R.TOUCH_SHIFT)
    av = np.frombuffer(mem.read(a, 4 * n), np.float32).copy()
    bv = np.frombuffer(mem.read(b, 4 * n), np.float32).copy()
    cv = np.frombuffer(mem.read(c, 4 * n), np.float32).copy()
    for step in range(8):
        p = [0.02, 0.5, 0.97][step % 3]
        fm.keep = rng.random(n) < p
        if step == 3:
            fm.keep[:] = False
            fm.keep[n // 2 :] = True  # (the first half's chunks not touched: written next)
        if step == 4:
            fm.keep[:] = False
            fm.keep[: n // 2] = True
        fm.escape = step == 6
        r = _run(mem, cfg)
        res = mem.resident
        if fm.escape:
            assert r.refusal is not None and r.refusal.code == "escape", r.refusal
        else:
            assert r.refusal is None, r.refusal
            assert r.write_spans == _spans(fm.keep, c), step
            cv = np.where(fm.keep, av + bv, cv)
        for _, t in res._touched.values():  # (wl_runs_touched cleared what it scanned)
            assert not t.any() or fm.escape
        assert np.array_equal(np.frombuffer(mem.read(c, 4 * n), np.float32), cv), step


@pytest.mark.parametrize("trig", [4], indirect=True)
def test_a_kernel_that_flags_too_little_lands_too_little(trig):
    """The check above can fail: a kernel that leaves chunks it marked unflagged loses their
    runs (the runtime trusts the flags: the CUDA kernel's marking is what kernel.h states)."""
    mem, cfg, (a, b, c), n, fm = trig
    fm.forget = True
    fm.keep = np.ones(n, bool)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.write_spans != [(c, 4 * n)]
