"""Global load/store/atomic in the NumPy runtime: the one-window fast path and the general path
must both match a per-lane reference (values, arena bytes, written bytes/spans, escapes).

Every case runs three ways: as is (the fast path where it applies), with the fast path forced
off (windows.locate -> None, so every access takes the per-element general path), and, where
the case is meant for the fast path, with the general path made to fail (proves it was taken).
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.backends.numpy import atomics
from wavelift.backends.numpy import runtime as rtmod
from wavelift.backends.numpy.runtime import Runtime
from wavelift.backends.numpy.scratch import ScratchStore
from wavelift.ir.program import EXEC_HI, EXEC_LO
from wavelift.memory.guest import GuestMemory
from wavelift.run.result import Window
from wavelift.trace.windows import WindowSet

# most tests here call the NumPy runtime's access helpers directly (no program runs, the tier
# changes nothing); those that run a program are marked `tiers` (tests/conftest.py)

L = 32
N = 6  # waves
A = 0x1_0000_0000  # window A: 4 KiB
B = A + 0x1000  # window B: adjacent to A (an access may straddle)
C = 0x2_0000_0004  # window C: 512 bytes, 4 mod 8 (arena alignment)
HI = 0xFFFF_8000_0001_0000  # window in the upper canonical half
WILD = 0x0012_3450_0000_0000  # inside no window
INSTR = 7


def _memory():
    mem = GuestMemory()
    rng = np.random.default_rng(7)
    for base, size, name in ((A, 0x1000, "A"), (B, 0x1000, "B"), (C, 0x200, "C"), (HI, 0x400, "HI")):
        mem.alloc(size, name=name, address=base, align=4, data=rng.integers(0, 256, size, dtype=np.uint8))
    wins = [
        Window(A, 0x1000, "A", "t"),
        Window(B, 0x1000, "B", "t"),
        Window(C, 0x200, "C", "t"),
        Window(HI, 0x400, "HI", "t"),
    ]
    return mem, wins


def _runtime(mode="as_is"):
    mem, wins = _memory()
    ws = WindowSet(wins, mem)
    if mode == "slow":
        ws.locate = lambda lo, hi, nbytes: None
    ins = types.SimpleNamespace(offset=0x40, text="global_op", encoding="GLOBAL")
    module = types.SimpleNamespace(program=types.SimpleNamespace(instructions={INSTR: ins}))
    rt = Runtime(module, types.SimpleNamespace(wave_size=L), ws, "wave", 1 << 20)
    rt.batch_waves, rt.wave_base = N, 100
    if mode == "fast_only":

        def boom(*a, **k):
            raise AssertionError("general path taken")

        ws.resolve = boom
    return rt


# ------------------------------------------------------------------------------ reference
def _find(ws, a, nbytes):
    """The arena index of nbytes at a, None: an escape -- a non-canonical address (a 48-bit form
    of an upper-half address, alias bits above bit 47) reaches no window (decision 0014)."""
    a = int(a)
    if (1 << 47) <= a < 0xFFFF_8000_0000_0000:
        return None
    for w, o in zip(ws.windows, ws.offs):
        if w.address <= a and a + nbytes <= w.address + w.size:
            return int(o) + a - w.address
    return None


def _ref_lanes(shape, addr, mask):
    addr = np.broadcast_to(np.asarray(addr, np.uint64), shape)
    mask = np.broadcast_to(np.asarray(mask, bool), shape)
    return [(i, j, int(addr[i, j])) for i in range(shape[0]) for j in range(shape[1]) if mask[i, j]]


def ref_load(ws, shape, addr, mask, nbytes, words):
    out = np.zeros(shape + (words,), np.uint32)
    esc = []
    for i, j, a in _ref_lanes(shape, addr, mask):
        k = _find(ws, a, nbytes)
        if k is None:
            esc.append((100 + i, j, a, "load"))
            continue
        raw = bytes(ws.arena[k : k + nbytes]) + bytes(4 * words - nbytes)
        out[i, j] = np.frombuffer(raw, "<u4")
    return out, esc


def ref_store(ws, shape, addr, mask, data, nbytes):
    arena, written = ws.arena.copy(), ws.written.copy()
    esc = []
    data = [np.broadcast_to(np.asarray(d, np.uint32), shape) for d in data]
    for i, j, a in _ref_lanes(shape, addr, mask):
        k = _find(ws, a, nbytes)
        if k is None:
            esc.append((100 + i, j, a, "store"))
            continue
        raw = np.array([d[i, j] for d in data], "<u4").view(np.uint8)[:nbytes]
        arena[k : k + nbytes] = raw
        written[k : k + nbytes] = True
    return arena, written, esc


def ref_atomic_add(ws, shape, addr, mask, data):
    arena, written = ws.arena.copy(), ws.written.copy()
    out = np.zeros(shape, np.uint32)
    esc = []
    data = np.broadcast_to(np.asarray(data, np.uint32), shape)
    for i, j, a in _ref_lanes(shape, addr, mask):
        k = _find(ws, a, 4)
        if k is None:
            esc.append((100 + i, j, a, "atomic"))
            continue
        cell = arena[k : k + 4].view("<u4")
        out[i, j] = cell[0]
        cell[0] = np.uint32(int(cell[0]) + int(data[i, j]) & 0xFFFFFFFF)
        written[k : k + 4] = True
    return arena, written, out, esc


def _escapes(rt):
    return [(e.wave, e.lane, e.address, e.kind) for e in rt.escapes]


# ------------------------------------------------------------------------------ address sets
rng = np.random.default_rng(1)
LANE = np.arange(N * L, dtype=np.uint64).reshape(N, L)


def _perm(base, span, step):
    """N x L distinct addresses base + step*k in shuffled lane order."""
    return np.uint64(base) + np.uint64(step) * rng.permutation(span // step)[: N * L].astype(
        np.uint64
    ).reshape(N, L)


MASKS = {
    "full": np.ones((N, L), bool),
    "scalar_true": np.True_,
    "partial": rng.random((N, L)) < 0.6,
    "per_wave": np.array([[True], [False], [True], [True], [False], [True]]),
    "one_lane": np.arange(N * L).reshape(N, L) == 77,  # (a one-wave program's one-lane store)
}

# name -> (addresses, nbytes, fast path expected for every mask)
CASES = {
    "one_window_dword": (_perm(A, 0x1000, 4), 4, True),
    "one_window_C_dword": (np.uint64(C) + (LANE % 128) * np.uint64(4), 4, True),
    "one_window_x2": (np.uint64(A) + LANE * np.uint64(8) % np.uint64(0xF00), 8, True),
    "one_window_x3": (np.uint64(B) + (LANE % 300) * np.uint64(12), 12, True),
    "one_window_x4": (np.uint64(A) + (LANE % 250) * np.uint64(16), 16, True),
    "unaligned_dword": (np.uint64(A + 1) + (LANE % 1000) * np.uint64(4), 4, True),
    "unaligned_x2": (np.uint64(B + 2) + (LANE % 400) * np.uint64(8), 8, True),
    "byte": (_perm(A, 0x1000, 1), 1, True),
    "short_odd": (np.uint64(C + 1) + (LANE % 250) * np.uint64(2), 2, True),
    "same_address": (np.full((N, L), A + 0x40, np.uint64), 4, True),
    "per_wave_address": (np.uint64(A) + np.arange(N, dtype=np.uint64)[:, None] * np.uint64(64), 4, True),
    "scalar_address": (np.uint64(B + 0x10), 4, True),
    "lane_only_address": (np.uint64(A) + np.arange(L, dtype=np.uint64)[None, :] * np.uint64(4), 4, True),
    "two_windows": (
        np.where(LANE % 2 == 1, np.uint64(B), np.uint64(A)) + (LANE % 500) * np.uint64(4),
        4,
        False,
    ),
    "straddle_adjacent": (
        np.where(LANE % 7 == 0, np.uint64(B - 2), np.uint64(A) + (LANE % 500) * np.uint64(4)),
        4,
        False,
    ),
    "one_byte_over": (
        np.where(LANE == 37, np.uint64(A + 0x1000 - 3), np.uint64(A) + (LANE % 500) * np.uint64(4)),
        4,
        False,
    ),
    "last_dword": (
        np.where(LANE == 37, np.uint64(C + 0x200 - 4), np.uint64(C) + (LANE % 100) * np.uint64(4)),
        4,
        True,
    ),
    "past_window_end": (np.uint64(C + 0x200 - 64) + (LANE % 32) * np.uint64(4), 4, False),
    "partly_escaping": (
        np.where(LANE % 5 == 3, np.uint64(WILD), np.uint64(A) + (LANE % 900) * np.uint64(4)),
        4,
        False,
    ),
    "upper_half_48bit": (np.uint64(HI & ((1 << 48) - 1)) + (LANE % 200) * np.uint64(4), 4, False),
    "upper_half_canonical": (np.uint64(HI) + (LANE % 200) * np.uint64(4), 4, False),
    "high_alias_bits": (np.uint64(A | (0x12 << 48)) + (LANE % 200) * np.uint64(4), 4, False),
}


def _cases():
    for c in CASES:
        for m in MASKS:
            yield pytest.param(c, m, id=f"{c}-{m}")


def _modes(case):
    return ["as_is", "slow"] + (["fast_only"] if CASES[case][2] else [])


@pytest.mark.parametrize("case,mask", list(_cases()))
def test_load(case, mask):
    addr, nbytes, _ = CASES[case]
    words = -(-nbytes // 4)
    for mode in _modes(case):
        rt = _runtime(mode)
        want, esc = ref_load(rt.win, (N, L), addr, MASKS[mask], nbytes, words)
        got = rt.load("global", INSTR, addr, MASKS[mask], nbytes, words, slice(None), N, 0)
        assert got.dtype == np.uint32 and got.shape == (N, L, words), mode
        np.testing.assert_array_equal(got, want, err_msg=mode)
        assert _escapes(rt) == esc[: rtmod.MAX_ESCAPES] and rt.escape_count == len(esc), mode
        assert not rt.win.written.any()
        got[...] = 0  # the result is the caller's, not a view
        again = rt.load("global", INSTR, addr, MASKS[mask], nbytes, words, slice(None), N, 0)
        np.testing.assert_array_equal(again, want, err_msg=mode)


@pytest.mark.parametrize("case,mask", list(_cases()))
def test_store(case, mask):
    addr, nbytes, _ = CASES[case]
    words = -(-nbytes // 4)
    data = tuple(rng.integers(0, 1 << 32, (N, L), dtype=np.uint64).astype(np.uint32) for _ in range(words))
    if nbytes < 4:
        data = (data[0],)
    for mode in _modes(case):
        rt = _runtime(mode)
        arena, written, esc = ref_store(rt.win, (N, L), addr, MASKS[mask], data, nbytes)
        rt.store("global", INSTR, addr, MASKS[mask], data, nbytes, slice(None), N)
        np.testing.assert_array_equal(rt.win.arena, arena, err_msg=mode)
        np.testing.assert_array_equal(rt.win.written, written, err_msg=mode)
        assert _escapes(rt) == esc[: rtmod.MAX_ESCAPES] and rt.escape_count == len(esc), mode
        ref = WindowSet.__new__(WindowSet)
        ref.__dict__.update(rt.win.__dict__)
        ref.written = written
        assert rt.win.spans() == ref.spans(), mode


@pytest.mark.parametrize(
    "case",
    [
        "one_window_dword",
        "same_address",
        "per_wave_address",
        "two_windows",
        "partly_escaping",
        "upper_half_48bit",
    ],
)
@pytest.mark.parametrize("mask", list(MASKS))
def test_atomic_add(case, mask):
    addr, _, _ = CASES[case]
    data = rng.integers(0, 1 << 32, (N, L), dtype=np.uint64).astype(np.uint32)
    for mode in _modes(case):
        rt = _runtime(mode)
        arena, written, out, esc = ref_atomic_add(rt.win, (N, L), addr, MASKS[mask], data)
        got = rt.atomic("global", INSTR, "add", 32, addr, MASKS[mask], data, None, slice(None), N)
        np.testing.assert_array_equal(got, out, err_msg=mode)
        np.testing.assert_array_equal(rt.win.arena, arena, err_msg=mode)
        np.testing.assert_array_equal(rt.win.written, written, err_msg=mode)
        assert _escapes(rt) == esc[: rtmod.MAX_ESCAPES] and rt.escape_count == len(esc), mode


def test_atomic_64_marks_eight_bytes():
    for mode in ("as_is", "slow", "fast_only"):
        rt = _runtime(mode)
        addr = np.uint64(A + 0x100) + (LANE % 16) * np.uint64(8)
        rt.atomic(
            "global",
            INSTR,
            "swap",
            64,
            addr,
            np.ones((N, L), bool),
            np.uint64(0x1122334455667788),
            None,
            slice(None),
            N,
        )
        o = int(rt.win.offs[0])
        assert rt.win.written[o + 0x100 : o + 0x180].all() and rt.win.written.sum() == 0x80, mode
        assert (rt.win.arena[o + 0x100 : o + 0x180].view("<u8") == 0x1122334455667788).all(), mode


def test_uniform_loads():
    """Scalar loads: (N, 1) addresses, one per wave (same for all waves, or not)."""
    for addr in (
        np.full((N, 1), A + 0x20, np.uint64),
        np.uint64(C) + np.arange(N, dtype=np.uint64)[:, None] * np.uint64(16),
        np.full((N, 1), WILD, np.uint64),
    ):
        for nbytes, words in ((4, 1), (8, 2), (16, 4), (32, 8)):
            for mode in ("as_is", "slow"):
                rt = _runtime(mode)
                want, esc = ref_load(rt.win, (N, 1), addr, np.True_, nbytes, words)
                got = rt.load("global", INSTR, addr, np.True_, nbytes, words, slice(None), N, 1)
                assert got.shape == (N, 1, words) and got.flags.writeable, mode
                np.testing.assert_array_equal(got, want, err_msg=mode)
                assert rt.escape_count == len(esc), mode


def test_store_same_address_last_lane_wins():
    for mode in ("as_is", "slow", "fast_only"):
        rt = _runtime(mode)
        data = (np.arange(N * L, dtype=np.uint32).reshape(N, L),)
        mask = np.ones((N, L), bool)
        mask[-1, -3:] = False
        rt.store("global", INSTR, np.uint64(A + 8), mask, data, 4, slice(None), N)
        o = int(rt.win.offs[0])
        assert rt.win.arena[o + 8 : o + 12].view("<u4")[0] == N * L - 4, mode


def test_masked_off_wild_lanes_do_not_escape():
    """Inactive lanes may hold any address; the fast path must look at active lanes only."""
    addr = np.where(LANE % 3 == 0, np.uint64(WILD), np.uint64(A) + LANE * np.uint64(4))
    mask = LANE % 3 != 0
    rt = _runtime("fast_only")
    data = (LANE.astype(np.uint32),)
    rt.store("global", INSTR, addr, mask, data, 4, slice(None), N)
    got = rt.load("global", INSTR, addr, mask, 4, 1, slice(None), N, 0)
    assert rt.escape_count == 0
    np.testing.assert_array_equal(got[..., 0], np.where(mask, LANE, 0))
    assert rt.win.written.sum() == 4 * np.count_nonzero(mask)


# ------------------------------------------------------------------------- whole dispatches
# out[lid] = (lid odd ? b : a)[lid] for lids < s10, the rest of the lanes exec-masked off;
# the pointer of lanes >= s11 is replaced by a wild one (escapes, when those lanes are active)
TWO_BUFFERS = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx4 s[8:11], s[0:1], 0x10
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 2, v0
  v_and_b32 v2, 1, v0
  v_cmp_eq_u32_e32 vcc_lo, 1, v2
  v_mov_b32 v3, s4
  v_mov_b32 v5, s6
  v_cndmask_b32_e32 v3, v3, v5, vcc_lo
  v_mov_b32 v4, s5
  v_mov_b32 v5, s7
  v_cndmask_b32_e32 v4, v4, v5, vcc_lo
  v_cmp_le_u32_e32 vcc_lo, s11, v0
  v_mov_b32 v5, 0x12345
  v_cndmask_b32_e32 v4, v4, v5, vcc_lo
  v_add_co_u32 v3, vcc_lo, v3, v1
  v_add_co_ci_u32_e32 v4, vcc_lo, 0, v4, vcc_lo
  v_cmp_gt_u32_e32 vcc_lo, s10, v0
  s_and_b32 exec_lo, exec_lo, vcc_lo
  global_load_dword v6, v[3:4], off
  s_waitcnt vmcnt(0)
  global_store_dword v1, v6, s[8:9]
  s_endpgm
"""


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("active,wild_from", [(32, 32), (20, 32), (32, 24), (20, 12)])
def test_dispatch_two_windows_partial_exec_and_escapes(active, wild_from):
    r = Rig(TWO_BUFFERS)
    a = np.arange(32, dtype=np.uint32) + 0x1000
    b = np.arange(32, dtype=np.uint32) + 0x2000
    pa, pb = r.buf(a, "a"), r.buf(b, "b")
    out = r.buf(np.full(32, 0xEEEEEEEE, np.uint32), "out")
    args = np.array([pa, pb, out, active | (wild_from << 32)], np.uint64)
    res = r.run(r.config(user_sgprs=ptr(r.buf(args, "args"))))
    lid = np.arange(32)
    n_esc = max(0, active - wild_from)
    if n_esc:
        assert res.refusal is not None and res.refusal.code == "escape"
        assert res.stats["escapes"] == n_esc
        assert [(e.lane, e.kind) for e in res.escapes] == [(i, "load") for i in range(wild_from, active)]
        assert (r.read(out, np.uint32, 32) == 0xEEEEEEEE).all()  # nothing landed
        return
    assert res.refusal is None and res.stats["escapes"] == 0
    want = np.where(lid < active, np.where(lid % 2 == 1, b, a), 0xEEEEEEEE)
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), want)
    assert res.write_spans == [(out, 4 * active)]


# ------------------------------------------------------------------------------- LDS, scratch
@pytest.mark.parametrize("spread", ["in_range", "out_of_range", "negative_wrap"])
@pytest.mark.parametrize("nbytes", [1, 4, 8])
def test_lds_in_and_out_of_range(spread, nbytes):
    """LDS: in-range lanes (min/max check) and out-of-range ones (read 0, store nothing)."""
    lds_bytes, groups = 256, 3
    grp = np.array([0, 0, 1, 1, 2, 2])
    words = -(-nbytes // 4)
    a = (LANE % 24) * np.uint64(8) + np.uint64(8 if nbytes < 8 else 0)
    if spread == "out_of_range":
        a = np.where(LANE % 9 == 4, np.uint64(lds_bytes - nbytes + 4), a)
    elif spread == "negative_wrap":
        a = np.where(LANE % 11 == 1, np.uint64((1 << 64) - 8), a)
    a = a.astype(np.uint32) if spread != "negative_wrap" else a.view(np.int64)
    mask = MASKS["partial"]
    rt = _runtime()
    rt.wave_group, rt.lds_bytes = grp, lds_bytes
    rt.lds_stride = lds_bytes + 8
    rt.lds = np.random.default_rng(3).integers(0, 256, groups * rt.lds_stride + 8, dtype=np.uint8)
    lds0 = rt.lds.copy()
    data = tuple(
        np.random.default_rng(4).integers(0, 1 << 32, (N, L), dtype=np.uint64).astype(np.uint32)
        for _ in range(words)
    )
    got = rt.load("lds", INSTR, a, mask, nbytes, words, slice(None), N, 0)
    rt.store("lds", INSTR, a, mask, data, nbytes, slice(None), N)
    want = np.zeros((N, L, words), np.uint32)
    lds = lds0.copy()
    ai = np.asarray(a, np.int64)
    for i in range(N):
        for j in range(L):
            if not mask[i, j] or not (0 <= ai[i, j] and ai[i, j] + nbytes <= lds_bytes):
                continue
            k = grp[i] * rt.lds_stride + ai[i, j]
            want[i, j] = np.frombuffer(bytes(lds0[k : k + nbytes]) + bytes(4 * words - nbytes), "<u4")
            lds[k : k + nbytes] = np.array([d[i, j] for d in data], "<u4").view(np.uint8)[:nbytes]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(rt.lds, lds)
    assert rt.escape_count == 0


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("nbytes", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("kind", ["aligned", "unaligned", "out_of_range", "negative"])
def test_scratch_resolve_matches_per_lane_rule(mode, nbytes, kind):
    wave_bytes = 4 * L * 16
    st = ScratchStore(N, wave_bytes, mode, L)
    a = ((LANE % 64) * np.uint64(4 * L) + (LANE % L) * np.uint64(4)).astype(np.int64)
    a = a[:, :] % (wave_bytes - 16)
    if kind == "unaligned":
        a = a + (LANE % 4).astype(np.int64)
    elif kind == "out_of_range":
        a = np.where(LANE % 13 == 2, wave_bytes - 2, a)
    elif kind == "negative":
        a = np.where(LANE % 13 == 2, -4, a)
    w = np.array([0, 2, 3, 5])
    aw = a[:4]
    idx, ok = st.resolve(w, aw, nbytes, np.arange(L, dtype=np.uint32)[None, :])
    want_ok = np.zeros(aw.shape, bool)
    for i in range(4):
        for j in range(L):
            x = int(aw[i, j])
            fine = (
                x >= 0 and x + nbytes <= wave_bytes and ((x & 3) + nbytes <= 4 if nbytes <= 4 else x & 3 == 0)
            )
            if mode == "lane":
                fine = fine and (x >> 2) % L == j
            want_ok[i, j] = fine
    got_ok = np.ones(aw.shape, bool) if ok is None else ok
    np.testing.assert_array_equal(got_ok, want_ok)
    np.testing.assert_array_equal(idx[want_ok], (w[:, None] * wave_bytes + aw)[want_ok])
    if kind == "aligned" and mode == "wave" and nbytes != 2:
        assert ok is None  # the min/max fast check applied


@pytest.mark.parametrize("op", ["add", "sub", "swap", "umax", "cmpswap", "inc"])
@pytest.mark.parametrize("cells", ["increasing", "shuffled", "duplicates", "one_cell"])
def test_atomic_apply_orders_lanes(op, cells):
    n = 300
    r = np.random.default_rng(5)
    c = {
        "increasing": np.arange(n) * 3,
        "shuffled": r.permutation(n) * 2,
        "duplicates": r.integers(0, 40, n),
        "one_cell": np.full(n, 17),
    }[cells].astype(np.int64)
    d = r.integers(0, 50, n, dtype=np.uint64).astype(np.uint32)
    cmp = r.integers(0, 3, n, dtype=np.uint64).astype(np.uint32)
    view = r.integers(0, 3, 1000, dtype=np.uint64).astype(np.uint32)
    ref = view.copy()
    want = np.zeros(n, np.uint32)
    for i in range(n):  # lane order, one at a time
        want[i] = ref[c[i]]
        ref[c[i]] = atomics.combine(
            op, ref[c[i] : c[i] + 1], d[i : i + 1], cmp[i : i + 1] if op == "cmpswap" else None, np.uint32
        )[0]
    got = atomics.apply(view, c, op, d, cmp if op == "cmpswap" else None, np.uint32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(view, ref)


# ------------------------------------------------------------------------- batch setup
def _ref_setup(cfg, groups, L):
    """Local ids and EXEC as _run_batch computed them with per-lane divisions."""
    gx, gy, gz = cfg.num_groups
    sx, sy, sz = cfg.group_start
    gid_x, gid_y, gid_z = groups % gx + sx, (groups // gx) % gy + sy, groups // (gx * gy) + sz
    bx, by, bz = cfg.block
    px, py, pz = cfg.partial if cfg.partial_tg else cfg.block
    ex, ey, ez = cfg.group_end
    tx = np.where((gid_x == ex - 1) & bool(cfg.partial_tg) & (px > 0), px, bx)
    ty = np.where((gid_y == ey - 1) & bool(cfg.partial_tg) & (py > 0), py, by)
    tz = np.where((gid_z == ez - 1) & bool(cfg.partial_tg) & (pz > 0), pz, bz)
    threads = tx * ty * tz
    wpg = -(-threads // L)
    grp = np.repeat(np.arange(len(groups)), wpg)
    k = np.arange(int(wpg.sum())) - np.repeat(np.cumsum(wpg) - wpg, wpg)
    t = (k[:, None] * L + np.arange(L)[None, :]).astype(np.int64)
    TX, TY = tx[grp][:, None], ty[grp][:, None]
    active = t < threads[grp][:, None]
    if (ty == 1).all() and (tz == 1).all():
        lx, ly, lz = t, 0 * t, 0 * t
    else:
        lx, ly, lz = t % TX, (t // TX) % TY, t // (TX * TY)
    e = np.packbits(active, axis=1, bitorder="little").view("<u4" if L == 32 else "<u8").reshape(-1)
    return grp, lx.astype(np.uint32), ly.astype(np.uint32), lz.astype(np.uint32), e


@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize(
    "block,partial,groups",
    [
        ((64, 1, 1), (0, 0, 0), (5, 1, 1)),
        ((100, 1, 1), (37, 0, 0), (4, 1, 1)),
        ((8, 8, 1), (0, 0, 0), (7, 3, 1)),
        ((8, 8, 1), (5, 3, 0), (7, 3, 1)),
        ((6, 5, 3), (4, 2, 1), (3, 2, 2)),
        ((16, 1, 4), (0, 0, 3), (2, 1, 3)),
    ],
)
def test_batch_local_ids_and_exec(wave, block, partial, groups):
    for packed in (False, True):
        cfg = types.SimpleNamespace(
            num_groups=groups,
            group_start=(0, 0, 0),
            group_end=groups,
            block=block,
            partial=partial,
            partial_tg=any(partial),
            user_sgprs=(1, 2),
            system_sgprs={},
            target="gfx1030",
            float_mode=0xF0,
            dx10_clamp=True,
            ieee_mode=True,
            packed_local_ids=packed,
            tidig_comp_cnt=2,
            lds_bytes=0,
            scratch_wave_bytes=0,
            wave_size=wave,
        )
        rt = Runtime(types.SimpleNamespace(program=None), cfg, None, "wave", 1 << 20)
        seen = []
        rt._schedule = lambda n, grp: seen.append((grp.copy(), rt.S.copy(), rt.V.copy()))
        total = groups[0] * groups[1] * groups[2]
        rt.wave_base = 0
        for g0 in range(0, total, 4):  # batches that start mid-row
            rt._run_batch(np.arange(g0, min(total, g0 + 4)), 4)
        for (grp, S, V), g0 in zip(seen, range(0, total, 4)):
            rgrp, lx, ly, lz, e = _ref_setup(cfg, np.arange(g0, min(total, g0 + 4)), wave)
            np.testing.assert_array_equal(grp, rgrp)
            got_e = S[EXEC_LO, :, 0].astype(np.uint64)
            if wave == 64:
                got_e |= S[EXEC_HI, :, 0].astype(np.uint64) << np.uint64(32)
            np.testing.assert_array_equal(got_e, e)
            if packed:
                np.testing.assert_array_equal(V[0], lx | (ly << 10) | (lz << 20))
            else:
                np.testing.assert_array_equal(V[:3], np.stack([lx, ly, lz]))
            assert (V[3:] == 0).all()


def test_windows_placed_congruent_mod_8():
    """Every window's arena offset is congruent to its guest address mod 8, whatever the sizes
    before it: aligned guest accesses are aligned arena accesses, and the CUDA backend's wl_al
    spells an arena index's low 3 bits as the guest address's on the strength of it."""
    mem = GuestMemory()
    wins = []
    for i, (base, size) in enumerate(
        ((0x1003, 5), (0x2001, 13), (0x3006, 7), (0x4000, 3), (HI + 5, 9), (C, 0x200))
    ):
        mem.alloc(size, name=f"w{i}", address=base, align=1, data=np.full(size, i, np.uint8))
        wins.append(Window(base, size, f"w{i}", "t"))
    ws = WindowSet(wins, mem)
    assert len(ws.offs) == len(wins)
    for start, off, end in zip(ws.starts.tolist(), ws.offs.tolist(), ws.ends.tolist()):
        assert (off - start) % 8 == 0
        assert ws.arena[off : off + (end - start)].tolist() == list(mem.view(start, end - start))


def test_window_guesses_are_the_callers_and_the_numpy_plan_sets_their_floor():
    """WindowSet aliases and leaves blank exactly the windows its caller's guesses name, of any
    size from ``guess_min`` up (a smaller one is copied in); the floor is the NumPy backend's
    policy, in its window plan (GUESS_MIN_BYTES: decision 0035's amendment h117).  Before, the
    floor was WindowSet's own and a caller's guesses about small windows were dropped silently."""
    from wavelift.backends.numpy import GUESS_MIN_BYTES, Module

    mem, wins = _memory()
    written = {(A, 0x1000)}  # A written, never read; B, C and HI read only
    ws = WindowSet(wins, mem, alias_except=written, blank=written)
    assert (ws.aliased, ws.blank) == ({1, 2, 3}, {0})
    ws = WindowSet(wins, mem, alias_except=written, blank=written, guess_min=0x400)
    assert (ws.aliased, ws.blank) == ({1, 3}, {0})  # C (512 bytes) copied in
    ws = WindowSet(wins, mem, alias_except=written, blank=written, guess_min=GUESS_MIN_BYTES)
    assert (ws.aliased, ws.blank) == (set(), set())
    m = Module(("k",), None, None, "", None)
    assert m.window_plan() == {}  # (no driver run yet: copy every window)
    m.driven, m.written_windows = True, set(written)
    plan = m.window_plan()
    assert plan == dict(alias_except=written, blank=written, guess_min=GUESS_MIN_BYTES)
    m.alias_ok = m.blank_ok = False
    assert m.window_plan() == dict(alias_except=None, blank=None, guess_min=GUESS_MIN_BYTES)
