"""A final refusal (errors.FINAL) is the dispatch's result at once: execute runs it no other way
(decision 0049, amendment h133).  Not a tiers test: the backend's run is a stand-in."""

import numpy as np
import pytest
from test_shallow_trace import chase_rig


@pytest.mark.parametrize("code, runs", [("backend.proof", 1), ("backend.bad_report", 2)])
def test_a_final_refusal_is_not_run_again_on_the_deeper_trace(monkeypatch, code, runs):
    """A refusal whose code is final (errors.FINAL: its run broke what another would run on) is
    the dispatch's result at once, where any other refusal of the shallow run is tried again on
    the deeper windows (here they differ: the chase's data lies at depth 2)."""
    from wavelift.backends.numpy import BACKEND
    from wavelift.errors import Refused

    r, _, out, cfg = chase_rig()
    calls = []

    def run(*a, **k):
        calls.append(a[2])
        raise Refused(code, "the stand-in run's refusal")

    monkeypatch.setattr(BACKEND, "run", run)
    before = r.read(out, np.uint32, 32)
    res = r.run(cfg, cache={})  # (a program of its own: not one an earlier test made deep)
    assert res.refusal is not None and res.refusal.code == code
    assert len(calls) == runs
    assert ("deep_trace" in res.stats) == (runs == 2)
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), before)
