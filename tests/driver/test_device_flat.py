"""Device(record=False) (issue 24 item 2): a Device whose memory and per-launch cost stay flat.
Its launches reuse their kernargs, dispatch packet and IB (and an ACO launch's descriptor sets)
and must give exactly what a recording Device gives: the same results and memory, the same
windows but for the reused allocations' names, a refused launch still changing nothing."""

import numpy as np
import pytest
from testpaths import FIXTURES

import wavelift
from wavelift.errors import UserError


def _vadd(record):
    dev = wavelift.Device("gfx1030", record=record)
    k = dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-flat.hsaco").kernel("vadd")
    return dev, k


def _plain(windows):
    """Windows without the launch-scoped allocations' names (#N or '(reused)')."""
    return [(w.size, w.name.split("#")[0].replace(" (reused)", "")) for w in windows]


def test_same_results_and_flat_memory():
    runs = {}
    for record in (True, False):
        dev, k = _vadd(record)
        rng = np.random.default_rng(1)
        bufs = [dev.upload(rng.standard_normal(256).astype(np.float32)) for _ in range(3)]
        out = []
        sizes = []
        for i in range(40):
            n = 64 * (1 + i % 4)
            a, b, c = bufs[i % 3], bufs[(i + 1) % 3], bufs[(i + 2) % 3]
            r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
            assert r.landed, r.refusal
            out.append((r.index, r.write_spans, _plain(r.windows), r.config.user_sgprs[6:]))
            sizes.append(len(dev.memory))
        runs[record] = (out, [dev.download(b) for b in bufs], dev)
        if record:
            assert sizes[-1] == sizes[0] + 39 * 3  # kernargs, packet and IB per launch
        else:
            assert sizes[-1] == sizes[0]  # nothing added after the first launch
    (o1, m1, d1), (o2, m2, d2) = runs[True], runs[False]
    assert o1 == o2
    for x, y in zip(m1, m2):
        np.testing.assert_array_equal(x, y)
    assert [r.index for r in d1.results] == list(range(40))
    assert [r.index for r in d2.results] == [39] and d2.dispatch_count == d2.launch_count == 40
    assert len(d2.launches) == 1 and d2.launches[0].index == 39
    assert not d2.capture.streams


def test_reused_kernargs_hold_what_new_ones_would():
    """A reused kernarg segment: this launch's bytes, then zeros (as a new allocation)."""
    dev, k = _vadd(False)
    a = dev.upload(np.zeros(64, np.float32))
    k.launch(global_size=(64,), block=(64,), args=[a, a, a, np.uint32(64)])
    ka = k.last_launch.kernarg_address
    seg = dev.memory.find(ka)
    seg.data[:] = 0xEE  # (as if a later launch had left other bytes there)
    k.launch(global_size=(64,), block=(64,), args=[a, a, a, np.uint32(7)])
    rec = k.last_launch
    assert rec.kernarg_address == ka
    want = np.zeros(seg.size, np.uint8)
    want[: len(rec.kernargs)] = np.frombuffer(rec.kernargs, np.uint8)
    np.testing.assert_array_equal(seg.data, want)
    assert dev.memory.read(rec.packet_address, 64) == bytes(rec.packet)


def test_refused_launch_changes_nothing_and_the_next_runs():
    dev, k = _vadd(False)
    a = dev.upload(np.arange(64, dtype=np.float32))
    c = dev.upload(np.full(64, 5, np.float32))
    before = [x.data.copy() for x in dev.memory.allocations if not x.name.endswith("(reused)")]
    r = k.launch(global_size=(1024,), block=(64,), args=[a, a, c, np.uint32(1024)])  # reads past a
    assert r.refusal is not None and r.refusal.code == "escape"
    after = [x.data for x in dev.memory.allocations if not x.name.endswith("(reused)")]
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
    r = k.launch(global_size=(64,), block=(64,), args=[a, a, c, np.uint32(64)])
    assert r.landed
    np.testing.assert_array_equal(dev.download(c, np.float32), 2 * np.arange(64, dtype=np.float32))


def test_dispatch_id_counts_launches():
    """The dispatch id user SGPR is the launch number, as a recording Device gives it."""
    for record in (True, False):
        dev, k = _vadd(record)
        a = dev.upload(np.zeros(64, np.float32))
        for i in range(3):
            rec = k.prepare(global_size=(64,), block=(64,), args=[a, a, a, np.uint32(64)])
            assert rec.index == i
            k.launch(global_size=(64,), block=(64,), args=[a, a, a, np.uint32(64)])
            assert k.last_launch.index == i
            assert dev.launch_count == i + 1


def test_save_capture_refused_and_writes_direct(tmp_path):
    dev, k = _vadd(False)
    a = dev.upload(np.zeros(64, np.float32))
    k.launch(global_size=(64,), block=(64,), args=[a, a, a, np.uint32(64)])
    n = len(dev.memory)
    dev.write(a, np.ones(64, np.float32))  # no staging allocation, no stream
    assert len(dev.memory) == n
    np.testing.assert_array_equal(dev.download(a), np.ones(64, np.float32))
    with pytest.raises(UserError, match="record=False"):
        dev.save_capture(tmp_path / "x.wlcap")


def test_aco_launches_reuse_descriptor_sets():
    got = {}
    for record in (True, False):
        dev = wavelift.Device("gfx1030", record=record)
        sh = dev.load_aco_shader(FIXTURES / "gfx1030/aco/lds_reduce-w64.json")
        src = dev.upload(np.arange(512, dtype=np.uint32))
        dst = dev.alloc(64)
        sizes, res = [], []
        for i in range(4):
            dev.write(src, np.arange(512, dtype=np.uint32) * (i + 1))
            r = sh.launch(groups=(2,), buffers={(0, 0): src, (0, 1): dst})
            assert r.landed, r.refusal
            res.append((dev.download(dst).tobytes(), r.write_spans, _plain(r.windows)))
            sizes.append(len(dev.memory))
        got[record] = res
        if not record:
            assert sizes[-1] == sizes[0]
    assert got[True] == got[False]
