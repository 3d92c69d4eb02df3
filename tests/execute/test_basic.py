"""End-to-end execution of llvm-mc-assembled programs on hand-built memory."""

import numpy as np
import pytest
from harness import Rig, ptr

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

VADD = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  s_load_dword s10, s[0:1], 0x18
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s11, s2, 6
  v_add_nc_u32 v0, s11, v0
  v_cmp_gt_u32_e32 vcc_lo, s10, v0
  s_and_saveexec_b32 s12, vcc_lo
  s_cbranch_execz .Lend
  v_lshlrev_b32 v1, 2, v0
  global_load_dword v2, v1, s[4:5]
  global_load_dword v3, v1, s[6:7]
  s_waitcnt vmcnt(0)
  v_add_f32 v2, v2, v3
  global_store_dword v1, v2, s[8:9]
.Lend:
  s_endpgm
"""


def vadd_rig(n, groups):
    r = Rig(VADD)
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    b = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    pa, pb = r.buf(a, "a"), r.buf(b, "b")
    pc = r.buf(np.full(groups * 64, -1, np.float32), "c")
    args = r.buf(np.array([pa, pb, pc, n], np.uint64).view(np.uint32)[:7].copy(), "kernarg")
    cfg = r.config(user_sgprs=ptr(args), groups=(groups, 1, 1), block=(64, 1, 1))
    return r, a, b, pc, cfg


def test_vadd():
    n = 1000
    r, a, b, pc, cfg = vadd_rig(n, 16)
    res = r.run(cfg)
    assert res.landed, res.refusal
    c = r.read(pc, np.float32, 16 * 64)
    np.testing.assert_array_equal(c[:n], a + b)
    assert (c[n:] == -1).all()  # lanes beyond n store nothing
    assert res.stats["waves"] == 32
    assert res.write_spans == [(pc, 4 * n)]
    assert res.stats["bytes_written"] == 4 * n
    assert {w.name for w in res.windows} >= {"a", "b", "c", "kernarg"}


def test_module_cache_hit():
    r, a, b, pc, cfg = vadd_rig(100, 2)
    cache = {}
    assert not r.run(cfg, cache=cache).stats["module_cache_hit"]
    assert r.run(cfg, cache=cache).stats["module_cache_hit"]
    assert not r.run(cfg, cache=cache, mode="lane").stats["module_cache_hit"]
