"""Dispatch statistics: lane_instructions counts the active lanes of every executed vector
instruction exactly, also when EXEC changes inside a basic block."""

import pytest
from harness import Rig

# one basic block; EXEC changes twice inside it (v_cmpx, s_mov exec_lo)
PROG = """
  v_mov_b32 v1, 0
  v_cmpx_gt_u32_e32 10, v0
  v_mov_b32 v2, 1
  s_mov_b32 exec_lo, 3
  v_mov_b32 v3, 2
  v_add_nc_u32 v3, v3, v2
  s_endpgm
"""


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_lane_instructions_exact(mode):
    r = Rig(PROG)
    res = r.run(r.config(groups=(3, 1, 1), block=(32, 1, 1)), mode=mode)
    assert res.landed, res.refusal
    # v_mov (32) + v_cmpx (runs under the old EXEC: 32) + v_mov (10) + 2 x 2 lanes
    assert res.stats["lane_instructions"] == 3 * (32 + 32 + 10 + 2 + 2)
    assert res.stats["instructions"] == 3 * 7
    assert res.stats["waves"] == 3


def test_lane_instructions_partial_wave():
    r = Rig(PROG)
    res = r.run(r.config(groups=(1, 1, 1), block=(20, 1, 1)))
    assert res.landed, res.refusal
    assert res.stats["lane_instructions"] == 20 + 20 + 10 + 2 + 2
