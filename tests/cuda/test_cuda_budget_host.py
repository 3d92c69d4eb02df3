"""Straight kernels (WAVELIFT_CUDA_BUDGET=straight; decision 0009, amendment "budget checks of
programs without loops"): a small program without loops has its blocks' budget checks as the
macro WL_BCHK, empty in the build launched when the wave's budget covers the program's longest
path, the check itself in its sibling built with WL_BUDGET_CHECKS 1 for a smaller budget.

Checked without a GPU: codegen.straight_path is the longest path (brute force over random
acyclic CFGs; None wherever a cycle, s_setpc or s_barrier is reachable); the sibling with checks
is, after its macros, the kernel generated without the setting, character for character (so a
small budget runs exactly today's kernel); loops, barriers and the setting off generate as
before; Module.variant launches the sibling exactly for a budget below the longest path (with
the preloads' WL_PRELOADED 0 build alike); NVRTC builds both.  On a GPU (-m cuda): vadd's
refusals and results at budgets around its longest path equal NumPy lane mode's."""

from __future__ import annotations

import itertools
import pathlib
import random
import re
import sys
from types import SimpleNamespace

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
for p in (ROOT / "bench", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from wavelift.backends import cuda as WC  # noqa: E402
from wavelift.backends.cuda import codegen as G  # noqa: E402
from wavelift.ir.program import Block, Program  # noqa: E402


# ------------------------------------------------------------------ the longest path
def _program(spec):
    """spec: [(instructions, term)] -> a Program of blocks 0.. with those terminators."""
    blocks = [Block(i, 4 * i, instrs=list(range(n)), ops=[], term=t) for i, (n, t) in enumerate(spec)]
    return Program(blocks, [SimpleNamespace(encoding="SOPP")] * 8, {4 * i: i for i in range(len(spec))}, 8)


def _succ(t):
    if t[0] in ("jump", "mode"):
        return [t[1]]
    if t[0] == "branch":
        return [t[2], t[3]]
    return []


def _brute(spec):
    """The longest path from block 0 by enumerating every path (None: a cycle, s_setpc or
    s_barrier on some path)."""
    best = 0

    def go(i, seen, total):
        nonlocal best
        n, t = spec[i]
        if i in seen or t[0] in ("setpc", "barrier"):
            raise ValueError
        total += n
        best = max(best, total)
        for x in _succ(t):
            if x >= 0:
                go(x, seen | {i}, total)

    try:
        go(0, frozenset(), 0)
    except ValueError:
        return None
    return best


def _random_spec(rng, n, back):
    spec = []
    for i in range(n):
        k = rng.random()
        later = list(range(i + 1, n)) + [-1, -2]
        anyb = list(range(n)) + [-1]
        pick = (lambda: rng.choice(anyb)) if rng.random() < back else (lambda: rng.choice(later))
        if k < 0.3:
            t = ("jump", pick())
        elif k < 0.8:
            t = ("branch", None, pick(), pick())
        elif k < 0.9:
            t = ("end",)
        elif k < 0.95:
            t = ("mode", pick())
        else:
            t = (rng.choice(["setpc", "barrier"]), -1)
        spec.append((rng.randint(0, 9), t))
    return spec


def test_straight_path_is_the_longest_path():
    rng = random.Random(24)
    seen = {"number": 0, "none": 0}
    for trial in range(600):
        spec = _random_spec(rng, rng.randint(1, 9), 0.0 if trial % 2 else 0.15)
        want = _brute(spec)
        got = G.straight_path(_program(spec))
        assert got == want, (spec, got, want)
        # (each block once at most: no more than the program's instructions, so a straight
        # kernel's path, of at most OCCUPANCY_MAX_INSTRUCTIONS, is far below rl's 2^20)
        assert got is None or got <= sum(n for n, _ in spec)
        seen["none" if want is None else "number"] += 1
    assert min(seen.values()) > 50, seen  # both kinds were tried


def test_straight_path_examples():
    # a diamond: the longer arm counts
    assert (
        G.straight_path(
            _program([(2, ("branch", None, 1, 2)), (5, ("jump", 3)), (1, ("jump", 3)), (1, ("end",))])
        )
        == 8
    )
    # a loop, s_setpc, s_barrier: none
    assert G.straight_path(_program([(2, ("branch", None, 0, 1)), (1, ("end",))])) is None
    assert G.straight_path(_program([(2, ("setpc", None))])) is None
    assert G.straight_path(_program([(2, ("barrier", 1)), (1, ("end",))])) is None
    # a block no path reaches does not count
    assert G.straight_path(_program([(3, ("end",)), (99, ("jump", 1))])) == 3
    # negative targets end the wave (done; a bad address flags)
    assert G.straight_path(_program([(3, ("branch", None, -1, -5))])) == 3


# ------------------------------------------------------------------ the generated source
def _source(name):
    import gpu_check as GC
    from test_cuda_backend import translate_dispatch

    mem, cfg, *_ = {
        "vadd32": lambda: GC.vadd_dispatch(4096),
        "vadd64": lambda: GC.vadd_dispatch(4096, 64),
        "shade": lambda: GC.shade_dispatch(64, 64),
        "collatz": lambda: GC.collatz_dispatch(4096),
    }[name]()
    prog, base = translate_dispatch(mem, cfg)
    return WC.module_source(prog, cfg, base_address=base)[0], prog, cfg


def _expanded(src):
    """The source as the preprocessor makes it with WL_BUDGET_CHECKS 1, less the straight
    header: each WL_BCHK replaced by its definition."""
    m = re.search(r"^#define WL_BCHK (.+)$", src, re.M)
    assert m, src[:2000]
    check = m.group(1)
    head = re.search(r"^#define WL_STRAIGHT \d+u\n(#.*\n){8}", src, re.M)
    assert head and head.group(0).count("\n") == 9, head
    out = src.replace(head.group(0), "")
    return re.sub(r"^  WL_BCHK$", "  " + check, out, flags=re.M)


@pytest.mark.parametrize("name", ["vadd32", "vadd64", "shade"])
def test_the_build_with_checks_is_todays_kernel(monkeypatch, name):
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "checked")
    old, prog, cfg = _source(name)
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "straight")
    new = _source(name)[0]
    monkeypatch.delenv("WAVELIFT_CUDA_BUDGET", raising=False)
    assert _source(name)[0] == new  # (unset: `straight`, the default since session 43)
    assert "WL_BCHK" not in old and "WL_STRAIGHT" not in old
    nblocks = len(re.findall(r"^B\d+: \{$", old, re.M))
    assert old.count("  if (ic > rl) {") == nblocks > 1
    # the straight build's blocks have no check; the longest path is the program's, as lowered
    assert "if (ic > rl)" not in new.replace(re.search(r"^#define WL_BCHK (.+)$", new, re.M).group(0), "")
    assert new.count("\n  WL_BCHK\n") == nblocks
    most = G.source_straight(new)
    counts = [int(x) for x in re.findall(r"^  ic \+= (\d+)u;$", new, re.M)]
    assert most is not None and max(counts) <= most <= sum(counts)
    assert _expanded(new) == old


@pytest.mark.parametrize("name", ["collatz"])
def test_programs_with_loops_keep_their_checks(monkeypatch, name):
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "checked")
    old = _source(name)[0]
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "straight")
    assert _source(name)[0] == old and G.source_straight(old) is None


def test_straight_vadd_longest_path_is_its_three_blocks(monkeypatch):
    """clang's vadd: the entry block (8 instructions), the in-range block (17), the end (1)."""
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "straight")
    src, prog, _ = _source("vadd32")
    assert G.source_straight(src) == G.straight_path(G.optimized(prog, 32, None)) == 26


def test_both_builds_compile(monkeypatch):
    from test_cuda_backend import _needs_nvrtc

    from wavelift.backends.cuda.compile import check_source

    _needs_nvrtc()
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "straight")
    src = _source("vadd64")[0]
    check_source(src, "sm_90")
    check_source("#define WL_BUDGET_CHECKS 1\n" + src, "sm_90")


# ------------------------------------------------------------------ the build launched
def test_variant_launches_the_checks_below_the_longest_path(fake_builds):
    built = fake_builds
    src = "#define WL_STRAIGHT 26u\nkernel\n"
    pre = ((object(),), ())  # one preload: WL_PRELOADED 0 when unresolved
    m = WC.Module(("k",), None, src, "sm_90", b"", 0.0, "fake", (), preloads=pre)
    assert m.straight == 26
    for budget, preloaded in itertools.product((None, 0, 25, 26, 27, 1 << 40), (True, False)):
        k = m.variant(preloaded, budget)
        defs = ("#define WL_PRELOADED 0\n" if not preloaded else "") + (
            "#define WL_BUDGET_CHECKS 1\n" if budget is not None and budget < 26 else ""
        )
        assert k.source == defs + src, (budget, preloaded, k.source)
        assert (k is m) == (defs == "")
        assert m.variant(preloaded, budget) is k  # built once
    assert len(built) == 3 and len(set(built)) == 3
    # a kernel that always checks: the budget chooses nothing
    m2 = WC.Module(("k",), None, "kernel\n", "sm_90", b"", 0.0, "fake", (), preloads=pre)
    assert m2.straight is None and m2.variant(True, 0) is m2
    assert m2.variant(False, 0).source == "#define WL_PRELOADED 0\nkernel\n"


# ------------------------------------------------------------------ on a GPU
@pytest.mark.cuda
@pytest.mark.parametrize("wave", [32, 64])
def test_gpu_budgets_around_the_longest_path(monkeypatch, wave):
    """vadd (26 instructions on its longest path) with budgets just below, at and above it, and
    the default: the refusal and the memory equal NumPy lane mode's."""
    import copy

    import gpu_check as GC
    from test_cuda_backend import _compare, _needs_gpu

    from wavelift.run.execute import execute_dispatch

    _needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "straight")
    mem, cfg, *_ = GC.vadd_dispatch(4096, wave)
    src, prog, _ = _source(f"vadd{wave}")
    most = G.source_straight(src)
    assert most is not None
    for budget in (1, most - 1, most, most + 1, None):
        want, got = copy.deepcopy(mem), copy.deepcopy(mem)
        a = execute_dispatch(want, cfg, backend="numpy", mode="lane", budget=budget)
        b = execute_dispatch(got, cfg, backend="cuda", mode="lane", budget=budget)
        ra = a.refusal.code if a.refusal else None
        rb = b.refusal.code if b.refusal else None
        assert ra == rb, (budget, ra, rb)
        assert not _compare(want, got), (budget, _compare(want, got)[:3])
