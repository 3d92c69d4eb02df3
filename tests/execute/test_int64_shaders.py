"""64-bit integer shaders (tests/fixtures/glsl/int64_*.comp: division/remainder by 32- and
64-bit, uniform and constant divisors; multiply, variable shifts, rotates, min/max, float and
double conversions; buffer atomics) as RADV captured them for navi21 wave32/wave64 and navi10
(tests/fixtures/captures/radv-int64_*.wlcap), replayed in wave and lane mode on both tiers, must
leave their output buffer bit-identical to what lavapipe computed from the same SPIR-V and inputs
(tests/fixtures/lavapipe/<shader>/, recorded by tools/lavapipe_run/record.sh; the captures also
carry its sha256 as their expected result).  With lavapipe installed, the expected bytes are also
re-made live from the committed SPIR-V (skipped cleanly otherwise).

The ACO fixtures of the same shaders (tests/fixtures/<gfx>/aco/int64_*) go through
wavelift.Device.load_aco_shader in tests/execute/test_aco_fixtures.py with check_aco_launch.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from testpaths import FIXTURES, ROOT

from wavelift import Capture, replay

SHADERS = ("int64_div", "int64_misc", "int64_atomic")
BUILDS = ("w32", "w64", "navi10-w64")
OUTPUT = "set0_binding3.bin"  # the last binding of both shaders
NOUT = 16  # 64-bit results per lane


def expected(shader, nout=NOUT):
    return np.fromfile(FIXTURES / "lavapipe" / shader / OUTPUT, np.uint64).reshape(-1, nout)


def inputs(shader):
    d = FIXTURES / "radv" / f"{shader}-w32" / "inputs"
    out = {k: (d / f"{k}.bin").read_bytes() for k in ("a", "b", "c", "push")}
    o = d / "o.bin"  # the output buffer's initial bytes (atomics), else zeros
    out["o"] = o.read_bytes() if o.exists() else bytes(len(out["a"]) * NOUT)
    return out


def differences(got, want):
    bad = np.argwhere(got != want)
    return [(int(i), int(j), hex(int(got[i, j])), hex(int(want[i, j]))) for i, j in bad[:6]], len(bad)


def replay_and_compare(shader, build, mode):
    cap = Capture.load(FIXTURES / "captures" / f"radv-{shader}-{build}.wlcap")
    rs = replay(cap, mode=mode)
    assert len(rs) == 1 and rs[0].landed, [str(r.refusal) for r in rs]
    (m,) = cap.expected["memory"]
    got = np.frombuffer(cap.read(int(m["address"], 16), m["size"]), np.uint64).reshape(-1, NOUT)
    first, n = differences(got, expected(shader))
    assert not n, f"{n} results differ from lavapipe (lane, result, got, lavapipe): {first}"
    assert cap.check_expected(rs) == []


# default run: one build of each shader in wave mode on NumPy blocks (~4 s each); every build in
# both modes on every tier (a C++ build of ~2,400 instructions per module and mode) with -m slow
@pytest.mark.parametrize(
    "shader,build", [("int64_div", "w32"), ("int64_misc", "navi10-w64"), ("int64_atomic", "w64")]
)
def test_capture_replays_as_lavapipe(shader, build):
    replay_and_compare(shader, build, "wave")


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ("wave", "lane"))
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shader", SHADERS)
def test_capture_replays_as_lavapipe_every_tier(shader, build, mode):
    replay_and_compare(shader, build, mode)


def check_aco_launch(dev, sh, name):
    """An ACO fixture of an int64 shader launched with the captures' inputs: the output equals
    lavapipe's, and the input buffers are untouched (int64_div32_shapes: its own inputs against
    Python integers)."""
    if name == "int64_div32_shapes":
        got, unchanged = launch_div32_shapes(dev, sh)
        want = ref_div32_shapes(*div32_shapes_inputs())
        first, count = differences(got, want)
        assert not count, f"{count} results differ from Python integers: {first}"
        assert (want == expected("int64_div32_shapes", 8)).all()  # the same as lavapipe's
        assert unchanged
        return
    shader = name
    inp = inputs(shader)
    n = len(inp["a"]) // 8
    bufs = {(0, k): dev.upload(np.frombuffer(inp[x], np.uint8).copy()) for k, x in enumerate("abc")}
    out = dev.upload(np.frombuffer(inp["o"], np.uint64).copy())
    bufs[(0, 3)] = out
    r = sh.launch(groups=(n // 64 + 1, 1, 1), buffers=bufs, push_constants=inp["push"])  # + an idle group
    assert r.landed, f"refused {r.refusal.code}: {r.refusal.message}"
    first, count = differences(dev.download(out, np.uint64).reshape(-1, NOUT), expected(shader))
    assert not count, f"{count} results differ from lavapipe: {first}"
    for k, x in enumerate("abc"):
        assert dev.download(bufs[(0, k)], np.uint8).tobytes() == inp[x]


LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


@pytest.mark.slow
@pytest.mark.skipif(not (os.path.exists(LVP_ICD) and shutil.which("gcc")), reason="lavapipe not installed")
@pytest.mark.parametrize("shader", SHADERS)
def test_lavapipe_live_gives_the_committed_bytes(shader, tmp_path):
    exe = tmp_path / "lavapipe_run"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/lavapipe_run/lavapipe_run.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_run does not build here (libvulkan-dev?): " + p.stderr[-200:])
    d = FIXTURES / "radv" / f"{shader}-w32"
    cmd = [
        str(exe),
        f"{shader}.spv",
        str(tmp_path),
        "--groups",
        "6,1,1",
        "--push",
        "inputs/push.bin",
        "--binding",
        "0:0:2560:inputs/a.bin",
        "--binding",
        "0:1:2560:inputs/b.bin",
        "--binding",
        "0:2:1280:inputs/c.bin",
        "--binding",
        "0:3:40960" + (":inputs/o.bin" if (d / "inputs/o.bin").exists() else ""),
    ]
    p = subprocess.run(
        cmd, cwd=d, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD)
    )
    if p.returncode == 3:
        pytest.skip("no lavapipe device: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    assert (tmp_path / OUTPUT).read_bytes() == (FIXTURES / "lavapipe" / shader / OUTPUT).read_bytes()


# LLVM's own 64-bit division expansion (AMDGPU's LowerUDIVREM64: v_rcp_iflag_f32 of a float made
# from both halves, v_fmamk/v_madmk by 2^32 and 2^-32, v_mul_hi_u32 / v_mad_u64_u32 refinement,
# v_sub_co_ci_u32 corrections) as clang emits it for OpenCL, on the captures' inputs, against
# Python integers.
DIV_CL = """
__kernel void udiv(__global const ulong *a, __global const uint *c, __global const ulong *b,
                   __global ulong *o, uint n) {
    uint i = get_global_id(0);
    if (i >= n) return;
    ulong x = a[i], y = b[i] | 1ul;
    uint d = c[i] | 1u;
    o[6*i+0] = x / d;
    o[6*i+1] = x % d;
    o[6*i+2] = x / y;
    o[6*i+3] = x % y;
    bool ovf = x == 0x8000000000000000ul;          /* LONG_MIN / -1 is undefined */
    o[6*i+4] = ovf && y == ~0ul ? 0 : (ulong)((long)x / (long)y);
    o[6*i+5] = ovf && d == ~0u ? 0 : (ulong)((long)x % (long)(int)d);
}
"""


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _s(v, bits):
    return v - (1 << bits) if v >> (bits - 1) else v


def _div_ref(x, y, d):
    M = (1 << 64) - 1
    sx, sy, sd = _s(x, 64), _s(y, 64), _s(d, 32)
    ovf = x == 1 << 63
    return [
        x // d,
        x % d,
        x // y,
        x % y,
        0 if ovf and sy == -1 else _tdiv(sx, sy) & M,
        0 if ovf and sd == -1 else (sx - _tdiv(sx, sd) * sd) & M,
    ]


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed")
@pytest.mark.parametrize("target", ("gfx1030", "gfx1010"))
def test_llvm_udiv64_expansion(target, tmp_path):
    import wavelift

    src, out = tmp_path / "div.cl", tmp_path / "div.hsaco"
    src.write_text(DIV_CL)
    subprocess.run(
        [
            "clang-19",
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-Xclang",
            "-finclude-default-header",
            "-nogpulib",
            "-target",
            "amdgcn-amd-amdhsa",
            f"-mcpu={target}",
            "-O2",
            "-include",
            str(FIXTURES / "opencl" / "wl_builtins.h"),
            str(src),
            "-o",
            str(out),
        ],
        check=True,
    )
    inp = inputs("int64_div")
    a, b = (np.frombuffer(inp[k], np.uint64) for k in "ab")
    c = np.frombuffer(inp["c"], np.uint32)
    n = len(a)
    for mode in ("wave", "lane"):
        dev = wavelift.Device(target, backend="numpy", mode=mode)
        k = dev.load_code_object(str(out)).kernel("udiv")
        ob = dev.upload(np.zeros(6 * n, np.uint64))
        r = k.launch(
            global_size=(n, 1, 1), block=(64, 1, 1), args=[dev.upload(a), dev.upload(c), dev.upload(b), ob, n]
        )
        assert r.landed, r.refusal
        got = dev.download(ob, np.uint64).reshape(n, 6)
        want = np.array([_div_ref(int(x), int(y) | 1, int(d) | 1) for x, y, d in zip(a, b, c)], np.uint64)
        first, count = differences(got, want)
        assert not count, f"{mode}: {count} results differ (lane, result, got, want): {first}"


# ---- int64_div32_shapes: 64/32-bit division in the shapes around the lowering's high-word pass ----
# (tests/fixtures/glsl/int64_div32_shapes.comp; ACO fixtures tests/fixtures/<gfx>/aco/int64_div32_shapes-*)
SHAPES_GROUPS, SHAPES_STRIDE, SHAPES_D32 = 3, 96, 0x80000011


def div32_shapes_inputs():
    """Edge dividends against edge divisors (small, 2^31.., 2^32-1), then random words of mixed
    widths (q > 2^32 with small divisors, q < 2^32 with large ones)."""
    rng = np.random.default_rng(20)
    n = 128 * SHAPES_GROUPS
    e64 = [0, 1, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, 2**64 - 1, 0x123456789ABCDEF0]
    e32 = [1, 2, 3, 15, 16, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF]
    bits = rng.choice([64, 63, 48, 33, 32, 20], n).astype(np.uint64)
    a = (
        rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    ) >> (np.uint64(64) - bits)
    c = rng.integers(0, 2**32, n, dtype=np.uint64)
    pick = rng.integers(0, 3, n)
    c = np.where(pick == 0, rng.integers(1, 17, n, dtype=np.uint64), c)
    c = np.where(pick == 1, rng.integers(2**31, 2**32, n, dtype=np.uint64), c).astype(np.uint32)
    k = len(e64) * len(e32)
    a[:k] = np.repeat(np.array(e64, np.uint64), len(e32))
    c[:k] = np.tile(np.array(e32, np.uint32), len(e64))
    return a, c


def ref_div32_shapes(a, c):
    """What the GLSL computes, in Python integers: [n, 8] 64-bit results."""
    M, W = 2**64 - 1, 0xFFFFFFFF
    A, C = [int(v) for v in a], [int(v) | 1 for v in c]
    n = len(A)
    out = np.zeros((n, 8), np.uint64)
    for i in range(n):
        t, g = i % 128, i // 128
        x, d = A[i], C[i]
        acc, acc64 = 0, 0
        for k in range(i, n, SHAPES_STRIDE):
            acc64 += A[k] // C[k]
            acc ^= (A[k] % C[k]) & W
        lo, hi = (x & W) * d & W, (x & W) * d >> 32
        s, carry = (lo + d) & W, (lo + d) >> 32
        u, borrow = (hi - d) & W, int(hi < d)
        xu, du = A[131 * g + 77], C[131 * g + 77]
        out[i] = [
            x // d if t % 3 == 0 else x % d,
            A[128 * g + 127 - t] // (127 - t + 1),
            acc64 & M,
            acc,
            (lo | hi << 32) // d,
            (s | ((u + carry + borrow) & W) << 32) % d,
            x // (SHAPES_D32 + g),
            (xu // du) ^ (xu % d),
        ]
    return out


def launch_div32_shapes(dev, sh):
    """The fixture launched on its inputs: (results [n, 8], inputs untouched)."""
    import struct

    a, c = div32_shapes_inputs()
    n = len(a)
    bufs = {
        (0, 0): dev.upload(a),
        (0, 1): dev.upload(a.copy()),
        (0, 2): dev.upload(c),
        (0, 3): dev.upload(np.zeros(8 * n, np.uint64)),
    }
    r = sh.launch(
        groups=(SHAPES_GROUPS, 1, 1),
        buffers=bufs,
        push_constants=struct.pack("<III", SHAPES_D32, n, SHAPES_STRIDE),
    )
    assert r.landed, f"refused {r.refusal.code}: {r.refusal.message}"
    unchanged = all(
        dev.download(bufs[(0, k)], np.uint8).tobytes() == v.tobytes() for k, v in ((0, a), (1, a), (2, c))
    )
    return dev.download(bufs[(0, 3)], np.uint64).reshape(n, 8), unchanged


def test_div32_shapes_wave_mode():
    """Default run: the navi21 wave32 build in wave mode on NumPy blocks (every build, mode and
    tier: test_aco_fixtures.py -m slow)."""
    import wavelift

    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    check_aco_launch(
        dev,
        dev.load_aco_shader(str(FIXTURES / "gfx1030/aco/int64_div32_shapes-w32.json")),
        "int64_div32_shapes",
    )
