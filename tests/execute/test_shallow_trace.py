"""Decision 0048: execute_dispatch traces windows to depth 1 first (the user SGPRs' targets and
the buffers their heads point to), and again to MAX_DEPTH only where that run escaped or was
refused.  Oracles: NumPy references of what the programs compute, and the full trace's windows
(tracer.trace_uncached)."""

import numpy as np
import pytest
from harness import Rig, ptr
from test_basic import vadd_rig

from wavelift.trace import tracer

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

# out[i] = *(table[0]) [i]: the buffer read is reached through a pointer held in a buffer
# (kernarg -> table -> data: depth 2)
CHASE = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_load_dwordx2 s[8:9], s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 2, v0
  global_load_dword v2, v1, s[8:9]
  s_waitcnt vmcnt(0)
  global_store_dword v1, v2, s[6:7]
  s_endpgm
"""


def chase_rig():
    r = Rig(CHASE)
    data = np.arange(32, dtype=np.uint32) * 7 + 3
    pd = r.buf(data, "data")
    table = r.buf(np.array([pd], np.uint64), "table")
    out = r.buf(np.zeros(32, np.uint32), "out")
    args = r.buf(np.array([table, out], np.uint64), "kernarg")
    return r, data, out, r.config(user_sgprs=ptr(args), tgid=(False, False, False))


def test_a_buffer_reached_through_a_pointer_in_a_buffer_lands_after_one_deep_run():
    r, data, out, cfg = chase_rig()
    cache: dict = {}
    first = r.run(cfg, cache=cache)
    assert first.landed, first.refusal
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), data)
    assert first.stats.get("deep_trace") is True  # (the shallow run escaped at the data read)
    assert first.escapes == []  # (the escapes reported are the deep run's: none)
    assert first.windows == tracer.trace_uncached(r.mem, cfg)
    # the program now goes deep at once: no second run
    r.mem.write(out, np.zeros(32, np.uint32).tobytes())
    again = r.run(cfg, cache=cache)
    assert again.landed and "deep_trace" not in again.stats
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), data)


def test_a_program_that_reaches_only_its_buffers_gets_the_shallow_windows():
    """vadd's buffer a holds a pointer to another allocation at its head: the full trace makes
    that allocation a window (depth 2), the shallow one does not, and vadd lands the same."""
    n = 64
    r, a, b, pc, cfg = vadd_rig(n, 1)
    extra = r.buf(np.zeros(16, np.uint32), "extra")
    pa = min(w.address for w in tracer.trace_uncached(r.mem, cfg) if w.name == "a")
    r.mem.write(pa, np.array([extra], np.uint64).tobytes())
    a = r.read(pa, np.float32, n)
    full = tracer.trace_uncached(r.mem, cfg)
    assert "extra" in {w.name for w in full}
    res = r.run(cfg)
    assert res.landed, res.refusal
    assert {w.name for w in res.windows} == {"a", "b", "c", "kernarg"}
    assert res.windows == tracer.trace_uncached(r.mem, cfg, depth=tracer.SHALLOW_DEPTH)
    assert "deep_trace" not in res.stats
    np.testing.assert_array_equal(r.read(pc, np.float32, n), a + b)


def test_an_escape_is_refused_as_under_the_full_trace():
    """The pointer in the table points past every allocation: the shallow run escapes, the full
    trace places the same windows (nothing deeper exists), so the refusal is the shallow run's --
    the one the full trace gives, and nothing lands."""
    r, data, out, cfg = chase_rig()
    table = min(w.address for w in tracer.trace_uncached(r.mem, cfg) if w.name == "table")
    r.mem.write(table, np.array([0x7000_0000_0000], np.uint64).tobytes())
    before = r.read(out, np.uint32, 32)
    res = r.run(cfg)
    assert res.refusal is not None and res.refusal.code == "escape"
    assert res.stats["escapes"] == 32
    assert "deep_trace" not in res.stats  # (the full trace's windows are the same)
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), before)
