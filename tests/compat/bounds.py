"""How close a tinygrad kernel's result run by wavelift must be to tinygrad's CPU device's
(docs/tinygrad.md, "Bounds").

Integer results, and float results that only move or select values (gather, where, sort, a
half-precision multiply-add whose every rounding is the same single rounding on both devices),
must be bit-exact.  Float results that round differently on the GPU and the CPU are held to a
forward-error bound:

    |wavelift - cpu| <= K * eps(dtype) * M

where M is the op's magnitude, computed in float64 from the inputs (for a sum: the sum of the
absolute values of its terms, the classic bound for summation in another order or with fused
multiply-adds; for a function: the size of its value and, where the argument is reduced first,
of its argument), and K the number of roundings allowed for.  The GPU kernels differ from the CPU
ones by FMA contraction, summation order, and the hardware's approximate v_exp_f32, v_log_f32,
v_rcp_f32, v_rsq_f32 and v_sqrt_f32 (1 ulp) where the CPU calls libm or divides exactly.
"""

from __future__ import annotations

import numpy as np

EXACT = {
    "gather",
    "where_arange",
    "sort",
    "half_mul_add",
    "reduce_int",
    "int64_arith",
    "int32_div_mod",
}


def _conv_abs(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """conv2d(|x|, |w|), stride 1, padding 1 (NCHW, OIHW), in float64."""
    x, w = np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, o, h, wd))
    for di in range(kh):
        for dj in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, di : di + h, dj : dj + wd], w[:, :, di, dj])
    return out


def _f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def base_op(op: str) -> str:
    """A bench fixture's op ("matmul_96") as the test fixtures name it ("matmul")."""
    return op if op in EXACT or op in FLOAT_OPS else op.rsplit("_", 1)[0]


FLOAT_OPS = {
    "matmul",
    "half_matmul",
    "conv2d",
    "reduce_sum_max",
    "cumsum",
    "softmax",
    "exp_log",
    "sin_cos",
    "sqrt_rsqrt_tanh",
    "sigmoid_gelu",
}


def magnitude(op: str, ins: list[np.ndarray]) -> tuple[float, np.ndarray]:
    """(K, M) of a float op (module docstring)."""
    op = base_op(op)
    a = _f64(ins[0])
    if op == "matmul":
        return a.shape[1], np.abs(a) @ np.abs(_f64(ins[1]))
    if op == "half_matmul":
        return a.shape[1], np.abs(a) @ np.abs(_f64(ins[1]))
    if op == "conv2d":
        return ins[1][0].size, _conv_abs(ins[0], ins[1])
    if op == "reduce_sum_max":
        return a.shape[1] + 1, np.abs(a).sum(axis=1) + np.abs(a.max(axis=1))
    if op == "cumsum":
        return a.size, np.cumsum(np.abs(a))
    if op == "softmax":  # exp per element, a sum of a row, a division: values in [0, 1]
        return 2 * a.shape[1], np.ones_like(a)
    if op == "exp_log":
        return 4, np.exp(a) + np.abs(np.log(np.abs(a) + 0.5)) + 1
    if op == "sin_cos":  # argument reduction: an error relative to |a|
        return 8, 1 + np.abs(a)
    if op == "sqrt_rsqrt_tanh":
        return 4, np.sqrt(a) + 1 / np.sqrt(a) + 1
    if op == "sigmoid_gelu":
        return 8, 1 + np.abs(a)
    raise KeyError(op)


def check(op: str, got: np.ndarray, expected: np.ndarray, ins: list[np.ndarray]) -> str | None:
    """None when ``got`` is within the op's bound of ``expected``, else what is wrong."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return f"shape/dtype {got.shape} {got.dtype} != {expected.shape} {expected.dtype}"
    if base_op(op) in EXACT or expected.dtype.kind in "iub":
        bad = np.flatnonzero(got.view(np.uint8) != expected.view(np.uint8))
        if bad.size:
            return f"{bad.size} byte(s) differ, first at byte {bad[0]}"
        return None
    k, m = magnitude(op, ins)
    eps = float(np.finfo(expected.dtype).eps)
    bound = k * eps * np.broadcast_to(m, expected.shape)
    err = np.abs(_f64(got) - _f64(expected))
    bad = np.flatnonzero(~(err <= bound))  # (NaN fails)
    if bad.size:
        i = bad[0]
        return (
            f"{bad.size} element(s) out of bound; first #{i}: got {got.ravel()[i]!r}, "
            f"cpu {expected.ravel()[i]!r}, |diff| {err.ravel()[i]:.3g} > {bound.ravel()[i]:.3g}"
        )
    return None


def worst_ratio(op: str, got: np.ndarray, expected: np.ndarray, ins: list[np.ndarray]) -> float:
    """max |diff| / (eps * M): how many of the K roundings the result used (docs)."""
    if base_op(op) in EXACT or expected.dtype.kind in "iub":
        return 0.0
    _, m = magnitude(op, ins)
    eps = float(np.finfo(expected.dtype).eps)
    err = np.abs(_f64(got) - _f64(expected))
    return float(np.max(err / (eps * np.broadcast_to(m, expected.shape))))
