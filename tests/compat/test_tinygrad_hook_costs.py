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


def _addresses(extra=()):
    out = [0, 1 << 47, (1 << 64) - 1, 0xFFFFFFFFFF600000, *extra]
    for lo, hi, _ in tg._host_mappings():
        out += [lo, hi - 1, hi, max(lo - 1, 0), (lo + hi) // 2]
    rng = np.random.default_rng(23)
    out += [int(x) for x in rng.integers(0, 1 << 48, 500, dtype=np.uint64)]
    return out


def test_rw_mappings_asked_of_the_kernel_are_the_texts():
    """_rw_mappings (PROCMAP_QUERY per address, decision 0045 amendment) gives, for every
    address, the read-write mapping /proc/self/maps's text gives (_rw_mapping of the text read
    now): every mapping's ends and their neighbours, random addresses, a read-only mapping and a
    mapping made and removed between two calls; without the query (an older kernel) it is the
    text's own."""
    if tg._query_mapping(0) is False:
        import pytest

        pytest.skip("this kernel has no PROCMAP_QUERY (the text path is the only one)")
    ro = mmap.mmap(-1, 1 << 16, prot=mmap.PROT_READ)
    rw = mmap.mmap(-1, 1 << 16)
    heap = ctypes.addressof(ctypes.c_char.from_buffer_copy(b"\0"))
    buf = (ctypes.c_char * 1).from_buffer(rw)
    a_rw = ctypes.addressof(buf)
    del buf
    import re

    text = open("/proc/self/maps").read()
    lo_ro = [int(m.group(1), 16) for m in re.finditer(r"^([0-9a-f]+)-[0-9a-f]+ r--p", text, re.M)]
    addrs = _addresses([heap, a_rw, *lo_ro])
    for mapped in (True, False):
        # (the text now, next to the query's answers: another thread of this process -- a build
        # pool's, an allocator's -- may map or unmap between the two reads, so a differing pair
        # is read again; a real difference differs every time)
        for _ in range(5):
            query = tg._rw_mappings()
            tg._host_mappings()
            got = [query(a) for a in addrs]
            want = [tg._rw_mapping(a) for a in addrs]
            if got == want:
                break
        assert got == want
        assert (query(a_rw) is not None) == mapped and query(0) is None
        assert lo_ro and all(query(a) is None for a in lo_ro)
        rw.close()
        ro.close()
    saved = tg._PROCMAP[:]
    try:
        tg._PROCMAP[:] = [False, None]
        fallback = tg._rw_mappings()
        assert fallback is tg._rw_mapping and [fallback(a) for a in addrs] == got
    finally:
        tg._PROCMAP[:] = saved
