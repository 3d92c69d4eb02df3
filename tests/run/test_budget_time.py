"""Bounded time, deterministically (issue 19 item 7, docs/decisions/0015-bounded-work.md): the
default instruction budget is sized from the program and the grid, so a spinning program is
refused in seconds by counted instructions on every tier; an optional wall-clock limit."""

import time

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.dispatch.setup import MAX_GRID_WAVES
from wavelift.run import execute as E

SPIN = ".Ltop:\n  s_branch .Ltop\n  s_endpgm"  # one-instruction blocks
SPIN_SETPC = "  s_getpc_b64 s[6:7]\n.Ltop:\n  s_add_u32 s5, s5, 1\n  s_setpc_b64 s[6:7]\n  s_endpgm"
# stores its lane id, then spins: a refused dispatch lands nothing
STORE_SPIN = """
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v0, s[2:3]
.Ltop:
  v_add_nc_u32 v5, 1, v5
  s_branch .Ltop
  s_endpgm
"""
FEW_SECONDS = 20  # (a shared, loaded CI host; the old default took ~47 minutes)


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("src", [SPIN, SPIN_SETPC], ids=["branch", "setpc"])
def test_spinning_program_refused_in_seconds_by_default(tier, src):
    """Every tier, one-instruction blocks and s_setpc loops (the slowest steps)."""
    r = Rig(src)
    cfg = r.config(groups=(2, 1, 1))
    t = time.perf_counter()
    res = r.run(cfg)
    dt = time.perf_counter() - t
    assert res.refusal is not None and res.refusal.code == "dispatch.budget_exceeded", res.refusal
    assert res.stats["budget"] == E.BUDGET_MIN
    assert dt < FEW_SECONDS, f"{tier}: {dt:.1f} s"


def test_default_budget_sized_from_program_and_grid():
    r = Rig(SPIN)
    prog, _ = E.program_for(r.mem, r.config())
    small = E.default_budget(prog, r.config())
    assert small == E.BUDGET_MIN  # a small program: the floor
    big = type("P", (), {"instructions": [None] * 1500})()
    assert E.default_budget(big, r.config()) == 1500 * E.BUDGET_PER_INSTRUCTION
    huge = type("P", (), {"instructions": [None] * 100_000})()
    assert E.default_budget(huge, r.config()) == E.BUDGET_MAX
    # a large grid shares BUDGET_DISPATCH: waves x budget stays bounded
    wide = r.config(groups=(1 << 20, 1, 1), block=(32, 1, 1))
    assert E.default_budget(big, wide) == E.BUDGET_DISPATCH >> 20
    widest = r.config(groups=(MAX_GRID_WAVES, 1, 1), block=(32, 1, 1))
    assert E.default_budget(huge, widest) == E.BUDGET_WAVE_FLOOR
    assert MAX_GRID_WAVES * E.BUDGET_WAVE_FLOOR <= 1 << 32


def test_spin_refused_in_seconds_the_same_way_on_numpy_and_native(monkeypatch):
    """The default budget stops a spinning program in seconds on NumPy blocks and on the native
    tier (the old one, 5e7 instructions a wave, took ~47 minutes on NumPy blocks), with the same
    refusal and budget on both -- counted instructions, not time; nothing lands."""
    from wavelift.backends import host
    from wavelift.backends.numpy import runtime

    r = Rig(STORE_SPIN)
    out = r.buf(np.zeros(32, np.uint32), "out")
    args = r.buf(np.array([out], np.uint64).view(np.uint32), "args")
    got = []
    for native in ("off", "on") if host.compiler() else ("off",):
        monkeypatch.setattr(runtime, "NATIVE", native)
        t = time.perf_counter()
        res = r.run(r.config(user_sgprs=ptr(args)))
        dt = time.perf_counter() - t
        assert dt < FEW_SECONDS, f"native {native}: {dt:.1f} s"
        got.append((res.refusal.code, res.stats["budget"]))
        assert (r.read(out, np.uint32, 32) == 0).all()
    assert got[0] == ("dispatch.budget_exceeded", E.BUDGET_MIN) and len(set(got)) == 1


def test_grid_limit_on_hand_made_configs():
    r = Rig("  s_endpgm")
    res = r.run(r.config(groups=(MAX_GRID_WAVES + 1, 1, 1), block=(1, 1, 1)))
    assert res.refusal is not None and res.refusal.code == "dispatch.grid_too_large"


@pytest.mark.tiers
def test_time_limit_stops_every_tier(tier):
    """With a budget too large to matter, the optional wall-clock limit stops the dispatch:
    NumPy blocks, the native driver and native blocks under the scheduler; nothing lands."""
    r = Rig(STORE_SPIN)
    out = r.buf(np.zeros(32, np.uint32), "out")
    args = r.buf(np.array([out], np.uint64).view(np.uint32), "args")
    r.run(r.config(user_sgprs=ptr(args)), budget=100)  # (compiled outside the clock)
    t = time.perf_counter()
    res = r.run(r.config(user_sgprs=ptr(args)), budget=1 << 40, time_limit=0.5)
    dt = time.perf_counter() - t
    assert res.refusal is not None and res.refusal.code == "dispatch.time_exceeded", res.refusal
    assert dt < 5, dt
    assert (r.read(out, np.uint32, 32) == 0).all()


def test_time_limit_from_the_environment(monkeypatch):
    r = Rig(SPIN_SETPC)
    monkeypatch.setenv("WAVELIFT_TIME_LIMIT", "0.2")
    res = r.run(r.config(), budget=1 << 40)
    assert res.refusal is not None and res.refusal.code == "dispatch.time_exceeded"
    for off in ("", "0"):
        monkeypatch.setenv("WAVELIFT_TIME_LIMIT", off)
        assert E.time_limit_from_env() is None
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("WAVELIFT_TIME_LIMIT", bad)
        with pytest.raises(ValueError):
            E.time_limit_from_env()


def test_time_limit_is_off_by_default(monkeypatch):
    monkeypatch.delenv("WAVELIFT_TIME_LIMIT", raising=False)
    r = Rig("  s_endpgm")
    res = r.run(r.config())
    assert res.refusal is None and E.time_limit_from_env() is None


def test_replay_time_limit_covers_the_whole_replay():
    """replay(time_limit=) bounds the replay, not each dispatch: three spinning dispatches
    under a 0.5 s limit end in about 0.5 s, each refused dispatch.time_exceeded."""
    from asm import assemble

    from wavelift import Capture, pm4, replay

    cap = Capture(target="gfx1030")
    code = assemble(SPIN_SETPC, False)
    addr = cap.alloc(len(code) + 256, data=code + b"\0" * 256, name="code", align=256)
    cap.submit(
        pm4.set_sh_regs(
            {
                "COMPUTE_PGM_LO": addr >> 8,
                "COMPUTE_PGM_HI": addr >> 40,
                "COMPUTE_PGM_RSRC1": 0xF0 << 12,
                "COMPUTE_NUM_THREAD_X": 32,
                "COMPUTE_NUM_THREAD_Y": 1,
                "COMPUTE_NUM_THREAD_Z": 1,
            }
        )
        + pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True)) * 3
    )
    replay(cap, time_limit=0.01)  # (translated outside the clock)
    t = time.perf_counter()
    res = replay(cap, time_limit=0.5)
    dt = time.perf_counter() - t
    assert [r.refusal.code for r in res] == ["dispatch.time_exceeded"] * 3, res
    assert dt < 3, dt


@pytest.mark.slow
def test_mutated_user_data_of_a_real_radv_shader_refused_in_seconds():
    """scratch_game's step count is a push constant inlined as USER_DATA_4 (25); set to 2^32-1
    by one mutated dword, its loop ran into the old budget after ~47 minutes on NumPy blocks."""
    from testpaths import FIXTURES, set_sh_register

    from wavelift import Capture, replay

    cap = Capture.load(str(FIXTURES / "captures" / "radv-scratch_game-chained-w64.wlcap"))
    # (the packet is in the chained IB)
    assert set_sh_register(cap, "COMPUTE_USER_DATA_4", 0xFFFFFFFF, only_if=25) == 1
    t = time.perf_counter()
    (res,) = replay(cap)
    dt = time.perf_counter() - t
    assert res.refusal is not None and res.refusal.code == "dispatch.budget_exceeded", res.refusal
    assert dt < FEW_SECONDS, dt
