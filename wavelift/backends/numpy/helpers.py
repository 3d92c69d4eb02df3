"""Array helpers the generated NumPy code calls (``H``): the value ops' numeric semantics,
defined once in ir/numerics.py (the interpreter folds constants with the same functions), and
the lane ops over a group's [waves, lanes] arrays."""

from __future__ import annotations

import sys

import numpy as np

from ...ir.numerics import (  # noqa: F401 - re-exported: the generated code's H.<name>
    DNAN,
    DT,
    UINT,
    bitrev,
    clz,
    cos,
    ctz,
    cvt,
    exp2,
    fin,
    flush,
    fma,
    fmax,
    fmin,
    fnan,
    fout,
    fract,
    frexp_exp,
    frexp_mant,
    isclass,
    ldexp,
    log2,
    mulhi,
    nan_first,
    popcount,
    rcp,
    rsq,
    sin,
    sqrt,
    trig_preop,
    two_over_pi_bits,
)


# ---------------------------------------------------------------------------------- lane ops
def ballot(b, n, lanes):
    b = np.asarray(b)
    if b.dtype == np.bool_ and b.shape == (n, lanes) and b.flags.c_contiguous and _LITTLE:
        # one contiguous byte per lane: pack the flat array (rows stay byte aligned)
        packed = np.packbits(b.reshape(-1), bitorder="little")
        return packed.view(np.uint32 if lanes == 32 else np.uint64).astype(np.uint64).reshape(n, 1)
    b = np.broadcast_to(b, (n, lanes))
    packed = np.packbits(b, axis=1, bitorder="little")
    if lanes == 32:
        return packed.view("<u4").astype(np.uint64).reshape(n, 1)
    return packed.view("<u8").astype(np.uint64).reshape(n, 1)


_LITTLE = sys.byteorder == "little"
# byte -> its 8 bits as 8 bool bytes (lowest bit first), one uint64 per byte value
_BYTE_BITS = (
    np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    .view(np.uint64)
    .reshape(256)
)
_LANEBITS_OK: list = []  # lane_bits arrays seen to be arange(lanes) (kept alive)


def readlane(v, lane, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    idx = np.broadcast_to(np.asarray(lane, np.intp), (n, 1)) % lanes
    return np.take_along_axis(v, idx, axis=1)


def shuffle(v, src, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    idx = np.broadcast_to(np.asarray(src, np.intp) % lanes, (n, lanes))
    return np.take_along_axis(v, idx, axis=1)


def permute(v, dst, active, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    dst = np.broadcast_to(np.asarray(dst, np.intp) % lanes, (n, lanes))
    active = np.broadcast_to(active, (n, lanes))
    out = np.zeros((n, lanes), np.uint32)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, lanes))
    # ascending lane order: the highest writing lane lands last
    out[rows[active], dst[active]] = v[active]
    return out


def exec_mask(lo, hi, lanes, lane_bits):
    if _LITTLE and _is_lane_arange(lane_bits, lanes):
        lo = np.asarray(lo)
        if lo.dtype == np.uint32 and lo.ndim == 2 and lo.shape[1] == 1:
            if lanes == 32:
                # each byte of EXEC -> 8 lane bools via a table (bytes in lane order)
                return _BYTE_BITS[np.ascontiguousarray(lo).view(np.uint8)].view(np.bool_)
            hi = np.asarray(hi)
            if hi.dtype == np.uint32 and hi.shape == lo.shape:
                m = np.concatenate((lo, hi), axis=1)
                return _BYTE_BITS[m.view(np.uint8)].view(np.bool_)
    if lanes == 32:
        return (lo & (np.uint32(1) << lane_bits)) != 0
    m = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
    return ((m >> lane_bits) & np.uint64(1)).astype(bool)


def _is_lane_arange(lane_bits, lanes):
    for x in _LANEBITS_OK:
        if x is lane_bits:
            return True
    lb = np.asarray(lane_bits)
    if (
        lb.shape not in ((1, lanes), (lanes,))
        or lb.dtype.kind != "u"
        or not np.array_equal(lb.reshape(-1), np.arange(lanes))
    ):
        return False
    _LANEBITS_OK[:] = (_LANEBITS_OK + [lane_bits])[-8:]
    return True
