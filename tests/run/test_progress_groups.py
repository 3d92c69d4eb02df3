"""execute_dispatch's progress (issue 26 item 6): while a dispatch runs, "running: i of N
workgroups" after each batch of workgroups the NumPy runtime finishes (RunCounts.progress)."""

import numpy as np
from harness import Rig, ptr

from wavelift.backends.numpy import runtime


def test_running_reports_workgroups_done(monkeypatch):
    monkeypatch.setattr(runtime, "NATIVE", "off")
    monkeypatch.setattr(runtime, "BATCH_WAVES", 2)  # two one-wave workgroups per batch
    r = Rig(
        """
  v_lshlrev_b32 v1, 2, v0
  v_mov_b32 v2, s2
  global_store_dword v1, v2, s[0:1]
  s_endpgm
"""
    )
    out = r.buf(np.zeros(32, np.uint32), "out")
    seen = []
    res = r.run(r.config(user_sgprs=list(ptr(out)), groups=(5, 1, 1)), progress=seen.append)
    assert res.landed, res.refusal
    running = [s for s in seen if s.startswith("running")]
    assert running == [
        "running",
        "running: 2 of 5 workgroups",
        "running: 4 of 5 workgroups",
        "running: 5 of 5 workgroups",
    ]
    assert seen[-1] == "landing"
