"""Bounded memory (issue 19 item 6, docs/decisions/0015-bounded-work.md): what a capture or a
program makes the buffer tracer build is bounded before it is built."""

import tracemalloc

import numpy as np
import pytest
from harness import Rig, ptr
from testpaths import one_wave_config as _config

from wavelift.errors import Refused
from wavelift.memory.guest import GuestMemory
from wavelift.trace import tracer


def test_pointer_candidates_do_not_copy_the_name():
    """A buffer of pointers in an allocation with a long name: the tracer made one string per
    candidate holding the name (a 256 KiB name took 2.1 GB); now one entry per allocation
    reached, and a window's name and reason quote a bounded part of it."""
    mem = GuestMemory()
    target = mem.alloc(4096, name="target")
    words = np.zeros(8192, np.uint32)
    words[0::2] = np.arange(4096, dtype=np.uint32) + (target & 0xFFFFFFFF)  # 4096 pointers
    words[1::2] = target >> 32
    name = "n" * (32 << 10)
    src = mem.alloc(words.nbytes, name=name, data=words.tobytes())
    tracemalloc.start()
    try:
        ws = tracer.trace(mem, _config(ptr(src)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"tracing used {peak} bytes"  # (the old tracer: ~135 MB)
    assert [w.address for w in ws] == [target, src]
    for w in ws:
        assert len(w.name) <= tracer.NAME_CHARS + 16 and len(w.reason) < 256
    assert ws[0].reason.startswith("pointer in " + "n" * tracer.NAME_CHARS)


def test_one_candidate_per_target_keeps_the_first_reason():
    """The reason reported is the first candidate into each allocation, as before."""
    mem = GuestMemory()
    a = mem.alloc(256, name="a")
    b = mem.alloc(256, name="b")
    words = np.array(
        [0, 0, b & 0xFFFFFFFF, b >> 32, a & 0xFFFFFFFF, a >> 32, (b + 8) & 0xFFFFFFFF, b >> 32], np.uint32
    )
    src = mem.alloc(words.nbytes, name="src", data=words.tobytes())
    ws = {w.name: w for w in tracer.trace(mem, _config(ptr(src)))}
    assert ws["b"].reason == f"pointer in src+0x8 -> {b:#x}"
    assert ws["a"].reason == f"pointer in src+0x10 -> {a:#x}"


def test_window_bytes_bounded_before_the_arena(monkeypatch):
    """Windows that would need more than MAX_DISPATCH_WINDOW_BYTES refuse the dispatch before
    a WindowSet (the arena) is made; guest memory is unchanged."""
    monkeypatch.setattr(tracer, "MAX_DISPATCH_WINDOW_BYTES", 1 << 20)
    made = []
    from wavelift.trace import windows

    monkeypatch.setattr(
        windows.WindowSet,
        "__init__",
        lambda self, *a, **k: made.append(1) or (_ for _ in ()).throw(AssertionError),
    )
    r = Rig("  global_store_dword v0, v0, s[0:1]\n  s_endpgm")
    big = [r.mem.alloc(600 << 10, name=f"big{i}") for i in range(2)]
    words = np.array([*ptr(big[0]), *ptr(big[1])], np.uint32)
    args = r.buf(words, name="args")
    before = [a.data.copy() for a in r.mem.allocations]
    res = r.run(r.config(user_sgprs=ptr(args)))
    assert res.refusal is not None and res.refusal.code == "dispatch.windows_too_large", res.refusal
    assert not made
    assert all((a.data == b).all() for a, b in zip(r.mem.allocations, before))
    with pytest.raises(Refused):
        tracer.trace(r.mem, _config(ptr(args)))


def test_scan_cache_bounded_in_bytes(monkeypatch):
    monkeypatch.setattr(tracer, "SCAN_CACHE_BYTES", 1 << 20)
    mem = GuestMemory()
    rng = np.random.default_rng(5)
    for i in range(8):
        src = mem.alloc(64 << 10, name=f"s{i}", data=rng.integers(1, 1 << 32, 16 << 10, np.uint32).tobytes())
        tracer.trace(mem, _config(ptr(src)))
    used = sum(x.nbytes + y.nbytes for x, y in mem.pointer_scans.values())
    assert 0 < used <= 1 << 20


def test_default_window_limit_refuses_before_copying():
    """Three 512 MiB allocations (zero pages: nothing touched but the 64 KiB each scan reads)
    reached from the user SGPRs: the default limit (1 GiB of windows) refuses in the tracer;
    the old tracer placed 1.5 GiB of windows, 3 GiB of arena and written map once copied."""
    mem = GuestMemory()
    big = [mem.alloc(512 << 20, name=f"big{i}") for i in range(3)]
    words = np.array([w for b in big for w in ptr(b)], np.uint32)
    args = mem.alloc(words.nbytes, name="args", data=words.tobytes())
    with pytest.raises(Refused) as e:
        tracer.trace(mem, _config(ptr(args)))
    assert e.value.refusal.code == "dispatch.windows_too_large"
    assert str(tracer.MAX_DISPATCH_WINDOW_BYTES) in str(e.value)
