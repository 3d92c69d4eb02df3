"""Wave64 lane masks in the CUDA lowering (codegen.Lowering.block_source, "lazy wave64 masks"):
each warp keeps its own half of a ballot and fetches the other warp's half only where a whole
value is used.  Checked without a GPU: the generated blocks of random mask programs (ballots,
s_and_saveexec, 64-bit and 32-bit mask logic, v_cndmask, s_bcnt1, EXEC/VCC/SCC, execz and SCC
branches, a loop) are compiled for the host with the prelude's value semantics and run by 64
host threads, one per lane, with warp ballots, the wave's named barrier and ``bar.red.or``
emulated by thread barriers; every register, copied into VGPRs at the end, and the lane count
must equal a reference evaluation of the IR.  A lowering that reads a half it does not have, or
whose two warps meet at different barriers, fails (a mismatched barrier times out and fails).
Skips without g++."""

from __future__ import annotations

import ctypes
import random
from types import SimpleNamespace

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

from wavelift.ir.program import EXEC_HI, EXEC_LO, SCC, VCC_HI, VCC_LO, Block, Op, Program, Value

W = 64
M64 = (1 << 64) - 1
PAIRS = [(VCC_LO, VCC_HI), (0, 1), (2, 3), (4, 5), (EXEC_LO, EXEC_HI)]
SREGS = [0, 1, 2, 3, 4, 5, 10, 11, 12, VCC_LO, VCC_HI, EXEC_LO, EXEC_HI, SCC]
NV = 6  # v0..v5 inputs; the registers are copied to v16.. at the end
OUT_V = 16


class Gen:
    """Random wave64 programs in IR: SSA values, blocks, the ops the frontend makes of mask code."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.ids = iter(range(1, 1 << 30))
        self.ops: list = []

    def op(self, name, t, args=(), uniform=True, out=True, **attrs):
        """An op as the frontend makes it (op type: the operands' type for cmp, cvt and
        popcount, the result's otherwise)."""
        ot = {"cmp": "b1", "maskbit": "b1", "exec": "b1", "popcount": "i32"}.get(name, attrs.get("to", t))
        v = Value(next(self.ids), ot, uniform) if out else None
        self.ops.append(Op(name, t, tuple(args), attrs, v, 0))
        return v

    def const(self, t, x):
        return self.op("const", t, value=x)

    def sget(self, r):
        return self.op("sget", "u32", reg=r)

    def sset(self, r, x):
        self.op("sset", "u32", (x,), out=False, reg=r)

    def pair(self, p):
        return self.op("pack64", "u64", (self.sget(p[0]), self.sget(p[1])))

    def set_pair(self, p, m):
        self.sset(p[0], self.op("lo32", "u32", (m,)))
        self.sset(p[1], self.op("hi32", "u32", (m,)))

    def scc_of(self, m, t="u64"):
        c = self.op("cmp", t, (m, self.const(t, 0)), cond="ne")
        self.sset(SCC, self.op("cvt", "b1", (c,), to="u32"))

    def exec_(self):
        return self.op("exec", "b1", uniform=False)

    def vset(self, r, x, mask=None):
        self.op("vset", "u32", (x, self.exec_() if mask is None else mask), out=False, reg=r)

    def step(self):
        r = self.r
        k = r.randrange(14)
        P = r.choice(PAIRS[:4])
        if k <= 2:  # v_cmp_* vcc/s[n:n+1], v, s|const
            a = self.op("vget", "u32", uniform=False, reg=r.randrange(NV))
            b = (
                self.const("u32", r.choice([0, 3, 1 << 30, 7 << 28]))
                if r.random() < 0.6
                else self.sget(r.choice([0, 2, 10]))
            )
            c = self.op("cmp", "u32", (a, b), uniform=False, cond=r.choice(["lt", "gt", "eq", "ne"]))
            self.set_pair(
                P, self.op("ballot", "u64", (self.op("and", "b1", (c, self.exec_()), uniform=False),))
            )
        elif k == 3:  # s_and_saveexec_b64 s[2:3], P
            old = self.pair((EXEC_LO, EXEC_HI))
            new = self.op("and", "u64", (self.pair(P), old))
            self.set_pair((2, 3), old)
            self.set_pair((EXEC_LO, EXEC_HI), new)
            self.scc_of(new)
        elif k == 4:  # s_{and,or,xor,andn2}_b64 D, A, B
            a, b = self.pair(r.choice(PAIRS)), self.pair(r.choice(PAIRS))
            n = r.choice(["and", "or", "xor", "andn2"])
            m = (
                self.op("and", "u64", (a, self.op("not", "u64", (b,))))
                if n == "andn2"
                else self.op(n, "u64", (a, b))
            )
            self.set_pair(r.choice(PAIRS[:4] + [PAIRS[4]] * (r.random() < 0.2)), m)
            if r.random() < 0.5:
                self.scc_of(m)
        elif k == 5:  # v_cndmask_b32 v, v, v, P
            c = self.op("maskbit", "b1", (self.pair(P),), uniform=False)
            a = self.op("vget", "u32", uniform=False, reg=r.randrange(NV))
            b = self.op("vget", "u32", uniform=False, reg=r.randrange(NV))
            self.vset(r.randrange(NV), self.op("select", "u32", (c, a, b), uniform=False))
        elif k == 6:  # v_mov_b32 v, s (whole value per lane)
            self.vset(r.randrange(NV), self.sget(r.choice([0, 1, 106, 107, 126, 127, 10])))
        elif k == 7:  # s_bcnt1_i32_b64 s10, P
            self.sset(10, self.op("cvt", "i32", (self.op("popcount", "u64", (self.pair(P),)),), to="u32"))
        elif k == 8:  # halves in the other register of a pair
            m = self.pair(P)
            self.sset(r.choice([11, 1]), self.op("lo32", "u32", (m,)))
            self.sset(r.choice([10, 12]), self.op("hi32", "u32", (m,)))
        elif k == 9:  # 32-bit logic on halves, then a compare
            a, b = self.sget(r.choice([0, 1, 106, 107])), self.sget(r.choice([0, 1, 126, 127, 12]))
            x = self.op(r.choice(["and", "or", "xor"]), "u32", (a, b))
            if r.random() < 0.5:
                x = self.op("or", "u32", (x, self.const("u32", r.choice([0, 1 << 5]))))
            if r.random() < 0.5:
                self.scc_of(x, "u32")
            else:
                c = self.op("cmp", "u32", (x, self.const("u32", 5)), cond="gt")
                self.sset(SCC, self.op("cvt", "b1", (c,), to="u32"))
            self.sset(r.choice([11, 12]), x)
        elif k == 10:  # a pair rebuilt in swapped order
            m = self.op("pack64", "u64", (self.sget(P[1]), self.sget(P[0])))
            self.set_pair(r.choice(PAIRS[:4]), self.op("xor", "u64", (m, self.pair(P))))
        elif k == 12:  # execz-or of two masks' halves, and-ed
            Q = r.choice(PAIRS)
            x = self.op("or", "u32", (self.sget(P[0]), self.sget(P[1])))
            y = self.op("or", "u32", (self.sget(Q[0]), self.sget(Q[1])))
            self.vset(r.randrange(NV), self.op("and", "u32", (x, y)))
        elif k == 13:  # a half read, its register rewritten, then used
            old = self.sget(P[0])
            c = self.op(
                "cmp",
                "u32",
                (self.op("vget", "u32", uniform=False, reg=r.randrange(NV)), self.const("u32", 1 << 31)),
                uniform=False,
                cond="lt",
            )
            self.set_pair(P, self.op("ballot", "u64", (c,)))
            self.vset(r.randrange(NV), old)
        else:  # v_mov_b32 v, lane id (EXEC predication)
            self.vset(
                r.randrange(NV),
                self.op(
                    "add", "u32", (self.op("lane_id", "u32", uniform=False), self.sget(10)), uniform=False
                ),
            )

    def ballot_into(self, P):
        a = self.op("vget", "u32", uniform=False, reg=self.r.randrange(NV))
        c = self.op(
            "cmp",
            "u32",
            (a, self.const("u32", self.r.choice([3, 1 << 31]))),
            uniform=False,
            cond=self.r.choice(["lt", "eq", "ne"]),
        )
        self.set_pair(P, self.op("ballot", "u64", (self.op("and", "b1", (c, self.exec_()), uniform=False),)))

    def block(self, bi, term):
        self.ops = []
        if bi == 0:  # start with every mask pair a ballot's
            for P in PAIRS[:4]:
                self.ballot_into(P)
        for _ in range(self.r.randrange(2, 7)):
            self.step()
        return self.ops, term

    def cond(self):
        """An execz / vccz / scc branch condition, made as the frontend makes them."""
        k = self.r.randrange(3)
        if k == 0:
            x = self.op("or", "u32", (self.sget(EXEC_LO), self.sget(EXEC_HI)))
            return self.op("cmp", "u32", (x, self.const("u32", 0)), cond="eq")
        if k == 1:
            return self.op("cmp", "u64", (self.pair((VCC_LO, VCC_HI)), self.const("u64", 0)), cond="eq")
        return self.op("cmp", "u32", (self.sget(SCC), self.const("u32", 0)), cond="ne")

    def program(self):
        """Blocks 0..4: forward branches, a loop (block 3, three times round: s12 counts), a
        block that restores EXEC from s[2:3] (s_or_b64 exec, exec, s[2:3]), the dump block."""
        blocks = []
        for bi in range(3):
            ops, _ = self.block(bi, None)
            self.ops = ops
            c = self.cond()
            blocks.append((ops, ("branch", c, self.r.randrange(bi + 1, 4), bi + 1)))
        ops, _ = self.block(3, None)
        self.ops = ops
        n = self.op("add", "u32", (self.sget(13), self.const("u32", 1)))
        self.sset(13, n)
        c = self.op("cmp", "u32", (n, self.const("u32", 3)), cond="lt")
        blocks.append((ops, ("branch", c, 3, 4)))
        self.ops = []
        self.set_pair(
            (EXEC_LO, EXEC_HI), self.op("or", "u64", (self.pair((EXEC_LO, EXEC_HI)), self.pair((2, 3))))
        )
        t = self.const("b1", 1)
        for i, reg in enumerate(SREGS):
            self.vset(OUT_V + i, self.sget(reg), t)
        blocks.append((self.ops, ("end",)))
        # one vector instruction a block: each block visit counts EXEC's lanes at its start
        return Program(
            [Block(i, 4 * i, instrs=[0], ops=o, term=t) for i, (o, t) in enumerate(blocks)],
            [SimpleNamespace(encoding="VOP1")],
            {4 * i: i for i in range(len(blocks))},
            OUT_V + len(SREGS),
        )


def reference(prog: Program, s_in: dict, v_in: np.ndarray):
    """Evaluate the IR over 64 lanes (every value a list of 64 Python ints)."""
    S = dict(s_in)
    V = {r: [int(x) for x in v_in[r]] for r in range(v_in.shape[0])}
    val: dict = {}
    lanes = 0
    pos = {b.index: b for b in prog.blocks}
    blk = prog.blocks[0]
    steps = 0
    while True:
        steps += 1
        assert steps < 100
        lanes += bin(S.get(EXEC_LO, 0) | S.get(EXEC_HI, 0) << 32).count("1")
        for op in blk.ops:
            n, t, a = op.name, op.type, [val[x.id] for x in op.args]
            bits = 64 if t in ("u64", "i64") else 32
            mask = (1 << bits) - 1
            if n == "const":
                r = [int(op.attrs["value"]) & (1 if t == "b1" else mask)] * W
            elif n == "sget":
                r = [S.get(op.attrs["reg"], 0)] * W
            elif n == "sset":
                assert len(set(a[0])) == 1
                S[op.attrs["reg"]] = a[0][0] & 0xFFFFFFFF
                continue
            elif n == "vget":
                r = list(V.get(op.attrs["reg"], [0] * W))
            elif n == "vset":
                old = V.get(op.attrs["reg"], [0] * W)
                V[op.attrs["reg"]] = [x & 0xFFFFFFFF if m else o for x, m, o in zip(a[0], a[1], old)]
                continue
            elif n == "lane_id":
                r = list(range(W))
            elif n == "exec":
                e = S.get(EXEC_LO, 0) | S.get(EXEC_HI, 0) << 32
                r = [(e >> ln) & 1 for ln in range(W)]
            elif n == "ballot":
                b = sum((x & 1) << ln for ln, x in enumerate(a[0]))
                r = [b] * W
            elif n == "maskbit":
                r = [(x >> ln) & 1 for ln, x in enumerate(a[0])]
            elif n in ("and", "or", "xor"):
                f = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}[n]
                r = [f(x, y) & (1 if t == "b1" else mask) for x, y in zip(*a)]
            elif n == "not":
                r = [~x & mask for x in a[0]]
            elif n == "add":
                r = [(x + y) & mask for x, y in zip(*a)]
            elif n == "lo32":
                r = [x & 0xFFFFFFFF for x in a[0]]
            elif n == "hi32":
                r = [x >> 32 for x in a[0]]
            elif n == "pack64":
                r = [x | y << 32 for x, y in zip(*a)]
            elif n == "popcount":
                r = [bin(x).count("1") for x in a[0]]
            elif n == "cvt":
                r = [x & 0xFFFFFFFF for x in a[0]]
            elif n == "select":
                r = [y if c else z for c, y, z in zip(*a)]
            elif n == "cmp":
                f = {
                    "lt": lambda x, y: x < y,
                    "gt": lambda x, y: x > y,
                    "eq": lambda x, y: x == y,
                    "ne": lambda x, y: x != y,
                }[op.attrs["cond"]]
                r = [int(f(x, y)) for x, y in zip(*a)]
            else:
                raise AssertionError(n)
            val[op.out.id] = r
        t = blk.term
        if t[0] == "end":
            return V, lanes
        if t[0] == "jump":
            blk = pos[t[1]]
            continue
        c = val[t[1].id]
        assert len(set(c)) == 1, "a branch condition must be uniform"
        blk = pos[t[2] if c[0] else t[3]]


HOST = r"""
#include <thread>
#include <mutex>
#include <condition_variable>
#include <chrono>
static bool wl_hung = false;
struct WlBar {
  int n; int count = 0; unsigned gen = 0; std::mutex m; std::condition_variable cv;
  explicit WlBar(int k) : n(k) {}
  void wait() {
    std::unique_lock<std::mutex> l(m);
    const unsigned g = gen;
    if (++count == n) { count = 0; gen++; cv.notify_all(); return; }
    if (!cv.wait_for(l, std::chrono::seconds(2), [&] { return gen != g; })) wl_hung = true;
  }
};
static WlBar *wl_warp[2], *wl_wave;
static u32 wl_slot[64];
static u32 wl_bars[64];                /* named barriers each lane met, in order (hashed) */
static thread_local u32 wl_lane_;
static u32 __ballot_sync(u32, bool p) {
  const u32 w = wl_lane_ >> 5;
  wl_slot[wl_lane_] = p; wl_warp[w]->wait();
  u32 r = 0; for (u32 k = 0; k < 32; k++) r |= (wl_slot[32 * w + k] & 1u) << k;
  wl_warp[w]->wait();
  return r;
}
static void wl_bar64(u32) { wl_bars[wl_lane_] = wl_bars[wl_lane_] * 31u + 1u; wl_wave->wait(); }
static bool wl_any64(bool c, u32) {
  wl_bars[wl_lane_] = wl_bars[wl_lane_] * 31u + 2u;
  wl_slot[wl_lane_] = c; wl_wave->wait();
  bool r = false; for (u32 k = 0; k < 64; k++) r |= wl_slot[k] != 0u;
  wl_wave->wait();
  return r;
}
struct WlHostCtx { u32* status; u64 budget; };
static u64 wl_check_(u64) { return 1ull << 40; }
#define wl_flag(C, ...) ((void)0)
#define wl_lanes(C, n) (licnt += (n))
static u32 wl_xs[2 * 132];
"""

LANE_FN = r"""
static void wl_lane_{k}(u32 lane_, const u32* sin, const u32* vin, u32* vout, u32* lcout) {{
  wl_lane_ = lane_;
  const u32 lane = lane_, wv = 0u;
  u32* X = wl_xs; u32 xo = 0u;
  WlHostCtx C{{nullptr, 0ull}}; (void)C;
{decl}
  u64 icnt = 0ull, licnt = 0ull;
  u32 ic = 0u, lc = 0u, rl = 1u << 20;
{body}
WL_STOP:
WL_DONE:
{out}
  lcout[lane] = (u32)(lc + licnt);
}}
extern "C" int wl_run_{k}(const u32* sin, const u32* vin, u32* vout, u32* lcout, u32* bars) {{
  WlBar w0(32), w1(32), wave(64); wl_warp[0] = &w0; wl_warp[1] = &w1; wl_wave = &wave;
  wl_hung = false;
  for (u32 k = 0; k < 64; k++) wl_bars[k] = 0u;
  for (u32 k = 0; k < 2 * 132; k++) wl_xs[k] = 0xdeadbeefu;
  std::thread th[64];
  for (u32 l = 0; l < 64; l++) th[l] = std::thread(wl_lane_{k}, l, sin, vin, vout, lcout);
  for (u32 l = 0; l < 64; l++) th[l].join();
  for (u32 k = 0; k < 64; k++) bars[k] = wl_bars[k];
  return wl_hung ? 1 : 0;
}}
"""

NPROG = 40


def _lane_fn(k, prog):
    from wavelift.backends.cuda.codegen import Lowering

    low = Lowering(prog, W, "lane", 0, 0)
    body = []
    for i, e in enumerate(low.sync_entries()):
        body += low._lower(i, e)[0]
    text = "\n".join(body)
    text = text.replace(low.wsync(), "wl_bar64(wv + 1u);")
    assert "asm" not in text and "__shfl" not in text, "an op this host check does not emulate"
    decl = "\n".join(
        [f"  u32 s{r} = sin[{r}];" for r in low.sregs]
        + [f"  u32 v{r} = vin[{r} * 64u + lane];" for r in low.vregs]
    )
    out = "\n".join(f"  vout[{r} * 64u + lane] = v{r};" for r in low.vregs)
    return LANE_FN.format(k=k, decl=decl, body=text, out=out), low


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    host_build.gxx()
    from wavelift.backends.host import COMPILE_FLAGS, prelude_semantics

    progs = [Gen(seed).program() for seed in range(NPROG)]
    fns = [_lane_fn(k, p) for k, p in enumerate(progs)]
    src = prelude_semantics() + HOST + "".join(f for f, _ in fns)
    lib = host_build.load(tmp_path_factory.mktemp("wave64"), "w64", src, (*COMPILE_FLAGS, "-O1", "-pthread"))
    return lib, progs, [low for _, low in fns]


def _inputs(seed):
    rng = np.random.default_rng(seed)
    s = {r: int(rng.integers(0, 1 << 32)) for r in SREGS}
    s[SCC] &= 1
    s[13] = 0
    # EXEC: all lanes, or a partial wave, or holes in either half
    s[EXEC_LO], s[EXEC_HI] = [
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0xFFFFFFFF, 0x0000FFFF),
        (0x0F0F0F0F, 0),
        (0, 0x80000001),
        (int(rng.integers(0, 1 << 32)), int(rng.integers(0, 1 << 32))),
    ][seed % 5]
    v = rng.integers(0, 1 << 32, size=(OUT_V + len(SREGS), W), dtype=np.uint64).astype(np.uint32)
    v[:NV] = np.where(rng.random((NV, W)) < 0.3, 3, v[:NV])  # some equal to the compare constants
    return s, v


@pytest.mark.parametrize("k", range(NPROG))
def test_wave64_masks_match_the_ir(programs, k):
    lib, progs, lows = programs
    prog = progs[k]
    s, v = _inputs(k)
    ref, lanes = reference(prog, s, v)
    low = lows[k]
    sin = np.zeros(256, np.uint32)
    for r, x in s.items():
        sin[r] = x
    vin = np.zeros((max(low.vregs) + 1, W), np.uint32)
    vin[: v.shape[0]] = v[: vin.shape[0]]
    vout = np.zeros_like(vin)
    lc = np.zeros(W, np.uint32)
    bars = np.zeros(W, np.uint32)
    P = ctypes.c_void_p
    hung = getattr(lib, f"wl_run_{k}")(
        P(sin.ctypes.data), P(vin.ctypes.data), P(vout.ctypes.data), P(lc.ctypes.data), P(bars.ctypes.data)
    )
    assert hung == 0, "a wave barrier was not met by all 64 lanes"
    assert len(set(bars.tolist())) == 1, "the lanes met different sequences of wave barriers"
    for i, reg in enumerate(SREGS):
        got, want = vout[OUT_V + i].tolist(), ref[OUT_V + i]
        assert got == want, (
            k,
            f"s{reg}",
            [hex(x) for x in got[:2] + got[32:34]],
            [hex(x) for x in want[:2] + want[32:34]],
        )
    for r in range(NV):
        if r in low.vregs:  # (a VGPR the program never names is not in the module)
            assert vout[r].tolist() == ref[r], (k, f"v{r}")
    # lane counts are per warp: each warp's leader adds its own (kernel_source's stats)
    assert int(lc[0]) + int(lc[32]) == lanes, (int(lc[0]), int(lc[32]), lanes)


def test_the_random_programs_keep_masks_lazy(programs):
    """The programs exercise what they are meant to: ballots kept as halves (no exchange at the
    ballot), zero tests by bar.red.or, and whole values fetched where they are used."""
    _, progs, _ = programs
    srcs = [_lane_fn(k, p)[0] for k, p in enumerate(progs)]
    joined = "\n".join(srcs)
    assert joined.count("__ballot_sync(WL_FULL") >= NPROG
    assert "<< (lane & 32u))" in joined  # a ballot is this warp's half
    assert joined.count("wl_any64(") >= NPROG // 2  # zero tests
    assert joined.count("_x = X[xo + 128u]") >= NPROG // 2  # whole u32 halves fetched
    assert joined.count("_x = (u64)X[xo + 128u]") >= 1  # whole u64 masks fetched


def _block(src: str, b: int) -> str:
    return src.split(f"\nB{b}: {{\n", 1)[1].split("\n}\n", 1)[0]


def test_lazy_registers_are_whole_where_a_phase_or_setpc_enters(monkeypatch):
    """Blocks entered after s_barrier (where the wave stands, decision 0047, or from the phase
    switch) or by s_setpc start with whole registers: a lazy mask half is fetched before the
    barrier, the s_setpc, and a goto into such a block; a plain goto keeps it lazy."""
    from wavelift.backends.cuda.codegen import kernel_source

    def src(term0, term1=("end",), setpc=False):
        g = Gen(0)
        g.ops = []
        g.ballot_into((EXEC_LO, EXEC_HI))
        ops0 = g.ops
        if term0[0] == "setpc":
            term0 = ("setpc", g.const("u64", 4))
        g.ops = []
        t1 = term1
        if term1[0] == "setpc":
            t1 = ("setpc", g.const("u64", 8))
        blocks = [
            Block(0, 0, ops=ops0, term=term0),
            Block(1, 4, ops=g.ops, term=t1),
            Block(2, 8, ops=[], term=("end",)),
        ]
        return kernel_source(Program(blocks, [], {0: 0, 4: 1, 8: 2}, 8), 64, "lane", 0, 0)

    flush = "s126 = X[xo + 0u]; s127 = X[xo + 1u];"
    s = src(("barrier", 1))
    assert flush in _block(s, 0) and _block(s, 0).index(flush) < _block(s, 0).index("__syncthreads_and(0)")
    monkeypatch.setenv("WAVELIFT_CUDA_BARRIERS", "phase")
    s = src(("barrier", 1))
    assert flush in _block(s, 0) and _block(s, 0).index(flush) < _block(s, 0).index("goto WL_PARK")
    monkeypatch.delenv("WAVELIFT_CUDA_BARRIERS")
    s = src(("setpc", None))
    assert flush in _block(s, 0) and _block(s, 0).index(flush) < _block(s, 0).index("switch")
    s = src(("jump", 1), ("setpc", None))  # block 1 is an s_setpc target
    assert flush in _block(s, 0) and _block(s, 0).index(flush) < _block(s, 0).index("goto B1")
    s = src(("jump", 1))  # a plain goto: EXEC stays this warp's half
    assert "X[" not in _block(s, 0) and "X[" not in _block(s, 1)


def test_vadd_wave64_exec_ballot_is_not_exchanged(monkeypatch):
    """vadd w64 (v_cmp, s_and_saveexec, s_cbranch_execz): the EXEC mask stays each warp's own
    half -- no exchange-area round for it; the execz branch is one bar.red.or; the vector
    block's EXEC predication and lane counts read the own half (the kernel with its per-block
    budget checks: WAVELIFT_CUDA_BUDGET=checked)."""
    import sys

    monkeypatch.setenv("WAVELIFT_CUDA_BUDGET", "checked")

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from test_cuda_backend import _named, _untranslated_names

    from wavelift.backends.cuda.codegen import kernel_source

    for name in _untranslated_names():
        if "vadd" not in name or "basic-O2-w64" not in name:
            continue
        name, prog, cfg, base, _ = _named(name)
        src = kernel_source(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base)
        entry = _block(src, prog.blocks[0].index)
        assert "__ballot_sync(WL_FULL" in entry and "X[xo + 128u" not in entry, name
        assert entry.count("wl_any64(") == 2, name  # the execz test, the budget check's
        # every exchange-area write left in the module is a uniform load's broadcast
        writes = [ln for ln in src.splitlines() if "X[xo +" in ln and "] = " in ln.split("X[xo +", 1)[1]]
        assert all("wl_gload(" in ln for ln in writes), (name, writes)
        return
    pytest.fail("no basic-O2 w64 vadd fixture")
