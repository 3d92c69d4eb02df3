"""WL_GA, the loads' window pointers (kernel.h's wl_gload: a load's pointer is WL_GA + addr;
decision 0009's amendment h149), made on the host from the guesses and the device address of
the arena or heap a launch runs on -- constants the runtime keeps across dispatches (its memo,
the kept plans that launch without setting constants, the timing repeats' launches on copies).
Without a GPU: codegen.guess_pointers against the window arithmetic, and the stand-in CuPy's
vadd run through the real runtime, checking at every launch that each guessed slot's WL_GA
names the arena that launch was given (oracle: the window tables and the launch's arguments)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_host_path import _device, _vadd_from_kernargs  # noqa: E402

from wavelift.backends.cuda import codegen as G  # noqa: E402

M64 = (1 << 64) - 1


def test_guess_pointers_name_the_arena_byte_of_every_guessed_address():
    """For an address inside a slot's guess, WL_GA + addr (mod 2^64) is the device address of
    its byte in the arena, as the window table places it; no guess: 0.  Windows in both
    canonical halves, arenas low and high (the sums wrap)."""
    starts = [0x1000, 0x7FFF_FFFF_F000, 0xFFFF_8000_0000_0040, 0x20_0000]
    ends = [0x1100, 0x8000_0000_0000, 0xFFFF_8000_0000_0140, 0x20_0010]
    offs = [8, 0x108, 0x1210, 0x1318]
    nb = [4, 4, 8, 2, 32, 4]
    hints = np.array([0, 1, 2, 3, 3, 9], np.int64)  # (slot 4: too small a window; 5: none)
    g = G.guesses(nb, hints, starts, ends, offs)
    rng = np.random.default_rng(149)
    for arena in (0x7F00_0000_0000, 0x10, M64 - 0xFFF):
        ga = G.guess_pointers(g, arena)
        assert ga.dtype == np.uint64 and ga.shape == g[0].shape
        assert int(ga[4]) == 0 and int(ga[5]) == 0 and not int(g[1][4]) and not int(g[1][5])
        for j in range(4):
            k = int(hints[j])
            for a in (
                starts[k],
                ends[k] - nb[j],
                starts[k] + int(rng.integers(0, ends[k] - nb[j] - starts[k] + 1)),
            ):
                assert int(g[0][j]) <= a < int(g[0][j]) + int(g[1][j])  # (inside the guess)
                assert (int(ga[j]) + a) & M64 == (arena + offs[k] + a - starts[k]) & M64, (j, hex(a))


def _checking(seen):
    """vadd's stand-in (test_host_path), which first checks every guessed slot's WL_GA against
    the arena it was launched on: WL_GA + WL_GB == arena + WL_GO (mod 2^64)."""
    inner = _vadd_from_kernargs()

    def kernel(arena, written, ws, we, wo, consts):
        ptr = np.asarray(arena).ctypes.data
        gb, gl = consts["WL_GB"].view(np.uint64), consts["WL_GL"].view(np.uint64)
        go, ga = consts["WL_GO"].view(np.int64), consts["WL_GA"].view(np.uint64)
        for j in np.flatnonzero(gl).tolist():
            assert (int(ga[j]) + int(gb[j])) & M64 == (ptr + int(go[j])) & M64, (j, seen["launches"])
            seen["slots"] += 1
        seen["launches"] += 1
        seen["arenas"].add(ptr)
        inner(arena, written, ws, we, wo, consts)

    return kernel


@pytest.mark.parametrize(
    "inplace, heap, reps",
    [("proved", "one", 0), ("off", "one", 0), ("off", "off", 0), ("proved", "one", 2), ("off", "off", 2)],
    ids=["inplace", "arena-heap", "arena", "inplace-repeats", "arena-repeats"],
)
def test_every_launch_finds_its_own_arena_in_wl_ga(standin, monkeypatch, inplace, heap, reps):
    """A session of vadd launches -- the same again (kept plans), another output, new
    allocations (the staging arena grows), host writes, the timing repeats' launches on
    copies --: at each launch every guessed slot's WL_GA is that launch's arena's, and the
    results are NumPy's."""
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", inplace)
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", heap)
    monkeypatch.setenv("WAVELIFT_CUDA_TIMING_REPEAT", str(reps))
    seen: dict = {"slots": 0, "launches": 0, "arenas": set()}
    standin.kernel = _checking(seen)
    dev, k = _device()
    n = 64
    rng = np.random.default_rng(7)
    host = [rng.standard_normal(n).astype(np.float32) for _ in range(2)]
    a, b = (dev.upload(x) for x in host)
    outs = [dev.alloc(4 * n)]
    for i in range(24):
        if i in (6, 15):  # a new allocation, larger each time (the staging arena is made again)
            outs.append(dev.alloc(4 * n * (i + 1)))
            dev.upload(np.zeros(n * (i + 1), np.float32))
        if i == 10:  # the host writes an input
            host[0] = rng.standard_normal(n).astype(np.float32)
            dev.write(a, host[0])
        c = outs[i % len(outs)] if i % 5 == 4 else outs[-1]
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
        assert r.refusal is None, r.refusal
        assert np.array_equal(dev.download(c, np.float32)[:n], host[0] + host[1]), i
    assert seen["launches"] >= 24 * (1 + (reps + 1 if reps else 0)) and seen["slots"] >= seen["launches"]
    assert len(seen["arenas"]) >= (3 if reps or heap == "off" else 1)
