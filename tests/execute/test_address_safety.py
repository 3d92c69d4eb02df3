"""Malicious addresses cannot reach the host (docs/decisions/0014-addresses.md): accesses that wrap
past 2^64, run off a window's end lane by lane, cross the canonical hole, use a non-canonical
address or an unaligned atomic whose cell spans two windows escape -- read zero, store nothing,
the dispatch is refused `escape` and guest memory is byte-identical -- on NumPy blocks and the
native tier.  The native tier runs in a subprocess: its old window test let a 16-byte store at
0xfffffffffffffffc through (heap corruption, the process aborted), which must show as a failed
test, not a dead pytest."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from harness import Rig, ptr

HERE = pathlib.Path(__file__).resolve().parent
ZERO_TSHARP = (0x10, 0, 0, 0x80000000)  # an image T# whose base is 0x1000: the tracer windows
# the allocation at guest address 0 (s0..s3)


def _snapshot(mem):
    return [(a.base, bytes(a.data)) for a in mem]


def _escaped(r, res, before, count=None):
    assert res.refusal is not None and res.refusal.code == "escape", res.refusal
    if count is not None:
        assert res.stats["escapes"] == count, res.stats["escapes"]
    assert _snapshot(r.mem) == before, "guest memory changed by a refused dispatch"


def _zero_window_rig(src):
    r = Rig(src)
    r.mem.alloc(0x2000, name="zero", address=0, data=np.arange(0x2000, dtype=np.uint8) % 251)
    return r


def wrap_store(mode):
    """global_store_dwordx4 at 0xfffffffffffffffc: the uint64 sum a + 16 wrapped onto 0xc."""
    r = _zero_window_rig("""
        v_mov_b32 v1, s4
        v_mov_b32 v2, s5
        v_mov_b32 v4, 0x11111111
        v_mov_b32 v5, 0x22222222
        v_mov_b32 v6, 0x33333333
        v_mov_b32 v7, 0x44444444
        global_store_dwordx4 v[1:2], v[4:7], off
        s_endpgm
    """)
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ZERO_TSHARP + ptr(0xFFFF_FFFF_FFFF_FFFC)), mode=mode)
    _escaped(r, res, before, 32)
    assert res.escapes[0].address == 0xFFFF_FFFF_FFFF_FFFC


def wrap_scalar_load(mode):
    """s_load_dwordx16 at 0xffffffffffffffc0 (host bytes before the arena), then the words stored
    into guest memory: the load escapes, nothing lands."""
    r = _zero_window_rig("""
        s_load_dwordx16 s[8:23], s[4:5], 0x0
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v1, 0
        v_mov_b32 v4, s8
        v_mov_b32 v5, s9
        v_mov_b32 v6, s10
        v_mov_b32 v7, s11
        global_store_dwordx4 v1, v[4:7], s[6:7]
        s_endpgm
    """)
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ZERO_TSHARP + ptr(0xFFFF_FFFF_FFFF_FFC0) + ptr(0x100)), mode=mode)
    _escaped(r, res, before)
    assert res.escapes[0].address == 0xFFFF_FFFF_FFFF_FFC0 and res.escapes[0].kind == "load"


def wrap_vector_load(mode):
    """global_load_dwordx4 at 2^64 - 8 + 8 * lane: lane 0 wraps, lanes 1.. are at 0, 8, ...
    (inside the window at 0, canonical: they load)."""
    r = _zero_window_rig("""
        v_lshlrev_b32 v3, 3, v0
        v_mov_b32 v2, s5
        v_add_co_u32 v1, vcc_lo, s4, v3
        v_add_co_ci_u32_e32 v2, vcc_lo, 0, v2, vcc_lo
        global_load_dwordx4 v[4:7], v[1:2], off
        s_waitcnt vmcnt(0)
        s_endpgm
    """)
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ZERO_TSHARP + ptr(0xFFFF_FFFF_FFFF_FFF8)), mode=mode)
    _escaped(r, res, before, 1)


def non_canonical(mode):
    """Bits 63:48 that do not copy bit 47 -- a lower-half window's address with 0x0001 on top,
    and an upper-half window's address in its 48-bit form -- reach no window (before: masked
    to 48 bits and landed)."""
    r = Rig("""
        v_mov_b32 v1, s0
        v_mov_b32 v2, s1
        v_mov_b32 v3, s2
        v_mov_b32 v4, s3
        v_mov_b32 v5, 0x5a5a5a5a
        s_mov_b32 exec_lo, 1
        global_store_dword v[1:2], v5, off offset:16
        global_store_dword v[3:4], v5, off offset:16
        s_load_dword s8, s[0:1], 0x20
        s_endpgm
    """)
    lo = r.mem.alloc(0x100, name="lo", address=0x2_0000_0000)
    hi = r.mem.alloc(0x100, name="hi", address=0xFFFF_8000_0000_1000)
    before = _snapshot(r.mem)
    # the windows come from canonical pointers in s4..s7; the accesses use s0..s3
    user = ptr(lo | (1 << 48)) + ptr(hi & ((1 << 48) - 1)) + ptr(lo) + ptr(hi)
    res = r.run(r.config(user_sgprs=user), mode=mode)
    _escaped(r, res, before)
    kinds = {(e.address, e.kind) for e in res.escapes}
    assert (lo + 16 | 1 << 48, "store") in kinds and (hi + 16 & (1 << 48) - 1, "store") in kinds
    assert (lo + 0x20 | 1 << 48, "load") in kinds


def lanes_at_the_end(mode):
    """dwordx4 at a's end - 16 + 4 * lane, window b right after a: lane 0 fits in a, lanes 4..
    in b, lanes 1-3 straddle the two and escape."""
    r = Rig("""
        v_lshlrev_b32 v3, 2, v0
        v_mov_b32 v4, 7
        v_mov_b32 v5, 7
        v_mov_b32 v6, 7
        v_mov_b32 v7, 7
        global_store_dwordx4 v3, v[4:7], s[0:1]
        s_endpgm
    """)
    a = r.mem.alloc(0x100, name="a", address=0x2_0000_0000)
    r.mem.alloc(0x100, name="b", address=0x2_0000_0100)  # right after: still an escape
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ptr(a + 0xF0) + ptr(a + 0x100)), mode=mode)
    _escaped(r, res, before, 3)
    assert sorted(e.lane for e in res.escapes) == [1, 2, 3]


def across_the_hole(mode):
    """A 16-byte store at 2^47 - 8 (the last lower-half window's end) escapes."""
    r = Rig("""
        v_mov_b32 v1, s0
        v_mov_b32 v2, s1
        global_store_dwordx4 v[1:2], v[4:7], off
        s_endpgm
    """)
    a = r.mem.alloc(0x1000, name="edge", address=(1 << 47) - 0x1000)
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ptr((1 << 47) - 8)), mode=mode)
    assert a == (1 << 47) - 0x1000
    _escaped(r, res, before, 32)


def unaligned_atomic(mode):
    """global_atomic_add at b + 1 where b starts 2 bytes past a 4-byte boundary and allocation a
    ends right before: the atomic's aligned cell spans a's last byte and b's first bytes, so it
    escapes (before: a's byte changed and landed)."""
    r = Rig("""
        v_mov_b32 v1, s0
        v_mov_b32 v2, s1
        v_mov_b32 v3, 1
        s_mov_b32 exec_lo, 1
        global_atomic_add v[1:2], v3, off
        s_endpgm
    """)
    r.mem.alloc(0x105, name="a", address=0x1_0001_0000)
    b = r.mem.alloc(0x100, name="b", address=0x1_0001_0106, align=2)
    before = _snapshot(r.mem)
    res = r.run(r.config(user_sgprs=ptr(b + 1) + ptr(0x1_0001_0010)), mode=mode)
    _escaped(r, res, before, 1)


def canonical_upper_half_lands(mode):
    """The control: canonical upper-half addresses (RADV's, hi 0xffff8000) land."""
    r = Rig("""
        v_mov_b32 v1, s0
        v_mov_b32 v2, s1
        v_mov_b32 v5, 0x5a5a5a5a
        global_store_dword v[1:2], v5, off offset:16
        s_endpgm
    """)
    hi = r.mem.alloc(0x100, name="hi", address=0xFFFF_8000_0000_1000)
    res = r.run(r.config(user_sgprs=ptr(hi)), mode=mode)
    assert res.refusal is None, res.refusal
    assert r.mem.read_u32(hi + 16) == 0x5A5A5A5A


def upper_half_image_and_buffer(mode):
    """48-bit base fields mean canonical addresses: a T# and a V# whose bases are in the upper
    half (RADV's) reach their allocations (the T# base was taken as its 48-bit form: after
    decision 0014 that is not canonical and would escape)."""
    from test_images import PITCH, PROG, H, W, tsharp

    r = Rig(PROG)
    img = np.arange(H * PITCH, dtype=np.float32) + 0.5
    a = r.mem.alloc(img.nbytes, name="img", address=0xFFFF_8000_0001_0000, data=img.tobytes())
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=tsharp(a, W, H) + list(ptr(out)), tgid=(False,) * 3), mode=mode)
    assert res.refusal is None, res.refusal
    assert r.read(out, np.float32, 1)[0] == 0.5 and r.read(a, np.float32, 2).tolist() == [0, 1]
    r = Rig("""
        s_buffer_load_dword s8, s[0:3], 0x4
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v1, s8
        v_mov_b32 v2, 0
        buffer_store_dword v1, v2, s[0:3], 0 offen offset:8
        s_endpgm
    """)
    b = r.mem.alloc(
        0x100, name="buf", address=0xFFFF_8000_0002_0000, data=np.arange(64, dtype=np.uint32).tobytes()
    )
    vsharp = [b & 0xFFFFFFFF, (b >> 32) & 0xFFFF, 0x100, 0x31016FAC]
    res = r.run(r.config(user_sgprs=vsharp + [0xFFFF8000, 0x20000, 0, 0]), mode=mode)
    assert res.refusal is None, res.refusal
    assert r.mem.read_u32(b + 8) == 1


CASES = [
    wrap_store,
    wrap_scalar_load,
    wrap_vector_load,
    non_canonical,
    lanes_at_the_end,
    across_the_hole,
    unaligned_atomic,
    canonical_upper_half_lands,
    upper_half_image_and_buffer,
]
NATIVE_CASES = [c for c in CASES if c is not unaligned_atomic]  # (atomics: NumPy blocks)


def run_cases(names, mode):
    """-> {case name: None (passed) or the failure's text}."""
    out = {}
    for name in names:
        try:
            globals()[name](mode)
            out[name] = None
        except Exception as e:  # noqa: BLE001 - reported to the parent test
            out[name] = f"{type(e).__name__}: {e}"[:500]
    return out


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_numpy_blocks(case, mode, monkeypatch):
    from wavelift.backends.numpy import runtime

    monkeypatch.setattr(runtime, "NATIVE", "off")
    case(mode)


def _native(tmp_path, cases, drivers):
    """``cases`` with WAVELIFT_NATIVE=on in a child process per native driver setting ("on": the
    driver; "off": native blocks under the Python scheduler): a crash (heap corruption, SIGSEGV)
    is a failure here, not a dead pytest."""
    from wavelift.backends import host

    if host.compiler() is None:
        pytest.skip("no host C++ compiler: the native tier is not available")
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import test_address_safety as T; "
        "print('RESULT ' + json.dumps(T.run_cases(sys.argv[2].split(','), 'wave')))"
    )
    names = ",".join(c.__name__ for c in cases)
    for driver in drivers:
        env = dict(
            os.environ,
            WAVELIFT_NATIVE="on",
            WAVELIFT_NATIVE_DRIVER=driver,
            WAVELIFT_NATIVE_CACHE=str(tmp_path / "cache"),
        )
        p = subprocess.run(
            [sys.executable, "-c", code, str(HERE), names],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert p.returncode == 0, f"driver {driver}: rc {p.returncode}: {p.stderr[-2000:]}"
        line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
        failed = {k: v for k, v in json.loads(line[7:]).items() if v is not None}
        assert not failed, f"driver {driver}: {failed}"


def test_native_tier_wraps_and_non_canonical(tmp_path):
    """The issue's two (the store that corrupted the heap, the load that disclosed it) and the
    non-canonical addresses, on the native driver (each case compiles a library: ~1 s)."""
    _native(tmp_path, [wrap_store, wrap_scalar_load, non_canonical], ("on",))


@pytest.mark.slow
def test_native_tier_every_case(tmp_path):
    _native(tmp_path, NATIVE_CASES, ("on", "off"))
