"""The buffer tracer's cache (issue 24 item 2): tracer.trace keeps its windows per user data and
scratch roots on the memory, and the allocation index (GuestMemory.address_index) is kept sorted
as allocations change.  A hit must give exactly the windows tracing again gives: checked
against tracer.trace_uncached on every capture fixture and on launches of the clang fixtures,
and after each kind of change the cache must see (bytes a scan read, the allocation table, the
user data)."""

import pathlib

import numpy as np
import pytest
from testpaths import one_wave_config as _config

import wavelift
from wavelift.errors import Refused
from wavelift.memory.guest import MASK48, GuestMemory
from wavelift.run.result import DispatchResult
from wavelift.trace import tracer

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
CAPTURES = sorted((FIX / "captures").glob("*.wlcap"))


def _ptr(addr):
    return [addr & 0xFFFFFFFF, (addr >> 32) & 0xFFFF]


def _check(memory, config, roots=None):
    """trace (twice: the second a hit when nothing changed) == trace_uncached."""
    want = tracer.trace_uncached(memory, config, scratch_roots=roots)
    assert tracer.trace(memory, config, scratch_roots=roots) == want
    assert tracer.trace(memory, config, scratch_roots=roots) == want
    return want


def _checking_execute(seen):
    """An execute for replay / Device that checks every dispatch's windows (and runs nothing)."""
    from wavelift.run.execute import program_for

    def run(memory, config, index):
        try:
            prog, _ = program_for(memory, config)
            roots = prog.scratch.tracer_skip
        except Refused:
            roots = None
        try:
            seen.append(_check(memory, config, roots))
        except Refused as e:  # (a refusal is the same both ways, and never cached)
            with pytest.raises(Refused) as again:
                tracer.trace(memory, config, scratch_roots=roots)
            assert again.value.refusal == e.refusal
        return DispatchResult(index, config)

    return run


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_captures_cached_equals_uncached(path):
    seen: list = []
    wavelift.replay(path, execute=_checking_execute(seen))
    assert seen and any(seen)


@pytest.mark.parametrize("record", [True, False])
def test_launches_cached_equals_uncached(record):
    """Device launches of clang fixtures (kernargs, dispatch packet, code object windows),
    recording (new allocations each launch) and not (reused ones)."""
    seen: list = []
    dev = wavelift.Device("gfx1030", execute=_checking_execute(seen), record=record)
    k = dev.load_code_object(str(FIX / "gfx1030" / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    bufs = [dev.upload(np.arange(64, dtype=np.float32) + i) for i in range(4)]
    for i in range(6):
        a, b, c = bufs[i % 4], bufs[(i + 1) % 4], bufs[(i + 2) % 4]
        k.launch(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(64)])
    assert len(seen) == 6
    names = {w.name for w in seen[-1]}
    assert {"buffer2", "buffer3", "buffer4"} <= names


def _rig():
    mem = GuestMemory()
    a = mem.alloc(256, name="a")
    b = mem.alloc(256, name="b")
    args = mem.alloc(64, name="args", data=np.array(_ptr(a), np.uint32).tobytes())
    return mem, a, b, args


def test_a_hit_does_not_trace(calls):
    mem, a, b, args = _rig()
    traced = calls(tracer, "_trace")
    for _ in range(3):
        tracer.trace(mem, _config(_ptr(args)))
    assert len(traced) == 1
    mem.write_u32(args + 32, 7)  # scanned bytes: traced again
    tracer.trace(mem, _config(_ptr(args)))
    assert len(traced) == 2


def test_scanned_bytes_changed():
    mem, a, b, args = _rig()
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "args"]
    mem.write_dwords(args, _ptr(b))  # the pointer the scan read now points elsewhere
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["b", "args"]
    mem.write_dwords(args + 8, _ptr(a))  # a second pointer
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "b", "args"]


def test_bytes_past_the_scan_do_not_matter_but_scanned_ones_of_a_reached_buffer_do():
    mem = GuestMemory()
    far = mem.alloc(4096, name="far")
    big = mem.alloc(tracer.SCAN_BYTES + 4096, name="big")
    _check(mem, _config(_ptr(big)))
    mem.write_dwords(big + tracer.SCAN_BYTES, _ptr(far))  # not scanned: same windows
    assert [w.name for w in _check(mem, _config(_ptr(big)))] == ["big"]
    mem.write_dwords(big + 16, _ptr(far))  # scanned (depth 1)
    assert [w.name for w in _check(mem, _config(_ptr(big)))] == ["far", "big"]
    # depth 2: a pointer in `far`, reached only through `big`
    third = mem.alloc(512, name="third")
    _check(mem, _config(_ptr(big)))
    mem.write_dwords(far + 100, _ptr(third))
    assert [w.name for w in _check(mem, _config(_ptr(big)))] == ["far", "big", "third"]


def test_allocation_added_or_freed():
    mem, a, b, args = _rig()
    gap = mem.alloc(4096, name="gap")
    mem.free(gap)  # a free place that a pointer can name
    mem.write_dwords(args + 8, _ptr(gap + 64))
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "args"]
    mem.alloc(4096, name="new", address=gap)  # the pointer now lands in an allocation
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "args", "new"]
    mem.free(a)
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["args", "new"]


def test_user_data_changed_and_scratch_roots():
    mem, a, b, args = _rig()
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "args"]
    assert [w.name for w in _check(mem, _config(_ptr(b)))] == ["b"]
    assert [w.name for w in _check(mem, _config(_ptr(args) + _ptr(b)))] == ["a", "b", "args"]
    # the same user data with s2:s3 a scratch root: b is not a window
    assert [w.name for w in _check(mem, _config(_ptr(args) + _ptr(b)), roots=(2, 3))] == ["a", "args"]
    assert [w.name for w in _check(mem, _config(_ptr(args) + _ptr(b)))] == ["a", "b", "args"]


def test_a_refusal_is_not_cached(monkeypatch):
    mem, a, b, args = _rig()
    monkeypatch.setattr(tracer, "MAX_DISPATCH_WINDOW_BYTES", 300)
    with pytest.raises(Refused):
        tracer.trace(mem, _config(_ptr(args)))
    monkeypatch.setattr(tracer, "MAX_DISPATCH_WINDOW_BYTES", 1 << 30)
    assert [w.name for w in _check(mem, _config(_ptr(args)))] == ["a", "args"]


def test_address_index_follows_the_table():
    """address_index after adds (inserted into the arrays), frees (rebuilt) and many adds at once
    (rebuilt) equals the index built from the allocations."""
    rng = np.random.default_rng(5)
    mem = GuestMemory()
    live = []

    def want():
        al = mem.allocations
        return (
            [x.base & MASK48 for x in al],
            [(x.base & MASK48) + x.size for x in al],
        )

    for step in range(300):
        r = rng.random()
        if r < 0.6 or not live:
            at = None if rng.random() < 0.5 else int(rng.integers(1 << 20, 1 << 40)) & ~0xFFF
            try:
                live.append(mem.alloc(int(rng.integers(1, 9000)), name=f"x{step}", address=at))
            except Exception:  # noqa: BLE001 - an overlap: nothing added
                pass
        elif r < 0.8:
            mem.free(live.pop(int(rng.integers(len(live)))))
        else:
            for _ in range(int(rng.integers(1, 100))):  # many at once
                live.append(mem.alloc(64, name="burst"))
        if rng.random() < 0.5:
            starts, ends, hull = mem.address_index()
            s, e = want()
            assert starts.tolist() == s and ends.tolist() == e
            assert hull == ((s[0], max(e)) if s else None)
