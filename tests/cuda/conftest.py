"""Fixtures shared by the CUDA tests that run without a GPU."""

from __future__ import annotations

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def standin(lean_at_once):
    """tests/cuda/standin_cupy.py installed for one test (host arrays for device ones); skipped
    where NVRTC is missing (the translated kernels are built by NVRTC).  A module's lean build
    is there from its first dispatch in place (lean_at_once), as where the disk cache holds it:
    its background build ending amid a test would add a full path a test may count."""
    import standin_cupy as S

    from wavelift.backends.cuda.compile import nvrtc_problem

    if nvrtc_problem():
        pytest.skip(f"NVRTC: {nvrtc_problem()}")
    with S.installed() as st:
        yield st


@pytest.fixture
def arena_path(monkeypatch):
    """WAVELIFT_CUDA_INPLACE=off whatever the environment or the default says, for a test of the
    arena path: its stand-in kernel reports escapes or mirror hits the real program cannot have
    (in place, where the real program is proved, that is a failed proof: ``backend.proof``), or
    it counts what only the arena path has (kept arena plans, staging sets, deferrals, graphs,
    mirrors, reruns).  In place is tested by test_inplace_host.py (decision 0049 step 4)."""
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "off")


@pytest.fixture
def young_gc():
    """For a test whose gc.collect() must free what it made: the worker's older objects (earlier
    tests' caches of translated programs) frozen first, so a collection walks only this test's
    -- a full one took 13-33 s a call late in a worker's life."""
    import gc

    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture
def fake_builds(monkeypatch):
    """The CUDA backend's compile step (``_compile``) replaced by one that builds nothing and
    records each source it was given: -> that list (a Module's siblings without NVRTC)."""
    import wavelift.backends.cuda as WC

    built: list = []

    def fake_compile(key, src, arch, use_disk):
        built.append(src)
        return b"cubin", 0.0, "fake", None

    monkeypatch.setattr(WC, "_compile", fake_compile)
    return built


@pytest.fixture
def lean_at_once(monkeypatch):
    """A module's lean build (WAVELIFT_CUDA_PROVED=lean, the default) waited for where it is first
    asked for -- as one on the disk is there at once -- so the module's first dispatch in place
    already launches it: for tests of the lean build itself (decision 0049's amendment h148).  A
    dispatch never waits for it otherwise (amendment h163: built in the background; its tests:
    test_cuda_proved_host.py's lean_builds, test_cuda_proved_gpu.py's background test)."""
    import wavelift.backends.cuda as WC

    start = WC._lean_compile

    def waited(key, src, arch, use_disk, then):
        got = start(key, src, arch, use_disk, then)
        if isinstance(got, tuple):
            return got
        cubin = got.wait()
        return got if cubin is None else (cubin, got.seconds, "nvrtc")  # (failed: as in the background)

    monkeypatch.setattr(WC, "_lean_compile", waited)
