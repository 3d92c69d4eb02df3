"""globalrange.unrefusable (decision 0049 step 3, its amendment h124): whether a CUDA dispatch is
proved unrefusable.  Real dispatches as bench/bench_resident.py launches them, programs that must
not be proved (each for its own reason, the refusal confirmed on the NumPy backend where NumPy
refuses it too), and soundness: every proved dispatch of the gfx1030 -O2 clang fixtures runs on
NumPy in lane mode and lands with no escape (the oracle: the NumPy backend, independent of the
proof)."""

from __future__ import annotations

import copy
import dataclasses
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import globalrange_oracle as O  # noqa: E402
from fixture_dispatches import _Catch, clang_dispatches, pass_dispatches  # noqa: E402

from wavelift.backends.cuda import globalrange as GR  # noqa: E402
from wavelift.ir.program import Op, Value  # noqa: E402
from wavelift.run.execute import execute_dispatch, program_for  # noqa: E402

VADD = "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco"


def _caught(path, kname, launch) -> list:
    """(memory, config) of each dispatch ``launch(dev, kernel)`` makes (nothing runs)."""
    import wavelift

    c = _Catch()
    dev = wavelift.Device("gfx1030", execute=c)
    launch(dev, dev.load_code_object(str(ROOT / path)).kernel(kname))
    assert c.got
    return c.got


def _vadd(n=1000, grid=None, count=None, block=64) -> tuple:
    """(memory, config) of clang's vadd over n-float buffers a and b, launched over ``grid``
    lanes with its n = ``count``."""

    def go(dev, k):
        a = dev.upload(np.arange(n, dtype=np.float32), name="a")
        b = dev.upload(np.ones(n, np.float32), name="b")
        c = dev.alloc(4 * n)
        k.launch(global_size=(grid or n, 1, 1), block=(block, 1, 1), args=[a, b, c, np.uint32(count or n)])

    ((mem, cfg),) = _caught(VADD, "vadd", go)
    return mem, cfg


def _numpy(mem, cfg, budget=None):
    return execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", budget=budget)


def _why(mem, cfg, **kw):
    return O.unrefusable_of(copy.deepcopy(mem), cfg, **kw)


# --- real dispatches (bench_resident.py's) ------------------------------------------------


def test_vadd_as_the_bench_launches_it_is_proved():
    # tiny (64 floats, groups of 64) and big (2^20 here: the bench's 2^26 is 768 MiB of guest
    # memory; the proof is the same intervals), groups of 256
    for mem, cfg in (_vadd(64), _vadd(1 << 20, block=256)):
        assert _why(mem, cfg) is None


def test_shade_and_stencil5_are_proved():
    (mem, cfg), *_ = pass_dispatches("shade")
    assert _why(mem, cfg) is None
    (mem, cfg), *_ = pass_dispatches("stencil5")
    # (lds.cl: the tile's load loop `for (i = lid; i < 400; i += 256)` -- a wave32 lane loop, i
    # from 0..255 -- runs at most twice: its path is 9 + 18 + 2 x 30 + 6 + 6 + 43 + 1 = 143
    # instructions (amendment h126))
    most: list = []
    assert _why(mem, cfg, longest=most) is None
    assert most == [143]
    assert _why(mem, cfg, budget=143) is None
    assert _why(mem, cfg, budget=142) == "budget"
    # NumPy counts the same: the first wave runs the loop twice
    assert _numpy(mem, cfg, budget=143).refusal is None
    assert _numpy(mem, cfg, budget=142).refusal.code == "dispatch.budget_exceeded"
    # every access proved, and every one NumPy makes inside its proved window: the load in the
    # loop at clamped coordinates (each clamp's select narrowed by its own compare) and the
    # store after it (its EXEC: the ballots of both bounds tests and-ed)
    _, acc, proof, _ = O.proof_of(copy.deepcopy(mem), cfg)
    assert [op.name for op in acc] == ["load", "load", "load", "store"]
    assert None not in proof
    assert O.check("stencil5", mem, cfg) == (4, 4, [])


# --- what must not be proved --------------------------------------------------------------


@pytest.fixture(scope="module")
def dispatches():
    return clang_dispatches()


def _named(dispatches, prefix):
    got = [(m, c) for n, m, c in dispatches if n.startswith(prefix + ":")]
    assert got, prefix
    return got


@pytest.mark.parametrize(
    "prefix, why",
    [
        ("gfx1030/basic-O2-w32-flat:divergent_loop", "loop"),
        ("gfx1030/basic-O2-w64-mubuf:divergent_loop", "loop"),
        ("gfx1030/basic-O0-w32-flat:vadd", "scratch"),  # (every -O0 pointer goes through scratch)
        ("gfx1030/math-O2-w32-flat:private_bytes", "scratch"),  # (its global accesses proved)
        ("gfx1030/stack-O2-w32-flat:call", "setpc"),
        ("gfx1030/math-O2-w32-flat:int64_math", "global_access"),  # (a grid-stride pointer)
    ],
)
def test_fixtures_that_are_not_proved(dispatches, prefix, why):
    for mem, cfg in _named(dispatches, prefix):
        assert _why(mem, cfg) == why


def test_an_access_that_can_leave_its_window_is_not_proved():
    # a grid past the buffers with vadd's bounds test at n: proved (the test holds the lanes
    # past n); n past the buffers: not, and NumPy indeed does not land it
    mem, cfg = _vadd(1000, grid=2048)
    assert _why(mem, cfg) is None
    assert _numpy(mem, cfg).refusal is None
    mem, cfg = _vadd(1000, grid=1 << 16, count=1 << 16)
    assert _why(mem, cfg) == "global_access"
    r = _numpy(mem, cfg)
    assert r.refusal is not None or r.escapes


def test_a_float_program_under_a_rounding_mode_is_not_proved():
    mem, cfg = _vadd(64)
    cfg = dataclasses.replace(cfg, rsrc1=cfg.rsrc1 | (1 << 12))  # MODE.FP_ROUND = 1
    assert cfg.float_mode & 15
    assert _why(mem, cfg) == "rounding"


def test_budget_and_wave64_group_size():
    mem, cfg = _vadd(64)
    assert _why(mem, cfg, budget=1 << 20) is None
    assert _why(mem, cfg, budget=3) == "budget"  # (vadd's path is longer than 3 instructions)
    r = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", budget=3)
    assert r.refusal is not None and r.refusal.code == "dispatch.budget_exceeded"
    big = dataclasses.replace(cfg, wave_size=64, block=(1024, 1, 1))
    assert _why(mem, big) == "wave64_waves"  # (16 waves: the CUDA backend's limit is 15)


def test_a_reachable_refuse_if_is_not_proved():
    mem, cfg = _vadd(64)
    program, _ = program_for(mem, cfg)
    from wavelift.backends.cuda import codegen as G
    from wavelift.trace.tracer import trace
    from wavelift.trace.windows import WindowSet

    low = G.lowered(program, cfg.wave_size, G.baked_params(cfg))
    win = WindowSet(trace(mem, cfg, scratch_roots=program.scratch.tracer_skip), mem)
    try:
        assert GR.unrefusable(low, cfg, win) is None
        low = copy.deepcopy(low)  # (the frontends' own program where the passes are off)
        f = Value(1 << 30, "b1", True)
        b0 = low.blocks[0]
        b0.ops[:0] = [
            Op("const", "b1", (), {"value": False}, f, b0.instrs[0]),
            Op("refuse_if", "b1", (f,), {"why": "test", "code": "test.refusal"}, None, b0.instrs[0]),
        ]
        assert GR.unrefusable(low, cfg, win) == "refuse_if"
    finally:
        win.release()


def _rig(src, nbuf=64, groups=1):
    """A wave32 program over two buffers: buf's address in s[0:1], out's in s[2:3], the
    workgroup id in s4; buf holds 0..nbuf-1."""
    sys.path.insert(0, str(ROOT / "tests" / "execute"))
    from asm import HAVE_MC
    from harness import Rig

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    r = Rig(src)
    buf = r.buf(np.arange(nbuf, dtype=np.uint32), "buf")
    out = r.buf(np.zeros(nbuf, np.uint32), "out")
    cfg = r.config(
        user_sgprs=[buf & 0xFFFFFFFF, buf >> 32, out & 0xFFFFFFFF, out >> 32], groups=(groups, 1, 1)
    )
    return r.mem, cfg


STORE = """
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v1, s6
    v_mov_b32 v2, 0
    global_store_dword v2, v1, s[{to}]
    s_endpgm
"""


def test_a_store_into_a_preloaded_or_mirrored_word_is_not_proved():
    # a uniform load at a dispatch constant (buf's first word: a preload), stored to out (proved)
    # or back to buf's first word (the word the host preloaded: a rerun without preloads)
    preload = "s_load_dword s6, s[0:1], 0x0\n" + STORE
    mem, cfg = _rig(preload.format(to="2:3"))
    assert _why(mem, cfg) is None
    assert _numpy(mem, cfg).refusal is None
    mem, cfg = _rig(preload.format(to="0:1"))
    assert _why(mem, cfg) == "store_preloaded"
    # a uniform load at buf + 4 x the group id (not a preload: a system SGPR), proved inside buf:
    # a mirror may copy buf, so a store there means a rerun without mirrors
    mirror = "s_lshl_b32 s7, s4, 2\ns_load_dword s6, s[0:1], s7\n" + STORE
    mem, cfg = _rig(mirror.format(to="2:3"), groups=4)
    assert _why(mem, cfg) is None
    mem, cfg = _rig(mirror.format(to="0:1"), groups=4)
    assert _why(mem, cfg) == "store_mirrored"


CLAMP = """
    v_mov_b32 v9, 0x4000
    v_cmp_gt_u32 vcc_lo, 16, v0
    s_and_saveexec_b32 s10, vcc_lo
    v_add_nc_u32 v9, -2, v0
    {before}
    v_cmp_lt_i32 vcc_lo, 1, v0
    v_cndmask_b32 v1, 0, v9, vcc_lo
    v_lshlrev_b32 v1, 2, v1
    global_load_dword v2, v1, s[0:1]
    {after}
    v_lshlrev_b32 v3, 2, v0
    s_waitcnt vmcnt(0)
    global_store_dword v3, v2, s[2:3]
    s_endpgm
"""


def test_a_select_follows_a_vgpr_copy_only_in_the_lanes_that_made_it():
    # v9 = 0x4000 in every lane, then v0 - 2 in lanes 0..15; the load reads buf[v0 > 1 ? v9 : 0]
    # (stencil5's clamp): under the same EXEC the arm is v0 - 2 with v0 > 1, inside buf --
    # proved, and it lands; with EXEC restored first, lanes 16..31 read buf[0x4000] -- not
    # proved, and NumPy indeed records escapes
    restore = "s_or_b32 exec_lo, exec_lo, s10"
    mem, cfg = _rig(CLAMP.format(before="", after=restore))
    assert _why(mem, cfg) is None
    r = _numpy(mem, cfg)
    assert r.refusal is None and not r.escapes
    mem, cfg = _rig(CLAMP.format(before=restore, after=""))
    assert _why(mem, cfg) == "global_access"
    r = _numpy(mem, cfg)
    assert r.refusal is not None or r.escapes


LOOP = """
    s_mov_b32 s8, {start}
  loop:
    s_add_u32 s8, s8, {step}
    s_cmp_lt_u32 s8, {bound}
    s_cbranch_scc1 loop
    v_mov_b32 v1, s8
    v_mov_b32 v2, 0
    global_store_dword v2, v1, s[2:3]
    s_endpgm
"""


def test_a_uniform_loop_is_bounded_by_its_trip_count():
    # s8 = 0, 10 times s8 += 1 while s8 < 10: 1 + 10 x 3 + 4 instructions, as NumPy counts them
    mem, cfg = _rig(LOOP.format(start=0, step=1, bound=10))
    most: list = []
    assert _why(mem, cfg, longest=most) is None
    assert most == [35]
    assert _numpy(mem, cfg, budget=35).refusal is None
    assert _why(mem, cfg, budget=34) == "budget"
    assert _numpy(mem, cfg, budget=34).refusal.code == "dispatch.budget_exceeded"
    # counting down: s8 = 100, s8 -= 7 while s8 >= 10 (a negative step): 13 rounds (100 - 7 x 13
    # = 9); with s8 >= 3 a value 3..6 that goes on would wrap, so no bound is claimed
    down = LOOP.replace("s_cmp_lt_u32", "s_cmp_ge_u32")
    mem, cfg = _rig(down.format(start=100, step="-7", bound=10))
    most = []
    assert _why(mem, cfg, longest=most) is None
    assert most == [1 + 13 * 3 + 4]
    assert _numpy(mem, cfg, budget=most[0]).refusal is None
    assert _numpy(mem, cfg, budget=most[0] - 1).refusal.code == "dispatch.budget_exceeded"
    mem, cfg = _rig(down.format(start=100, step="-7", bound=3))
    assert _why(mem, cfg) == "loop"


def test_a_loop_that_could_wrap_or_has_no_bound_is_not_proved():
    # s8 += 256 while s8 < 0xfffffff0: a value that goes on may pass 2^32 (wrap-around), so no
    # trip count is claimed; NumPy runs it past any budget (2^24 rounds)
    mem, cfg = _rig(LOOP.format(start=0, step=256, bound="0xfffffff0"))
    assert _why(mem, cfg) == "loop"
    assert _numpy(mem, cfg).refusal.code == "dispatch.budget_exceeded"
    # the bound a word read from memory per lane and made uniform (v_readfirstlane: not followed)
    mem, cfg = _rig(
        "global_load_dword v3, v0, s[0:1]\ns_waitcnt vmcnt(0)\nv_readfirstlane_b32 s9, v3\n"
        + LOOP.format(start=0, step=1, bound="s9")
    )
    assert _why(mem, cfg) == "loop"


LANES = """
    v_mov_b32 v1, 10
    s_mov_b32 s11, 0
  loop:
    v_cmp_eq_u32 vcc_lo, 0, v1
    v_add_nc_u32 v1, -1, v1
    s_or_b32 s11, vcc_lo, s11
    s_andn2_b32 exec_lo, exec_lo, s11
    s_cbranch_execnz loop
    s_or_b32 exec_lo, exec_lo, s11
    v_mov_b32 v2, 0
    global_store_dword v2, v1, s[2:3]
    s_endpgm
"""


def test_a_loop_that_counts_to_its_bound_is_bounded(dispatches):
    # private_array (-O2): `s2 -= 1` until s2 == 0 (s_cmp_eq_u32, s_cbranch_scc0); the path it
    # claims is the one NumPy counts (it lands with that budget, not with one less); its scratch
    # array is what stops it
    for mem, cfg in _named(dispatches, "gfx1030/basic-O2-w32-flat:private_array"):
        most: list = []
        assert _why(mem, cfg, longest=most) == "scratch"
        assert _numpy(mem, cfg, budget=most[0]).refusal is None
        assert _numpy(mem, cfg, budget=most[0] - 1).refusal.code == "dispatch.budget_exceeded"
    ne = LOOP.replace("s_cmp_lt_u32", "s_cmp_lg_u32")
    mem, cfg = _rig(ne.format(start=10, step=-1, bound=0))
    most = []
    assert _why(mem, cfg, longest=most) is None
    assert most == [1 + 10 * 3 + 4]
    assert _numpy(mem, cfg, budget=most[0]).refusal is None
    assert _numpy(mem, cfg, budget=most[0] - 1).refusal.code == "dispatch.budget_exceeded"
    # a wave32 lane loop testing the value before its step: v1 = 10 .. 0, 11 rounds
    mem, cfg = _rig(LANES)
    most = []
    assert _why(mem, cfg, longest=most) is None
    assert most == [2 + 11 * 5 + 4]
    assert _numpy(mem, cfg, budget=most[0]).refusal is None
    assert _numpy(mem, cfg, budget=most[0] - 1).refusal.code == "dispatch.budget_exceeded"
    # from 0 down it wraps first (2^32 rounds); by 2 from 11 it steps over 0: no count claimed,
    # and NumPy indeed runs past its budget
    for start, step in ((0, -1), (11, -2)):
        mem, cfg = _rig(ne.format(start=start, step=step, bound=0))
        assert _why(mem, cfg) == "loop"
        assert _numpy(mem, cfg).refusal.code == "dispatch.budget_exceeded"
    # a bound that changes from round to round ([4, 5]: s9 ^= 1) may never be met
    moving = ne.format(start=10, step=-1, bound="s9").replace(
        "  loop:\n", "    s_mov_b32 s9, 5\n  loop:\n    s_xor_b32 s9, s9, 1\n"
    )
    mem, cfg = _rig(moving)
    assert _why(mem, cfg) == "loop"
    assert _numpy(mem, cfg).refusal.code == "dispatch.budget_exceeded"


# --- soundness ------------------------------------------------------------------------------

# the gfx1030 -O2 kernels whose every global access is proved (0049 h110's coverage), with no
# loop, scratch or s_setpc in their source: each must be proved in all four builds
PROVED = {"vadd", "lds_reduce", "double_math", "lane_ops"}


def test_every_proved_fixture_dispatch_lands_on_numpy(dispatches):
    got = set()
    for name, mem, cfg in dispatches:
        if not name.startswith("gfx1030/") or "-O2-" not in name:
            continue
        most: list = []
        if _why(mem, cfg, longest=most) is not None:
            continue
        got.add(name.split(":")[1])
        # (lands within the path count the proof claims: a loop's bound is no undercount)
        r = _numpy(mem, cfg, budget=most[0])
        assert r.refusal is None and not r.escapes, (name, r.refusal, r.escapes)
    assert got >= PROVED, got
