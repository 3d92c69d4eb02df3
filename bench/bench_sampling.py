"""Full-screen sampling benchmark (issue 22): an ACO shader that samples two textures and writes a
render target, 1920x1080 in 240x135 groups of 8x8, on the NumPy backend (NumPy blocks, then the
native tier: its cold run builds the library, then warm runs), next to a NumPy reference of the
same pass in the same run; plus the IR size of the shader's image instructions.

The shader (bench/kernels/fullscreen_sample/fullscreen_sample.comp, compiled by
tools/aco_compile for navi21 wave32; command.txt there):
out = a * tex0(uv) + b * tex1(uv) at uv = the pixel centre, textureLod at LOD 0
(image_sample_lz), written with imageStore (image_store) to an rgba8 storage image.  tex0 is
1920x1080 (64KB_R_X), tex1 960x540 (64KB_S_X), the render target 1920x1080 (64KB_R_X), all rgba8
with a pipe/bank XOR in the base as RADV places them, on the Device's GB_ADDR_CONFIG; nearest
filtering, clamp to edge.  The reference decodes the texels, takes the texel each pixel centre
lies in (asserted 0.25 texel clear of a boundary), computes b * t1 + a * t0 in f64 rounded to
f32 (ACO emits v_mul then v_fmac: the reference's double rounding may differ from the fused
result in the last bit, so a pixel may be one UNORM step off) and encodes UNORM with rounding to
nearest even; texel places come from wavelift/memory/layout.py (checked against addrlib).
lavapipe runs the same SPIR-V on the same texels (bench/lavapipe_fullscreen.c, built here with
gcc; skipped without lavapipe, gcc or the Vulkan headers): its end to end is the process's wall
time (instance, pipeline compile, uploads, the dispatches, read-back), its kernel time the best
warm dispatch; its result is held to the reference as wavelift's (one UNORM step: its UNORM
reads can be one ulp off, tests/execute/test_formats_lavapipe.py).

    python3 bench/bench_sampling.py [--repeat N] [--no-numpy-blocks] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import wavelift  # noqa: E402
from wavelift.driver.aco import Image, image_descriptor  # noqa: E402
from wavelift.driver.device import DEFAULT_GB_ADDR_CONFIG  # noqa: E402
from wavelift.driver.launch import Buffer  # noqa: E402
from wavelift.memory import layout as L  # noqa: E402
from wavelift.memory import ssharp  # noqa: E402

KERNEL = ROOT / "bench/kernels/fullscreen_sample/fullscreen_sample-w32"
W, H = 1920, 1080
TEX = [("64KB_R_X", 1920, 1080), ("64KB_S_X", 960, 540)]
RT_MODE = "64KB_R_X"
A, B = 0.75, 0.5
TARGET = "gfx1030"
CLAMP = ssharp.enum("SQ_TEX_CLAMP")
LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def lavapipe(texels: list[np.ndarray], repeat: int) -> tuple[float, float, np.ndarray] | str:
    """(end to end s, best dispatch s, (H, W, 4) render target) on lavapipe, or why not."""
    if not (
        os.path.exists(LVP_ICD)
        and os.path.exists("/usr/include/vulkan/vulkan_core.h")
        and shutil.which("gcc")
    ):
        return "lavapipe, the Vulkan headers or gcc missing"
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        exe = t / "lavapipe_fullscreen"
        p = subprocess.run(
            [
                "gcc",
                "-O1",
                "-I",
                str(ROOT / "tools/lavapipe_run"),
                "-o",
                str(exe),
                str(ROOT / "bench/lavapipe_fullscreen.c"),
                "-lvulkan",
            ],
            capture_output=True,
            text=True,
        )
        if p.returncode:
            return "lavapipe_fullscreen does not build: " + p.stderr[-200:]
        args = [str(exe), str(KERNEL.with_suffix(".spv")), str(t / "out.bin"), str(W // 8), str(H // 8)]
        (t / "push.bin").write_bytes(struct.pack("<IIff", W, H, A, B))
        args += [str(t / "push.bin"), str(repeat)]
        for i, ((_, tw, th), tex) in enumerate(zip(TEX, texels, strict=True)):
            (t / f"t{i}.bin").write_bytes(tex.tobytes())
            args += [str(t / f"t{i}.bin"), str(tw), str(th)]
        args += [str(W), str(H)]
        t0 = time.perf_counter()
        p = subprocess.run(
            args, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD)
        )
        e2e = time.perf_counter() - t0
        if p.returncode:
            return f"lavapipe_fullscreen failed ({p.returncode}): " + p.stderr[-200:]
        times = [float(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("dispatch_s")]
        img = np.frombuffer((t / "out.bin").read_bytes(), np.uint8).reshape(H, W, 4)
        return e2e, min(times[1:] or times), img


def chip():
    return L.Chip.from_gb_addr_config(DEFAULT_GB_ADDR_CONFIG[TARGET], rbplus=True, z_tail_fix=True)


def mode_of(name: str) -> int:
    return next(m for m, n in L.sw_mode_names().items() if n == name)


def offsets(mode_name: str, w: int, h: int, pbx: int) -> tuple[np.ndarray, int]:
    """Byte offset of each texel (h, w) of an rgba8 image in ``mode_name``, and the image size."""
    s = L.Surface(mode_of(mode_name), L.RSRC_2D, 2, w, h)
    y, x = np.mgrid[0:h, 0:w]
    off = L.address(chip(), s, x.ravel(), y.ravel(), 0, 0, pbx).astype(np.int64).reshape(h, w)
    return off, L.surface_info(s, chip()).slice_size


def pbx_for(mode_name: str, seed: int) -> int:
    f = L.mode_facts(chip(), mode_of(mode_name), L.RSRC_2D, 2)
    assert f is not None
    return (0x5B + seed) & (f.xor_mask >> 8)


def tsharp(address: int, w: int, h: int, mode_name: str, pbx: int) -> list[int]:
    d = image_descriptor(Image(Buffer(address, 0), w, h, "rgba8"), False)
    d[0] |= pbx
    d[3] |= mode_of(mode_name) << 20
    return d


def sampler() -> list[int]:
    """RADV's S# for a nearest, clamp-to-edge VkSampler (no anisotropy, LOD 0..VK_LOD_CLAMP_NONE)."""
    edge = CLAMP["CLAMP_LAST_TEXEL"]
    return ssharp.encode(
        CLAMP_X=edge, CLAMP_Y=edge, CLAMP_Z=edge, TRUNC_COORD=1, MAX_LOD=15 * 256, MIP_FILTER=1
    )


def unorm8(v):
    return (v.astype(np.float64) / 255.0).astype(np.float32)


def reference(texels: list[np.ndarray]) -> np.ndarray:
    """The pass in NumPy: (H, W, 4) uint8 render target from the (h, w, 4) uint8 textures."""
    ys, xs = np.mgrid[0:H, 0:W]
    acc = None
    for (_, tw, th), t, k in zip(TEX, texels, (A, B), strict=True):
        u = (xs + 0.5) * tw / W
        v = (ys + 0.5) * th / H
        fu, fv = u - np.floor(u), v - np.floor(v)
        assert min(fu.min(), fv.min()) >= 0.25 and max(fu.max(), fv.max()) <= 0.75  # clear of edges
        tex = unorm8(t[np.floor(v).astype(np.int64), np.floor(u).astype(np.int64)])
        term = tex.astype(np.float64) * np.float64(np.float32(k))
        acc = np.float32(term) if acc is None else np.float32(term + acc.astype(np.float64))
    c = np.clip(acc.astype(np.float64), 0.0, 1.0)
    return np.rint(c * 255.0).astype(np.uint8)


def aligned(dev, nbytes: int, data=None) -> Buffer:
    """A 64 KiB-aligned guest range of ``nbytes`` (a tiled image's base)."""
    buf = dev.upload(np.zeros(nbytes + 65536, np.uint8))
    a = (buf.address + 65535) & ~65535
    if data is not None:
        dev.memory.write(a, bytes(data))
    return Buffer(a, nbytes)


def ir_sizes() -> list[str]:
    """IR ops of each image instruction of the shader, before and after the passes (MODE 0),
    and how many of those are per lane."""
    from wavelift.frontend.program import translate
    from wavelift.ir.passes.pipeline import optimize

    code = KERNEL.with_suffix(".bin").read_bytes()
    prog = translate(code, TARGET, 32, 0x10000000, gb_addr_config=DEFAULT_GB_ADDR_CONFIG[TARGET])
    pre: collections.Counter = collections.Counter()
    post: collections.Counter = collections.Counter()
    lane: collections.Counter = collections.Counter()
    for blk in prog.blocks:
        for op in blk.ops:
            pre[op.instr] += 1
        for op in optimize(blk, 0, 32).ops:
            post[op.instr] += 1
            lane[op.instr] += op.out is not None and not op.out.uniform
    return [
        f"  {ins.name:16s} IR ops {pre[i]:6d} before the passes, {post[i]:5d} after ({lane[i]} per lane)"
        for i, ins in enumerate(prog.instructions)
        if ins.name.startswith("image_")
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-numpy-blocks", action="store_true", help="skip the (slow) NumPy-blocks run")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines = [
        f"bench_sampling: {W}x{H} pass, 240x135 groups of 8x8, two rgba8 textures sampled, one rgba8 "
        f"render target; {platform.node()}, {os.cpu_count()} CPUs, NumPy {np.__version__}",
        "IR of the shader's image instructions (gfx1030, GB_ADDR_CONFIG "
        f"{DEFAULT_GB_ADDR_CONFIG[TARGET]:#x}):",
    ]
    lines += ir_sizes()
    print("\n".join(lines), flush=True)

    rng = np.random.default_rng(22)
    texels = [rng.integers(0, 256, (th, tw, 4), dtype=np.uint8) for _, tw, th in TEX]
    t0 = time.perf_counter()
    want = reference(texels)
    t_ref = time.perf_counter() - t0
    lines.append(f"NumPy reference of the pass: {t_ref:.3f} s")
    print(lines[-1], flush=True)

    lvp = lavapipe(texels, max(3, a.repeat))
    if isinstance(lvp, str):
        lines.append(f"lavapipe: not run ({lvp})")
    else:
        d = np.abs(lvp[2].astype(np.int16) - want.astype(np.int16)).max(axis=-1)
        assert d.max() <= 1, ("lavapipe differs from the reference", int(np.count_nonzero(d > 1)))
        lines.append(
            f"lavapipe: end to end {lvp[0]:.3f} s (process: instance, pipeline, uploads, dispatches, "
            f"read-back), best warm dispatch {lvp[1]:.3f} s; equal to the reference "
            f"({int(np.count_nonzero(d == 1))} pixels one UNORM step off)"
        )
    print(lines[-1], flush=True)

    dev = wavelift.Device(TARGET, backend="numpy", mode="wave")
    sh = dev.load_aco_shader(str(KERNEL) + ".json")
    descs = []
    for i, ((mode_name, tw, th), t) in enumerate(zip(TEX, texels, strict=True)):
        pbx = pbx_for(mode_name, i)
        off, size = offsets(mode_name, tw, th, pbx)
        img = np.zeros(size, np.uint8)
        for c in range(4):
            img[off + c] = t[..., c]
        buf = aligned(dev, size, img)
        descs.append(tsharp(buf.address, tw, th, mode_name, pbx))
    rt_pbx = pbx_for(RT_MODE, 7)
    rt_off, rt_size = offsets(RT_MODE, W, H, rt_pbx)
    rt = aligned(dev, rt_size)
    push = struct.pack("<IIff", W, H, A, B)
    rec = sh.prepare(groups=(W // 8, H // 8, 1), push_constants=push)
    at = rec.extra["sets"][0]
    binding = {b["binding"]: b for b in sh.sets[0]["bindings"]}
    for k in (0, 1):
        assert binding[k]["type"] == "combined_image_sampler"
        o = at + int(binding[k]["offset"])
        dev.memory.write(o, struct.pack("<8I", *descs[k]))  # the T# at +0, the S# at +80 (RADV)
        dev.memory.write(o + 80, struct.pack("<4I", *sampler()))
    assert binding[2]["type"] == "storage_image"
    dev.memory.write(
        at + int(binding[2]["offset"]), struct.pack("<8I", *tsharp(rt.address, W, H, RT_MODE, rt_pbx))
    )

    def once(tag: str) -> tuple[float, float, dict]:
        dev.memory.write(rt.address, bytes(rt_size))
        t0, c0 = time.perf_counter(), time.process_time()
        _dw, r = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
        got = np.frombuffer(bytes(dev.memory.read(rt.address, rt_size)), np.uint8)
        e2e, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert r.landed, (tag, r.refusal)
        img = np.stack([got[rt_off + c] for c in range(4)], axis=-1)
        d = np.abs(img.astype(np.int16) - want.astype(np.int16)).max(axis=-1)
        assert d.max() <= 1, (tag, "differs from the reference", int(np.count_nonzero(d > 1)))
        st = dict(r.stats or {})
        st["off_by_one"] = int(np.count_nonzero(d == 1))
        st["cpu_s"] = cpu
        return e2e, float(st.get("time_s", e2e)), st

    def show(tag, e2e, kern, st):
        how = "NumPy blocks"
        if st.get("native"):
            how = "native tier, " + (
                f"native driver, {st.get('native_threads', 1)} thread(s)"
                if st.get("native_driver")
                else f"{st.get('native_block_runs', 0)} native block runs"
            )
        if st.get("native_problem"):
            how += f" ({st['native_problem'][:80]})"
        lines.append(
            f"{tag}: end to end {e2e:.3f} s (process CPU {st['cpu_s']:.3f} s: on a shared host the "
            f"work, every thread's), kernel (execute_dispatch) {kern:.3f} s, {how}; "
            f"equal to the reference ({st['off_by_one']} pixels one UNORM step off)"
        )
        print(lines[-1], flush=True)

    from wavelift.backends import native
    from wavelift.backends.numpy import runtime

    old = runtime.NATIVE  # (read from WAVELIFT_NATIVE at import)
    try:
        if not a.no_numpy_blocks:
            runtime.NATIVE = "off"
            show("NumPy blocks (first run: translation included)", *once("numpy"))
            show("NumPy blocks, again", *once("numpy"))
        runtime.NATIVE = "on"  # the library is built before the cold run's blocks
        t0 = time.perf_counter()
        show("native tier, cold (the library built first, unless in the disk cache)", *once("cold"))
        native.wait_for_compiles()
        lines.append(f"  (cold run and compile: {time.perf_counter() - t0:.1f} s)")
        runs = [once("warm") for _ in range(max(1, a.repeat))]
        best = min(runs, key=lambda r: r[0])
        show(f"native tier, warm (best of {len(runs)})", *best)
        lines.append(
            f"ratio to the NumPy reference: end to end {best[0] / t_ref:.1f}x, kernel {best[1] / t_ref:.1f}x"
        )
        if not isinstance(lvp, str):
            lines.append(
                f"ratio to lavapipe (issue 22's target: within 10x): end to end {best[0] / lvp[0]:.1f}x, "
                f"kernel {best[1] / lvp[1]:.1f}x"
            )
        lines.append(f"load average at the end: {os.getloadavg()[0]:.2f} (2 shared cores)")
        print("\n".join(lines[-3:]), flush=True)
    finally:
        runtime.NATIVE = old
    if a.out:
        a.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
