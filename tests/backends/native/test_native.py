"""The NumPy backend's native tier (docs/decisions/0012-native-tier.md) against NumPy blocks: same
memory, same statistics, same escapes, and the native blocks really ran.  (The fixture and
execution test modules marked `tiers` run every test on both tiers as well: tests/conftest.py.)"""

import pathlib
import threading

import numpy as np
import pytest
from harness import Rig, ptr
from test_basic import VADD

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture
def tiers(monkeypatch, tmp_path):
    """-> run(make) on NumPy blocks and on the native tier, each on fresh memory from
    make() -> (rig, cfg, read): [(numpy result, read()), (native result, read())]."""
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path))
    before = len(native.PROBLEMS)

    def run(make):
        out = []
        for t in ("off", "on"):
            monkeypatch.setattr(runtime, "NATIVE", t)
            rig, cfg, read = make()
            res = rig.run(cfg, cache={})
            out.append((res, read()))
        assert native.PROBLEMS[before:] == []
        return out

    return run


@pytest.fixture
def native_on(monkeypatch, tmp_path):
    """The native tier for every dispatch (its own library cache) -> the runtime module."""
    from wavelift.backends import host
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setattr(runtime, "NATIVE", "on")
    return runtime


# each lane stores its id, then (same block, no barrier) reads the word its neighbour stored:
# within a wave one access completes for every lane before the next starts
NEIGHBOUR = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 2, v0
  global_store_dword v1, v0, s[4:5]
  v_add_nc_u32 v2, 1, v0
  v_and_b32 v2, 31, v2
  v_lshlrev_b32 v2, 2, v2
  global_load_dword v3, v2, s[4:5]
  s_waitcnt vmcnt(0)
  v_mul_lo_u32 v3, v3, 3
  global_store_dword v1, v3, s[6:7]
  s_endpgm
"""


def test_accesses_complete_for_every_lane_in_order(tiers):
    def make():
        r = Rig(NEIGHBOUR)
        scratch = r.buf(np.zeros(32, np.uint32), "scratch")
        out = r.buf(np.zeros(32, np.uint32), "out")
        args = r.buf(np.array([scratch, out], np.uint64).view(np.uint32), "kernarg")
        return (
            r,
            r.config(user_sgprs=ptr(args), groups=(4, 1, 1), block=(32, 1, 1)),
            lambda: r.read(out, np.uint32, 32),
        )

    (a, ma), (b, mb) = tiers(make)
    assert a.landed and b.landed, (a.refusal, b.refusal)
    want = ((np.arange(32) + 1) % 32 * 3).astype(np.uint32)
    np.testing.assert_array_equal(ma, want)
    np.testing.assert_array_equal(mb, want)
    assert b.stats["native"] and b.stats["native_block_runs"] > 0
    assert not a.stats["native"]
    for k in ("lane_instructions", "instructions", "waves", "bytes_written"):
        assert a.stats[k] == b.stats[k], k


def test_escapes_are_reported_alike(tiers):
    def make():
        r = Rig(VADD)
        pa, pb = r.buf(np.ones(256, np.float32), "a"), r.buf(np.ones(256, np.float32), "b")
        # the output pointer far outside every allocation: every active lane's store escapes
        args = r.buf(
            np.array([pa, pb, 0x7000_0000_0000, 200], np.uint64).view(np.uint32)[:7].copy(), "kernarg"
        )
        return r, r.config(user_sgprs=ptr(args), groups=(4, 1, 1), block=(64, 1, 1)), lambda: None

    (a, _), (b, _) = tiers(make)
    assert a.refusal.code == b.refusal.code == "escape"
    assert a.stats["escapes"] == b.stats["escapes"] == 200
    assert [(e.pc, e.wave, e.lane, e.address, e.kind) for e in a.escapes] == [
        (e.pc, e.wave, e.lane, e.address, e.kind) for e in b.escapes
    ]
    assert b.stats["native_block_runs"] > 0


def test_full_screen_kernel_bit_identical(monkeypatch, tmp_path):
    """bench/'s shade kernel (clang-19, f32 math, fma, clamps, byte packing) on 256 waves."""
    import wavelift
    from wavelift.backends import host
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler: the native tier is not available")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path))
    w, h = 256, 64
    rng = np.random.default_rng(7)
    px = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
    wt = rng.uniform(-1.0, 3.0, w * h).astype(np.float32)
    wt[::97] = np.nan
    outs, stats = [], []
    for t in ("off", "on"):
        monkeypatch.setattr(runtime, "NATIVE", t)
        dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
        k = dev.load_code_object(str(ROOT / "bench/kernels/bench-gfx1030-O2-w32.hsaco")).kernel("shade")
        o = dev.upload(np.zeros(w * h, np.uint32))
        r = k.launch(
            groups=(w // 8, h // 8),
            block=(8, 8),
            args=[
                dev.upload(px),
                dev.upload(wt),
                o,
                np.uint32(w),
                np.uint32(h),
                np.float32(1.25),
                np.float32(-8.0),
            ],
        )
        assert r.landed, r.refusal
        outs.append(dev.download(o, np.uint32))
        stats.append(r.stats)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert (
        stats[1]["native_block_runs"] > 0 and stats[0]["lane_instructions"] == stats[1]["lane_instructions"]
    )


def test_generated_source_holds_numbers_not_guest_text():
    from wavelift.backends import native
    from wavelift.frontend.program import lane_count_points, translate
    from wavelift.ir.passes.pipeline import liveness, optimize

    r = Rig(VADD)
    prog = translate(r.code, "gfx1030", 32, r.prog)
    gen = native.BlockSource(32)
    live = liveness(prog, 32, 0xF0)
    src = ""
    for b in prog.blocks:
        blk = optimize(b, 0xF0, 32, live[b.index])
        src += gen.block(blk, lane_count_points(prog, blk), live[b.index])
    assert "wl_ld" in src and "wl_span" in src  # the program's loads and store are there
    for ins in prog.instructions:
        assert ins.text.split()[0] not in src


def test_blocks_past_the_stack_bound_stay_numpy_blocks(native_on, monkeypatch):
    """A block whose lane arrays would not fit the stack bound is left to NumPy (named), the
    driver is not used (not every block is native), and the dispatch lands the same bytes."""
    from test_basic import vadd_rig

    from wavelift.backends import native

    monkeypatch.setattr(native, "MAX_STACK_BYTES", 64)
    r, a, b, pc, cfg = vadd_rig(300, 8)
    cache = {}
    res = r.run(cfg, cache=cache)
    assert res.landed, res.refusal
    assert res.stats["native"] and not res.stats["native_driver"]
    np.testing.assert_array_equal(r.read(pc, np.float32, 300), a[:300] + b[:300])
    module = next(v for v in cache.values() if hasattr(getattr(v, "blocks", None), "natives"))
    (nb,) = module.blocks.natives.values()
    assert any("stack bound" in why for why in nb.unsupported.values()), nb.unsupported


def test_driver_runs_whole_programs_and_matches_the_scheduler(native_on, monkeypatch):
    """A program whose blocks are all native runs in the driver (one call per dispatch), with
    the same memory and statistics as native blocks under the Python scheduler (two waves per
    group, lanes past n idle)."""
    from test_basic import vadd_rig

    runtime = native_on
    got = []
    for drv in (False, True):
        monkeypatch.setattr(runtime, "NATIVE_DRIVER", drv)
        r, a, b, pc, cfg = vadd_rig(1000, 16)
        res = r.run(cfg, cache={})
        assert res.landed, res.refusal
        np.testing.assert_array_equal(r.read(pc, np.float32, 1000), a[:1000] + b[:1000])
        assert res.stats["native_driver"] is drv
        got.append(res)
    for k in ("lane_instructions", "instructions", "waves", "bytes_written"):
        assert got[0].stats[k] == got[1].stats[k], k
    assert got[0].write_spans == got[1].write_spans


# out[tid] = v5 before any write of it (0: registers start at zero), then v5 = group + 1 and
# v7 = group + 2, which the second block stores at out[n + tid] and out[2n + tid]
READ_BEFORE_WRITE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 5
  v_add_nc_u32 v1, s6, v0
  v_lshlrev_b32 v1, 2, v1
  global_store_dword v1, v5, s[4:5]
  v_add_nc_u32 v5, s2, 1
  v_add_nc_u32 v7, s2, 2
  s_cbranch_execz .Lend
  s_add_u32 s4, s4, {n4}
  s_addc_u32 s5, s5, 0
  global_store_dword v1, v5, s[4:5]
  s_add_u32 s4, s4, {n4}
  s_addc_u32 s5, s5, 0
  global_store_dword v1, v7, s[4:5]
.Lend:
  s_endpgm
"""


def test_driver_zeroes_the_registers_read_before_written_in_every_chunk(native_on, monkeypatch):
    """The driver zeroes, for each chunk of workgroups, the registers live at the program's start
    (v5 here, read before any write); the others (v7, written before its read) keep what the
    previous chunk left, which no result sees.  200 one-wave groups: four chunks of one state."""
    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 1)
    groups = 200
    n = 32 * groups
    r = Rig(READ_BEFORE_WRITE.format(n4=4 * n))
    buf = r.buf(np.full(3 * n, 0xDEADBEEF, np.uint32), "buf")
    args = r.buf(np.array([buf], np.uint64).view(np.uint32), "kernarg")
    res = r.run(r.config(user_sgprs=ptr(args), groups=(groups, 1, 1), block=(32, 1, 1)), cache={})
    assert res.landed, res.refusal
    assert res.stats["native_driver"]
    g = np.repeat(np.arange(groups, dtype=np.uint32), 32)
    got = r.read(buf, np.uint32, 3 * n)
    np.testing.assert_array_equal(got[:n], np.zeros(n, np.uint32))
    np.testing.assert_array_equal(got[n : 2 * n], g + 1)
    np.testing.assert_array_equal(got[2 * n :], g + 2)


def test_driver_stops_a_runaway_wave(native_on):
    """The instruction budget holds inside the driver: an endless loop is refused, nothing lands."""
    r = Rig(NEIGHBOUR.replace("  s_endpgm", ".Ltop:\n  v_add_nc_u32 v5, 1, v5\n  s_branch .Ltop\n  s_endpgm"))
    scratch = r.buf(np.zeros(32, np.uint32), "scratch")
    out = r.buf(np.zeros(32, np.uint32), "out")
    args = r.buf(np.array([scratch, out], np.uint64).view(np.uint32), "kernarg")
    res = r.run(r.config(user_sgprs=ptr(args), groups=(4, 1, 1), block=(32, 1, 1)), budget=100_000)
    assert res.refusal.code == "dispatch.budget_exceeded"
    assert res.stats["native_driver"]
    assert (r.read(out, np.uint32, 32) == 0).all() and (r.read(scratch, np.uint32, 32) == 0).all()


# group g: buf[g + 1] = buf[g] + 1 -- each workgroup reads what the one before it wrote
CHAIN = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 2
  v_mov_b32 v1, s6
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v2, 1, v2
  global_store_dword v1, v2, s[4:5] offset:4
  s_endpgm
"""
# every workgroup stores its id to the same word
LAST = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, 0
  v_mov_b32 v2, s2
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""
# buf[gid] += 5 in place: each workgroup reads and writes only its own words
INPLACE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 5
  v_add_nc_u32 v0, s6, v0
  v_lshlrev_b32 v1, 2, v0
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v2, 5, v2
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


def _threads_rig(src, want, groups=64):
    """(rig, buffer, its first bytes, words, config) of a ``groups``-workgroup run of ``src``
    over one buffer (the threaded-driver tests)."""
    r = Rig(src)
    n = max(len(want), 32 * groups if src is INPLACE else groups + 1)
    init = np.arange(n, dtype=np.uint32) if src is INPLACE else np.zeros(n, np.uint32)
    buf = r.buf(init, "buf")
    args = r.buf(np.array([buf], np.uint64).view(np.uint32), "kernarg")
    cfg = r.config(user_sgprs=ptr(args), groups=(groups, 1, 1), block=(32, 1, 1))
    return r, buf, init, n, cfg


@pytest.mark.parametrize(
    "src, want, serial",
    [
        (CHAIN, np.arange(65, dtype=np.uint32), True),  # a read of another thread's bytes
        (LAST, np.array([63], np.uint32), True),  # the same bytes written twice
        (INPLACE, np.arange(2048, dtype=np.uint32) + 5, False),  # each thread its own bytes: no race
    ],
)
def test_driver_threads_give_the_serial_result(native_on, monkeypatch, src, want, serial):
    """Workgroups split over threads: where their order could show (one thread reads within
    what another wrote, or writes a byte it wrote) the run is discarded and done again in one
    thread, and the program runs serially from then on; the result is always the serial one.
    An in-place kernel whose threads each read and write their own bytes stays parallel."""
    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    cache = {}
    r, buf, init, n, cfg = _threads_rig(src, want)
    for _run in range(2):
        r.mem.view(buf, 4 * n)[:] = init.view(np.uint8)
        res = r.run(cfg, cache=cache)
        assert res.landed, res.refusal
        np.testing.assert_array_equal(r.read(buf, np.uint32, len(want)), want)
        assert res.stats["native_driver"] and res.stats["native_threads"] == (1 if serial else 2)
        module = next(v for v in cache.values() if hasattr(getattr(v, "blocks", None), "natives"))
        assert getattr(module, "native_serial", False) is serial


@pytest.mark.parametrize("late", [False, True])
@pytest.mark.parametrize(
    "src, want, serial",
    [
        (CHAIN, np.arange(65, dtype=np.uint32), True),
        (INPLACE, np.arange(2048, dtype=np.uint32) + 5, False),
    ],
)
def test_driver_ranges_claimed_by_whichever_thread(native_on, monkeypatch, calls, src, want, serial, late):
    """The driver's ranges (several a thread) go to whichever thread claims them first: with
    the pool's thread held back until the calling thread has claimed every range, the one
    thread runs them all.  The result is the serial one either way, and so is the race check's
    answer: it compares ranges, not threads (CHAIN's ranges read what earlier ranges wrote: a
    race even when one thread ran them in order), so the stats and the program's serial mark do
    not depend on timing."""
    import time as _time

    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    started: list[float] = []
    if late:
        pool = runtime._pool()

        class Late:
            def submit(self, fn, *args):
                def held():
                    _time.sleep(0.2)  # (the calling thread's ranges take microseconds)
                    started.append(_time.perf_counter())
                    return fn(*args)

                return pool.submit(held)

        monkeypatch.setattr(runtime, "_pool", lambda: Late())
    drives = calls(runtime.Runtime, "_drive_parts")  # (self, lib, G, user, nv, group_waves, bounds)
    cache = {}
    # (enough one-wave workgroups for every range to hold a whole chunk of 64: no range is
    # made smaller than a chunk)
    groups = 2 * runtime.NATIVE_RANGES_PER_THREAD * 64
    want = (
        np.arange(groups + 1, dtype=np.uint32)
        if src is CHAIN
        else np.arange(32 * groups, dtype=np.uint32) + 5
    )
    r, buf, init, n, cfg = _threads_rig(src, want, groups)
    r.mem.view(buf, 4 * n)[:] = init.view(np.uint8)
    res = r.run(cfg, cache=cache)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(buf, np.uint32, len(want)), want)
    parts_seen = [len(d[-1]) - 1 for d in drives]  # (each run's ranges: its bounds less one)
    # the first run: 2 threads x NATIVE_RANGES_PER_THREAD ranges of a chunk each
    assert parts_seen[0] == 2 * runtime.NATIVE_RANGES_PER_THREAD
    assert res.stats["native_driver"] and res.stats["native_threads"] == (1 if serial else 2)
    module = next(v for v in cache.values() if hasattr(getattr(v, "blocks", None), "natives"))
    assert getattr(module, "native_serial", False) is serial
    # (the held-back thread was started for every run of several ranges, after the others)
    assert len(started) == (sum(p > 1 for p in parts_seen) if late else 0)


# buf[i] = i + 7 for thread i < 1280 and every even i above: the first 40 workgroups write all
# their words, the other 24 every other word
GAPS = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 5
  v_add_nc_u32 v0, s6, v0
  v_lshlrev_b32 v1, 2, v0
  v_and_b32 v3, 1, v0
  v_cmp_eq_u32 s8, 0, v3
  v_cmp_gt_u32 vcc_lo, 0x500, v0
  s_or_b32 vcc_lo, vcc_lo, s8
  s_and_b32 exec_lo, exec_lo, vcc_lo
  v_add_nc_u32 v2, 7, v0
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_driver_write_spans_are_the_bytes_written(native_on, monkeypatch, threads):
    """Each range clears the written map's marks of a write hull it wrote whole as it ends
    (wl_settle), and the spans count such a hull written without a scan: the spans are still
    exactly the bytes stored, whether every hull was whole (INPLACE), some were and some had
    gaps (GAPS: the whole ones' bytes join the scanned runs), or the run was one range."""
    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", threads)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    n = 2048
    ids = np.arange(n)
    for src, wrote, want in (
        (GAPS, (ids < 1280) | (ids % 2 == 0), ids.astype(np.uint32) + 7),
        (INPLACE, ids >= 0, ids.astype(np.uint32) + 5),
    ):
        r = Rig(src)
        init = np.arange(n, dtype=np.uint32) if src is INPLACE else np.zeros(n, np.uint32)
        buf = r.buf(init, "buf")
        args = r.buf(np.array([buf], np.uint64).view(np.uint32), "kernarg")
        cfg = r.config(user_sgprs=ptr(args), groups=(64, 1, 1), block=(32, 1, 1))
        cache = {}
        for _run in range(2):  # (the second run: the output window no longer copied in)
            r.mem.view(buf, 4 * n)[:] = init.view(np.uint8)
            res = r.run(cfg, cache=cache)
            assert res.landed, res.refusal
            assert res.stats["native_driver"] and res.stats["native_threads"] == threads
            np.testing.assert_array_equal(r.read(buf, np.uint32, n), np.where(wrote, want, init))
            # the runs of written words, as byte spans
            edges = np.flatnonzero(np.diff(np.concatenate(([0], wrote.astype(np.int8), [0]))))
            spans = [(buf + 4 * int(a), 4 * int(b - a)) for a, b in zip(edges[::2], edges[1::2])]
            assert res.write_spans == spans
            assert res.stats["bytes_written"] == 4 * int(wrote.sum())


def test_library_race_check_gives_the_numpy_answer(native_on, monkeypatch, calls):
    """The library's race check (wl_races, over the ranges' touch rows in place) answers as
    Runtime._races does, on touch rows drawn at random: empty hulls, reads only, writes that
    meet or only abut another range's hulls (a hull is [lo, hi): abutting is no race)."""
    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    met = calls(runtime.Runtime, "_ranges_met")  # (self, lib, parts) each
    r, buf, init, n, cfg = _threads_rig(INPLACE, np.arange(2048, dtype=np.uint32) + 5)
    r.mem.view(buf, 4 * n)[:] = init.view(np.uint8)
    assert r.run(cfg, cache={}).landed
    lib = met[0][1]
    assert lib.races is not None
    rng = np.random.default_rng(25)
    empty = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], np.int64)
    answers = set()
    for _ in range(400):
        nr, nwin = int(rng.integers(2, 9)), int(rng.integers(1, 4))
        t = np.empty((nr, nwin, 2, 2), np.int64)  # [range, window, read/write, lo/hi]
        t[..., 0] = rng.integers(0, 40, size=(nr, nwin, 2))
        t[..., 1] = t[..., 0] + rng.integers(1, 12, size=(nr, nwin, 2))
        t[rng.random((nr, nwin, 2)) < 0.6] = empty  # most hulls empty (else nearly all meet)
        rows = runtime._rows64(nr, 4 * nwin, np.int64)  # (padded rows, as _drive_parts makes)
        rows[:] = t.reshape(nr, -1)
        parts = [(None, runtime._RangeState(None, rows[i]), 0) for i in range(nr)]
        want = runtime.Runtime._races(runtime.Runtime, parts)
        assert bool(lib.races(rows.ctypes.data, rows.strides[0], nr, nwin)) is want
        answers.add(want)
    assert answers == {True, False}


# c = buf[0] by a uniform (scalar) load, then buf[0] = c + 1 (a lane store, or an atomic add of
# one per lane: c + 32) and buf[1 + g] = c: each workgroup's load must see the one before's write
COUNTER = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_load_dword s6, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, 0
{bump}
  s_lshl_b32 s8, s2, 2
  v_mov_b32 v3, s6
  v_mov_b32 v4, s8
  global_store_dword v4, v3, s[4:5] offset:4
  s_endpgm
"""
BUMPS = {
    "store": ("  s_add_u32 s7, s6, 1\n  v_mov_b32 v2, s7\n  global_store_dword v1, v2, s[4:5]", 1),
    "atomic": ("  v_mov_b32 v2, 1\n  global_atomic_add v1, v2, s[4:5]\n  s_waitcnt vmcnt(0)", 32),
}


@pytest.mark.parametrize("bump", sorted(BUMPS))
def test_remembered_uniform_loads_see_the_block_s_own_stores(native_on, monkeypatch, bump):
    """A uniform global load is remembered for the waves of one block call (wl_ldm: the kernarg
    words here, each wave loads them again); a store or atomic of the block into the remembered
    bytes forgets them, so each workgroup reads what the one before it wrote, as in the serial
    order (fails when the stores do not forget: every group then reads 0)."""
    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 1)
    text, step = BUMPS[bump]
    groups = 100  # (two chunks of the driver)
    r = Rig(COUNTER.format(bump=text))
    buf = r.buf(np.zeros(groups + 1, np.uint32), "buf")
    args = r.buf(np.array([buf], np.uint64).view(np.uint32), "kernarg")
    res = r.run(r.config(user_sgprs=ptr(args), groups=(groups, 1, 1), block=(32, 1, 1)), cache={})
    assert res.landed, res.refusal
    assert res.stats["native_driver"]
    got = r.read(buf, np.uint32, groups + 1)
    assert got[0] == step * groups
    np.testing.assert_array_equal(got[1:], step * np.arange(groups, dtype=np.uint32))


def test_driver_threads_without_races_stay_parallel(native_on, monkeypatch):
    from test_basic import vadd_rig

    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    r, a, b, pc, cfg = vadd_rig(1000, 16)
    res = r.run(cfg, cache={})
    assert res.landed and res.stats["native_threads"] == 2
    np.testing.assert_array_equal(r.read(pc, np.float32, 1000), a + b)
    assert res.write_spans == [(pc, 4000)]


# vadd's elements in the guess tests: each buffer a window of the NumPy backend's GUESS_MIN_BYTES (a smaller
# window is copied in, never guessed about)
GUESSED = 4096


def test_driver_aliases_windows_it_never_wrote_and_copies_when_that_changes(native_on):
    """From a program's second driver run on, windows it never wrote are read in place (not
    copied); a store into one is dropped, the run redone with copies, and the result is exact.
    (Buffers of GUESS_MIN_BYTES: a smaller window is always copied in.)"""
    from test_basic import vadd_rig

    r, a, b, pc, cfg = vadd_rig(GUESSED, GUESSED // 64)
    cache = {}
    res = r.run(cfg, cache=cache)  # copies everything, learns: c is written
    module = next(v for v in cache.values() if hasattr(v, "written_windows"))
    assert res.landed and module.driven and module.alias_ok
    assert res.stats["windows_aliased"] == 0
    res = r.run(cfg, cache=cache)  # a, b (and the kernel arguments) aliased
    assert res.landed and module.alias_ok and res.stats["windows_aliased"] >= 2
    np.testing.assert_array_equal(r.read(pc, np.float32, GUESSED), a + b)
    # the same program now writes into a (never written before: aliased, so the run is redone)
    pa = ptr(int(cfg.user_sgprs[0]) | int(cfg.user_sgprs[1]) << 32)
    kern = int(pa[0]) | int(pa[1]) << 32
    words = r.read(kern, np.uint32, 7).copy()
    words[4:6] = words[0:2]  # c := a
    r.mem.view(kern, 28)[:] = words.view(np.uint8)
    res = r.run(cfg, cache=cache)
    assert res.landed, res.refusal
    assert not module.alias_ok and res.stats["windows_aliased"] == 0
    np.testing.assert_array_equal(r.read(int(words[0]) | int(words[1]) << 32, np.float32, GUESSED), a + b)
    assert r.read(pc, np.float32, GUESSED).tolist() == (a + b).tolist()  # untouched this time


def test_driver_leaves_windows_it_only_wrote_blank_and_copies_when_that_changes(native_on):
    """From a program's second driver run on, windows it wrote and never read are not copied in
    (only the bytes it stores land); a read of one stops the run, which is redone with copies."""
    from test_basic import vadd_rig

    r, a, b, pc, cfg = vadd_rig(GUESSED, GUESSED // 64)
    cache = {}
    res = r.run(cfg, cache=cache)
    module = next(v for v in cache.values() if hasattr(v, "written_windows"))
    assert res.landed and res.stats["windows_blank"] == 0
    pa = ptr(int(cfg.user_sgprs[0]) | int(cfg.user_sgprs[1]) << 32)
    kern = int(pa[0]) | int(pa[1]) << 32
    words = r.read(kern, np.uint32, 7).copy()
    a_addr = int(words[0]) | int(words[1]) << 32
    a2 = (a * 3).astype(np.float32)
    r.mem.view(a_addr, 4 * GUESSED)[:] = a2.view(np.uint8)
    r.mem.view(pc, 4 * GUESSED)[:] = np.full(GUESSED, 7, np.float32).view(np.uint8)
    res = r.run(cfg, cache=cache)  # c blank: its old bytes never read
    assert res.landed and module.blank_ok and res.stats["windows_blank"] == 1
    np.testing.assert_array_equal(r.read(pc, np.float32, GUESSED), a2 + b)
    # the program now reads c (a := c): the run reads a blank window, is redone with copies
    words[0:2] = words[4:6]
    r.mem.view(kern, 28)[:] = words.view(np.uint8)
    res = r.run(cfg, cache=cache)
    assert res.landed, res.refusal
    assert not module.blank_ok and res.stats["windows_blank"] == 0
    np.testing.assert_array_equal(r.read(pc, np.float32, GUESSED), (a2 + b) + b)


def test_driver_copies_windows_under_the_guess_size_in(native_on, driver_runs):
    """Windows under GUESS_MIN_BYTES are copied in on every run, never aliased nor left blank
    (their copy costs less than a guess's set-up; decision 0035, amendment h117): a program
    dispatched again runs once a dispatch (no guess to fail), with the same results."""
    from test_basic import vadd_rig

    r, a, b, pc, cfg = vadd_rig(1000, 16)
    cache: dict = {}
    runs = driver_runs
    for _ in range(3):
        res = r.run(cfg, cache=cache)
        assert res.landed and res.stats["native_driver"]
        assert res.stats["windows_aliased"] == 0 and res.stats["windows_blank"] == 0
        np.testing.assert_array_equal(r.read(pc, np.float32, 1000), a + b)
    assert len(runs) == 3
    module = next(v for v in cache.values() if hasattr(v, "written_windows"))
    assert module.alias_ok and module.blank_ok  # (no guess made, so none failed)


# Deferred EXEC blends (ir.blends.deferred_blends): in the branch's block, v1, v2 and v5 are
# written under a partial EXEC (lanes < 20) and are live after it; v_cmp reads the raw v1 (a
# ballot under the same EXEC).  The second program also reads inactive lanes of a register
# written in the block (v_readlane of lane 25, DPP row_shl from lane 20): those must see the old
# value (fi:1 fetches inactive lanes), so that block blends at every write.
DEFERRED = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_mov_b32 v1, 7
  v_mov_b32 v2, 5
  v_mov_b32 v4, 11
  v_mov_b32 v5, 9
  v_cmp_gt_u32 vcc_lo, 20, v0
  s_and_saveexec_b32 s8, vcc_lo
  s_cbranch_execz .Lend
  v_mul_lo_u32 v1, v0, 3
  v_add_nc_u32 v2, v1, v2
  v_cmp_gt_u32 vcc_lo, 30, v1
  v_cndmask_b32 v5, 0, 1, vcc_lo
  {cross}
.Lend:
  s_or_b32 exec_lo, exec_lo, s8
  v_lshlrev_b32 v3, 4, v0
  s_waitcnt lgkmcnt(0)
  global_store_dwordx2 v3, v[1:2], s[4:5]
  v_add_nc_u32 v6, 8, v3
  global_store_dword v6, v4, s[4:5]
  v_add_nc_u32 v6, 12, v3
  global_store_dword v6, v5, s[4:5]
  s_endpgm
"""
CROSS = {
    "deferred": "",
    "readlane": "  v_readlane_b32 s9, v1, 25\n  v_add_nc_u32 v4, s9, v4\n",
    "dpp": "  v_mov_b32_dpp v4, v1 row_shl:1 row_mask:0xf bank_mask:0xf fi:1\n",
}


@pytest.mark.parametrize("cross", list(CROSS))
def test_deferred_exec_blends(tiers, cross):
    def make():
        r = Rig(DEFERRED.replace("{cross}", CROSS[cross]))
        out = r.buf(np.zeros(32 * 4, np.uint32), "out")
        return (
            r,
            r.config(user_sgprs=ptr(r.buf(np.array([out], np.uint64), "kernarg")), block=(32, 1, 1)),
            lambda: r.read(out, np.uint32, 32 * 4).reshape(32, 4),
        )

    (a, ma), (b, mb) = tiers(make)
    assert a.landed and b.landed, (a.refusal, b.refusal)
    i = np.arange(32)
    on = i < 20
    want = np.stack(
        [
            np.where(on, 3 * i, 7),
            np.where(on, 3 * i + 5, 5),
            np.full(32, 11),
            np.where(on, (3 * i < 30).astype(int), 9),
        ],
        1,
    ).astype(np.uint32)
    if cross == "readlane":  # lane 25 is inactive: the old v1
        want[:, 2] = np.where(on, 11 + 7, 11)
    elif cross == "dpp":  # lane 19 reads lane 20 (inactive: the old v1); lane 15 reads
        nxt = np.where(i + 1 < 20, 3 * (i + 1), 7)  # out of its row: v4 keeps 11
        want[:, 2] = np.where(on & (i % 16 != 15), nxt, 11)
    np.testing.assert_array_equal(ma, want)
    np.testing.assert_array_equal(mb, want)
    assert b.stats["native_block_runs"] > 0 or b.stats.get("native_driver")


def test_auto_compiles_in_the_background(monkeypatch, tmp_path):
    """WAVELIFT_NATIVE=auto: a library not in the disk cache compiles while the dispatch runs on NumPy
    blocks (a large program costs g++ -O3 minutes: fuzz pm4 seed 3364 took 106 s); a later
    dispatch uses it once it is ready, with the same memory; the next process finds it cached."""
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler: the native tier is not available")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_MIN_WAVES", 1)
    real = native._store_in_child
    began, gate = threading.Event(), threading.Event()

    def slow_build(*a, **k):  # the compile ends only when the test says so
        began.set()
        gate.wait(60)
        return real(*a, **k)

    monkeypatch.setattr(native, "_store_in_child", slow_build)
    r = Rig(NEIGHBOUR)
    scratch = r.buf(np.zeros(32, np.uint32), "scratch")
    out = r.buf(np.zeros(32, np.uint32), "out")
    args = r.buf(np.array([scratch, out], np.uint64).view(np.uint32), "kernarg")
    cfg = r.config(user_sgprs=ptr(args), groups=(4, 1, 1), block=(32, 1, 1))
    want = ((np.arange(32) + 1) % 32 * 3).astype(np.uint32)
    cache: dict = {}
    first = r.run(cfg, cache=cache)
    assert first.landed and began.wait(10)
    assert first.stats["native"] is False and first.stats["native_compiling"] is True
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), want)
    gate.set()
    native.wait_for_compiles()
    r.mem.write(out, np.zeros(32, np.uint32).tobytes())
    second = r.run(cfg, cache=cache)  # the same module: its library is attached now
    assert second.landed and second.stats["native"] and second.stats["native_block_runs"] > 0
    assert "native_compiling" not in second.stats
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), want)
    assert first.stats["lane_instructions"] == second.stats["lane_instructions"]
    assert list(tmp_path.glob("*.so")), "the background compile did not reach the disk cache"


def test_driver_threads_a_looping_program_below_the_wave_threshold(native_on, monkeypatch):
    """bench/'s Collatz kernel (clang-19: a loop with data-dependent trip counts) on 256 waves,
    under the straight-line threshold (NATIVE_THREAD_MIN_WAVES): a program that loops is split
    over the threads from NATIVE_THREAD_MIN_LOOP_WAVES waves on (decision 0013), a straight-line
    one of the same size (shade) is not; the step counts equal a NumPy model of the loop and
    the NumPy blocks' run, bit for bit."""
    import sys

    import wavelift

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_exec import collatz_numpy

    runtime = native_on
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    assert runtime.NATIVE_THREAD_MIN_LOOP_WAVES <= 256 < runtime.NATIVE_THREAD_MIN_WAVES
    n = 8192
    rng = np.random.default_rng(3)
    start = rng.integers(1, 100_000, size=n).astype(np.uint32)
    start[:3] = [1, 27, 97]
    hsaco = str(ROOT / "bench/kernels/bench-gfx1030-O2-w32.hsaco")
    outs, stats = [], []
    for t in ("off", "on"):
        monkeypatch.setattr(runtime, "NATIVE", t)
        dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
        k = dev.load_code_object(hsaco).kernel("collatz")
        o = dev.upload(np.zeros(n, np.uint32))
        r = k.launch(groups=(n // 256,), block=(256,), args=[dev.upload(start), o, np.uint32(1000)])
        assert r.landed, r.refusal
        outs.append(dev.download(o, np.uint32))
        stats.append(r.stats)
    np.testing.assert_array_equal(outs[0], collatz_numpy(start, 1000))
    np.testing.assert_array_equal(outs[1], outs[0])
    assert stats[1]["native_driver"] and stats[1]["native_threads"] == 2
    assert stats[0]["lane_instructions"] == stats[1]["lane_instructions"]

    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    k = dev.load_code_object(hsaco).kernel("shade")
    w, h = 128, 64  # 256 waves of 8x8 groups, straight-line
    o = dev.upload(np.zeros(w * h, np.uint32))
    px, wt = dev.upload(np.zeros(w * h, np.uint32)), dev.upload(np.ones(w * h, np.float32))
    args = [px, wt, o, np.uint32(w), np.uint32(h), np.float32(1.25), np.float32(-8.0)]
    r = k.launch(groups=(w // 8, h // 8), block=(8, 8), args=args)
    assert r.landed and r.stats["native_driver"] and r.stats["waves"] == 256
    assert r.stats["native_threads"] == 1


def _stream_copy(monkeypatch):
    """The streaming copy helper, compiled afresh into the test's cache (the first call starts
    its background compile and returns None)."""
    from wavelift.backends import native

    monkeypatch.setattr(native, "_STREAM", [])
    assert native.stream_copy() is None  # (compiling)
    native.wait_for_compiles()
    copy = native.stream_copy()
    assert copy is not None
    return copy


def test_stream_copy_copies_exactly_the_bytes(native_on, monkeypatch):
    """Landing's streaming copy (decision 0013, amendment h91): every size around its 16-byte
    alignment head and 64-byte body, at every destination alignment, writes exactly the source's
    bytes and nothing either side of them."""
    copy = _stream_copy(monkeypatch)
    rng = np.random.default_rng(91)
    for n in (0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4133):
        for off in range(18):
            src = rng.integers(0, 256, n + 7, dtype=np.uint8)[7 - off % 7 :][:n]
            buf = rng.integers(0, 256, n + 64, dtype=np.uint8)
            want = buf.copy()
            want[off : off + n] = src
            copy(buf[off : off + n], src)
            np.testing.assert_array_equal(buf, want, err_msg=f"n={n} off={off}")


def test_driver_lands_large_spans_with_the_streaming_copy(native_on, monkeypatch):
    """A native-driver dispatch lands its spans of STREAM_MIN bytes or more with the streaming
    copy (here every span: STREAM_MIN 1), the same bytes as NumPy's copy."""
    from test_basic import vadd_rig

    from wavelift.backends import native

    copy = _stream_copy(monkeypatch)
    calls = []

    def counted():
        def c(dst, src):
            calls.append(dst.nbytes)
            copy(dst, src)

        return c

    monkeypatch.setattr(native, "stream_copy", counted)
    monkeypatch.setattr(native, "STREAM_MIN", 1)
    r, a, b, pc, cfg = vadd_rig(1000, 16)
    res = r.run(cfg, cache={})
    assert res.landed and res.stats["native_driver"]
    assert calls == [4000]
    np.testing.assert_array_equal(r.read(pc, np.float32, 1000), a + b)
