"""MIMG image atomics (frontend/image.py ``_atomic``, decision 0034) on storage images of R32_UINT
/ R32_SINT: every integer op (swap, cmpswap, add, sub, smin, umin, smax, umax, and, or, xor, inc,
dec) through hand-built T#s, on a linear and a tiled (64KB_S) 2-D image, with several lanes of
several waves on each texel.  Expected: a NumPy model (the op applied per texel in any order):
the final texels bit for bit for every op (for swap and cmpswap: the final texel is one of the
values the lanes wrote, as the returned values say); the values GLC returns, where the order
decides, checked as a valid serialization (each lane's returned value is the texel's value after
the lanes before it, in some order).  Then GLSL imageAtomic* compiled by ACO
(tools/aco_compile) through our driver against the same model; every form still refused is
refused by name; the CUDA backend's kernels for the programs compile (NVRTC, no GPU here)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from aco_build import aco_build
from harness import Rig, ptr
from nvrtc_check import check_cuda_kernels
from testpaths import ROOT

import wavelift
import wavelift.driver.aco as aco
from wavelift.driver.aco import Image
from wavelift.memory import layout as L

# 4 groups of 64 lanes (wave32: 8 waves); lane k reads (data, texel) from in[2k], in[2k + 1],
# runs the atomic on texel (t % 8, t / 8) of an 8x4 image, and writes what it returned to out[k]
PROG = """
  s_lshl_b32 s13, s12, 6
  v_add_nc_u32 v1, s13, v0
  v_lshlrev_b32 v2, 3, v1
  global_load_dwordx2 v[3:4], v2, s[8:9]
  s_waitcnt vmcnt(0)
  v_and_b32 v5, 7, v4
  v_lshrrev_b32 v6, 3, v4
  v_mov_b32 v4, CMPV
  image_atomic_OP DATA, v[5:6], s[0:7] dmask:DMASK dim:SQ_RSRC_IMG_2D unorm glc
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v7, 2, v1
  global_store_dword v7, v3, s[10:11]
  s_endpgm
"""
W, H, PITCH = 8, 4, 64  # texels; a linear row is 256 bytes
N = 256
GROUPS = N // 64
FMT = {"r32ui": 20, "r32i": 21}
OPS = ["swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec"]
CMPV = 0x1234  # cmpswap's compared value: the texels that hold it take the first lane's data
CMPV64 = 0x1234_0000_5678
MODE_64KB_S = next(m for m, n in L.sw_mode_names().items() if n == "64KB_S")


def tsharp(addr, fmt, sw_mode=0, w=W, h=H, typ=9):
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | sw_mode << 20 | typ << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        0,
        0,
        0,
        0,
    ]


def program(op):
    data = "v[3:4]" if op == "cmpswap" else "v3"
    dmask = "0x3" if op == "cmpswap" else "0x1"
    return PROG.replace("OP", op).replace("DATA", data).replace("DMASK", dmask).replace("CMPV", hex(CMPV))


def apply(op, old, d, bits=32):
    """The ISA guide's operation of image_atomic_<op> on one 32-bit (or 64-bit) texel (unsigned
    Python ints)."""
    s = lambda v: v - (1 << bits) if v >> (bits - 1) else v  # noqa: E731
    m = (1 << bits) - 1
    return {
        "swap": lambda: d,
        "cmpswap": lambda: d if old == (CMPV if bits == 32 else CMPV64) else old,
        "add": lambda: (old + d) & m,
        "sub": lambda: (old - d) & m,
        "smin": lambda: old if s(old) <= s(d) else d,
        "umin": lambda: min(old, d),
        "smax": lambda: old if s(old) >= s(d) else d,
        "umax": lambda: max(old, d),
        "and": lambda: old & d,
        "or": lambda: old | d,
        "xor": lambda: old ^ d,
        "inc": lambda: 0 if old >= d else old + 1,
        "dec": lambda: d if old == 0 or old > d else old - 1,
    }[op]()


def inputs(op, seed):
    """(data, texel) per lane and the image's first values: every texel hit by 8 lanes of
    different waves; data chosen so the order independence holds (inc/dec with large bounds)."""
    rng = np.random.default_rng(seed)
    texel = rng.permutation(np.arange(N) % (W * H)).astype(np.uint32)
    data = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    init = rng.integers(0, 2**32, W * H, dtype=np.uint64).astype(np.uint32)
    if op in ("inc", "dec"):
        init = rng.integers(100, 1000, W * H).astype(np.uint32)
        data = np.full(N, 10**6, np.uint32)
    if op == "cmpswap":
        init[::2] = CMPV  # half the texels hold the compared value
    return data, texel, init


def check(op, data, texel, init, got_old, final, bits=32):
    """final: the order-independent result for commutative ops, and for every op a valid
    serialization of the lanes on each texel explains both the returned values and final."""
    for t in range(W * H):
        lanes = np.nonzero(texel == t)[0]
        if op in ("add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec"):
            v = int(init[t])
            for k in lanes:
                v = apply(op, v, int(data[k]), bits)
            assert int(final[t]) == v, (op, t)
        # a serialization: an order of the lanes in which each one's returned value is the
        # texel's value before it and the last value is the final texel (depth-first, memoized)
        seen = set()

        def order(left, v):
            if not left:
                return v == int(final[t])
            if (left, v) in seen:
                return False
            seen.add((left, v))
            return any(
                order(left - {k}, apply(op, v, int(data[k]), bits)) for k in left if int(got_old[k]) == v
            )

        assert order(frozenset(int(k) for k in lanes), int(init[t])), (
            op,
            t,
            hex(int(init[t])),
            [(hex(int(data[k])), hex(int(got_old[k]))) for k in lanes],
            hex(int(final[t])),
        )


def run_rig(op, fmt, mode, sw_mode=0):
    data, texel, init = inputs(op, OPS.index(op) + 7 * sw_mode)
    r = Rig(program(op))
    if sw_mode:
        chip = L.Chip(True, 0)
        s = L.Surface(sw_mode, L.RSRC_2D, 2, W, H)
        size = L.surface_info(s, chip).slice_size
        y, x = np.mgrid[0:H, 0:W]
        offs = L.address(chip, s, x.ravel(), y.ravel(), 0).astype(np.int64) // 4
    else:
        size = PITCH * H * 4
        offs = (np.arange(W * H) // W) * PITCH + np.arange(W * H) % W
    mem = np.random.default_rng(3).integers(0, 2**32, size // 4, dtype=np.uint64).astype(np.uint32)
    mem[offs] = init
    a = r.mem.alloc(size, name="img", align=65536, data=mem.tobytes())
    src = r.buf(np.stack([data, texel], 1).ravel(), "in")
    out = r.buf(np.full(N, 7, np.uint32), "out")
    sg = tsharp(a, FMT[fmt], sw_mode) + list(ptr(src)) + list(ptr(out))
    res = r.run(r.config(user_sgprs=sg, groups=(GROUPS, 1, 1), block=(64, 1, 1)), mode=mode)
    return res, r, a, out, (data, texel, init, mem, offs, size)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("op", OPS)
def test_image_atomics_linear_r32ui(op, mode):
    _run_and_check(op, "r32ui", mode)


@pytest.mark.parametrize("op", ["smin", "smax", "add", "cmpswap"])
def test_image_atomics_tiled_r32i(op):
    _run_and_check(op, "r32i", "wave", MODE_64KB_S)


def native_default(test_id: str) -> bool:
    # the native tier compiles a library per program: keep a few ops in the default run
    if "64bit" in test_id:
        return "-cmpswap-" in test_id or "-smax-" in test_id
    return any(f"-{op}-" in test_id or test_id.endswith(f"-{op}") for op in ("cmpswap", "add", "smin"))


def _run_and_check(op, fmt, mode, sw_mode=0):
    res, r, a, out, (data, texel, init, mem, offs, size) = run_rig(op, fmt, mode, sw_mode)
    assert res.landed, res.refusal
    got_old = r.read(out, np.uint32, N)
    img = r.read(a, np.uint32, size // 4)
    final = img[offs]
    check(op, data, texel, init, got_old, final)
    # nothing but the texels changed
    rest = np.ones(size // 4, bool)
    rest[offs] = False
    np.testing.assert_array_equal(img[rest], mem[rest])


# ---- refused by name -------------------------------------------------------------------------
def _refused(op, fmt=20, change=lambda t: t, src=None, texel_off=0):
    r = Rig(src or program(op))
    data, texel, init = inputs(op, 1)
    texel = texel + np.uint32(texel_off)
    a = r.mem.alloc(PITCH * H * 4, name="img", align=256)
    src_b = r.buf(np.stack([data, texel], 1).ravel(), "in")
    out = r.buf(np.full(N, 7, np.uint32), "out")
    sg = change(tsharp(a, fmt)) + list(ptr(src_b)) + list(ptr(out))
    res = r.run(r.config(user_sgprs=sg, groups=(GROUPS, 1, 1), block=(64, 1, 1)))
    assert not res.landed
    assert r.read(out, np.uint32, N).tolist() == [7] * N  # a refused dispatch changes nothing
    return res.refusal


@pytest.mark.parametrize(
    "fmt", [22, 56, 62, 11], ids=["r32f", "rgba8", "r32g32ui", "r16ui"]
)  # 32_FLOAT, 8_8_8_8_UNORM, 32_32_UINT, 16_UINT
def test_image_atomic_on_other_formats_refused(fmt):
    ref = _refused("add", fmt)
    assert ref.code == "image.unsupported_format", ref


def test_image_atomic_out_of_range_refused():
    # texels 32..63 lie in rows 4..7 of a 4-row image
    ref = _refused("add", texel_off=W * H)
    assert ref.code == "image.unsupported_descriptor" and "out of range" in ref.message, ref


def test_image_atomic_null_descriptor_refused():
    ref = _refused("add", change=lambda t: [0] * 8)
    assert ref.code == "image.unsupported_descriptor" and "null descriptor" in ref.message, ref


@pytest.mark.parametrize(
    "text",
    [
        "image_atomic_fmin v3, v[5:6], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc",
        "image_atomic_fcmpswap v[3:4], v[5:6], s[0:7] dmask:0x3 dim:SQ_RSRC_IMG_2D unorm glc",
        "image_atomic_add v3, v5, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc a16",
        "image_atomic_add v[3:4], v[5:6], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc tfe",
        "image_atomic_add v3, v[5:7], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_CUBE unorm glc",
    ],
    ids=["fmin", "fcmpswap", "a16", "tfe", "cube"],
)
def test_untranslated_image_atomics_refused_by_name(text):
    src = program("add").replace(
        "  image_atomic_add v3, v[5:6], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc", "  " + text
    )
    assert text in src
    ref = _refused("add", src=src)
    assert ref.code == "program.unsupported_instruction", ref
    assert text.split()[0] in ref.message


# ---- 64-bit atomics: RADV's R64 images (32_32_UINT / 32_32_SINT T#s), dmask 0x3 / 0xF ----------
PROG64 = """
  s_lshl_b32 s13, s12, 6
  v_add_nc_u32 v1, s13, v0
  v_lshlrev_b32 v2, 4, v1
  global_load_dwordx4 v[3:6], v2, s[8:9]
  s_waitcnt vmcnt(0)
  v_and_b32 v7, 7, v5
  v_lshrrev_b32 v8, 3, v5
  v_mov_b32 v5, CMPLO
  v_mov_b32 v6, CMPHI
  image_atomic_OP DATA, v[7:8], s[0:7] dmask:DMASK dim:SQ_RSRC_IMG_2D unorm glc
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v9, 3, v1
  global_store_dwordx2 v9, v[3:4], s[10:11]
  s_endpgm
"""
FMT64 = {"r64ui": 62, "r64i": 63}  # 32_32_UINT, 32_32_SINT (Mesa's gfx10_format_table.py)


def program64(op):
    cmp = op == "cmpswap"
    return (
        PROG64.replace("OP", op)
        .replace("DATA", "v[3:6]" if cmp else "v[3:4]")
        .replace("DMASK", "0xf" if cmp else "0x3")
        .replace("CMPLO", hex(CMPV64 & 0xFFFFFFFF))
        .replace("CMPHI", hex(CMPV64 >> 32))
    )


def inputs64(op, seed):
    rng = np.random.default_rng(seed)
    texel = rng.permutation(np.arange(N) % (W * H)).astype(np.uint64)
    data = rng.integers(0, 2**64, N, dtype=np.uint64)
    init = rng.integers(0, 2**64, W * H, dtype=np.uint64)
    if op in ("inc", "dec"):
        init = rng.integers(100, 1000, W * H).astype(np.uint64)
        data = np.full(N, 2**40, np.uint64)
    if op == "cmpswap":
        init[::2] = CMPV64
    return data, texel, init


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("op", OPS)
def test_image_atomics_64bit(op, mode):
    data, texel, init = inputs64(op, 40 + OPS.index(op))
    r = Rig(program64(op))
    pitch = 32  # 8-byte texels: 256-byte rows
    img = np.random.default_rng(8).integers(0, 2**64, pitch * H, dtype=np.uint64)
    offs = (np.arange(W * H) // W) * pitch + np.arange(W * H) % W
    img[offs] = init
    a = r.mem.alloc(img.nbytes, name="img", align=256, data=img.tobytes())
    src = r.buf(np.stack([data, texel], 1).ravel(), "in")
    out = r.buf(np.full(N, 7, np.uint64), "out")
    fmt = FMT64["r64i" if op in ("smin", "smax") else "r64ui"]
    sg = tsharp(a, fmt) + list(ptr(src)) + list(ptr(out))
    res = r.run(r.config(user_sgprs=sg, groups=(GROUPS, 1, 1), block=(64, 1, 1)), mode=mode)
    assert res.landed, res.refusal
    got = r.read(a, np.uint64, pitch * H)
    check(op, data, texel.astype(np.uint32), init, r.read(out, np.uint64, N), got[offs], bits=64)
    rest = np.ones(pitch * H, bool)
    rest[offs] = False
    np.testing.assert_array_equal(got[rest], img[rest])


def test_image_atomic_width_and_format_must_agree():
    # a 64-bit atomic on an R32 image and a 32-bit one on an R64 (32_32) image
    r = Rig(program64("add"))
    a = r.mem.alloc(256 * H, name="img", align=256)
    src = r.buf(np.zeros(2 * N, np.uint64), "in")
    out = r.buf(np.full(N, 7, np.uint64), "out")
    cfg = r.config(
        user_sgprs=tsharp(a, 20) + list(ptr(src)) + list(ptr(out)), groups=(GROUPS, 1, 1), block=(64, 1, 1)
    )
    res = r.run(cfg)
    assert res.refusal.code == "image.unsupported_format", res.refusal
    ref = _refused("add", 62)
    assert ref.code == "image.unsupported_format", ref


# ---- GLSL compiled by ACO --------------------------------------------------------------------
SHADER = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, FMT) uniform coherent IMG img;
layout(set = 0, binding = 1) buffer In { uint v[]; } i;
layout(set = 0, binding = 2) buffer Out { uint v[]; } o;
void main() {
  uint k = gl_GlobalInvocationID.x;
  uint d = i.v[2 * k];
  uint t = i.v[2 * k + 1];
  ivec2 p = ivec2(t % 8u, t / 8u);
  o.v[k] = uint(CALL);
}
"""
GLSL = {  # op -> GLSL call (T: the image's scalar type)
    "add": "imageAtomicAdd(img, p, T(d))",
    "smin": "imageAtomicMin(img, p, T(d))",
    "umin": "imageAtomicMin(img, p, T(d))",
    "smax": "imageAtomicMax(img, p, T(d))",
    "umax": "imageAtomicMax(img, p, T(d))",
    "and": "imageAtomicAnd(img, p, T(d))",
    "or": "imageAtomicOr(img, p, T(d))",
    "xor": "imageAtomicXor(img, p, T(d))",
    "swap": "imageAtomicExchange(img, p, T(d))",
    "cmpswap": f"imageAtomicCompSwap(img, p, T({CMPV}), T(d))",
}
ACO_CASES = [
    ("add", "r32ui", "navi21", 32, "wave"),
    ("cmpswap", "r32ui", "navi21", 32, "lane"),
    pytest.param("smin", "r32i", "navi10", 64, "wave", marks=pytest.mark.slow),
    pytest.param("umax", "r32ui", "navi21", 32, "wave", marks=pytest.mark.slow),
    pytest.param("xor", "r32ui", "navi10", 64, "lane", marks=pytest.mark.slow),
    pytest.param("swap", "r32i", "navi21", 32, "wave", marks=pytest.mark.slow),
    pytest.param("smax", "r32i", "navi21", 32, "lane", marks=pytest.mark.slow),
    pytest.param("and", "r32ui", "navi21", 32, "wave", marks=pytest.mark.slow),
    pytest.param("or", "r32ui", "navi10", 64, "wave", marks=pytest.mark.slow),
]


def aco_compile(tmp_path, op, fmt, family, wave):
    t = "int" if fmt == "r32i" else "uint"
    defs = (
        f"-DFMT={fmt}",
        f"-DIMG={'i' if fmt == 'r32i' else 'u'}image2D",
        f"-DCALL={GLSL[op].replace('T(', t + '(')}",
    )
    return aco_build(tmp_path, "atomic", SHADER, family, wave, defs)


@pytest.mark.parametrize("op,fmt,family,wave,mode", ACO_CASES)
def test_aco_image_atomics(op, fmt, family, wave, mode, tmp_path):
    out = aco_compile(tmp_path, op, fmt, family, wave)
    asm = (tmp_path / "atomic.s").read_text() if (tmp_path / "atomic.s").exists() else ""
    if asm:
        assert f"image_atomic_{op} " in asm, asm
    target = {"navi21": "gfx1030", "navi10": "gfx1010"}[family]
    data, texel, init = inputs(op, 11 + OPS.index(op))
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    img = np.zeros((H, PITCH), np.uint32)
    img[:, :W] = init.reshape(H, W)
    ib = dev.upload(img)
    src = dev.upload(np.stack([data, texel], 1).ravel())
    ob = dev.upload(np.full(N, 7, np.uint32))
    r = sh.launch(
        groups=(GROUPS, 1, 1), buffers={(0, 1): src, (0, 2): ob}, images={(0, 0): Image(ib, W, H, fmt)}
    )
    assert r.landed, r.refusal
    final = dev.download(ib, np.uint32).reshape(H, PITCH)
    check(op, data, texel, init, dev.download(ob, np.uint32), final[:, :W].ravel())
    assert (final[:, W:] == 0).all()


# ---- lavapipe (tools/lavapipe_run/lavapipe_sample.c --storage) runs the same SPIR-V ----------
LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
VK_R32 = {"r32ui": 98, "r32i": 99}  # VK_FORMAT_R32_UINT, VK_FORMAT_R32_SINT
LVP_CASES = [
    ("add", "r32ui"),
    ("cmpswap", "r32ui"),
    pytest.param("smin", "r32i", marks=pytest.mark.slow),
    pytest.param("umax", "r32ui", marks=pytest.mark.slow),
    pytest.param("and", "r32ui", marks=pytest.mark.slow),
    pytest.param("or", "r32ui", marks=pytest.mark.slow),
    pytest.param("xor", "r32ui", marks=pytest.mark.slow),
    pytest.param("swap", "r32i", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def lavapipe_storage(tmp_path_factory):
    import os
    import shutil

    if not (os.path.exists(LVP_ICD) and shutil.which("gcc")):
        pytest.skip("lavapipe or gcc missing")
    exe = tmp_path_factory.mktemp("lvp") / "lavapipe_sample"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/lavapipe_run/lavapipe_sample.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_sample does not build here: " + p.stderr[-200:])
    return exe


@pytest.mark.parametrize("op,fmt", LVP_CASES)
def test_aco_image_atomics_equal_lavapipe(op, fmt, lavapipe_storage, tmp_path):
    """The ACO shader's SPIR-V on lavapipe (a storage image, read back after the dispatch) and
    its ACO binary in wavelift (navi21 wave32) on the same texels and data: the final image
    equal bit for bit for the order-independent ops; for every op both runs' returned values
    explained by some order of the lanes (check)."""
    import os

    out = aco_compile(tmp_path, op, fmt, "navi21", 32)
    data, texel, init = inputs(op, 90 + OPS.index(op))
    (tmp_path / "img.bin").write_bytes(init.tobytes())
    (tmp_path / "in.bin").write_bytes(np.stack([data, texel], 1).ravel().tobytes())
    cmd = [str(lavapipe_storage), str(out) + ".spv", str(tmp_path), "--groups", f"{GROUPS},1,1", "--storage"]
    cmd += ["--image", f"0:0:{VK_R32[fmt]}:{W}:{H}:{tmp_path / 'img.bin'}"]
    cmd += ["--binding", f"0:1:{8 * N}:{tmp_path / 'in.bin'}", "--binding", f"0:2:{4 * N}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    lvp_final = np.frombuffer((tmp_path / "image.bin").read_bytes(), np.uint32)
    lvp_old = np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32)
    check(op, data, texel, init, lvp_old, lvp_final)  # the oracle itself is a valid order
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    sh = dev.load_aco_shader(str(out) + ".json")
    img = np.zeros((H, PITCH), np.uint32)
    img[:, :W] = init.reshape(H, W)
    ib = dev.upload(img)
    src = dev.upload(np.stack([data, texel], 1).ravel())
    ob = dev.upload(np.full(N, 7, np.uint32))
    r = sh.launch(
        groups=(GROUPS, 1, 1), buffers={(0, 1): src, (0, 2): ob}, images={(0, 0): Image(ib, W, H, fmt)}
    )
    assert r.landed, r.refusal
    final = dev.download(ib, np.uint32).reshape(H, PITCH)[:, :W].ravel()
    check(op, data, texel, init, dev.download(ob, np.uint32), final)
    if op not in ("swap", "cmpswap"):
        np.testing.assert_array_equal(final, lvp_final)


SHADER64 = """#version 450
#extension GL_EXT_shader_image_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, FMT) uniform coherent IMG img;
layout(set = 0, binding = 1) buffer In { uint64_t v[]; } i;
layout(set = 0, binding = 2) buffer Out { uint64_t v[]; } o;
void main() {
  uint k = gl_GlobalInvocationID.x;
  uint64_t d = i.v[2 * k];
  uint t = uint(i.v[2 * k + 1]);
  ivec2 p = ivec2(t % 8u, t / 8u);
  o.v[k] = uint64_t(CALL);
}
"""
ACO64_CASES = [
    ("add", "r64ui", "navi21", 32, "wave"),
    ("cmpswap", "r64ui", "navi21", 32, "lane"),
    pytest.param("smin", "r64i", "navi21", 32, "wave", marks=pytest.mark.slow),
    pytest.param("umax", "r64ui", "navi10", 64, "lane", marks=pytest.mark.slow),
    pytest.param("xor", "r64ui", "navi21", 32, "wave", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("op,fmt,family,wave,mode", ACO64_CASES)
def test_aco_image_atomics_64bit(op, fmt, family, wave, mode, tmp_path, monkeypatch):
    """GL_EXT_shader_image_int64 on r64ui / r64i images: ACO emits dmask 0x3 (cmpswap 0xF) on
    RADV's 32_32_UINT / 32_32_SINT T# (gfx10_format_table.py: R64_UINT is 32_32_UINT)."""
    src = tmp_path / "atomic64.comp"
    src.write_text(SHADER64)
    out = tmp_path / "atomic64"
    t = "int64_t" if fmt == "r64i" else "uint64_t"
    # (a 64-bit literal in a -D define is read before the extension is enabled: built from two)
    cmp64 = f"(T({CMPV64 >> 32}u) << 32 | T({CMPV64 & 0xFFFFFFFF}u))"
    call = GLSL[op].replace(f"T({CMPV})", cmp64).replace("T(", t + "(")
    p = subprocess.run(
        [str(ROOT / "tools/aco_compile/aco-compile"), str(src), "-o", str(out), "--family", family]
        + [
            f"--wave{wave}",
            "-q",
            f"-DFMT={fmt}",
            f"-DIMG={'i' if fmt == 'r64i' else 'u'}64image2D",
            f"-DCALL={call}",
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    asm = (tmp_path / "atomic64.s").read_text()
    assert f"image_atomic_{op} " in asm and ("dmask:0xf" if op == "cmpswap" else "dmask:0x3") in asm, asm
    target = {"navi21": "gfx1030", "navi10": "gfx1010"}[family]
    data, texel, init = inputs64(op, 60 + OPS.index(op))
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    pitch = 32
    img = np.zeros((H, pitch), np.uint64)
    img[:, :W] = init.reshape(H, W)
    ib = dev.upload(img)
    real = aco.image_descriptor

    def r64(im, gfx11):  # the rg32 T# with RADV's R64 format
        d = real(im, gfx11)
        d[1] = (d[1] & ~(0x1FF << 20)) | FMT64[fmt] << 20
        return d

    monkeypatch.setattr(aco, "image_descriptor", r64)
    srcb = dev.upload(np.stack([data, texel], 1).ravel())
    ob = dev.upload(np.full(N, 7, np.uint64))
    r = sh.launch(
        groups=(GROUPS, 1, 1), buffers={(0, 1): srcb, (0, 2): ob}, images={(0, 0): Image(ib, W, H, "rg32f")}
    )
    assert r.landed, r.refusal
    final = dev.download(ib, np.uint64).reshape(H, pitch)
    check(op, data, texel.astype(np.uint32), init, dev.download(ob, np.uint64), final[:, :W].ravel(), bits=64)
    assert (final[:, W:] == 0).all()


# ---- CUDA: NVRTC compiles the kernels of the atomics programs (no GPU here) ------------------
def test_cuda_kernels_of_image_atomics_compile():
    from wavelift.frontend.program import translate

    srcs = [program(op) for op in ("add", "cmpswap", "smin", "dec")] + [
        program64("cmpswap"),
        program64("smax"),
    ]
    check_cuda_kernels([translate(Rig(s).code, "gfx1030", 32, 0x1000) for s in srcs], holds="atomic")
