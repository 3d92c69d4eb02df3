"""The CUDA backend's cubin cache follows the trusted-cache rules (backends/disk_cache.py,
docs/decisions/0016-trusted-caches.md), checked without NVRTC or a GPU: compile.cached_compile
with the NVRTC build replaced by a stand-in that records each call."""

import hashlib
import os

import pytest

from wavelift.backends import disk_cache
from wavelift.backends.cuda import compile as cc

ARCH = "sm_90"
KEY = ("module", 1)
SOURCE = 'extern "C" __global__ void wl_main() {}\n'


@pytest.fixture
def nvrtc(monkeypatch, tmp_path):
    """-> (calls: the sources the stand-in compiled, the cache directory $WAVELIFT_CUDA_CACHE
    names)."""
    calls = []

    def fake(source, arch=cc.DEFAULT_ARCH):
        calls.append(source)
        return b"\x7fELF cubin of " + hashlib.sha256(source.encode()).digest()

    monkeypatch.setattr(cc, "nvrtc_compile", fake)
    d = tmp_path / "cuda"
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(d))
    return calls, d


def entry_path(d, cubin):
    return d / f"{cc.disk_name(KEY, ARCH, SOURCE)}-{hashlib.sha256(cubin).hexdigest()[:16]}.cubin"


def test_cubin_cached_then_read_back(nvrtc):
    calls, d = nvrtc
    a = cc.cached_compile(KEY, SOURCE, ARCH)
    b = cc.cached_compile(KEY, SOURCE, ARCH)
    assert (a[2], b[2]) == ("nvrtc", "disk") and a[0] == b[0] and len(calls) == 1
    assert os.stat(d).st_mode & 0o777 == 0o700 and entry_path(d, a[0]).is_file()


def test_cubin_planted_at_the_name_is_not_used(nvrtc):
    """Before: `<cache>/<disk_name>.cubin` was used whenever it existed."""
    calls, d = nvrtc
    disk_cache.private_dir(d)
    (d / f"{cc.disk_name(KEY, ARCH, SOURCE)}.cubin").write_bytes(b"planted")
    cubin, _, how = cc.cached_compile(KEY, SOURCE, ARCH)
    assert how == "nvrtc" and cubin != b"planted"


def test_altered_cubin_is_compiled_again(nvrtc):
    calls, d = nvrtc
    good = cc.cached_compile(KEY, SOURCE, ARCH)[0]
    entry_path(d, good).write_bytes(b"planted")
    assert cc.cached_compile(KEY, SOURCE, ARCH)[::2] == (good, "nvrtc")
    assert cc.cached_compile(KEY, SOURCE, ARCH)[::2] == (good, "disk")  # written over


def test_symlinked_cubin_is_not_used(nvrtc, tmp_path):
    calls, d = nvrtc
    good = cc.cached_compile(KEY, SOURCE, ARCH)[0]
    p = entry_path(d, good)
    (tmp_path / "elsewhere").write_bytes(good)
    p.unlink()
    p.symlink_to(tmp_path / "elsewhere")
    assert cc.cached_compile(KEY, SOURCE, ARCH)[2] == "nvrtc" and not p.is_symlink()


def test_world_writable_cubin_cache_is_not_used(nvrtc):
    calls, d = nvrtc
    d.mkdir()
    d.chmod(0o777)
    for _ in range(2):
        with pytest.warns(disk_cache.CacheWarning, match="cuda module cache is not used"):
            assert cc.cached_compile(KEY, SOURCE, ARCH)[2] == "nvrtc"
    assert list(d.iterdir()) == [] and len(calls) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_cubin_cache_of_another_user_is_not_used(nvrtc):
    calls, d = nvrtc
    good = cc.cached_compile(KEY, SOURCE, ARCH)[0]
    os.chown(d, 65534, 65534)
    with pytest.warns(disk_cache.CacheWarning, match="owned by uid 65534"):
        assert cc.cached_compile(KEY, SOURCE, ARCH)[::2] == (good, "nvrtc")


def test_no_disk_no_cache_directory(nvrtc):
    calls, d = nvrtc
    assert cc.cached_compile(KEY, SOURCE, ARCH, use_disk=False)[2] == "nvrtc"
    assert not d.exists()


def test_occupancy_step_names_another_cubin(monkeypatch):
    """WAVELIFT_CUDA_OCCUPANCY_STEP picks the build's WL_MIN_BLOCKS, not the source: the cubin's
    entry name holds it (a warm cache would otherwise give the other build's cubin)."""
    monkeypatch.delenv("WAVELIFT_CUDA_OCCUPANCY_STEP", raising=False)
    plain = cc.disk_name(KEY, ARCH, SOURCE)
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_STEP", "32")
    assert cc.disk_name(KEY, ARCH, SOURCE) != plain


def test_occupancy_full_names_another_cubin(monkeypatch):
    """WAVELIFT_CUDA_OCCUPANCY_FULL=on or auto picks the build's WL_MIN_BLOCKS as the step does:
    each its own cubin entry (0047's amendments h136, h143); unset is `on`'s (the default)."""
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "off")
    names = [cc.disk_name(KEY, ARCH, SOURCE)]
    for v in ("on", "auto"):
        monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", v)
        names.append(cc.disk_name(KEY, ARCH, SOURCE))
    assert len(set(names)) == 3
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "off")
    assert cc.disk_name(KEY, ARCH, SOURCE) == names[0]
