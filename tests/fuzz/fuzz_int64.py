"""Fuzz target `int64`: random GLSL compute shaders of 64-bit integer arithmetic, compiled by
Mesa's ACO (tools/aco_compile, RADV's null device: navi21 wave32/wave64, navi10 wave64/wave32)
and run through wavelift.Device.load_aco_shader in wave and lane mode, against a Python-integer
evaluation of the same generated program (issue 20 item 1: a wrong 64-bit division was reported
from a RADV capture; docs/fuzzing.md).

One seed makes one program.  Its body is a list of statements, each generated as GLSL text and a
Python function at once (no shared AST: the oracle is the Python function, written from GLSL's
and SPIR-V's definitions, never from the compiled code).  Values: uint64_t, int64_t, uint.  Ops:
64-bit udiv/umod/sdiv/`%` (OpSMod, the divisor's sign)/truncated remainder by 64-bit and
zero-extended 32-bit divisors (per-lane values, push constants, UBO values, constants among
the edge values, values read from other lanes through shared memory or subgroup ops, divisors
forced non-zero by `| 1`, `max(d, 1)` or a high bit), 32-bit udiv/umod, multiply, add/sub,
logic, shifts by variable and constant amounts (logical and arithmetic), rotates built from
shifts, umulExtended, uaddCarry/usubBorrow, packUint2x32/unpack, signed and unsigned min/max,
abs, compares into selects, conversions to and from float and double (on values they hold
exactly, or rounded toward zero from an exact quotient), sign and zero extension.  Control
flow: divergent ifs (nested), loops with uniform (push constant / UBO) and per-lane trip counts,
while loops whose trip count is data-dependent (digit loops), early returns, shared memory
exchanges with barriers, subgroup broadcast/shuffle/min/max/add (only where every lane of the
workgroup is active), several waves per group (local sizes 32..256, 2-D local sizes).  Inputs mix
edge values (0, 1, 2^32-1, 2^32, 2^63, 2^64-1, small divisors, divisors with the high bit set)
with random values of random widths.  Undefined results (a zero divisor, INT64_MIN / -1, shift
amounts >= the width, float conversions out of range) are never asked for.

    python3 tools/fuzz.py int64 --count 200 --jobs 2
    python3 tests/fuzz/fuzz_int64.py SEED [--out DIR]    # write one seed's shader and inputs
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import random
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest

TIME_LIMIT = 600.0
ROOT = pathlib.Path(__file__).resolve().parents[2]
ACO = ROOT / "tools" / "aco_compile" / "aco-compile"
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
SENTINEL = 0xA5A5A5A55A5A5A5A  # an output slot no statement wrote keeps it
# (family, wave, llvm target)
BUILDS = (
    ("navi21", 32, "gfx1030"),
    ("navi21", 64, "gfx1030"),
    ("navi10", 64, "gfx1010"),
    ("navi10", 32, "gfx1010"),
)
MODES = ("wave", "lane")

EDGE64 = (
    0, 1, 2, 3, 5, 7, 10, 255, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF,
    1 << 32, (1 << 32) + 1, 0x1FFFFFFFF, 0xFFFFFFFF00000000, 0xFFFFFFFF80000000, 1000000007,
    0x123456789ABCDEF0, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, M64 - 1, M64, 0x8000000080000000,
)  # fmt: skip
EDGE32 = (0, 1, 2, 3, 7, 10, 31, 32, 63, 64, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 1000000007)  # fmt: skip


def s64(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def tdiv(a: int, b: int) -> int:
    """Truncating division of Python integers (SPIR-V OpSDiv)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def rand64(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.4:
        return rng.choice(EDGE64)
    if r < 0.5:
        return (rng.choice(EDGE64) + rng.randint(-3, 3)) & M64
    if r < 0.6:  # a divisor with the high bit of its low half set
        return rng.randrange(0x80000000, 1 << 32)
    return rng.getrandbits(rng.randint(1, 64))


def rand32(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.4:
        return rng.choice(EDGE32)
    if r < 0.55:
        return rng.randrange(0x80000000, 1 << 32)
    return rng.getrandbits(rng.randint(1, 32))


def c64(v: int) -> str:
    return f"0x{v & M64:x}ul"


def ci64(v: int) -> str:
    return f"int64_t(0x{v & M64:x}ul)"


def c32(v: int) -> str:
    return f"0x{v & M32:x}u"


# ---- the helpers every program carries (guards: nothing undefined is asked for) --------------
HELPERS = """
uint64_t udivg(uint64_t n, uint64_t d) { return d != 0ul ? n / d : 0ul; }
uint64_t umodg(uint64_t n, uint64_t d) { return d != 0ul ? n % d : 0ul; }
bool sok(int64_t n, int64_t d) { return d != 0l && !(n == int64_t(0x8000000000000000ul) && d == -1l); }
int64_t sdivg(int64_t n, int64_t d) { return sok(n, d) ? n / d : 0l; }
int64_t smodg(int64_t n, int64_t d) { return sok(n, d) ? n % d : 0l; }
int64_t sremg(int64_t n, int64_t d) { return sok(n, d) ? n - (n / d) * d : 0l; }
uint udiv32g(uint n, uint d) { return d != 0u ? n / d : 0u; }
uint umod32g(uint n, uint d) { return d != 0u ? n % d : 0u; }
"""


def _udivg(n, d):
    return n // d if d else 0


def _umodg(n, d):
    return n % d if d else 0


def _sok(n, d):
    return d != 0 and not (n == -(1 << 63) and d == -1)


def _sdivg(n, d):
    n, d = s64(n), s64(d)
    return tdiv(n, d) & M64 if _sok(n, d) else 0


def _smodg(n, d):  # OpSMod (nir imod): the result takes the divisor's sign
    n, d = s64(n), s64(d)
    return (n % d) & M64 if _sok(n, d) else 0


def _sremg(n, d):
    n, d = s64(n), s64(d)
    return (n - tdiv(n, d) * d) & M64 if _sok(n, d) else 0


class Gen:
    """One program: GLSL text and, per statement, a Python function of a lane's environment."""

    def __init__(self, seed: int):
        self.seed = seed
        rng = self.rng = random.Random(seed)
        self.lx = rng.choice((32, 64, 64, 128, 256))
        self.ly = 2 if self.lx <= 64 and rng.random() < 0.3 else 1
        self.ls = self.lx * self.ly
        self.groups = rng.choice((1, 2, 3))
        self.dynamic_ubo = rng.random() < 0.3
        self.vars: dict[str, list[str]] = {"u64": [], "i64": [], "u32": []}
        self.nvar = 0
        self.loopvars: list[str] = []
        self.lines: list[str] = []
        self.stmts: list = []  # ("lane", fn(env)) | ("all", fn(envs))
        self.nout = 0
        self.returned = False
        self.uses_shared = False
        self.nloops = 0

    # ---- expressions: (glsl, fn(env) -> int) ----------------------------------------------
    def leaf(self, t: str):
        rng = self.rng
        have = self.vars[t]
        r = rng.random()
        if have and r < 0.45:
            v = rng.choice(have)
            return v, lambda e, v=v: e[v]
        if t == "u64":
            k = rng.randrange(6)
            if k == 0:
                v = rand64(rng)
                return c64(v), lambda e, v=v: v
            if k == 1:
                j = rng.randrange(2)
                return f"a[2u * i + {j}u]", lambda e, j=j: e["a"][j]
            if k == 2:
                return "pc.p64", lambda e: e["p64"]
            if k == 3:
                j = rng.randrange(4)
                return f"ub.u[{j}]", lambda e, j=j: e["ub64"][j]
            g, f = self.leaf("u32")
            return f"uint64_t({g})", f
        if t == "i64":
            if r < 0.6:
                v = rand64(rng)
                return ci64(v), lambda e, v=v: v
            g, f = self.leaf("u64")
            return f"int64_t({g})", f
        # u32
        if self.loopvars and r < 0.55:
            v = rng.choice(self.loopvars)
            return v, lambda e, v=v: e[v]
        k = rng.randrange(9)
        if k == 7:  # uniform in a wave, different between waves (scalar code in batched waves)
            if rng.random() < 0.5:
                return "gl_WorkGroupID.x", lambda e: e["gid"]
            return "gl_SubgroupID", lambda e: e["sgid"]
        if k == 8:
            j = rng.randrange(4)
            return f"ub.w[(gl_WorkGroupID.x + {j}u) & 3u]", lambda e, j=j: e["ub32"][(e["gid"] + j) & 3]
        if k == 0:
            v = rand32(rng)
            return c32(v), lambda e, v=v: v
        if k == 1:
            j = rng.randrange(2)
            return f"c[2u * i + {j}u]", lambda e, j=j: e["c"][j]
        if k == 2:
            return "pc.p32", lambda e: e["p32"]
        if k == 3:
            return "lid", lambda e: e["lid"]
        if k == 4:
            return "i", lambda e: e["i"]
        if k == 5:
            j = rng.randrange(4)
            return f"ub.w[{j}]", lambda e, j=j: e["ub32"][j]
        g, f = self.leaf("u64")
        if rng.random() < 0.5:
            return f"uint({g})", lambda e, f=f: f(e) & M32
        return f"uint({g} >> 32)", lambda e, f=f: f(e) >> 32

    def divisor64(self, depth: int):
        """A 64-bit divisor in one of the shapes the lowering distinguishes."""
        rng = self.rng
        k = rng.randrange(9)
        if k <= 2:  # zero-extended 32-bit (nir_lower_divmod64's high-word pass)
            g, f = self.expr("u32", depth - 1)
            return f"uint64_t({g})", f
        if k == 3:
            v = rng.choice(EDGE64[1:] + (rand64(rng) or 1,))
            return c64(v), lambda e, v=v: v
        if k == 4:
            g, f = self.expr("u32", depth - 1)
            return f"uint64_t({g} | 1u)", lambda e, f=f: f(e) | 1
        if k == 5:
            g, f = self.expr("u64", depth - 1)
            return f"max({g}, 1ul)", lambda e, f=f: max(f(e), 1)
        if k == 6:
            g, f = self.expr("u32", depth - 1)
            return f"(uint64_t({g}) | 0x80000000ul)", lambda e, f=f: f(e) | 0x80000000
        return self.expr("u64", depth - 1)

    def expr(self, t: str, depth: int):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf(t)
        d = depth - 1
        if t == "u64":
            k = rng.randrange(24)
            if k <= 5:  # division and remainder, the point of the exercise
                n, fn = self.expr("u64", d)
                dv, fd = self.divisor64(depth)
                if k % 2:
                    return f"umodg({n}, {dv})", lambda e, fn=fn, fd=fd: _umodg(fn(e), fd(e))
                return f"udivg({n}, {dv})", lambda e, fn=fn, fd=fd: _udivg(fn(e), fd(e))
            if k == 6:  # a constant divisor (nir_opt_idiv_const: no division at all)
                n, fn = self.expr("u64", d)
                v = rng.choice((3, 7, 10, 1000, 1000000007, 0xFFFFFFFF, 1 << 32, 0x100000001, 1 << 63, M64))
                op = rng.choice("/%")
                if op == "/":
                    return f"({n} / {c64(v)})", lambda e, fn=fn, v=v: fn(e) // v
                return f"({n} % {c64(v)})", lambda e, fn=fn, v=v: fn(e) % v
            if k == 7:
                a, fa = self.expr("u64", d)
                b, fb = self.expr("u64", d)
                return f"({a} * {b})", lambda e, fa=fa, fb=fb: (fa(e) * fb(e)) & M64
            if k == 8:
                a, fa = self.expr("u64", d)
                b, fb = self.expr("u64", d)
                op = rng.choice("+-^&|")
                py = {
                    "+": lambda x, y: (x + y) & M64,
                    "-": lambda x, y: (x - y) & M64,
                    "^": lambda x, y: x ^ y,
                    "&": lambda x, y: x & y,
                    "|": lambda x, y: x | y,
                }[op]
                return f"({a} {op} {b})", lambda e, fa=fa, fb=fb, py=py: py(fa(e), fb(e))
            if k == 9:  # variable shift
                a, fa = self.expr("u64", d)
                s, fs = self.expr("u32", d)
                if rng.random() < 0.5:
                    return f"({a} << ({s} & 63u))", lambda e, fa=fa, fs=fs: (fa(e) << (fs(e) & 63)) & M64
                return f"({a} >> ({s} & 63u))", lambda e, fa=fa, fs=fs: fa(e) >> (fs(e) & 63)
            if k == 10:  # rotate from shifts
                a, fa = self.expr("u64", d)
                s, fs = self.expr("u32", d)
                left = rng.random() < 0.5

                def rot(e, fa=fa, fs=fs, left=left):
                    x, n = fa(e), fs(e) & 63
                    if not left:
                        n = (64 - n) & 63
                    return ((x << n) | (x >> ((64 - n) & 63))) & M64

                if left:
                    return f"rotl({a}, {s})", rot
                return f"rotr({a}, {s})", rot
            if k == 11:
                a, fa = self.expr("u64", d)
                b, fb = self.expr("u64", d)
                if rng.random() < 0.5:
                    return f"min({a}, {b})", lambda e, fa=fa, fb=fb: min(fa(e), fb(e))
                return f"max({a}, {b})", lambda e, fa=fa, fb=fb: max(fa(e), fb(e))
            if k == 12:  # umulExtended -> 64 bits
                a, fa = self.expr("u32", d)
                b, fb = self.expr("u32", d)
                return f"mulx({a}, {b})", lambda e, fa=fa, fb=fb: fa(e) * fb(e)
            if k == 13:
                lo, fl = self.expr("u32", d)
                hi, fh = self.expr("u32", d)
                return f"packUint2x32(uvec2({lo}, {hi}))", lambda e, fl=fl, fh=fh: fl(e) | fh(e) << 32
            if k == 14:
                a, fa = self.expr("i64", d)
                return f"uint64_t({a})", fa
            if k == 15:  # compare -> select
                a, fa = self.expr("u64", d)
                b, fb = self.expr("u64", d)
                x, fx = self.expr("u64", d)
                y, fy = self.expr("u64", d)
                op = rng.choice(("<", "<=", "==", "!=", ">=", ">"))
                py = {
                    "<": lambda p, q: p < q,
                    "<=": lambda p, q: p <= q,
                    "==": lambda p, q: p == q,
                    "!=": lambda p, q: p != q,
                    ">=": lambda p, q: p >= q,
                    ">": lambda p, q: p > q,
                }[op]
                return (
                    f"(({a} {op} {b}) ? {x} : {y})",
                    lambda e, fa=fa, fb=fb, fx=fx, fy=fy, py=py: fx(e) if py(fa(e), fb(e)) else fy(e),
                )
            if k == 16:  # through double, exactly: 53 bits, halved
                a, fa = self.expr("u64", d)
                return (
                    f"uint64_t(double({a} & 0x1ffffffffffffful) * 0.5)",
                    lambda e, fa=fa: (fa(e) & ((1 << 53) - 1)) >> 1,
                )
            if k == 17:  # through float, exactly: 24 bits
                a, fa = self.expr("u64", d)
                sh = rng.choice((0, 8, 40))
                return (
                    f"uint64_t(float(({a} >> {sh}u) & 0xfffffful))",
                    lambda e, fa=fa, sh=sh: (fa(e) >> sh) & 0xFFFFFF,
                )
            if k == 19:  # uint64 -> float rounding: to nearest even, kept exact by the range
                a, fa = self.expr("u64", d)
                return (
                    f"uint64_t(double({a} >> 12u))",
                    lambda e, fa=fa: fa(e) >> 12,
                )
            if k == 20:  # a constant shift
                a, fa = self.expr("u64", d)
                n = rng.choice((1, 16, 31, 32, 33, 48, 63))
                if rng.random() < 0.5:
                    return f"({a} << {n}u)", lambda e, fa=fa, n=n: (fa(e) << n) & M64
                return f"({a} >> {n}u)", lambda e, fa=fa, n=n: fa(e) >> n
            if k == 21:
                a, fa = self.expr("u64", d)
                return f"(~{a})", lambda e, fa=fa: fa(e) ^ M64
            if k == 22:  # vector division (NIR lowers it before or after scalarising)
                a, fa = self.expr("u64", d)
                b, fb = self.expr("u64", d)
                x, fx = self.divisor64(depth)
                y, fy = self.divisor64(depth)

                def fv(e, fa=fa, fb=fb, fx=fx, fy=fy):
                    p, q, m, n = fa(e), fb(e), max(fx(e), 1), max(fy(e), 1)
                    return (p // m) ^ ((q // n) << 1) & M64 ^ ((p % m) * 3) & M64 ^ (q % n)

                return f"vdiv({a}, {b}, {x}, {y})", fv
            return self.leaf(t)
        if t == "i64":
            k = rng.randrange(11)
            if k <= 3:
                n, fn = self.expr("i64", d)
                if rng.random() < 0.5:
                    dv, fd = self.expr("i64", d)
                else:
                    g, fg = self.expr("u32", d)
                    dv, fd = f"int64_t(int({g}))", lambda e, fg=fg: s32(fg(e)) & M64
                name, py = [("sdivg", _sdivg), ("smodg", _smodg), ("sremg", _sremg), ("sdivg", _sdivg)][k]
                return f"{name}({n}, {dv})", lambda e, fn=fn, fd=fd, py=py: py(fn(e), fd(e))
            if k == 4:  # arithmetic shift
                a, fa = self.expr("i64", d)
                s, fs = self.expr("u32", d)
                return f"({a} >> ({s} & 63u))", lambda e, fa=fa, fs=fs: (s64(fa(e)) >> (fs(e) & 63)) & M64
            if k == 5:
                a, fa = self.expr("i64", d)
                b, fb = self.expr("i64", d)
                if rng.random() < 0.5:
                    return f"min({a}, {b})", lambda e, fa=fa, fb=fb: min(fa(e), fb(e), key=s64)
                return f"max({a}, {b})", lambda e, fa=fa, fb=fb: max(fa(e), fb(e), key=s64)
            if k == 6:
                a, fa = self.expr("i64", d)
                return f"abs({a})", lambda e, fa=fa: abs(s64(fa(e))) & M64
            if k == 7:  # sign extension
                g, fg = self.expr("u32", d)
                return f"int64_t(int({g}))", lambda e, fg=fg: s32(fg(e)) & M64
            if k == 8:  # through double, exactly
                a, fa = self.expr("i64", d)
                return f"int64_t(double({a} >> 11))", lambda e, fa=fa: (s64(fa(e)) >> 11) & M64
            if k == 9:
                a, fa = self.expr("i64", d)
                b, fb = self.expr("i64", d)
                op = rng.choice("+-*")
                py = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}[op]
                return f"({a} {op} {b})", lambda e, fa=fa, fb=fb, py=py: py(fa(e), fb(e)) & M64
            a, fa = self.expr("u64", d)
            return f"int64_t({a})", fa
        # u32
        k = rng.randrange(10)
        if k == 0:
            a, fa = self.expr("u32", d)
            b, fb = self.expr("u32", d)
            if rng.random() < 0.5:
                return f"udiv32g({a}, {b})", lambda e, fa=fa, fb=fb: _udivg(fa(e), fb(e))
            return f"umod32g({a}, {b})", lambda e, fa=fa, fb=fb: _umodg(fa(e), fb(e))
        if k == 1:
            a, fa = self.expr("u32", d)
            b, fb = self.expr("u32", d)
            op = rng.choice("+-*^")
            py = {
                "+": lambda x, y: (x + y) & M32,
                "-": lambda x, y: (x - y) & M32,
                "*": lambda x, y: (x * y) & M32,
                "^": lambda x, y: x ^ y,
            }[op]
            return f"({a} {op} {b})", lambda e, fa=fa, fb=fb, py=py: py(fa(e), fb(e))
        if k == 2:
            a, fa = self.expr("u64", d)
            return f"uint({a})", lambda e, fa=fa: fa(e) & M32
        if k == 3:
            a, fa = self.expr("u64", d)
            return f"uint({a} >> 32u)", lambda e, fa=fa: fa(e) >> 32
        if k == 4:  # carries
            a, fa = self.expr("u32", d)
            b, fb = self.expr("u32", d)
            if rng.random() < 0.5:
                return (
                    f"addc({a}, {b})",
                    lambda e, fa=fa, fb=fb: ((fa(e) + fb(e)) & M32) ^ ((fa(e) + fb(e)) >> 32),
                )
            return f"subb({a}, {b})", lambda e, fa=fa, fb=fb: ((fa(e) - fb(e)) & M32) ^ int(fa(e) < fb(e))
        if k == 5:
            a, fa = self.expr("u32", d)
            return f"uint(findMSB({a}) + 1)", lambda e, fa=fa: fa(e).bit_length()
        if k == 6:  # float -> uint, 24 bits
            a, fa = self.expr("u32", d)
            return f"uint(float({a} & 0xffffffu))", lambda e, fa=fa: fa(e) & 0xFFFFFF
        return self.leaf(t)

    # ---- statements -------------------------------------------------------------------------
    def new_var(self, t: str) -> str:
        v = f"v{self.nvar}"
        self.nvar += 1
        return v

    def emit_out(self, v: str, t: str, ind: str = "    ") -> None:
        slot = self.nout
        self.nout += 1
        self.lines.append(f"{ind}o[NOUT * i + {slot}u] = uint64_t({v});")

        def store(e, v=v, slot=slot):
            e["out"][slot] = e[v] & M64

        self.stmts.append(("lane", store))

    def body(self, v: str, t: str, depth: int, ind: str):
        """Statements assigning v (inside an if or a loop): (lines, fn(env))."""
        rng = self.rng
        lines: list[str] = []
        fns = []
        for _ in range(rng.randint(1, 2)):
            if depth > 0 and rng.random() < 0.3:
                c, fc = self.cond(2)
                l1, f1 = self.body(v, t, depth - 1, ind + "    ")
                l2, f2 = self.body(v, t, depth - 1, ind + "    ")
                lines += [f"{ind}if ({c}) {{", *l1, f"{ind}}} else {{", *l2, f"{ind}}}"]
                fns.append(lambda e, fc=fc, f1=f1, f2=f2: f1(e) if fc(e) else f2(e))
            elif depth > 0 and rng.random() < 0.2:
                ll, fl = self.loop(v, t, depth - 1, ind)
                lines += ll
                fns.append(fl)
            else:
                self.vars[t].append(v)  # the variable itself may appear in its update
                g, f = self.expr(t, 3)
                self.vars[t].remove(v)
                lines.append(f"{ind}{v} = {g};")

                def assign(e, v=v, f=f):
                    e[v] = f(e)

                fns.append(assign)

        def run(e, fns=fns):
            for f in fns:
                f(e)

        return lines, run

    def cond(self, depth: int):
        rng = self.rng
        k = rng.randrange(4)
        if k == 0:
            m = rng.choice((1, 3, 7, 31))
            r = rng.randrange(m + 1)
            return f"(lid & {m}u) == {r}u", lambda e, m=m, r=r: (e["lid"] & m) == r
        if k == 1:
            a, fa = self.expr("u64", depth)
            b, fb = self.expr("u64", depth)
            return f"{a} < {b}", lambda e, fa=fa, fb=fb: fa(e) < fb(e)
        if k == 2:
            a, fa = self.expr("i64", depth)
            b, fb = self.expr("i64", depth)
            return f"{a} <= {b}", lambda e, fa=fa, fb=fb: s64(fa(e)) <= s64(fb(e))
        a, fa = self.expr("u32", depth)
        return f"({a} & 1u) != 0u", lambda e, fa=fa: (fa(e) & 1) != 0

    def loop(self, v: str, t: str, depth: int, ind: str):
        rng = self.rng
        k = f"k{self.nloops}"
        self.nloops += 1
        kind = rng.randrange(5)
        if kind == 0:
            trip, ft = "pc.niter", (lambda e: e["niter"])
        elif kind == 1:
            trip, ft = "(ub.w[3] & 7u)", (lambda e: e["ub32"][3] & 7)
        elif kind == 2:
            trip, ft = "(c[2u * i] & 7u)", (lambda e: e["c"][0] & 7)
        elif kind == 3:
            trip, ft = "(lid & 3u)", (lambda e: e["lid"] & 3)
        else:  # a digit loop: while the value is at least the divisor (at most 70 rounds)
            dv, fd = self.divisor64(2)
            if t != "u64":
                return self.body(v, t, depth, ind)
            lines = [
                f"{ind}for (uint {k} = 0u; {k} < 70u && {v} >= {dv} && {dv} > 1ul; {k}++) {{",
                f"{ind}    {v} = {v} / {dv};",
                f"{ind}}}",
            ]

            def digits(e, v=v, fd=fd):
                for _ in range(70):
                    d = fd(e)
                    if not (e[v] >= d and d > 1):
                        break
                    e[v] //= d

            return lines, digits
        self.loopvars.append(k)
        body, fb = self.body(v, t, depth, ind + "    ")
        self.loopvars.remove(k)
        lines = [f"{ind}for (uint {k} = 0u; {k} < {trip}; {k}++) {{", *body, f"{ind}}}"]

        def run(e, k=k, ft=ft, fb=fb):
            for j in range(ft(e)):
                e[k] = j
                fb(e)
            e.pop(k, None)

        return lines, run

    def statement(self) -> None:
        rng = self.rng
        t = rng.choice(("u64", "u64", "u64", "i64", "u32"))
        ty = {"u64": "uint64_t", "i64": "int64_t", "u32": "uint"}[t]
        k = rng.randrange(10)
        v = self.new_var(t)
        if k <= 3 or (k >= 7 and self.returned):
            g, f = self.expr(t, rng.randint(2, 4))
            self.lines.append(f"    {ty} {v} = {g};")

            def assign(e, v=v, f=f):
                e[v] = f(e)

            self.stmts.append(("lane", assign))
        elif k in (4, 5, 6):
            g, f = self.expr(t, 2)
            self.lines.append(f"    {ty} {v} = {g};")
            if k == 4:
                c, fc = self.cond(2)
                l1, f1 = self.body(v, t, 2, "        ")
                l2, f2 = self.body(v, t, 2, "        ")
                self.lines += [f"    if ({c}) {{", *l1, "    } else {", *l2, "    }"]

                def run(e, v=v, f=f, fc=fc, f1=f1, f2=f2):
                    e[v] = f(e)
                    f1(e) if fc(e) else f2(e)
            else:
                ll, fl = self.loop(v, t, 1, "    ")
                self.lines += ll

                def run(e, v=v, f=f, fl=fl):
                    e[v] = f(e)
                    fl(e)

            self.stmts.append(("lane", run))
        elif k in (7, 8):  # shared memory: another lane's value
            g, f = self.expr(t, 2)
            a = rng.choice((1, 3, 5, 7, 2 * rng.randrange(8) + 1))
            b = rng.randrange(self.ls)
            arr = "sh64" if t != "u32" else "sh32"
            self.uses_shared = True
            cast = {"u64": "", "i64": "uint64_t", "u32": ""}[t]
            back = {"u64": "", "i64": "int64_t", "u32": ""}[t]
            self.lines += [
                f"    {arr}[lid] = {cast}({g});",
                "    barrier();",
                f"    {ty} {v} = {back}({arr}[(lid * {a}u + {b}u) % {self.ls}u]);",
                "    barrier();",
            ]

            def exch(envs, v=v, f=f, a=a, b=b):
                for grp in self.by_group(envs):
                    vals = [f(e) for e in grp]
                    for e in grp:
                        e[v] = vals[(e["lid"] * a + b) % self.ls]

            self.stmts.append(("all", exch))
        else:  # subgroup ops (every lane active)
            g, f = self.expr(t, 2)
            op = rng.choice(("first", "xor", "min", "max", "add"))
            if op == "add" and t != "u32":
                op = "max"
            m = rng.choice((1, 2, 4, 16))
            if op == "xor" and self.lx * self.ly < 2 * m:
                m = 1
            glsl = {
                "first": f"subgroupBroadcastFirst({g})",
                "xor": f"subgroupShuffleXor({g}, {m}u)",
                "min": f"subgroupMin({g})",
                "max": f"subgroupMax({g})",
                "add": f"subgroupAdd({g})",
            }[op]
            self.lines.append(f"    {ty} {v} = {glsl};")
            key = s64 if t == "i64" else (lambda x: x)

            def sub(envs, v=v, f=f, op=op, m=m, key=key):
                w = self.wave
                for grp in self.by_group(envs):
                    vals = [f(e) for e in grp]
                    for e in grp:
                        lo = e["lid"] // w * w
                        sg = vals[lo : lo + w]
                        if op == "first":
                            e[v] = sg[0]
                        elif op == "xor":
                            e[v] = vals[e["lid"] ^ m]
                        elif op == "min":
                            e[v] = min(sg, key=key)
                        elif op == "max":
                            e[v] = max(sg, key=key)
                        else:
                            e[v] = sum(sg) & M32

            self.stmts.append(("all", sub))
        self.vars[t].append(v)
        self.emit_out(v, t)

    def early_return(self) -> None:
        c, fc = self.cond(1)
        self.lines.append(f"    if ({c}) return;")

        def ret(e, fc=fc):
            if fc(e):
                e["dead"] = True

        self.stmts.append(("lane", ret))
        self.returned = True

    def build(self) -> None:
        rng = self.rng
        n = rng.randint(3, 9)
        ret_at = rng.randrange(n + 1) if rng.random() < 0.35 else None
        for j in range(n):
            if j == ret_at:
                self.early_return()
            self.statement()
        self.nout = max(self.nout, 1)

    def by_group(self, envs):
        for g in range(self.groups):
            yield envs[g * self.ls : (g + 1) * self.ls]

    # ---- source and inputs --------------------------------------------------------------------
    def source(self) -> str:
        head = [
            "#version 450",
            "#extension GL_ARB_gpu_shader_int64 : require",
            "#extension GL_KHR_shader_subgroup_basic : require",
            "#extension GL_KHR_shader_subgroup_ballot : require",
            "#extension GL_KHR_shader_subgroup_shuffle : require",
            "#extension GL_KHR_shader_subgroup_arithmetic : require",
            "#extension GL_EXT_shader_subgroup_extended_types_int64 : require",
            f"// wavelift tests/fuzz/fuzz_int64.py seed {self.seed}",
            f"layout(local_size_x = {self.lx}, local_size_y = {self.ly}) in;",
            "layout(push_constant) uniform Push { uint64_t p64; uint p32; uint niter; } pc;",
            "layout(set = 0, binding = 0, std430) readonly buffer A { uint64_t a[]; };",
            "layout(set = 0, binding = 1, std430) readonly buffer C { uint c[]; };",
            "layout(set = 0, binding = 2, std140) uniform U { uint64_t u[4]; uvec4 w; } ub;",
            "layout(set = 0, binding = 3, std430) buffer O { uint64_t o[]; };",
            f"const uint NOUT = {self.nout}u;",
            f"shared uint64_t sh64[{self.ls}];",
            f"shared uint sh32[{self.ls}];",
            HELPERS,
            "uint64_t rotl(uint64_t x, uint s) { s &= 63u; return (x << s) | (x >> ((64u - s) & 63u)); }",
            "uint64_t rotr(uint64_t x, uint s) { s = (64u - (s & 63u)) & 63u; "
            "return (x << s) | (x >> ((64u - s) & 63u)); }",
            "uint64_t mulx(uint a, uint b) { uint hi, lo; umulExtended(a, b, hi, lo); "
            "return packUint2x32(uvec2(lo, hi)); }",
            "uint64_t vdiv(uint64_t a, uint64_t b, uint64_t d, uint64_t e) { u64vec2 n = u64vec2(a, b); "
            "u64vec2 m = max(u64vec2(d, e), u64vec2(1ul)); u64vec2 q = n / m; u64vec2 r = n % m; "
            "return q.x ^ (q.y << 1u) ^ (r.x * 3ul) ^ r.y; }",
            "uint addc(uint a, uint b) { uint c; uint s = uaddCarry(a, b, c); return s ^ c; }",
            "uint subb(uint a, uint b) { uint c; uint s = usubBorrow(a, b, c); return s ^ c; }",
            "void main()",
            "{",
            "    uint lid = gl_LocalInvocationIndex;",
            f"    uint i = gl_WorkGroupID.x * {self.ls}u + lid;",
        ]
        return "\n".join(head + self.lines + ["}", ""])

    def inputs(self):
        rng = random.Random(self.seed * 7919 + 1)
        n = self.ls * self.groups
        a = [rand64(rng) for _ in range(2 * n)]
        c = [rand32(rng) for _ in range(2 * n)]
        ub64 = [rand64(rng) for _ in range(4)]
        ub32 = [rand32(rng) for _ in range(4)]
        p64, p32, niter = rand64(rng), rand32(rng), rng.randrange(6)
        return {"a": a, "c": c, "ub64": ub64, "ub32": ub32, "p64": p64, "p32": p32, "niter": niter}

    def expected(self, wave: int, inp) -> np.ndarray:
        self.wave = wave
        n = self.ls * self.groups
        envs = []
        for i in range(n):
            envs.append(
                {
                    "i": i,
                    "lid": i % self.ls,
                    "gid": i // self.ls,
                    "sgid": i % self.ls // wave,
                    "a": inp["a"][2 * i : 2 * i + 2],
                    "c": inp["c"][2 * i : 2 * i + 2],
                    "ub64": inp["ub64"],
                    "ub32": inp["ub32"],
                    "p64": inp["p64"],
                    "p32": inp["p32"],
                    "niter": inp["niter"],
                    "out": [SENTINEL] * self.nout,
                    "dead": False,
                }
            )
        for kind, fn in self.stmts:
            if kind == "all":
                fn(envs)
            else:
                for e in envs:
                    if not e["dead"]:
                        fn(e)
        return np.array([e["out"] for e in envs], dtype=np.uint64)


def make(seed: int) -> Gen:
    g = Gen(seed)
    g.build()
    return g


# ---- compiling and running ------------------------------------------------------------------
def _cache_dir() -> pathlib.Path:
    d = pathlib.Path(tempfile.gettempdir()) / f"wavelift-fuzz-int64-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d


def have_aco() -> bool:
    return bool(shutil.which("glslangValidator")) and os.path.exists(
        "/usr/share/vulkan/icd.d/radeon_icd.x86_64.json"
    )


def compile_aco(src: str, family: str, wave: int, dynamic: bool, llvm: bool = False) -> pathlib.Path:
    """The shader through tools/aco_compile (ACO, or RADV's LLVM backend with ``llvm``): the
    OUT.json path (cached by source and options)."""
    opts = ["--family", family, f"--wave{wave}"] + (["--dynamic", "0.2"] if dynamic else [])
    opts += ["--llvm"] if llvm else []
    key = hashlib.sha256((src + repr(opts)).encode()).hexdigest()[:24]
    d = _cache_dir() / key
    out = d / "shader"
    if (d / "shader.json").exists() and (d / "shader.bin").exists():
        return d / "shader.json"
    d.mkdir(exist_ok=True)
    (d / "shader.comp").write_text(src)
    p = subprocess.run(
        [str(ACO), str(d / "shader.comp"), "-o", str(out), *opts, "-q"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
    )
    if p.returncode:
        raise AssertionError(f"aco-compile failed ({p.returncode}): {p.stderr[-2000:]}\n{src}")
    return d / "shader.json"


def launch(json_path: pathlib.Path, target: str, mode: str, g: Gen, inp, tier: str = "numpy") -> np.ndarray:
    import wavelift
    from wavelift.backends.numpy import runtime

    old = runtime.NATIVE
    runtime.NATIVE = "on" if tier == "native" else "off"
    try:
        dev = wavelift.Device(target, backend="numpy", mode=mode)
        sh = dev.load_aco_shader(str(json_path))
        n = g.ls * g.groups
        ubo = struct.pack(
            "<" + "Q8x" * 4 + "4I", *inp["ub64"], *inp["ub32"]
        )  # std140: a 16-byte array stride
        bufs = {
            (0, 0): dev.upload(np.array(inp["a"], np.uint64)),
            (0, 1): dev.upload(np.array(inp["c"], np.uint32)),
            (0, 2): dev.upload(np.frombuffer(ubo, np.uint8).copy()),
            (0, 3): dev.upload(np.full(n * g.nout, SENTINEL, np.uint64)),
        }
        pc = struct.pack("<QII", inp["p64"], inp["p32"], inp["niter"])
        r = sh.launch(groups=(g.groups, 1, 1), buffers=bufs, push_constants=pc)
        assert r.landed, f"refused {r.refusal.code}: {r.refusal.message}"
        return dev.download(bufs[(0, 3)], np.uint64).reshape(n, g.nout)
    finally:
        runtime.NATIVE = old


def check(
    seed: int,
    builds=BUILDS,
    modes=MODES,
    tiers=("numpy",),
    capture: bool = False,
    triage: bool = True,
    program: Gen | None = None,
) -> int:
    """One seed on the given builds, modes and tiers; raises AssertionError on a difference.
    Returns the number of 64-bit results compared."""
    g = make(seed) if program is None else program
    src = g.source()
    inp = g.inputs()
    compared = 0
    for family, wave, target in builds:
        want = g.expected(wave, inp)
        jp = compile_aco(src, family, wave, g.dynamic_ubo)
        for mode in modes:
            for tier in tiers:
                got = launch(jp, target, mode, g, inp, tier)
                bad = np.argwhere(got != want)
                if bad.size and triage and compiler_agrees(src, family, wave, target, mode, g, inp, got, bad):
                    # both of RADV's backends (their own instruction choices) compute the same
                    # wrong values from NIR: the compiler's answer, not wavelift's (counted)
                    COMPILER_DIFFERENCES.append((seed, family, wave, mode, len(bad)))
                    bad = bad[:0]
                if bad.size:
                    rows = [
                        f"lane {int(r)} out {int(c)}: got {int(got[r, c]):#x} want {int(want[r, c]):#x}"
                        for r, c in bad[:8]
                    ]
                    raise AssertionError(
                        f"seed {seed} {family} w{wave} {mode} {tier}: {len(bad)} of {want.size} results "
                        f"differ from Python integers:\n  " + "\n  ".join(rows) + f"\nshader: {jp.parent}"
                    )
                compared += want.size
        if capture:
            for mode, got in capture_run(g, inp, family, wave, target, modes).items():
                bad = np.argwhere(got != want)
                if bad.size and triage and compiler_agrees(src, family, wave, target, mode, g, inp, got, bad):
                    COMPILER_DIFFERENCES.append((seed, family, wave, mode + "-capture", len(bad)))
                    bad = bad[:0]
                if bad.size:
                    rows = [
                        f"lane {int(r)} out {int(c)}: got {int(got[r, c]):#x} want {int(want[r, c]):#x}"
                        for r, c in bad[:8]
                    ]
                    raise AssertionError(
                        f"seed {seed} {family} w{wave} {mode} RADV capture: {len(bad)} of {want.size} "
                        f"results differ from Python integers:\n  " + "\n  ".join(rows)
                    )
                compared += want.size
    return compared


# ---- the RADV capture path (what the report came from) --------------------------------------
# tools/radv_capture records RADV's own PM4 stream, descriptor sets, push constants and code for
# the same SPIR-V on its null device; wavelift imports it (importers/radv.py) and replays it.
RADV_CAPTURE = (
    pathlib.Path(tempfile.gettempdir()) / f"wavelift-fuzz-int64-{os.getuid()}" / "rc" / "radv_capture"
)
MESA_SRC = "/tmp/mesasrc/mesa-22.3.6"


def have_radv_capture() -> bool:
    """tools/radv_capture built here (its build.sh needs Mesa's source headers in MESA_SRC)."""
    if RADV_CAPTURE.exists():
        return True
    if not (have_aco() and os.path.isdir(MESA_SRC) and shutil.which("gcc")):
        return False
    p = subprocess.run(
        [str(ROOT / "tools/radv_capture/build.sh"), str(RADV_CAPTURE.parent)],
        capture_output=True,
        text=True,
        env=dict(os.environ, MESA_SRC=MESA_SRC),
    )
    return p.returncode == 0 and RADV_CAPTURE.exists()


def capture_run(g: Gen, inp, family: str, wave: int, target: str, modes=MODES) -> dict:
    """The program recorded by radv_capture (RADV 22.3.6's own stream: inline push constants,
    descriptor set, UBO), imported and replayed in each mode: {mode: results [lanes, nout]}."""
    from wavelift import replay
    from wavelift.importers import radv

    n = g.ls * g.groups
    with tempfile.TemporaryDirectory(prefix="wl-fuzz-int64-") as td:
        t = pathlib.Path(td)
        (t / "s.comp").write_text(g.source())
        subprocess.run(
            ["glslangValidator", "-V", "--target-env", "vulkan1.3", "s.comp", "-o", "s.spv"],
            cwd=t,
            check=True,
            capture_output=True,
        )
        files = {
            "a": np.array(inp["a"], np.uint64).tobytes(),
            "c": np.array(inp["c"], np.uint32).tobytes(),
            "u": struct.pack("<" + "Q8x" * 4 + "4I", *inp["ub64"], *inp["ub32"]),
            "o": np.full(n * g.nout, SENTINEL, np.uint64).tobytes(),
            "push": struct.pack("<QII", inp["p64"], inp["p32"], inp["niter"]),
        }
        for k, v in files.items():
            (t / f"{k}.bin").write_bytes(v)
        cmd = [str(RADV_CAPTURE), "s.spv", "raw", "--push", "push.bin", "--groups", f"{g.groups},1,1"]
        for b, (k, kind) in enumerate((("a", "ssbo"), ("c", "ssbo"), ("u", "ubo"), ("o", "ssbo"))):
            cmd += ["--binding", f"0:{b}:{kind}:{len(files[k])}:{k}.bin"]
        cmd += ["--subgroup-size", str(wave)]
        (t / "cache").mkdir()
        env = dict(
            os.environ,
            RADV_FORCE_FAMILY=family,
            MESA_SHADER_CACHE_DISABLE="true",
            XDG_CACHE_HOME=str(t / "cache"),
        )
        p = subprocess.run(cmd, cwd=t, capture_output=True, text=True, env=env)
        if p.returncode:
            raise AssertionError(f"radv_capture failed ({p.returncode}): {p.stderr[-2000:]}")
        va, size = radv.buffers(str(t / "raw"))[(0, 3)]
        out = {}
        for mode in modes:
            cap = radv.convert(str(t / "raw"), target=target)
            rs = replay(cap, mode=mode)
            assert len(rs) == 1 and rs[0].landed, [str(r.refusal) for r in rs]
            out[mode] = np.frombuffer(cap.read(va, size), np.uint64).reshape(n, g.nout)
        return out


COMPILER_DIFFERENCES: list = []


def compiler_agrees(src, family, wave, target, mode, g, inp, got, bad) -> bool:
    """Whether RADV's LLVM backend, compiled from the same SPIR-V and run in wavelift, gives
    exactly the values the ACO build gave where they differ from Python (a NIR folding that
    both backends inherit, e.g. Mesa 22.3.6 folding a compare of a sign-extended value with a
    constant: the compiled code stores a constant).  Only for a build whose every differing
    value agrees; anything else is a failure."""
    try:
        jp = compile_aco(src, family, wave, g.dynamic_ubo, llvm=True)
    except AssertionError:
        return False
    other = launch(jp, target, mode, g, inp)
    r, c = bad[:, 0], bad[:, 1]
    return bool((other[r, c] == got[r, c]).all())


# what a program's source holds, for the coverage tally (tools/fuzz.py int64 with
# WAVELIFT_FUZZ_INT64_LOG=FILE appends one JSON line per seed)
FEATURES = {
    "udiv64": "udivg(", "umod64": "umodg(", "vector_div64": "vdiv(", "sdiv64": "sdivg(", "smod64": "smodg(", "srem64": "sremg(",
    "div64_by_u32": "udivg(uint64_t(", "udiv32": "udiv32g(", "umod32": "umod32g(",
    "const_div": r" / 0x", "const_mod": r" % 0x", "mul": " * ", "shl": " << ", "shr": " >> ",
    "rotl": "rotl(", "rotr": "rotr(", "min": "min(", "max": "max(", "umulExtended": "mulx(",
    "pack": "packUint2x32(", "double": "double(", "float": "float(", "uaddCarry": "addc(",
    "usubBorrow": "subb(", "findMSB": "findMSB(", "abs": "abs(", "select": " ? ",
    "broadcastFirst": "subgroupBroadcastFirst(", "shuffleXor": "subgroupShuffleXor(",
    "subgroupMin": "subgroupMin(", "subgroupMax": "subgroupMax(", "subgroupAdd": "subgroupAdd(",
    "shared": "barrier();", "loop": "for (uint k", "if": "    if (", "early_return": "return;",
    "push_constant": "pc.", "ubo": "ub.", "workgroup_id": "gl_WorkGroupID.x", "subgroup_id": "gl_SubgroupID",
}  # fmt: skip


def features(src: str) -> dict:
    body = src[src.index("void main()") :]
    return {k: body.count(v) for k, v in FEATURES.items() if body.count(v)}


def case(seed: int) -> None:
    before = len(COMPILER_DIFFERENCES)
    n = check(seed, capture=seed % 4 == 0 and have_radv_capture())
    if seed % 3 == 0:  # the native tier (host C++ at the user's flags) on one build and mode
        n += check(seed, builds=(BUILDS[seed % 4],), modes=(MODES[seed % 2],), tiers=("native",))
    log = os.environ.get("WAVELIFT_FUZZ_INT64_LOG")
    if log:
        g = make(seed)
        rec = {
            "seed": seed,
            "results": n,
            "local_size": [g.lx, g.ly],
            "groups": g.groups,
            "dynamic_ubo": g.dynamic_ubo,
            "features": features(g.source()),
            "compiler": COMPILER_DIFFERENCES[before:],
        }
        with open(log, "a") as f:
            f.write(json.dumps(rec) + "\n")


needs_aco = pytest.mark.skipif(
    not have_aco(), reason="glslangValidator / Mesa RADV (aco-compile) not installed"
)


@needs_aco
def test_int64_short():
    """Two seeds chosen for what they hold, both with 64/32-bit and u64vec2 division (31: a
    dynamic UBO, an early return, gl_WorkGroupID; 46: subgroupMin over three 32-lane groups,
    shared memory) on navi21 wave32 in both modes (31) and navi10 wave64 in wave mode (46), NumPy
    blocks, against Python integers (~17 s at a load of 10 on 2 cores; many seeds on every
    build: test_int64_many)."""
    check(31, builds=(BUILDS[0],))
    check(46, builds=(BUILDS[2],), modes=("wave",))


def sign_extended_compare() -> Gen:
    """A program of one statement: a compare of a sign-extended 32-bit lane value with 0, which
    Mesa 22.3.6 folds to a constant as if the value were never negative (both RADV backends)."""
    g = Gen(0)
    g.lx, g.ly, g.ls, g.groups, g.dynamic_ubo = 64, 1, 64, 1, False
    g.lines = ["    uint64_t v0 = int64_t(int(c[2u * i + 1u])) <= 0l ? 1ul : 0ul;"]

    def assign(e):
        e["v0"] = int(s32(e["c"][1]) <= 0)

    g.stmts = [("lane", assign)]
    g.emit_out("v0", "u64")
    return g


@needs_aco
def test_int64_compiler_triage():
    """The compiled program (ACO's and LLVM's alike) stores 0 where Python says 1 for the
    negative lanes: counted as the compiler's difference, not wavelift's; with the triage off it
    is a failure naming the build."""
    g = sign_extended_compare()
    inp = g.inputs()
    assert any(s32(v) <= 0 for v in inp["c"][1::2])  # the inputs hold negative values
    before = len(COMPILER_DIFFERENCES)
    check(-1, builds=(BUILDS[0],), modes=("wave",), program=g)
    assert [d[:4] for d in COMPILER_DIFFERENCES[before:]] == [(-1, "navi21", 32, "wave")]
    with pytest.raises(AssertionError, match="seed -1 navi21 w32 wave"):
        check(-1, builds=(BUILDS[0],), modes=("wave",), program=g, triage=False)


@needs_aco
@pytest.mark.skipif(not have_radv_capture(), reason="tools/radv_capture cannot be built here (Mesa source)")
def test_int64_capture_short():
    """Seed 19 (subgroupMin, shared memory, three groups) recorded by RADV itself
    (tools/radv_capture, navi21 wave64), imported and replayed in wave mode: equal to Python
    integers."""
    g = make(19)
    inp = g.inputs()
    got = capture_run(g, inp, "navi21", 64, "gfx1030", modes=("wave",))["wave"]
    assert (got == g.expected(64, inp)).all()


@needs_aco
@pytest.mark.slow
def test_int64_many():
    """40 seeds on every build (navi21 w32/w64, navi10 w64/w32), both modes, the RADV capture
    path for every fourth."""
    for seed in range(100, 140):
        check(seed, capture=seed % 4 == 0 and have_radv_capture())


def summary(logs: list[str]) -> None:
    """Seeds, results compared, programs holding each feature, the compiler's differences."""
    import collections

    seeds, results, feats, comp, shapes = set(), 0, collections.Counter(), [], collections.Counter()
    for log in logs:
        for line in pathlib.Path(log).read_text().splitlines():
            r = json.loads(line)
            if r["seed"] in seeds:
                continue
            seeds.add(r["seed"])
            results += r["results"]
            feats.update(r["features"].keys())
            comp += r["compiler"]
            shapes[f"{r['local_size'][0]}x{r['local_size'][1]}"] += 1
    print(f"{len(seeds)} programs, {results} results compared, compiler's differences: {comp or 'none'}")
    print("local sizes:", dict(sorted(shapes.items())))
    print("programs holding each feature:", dict(feats.most_common()))


def main(argv: list[str]) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("seed", type=int, nargs="?")
    p.add_argument("--summary", nargs="+", metavar="LOG", help="tally WAVELIFT_FUZZ_INT64_LOG files")
    p.add_argument("--out", help="write shader.comp, inputs.json and expected-w32/w64.npy here")
    p.add_argument("--check", action="store_true", help="run it too (every build and mode)")
    a = p.parse_args(argv)
    if a.summary:
        summary(a.summary)
        return
    if a.seed is None:
        p.error("a seed or --summary")
    g = make(a.seed)
    src = g.source()
    if a.out:
        d = pathlib.Path(a.out)
        d.mkdir(parents=True, exist_ok=True)
        (d / "shader.comp").write_text(src)
        inp = g.inputs()
        (d / "inputs.json").write_text(json.dumps({**inp, "groups": g.groups, "nout": g.nout}))
        for w in (32, 64):
            np.save(d / f"expected-w{w}.npy", g.expected(w, inp))
    else:
        sys.stdout.write(src)
    if a.check:
        print(check(a.seed), "results equal")


if __name__ == "__main__":
    main(sys.argv[1:])
