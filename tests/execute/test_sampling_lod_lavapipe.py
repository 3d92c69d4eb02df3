"""image_get_lod (decision 0036) against lavapipe and a NumPy reference of the rule:
tests/fixtures/glsl/sampling/lod.comp (textureQueryLod of a sampler2D under
GL_NV_compute_shader_derivatives' linear quads) compiled by ACO (navi21 wave32, navi10 wave64;
the committed binaries, command.txt) runs in wavelift with RADV's T#/S# for a tiled mip chain
(test_sampling_mips_lavapipe.py's radv_tsharp / radv_sampler) and on lavapipe with the same
SPIR-V, image, view and sampler.

* wavelift equals the rule written here in NumPy: ρ = max(|du/dx|, |dv/dx|, |du/dy|, |dv/dy|)
  of the quad's texel-space coordinates (base level of the view), y = log2(ρ), x = y clamped to
  [minLod, maxLod] — within one f32 ulp (the backends' log2).
* lavapipe equals a NumPy transcription of its own LOD arithmetic (gallivm lp_build_rho /
  lp_build_lod_selector, Mesa 22.3.6: ρ = max over axes of max(|ds/dx|, |ds/dy|) × size, then
  0.5 × fast_log2(ρ²), fast_log2(x) = exponent + mantissa - 1) to one ulp: the same quads and
  derivatives, independently.
* wavelift and lavapipe agree within lavapipe's own LOD precision: 0.5 × max over m in [1, 2)
  of log2(m) - (m - 1) = 0.0430 (plus float rounding).

The quads' derivatives are axis-aligned (other quads refuse: Vulkan's approximations of ρ
differ there, decision 0036) and keep λ inside (-16, 16) and the clamped LOD at most the view's
last level.  Refusals: hand-written image_get_lod programs (test_sampling.py's harness)."""

from __future__ import annotations

import math
import os
import struct
import subprocess

import numpy as np
import pytest
import test_sampling as ts
from nvrtc_check import check_cuda_kernels
from test_sampling_mips_lavapipe import (
    EDGE,
    FIX,
    LINEAR,
    LVP_ICD,
    MODE,
    REPEAT,
    VIEW_2D,
    VK_FORMAT,
    L,
    level_dims,
    radv_sampler,
    radv_tsharp,
)
from tiled_upload import tiled_levels

import wavelift
from wavelift.driver.aco import IMAGE_FORMATS
from wavelift.memory import ssharp, tsharp

N = 32  # lod.comp's invocations: 8 quads
# lavapipe's LOD error: 0.5 x max_m (log2(m) - (m - 1)), at m = 1 / ln 2
LVP_LOD_ERR = 0.5 * (math.log2(1 / math.log(2)) - (1 / math.log(2) - 1))

# name: (size (w, h), levels, view base level, view level count, (minLod, maxLod), layout)
CASES = {
    "16x16-all-levels": ((16, 16), 5, 0, 5, (0.0, 1000.0), "64KB_S"),
    "32x8-base1-clamped": ((32, 8), 6, 1, 4, (0.5, 2.75), "4KB_S"),
    "64x32-linear-layout": ((64, 32), 7, 0, 7, (0.0, 1000.0), "LINEAR"),
}


def native_default(test_id: str) -> bool:
    return "16x16" in test_id and "w32-gfx1030-wave" in test_id


def quads(case, seed):
    """(N, 2) f32 coordinates: 8 quads (s, t), (s + a, t), (s, t + b), (s + a, t + b) whose
    texel-space derivatives keep λ in [-3, the view's last level - 0.1]."""
    (w, h), _levels, base, count, (lo, hi), _ = case
    bw, bh, _ = level_dims(w, h, 1, base)
    rng = np.random.default_rng(seed)
    c = np.zeros((N, 2), np.float32)
    top = min(count - 1, hi) - 0.1
    for q in range(N // 4):
        lam = rng.uniform(-3.0, top)
        rho = 2.0**lam
        # one direction carries ρ, the other a smaller derivative (either axis, either sign)
        big = rho * rng.choice([-1, 1])
        small = rho * rng.uniform(0.05, 0.95) * rng.choice([-1, 1])
        a, b = (big / bw, small / bh) if q % 2 else (small / bw, big / bh)
        s, t = rng.uniform(0.05, 0.9, 2)
        c[4 * q : 4 * q + 4] = [(s, t), (s + a, t), (s, t + b), (s + a, t + b)]
    return c


def rule(case, c):
    """The rule (decision 0036) in NumPy: (x, y) per lane."""
    (w, h), _levels, base, count, (lo, hi), _ = case
    bw, bh, _ = level_dims(w, h, 1, base)
    u = (c[:, 0] * np.float32(bw)).astype(np.float32)
    v = (c[:, 1] * np.float32(bh)).astype(np.float32)
    out = np.zeros((N, 2), np.float32)
    for q in range(N // 4):
        i = 4 * q
        d = [abs(np.float32(x[i + k] - x[i])) for x in (u, v) for k in (1, 2)]
        y = np.log2(np.float32(max(d)))
        # S# MIN_LOD/MAX_LOD: RADV's 4.8 fixed point of the clamped floats
        mn, mx = ts_fixed(lo), ts_fixed(hi)
        out[i : i + 4] = np.float32(min(max(y, mn), mx)), y
    return out


def ts_fixed(v):
    return np.float32(int(min(max(v, 0.0), 15.0) * 256) / 256)


def lavapipe_model(case, c):
    """lavapipe's own textureQueryLod arithmetic (gallivm, Mesa 22.3.6), in NumPy."""
    (w, h), _levels, base, count, (lo, hi), _ = case
    bw, bh, _ = level_dims(w, h, 1, base)
    out = np.zeros((N, 2), np.float32)
    for q in range(N // 4):
        i = 4 * q
        dd = []
        for axis, n in ((0, bw), (1, bh)):
            ddx = abs(np.float32(c[i + 1, axis] - c[i, axis]))
            ddy = abs(np.float32(c[i + 2, axis] - c[i, axis]))
            dd.append(np.float32(max(ddx, ddy) * np.float32(n)))
        rho = max(dd)
        r2 = np.float32(rho * rho)
        m, e = np.frexp(r2)  # r2 = m 2**e, m in [0.5, 1)
        fast = np.float32(e - 1) + (np.float32(2 * m) - np.float32(1))
        y = np.float32(np.float32(fast) * np.float32(0.5))
        out[i : i + 4] = np.float32(min(max(y, np.float32(lo)), np.float32(hi))), y
    return out


def image_bytes(case, seed):
    (w, h), levels, *_ = case
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(-1, 1, (1, max(h >> m, 1), max(w >> m, 1), 4)).astype(np.float16) for m in range(levels)
    ]


def run_lavapipe(exe, tmp_path, case, tex, c, shader="lod-w32"):
    (w, h), levels, base, count, (lo, hi), _ = case
    (tmp_path / "img.bin").write_bytes(b"".join(t.tobytes() for t in tex))
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [
        str(exe),
        str(FIX / f"{shader}.spv"),
        str(tmp_path),
        "--groups",
        "1,1,1",
        "--image",
        f"0:0:{VK_FORMAT['rgba16f']}:{w}:{h}:{tmp_path / 'img.bin'}",
        "--shape",
        f"{VIEW_2D}:1:1:{levels}:{base}:{count}",
        "--sampler",
        f"{LINEAR}:{LINEAR}:{LINEAR}:{REPEAT}:{EDGE}:0:0",
        "--lod",
        f"{lo}:{hi}:0",
        "--binding",
        f"0:1:{8 * N}:{tmp_path / 'in.bin'}",
        "--binding",
        f"0:2:{8 * N}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.float32).reshape(N, 2)


def run_wavelift(case, tex, c, target="gfx1030", mode="wave", variant="w32", sampler_patch=None):
    (w, h), levels, base, count, (lo, hi), sw = case
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"lod-{variant}.json"))
    fmt, bpp = IMAGE_FORMATS["rgba16f"]
    chip = L.Chip.from_gb_addr_config(
        dev.gb_addr_config, rbplus=target == "gfx1030", z_tail_fix=target != "gfx1010"
    )
    s = L.Surface(MODE[sw], L.RSRC_2D, bpp.bit_length() - 1, w, h, 1, levels)
    assert L.supported(chip, s), sw
    mem = tiled_levels(chip, s, tex, bpp)
    addr = dev.alloc_window(mem.size, "img", align=65536, data=mem.tobytes())
    inp = dev.upload(c)
    out = dev.upload(np.full((N, 2), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = radv_tsharp(
        addr, fmt, w, h, 1, tsharp.TYPE_2D, MODE[sw], levels, base, base + count - 1, (4, 5, 6, 7)
    )
    samp = radv_sampler(LINEAR, LINEAR, LINEAR, REPEAT, EDGE, EDGE, lo, hi)
    if sampler_patch:
        samp = sampler_patch(samp)
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *samp))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    return res, dev.download(out, np.float32).reshape(N, 2)


def ulps(a, b):
    ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "variant,target,mode",
    [
        ("w32", "gfx1030", "wave"),
        ("w32", "gfx1030", "lane"),
        ("navi10-w64", "gfx1010", "wave"),
    ],
)
@pytest.mark.parametrize("name", sorted(CASES))
def test_get_lod_equals_rule_and_lavapipe(name, variant, target, mode, tier, lavapipe_sample, tmp_path):  # noqa: F811
    case = CASES[name]
    seed = 11 + sorted(CASES).index(name)
    tex = image_bytes(case, seed)
    c = quads(case, seed + 50)
    res, got = run_wavelift(case, tex, c, target, mode, variant)
    assert res.landed, res.refusal
    want = rule(case, c)
    assert ulps(got, want).max() <= 1, np.c_[got, want][::4]
    lvp = run_lavapipe(lavapipe_sample, tmp_path, case, tex, c, f"lod-{variant}")
    assert ulps(lvp, lavapipe_model(case, c)).max() <= 1, np.c_[lvp, lavapipe_model(case, c)][::4]
    d = np.abs(got.astype(np.float64) - lvp.astype(np.float64))
    assert d.max() <= LVP_LOD_ERR + 2.0**-16, (d.max(), np.c_[got, lvp][::4])
    # lavapipe's fast log2 lies below log2: every difference has that sign, except where the
    # clamp made both equal
    assert (got.astype(np.float64) >= lvp.astype(np.float64) - 2.0**-16).all()


def test_the_fixture_holds_image_get_lod():
    for variant in ("w32", "navi10-w64"):
        asm = (FIX / f"lod-{variant}.s").read_text()
        assert any("image_get_lod" in ln and "dmask:0x3" in ln for ln in asm.splitlines()), variant


# ---- refusals: hand-written image_get_lod (test_sampling.py's harness: 8x4 rgba8, one level)
def _quads(a, b, s0=0.4, t0=0.3):
    s = np.zeros(N, np.float32)
    t = np.zeros(N, np.float32)
    for q in range(N // 4):
        s[4 * q : 4 * q + 4] = [s0, s0 + a, s0, s0 + a]
        t[4 * q : 4 * q + 4] = [t0, t0, t0 + b, t0 + b]
    return s, t


def _run(form, s, t, samp=None, nregs=2):
    tex = np.zeros((ts.H, ts.PITCH, 4), np.uint8)
    return ts.run(form, nregs, 2, [s, t], tex, sampler=samp or ts.sampler(0, 0, 0, 0))


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_get_lod_of_one_level_lands_where_nothing_is_clamped_past_it(mode):
    s, t = _quads(0.01, 0.02)  # ρ = 0.08 texel: λ < 0, the clamped LOD 0
    tex = np.zeros((ts.H, ts.PITCH, 4), np.uint8)
    res, out = ts.run("image_get_lod dmask:0x3", 2, 2, [s, t], tex, sampler=ts.sampler(0, 0, 0, 0), mode=mode)
    assert res.landed, res.refusal
    u, v = (s * np.float32(ts.W)).astype(np.float32), (t * np.float32(ts.H)).astype(np.float32)
    y = np.log2(max(abs(np.float32(u[1] - u[0])), abs(np.float32(v[2] - v[0]))))
    xy = out[:, :2].view(np.float32)
    assert (xy[:, 0] == 0).all() and (xy[:, 1] == y).all(), xy[:4]
    # dmask 0x2: y alone in the first register, whatever λ (nothing is clamped)
    s, t = _quads(0.5, 0.25, 0.25, 0.25)  # exact: du = 4 texels, dv = 1
    res, out = ts.run("image_get_lod dmask:0x2", 2, 1, [s, t], tex, sampler=ts.sampler(0, 0, 0, 0), mode=mode)
    assert res.landed, res.refusal
    assert (out[:, 0].view(np.float32) == np.float32(2.0)).all(), out[:4]


@pytest.mark.parametrize(
    "why, a, b, samp, code",
    [
        ("not axis-aligned", None, None, None, "image.sampling_precision"),
        ("all derivatives 0", 0.0, 0.0, None, "image.sampling_precision"),
        ("clamped LOD past the last level", 0.5, 0.25, None, "image.sampling_precision"),
        ("S# LOD_BIAS", 0.01, 0.02, {"LOD_BIAS": 64}, "image.unsupported_sampler"),
        ("S# anisotropy", 0.01, 0.02, {"MAX_ANISO_RATIO": 2}, "image.unsupported_sampler"),
        (
            "S# MIN_LOD above MAX_LOD",
            0.01,
            0.02,
            {"MIN_LOD": 512, "MAX_LOD": 256},
            "image.unsupported_sampler",
        ),
    ],
)
def test_get_lod_refusals(why, a, b, samp, code):
    if a is None:  # lane 1 moves along both axes: max and sum approximations differ by 1 in log2
        s, t = _quads(0.1, 0.1)
        t[1::4] += np.float32(0.2)
    else:
        s, t = _quads(a, b)
    sampler = ts.sampler(0, 0, 0, 0) if samp is None else ssharp.encode(
        **{**dict(MAX_LOD=15 * 256), **samp}
    )  # fmt: skip
    res, _ = _run("image_get_lod dmask:0x3", s, t, sampler)
    assert res.refusal is not None and res.refusal.code == code, (why, res.refusal)


def test_get_lod_quad_with_an_inactive_lane_refuses():
    """lane 4k + 3 switched off by EXEC: the quad's derivatives are not established."""
    s, t = _quads(0.01, 0.02)
    tex = np.zeros((ts.H, ts.PITCH, 4), np.uint8)
    prog = ts.program("image_get_lod dmask:0x3", 2, 2).replace(
        "  image_get_lod", "  v_and_b32 v6, 3, v0\n  v_cmpx_ne_u32_e32 3, v6\n  image_get_lod", 1
    )
    r = ts.Rig(prog)
    res = _run_rig(r, s, t, tex)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision", res.refusal


def _run_rig(r, s, t, tex):
    from wavelift.driver.aco import Image, image_descriptor

    img = r.buf(tex, "img")
    desc = image_descriptor(Image(ts._Buf(img), ts.W, ts.H, "rgba8"), False)
    a = np.zeros((N, 4), np.uint32)
    a[:, 0], a[:, 1] = s.view(np.uint32), t.view(np.uint32)
    cb = r.buf(a, "args")
    out = r.buf(np.full(N * 4, 0xDEAD, np.uint32), "out")
    return r.run(
        r.config(
            user_sgprs=desc + ts.sampler(0, 0, 0, 0) + list(ts.ptr(out)) + [0, 0] + list(ts.ptr(cb)),
            tgid=(False,) * 3,
        )
    )


@pytest.mark.parametrize(
    "form, dim, nregs, ndata",
    [
        ("image_get_lod dmask:0x3 a16", "2D", 1, 2),
        ("image_get_lod dmask:0x3 tfe", "2D", 2, 3),
        ("image_get_lod dmask:0x4", "2D", 2, 1),
        # (1-D, 3-D and arrays are carried out since decision 0041: test_sampling_lod_nd_lavapipe.py)
        ("image_get_lod dmask:0x3", "CUBE", 3, 2),
        ("image_get_lod dmask:0x3", "2D_MSAA", 3, 2),
    ],
)
def test_get_lod_forms_still_refused(form, dim, nregs, ndata):
    op, _, mods = form.partition(" ")
    mask, _, rest = mods.partition(" ")
    prog = ts.program(f"{op} {mask}", nregs, ndata).replace(
        "dim:SQ_RSRC_IMG_2D", f"dim:SQ_RSRC_IMG_{dim} {rest}"
    )
    s, t = _quads(0.01, 0.02)
    res = _run_rig(ts.Rig(prog), s, t, np.zeros((ts.H, ts.PITCH, 4), np.uint8))
    assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction", (form, dim)


def test_cuda_kernels_of_get_lod_compile():
    from wavelift.frontend.program import translate

    check_cuda_kernels(
        [translate(ts.Rig(ts.program("image_get_lod dmask:0x3", 2, 2)).code, "gfx1030", 32, 0x1000)]
    )
