"""The LDS/barrier kernels' hot loops (decision 0047's amendment h115; issue 24), both opt-in:

* WAVELIFT_CUDA_BLENDS=atomics -- deferred EXEC blends (ir/blends.py) also across an atomic under
  the blends' mask: the analysis takes such an atomic as it takes a load or store, refuses one
  under another mask or with a tainted mask, and is unchanged where the flag is off (the native
  tier and liveness keep the old rule); the histogram's loop then blends each register once, at
  its end, instead of at every write.
* WAVELIFT_CUDA_HOIST=loops -- the window bases of the global loads and stores in loops made once
  in the kernel's prologue (wl_gp<slot>, wl_gbase) and passed to wl_gload_b / wl_gstore_b; a
  split build's part makes the ones it uses again.

No GPU: analyses of hand-built ops, source text, and NVRTC to PTX where installed (wl_gload_b and
wl_gstore_b's bytes are tests/cuda/test_cuda_memory_host.py's: wl_gload / wl_gstore are them with
the base made at the access)."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from ir_ops import Ops  # noqa: E402

from wavelift.ir.blends import deferred_blends  # noqa: E402


class _Ops(Ops):
    def blends(self, atomics):
        return deferred_blends(self.ops, self.values(), (), atomics)


def _histogram_step(mask_of_atomic=None, data_reg=3):
    """v5 = v0 << 2 (under EXEC), then an LDS atomic add at v5 (read back: tainted) of v3"""
    g = _Ops()
    g.vset(5, g.op("shl", "u32", (g.op("vget", "u32", reg=0), g.op("const", "u32", value=2))))
    addr = g.op("vget", "u32", reg=5)
    mask = g.mask if mask_of_atomic is None else mask_of_atomic(g)
    g.op("atomic", "u32", (addr, mask, g.op("vget", "u32", reg=data_reg)), space="lds", op="add", bits=32)
    return g


def test_atomic_under_the_mask_defers_only_with_the_flag():
    g = _histogram_step()
    assert g.blends(False) is None  # the old rule: a tainted atomic -> blends at every write
    src = g.blends(True)
    assert src is not None
    vget5 = next(op for op in g.ops if op.name == "vget" and op.attrs["reg"] == 5)
    shl = next(op for op in g.ops if op.name == "shl")
    assert src[vget5.out.id] is shl.out  # the atomic's address: the raw value


@pytest.mark.parametrize("how", ["another mask", "tainted mask", "data under another mask"])
def test_atomic_that_could_see_other_lanes_is_refused(how):
    """An atomic whose mask is not the write's (a compare of the lanes, EXEC read after a write
    of it), or whose mask is itself tainted: its lanes off the write's mask would read the raw
    value -- no deferred blends, flag or not."""
    if how == "another mask":
        g = _histogram_step(
            lambda g: g.op(
                "cmp", "u32", (g.op("vget", "u32", reg=1), g.op("const", "u32", value=0)), cond="ne"
            )
        )
    elif how == "tainted mask":
        g = _histogram_step(
            lambda g: g.op(
                "and",
                "b1",
                (
                    g.op(
                        "cmp", "u32", (g.op("vget", "u32", reg=5), g.op("const", "u32", value=0)), cond="ne"
                    ),
                    g.mask,
                ),
            )
        )
    else:
        g = _Ops()
        g.vset(3, g.op("const", "u32", value=1))
        other = g.op("cmp", "u32", (g.op("vget", "u32", reg=1), g.op("const", "u32", value=0)), cond="ne")
        g.op(
            "atomic",
            "u32",
            (g.op("vget", "u32", reg=4), other, g.op("vget", "u32", reg=3)),
            space="lds",
            op="add",
            bits=32,
        )
    assert g.blends(True) is None
    assert g.blends(False) is None


def test_atomic_result_is_clean():
    """The old value an atomic returns (0 off its mask) may go anywhere: a later write under
    another mask of a register fed only by it keeps the block deferred."""
    g = _histogram_step()
    old = g.ops[-1].out
    g.op("ballot", "u64", (g.op("cmp", "u32", (old, g.op("const", "u32", value=0)), cond="ne"),))
    assert g.blends(True) is not None


def _source(name, monkeypatch, **env):
    from test_cuda_backend import lds_kernel_source

    base = {
        "WAVELIFT_CUDA_PASSES": None,
        "WAVELIFT_CUDA_LDS": None,
        "WAVELIFT_CUDA_BLENDS": "blocks",  # (the forms before h115's, the defaults since session 47)
        "WAVELIFT_CUDA_HOIST": "access",
    }
    return lds_kernel_source(name, monkeypatch, {**base, **env})


def _main(src):
    """the kernel itself (the prelude before it names the hoisting's helpers)"""
    return src[src.index('extern "C" __global__') :]


def _blocks_of(src):
    parts = re.split(r"\n(B\d+): \{\n", src)
    return {parts[i]: parts[i + 1].split("\n}\n")[0] for i in range(1, len(parts) - 1, 2)}


BLEND = re.compile(r"^  v(\d+) = \(t\d+\) \? \(u32\)\(t\d+\) : v\1;$", re.M)


def test_histogram_loop_blends_once_per_register(monkeypatch):
    """The histogram's loop (a global load, then the LDS atomic): unset, a blend at every VGPR
    write; atomics, one per register at the block's end (after the atomic), and no read of a
    register after it wrote it (the raw values instead); other blocks and kernels unchanged."""
    from test_cuda_backend import _nvrtc_problem

    from wavelift.backends.cuda.compile import check_source

    old = _source("histogram", monkeypatch)
    new = _source("histogram", monkeypatch, WAVELIFT_CUDA_BLENDS="atomics")
    bo, bn = _blocks_of(old), _blocks_of(new)
    loop = [k for k, b in bn.items() if "wl_atomic32" in b and "wl_gload" in b]
    assert len(loop) == 1
    lo, ln = bo[loop[0]], bn[loop[0]]
    assert len(BLEND.findall(lo)) > len(set(BLEND.findall(lo)))  # (registers blended twice)
    regs = BLEND.findall(ln)
    assert regs and len(regs) == len(set(regs))
    first = BLEND.search(ln)
    assert first is not None and first.start() > ln.index("wl_atomic32")  # all after the atomic
    # each register read at most once, before the block writes it (then its raw values)
    reads = {r: len(re.findall(rf"= v{r};", ln[: first.start()])) for r in regs}
    assert max(reads.values()) <= 1 and sum(reads.values()) < sum(
        len(re.findall(rf"= v{r};", lo)) for r in regs
    )
    assert {k: b for k, b in bo.items() if k not in loop} == {k: b for k, b in bn.items() if k not in loop}
    for name in ("matmul16", "stencil5"):  # no atomics: the same source
        assert _source(name, monkeypatch) == _source(name, monkeypatch, WAVELIFT_CUDA_BLENDS="atomics")
    if _nvrtc_problem() is None:
        check_source(new, "sm_90")


def test_loop_blocks():
    """A block on a goto cycle (a loop, a barrier back to an earlier block) or a target of
    s_setpc is in a loop; straight blocks and a self-branching block's neighbours are not."""
    from types import SimpleNamespace as NS

    from wavelift.backends.cuda.codegen import loop_blocks
    from wavelift.ir.program import Block

    def prog(terms, block_at=None):
        blocks = [Block(i, 0, term=t) for i, t in enumerate(terms)]
        return NS(blocks=blocks, block_at=block_at or {})

    assert loop_blocks(prog([("jump", 1), ("branch", None, 1, 2), ("end",)])) == {1}
    assert loop_blocks(prog([("jump", 1), ("branch", None, 2, 3), ("jump", 1), ("end",)])) == {1, 2}
    assert loop_blocks(prog([("barrier", 1), ("branch", None, 0, 2), ("end",)])) == {0, 1}
    assert loop_blocks(prog([("jump", 1), ("jump", -1)])) == set()
    assert loop_blocks(prog([("setpc", None), ("end",), ("end",)], {0x10: 1})) == {1}


def test_loop_blocks_random_graphs():
    """Against the definition: a block reachable from one of its own successors."""
    import random
    from types import SimpleNamespace as NS

    from wavelift.backends.cuda.codegen import loop_blocks
    from wavelift.ir.program import Block

    rng = random.Random(115)
    for _ in range(300):
        n = rng.randint(1, 25)
        terms = []
        for _ in range(n):
            k = rng.random()
            pick = lambda: rng.choice([-1, *range(n)])  # noqa: E731
            terms.append(
                ("end",) if k < 0.1 else ("jump", pick()) if k < 0.5 else ("branch", None, pick(), pick())
            )
        blocks = [Block(i, 0, term=t) for i, t in enumerate(terms)]

        def succ(i):
            t = terms[i]
            return [x for x in (t[1:2] if t[0] == "jump" else t[2:4] if t[0] == "branch" else ()) if x >= 0]

        want = set()
        for i in range(n):
            seen, work = set(), succ(i)
            while work:
                x = work.pop()
                if x not in seen:
                    seen.add(x)
                    work.extend(succ(x))
            if i in seen:
                want.add(i)
        assert loop_blocks(NS(blocks=blocks, block_at={})) == want, terms


@pytest.mark.parametrize("name", ["histogram", "matmul16", "stencil5"])
def test_hoisted_window_bases(name, monkeypatch):
    """loops: each global load / store in a loop block reads its slot's base made in the
    prologue; the rest of the source is the unset setting's; NVRTC compiles it."""
    from test_cuda_backend import _nvrtc_problem

    from wavelift.backends.cuda.compile import check_source

    full = _source(name, monkeypatch, WAVELIFT_CUDA_HOIST="loops")
    old, new = _main(_source(name, monkeypatch)), _main(full)
    assert "wl_gp" not in old and "wl_gload_b" not in old
    made = re.findall(r"^  u8\* wl_gp(\d+) = wl_gbase\(C, (\d+)u\); WL_KEEP\(wl_gp\1\);$", new, re.M)
    assert made and all(a == b for a, b in made)
    used = re.findall(r"wl_g(?:load|store)_b\(C, wl_gp(\d+), .*?, (\d+)u, lane", new)
    assert used and all(a == b for a, b in used) and {a for a, _ in used} <= {a for a, _ in made}
    assert new.index("wl_gp") < new.index("//@wl-prologue-end")
    # back to the unset source: the calls with the base made at the access, no prologue lines
    back = re.sub(r"^  u8\* wl_gp(\d+) = wl_gbase\(C, \1u\); WL_KEEP\(wl_gp\1\);\n", "", new, flags=re.M)
    back = re.sub(r"wl_g(load|store)_b\(C, wl_gp\d+, ", r"wl_g\1(C, ", back)
    assert back == old
    if _nvrtc_problem() is None:
        check_source(full, "sm_90")


def test_split_parts_make_their_bases(monkeypatch):
    """A split build's parts: each one that uses a hoisted base makes it from its context."""
    from wavelift.backends.cuda.split import split_source

    src = _source("histogram", monkeypatch, WAVELIFT_CUDA_HOIST="loops")
    units = split_source(src, part_bytes=512)
    assert units is not None and len(units) > 2
    users = 0
    for part in units[1:]:
        body = part[part.index("wl_part_") :]
        for j in set(re.findall(r"wl_g(?:load|store)_b\(C, wl_gp(\d+),", body)):
            users += 1
            made = body.index(f"u8* wl_gp{j} = wl_gbase(C, {j}u); WL_KEEP(wl_gp{j});")
            assert body.index("WlCtx& C = *S->C;") < made < body.index(f"wl_gp{j},")
    assert users
