"""Split builds (backends/cuda/split.py, compile.split_compile; decision 0009, amendment "split
builds"): a big module's fast first build as parts compiled in parallel and linked.  The parts
must hold exactly the blocks codegen generated, in order, with only the gotos that leave a part
rewritten; NVRTC and nvJitLink build them on the CPU; on a GPU the split build's results equal
NumPy lane mode bit for bit."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

from wavelift.backends.cuda import compile as cc
from wavelift.backends.cuda import split

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import test_cuda_backend as T  # noqa: E402

# the features a split must carry: a barrier's park and resume (lds_reduce), wave64's exchange
# offset (lds_reduce, scratch_game w64), the lane's scratch words and s_setpc's jump table (call),
# a loop across parts (divergent_loop), refuse_if's stop (gfx1100 push constants)
SAMPLES = (
    "gfx1010/aco/lds_reduce-w64.bin",
    "gfx1010/aco/scratch_game-w64.bin",
    "gfx1030/stack-O2-w32-flat:call:small",
    "gfx1030/basic-O2-w32-flat:divergent_loop:small",
    "gfx1030/basic-O2-w32-flat:atomics:small",
    "gfx1100/captures/radv-push_consts_ubo-gfx1100-w32.wlcap#0",
)
_BACK = re.compile(r"\{ wl_nx = (\d+); goto WL_OUT; \}")


def _sources(name):
    from wavelift.backends.cuda.codegen import baked_params, generate

    _, prog, cfg, base, modes = T._named(name)
    return [
        (m, generate(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base, baked_params(cfg))[0])
        for m in modes
    ]


def _blocks(text):
    return re.findall(r"^B(\d+): \{$", text, re.M)


@pytest.mark.parametrize("name", SAMPLES)
def test_parts_hold_the_blocks_in_order(name):
    """Every block in exactly one part, parts in program order, each part's text the generated
    blocks' with only gotos to other parts' blocks turned into returns of their index."""
    for mode, src in _sources(name):
        units = split.split_source(src, 64, split.TEST_PART_BYTES)
        assert units is not None and len(units) >= 3, (name, mode)
        main, parts = units[0], units[1:]
        assert not _blocks(main) and "#define WL_PART" not in main
        body = src.split(split.BLOCKS + "\n")[1].split("\n" + split.BLOCKS_END)[0]
        want = _blocks(body)
        got = [b for p in parts for b in _blocks(p)]
        assert got == want, (name, mode)
        owner = {b: k for k, p in enumerate(parts) for b in _blocks(p)}
        rebuilt = []
        for k, p in enumerate(parts):
            assert p.startswith("#define WL_PART 1\n")
            text = p[p.index(f"B{_blocks(p)[0]}: {{") : p.index("WL_STOP:\n  wl_nx")]
            for b in re.findall(r"goto B(\d+);", text):
                assert owner[b] == k  # a goto stays inside its part
            for b in _BACK.findall(text):
                assert owner[b] != k  # a return names another part's block
            rebuilt.append(_BACK.sub(r"goto B\1;", text))
        assert "".join(rebuilt) == body + "\n", (name, mode)
        # wl_main runs every block through its part
        for b, k in owner.items():
            assert f"case {b}: r = wl_part_{k}(&S, at); break;" in main


def test_small_sources_are_not_split():
    src = _sources(SAMPLES[0])[0][1]
    assert split.split_source(src) is None  # a few kB of blocks: one unit
    assert split.split_source("__global__ void k() {}", 64, 1) is None  # no markers


def test_split_needs_many_cores_unless_forced(monkeypatch):
    monkeypatch.delenv("WAVELIFT_CUDA_SPLIT", raising=False)
    for cores, want in ((2, 0), (cc.SPLIT_MIN_CORES - 1, 0), (16, 16)):
        monkeypatch.setattr(cc.os, "sched_getaffinity", lambda _p, n=cores: set(range(n)))
        assert cc.split_workers() == want
    monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "off")
    assert cc.split_workers() == 0
    monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "on")
    monkeypatch.setattr(cc.os, "sched_getaffinity", lambda _p: {0})
    assert cc.split_workers() == 2


def _nvjitlink_problem():
    if T._nvrtc_problem():
        return T._nvrtc_problem()
    try:
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except Exception as e:  # noqa: BLE001
        return f"nvJitLink unavailable ({type(e).__name__}: {e})"
    if cc.linker() is not cc._nvjitlink:
        return "nvJitLink older than NVRTC"
    return None


@pytest.mark.parametrize("name", SAMPLES[:3])
def test_split_build_compiles_and_links(name, monkeypatch):
    """NVRTC builds every unit (-rdc) and nvJitLink links them into one cubin with wl_main."""
    why = _nvjitlink_problem()
    if why:
        pytest.skip(why)
    monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "on")
    for _mode, src in _sources(name):
        cubin = cc.split_compile(src, "sm_90")
        assert cubin is not None and cubin[:4] == b"\x7fELF" and b"wl_main" in cubin
        assert b"wl_part_1" in cubin


@pytest.mark.cuda
# (GPU_SAMPLE's programs of more than one block: subgroup_ops is one, nothing to split)
@pytest.mark.parametrize(
    "pattern",
    tuple(p for p in T.GPU_SAMPLE if p != "subgroup_ops-w64")
    + ("stack-O2-w32-flat:call", "scratch_game-w32", "int64_div-w64"),
)
def test_split_build_matches_numpy_lane(pattern, tmp_path, monkeypatch):
    """The fast tier split into parts of a few blocks (int64_div: into its real parts) gives NumPy
    lane mode's results bit for bit."""
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "fast")
    monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "auto" if "int64_div" in pattern else "on")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))  # no optimising build from disk
    monkeypatch.setattr(cc, "split_workers", lambda: 16)
    built = []
    real = cc.split_compile
    monkeypatch.setattr(cc, "split_compile", lambda s, a: built.append(real(s, a)) or built[-1])
    T.gpu_matches_numpy_lane(pattern)
    assert any(c is not None for c in built), "no split build ran"


def test_a_failed_split_build_falls_back_to_one_unit(monkeypatch):
    """A part NVRTC refuses (never seen) costs the split, not the module: the one-unit fast build
    is made instead."""
    import concurrent.futures

    src = _sources(SAMPLES[2])[0][1]
    built = []

    def fake(source, arch, extra, cubin=True):
        built.append("-rdc=true" in extra)
        if "-rdc=true" in extra and "#define WL_PART" in source:
            raise cc.CompileError("part refused")
        return b"\x7fELF one unit", ""

    monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "on")
    monkeypatch.setattr(cc, "_nvrtc_build", fake)
    monkeypatch.setattr(cc, "_split_pool", lambda n: concurrent.futures.ThreadPoolExecutor(2))
    monkeypatch.setattr(cc, "linker", lambda: lambda objs, arch: b"\x7fELF linked")
    assert cc.fast_compile(src, "sm_90") == b"\x7fELF one unit"
    assert built[-1] is False and any(built)  # the split was tried, then one unit built


_CHILD = """
import concurrent.futures as cf, multiprocessing as mp
from wavelift.backends.cuda import compile as cc

def job():  # start the split and report pools as builds do, use them, return
    pools = (cc._split_pool(2), cc._report_pool())
    return sum(p.submit(abs, -1).result() for p in pools)

if __name__ == "__main__":
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        print(ex.submit(job).result())
"""


def test_a_child_process_with_build_pools_exits(tmp_path):
    """A multiprocessing child that started the build pools (gpu_check's workers do) exits when
    it is done: multiprocessing joins a child's children at its exit and runs no atexit there,
    so the pools must be shut down by its finalizers (a hang here once left gpu_check running
    after its last line)."""
    import subprocess

    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["2"], (r.returncode, r.stdout, r.stderr[-2000:])
