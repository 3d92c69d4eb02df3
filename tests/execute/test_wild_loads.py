"""Wide loads from wild addresses when few or no windows exist: every lane's access escapes,
reads zero and the dispatch is refused `escape` -- never an IndexError from the arena (a dwordx4
or dwordx8 read at the arena's dummy index must stay inside it)."""

import numpy as np
import pytest
from harness import Rig, ptr

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

WILD = 0x7F0012345678


@pytest.mark.parametrize(
    "load, regs",
    [("s_load_dwordx4", "s[4:7]"), ("s_load_dwordx8", "s[4:11]"), ("s_load_dwordx16", "s[4:19]")],
)
@pytest.mark.parametrize("with_buffer", [False, True])
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_wide_scalar_load_from_wild_pointer_escapes(load, regs, with_buffer, mode):
    src = f"""
        {load} {regs}, s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        s_endpgm
    """
    r = Rig(src)
    user = ptr(WILD)
    if with_buffer:  # one tiny window elsewhere: the arena is still small
        r.buf(np.zeros(1, np.uint32), name="tiny")
    before = bytes(r.mem.read(r.prog, 16))
    res = r.run(r.config(user_sgprs=user), mode=mode)
    assert res.refusal is not None and res.refusal.code == "escape", res.refusal
    assert res.escapes and res.escapes[0].address == WILD and res.escapes[0].kind == "load"
    assert bytes(r.mem.read(r.prog, 16)) == before


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_wide_vector_load_from_wild_pointer_escapes(mode):
    src = """
        v_mov_b32 v1, s0
        v_mov_b32 v2, s1
        global_load_dwordx4 v[4:7], v[1:2], off
        s_waitcnt vmcnt(0)
        s_endpgm
    """
    r = Rig(src)
    res = r.run(r.config(user_sgprs=ptr(WILD)), mode=mode)
    assert res.refusal is not None and res.refusal.code == "escape", res.refusal
    assert res.stats["escapes"] == 32
    # the escape names the instruction by its byte offset from the program address
    e = res.escapes[0]
    assert (e.pc, e.instruction.split()[0], e.lane) == (8, "global_load_dwordx4", 0)
