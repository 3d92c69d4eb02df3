"""The tinygrad hook's per-call savings (decision 0035) change nothing a caller can see:
Python's cyclic GC is paused only for the call (its state afterwards is what it was, on every
return path), and the host mappings are read anew on every call (a mapping made or removed
between two calls is seen by the next)."""

from __future__ import annotations

import ctypes
import gc
import mmap

import numpy as np

from wavelift.compat import tinygrad as tg

END = np.array([0xBFB00000], "<u4").tobytes()  # s_endpgm (gfx11)


def _call():
    out = (ctypes.c_uint8 * 64)()
    args = (ctypes.c_uint64 * 1)(ctypes.addressof(out))
    code = (ctypes.c_char * len(END)).from_buffer_copy(END)
    seen = []

    real = tg._run_asm

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    tg._run_asm = spy
    try:
        rc = tg.run_asm(ctypes.addressof(code), len(END), 1, 1, 1, 32, 1, 1, ctypes.addressof(args))
        bad = tg.run_asm(ctypes.addressof(code), len(END), 0, 1, 1, 32, 1, 1, ctypes.addressof(args))
    finally:
        tg._run_asm = real
    return rc, bad, seen


def test_gc_paused_during_the_call_and_restored_after():
    was = gc.isenabled()
    try:
        gc.enable()
        rc, bad, seen = _call()
        assert (rc, bad) == (tg.OK, tg.BAD_CALL)
        assert seen == [False, False] and gc.isenabled()
        gc.disable()
        rc, bad, seen = _call()
        assert (rc, bad) == (tg.OK, tg.BAD_CALL)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_gc_restored_when_the_call_raises():
    was = gc.isenabled()
    gc.enable()
    try:
        try:
            tg.run_asm(None, 4, 1, 1, 1, 32, 1, 1, 0)  # not an address: a TypeError inside
        except TypeError:
            pass
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _mapped(lo: int) -> bool:
    return any(a <= lo < b for a, b, _ in tg._host_mappings())


def test_host_mappings_follow_maps_made_and_removed_between_calls():
    tg._host_mappings()
    m = mmap.mmap(-1, 1 << 16)
    buf = (ctypes.c_char * 1).from_buffer(m)
    lo = ctypes.addressof(buf)
    del buf
    assert _mapped(lo)
    m.close()
    assert not _mapped(lo)
