"""preload.evaluate's memo (decision 0026: the host path per dispatch): a repeated dispatch gets
the kept result only while the bytes its loads read are the same; otherwise it evaluates again.
Oracle: the evaluation itself (preload._evaluate), run fresh on the same memory."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_cuda_backend import _vadd_dispatch, translate_dispatch  # noqa: E402

from wavelift.backends.cuda import preload  # noqa: E402
from wavelift.trace.tracer import trace  # noqa: E402
from wavelift.trace.windows import WindowSet  # noqa: E402


def _fresh(loads, plan, cfg, win):
    return preload._evaluate(loads, plan, cfg.user_sgprs, set(cfg.system_sgprs.values()), win, [])


def _same(a, b):
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y))
        for x, y in zip(a, b)
    )


@pytest.mark.parametrize("wave", [32, 64])
def test_memo_follows_the_bytes_read(wave, monkeypatch, calls):
    monkeypatch.setattr(preload, "_MEMO", {})
    mem, cfg, (a, b, c), n = _vadd_dispatch(wave)
    prog, _ = translate_dispatch(mem, cfg)
    loads, plan = preload.find(prog)
    win = WindowSet(trace(mem, cfg), mem)
    evaluated = calls(preload, "_evaluate")
    fixed = set(cfg.system_sgprs.values())
    first = preload.evaluate(loads, plan, prog, wave, cfg.user_sgprs, fixed, win)
    again = preload.evaluate(loads, plan, prog, wave, cfg.user_sgprs, fixed, win)
    assert len(evaluated) == 1  # (kept)
    assert _same(first[0], again[0]) and first[1] == again[1]
    # every word a load read, changed in turn (n, the pointers, the packet's sizes): evaluated
    # again, and equal to a fresh evaluation
    kernarg = {addr for addr, _ in preload._MEMO[next(iter(preload._MEMO))][1]}
    assert kernarg
    for addr in sorted(kernarg):
        old = mem.read(addr, 4)
        mem.write_u32(addr, int.from_bytes(old, "little") ^ 0x40)
        got = preload.evaluate(loads, plan, prog, wave, cfg.user_sgprs, fixed, win)
        want = _fresh(loads, plan, cfg, win)
        assert _same(got[0], want[0]) and got[1] == want[1]
        assert not _same(got[0], first[0]) or got[1] != first[1]
        mem.write(addr, old)
    n_evaluated = len(evaluated)
    # other user SGPRs: another key
    other = list(cfg.user_sgprs)
    other[0] ^= 0x100
    preload.evaluate(loads, plan, prog, wave, other, fixed, win)
    assert len(evaluated) == n_evaluated + 1
