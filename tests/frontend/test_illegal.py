"""v_illegal (the zero dword, as LLVM 19 decodes it) refuses the dispatch by name wherever the
program's flow reaches it, as every instruction wavelift does not translate does."""

import numpy as np
from harness import Rig, ptr


def test_v_illegal_refuses_and_lands_nothing():
    r = Rig("""
      v_mov_b32 v1, 5
      v_lshlrev_b32 v2, 2, v0
      global_store_dword v2, v1, s[0:1]
      v_illegal
      s_endpgm
    """)
    assert r.code[16:20] == b"\0" * 4  # v_illegal: the zero dword
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=list(ptr(out)), tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction"
    assert "v_illegal" in res.refusal.message
    assert (r.read(out, np.uint32, 32) == 7).all()
