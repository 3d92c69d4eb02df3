"""Every fixture dispatch as (name, memory, config): clang kernels with their reference cases,
ACO shaders with seeded buffers, and the RADV captures' dispatches.

Nothing is executed here: each dispatch is caught by Device's/replay's `execute` hook, and the
guest memory it would run on is deep-copied, so a caller can run it on any backend as often as it
likes (bench/gpu_check.py runs each one on NumPy lane mode and on CUDA and compares the memory).
"""

from __future__ import annotations

import copy
import json
import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

MANIFEST = json.loads((TESTS / "fixtures" / "manifest.json").read_text())


class _Catch:
    """An `execute` hook that records (memory copy, config) and runs nothing."""

    def __init__(self):
        self.got = []

    def __call__(self, memory, config, index):
        from wavelift.errors import Refusal
        from wavelift.run.result import DispatchResult

        self.got.append((copy.deepcopy(memory), config))
        return DispatchResult(index, config, Refusal("backend.unavailable", "caught for a test"))


def clang_dispatches(shapes=("small",)):
    """(name, memory, config, case) per clang manifest binary x kernel x case shape."""
    from reference import cases as C

    import wavelift

    out = []
    for b in MANIFEST["binaries"]:
        if b["kind"] != "clang":
            continue
        for kname in b["kernels"]:
            for case in C.cases_for(kname, b["wave_size"]):
                if case.shape.name not in shapes:
                    continue
                catch = _Catch()
                dev = wavelift.Device(b["target"], execute=catch)
                k = dev.load_code_object(str(ROOT / b["path"])).kernel(kname)
                args = []
                for a in case.args():
                    args.append(dev.upload(a.value, name=a.name) if a.is_buffer else a.value)
                k.launch(**case.shape.launch_kwargs(), args=args)
                name = f"{b['target']}/{pathlib.Path(b['path']).stem}:{kname}:{case.shape.name}"
                for mem, cfg in catch.got:
                    out.append((name, mem, cfg))
    return out


def clang_target_dispatches(
    targets=("gfx1100", "gfx1101", "gfx1150", "gfx1200", "gfx1201"), shapes=("small",)
):
    """(name, memory, config) per GFX11/GFX12 clang binary (tests/clang_targets.py's build logs) x
    kernel x case shape: the same OpenCL sources and cases as the gfx1030 fixtures."""
    import clang_targets
    from reference import cases as C

    import wavelift

    out = []
    for t in targets:
        for b in clang_targets.rows(t):
            src = pathlib.Path(b["source"]).name
            for kname in C.KERNELS:
                for case in C.cases_for(kname, b["wave_size"]):
                    if case.source != src or case.shape.name not in shapes:
                        continue
                    catch = _Catch()
                    dev = wavelift.Device(b["target"], execute=catch)
                    k = dev.load_code_object(str(ROOT / b["path"])).kernel(kname)
                    args = [dev.upload(a.value, name=a.name) if a.is_buffer else a.value for a in case.args()]
                    k.launch(**case.shape.launch_kwargs(), args=args)
                    name = f"{t}/{pathlib.Path(b['path']).stem}:{kname}:{case.shape.name}"
                    out += [(name, mem, cfg) for mem, cfg in catch.got]
    return out


# Push constants that are loop counts or row widths: random bytes would make scratch_game loop
# up to 2**32 steps per lane (NumPy stops it at the instruction budget after minutes, which
# compares nothing useful); these give it the width of the launched grid and a game-sized count.
PUSH_CONSTANTS = {
    "scratch_game": lambda groups: np.array([groups[0] * 8, 64], np.uint32).tobytes(),
    # (d32, n, stride): n is the grid-stride loop's bound (a random stride could loop ~2^32 times)
    "int64_div32_shapes": lambda groups: np.array([0x80000011, groups[0] * 128, 96], np.uint32).tobytes(),
}
# Shaders whose read-modify-write cells are indexed by gl_GlobalInvocationID.x alone: on a grid
# with y > 1, groups (x, 0) and (x, 1) race for the same cells (returned old values, last store
# wins) and the result depends on the order of waves; they get the same number of groups in x.
ONE_D = {"int64_atomic"}


def aco_dispatches(groups=(3, 2, 1), seed=7):
    """(name, memory, config) per ACO / RADV-LLVM shader, every binding filled with seeded bytes
    (push constants too, except the shaders in PUSH_CONSTANTS)."""
    import wavelift
    from wavelift.driver.aco import Image

    out = []
    rng = np.random.default_rng(seed)
    for b in MANIFEST["binaries"]:
        if b["kind"] not in ("aco", "radv-llvm"):
            continue
        info = json.loads((ROOT / b["json"]).read_text())
        stem = pathlib.Path(b["path"]).stem.split("-")[0]
        grid = (int(np.prod(groups)), 1, 1) if stem in ONE_D else groups
        catch = _Catch()
        dev = wavelift.Device(b["target"], execute=catch)
        sh = dev.load_aco_shader(ROOT / b["json"])
        buffers, images = {}, {}
        for s in info["descriptor_layout"]["sets"]:
            for bd in s["bindings"]:
                key = (s["set"], bd["binding"])
                if bd["type"] in ("ubo", "ssbo", "ubo_dyn", "ssbo_dyn"):
                    data = rng.integers(0, 1 << 16, 4096 // 4, dtype=np.uint32)
                    buffers[key] = dev.upload(data)
                elif bd["type"] == "storage_image":
                    px = rng.integers(0, 1 << 32, 64 * 64, dtype=np.uint64).astype(np.uint32)
                    images[key] = Image(dev.upload(px), 64, 64, "rgba8")
        pc = bytes(rng.integers(0, 256, info["push_constants"]["size"], dtype=np.uint8))
        if stem in PUSH_CONSTANTS:
            pc = PUSH_CONSTANTS[stem](groups)
        try:
            sh.launch(groups=grid, buffers=buffers, images=images, push_constants=pc)
        except Exception as e:  # noqa: BLE001 - a shader the driver can't launch
            out.append((f"{b['path']}", None, f"launch failed: {type(e).__name__}: {e}"))
            continue
        for mem, cfg in catch.got:
            out.append((b["path"].split("fixtures/")[1], mem, cfg))
    return out


CAPTURE_DIRS = ("captures", "gfx1100/captures")


def capture_dispatches(dirs=CAPTURE_DIRS, pattern="*.wlcap"):
    """(name, memory, config) per dispatch of the RADV captures in ``dirs`` (under
    tests/fixtures).  The image captures (``*.wlcap.gz``: thousands of meta-copy dispatches) are
    left out by default; the CUDA tests replay them whole against lavapipe
    (test_radv_image_capture_on_cuda, test_radv_gfx11_image_capture_on_cuda)."""
    import gzip
    import tempfile

    from wavelift import replay

    out = []
    for d in dirs:
        for p in sorted((TESTS / "fixtures" / d).glob(pattern)):
            catch = _Catch()
            with tempfile.TemporaryDirectory() as tmp:
                path = p
                if p.suffix == ".gz":
                    path = pathlib.Path(tmp) / p.stem
                    path.write_bytes(gzip.decompress(p.read_bytes()))
                replay(str(path), execute=catch)
            for i, (mem, cfg) in enumerate(catch.got):
                out.append((f"{d}/{p.name}#{i}", mem, cfg))
    return out


def launch_pass(dev, name: str, w: int, h: int) -> tuple:
    """bench/bench_resident.py's full-screen pass ``name`` (shade, stencil5) at w x h, launched on
    ``dev`` as the bench launches it -> (the launch's result, its output buffer)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_resident as BR

    c = BR._pass_case(name, w, h)
    k = dev.load_code_object(str(ROOT / c["hsaco"])).kernel(name)
    bx, by = c["block"]
    bufs = [dev.upload(a) for a in c["inputs"]]
    out = dev.alloc(4 * w * h)
    return k.launch(groups=(-(-w // bx), -(-h // by)), block=(bx, by), args=bufs + [out] + c["scalars"]), out


def pass_dispatches(name: str, w: int = 1920, h: int = 1080) -> list:
    """(memory, config) of launch_pass's dispatch (nothing runs)."""
    import wavelift

    catch = _Catch()
    launch_pass(wavelift.Device("gfx1030", execute=catch), name, w, h)
    return catch.got


def resident_dispatches():
    """(name, memory, config) of bench/bench_resident.py's dispatches: its passes at 1920x1080
    and vadd over 2^20 floats in groups of 256 (its 2^26 is 768 MiB of guest memory: the same
    intervals)."""
    import wavelift

    out = [(f"bench_resident:{n}", m, c) for n in ("shade", "stencil5") for m, c in pass_dispatches(n)]
    catch = _Catch()
    dev = wavelift.Device("gfx1030", execute=catch)
    k = dev.load_code_object(str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    n = 1 << 20
    a, b = dev.upload(np.arange(n, dtype=np.float32)), dev.upload(np.ones(n, np.float32))
    k.launch(global_size=(n, 1, 1), block=(256, 1, 1), args=[a, b, dev.alloc(4 * n), np.uint32(n)])
    return out + [("bench_resident:vadd", m, c) for m, c in catch.got]


def all_dispatches():
    return clang_dispatches() + aco_dispatches() + capture_dispatches()
