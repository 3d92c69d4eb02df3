"""backends/numpy/atomics.apply: every lane's atomic in lane order, whatever the cells share —
checked against a plain one-lane-at-a-time loop over Python integers (the ISA's RMW of each
op), with cells shared by 1, a few and many (> atomics.ROUNDS) lanes."""

import numpy as np
import pytest

from wavelift.backends.numpy import atomics

OPS = ("add", "sub", "swap", "cmpswap", "and", "or", "xor", "umin", "umax", "smin", "smax", "inc", "dec")


def reference(mem, cells, op, d, c, bits):
    mask = (1 << bits) - 1

    def s(x):
        return x - (1 << bits) if x >> (bits - 1) else x

    mem = [int(x) for x in mem]
    olds = []
    for k, cell in enumerate(cells.tolist()):
        o, x = mem[cell], int(d[k])
        olds.append(o)
        mem[cell] = {
            "add": (o + x) & mask,
            "sub": (o - x) & mask,
            "swap": x,
            "cmpswap": x if c is not None and o == int(c[k]) else o,
            "and": o & x,
            "or": o | x,
            "xor": o ^ x,
            "umin": min(o, x),
            "umax": max(o, x),
            "smin": o if s(o) <= s(x) else x,
            "smax": o if s(o) >= s(x) else x,
            "inc": 0 if o >= x else o + 1,
            "dec": x if o == 0 or o > x else o - 1,
        }[op]
    return mem, olds


@pytest.mark.parametrize("t", [np.uint32, np.uint64])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", ["distinct", "few", "many", "one_cell"])
def test_apply_equals_lane_order(op, t, shape):
    rng = np.random.default_rng(hash((op, shape, t.__name__)) & 0xFFFF)
    bits = np.dtype(t).itemsize * 8
    n = 700
    cells = {
        "distinct": rng.permutation(n),
        "few": rng.integers(0, 200, n),  # 1-10 lanes a cell
        "many": rng.integers(0, 4, n),  # ~175 lanes a cell (> ROUNDS)
        "one_cell": np.full(n, 3),
    }[shape].astype(np.int64)
    assert shape != "many" or np.bincount(cells).max() > atomics.ROUNDS
    small = op in ("inc", "dec", "cmpswap")  # values that make the ops' cases meet
    hi = 8 if small else 1 << bits
    mem = rng.integers(0, hi, max(n, 8), dtype=np.uint64).astype(t)
    d = rng.integers(0, hi, n, dtype=np.uint64).astype(t)
    c = rng.integers(0, hi, n, dtype=np.uint64).astype(t) if op == "cmpswap" else None
    want_mem, want_old = reference(mem, cells, op, d, c, bits)
    view = mem.copy()
    old = atomics.apply(view, cells, op, d, c, t)
    assert [int(x) for x in old] == want_old
    assert [int(x) for x in view] == want_mem
