"""Atomics and s_setpc calls in the native tier (docs/decisions/0020-native-scratch-atomics-calls.md).

Every atomic form the frontend translates (global 32 and 64 bits, LDS) runs in a program of one
atomic instruction whose lanes share a few cells, in all three tiers (tests/conftest.py); the
old values and the cells must equal a plain Python loop over the lanes in the serial order
(workgroups in order, lanes in order) -- with one atomic instruction per program that is also
NumPy's order, and the native driver's threads must find the race and run serially.  Then the
clang-19 kernels: `atomics` (global and local atomics) and `call` (a non-inlined call: s_swappc
and s_setpc) run with every block native, and their outputs equal the NumPy blocks'.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
from asm import HAVE_MC
from harness import Rig, ptr

from wavelift.backends import host

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from reference import cases as C  # noqa: E402

OPS = ("add", "sub", "swap", "cmpswap", "and", "or", "xor", "umin", "umax", "smin", "smax", "inc", "dec")
DS = {
    "add": "ds_add_rtn_u32",
    "sub": "ds_sub_rtn_u32",
    "swap": "ds_wrxchg_rtn_b32",
    "cmpswap": "ds_cmpst_rtn_b32",
    "and": "ds_and_rtn_b32",
    "or": "ds_or_rtn_b32",
    "xor": "ds_xor_rtn_b32",
    "umin": "ds_min_rtn_u32",
    "umax": "ds_max_rtn_u32",
    "smin": "ds_min_rtn_i32",
    "smax": "ds_max_rtn_i32",
    "inc": "ds_inc_rtn_u32",
    "dec": "ds_dec_rtn_u32",
}
GROUPS, LANES, CELLS = 4, 32, 4


def _step(op, old, d, c, bits):
    """One atomic step on Python ints (the ISA's definitions, written here from the guide)."""
    m = (1 << bits) - 1

    def s(x):
        return x - (1 << bits) if x >> (bits - 1) else x

    return {
        "add": lambda: (old + d) & m,
        "sub": lambda: (old - d) & m,
        "swap": lambda: d,
        "cmpswap": lambda: d if old == c else old,
        "and": lambda: old & d,
        "or": lambda: old | d,
        "xor": lambda: old ^ d,
        "umin": lambda: min(old, d),
        "umax": lambda: max(old, d),
        "smin": lambda: old if s(old) < s(d) else d,
        "smax": lambda: old if s(old) > s(d) else d,
        "inc": lambda: 0 if old >= d else old + 1,
        "dec": lambda: d if old == 0 or old > d else old - 1,
    }[op]()


def _data(bits):
    """Per (group, lane): data and compare values (some compares hit: cmp = lane's cell index
    pattern), and the cells' start values."""
    g, lane = np.meshgrid(
        np.arange(GROUPS, dtype=np.uint64), np.arange(LANES, dtype=np.uint64), indexing="ij"
    )
    d = (lane * np.uint64(0x9E3779B97F4A7C15)) ^ (g * np.uint64(0x2545F4914F6CDD1D))
    if bits == 32:
        d &= np.uint64(0xFFFFFFFF)
    d = np.where(lane % np.uint64(5) == 0, lane % np.uint64(3), d)  # small values: inc/dec wrap
    cmp = lane % np.uint64(4)
    start = np.array([0, 1, 3, (1 << bits) - 2], np.uint64)
    return d, cmp, start


def _serial(op, d, cmp, start, bits, lds):
    """-> (old per group and lane, final cells): lanes in order, workgroups in order; LDS cells
    are per workgroup (each group starts from ``start``)."""
    old = np.zeros(d.shape, np.uint64)
    cells = [int(x) for x in start]
    finals = []
    for g in range(GROUPS):
        if lds:
            cells = [int(x) for x in start]
        for lane in range(LANES):
            k = lane % CELLS
            old[g, lane] = cells[k]
            cells[k] = _step(op, cells[k], int(d[g, lane]), int(cmp[g, lane]), bits)
        finals.append(list(cells))
    return old, np.array(finals if lds else finals[-1], np.uint64)


def _program(op, bits, lds):
    """s[0:1] cells, s[2:3] data (lo, hi, cmp lo, cmp hi per lane), s[4:5] old out, s6 group id."""
    x2 = bits == 64
    load = [
        "s_lshl_b32 s7, s6, 5",
        "v_add_nc_u32 v9, s7, v0",  # thread index
        "v_lshlrev_b32 v10, 4, v9",  # 16 bytes of data per thread
        "global_load_dwordx4 v[3:6], v10, s[2:3]",
        "s_waitcnt vmcnt(0)",
        "v_and_b32 v1, 3, v0",
        f"v_lshlrev_b32 v1, {3 if x2 else 2}, v1",  # the lane's cell
    ]
    if lds:
        init = [  # lane k < 4 writes cell k's start value (from the cells buffer), then a barrier
            "v_cmp_gt_u32 vcc_lo, 4, v0",
            "s_and_saveexec_b32 s8, vcc_lo",
            "v_lshlrev_b32 v11, 2, v0",
            "global_load_dword v12, v11, s[0:1]",
            "s_waitcnt vmcnt(0)",
            "ds_write_b32 v11, v12",
            "s_mov_b32 exec_lo, s8",
            "s_waitcnt lgkmcnt(0)",
            "s_barrier",
        ]
        if op == "cmpswap":  # ds_cmpst addr, cmp (data0), src (data1)
            atom = [f"{DS[op]} v7, v1, v5, v3", "s_waitcnt lgkmcnt(0)"]
        else:
            atom = [f"{DS[op]} v7, v1, v3", "s_waitcnt lgkmcnt(0)"]
        # the group's final cells: lane k < 4 stores LDS cell k to cells + 16 * (group + 1) + 4k
        after = [
            "s_barrier",
            "v_cmp_gt_u32 vcc_lo, 4, v0",
            "s_and_saveexec_b32 s8, vcc_lo",
            "v_lshlrev_b32 v11, 2, v0",
            "ds_read_b32 v12, v11",
            "s_waitcnt lgkmcnt(0)",
            "s_lshl_b32 s9, s6, 4",
            "s_add_u32 s9, s9, 16",
            "v_add_nc_u32 v13, s9, v11",
            "global_store_dword v13, v12, s[0:1]",
            "s_mov_b32 exec_lo, s8",
        ]
    else:
        init, after = [], []
        name = f"global_atomic_{op}{'_x2' if x2 else ''}"
        if op == "cmpswap":
            data = "v[3:6]" if x2 else "v[3:4]"
            if not x2:
                load.append("v_mov_b32 v4, v5")  # cmp (32 bits) follows the data dword
        else:
            data = "v[3:4]" if x2 else "v3"
        atom = [f"{name} {'v[7:8]' if x2 else 'v7'}, v1, {data}, s[0:1] glc", "s_waitcnt vmcnt(0)"]
    store = ["v_lshlrev_b32 v10, 3, v9", f"global_store_{'dwordx2' if x2 else 'dword'} v10, v[7:8], s[4:5]"]
    if not x2:
        store[1] = "global_store_dword v10, v7, s[4:5]"
    return "\n".join(init + load + atom + store + after + ["s_endpgm"])


def _forms():
    for op in OPS:
        yield pytest.param(op, 32, False, id=f"global-{op}")
        yield pytest.param(op, 64, False, id=f"global-{op}-x2")
        yield pytest.param(op, 32, True, id=f"lds-{op}")


@pytest.mark.tiers
@pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
@pytest.mark.parametrize("op,bits,lds", list(_forms()))
def test_every_atomic_form_in_serial_order(op, bits, lds, tier):
    d, cmp, start = _data(bits)
    want_old, want_cells = _serial(op, d, cmp, start, bits, lds)
    r = Rig(_program(op, bits, lds))
    if bits == 64:
        raw = np.stack([d, cmp], -1).astype(np.uint64).view(np.uint32)
    else:
        raw = np.stack([d, np.zeros_like(d), cmp, np.zeros_like(d)], -1).astype(np.uint32)
    cells0 = start.astype(np.uint64 if bits == 64 else np.uint32)
    cells = r.buf(np.concatenate([cells0.view(np.uint32), np.zeros(4 * (GROUPS + 1), np.uint32)]), "cells")
    data = r.buf(raw.reshape(-1), "data")
    out = r.buf(np.zeros(2 * GROUPS * LANES, np.uint32), "old")
    res = r.run(
        r.config(user_sgprs=ptr(cells) + ptr(data) + ptr(out), groups=(GROUPS, 1, 1), lds=64 if lds else 0),
        mode="wave",
    )
    assert res.landed, res.refusal
    if tier != "numpy":
        assert res.stats["native"] and res.stats["numpy_blocks"] == {}, res.stats
    old = r.read(out, np.uint64, GROUPS * LANES).reshape(GROUPS, LANES)
    if bits == 32:
        old = old & np.uint64(0xFFFFFFFF)
    np.testing.assert_array_equal(old, want_old)
    if lds:
        got = r.read(cells + 16, np.uint32, 4 * GROUPS).reshape(GROUPS, 4)
    else:
        got = r.read(cells, np.uint64 if bits == 64 else np.uint32, CELLS)
    np.testing.assert_array_equal(got, want_cells.astype(got.dtype))


@pytest.mark.tiers
@pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
@pytest.mark.parametrize("good", [True, False], ids=["to-a-block", "to-no-instruction"])
def test_setpc_targets(good, tier):
    """s_setpc to a run-time address: a block start runs on (the driver maps it through its own
    table), anything else is refused program.bad_jump with the scheduler's message."""
    r = Rig("""
        s_getpc_b64 s[8:9]
        s_add_u32 s8, s8, 16
        s_addc_u32 s9, s9, 0
        s_swappc_b64 s[10:11], s[8:9]
        s_endpgm
        v_mov_b32 v1, 0x1234
        v_lshlrev_b32 v2, 2, v0
        global_store_dword v2, v1, s[2:3]
        s_setpc_b64 s[0:1]
    """)
    out = r.buf(np.zeros(64, np.uint32), "out")
    # the s_endpgm after the call (a return point: a block start), or 2 bytes into it
    target = r.prog + 16 + (0 if good else 2)
    res = r.run(r.config(user_sgprs=ptr(target) + ptr(out), groups=(3, 1, 1)), mode="wave")
    if good:
        assert res.landed, res.refusal
        if tier != "numpy":
            assert res.stats["numpy_blocks"] == {}, res.stats
            assert res.stats["native_driver"] == (tier == "native")
        assert r.read(out, np.uint32, 1)[0] == 0x1234
    else:
        assert res.refusal.code == "program.bad_jump", res.refusal
        assert f"jumps to {target:#x}" in res.refusal.message


# ---- clang-19 kernels --------------------------------------------------------------------------


def _run_kernel(path, kname, mode, tier, monkeypatch, _native_cache):
    import wavelift
    from wavelift.backends.numpy import runtime

    monkeypatch.setattr(runtime, "NATIVE", "off" if tier == "numpy" else "on")
    monkeypatch.setattr(runtime, "NATIVE_DRIVER", tier == "native")
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(_native_cache))
    wave = 64 if "w64" in path else 32
    case = next(iter(C.cases_for(kname, wave)))
    dev = wavelift.Device("gfx1030", backend="numpy", mode=mode)
    k = dev.load_code_object(str(ROOT / path)).kernel(kname)
    args = case.args()
    bufs = {a.name: dev.upload(a.value, name=a.name) for a in args if a.is_buffer}
    r = k.launch(**case.shape.launch_kwargs(), args=[bufs.get(a.name, a.value) for a in args])
    assert r.landed, r.refusal
    got = {n: dev.download(b, next(a.value.dtype for a in args if a.name == n)) for n, b in bufs.items()}
    return r, got, case, args, k


KERNELS = [
    ("tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco", "atomics"),
    ("tests/fixtures/gfx1030/basic-O0-w64-mubuf.hsaco", "atomics"),
    ("tests/fixtures/gfx1030/stack-O2-w32-flat.hsaco", "call"),
    ("tests/fixtures/gfx1030/stack-O0-w64-mubuf.hsaco", "call"),
]
# -m slow: atomics at -O0 w64 mubuf (its native build 50-100 s, a third of this file in the
# default run).  By default atomics run every block native at -O2 here and (wave64, mubuf) in
# test_fixture_kernels' gfx1030 basic-O2-w64-mubuf native case; -O0 w64 mubuf every block native
# in stack-O0-w64-mubuf's call here.
SLOW_KERNELS = {("tests/fixtures/gfx1030/basic-O0-w64-mubuf.hsaco", "atomics")}


@pytest.mark.skipif(host.compiler() is None, reason="no host C++ compiler")
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize(
    "path,kname",
    [
        pytest.param(
            p, k, id=f"{pathlib.Path(p).stem}-{k}", marks=[pytest.mark.slow] * ((p, k) in SLOW_KERNELS)
        )
        for p, k in KERNELS
    ],
)
def test_clang_kernel_runs_native(path, kname, mode, monkeypatch, _native_cache):
    """Every block native (the driver, and native blocks under the scheduler); the outputs equal
    the NumPy blocks' and pass the kernel's reference check (order-dependent atomics results by
    their invariants: reference/cases.py compare_atomics)."""
    _, want, case, args, _ = _run_kernel(path, kname, mode, "numpy", monkeypatch, _native_cache)
    for tier in ("native", "native-blocks"):
        r, got, _, _, _ = _run_kernel(path, kname, mode, tier, monkeypatch, _native_cache)
        assert r.stats["native"] and r.stats["numpy_blocks"] == {}, r.stats
        assert r.stats["native_driver"] == (tier == "native")
        C.compare(case, C.numpy_expected(case, args), got, C._by_name(args))
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{tier}: {name}")
    if kname == "call" and shutil.which("llvm-objdump-19"):  # the call is really there
        out = subprocess.run(
            ["llvm-objdump-19", "-d", "--mcpu=gfx1030", str(ROOT / path)], capture_output=True, text=True
        ).stdout
        assert "s_swappc_b64" in out and "s_setpc_b64" in out


# ---- stats: which tier ran each block ----------------------------------------------------------


@pytest.mark.skipif(host.compiler() is None, reason="no host C++ compiler")
def test_stats_name_the_blocks_numpy_ran(monkeypatch, _native_cache):
    """Blocks the tier leaves to NumPy (here: lane arrays past a tiny stack bound) are named in
    stats['numpy_blocks'] with the tier's reason, their runs counted in 'numpy_block_runs';
    the others ran native ('native_block_runs')."""
    from test_basic import vadd_rig

    from wavelift.backends import native
    from wavelift.backends.numpy import runtime

    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(_native_cache))
    monkeypatch.setattr(runtime, "NATIVE", "on")
    monkeypatch.setattr(native, "MAX_STACK_BYTES", 64)
    r, a, b, pc, cfg = vadd_rig(300, 8)
    cache: dict = {}
    res = r.run(cfg, cache=cache)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(pc, np.float32, 300), a[:300] + b[:300])
    module = next(v for v in cache.values() if hasattr(getattr(v, "blocks", None), "natives"))
    (nb,) = module.blocks.natives.values()
    st = res.stats
    assert st["numpy_blocks"] and st["numpy_block_runs"] > 0, st
    for k, why in st["numpy_blocks"].items():
        assert nb.unsupported[int(k)] == why and "stack bound" in why
    assert not set(nb.fns) & {int(k) for k in st["numpy_blocks"]}  # a native block is not named
