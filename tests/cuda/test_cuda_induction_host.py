"""Global loads of a one-block loop at base + stride * r tested once where the loop is entered
(WAVELIFT_CUDA_HOIST=induction; backends/cuda/induction.py; decision 0047's amendment h127).

Checked without a GPU:

* the analysis on hand-built loops: the histogram's shape (a 64-bit address from a register
  pair shifted and added with the guest's carry chain, the exit narrowing EXEC by ``n <= r'``)
  is found; a bound on another register, a base the loop writes, a non-constant shift, a carry
  of another add, a signed compare, an exit that does not narrow EXEC, a load under another
  mask, a misaligned stride and wave64 are not;
* its claim on lds.cl's histogram loop, against a one-lane evaluation of the block's ops on
  random and edge register values (carries, wraps): the load's address is the plan's
  ``base + stride * r`` and a lane that stays in EXEC has ``r' < n``;
* exactness through the host: a loop of that shape lowered by codegen with the setting and
  without, compiled by g++ with kernel.h's window code (tests/cuda/test_cuda_memory_host's
  rig), run over windows where the whole range is inside the guess, partly outside it (escapes),
  misaligned, wrapping past 2^64, with a stale guess and with none: the loaded sum, the index,
  the escapes (each one's instruction, address and kind), the written map and the instruction
  count are the same, and the direct copy runs exactly where every address the loop reaches
  passes the guess's test (a Python brute force);
* the source: histogram holds the test before its loop, the tested block as before, and a copy
  whose load is direct; matmul16, stencil5, reduce1024 and scan256 (no such load) are the
  HOIST=loops source byte for byte; NVRTC compiles it (where installed); a split build keeps
  the copy in its block's part (the module entry's name follows the setting: test_cuda_stored_host).

On a GPU: devjobs/h127.sh (the CUDA tests with the setting on, the LDS kernels against NumPy
among them; cuda_costs.py's h127 variant)."""

from __future__ import annotations

import ctypes
import pathlib
import random
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
for p in (ROOT / "bench", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from wavelift.backends.cuda import induction  # noqa: E402
from wavelift.ir.program import EXEC_LO, Block, Op, Program, Value  # noqa: E402

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


# ------------------------------------------------------------------ hand-built loops
class _G:
    """ops of one block; ``mask`` is its EXEC bit"""

    def __init__(self):
        self.n, self.ops = 0, []
        self.mask = self.op("exec", "b1")

    def op(self, name, t, args=(), uniform=False, **attrs):
        self.n += 1
        out = Value(self.n, "b1" if name in ("exec", "cmp") else t, uniform)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), out, 0))
        return out

    def c(self, k, t="u32"):
        return self.op("const", t, uniform=True, value=k)

    def sget(self, r):
        return self.op("sget", "u32", uniform=True, reg=r)

    def vget(self, r):
        return self.op("vget", "u32", reg=r)

    def vset(self, r, x, mask=None):
        self.ops.append(Op("vset", "u32", (x, self.mask if mask is None else mask), {"reg": r}, None, 0))

    def sset(self, r, x):
        self.ops.append(Op("sset", "u32", (x,), {"reg": r}, None, 0))


def _loop_ops(how: str = "") -> tuple[_G, Value]:
    """The histogram's loop: word = *((s1:s0) + ((v1:v0) << 2)); v7 += word; v0 += s4; lanes
    with s9 <= v0 leave EXEC; -> (ops, the branch's condition: EXEC not empty).  ``how``
    breaks one thing."""
    g = _G()
    v0, v1 = g.vget(0), g.vget(1)
    c = 1 if how == "misaligned stride" else 2  # ((v1:v0) << c: a stride of 2 for 4 bytes)
    sh = g.vget(3) if how == "variable shift" else g.c(c)
    lo = g.op("shl", "u32", (v0, sh))
    hi = g.op("or", "u32", (g.op("shl", "u32", (v1, g.c(c))), g.op("shr", "u32", (v0, g.c(32 - c)))))
    s0 = g.sget(0)
    low = g.op("add", "u32", (s0, lo))
    if how == "carry of another add":
        other = g.op("add", "u32", (s0, g.vget(2)))
        carry = g.op("cmp", "u32", (other, g.vget(2)), cond="lt")
    else:
        carry = g.op("cmp", "u32", (low, lo), cond="lt")
    high = g.op(
        "add",
        "u32",
        (g.op("add", "u32", (g.sget(1), hi)), g.op("lanes", "b1", (g.op("and", "b1", (carry, g.mask)),))),
    )
    addr = g.op("pack64", "u64", (low, high))
    if how == "u64 shift":  # (the same address as a u64 shift and add of the register pairs)
        pair = g.op("pack64", "u64", (v0, v1))
        addr = g.op(
            "add", "u64", (g.op("pack64", "u64", (s0, g.sget(1))), g.op("shl", "u64", (pair, g.c(2))))
        )
    lmask = g.op("cmp", "u32", (g.vget(2), g.c(0)), cond="ne") if how == "another mask" else g.mask
    w = g.op("load", "u32", (addr, lmask), space="global", nbytes=4, words=1)
    g.vset(7, g.op("add", "u32", (g.vget(7), g.op("word", "u32", (w,), k=0))))
    if how == "base written":
        g.sset(1, g.op("add", "u32", (g.sget(1), g.c(1))))
    g.vset(0, g.op("add", "u32", (g.sget(4), v0)))
    r = g.vget(2) if how == "bound on another register" else g.vget(0)
    ctype = "i32" if how == "signed compare" else "u32"
    gone = g.op("cmp", ctype, (g.sget(9), r), cond="le")
    left = g.op("lo32", "u32", (g.op("ballot", "u64", (g.op("and", "b1", (gone, g.mask)),)),))
    if how == "exec kept":
        new = g.sget(EXEC_LO)
    elif how == "exec not from its entry":
        new = g.op("not", "u32", (left,))
    else:
        new = g.op("and", "u32", (g.sget(EXEC_LO), g.op("not", "u32", (left,))))
    g.sset(EXEC_LO, new)
    return g, g.op("cmp", "u32", (g.sget(EXEC_LO), g.c(0)), cond="ne")


def _program(how: str = "") -> Program:
    """block 0: the loop (back to itself while EXEC holds a lane), block 1: the end"""
    g, cond = _loop_ops(how)
    blocks = [
        Block(0, 0, instrs=[0, 1, 2, 3], ops=g.ops, term=("branch", cond, 0, 1)),
        Block(1, 16, instrs=[4]),
    ]
    return Program(blocks, [SimpleNamespace(encoding="VOP2")] * 5, {0: 0, 16: 1}, 5)


def _find(prog, wave=32):
    return induction.find(prog, wave, lambda op: True)


@pytest.mark.parametrize("how", ["", "u64 shift"])
def test_histogram_shape_is_found(how):
    plans = _find(_program(how))
    assert list(plans) == [0] and len(plans[0]) == 1
    p = plans[0][0]
    # (s1:s0) + ((v1:v0) << 2) = s0 + 2^32 s1 + 2^34 v1 + 4 v0
    assert (p.reg, p.stride) == (0, 4)
    assert p.base == (0, ((("s", 0), 1), (("s", 1), 1 << 32), (("v", 1), 1 << 34)))
    assert p.bound == (0, ((("s", 9), 1),))


@pytest.mark.parametrize(
    "how",
    [
        "bound on another register",
        "base written",
        "variable shift",
        "carry of another add",
        "signed compare",
        "exec kept",
        "exec not from its entry",
        "another mask",
        "misaligned stride",
    ],
)
def test_other_shapes_keep_their_test(how):
    assert _find(_program(how)) == {}


def test_wave64_and_loops_of_more_blocks_are_not_planned():
    assert _find(_program(), 64) == {}
    prog = _program()
    prog.blocks[0].term = ("branch", prog.blocks[0].term[1], 1, 1)  # (no back edge)
    assert _find(prog) == {}


# ------------------------------------------------------------------ one lane of a block, evaluated
def _run_block(blk, regs, mem):
    """One lane (lane 0) of ``blk``'s ops: regs {("s"|"v", r): u32}; mem(address) -> the loaded
    word.  -> (the loads' addresses, the registers after)."""
    regs, val, loads = dict(regs), {}, []

    def v(x):
        return val[x.id]

    for op in blk.ops:
        n, a = op.name, op.args
        t = op.type
        m = M64 if t in ("u64", "i64") else 1 if t == "b1" else M32
        r = None
        if n == "const":
            r = int(op.attrs.get("value_np", op.attrs.get("value"))) & m
        elif n in ("vget", "sget"):
            r = regs.get((n[0], op.attrs["reg"]), 0)
        elif n == "vset":
            if v(a[1]):
                regs[("v", op.attrs["reg"])] = v(a[0]) & M32
        elif n == "sset":
            regs[("s", op.attrs["reg"])] = v(a[0]) & M32
        elif n == "exec":
            r = regs.get(("s", EXEC_LO), 0) & 1
        elif n == "add":
            r = (v(a[0]) + v(a[1])) & m
        elif n in ("shl", "shr"):
            k = v(a[1]) & (63 if m == M64 else 31)
            r = (v(a[0]) << k) & m if n == "shl" else v(a[0]) >> k
        elif n in ("or", "and"):
            r = (v(a[0]) | v(a[1])) if n == "or" else (v(a[0]) & v(a[1]))
        elif n == "not":
            r = ~v(a[0]) & m
        elif n == "cmp":
            x, y = v(a[0]), v(a[1])
            r = int(
                {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[
                    op.attrs["cond"]
                ]
            )
        elif n in ("lanes", "ballot", "word"):
            r = v(a[0])
        elif n == "lo32":
            r = v(a[0]) & M32
        elif n == "pack64":
            r = v(a[0]) | (v(a[1]) << 32)
        elif n == "load":
            r = 0
            if v(a[1]):
                loads.append(v(a[0]))
                r = mem(v(a[0]))
        elif n == "atomic":
            r = 0
        else:
            raise AssertionError(f"op {n} not evaluated")
        if op.out is not None:
            val[op.out.id] = r
    return loads, regs


def _affine(e, regs):
    return (e[0] + sum(k * regs.get(a, 0) for a, k in e[1])) & M64


def _histogram_loop():
    import gpu_check as GC
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda.codegen import baked_params, lowered

    mem, cfg, *_ = GC.lds_dispatch("histogram", small=True)
    prog, _ = translate_dispatch(mem, cfg)
    prog = lowered(prog, cfg.wave_size, baked_params(cfg))
    plans = _find(prog)
    assert len(plans) == 1
    ((bi, ps),) = plans.items()
    return next(b for b in prog.blocks if b.index == bi), ps[0]


def _edge_u32(rng):
    return rng.choice([0, 1, 2, 3, M32, M32 - 1, M32 - 3, 1 << 31, (1 << 30) - 1, rng.getrandbits(32)])


@pytest.mark.parametrize("which", ["lds.cl", "built", "built u64 shift"])
def test_plan_against_the_ops(which):
    """lds.cl's histogram and the hand-built loops: the load's address is base + stride * r in
    the lane, and a lane that stays in EXEC has r' < n, on random and edge register values (a
    wrong stride, base or bound in the plan fails here)."""
    if which == "lds.cl":
        blk, p = _histogram_loop()
    else:
        prog = _program(which[6:])
        blk, p = prog.blocks[0], _find(prog)[0][0]
    regs_used = sorted({(op.name[0], op.attrs["reg"]) for op in blk.ops if op.name in ("vget", "sget")})
    rng = random.Random(127)
    stayed = 0
    for _ in range(3000):
        regs = {k: _edge_u32(rng) for k in regs_used}
        regs[("s", EXEC_LO)] = 1
        loads, after = _run_block(blk, regs, lambda a: rng.getrandbits(32))
        assert loads == [(_affine(p.base, regs) + p.stride * regs[("v", p.reg)]) & M64]
        if after[("s", EXEC_LO)] & 1:
            stayed += 1
            assert after[("v", p.reg)] < _affine(p.bound, regs) & M32
    assert stayed > 100


# ------------------------------------------------------------------ exactness on the host
DRIVER = r"""
extern "C" void wl_loop_{k}(const u64* ws, const u64* we, const i64* wo, u32 n,
                         const u64* gb, const u64* gl, const i64* go, u8* arena, u8* written,
                         const u32* in, u64* out, u32* escs) {{
  WL_TEST_SETUP();
  P[{pb}] = 0xffffffffu; P[{pb} + 1] = 0xffffffffu;
  wl_direct_reads = 0ull;
  const u32 lane = 0u, wv = 0u; (void)lane; (void)wv;
{decl}
  s0 = in[0]; s1 = in[1]; v1 = in[2]; v0 = in[3]; s4 = in[4]; s9 = in[5]; s{exec} = 1u;
  u64 icnt = 0ull; u32 ic = 0u, lc = 0u, rl = 1u << 20;
{body}
WL_STOP:
WL_DONE:
  out[0] = v7; out[1] = v0; out[2] = icnt + ic; out[3] = stats[2]; out[4] = wl_direct_reads;
  for (u32 k = 0; k < 8u * 16u; k++) escs[k] = esc[k];
}}
"""

# one lane's warp; the direct copy's reads counted (WL_GLOBAL_AT is at its load alone: kernel.h's
# own use was expanded above, in wl_gload_b)
HOST = r"""
static u64 wl_direct_reads;
#undef WL_GLOBAL_AT
#define WL_GLOBAL_AT(p) ((void)++wl_direct_reads)
static inline unsigned __ballot_sync(unsigned, int p) { return p ? 1u : 0u; }
static inline int __all_sync(unsigned, int p) { return p != 0; }
static inline void __syncwarp() {}
"""


LOOPS = {"pair": "", "u64": "u64 shift"}  # (hand-built shapes: _loop_ops's ``how``)


def _loop_source(k, monkeypatch, hoist, how):
    from wavelift.backends.cuda.codegen import P_BUDGET, Lowering

    monkeypatch.setenv("WAVELIFT_CUDA_HOIST", hoist)
    low = Lowering(_program(how), 32, "lane", 0, 0)
    body = []
    for i, e in enumerate(low.sync_entries()):
        body += low._versioned(i, e) if low.p.blocks[i].index in low.induction else low._lower(i, e)[0]
    assert bool(low.induction) == (hoist == "induction")
    regs = sorted(set(low.sregs) | {0, 1, 4, 9})
    decl = "\n".join(f"  u32 s{r} = 0u; (void)s{r};" for r in regs)
    decl += "\n" + "\n".join(f"  u32 v{r} = 0u; (void)v{r};" for r in sorted(set(low.vregs) | {7}))
    decl += "\n" + "\n".join(f"  u8* wl_gp{j} = wl_gbase(C, {j}u);" for j in sorted(low.hoisted))
    return DRIVER.format(k=k, pb=P_BUDGET, decl=decl, body="\n".join(body), exec=EXEC_LO)


@pytest.fixture(scope="module")
def looplib(tmp_path_factory):
    from test_cuda_memory_host import build_memory_lib

    mp = pytest.MonkeyPatch()
    try:
        drivers = "".join(
            _loop_source(f"tested_{k}", mp, "loops", how) + _loop_source(f"hoisted_{k}", mp, "induction", how)
            for k, how in LOOPS.items()
        )
    finally:
        mp.undo()
    return build_memory_lib(tmp_path_factory, "induction", HOST + drivers)


def _run(lib, k, tables, regs):
    ws, we, wo, gb, gl, go, arena_n = tables
    arena = np.arange(arena_n, dtype=np.uint32).astype(np.uint8)  # (bytes to sum: not all 0)
    arena = (arena * 37 + 11).astype(np.uint8)
    written = np.zeros(arena_n, np.uint8)
    out = np.zeros(5, np.uint64)
    escs = np.zeros(8 * 16, np.uint32)
    fn = getattr(lib, f"wl_loop_{k}")
    rin = np.array(regs, np.uint32)
    args = [ws, we, wo, gb, gl, go, arena, written, rin, out, escs]
    p = [a.ctypes.data_as(ctypes.c_void_p) for a in args]
    fn(*p[:3], ctypes.c_uint32(len(ws)), *p[3:])
    return [int(x) for x in out], escs.copy(), written


def _tables(win_start, win_len, guess):
    """one window [win_start, win_start + win_len) at arena offset 8 (congruent mod 8); slot 0's
    guess: "right" (that window), "stale" (another range), "none", "short" (the window less 8)"""
    ws = np.array([win_start], np.uint64)
    we = np.array([(win_start + win_len) & M64], np.uint64)
    off = 8 + (win_start % 8)
    wo = np.array([off], np.int64)
    n = 64
    gb, gl, go = np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.int64)
    nb = 4
    if guess in ("right", "short"):
        length = win_len - (8 if guess == "short" else 0)
        gb[0], gl[0], go[0] = win_start, max(length - nb + 1, 0), off
    elif guess == "stale":
        gb[0], gl[0], go[0] = (win_start + (1 << 20)) & M64, win_len - nb + 1, off
    return ws, we, wo, gb, gl, go, off + win_len + 16


def _direct_expected(regs, tables):
    """The guard's rule by brute force: every address the loop reaches (the first, and base +
    4 i for i < n) passes wl_direct's test against slot 0's guess."""
    s0, s1, v1, v0, _s4, s9 = regs
    _, _, _, gb, gl, *_ = tables
    base = (s0 + (s1 << 32) + (v1 << 34)) & M64
    addrs = {(base + 4 * v0) & M64} | {(base + 4 * i) & M64 for i in range(s9)}
    return all(((a - int(gb[0])) & M64) < int(gl[0]) and a % 4 == 0 for a in addrs)


@pytest.mark.parametrize("shape", list(LOOPS))
def test_loop_is_exact_on_the_host(looplib, shape):
    rng = random.Random(1270)
    cases = []
    for guess in ("right", "stale", "none", "short"):
        for start in (0x1000, 0x7FFF_F000, (1 << 64) - 0x100, 0x2000 + 2):
            for s9 in (0, 1, 5, 40):
                for v0, s4 in ((0, 1), (3, 4), (s9 + 2, 1), (M32 - 1, 3)):
                    for v1 in (0, 1):
                        base = (start - (v1 << 34)) & M64
                        s0, s1 = base & M32, base >> 32
                        if rng.random() < 0.2:  # (a base off the window: escapes)
                            s0 = (s0 + 4 * rng.choice([-3, 1, 200])) & M32
                        cases.append((guess, start, (s0, s1, v1, v0, s4, s9)))
    direct = tested_only = escaped = 0
    for guess, start, regs in cases:
        # (v1 << 34 moves the base: the window sits where base + 4 i lands)
        win_len = 4 * 48
        tables = _tables(start, win_len, guess)
        a = _run(looplib, f"tested_{shape}", tables, regs)
        b = _run(looplib, f"hoisted_{shape}", tables, regs)
        assert a[0][:4] == b[0][:4], (guess, hex(start), regs, a[0], b[0])
        assert (a[1] == b[1]).all() and (a[2] == b[2]).all(), (guess, hex(start), regs)
        want = _direct_expected(regs, tables)
        iters = b[0][2] // 4  # (4 instructions an iteration)
        assert b[0][4] == (iters if want else 0), (guess, hex(start), regs, b[0], want)
        assert a[0][4] == 0
        direct += want and iters > 0
        tested_only += not want
        escaped += a[0][3] > 0
    assert direct > 20 and tested_only > 20 and escaped > 10, (direct, tested_only, escaped)


# ------------------------------------------------------------------ the source
def _source(name, monkeypatch, hoist):
    from test_cuda_backend import lds_kernel_source

    return lds_kernel_source(
        name,
        monkeypatch,
        {"WAVELIFT_CUDA_HOIST": hoist, "WAVELIFT_CUDA_WAVESYNC": "spaces", "WAVELIFT_CUDA_LDSBASE": "kept"},
    )


def test_histogram_source(monkeypatch):
    """The test where the loop is entered, the tested block as HOIST=loops has it (its own
    label for the back edge), and the copy: the same text but the load, direct from the hoisted
    base with no window test; NVRTC compiles it."""
    from test_cuda_backend import _nvrtc_problem

    from wavelift.backends.cuda.compile import check_source

    old, new = _source("histogram", monkeypatch, "loops"), _source("histogram", monkeypatch, "induction")
    m = re.search(r"\nB(\d+): \{\n(  \{ bool ok_ = true;\n.*?goto B\1_h; \}\n)B\1_t: ;\n", new, re.S)
    assert m, "no test before the loop"
    b, guard = m.group(1), m.group(2)
    # (each range tested by wl_span, the test a group of a block's accesses shares)
    assert guard.count("wl_span(C, b_, ") == 2 and "__all_sync(WL_FULL" in guard
    tested = new[m.end() : new.index(f"\nB{b}_h: {{\n")]
    copy = new[new.index(f"\nB{b}_h: {{\n") + len(f"\nB{b}_h: {{\n") :].split("\n}\n")[0]
    # back to HOIST=loops: no test, no label, no copy
    back = new.replace(guard, "").replace(f"B{b}_t: ;\n", "").replace(f"goto B{b}_t;", f"goto B{b};")
    back = back.replace(f"\nB{b}_h: {{\n{copy}\n}}\n", "\n")
    assert back == old
    loads_t = [x for x in tested.splitlines() if "wl_gload" in x]
    loads_c = [x for x in copy.splitlines() if "wl_gread_at" in x]
    assert len(loads_t) == 1 and len(loads_c) == 1 and "wl_gload" not in copy and "wl_res" not in copy
    j = re.search(r"wl_gload_b\(C, wl_gp(\d+), ", loads_t[0]).group(1)
    assert f"wl_gp{j} + " in loads_c[0] and guard.count(f"ull, {j}u, 4ull, &p_)") == 2
    assert (
        tested.replace(loads_t[0], "").replace(f"goto B{b}_t;", "")
        == copy.replace(loads_c[0], "").replace(f"goto B{b}_h;", "") + "\n}"
    )
    if _nvrtc_problem() is None:
        check_source(new, "sm_90")


@pytest.mark.parametrize("name", ["matmul16", "stencil5", "reduce1024", "scan256"])
def test_no_such_load_no_change(name, monkeypatch):
    assert _source(name, monkeypatch, "induction") == _source(name, monkeypatch, "loops")


def test_split_keeps_the_copy_in_its_part(monkeypatch):
    from wavelift.backends.cuda.split import split_source

    src = _source("histogram", monkeypatch, "induction")
    units = split_source(src, part_bytes=512)
    assert units is not None and len(units) > 2
    (part,) = [u for u in units[1:] if "_h: {" in u]
    b = re.search(r"goto B(\d+)_h;", part).group(1)
    assert f"case {b}: goto B{b};" in part and f"\nB{b}_h: {{" in part and f"B{b}_t: ;" in part
    body = part[part.index("wl_part_") :]
    assert body.index("WlCtx& C = *S->C;") < body.index("u8* wl_gp") < body.index("B" + b + "_h: {")


@pytest.mark.cuda
@pytest.mark.parametrize("prove", [None, "on"])
def test_histogram_on_cuda_with_its_guesses(prove, monkeypatch, tmp_path):
    """On a GPU: the histogram dispatched three times on one module -- the first without window
    guesses (unless WAVELIFT_CUDA_PROVE=on: the guesses globalrange proves), so the loop's test
    fails and the tested block runs; the later ones with the guesses the first left, so the copy
    with the direct load runs -- each equal to the NumPy reference."""
    import gpu_check as G
    from test_cuda_backend import _needs_gpu

    from wavelift.run.execute import execute_dispatch

    _needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_HOIST", "induction")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    if prove:
        monkeypatch.setenv("WAVELIFT_CUDA_PROVE", prove)
    cache: dict = {}
    for _ in range(3):
        mem, cfg, out, nbytes, native = G.lds_dispatch("histogram", small=True)
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None, r.refusal
        got = np.frombuffer(mem.read(out, nbytes), np.uint32)
        assert (got == native["want"]).all()


# ------------------------------------------------------------------ the lane loop's exit, read once
def _exit_block(ys, late_bit=False):
    """A block whose EXEC_LO write is EXEC & ~Y1 & ~Y2 ... (nested to the left), Yi the ballot of
    compare i and-ed with the lane's EXEC bit (``late_bit``: the last one's bit read after the
    write); -> (block, the compares)."""
    g = _G()
    e = g.sget(EXEC_LO)
    cmps = [g.op("cmp", "u32", (g.sget(9 + i), g.vget(i)), cond="le") for i in range(ys)]
    new = e
    for i, c in enumerate(cmps):
        bit = g.op("lanes", "b1", (g.mask,))
        if late_bit and i == ys - 1:
            g.sset(EXEC_LO, new)  # (an earlier write: the bit read after it is not the entry's)
            bit = g.op("exec", "b1")
        y = g.op("lo32", "u32", (g.op("ballot", "u64", (g.op("and", "b1", (c, bit)),)),))
        new = g.op("and", "u32", (new, g.op("not", "u32", (y,))))
    g.sset(EXEC_LO, new)
    return Block(0, 0, ops=g.ops, term=("branch", g.c(1, "b1"), 0, 1)), cmps


def test_a_ballot_after_an_exec_write_bounds_no_lane():
    """A ballot made after an earlier EXEC write in the block (of a compare alone: no EXEC bit
    to read) holds only the lanes that EXEC kept: a lane of the entry EXEC outside it is not in
    Y, so the exit's ``entry EXEC & ~Y`` keeps it whatever its compare -- that compare bounds no
    lane (the earlier compares still do)."""
    g = _G()
    e = g.sget(EXEC_LO)
    c0 = g.op("cmp", "u32", (g.sget(9), g.vget(0)), cond="le")
    y0 = g.op("lo32", "u32", (g.op("ballot", "u64", (c0,)),))
    g.sset(EXEC_LO, g.op("and", "u32", (e, g.sget(20))))  # (a narrower EXEC for the next ballot)
    c1 = g.op("cmp", "u32", (g.sget(10), g.vget(1)), cond="le")
    y1 = g.op("lo32", "u32", (g.op("ballot", "u64", (c1,)),))
    y = g.op("or", "u32", (y0, y1))
    g.sset(EXEC_LO, g.op("and", "u32", (e, g.op("not", "u32", (y,)))))
    b = Block(0, 0, ops=g.ops, term=("branch", g.c(1, "b1"), 0, 1))
    assert [c.out for c in induction.lane_loop_exits(b)[1]] == [c0]


def test_lane_loop_exits_is_the_one_reader():
    """induction.find and globalrange.loop_trips read a lane loop's exit through
    induction.lane_loop_exits (they kept two parsers before, accepting different forms): the
    histogram's exit gives its compare, the exits and-ed in turn give each compare, the EXEC bit
    read through a copy counts, one read after an EXEC write does not, and an EXEC kept drops no lane and one not
    made from the block's entry EXEC is no lane loop's exit."""
    from wavelift.backends.cuda import globalrange

    blk = _program().blocks[0]
    last, cmps = induction.lane_loop_exits(blk)
    assert last is [op for op in blk.ops if op.name == "sset"][-1]
    assert [c.attrs["cond"] for c in cmps] == ["le"] and cmps[0].args[0].type == "u32"
    for ys in (1, 2, 3):
        b, want = _exit_block(ys)
        assert [c.out for c in induction.lane_loop_exits(b)[1]] == want
    b, want = _exit_block(2, late_bit=True)
    assert [c.out for c in induction.lane_loop_exits(b)[1]] == want[:1]
    assert induction.lane_loop_exits(_program("exec kept").blocks[0])[1] == []  # (drops no lane)
    assert induction.lane_loop_exits(_program("exec not from its entry").blocks[0]) is None
    assert globalrange.lane_loop_exits is induction.lane_loop_exits
