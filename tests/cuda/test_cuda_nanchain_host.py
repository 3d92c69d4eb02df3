"""f32 fma chains tested for NaN at their end (WAVELIFT_CUDA_NAN=chain, the default; decision 0047's
amendment h106): nanchain finds inner fmas only where the result reaches one fma operand bit for
bit and nowhere else (hand-built blocks, each way out of a chain refused); the lowering's rule
(bare fmas, the end tested, the chain again where it is NaN) gives the NumPy reference's bits
(ir.numerics.fma, RDNA's NaN rule) for random chains full of NaNs, infinities and zeros, with the
GPU's bare fma modelled as the reference's value or the canonical NaN; matmul16's source.  No GPU:
source text, and NVRTC to PTX where installed."""

from __future__ import annotations

import pathlib
import random
import re
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from ir_ops import Ops  # noqa: E402

from wavelift.backends.cuda import nanchain  # noqa: E402
from wavelift.ir import numerics as H  # noqa: E402
from wavelift.ir.blends import deferred_blends  # noqa: E402


class _Ops(Ops):
    def f32_of(self, reg):
        return self.op("bitcast", "u32", (self.op("vget", "u32", reg=reg),), to="f32")

    def fma(self, a, b, c):
        return self.op("fma", "f32", (a, b, c))

    def acc_step(self, acc_reg=5, a=10, b=11):
        """acc = fma(a, b, acc) through register acc_reg (matmul16's shape)"""
        r = self.fma(self.f32_of(a), self.f32_of(b), self.f32_of(acc_reg))
        self.vset(acc_reg, self.op("bitcast", "f32", (r,), to="u32"))
        return r

    def inner(self, term=()):
        src = deferred_blends(self.ops, self.values(), term)
        got = nanchain.chains(self.ops, term, src)
        return {id(op) for op in got.values()}

    def fmas(self):
        return [op for op in self.ops if op.name == "fma"]


def test_accumulator_chain():
    """three steps through v5: the first two inner, the last (the block's value of v5) not"""
    g = _Ops()
    for _ in range(3):
        g.acc_step()
    f = g.fmas()
    assert g.inner() == {id(f[0]), id(f[1])}


def test_direct_chain_and_operands_a_b():
    """an fma's result straight into another's a or b operand (no register): inner"""
    g = _Ops()
    x = g.fma(g.f32_of(1), g.f32_of(2), g.f32_of(3))
    y = g.fma(g.f32_of(4), x, g.f32_of(5))
    z = g.fma(y, g.f32_of(6), g.f32_of(7))
    g.vset(8, g.op("bitcast", "f32", (z,), to="u32"))
    f = g.fmas()
    assert g.inner() == {id(f[0]), id(f[1])}


@pytest.mark.parametrize(
    "way_out",
    ["read twice", "last write", "other use", "not an identity", "terminator", "two operands", "other mask"],
)
def test_ways_out_of_a_chain(way_out):
    """the first fma's result is observable some other way: not inner"""
    g = _Ops()
    r = g.fma(g.f32_of(10), g.f32_of(11), g.f32_of(5))
    term = ()
    if way_out == "not an identity":
        r = g.op("fneg", "f32", (r,))
    if way_out == "other use":
        g.op("cmp", "f32", (r, r), cond="eq")
    if way_out == "terminator":
        term = (r,)
    if way_out == "two operands":
        g.fma(r, r, g.f32_of(3))
    u = g.op("bitcast", "f32", (r,), to="u32")
    if way_out == "other mask":  # (its other lanes keep the raw value: no deferred blends)
        g.op(
            "vset",
            "u32",
            (u, g.op("cmp", "u32", (g.op("vget", "u32", reg=1), u), cond="eq")),
            out=False,
            reg=5,
        )
    else:
        g.vset(5, u)
    if way_out == "read twice":
        g.vset(9, g.op("vget", "u32", reg=5))
    if way_out != "last write":
        g.acc_step()
    first = g.fmas()[0]
    assert id(first) not in g.inner(term)


@pytest.mark.parametrize("way_out", ["the block's value", "read again"])
def test_register_value_seen_elsewhere(way_out):
    """v5 = fma; an fma reads v5 back -- but v5 keeps that value at the block's end (no later
    write), or another op reads it too (after the chain's read): not inner"""
    g = _Ops()
    r = g.fma(g.f32_of(10), g.f32_of(11), g.f32_of(5))
    g.vset(5, g.op("bitcast", "f32", (r,), to="u32"))
    s = g.fma(g.f32_of(12), g.f32_of(13), g.f32_of(5))
    if way_out == "read again":
        g.vset(9, g.op("vget", "u32", reg=5))
        g.vset(5, g.op("bitcast", "f32", (s,), to="u32"))
    else:
        g.vset(8, g.op("bitcast", "f32", (s,), to="u32"))
    assert id(g.fmas()[0]) not in g.inner()


def test_no_chain_through_registers_without_deferred_blends():
    g = _Ops()
    g.acc_step()
    g.acc_step()
    assert nanchain.chains(g.ops, (), None) == {}


def test_f64_fma_is_left_alone():
    g = _Ops()
    x = g.op("fma", "f64", (g.f32_of(1), g.f32_of(2), g.f32_of(3)))
    g.op("fma", "f64", (x, g.f32_of(4), g.f32_of(5)))
    assert g.inner() == set()


# ------------------------------------------------------------------ the rule's values
_SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, 3e38, 1e-45]
_NANS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00005, 0x7FC12345]


def _f32(rng):
    k = rng.random()
    if k < 0.15:
        return np.uint32(rng.choice(_NANS)).view(np.float32)
    if k < 0.45:
        return np.float32(rng.choice(_SPECIAL))
    return np.float32(rng.uniform(-4, 4))


def _exact(x):  # wl_fma: the reference's fma (RDNA's NaN)
    return H.fma(np.float32(x[0]), np.float32(x[1]), np.float32(x[2]))


def _bare(x):  # the GPU's __fmaf_rn: the same value, or its one canonical NaN
    r = _exact(x)
    return r if r == r else np.uint32(0x7FFFFFFF).view(np.float32)


def test_chain_rule_gives_the_reference_bits():
    """acc = fma(a_k, b_k, acc), k = 1..n, or the chain through a or b: every fma tested
    (before) and the end tested, the chain again on NaN (the rule) -- the same bits, and the
    bare chain alone not (the test can fail)"""
    rng = random.Random(7)
    differs = 0
    np.seterr(all="ignore")
    for _ in range(1500):
        n = rng.randrange(1, 9)
        ops = [(rng.randrange(3), _f32(rng), _f32(rng)) for _ in range(n)]  # (chain operand, others)
        acc0 = _f32(rng)

        def run(step, acc=acc0):
            for pos, p, q in ops:
                args = [p, q]
                args.insert(pos, acc)
                acc = step(args)
            return acc

        want = run(_exact)
        bare = run(_bare)
        got = bare if bare == bare else run(_exact)
        assert np.float32(got).view(np.uint32) == np.float32(want).view(np.uint32), (ops, acc0)
        differs += np.float32(bare).view(np.uint32) != np.float32(want).view(np.uint32)
    assert differs > 30  # (NaN chains were drawn: the end's test is what makes them right)


# ------------------------------------------------------------------ matmul16
def _source(name, monkeypatch, setting):
    from test_cuda_backend import lds_kernel_source

    return lds_kernel_source(
        name,
        monkeypatch,
        {"WAVELIFT_CUDA_PASSES": None, "WAVELIFT_CUDA_BLENDS": "blocks", "WAVELIFT_CUDA_NAN": setting},
    )


@pytest.mark.parametrize("setting, bare, ends", [("chain", 11, [2, 2, 4, 4, 4]), ("chain16", 14, [6, 10])])
def test_matmul16_chains(setting, bare, ends, monkeypatch):
    """matmul16's 16 multiply-adds a tile (10 in one block, 6 in the next): in chains of at
    most 4 (16), the ends tested, each with its chain again in wl_fma; `every`, every one wl_fma
    as before; it compiles"""
    from test_cuda_backend import _nvrtc_problem

    from wavelift.backends.cuda.compile import check_source

    old = _source("matmul16", monkeypatch, "every")
    body = old[old.index("//@wl-blocks") :]
    assert len(re.findall(r"= wl_fma\(", body)) == 16 and "__fmaf_rn" not in body
    src = _source("matmul16", monkeypatch, setting)
    if setting == "chain":
        assert _source("matmul16", monkeypatch, None) == src  # (chain is the default)
    body = src[src.index("//@wl-blocks") :]
    assert len(re.findall(r"const f32 t\d+ = __fmaf_rn\(", body)) == bare
    got = re.findall(r"if \((t\d+n) != \1\) \1 = (wl_fma\(.*\));", body)
    assert sorted(e[1].count("wl_fma(") for e in got) == ends
    assert len(re.findall(r"f32 t\d+n = __fmaf_rn\(", body)) == len(ends)
    assert len(re.findall(r"wl_fma\(", body)) == sum(ends)  # (only in the ends' runs again)
    if _nvrtc_problem() is None:
        check_source(src, "sm_90")
