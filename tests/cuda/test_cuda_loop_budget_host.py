"""The budget in loops of a CUDA kernel (decision 0015: a wave stops at the first block end where
the instructions it ran pass its budget; a loop that never ends is always stopped), checked
without a GPU: small loops (a counted loop whose back edge is the branch's taken or fallen-through
side, a jump to itself that never ends, a loop of two blocks) lowered by codegen's block_source
are compiled for the host with g++ and the prelude's semantics, with wl_check_ as kernel.h's, and
run under budgets around each loop's length, below 2^20 and past it (where the 32-bit count is
folded into the 64-bit total at least once); the stop, the instructions counted and the
registers of a wave that ends are the rule's, walked over the CFG in Python.  Written for decision
0047's amendment h118 (a budget test folded into a loop's latch, tried and not kept): any later
change of the budget's lowering in loops is held to it."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from wavelift.ir.program import Block, Op, Program, Value

M32 = 0xFFFFFFFF


class _P:
    """Builds blocks of scalar ops: s1 counts, s0 is the bound."""

    def __init__(self):
        self.n = 0
        self.ops: list = []

    def op(self, name, t, args=(), **attrs):
        self.n += 1
        out = Value(self.n, "b1" if name == "cmp" else t, True)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), out, 0))
        return out

    def sset(self, r, v):
        self.ops.append(Op("sset", "u32", (v,), {"reg": r}, None, 0))

    def take(self):
        ops, self.ops = self.ops, []
        return ops


def _loop(kind: str) -> tuple[Program, list]:
    """-> (program, spec [(instructions, term as (kind, targets...) with 'c' the condition)])
    kind: "taken" (branch c -> loop), "fallen" (branch c -> exit, else loop), "forever" (a
    jump to itself), "two" (a loop of two blocks, the latch a branch back to the first)."""
    g = _P()
    blocks = []
    g.sset(1, g.op("const", "u32", value=0))
    blocks.append((2, g.take(), ("jump", 1)))
    if kind == "forever":
        g.sset(1, g.op("add", "u32", (g.op("sget", "u32", reg=1), g.op("const", "u32", value=1))))
        blocks.append((3, g.take(), ("jump", 1)))
    elif kind == "two":
        g.sset(1, g.op("add", "u32", (g.op("sget", "u32", reg=1), g.op("const", "u32", value=1))))
        blocks.append((2, g.take(), ("jump", 2)))
        c = g.op("cmp", "u32", (g.op("sget", "u32", reg=1), g.op("sget", "u32", reg=0)), cond="lt")
        g.sset(2, g.op("add", "u32", (g.op("sget", "u32", reg=2), g.op("sget", "u32", reg=1))))
        blocks.append((5, g.take(), ("branch", c, 1, 3)))
    else:
        g.sset(1, g.op("add", "u32", (g.op("sget", "u32", reg=1), g.op("const", "u32", value=1))))
        cond = "lt" if kind == "taken" else "ge"
        c = g.op("cmp", "u32", (g.op("sget", "u32", reg=1), g.op("sget", "u32", reg=0)), cond=cond)
        blocks.append((4, g.take(), ("branch", c, 1, 2) if kind == "taken" else ("branch", c, 2, 1)))
    # (the registers out in v8, v9: SGPRs are not observed at the end, their writes dead)
    t = g.op("const", "b1", value=1)
    for r in (1, 2):
        g.ops.append(Op("vset", "u32", (g.op("sget", "u32", reg=r), t), {"reg": 7 + r}, None, 0))
    blocks.append((1, g.take(), ("end",)))
    n = sum(b[0] for b in blocks)
    prog = Program(
        [Block(i, 4 * i, instrs=list(range(k)), ops=o, term=t) for i, (k, o, t) in enumerate(blocks)],
        [SimpleNamespace(encoding="SOP2")] * n,
        {4 * i: i for i in range(len(blocks))},
        n,
    )
    return prog, [(k, t) for k, _, t in blocks]


def _reference(kind, s0, budget):
    """Decision 0015's rule walked over the CFG: -> (stopped, s1, s2, instructions run)."""
    s1 = s2 = 0
    total, blk = 0, 0
    _, spec = _loop(kind)
    while True:
        k, t = spec[blk]
        total += k
        if blk == 0:
            s1 = 0
        elif kind in ("taken", "fallen", "forever") and blk == 1:
            s1 = (s1 + 1) & M32
        elif kind == "two" and blk == 1:
            s1 = (s1 + 1) & M32
        elif kind == "two" and blk == 2:
            s2 = (s2 + s1) & M32
        if total > budget:
            return 1, s1, s2, total
        if t[0] == "end":
            return 0, s1, s2, total
        if t[0] == "jump":
            blk = t[1]
            continue
        c = s1 < s0 if kind in ("taken", "two") else s1 >= s0
        blk = t[2] if c else t[3]


HOST = r"""
static u64 wl_budget;
struct WlHostCtx { int unused; };
/* kernel.h's wl_check_ (the stop flag aside): 0 past the budget, else the next limit */
static u64 wl_check_(u64 icnt) {
  if (icnt > wl_budget) return 0ull;
  u64 nl = icnt + (1ull << 20); return nl < wl_budget ? nl : wl_budget;
}
#define wl_flag(C, ...) ((void)0)
#define wl_lanes(C, n) ((void)(n))
"""

RUN = r"""
extern "C" void wl_run_{k}(u32 bound, u64 budget, u64* out) {{
  wl_budget = budget;
  const u32 lane = 0u, wv = 0u; (void)lane; (void)wv;
  WlHostCtx C{{0}}; (void)C;
{decl}
  s0 = bound;
  u64 icnt = 0ull; u64 stopped = 0ull;
  u32 ic = 0u, lc = 0u, rl = budget < (1ull << 20) ? (u32)budget : (1u << 20);
{body}
WL_STOP:
  stopped = 1ull;
WL_DONE:
  out[0] = stopped; out[1] = v8; out[2] = v9; out[3] = icnt + ic; (void)lc;
}}
"""

KINDS = ["taken", "fallen", "forever", "two"]


def _run_fn(k, prog):
    from wavelift.backends.cuda.codegen import Lowering

    low = Lowering(prog, 32, "lane", 0, 0)
    body = []
    for i, e in enumerate(low.sync_entries()):
        body += low._lower(i, e)[0]
    text = "\n".join(body)
    decl = "\n".join([f"  u32 s{r} = 0u;" for r in sorted(set(low.sregs) | {0, 1, 2})])
    decl += "\n" + "\n".join(f"  u32 v{r} = 0u; (void)v{r};" for r in low.vregs)
    return RUN.format(k=k, decl=decl, body=text)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    gxx = shutil.which("g++")
    if not gxx:
        pytest.skip("g++ not installed")
    from wavelift.backends.host import COMPILE_FLAGS, prelude_semantics

    fns = [_run_fn(kind, _loop(kind)[0]) for kind in KINDS]
    d = tmp_path_factory.mktemp("budget")
    (d / "budget.cpp").write_text(prelude_semantics() + HOST + "".join(fns))
    so = d / "budget.so"
    r = subprocess.run(
        [gxx, *COMPILE_FLAGS, "-O1", "-o", str(so), str(d / "budget.cpp")], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-4000:]
    return ctypes.CDLL(str(so))


@pytest.mark.parametrize("kind", KINDS)
def test_budget_stops_where_the_rule_says(built, kind):
    """Loops of several lengths under budgets around their lengths, small and past 2^20: the
    wave stops at the first block end past the budget (a loop that never ends always does), or
    ends with the reference's registers."""
    fn = getattr(built, f"wl_run_{kind}")
    fn.argtypes = [ctypes.c_uint32, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
    out = (ctypes.c_uint64 * 4)()
    cases = []
    for bound in (1, 2, 5, 100, 270_000):
        # (the loop's whole length; one that never ends: budgets as for a length of 1000)
        length = 1000 if kind == "forever" else _reference(kind, bound, 1 << 62)[3]
        budgets = {length - 1, length, (1 << 20) + 3}
        if bound < 1000:
            budgets |= {1, 2, 3, length - 2, length + 1, length + 7}
        cases += [(bound, b) for b in sorted(budgets) if b > 0]
    stopped = ended = 0
    for bound, budget in cases:
        fn(bound, budget, out)
        got = tuple(int(x) for x in out)
        want = _reference(kind, bound, budget)
        if want[0]:  # (a stopped wave's registers are not observed: its dispatch is refused)
            got, want = (got[0], got[3]), (want[0], want[3])
        assert got == want, (kind, bound, budget, got, want)
        stopped += want[0]
        ended += 1 - want[0]
    assert stopped and (ended or kind == "forever")
