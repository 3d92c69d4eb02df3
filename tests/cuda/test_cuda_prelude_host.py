"""The CUDA prelude's trig_preop, fma_to (round-to-odd), add with carry, group-index division and memory-read helpers, compiled for the host with g++
through a small shim (wavelift/backends/host.py maps the __d*_rn intrinsics onto IEEE host
arithmetic), agree bit for bit with the NumPy backend's helpers.  No GPU needed; skips without
g++.  (The NaN fix-ups the GPU needs are no-ops on x86, which makes NaNs this way already.)"""

from __future__ import annotations

import pathlib
import subprocess

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent

MAIN = r"""
#include <cstdio>
int main() {
  char op[8];
  while (scanf("%7s", op) == 1) {
    if (op[0] == 'r') {
      unsigned char buf[72]; unsigned idx, nb; u32 w[8];
      for (int k = 0; k < 72; k++) { unsigned v; scanf("%2x", &v); buf[k] = (unsigned char)v; }
      scanf("%u %u", &idx, &nb);
      wl_read(buf, (long long)idx, nb, w, 8u);
      for (int k = 0; k < 8; k++) printf("%x%c", w[k], k == 7 ? '\n' : ' ');
    } else if (op[0] == 'd') {
      unsigned n, m, sh; scanf("%u %u %u", &n, &m, &sh);
      printf("%u\n", wl_udiv(n, m, sh));
    } else if (op[0] == 'a') {
      unsigned a, b; scanf("%x %x", &a, &b);
      printf("%llx\n", (unsigned long long)wl_addc(a, b));
    } else if (op[0] == 't') {
      unsigned long long xb; unsigned seg; scanf("%llx %u", &xb, &seg);
      printf("%llx\n", (unsigned long long)__double_as_longlong(wl_trig_preop(__longlong_as_double((long long)xb), seg)));
    } else {
      unsigned a, b, c; scanf("%x %x %x", &a, &b, &c);
      printf("%x\n", (unsigned)wl_to_f16(wl_fma_odd(wl_fwide(__uint_as_float(a)), wl_fwide(__uint_as_float(b)),
                                                    wl_fwide(__uint_as_float(c)))).b);
    }
  }
}
"""


@pytest.fixture(scope="module")
def helper_exe(tmp_path_factory):
    host_build.gxx()
    from wavelift.backends import host
    from wavelift.backends.cuda.prelude import PRELUDE

    rd = PRELUDE[
        PRELUDE.index("__device__ __forceinline__ void wl_read(") : PRELUDE.index(
            "__device__ __forceinline__ void wl_write("
        )
    ]
    source = host.CUDA_KEYWORDS + host.prelude_semantics() + rd + MAIN  # (wl_read: CUDA text)
    flags = ("-O1", "-ffp-contract=off", "-std=c++17", "-w", f"-I{HERE}")
    return host_build.build(tmp_path_factory.mktemp("prelude"), "t", source, flags, exe=True)


def _run(exe, lines):
    return subprocess.run(
        [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    ).stdout.split()


def test_trig_preop_matches_numpy(helper_exe):
    from wavelift.backends.numpy import helpers as H

    rng = np.random.default_rng(1)
    xs = [
        (((e << 52) | int(rng.integers(0, 1 << 52)) | (int(rng.integers(0, 2)) << 63)), seg)
        for e in list(range(0, 2048, 7)) + [1077, 1078, 1967, 1968, 2046, 2047]
        for seg in (0, 1, 2, 5, 17, 31, 33)
    ]
    got = [int(v, 16) for v in _run(helper_exe, [f"t {x:x} {s}" for x, s in xs])]
    ref = H.trig_preop(
        np.array([x for x, _ in xs], np.uint64).view(np.float64), np.array([s for _, s in xs], np.uint32)
    ).view(np.uint64)
    bad = [(hex(xs[i][0]), xs[i][1]) for i in range(len(xs)) if got[i] != int(ref[i])]
    assert not bad, bad[:5]


def test_fma_to_f16_matches_numpy(helper_exe):
    from wavelift.backends.numpy import helpers as H

    rng = np.random.default_rng(2)
    vals = np.concatenate(
        [
            rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32),
            rng.normal(0, 8, 4000).astype(np.float32).view(np.uint32),
            np.array(
                [
                    0,
                    0x80000000,
                    0x7F800000,
                    0xFF800000,
                    0x7FC00000,
                    0x7F800001,
                    0x3F800000,
                    0x33000000,
                    0x477FF000,
                    0x38800000,
                    1,
                ],
                np.uint32,
            ),
        ]
    )
    n = 20000
    a, b, c = (rng.choice(vals, n) for _ in range(3))
    got = np.array(
        [int(v, 16) for v in _run(helper_exe, [f"f {x:x} {y:x} {z:x}" for x, y, z in zip(a, b, c)])]
    )
    with np.errstate(all="ignore"):
        ref = H.fma(a.view(np.float32), b.view(np.float32), c.view(np.float32), np.float16).view(np.uint16)
    bad = np.flatnonzero(got != ref)
    assert not bad.size, [(hex(a[i]), hex(b[i]), hex(c[i])) for i in bad[:5]]


def test_add_with_carry_is_the_wide_sum(helper_exe):
    """wl_addc (codegen's lowering of (u64)a + (u64)b for two u32: v_add_co_u32's sum and
    carry) is the 64-bit sum, at the carry's edges and on random values."""
    rng = np.random.default_rng(4)
    edge = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF]
    pairs = [(a, b) for a in edge for b in edge] + [
        tuple(int(v) for v in rng.integers(0, 1 << 32, 2, dtype=np.uint64)) for _ in range(200)
    ]
    got = [int(v, 16) for v in _run(helper_exe, [f"a {a:x} {b:x}" for a, b in pairs])]
    assert got == [a + b for a, b in pairs]


def test_group_division_matches_python(helper_exe):
    """wl_udiv with codegen.div_magic's numbers is n // d for every u32 n (the kernel's group
    x/y/z from its flat index), checked at the edges and on random values."""
    from wavelift.backends.cuda.codegen import div_magic

    rng = np.random.default_rng(3)
    ds = (
        list(range(1, 70))
        + [
            255,
            256,
            257,
            1 << 16,
            65535,
            65537,
            3**20,
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 1,
            (1 << 32) - 2,
            (1 << 32) - 1,
        ]
        + [int(v) for v in rng.integers(1, 1 << 32, 40, dtype=np.uint64)]
    )
    cases = []
    for d in ds:
        m, sh = div_magic(d)
        ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, (1 << 32) - 1, (1 << 32) - 2, 1 << 31} | {
            int(v) for v in rng.integers(0, 1 << 32, 30, dtype=np.uint64)
        }
        cases += [(n, d, m, sh) for n in sorted(ns) if n < (1 << 32)]
    got = [int(v) for v in _run(helper_exe, [f"d {n} {m} {sh}" for n, _, m, sh in cases])]
    bad = [(n, d) for (n, d, _, _), q in zip(cases, got) if q != n // d]
    assert not bad, bad[:5]


def test_read_any_alignment(helper_exe):
    """wl_read (global and LDS loads) gives the nb bytes at any index as little-endian words,
    the last zero-extended, the words past the access 0 -- for every size a load has."""
    rng = np.random.default_rng(4)
    lines, want = [], []
    for _ in range(400):
        buf = rng.integers(0, 256, 72, dtype=np.uint8)
        nb = int(rng.choice([1, 2, 4, 8, 12, 16, 32]))
        idx = int(rng.integers(0, 64 - nb + 1))
        lines.append("r " + buf.tobytes().hex() + f" {idx} {nb}")
        b = buf[idx : idx + nb].tobytes() + bytes(32 - nb)
        want.append(" ".join(f"{int.from_bytes(b[4 * k : 4 * k + 4], 'little'):x}" for k in range(8)))
    out = subprocess.run(
        [str(helper_exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    ).stdout.splitlines()
    bad = [(lines[i][-8:], out[i], want[i]) for i in range(len(lines)) if out[i] != want[i]]
    assert not bad, bad[:3]


def test_minmax_with_a_constant_is_wl_fmin_fmax(tmp_path):
    """codegen.minmax_const (an f32 fmin/fmax with a constant operand as one compare) gives the
    bits wl_fmin / wl_fmax give, for every operand kind, the constant first or second; and it is
    not used where it would not (a NaN constant, fmax with -0, fmin with +0)."""
    import ctypes

    from wavelift.backends import host
    from wavelift.backends.cfamily.lowering import const_literal, minmax_const

    cxx = host.compiler()
    if cxx is None:
        pytest.skip("no host C++ compiler")
    f32 = np.float32
    consts = [0.0, -0.0, 255.0, -1.5, np.inf, -np.inf, 1e-45, -3e-39, np.nan]
    xs = np.array(
        [
            0,
            0x80000000,
            0x7F800000,
            0xFF800000,
            0x7FC00000,
            0xFFC00001,
            0x7F800001,
            0x00000001,
            0x80000001,
            0x007FFFFF,
            0x3F800000,
            0xBF800000,
            0x437F0000,
            0x437F0001,
            0x437EFFFF,
            0xBFC00000,
            0x00000000 | 0x00200000,
        ],
        np.uint32,
    )
    xs = np.concatenate(
        [xs, np.random.default_rng(7).integers(0, 1 << 32, 512, dtype=np.uint64).astype(np.uint32)]
    )
    body, used = [], []
    for n in ("fmin", "fmax"):
        for c in consts:
            lit = const_literal("f32", f32(c))
            for a in (["x", lit], [lit, "x"]):
                e = minmax_const(n, a)
                bits = int(np.array(f32(c)).view(np.uint32))
                expect_none = np.isnan(c) or bits == (0x80000000 if n == "fmax" else 0)
                assert (e is None) == expect_none, (n, c, e)
                if e is not None:
                    used.append(e)
                    body.append(
                        f"  o[k++] = __float_as_uint({e}); o[k++] = __float_as_uint(wl_{n}({a[0]}, {a[1]}));"
                    )
    source = (
        host.prelude_semantics() + 'extern "C" void t(const u32* in, u32* out, long n) {\n'
        "  for (long i = 0; i < n; i++) { const f32 x = __uint_as_float(in[i]); u32* o = out + i * "
        f"{2 * len(body)}; int k = 0;\n" + "\n".join(body) + "\n  }\n}\n"
    )
    flags = ("-O2", "-march=native", "-fno-trapping-math", *host.COMPILE_FLAGS)
    lib = host_build.load(tmp_path, "m", source, flags, cxx=cxx)
    out = np.zeros((len(xs), len(body), 2), np.uint32)
    lib.t(ctypes.c_void_p(xs.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_long(len(xs)))
    assert len(used) == 2 * 2 * (len(consts) - 2)  # every case but NaN and each one's zero, both orders
    bad = np.argwhere(out[..., 0] != out[..., 1])
    assert not len(bad), [(hex(int(xs[i])), used[j]) for i, j in bad[:5]]
