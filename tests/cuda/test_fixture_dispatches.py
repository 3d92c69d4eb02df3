"""The fixture dispatches gpu_check compares between NumPy and CUDA must have one defined result:
waves that run in a different order (CUDA runs groups concurrently) must land the same bytes."""

import copy
import dataclasses
import itertools
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from fixture_dispatches import ONE_D, aco_dispatches  # noqa: E402

from wavelift.run.execute import execute_dispatch  # noqa: E402


def _landed(mem, cfg):
    r = execute_dispatch(mem, cfg, backend="numpy", mode="lane")
    assert r.refusal is None, r.refusal
    return [bytes(x.data) for x in mem]


@pytest.fixture(scope="module")
def one_d():
    return [d for d in aco_dispatches() if d[0].split("/")[-1].split("-")[0] in ONE_D]


def test_one_d_dispatches_do_not_depend_on_group_order(one_d):
    # int64_atomic on the (3, 2, 1) grid: groups (x, 0) and (x, 1) shared per-lane atomic cells,
    # so the returned old values depended on which wave came first (gpu_check saw CUDA differ)
    assert {n.split("/")[-1].split("-")[0] for n, _, _ in one_d} == ONE_D
    for name, mem, cfg in one_d:
        together = _landed(copy.deepcopy(mem), cfg)
        m = copy.deepcopy(mem)
        groups = list(itertools.product(*(range(s, e) for s, e in zip(cfg.group_start, cfg.group_end))))
        for g in reversed(groups):  # one group at a time, last group first
            _landed(m, dataclasses.replace(cfg, group_start=g, group_end=tuple(v + 1 for v in g)))
        assert [bytes(x.data) for x in m] == together, name
