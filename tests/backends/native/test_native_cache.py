"""Disk caches a process can trust (docs/decisions/0016-trusted-caches.md): the directory rules and
entry checks of wavelift/backends/disk_cache.py, and the native tier's library cache built on
them (a planted or altered library is never loaded; concurrent builders both succeed)."""

import hashlib
import multiprocessing
import os
import pathlib
import time
import warnings

import pytest

from wavelift.backends import disk_cache
from wavelift.backends.disk_cache import CacheRefused, CacheWarning, private_dir

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
NOBODY = 65534


def mode(p) -> int:
    return os.lstat(p).st_mode & 0o7777


# ---------------------------------------------------------------------------- the directory
def test_cache_dir_created_private_at_every_level(tmp_path):
    d = tmp_path / "a" / "b" / "native"
    old = os.umask(0)  # (a permissive umask must not make it shared)
    try:
        assert private_dir(d) == d
    finally:
        os.umask(old)
    for p in (tmp_path / "a", tmp_path / "a" / "b", d):
        assert mode(p) == 0o700 and os.lstat(p).st_uid == os.geteuid()


def test_cache_dir_only_others_can_read_is_made_private(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    d.chmod(0o755)
    private_dir(d)
    assert mode(d) == 0o700


@pytest.mark.parametrize("bits", [0o777, 0o770, 0o702])
def test_cache_dir_writable_by_others_is_refused(tmp_path, bits):
    d = tmp_path / "c"
    d.mkdir()
    d.chmod(bits)
    with pytest.raises(CacheRefused, match="writable by group or others"):
        private_dir(d)
    assert mode(d) == bits  # refused, not "repaired": entries may already be planted


@ROOT_ONLY
def test_cache_dir_of_another_user_is_refused(tmp_path):
    d = tmp_path / "c"
    d.mkdir(0o700)
    os.chown(d, NOBODY, NOBODY)
    with pytest.raises(CacheRefused, match=f"owned by uid {NOBODY}"):
        private_dir(d)


def test_cache_dir_symlink_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(CacheRefused, match="symbolic link"):
        private_dir(tmp_path / "link")
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(CacheRefused, match="not a directory"):
        private_dir(tmp_path / "file")


def test_cache_dir_under_a_shared_parent(tmp_path):
    """A parent others may write lets them rename the cache away and put theirs in its place,
    unless it is sticky (as /tmp is)."""
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o777)
    with pytest.raises(CacheRefused, match="above the cache.*without the sticky bit"):
        private_dir(parent / "c")
    parent.chmod(0o1777)
    private_dir(parent / "c")


@ROOT_ONLY
def test_cache_dir_under_a_parent_of_another_user_is_refused(tmp_path):
    parent = tmp_path / "theirs"
    parent.mkdir(0o755)
    (parent / "c").mkdir(0o700)
    os.chown(parent, NOBODY, NOBODY)
    with pytest.raises(CacheRefused, match=f"above the cache.*owned by uid {NOBODY}"):
        private_dir(parent / "c")


def test_cache_dir_reached_through_a_link_checks_where_it_leads(tmp_path):
    """~/.cache a link into a directory others may write: the real parent is checked too."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "home").mkdir(0o700)
    (tmp_path / "home" / ".cache").symlink_to(shared)
    with pytest.raises(CacheRefused, match="above the cache.*without the sticky bit"):
        private_dir(tmp_path / "home" / ".cache" / "wavelift")
    assert list(shared.iterdir()) == []  # refused before anything was made there


def test_refused_cache_is_not_used_and_says_why(tmp_path, monkeypatch):
    d = tmp_path / "c"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(d))
    with pytest.warns(CacheWarning, match="native module cache is not used.*writable"):
        assert disk_cache.usable_dir("native", "WAVELIFT_NATIVE_CACHE") is None


# ------------------------------------------------------------------------------- entries
def entry(d, name, suffix, data):
    """The paths of ``data``'s entry: (digest record, data file)."""
    digest = hashlib.sha256(data).hexdigest()
    return d / f"{name}.sha256", d / f"{name}-{digest[:16]}{suffix}"


def test_entry_round_trip(tmp_path):
    d = private_dir(tmp_path / "c")
    assert disk_cache.read(d, "m", ".so") is None
    disk_cache.write(d, "m", ".so", b"library")
    assert disk_cache.read(d, "m", ".so") == b"library"
    rec, blob = entry(d, "m", ".so", b"library")
    assert mode(rec) == mode(blob) == 0o600
    assert sorted(p.name for p in d.iterdir()) == sorted([rec.name, blob.name])  # no temp left


def test_entry_with_a_wrong_digest_is_not_read(tmp_path):
    d = private_dir(tmp_path / "c")
    disk_cache.write(d, "m", ".so", b"library")
    rec, blob = entry(d, "m", ".so", b"library")
    blob.write_bytes(b"planted")
    assert disk_cache.read(d, "m", ".so") is None
    blob.write_bytes(b"library")
    rec.write_text("0" * 64 + "\n")  # a record naming no entry
    assert disk_cache.read(d, "m", ".so") is None
    rec.write_text("not a digest")
    assert disk_cache.read(d, "m", ".so") is None


@pytest.mark.parametrize("which", [0, 1])
def test_symlinked_entry_is_not_read(tmp_path, which):
    d = private_dir(tmp_path / "c")
    disk_cache.write(d, "m", ".so", b"library")
    path = entry(d, "m", ".so", b"library")[which]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(path.read_bytes())  # the same bytes, but not a file of the cache
    path.unlink()
    path.symlink_to(elsewhere)
    assert disk_cache.read(d, "m", ".so") is None
    disk_cache.write(d, "m", ".so", b"library")  # written over: the link, not its target
    assert not path.is_symlink() and disk_cache.read(d, "m", ".so") == b"library"


def test_entry_others_may_write_or_linked_twice_is_not_read(tmp_path):
    d = private_dir(tmp_path / "c")
    disk_cache.write(d, "m", ".so", b"library")
    blob = entry(d, "m", ".so", b"library")[1]
    blob.chmod(0o620)
    assert disk_cache.read(d, "m", ".so") is None
    blob.chmod(0o600)
    os.link(blob, tmp_path / "second-name")  # changeable through a name outside the cache
    assert disk_cache.read(d, "m", ".so") is None
    os.unlink(tmp_path / "second-name")
    assert disk_cache.read(d, "m", ".so") == b"library"


@ROOT_ONLY
def test_entry_of_another_user_is_not_read(tmp_path):
    d = private_dir(tmp_path / "c")
    disk_cache.write(d, "m", ".so", b"library")
    os.chown(entry(d, "m", ".so", b"library")[1], NOBODY, NOBODY)
    assert disk_cache.read(d, "m", ".so") is None


def test_fifo_entry_is_not_waited_on(tmp_path):
    d = private_dir(tmp_path / "c")
    os.mkfifo(d / "m.sha256")
    t = time.perf_counter()
    assert disk_cache.read(d, "m", ".so") is None
    assert time.perf_counter() - t < 5


def _write_and_read(args):
    d, k, rounds = args
    mine = f"writer {k} ".encode() * (1000 + k)
    seen = set()
    for _ in range(rounds):
        disk_cache.write(pathlib.Path(d), "m", ".so", mine)
        got = disk_cache.read(pathlib.Path(d), "m", ".so")
        seen.add(got)
    return seen


def test_concurrent_writers_leave_whole_entries(tmp_path):
    """Four processes write different bytes under one name and read it back: every read is one
    writer's whole data (a torn or mixed entry would fail its digest and read as a miss: None)."""
    d = private_dir(tmp_path / "c")
    payloads = {f"writer {k} ".encode() * (1000 + k) for k in range(4)}
    with multiprocessing.get_context("fork").Pool(4) as pool:
        seen = set().union(*pool.map(_write_and_read, [(str(d), k, 100) for k in range(4)]))
    assert seen <= payloads and seen
    assert disk_cache.read(d, "m", ".so") in payloads


# -------------------------------------------------------------- the native tier's libraries
def _need_compiler():
    from wavelift.backends import host

    if host.compiler() is None:
        pytest.skip("no host C++ compiler: the native tier is not available")


def lib_source(value: int) -> str:
    return f'extern "C" int wl_answer() {{ return {value}; }}\n'


def answer(lib) -> int:
    return lib.wl_answer()


@pytest.fixture
def native_cache(tmp_path, monkeypatch):
    """-> (native module, the cache directory $WAVELIFT_NATIVE_CACHE names, the name of
    lib_source(1)'s entry, the bytes of a library of lib_source(2): the planted code)."""
    import subprocess

    _need_compiler()
    from wavelift.backends import host, native

    (tmp_path / "p.cpp").write_text(lib_source(2))
    subprocess.run(
        [host.compiler(), "-shared", "-fPIC", str(tmp_path / "p.cpp"), "-o", str(tmp_path / "p.so")],
        check=True,
    )
    d = tmp_path / "cache"
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(d))
    return native, d, native.library_name(lib_source(1), host.compiler()), (tmp_path / "p.so").read_bytes()


def test_library_planted_at_the_name_is_not_loaded(native_cache):
    """Before: `<cache>/<hash>.so` was loaded whenever it existed; the hash is public."""
    native, d, name, planted = native_cache
    private_dir(d)
    (d / f"{name}.so").write_bytes(planted)
    assert answer(native.compile_library(lib_source(1))) == 1


def test_library_with_a_wrong_digest_is_rebuilt(native_cache):
    native, d, name, planted = native_cache
    lib = native.compile_library(lib_source(1))
    assert answer(lib) == 1
    good = disk_cache.read(d, name, ".so")
    blob = entry(d, name, ".so", good)[1]
    blob.write_bytes(planted)  # the record still names the good digest
    assert answer(native.compile_library(lib_source(1))) == 1
    assert disk_cache.read(d, name, ".so") == good  # built and written again


def test_untrusted_native_cache_is_not_used(native_cache):
    """A world-writable cache holding a planted library (with a record agreeing): the tier
    still builds and runs the right library, for this process only, and says why."""
    native, d, name, planted = native_cache
    d.mkdir()
    disk_cache.write(d, name, ".so", planted)
    (d / f"{name}.so").write_bytes(planted)  # (and where the cache once had it)
    before = sorted(p.name for p in d.iterdir())
    d.chmod(0o777)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert answer(native.compile_library(lib_source(1))) == 1
    assert sorted(p.name for p in d.iterdir()) == before  # nothing written into it


@ROOT_ONLY
def test_native_cache_of_another_user_is_not_used(native_cache):
    native, d, name, planted = native_cache
    d.mkdir(0o700)
    disk_cache.write(d, name, ".so", planted)
    (d / f"{name}.so").write_bytes(planted)
    os.chown(d, NOBODY, NOBODY)
    with pytest.warns(CacheWarning, match=f"owned by uid {NOBODY}"):
        assert answer(native.compile_library(lib_source(1))) == 1


def _build_at(args):
    barrier, value = args
    from wavelift.backends import native

    barrier.wait()
    return answer(native.compile_library(lib_source(value)))


def test_concurrent_builders_both_succeed(native_cache):
    """Two processes build the same library into an empty cache at once: both load it, and the
    entry left behind verifies and loads."""
    native, d, name, _ = native_cache
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Manager().Barrier(2)
    with ctx.Pool(2) as pool:
        assert pool.map(_build_at, [(barrier, 1), (barrier, 1)]) == [1, 1]
    data = disk_cache.read(d, name, ".so")
    assert data is not None and answer(disk_cache.load_library(data)) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert answer(native.compile_library(lib_source(1))) == 1


def test_temp_dir_others_control_is_not_compiled_in(native_cache, tmp_path, monkeypatch):
    """$TMPDIR where others may swap what is built: the tier says so (NoNative), no library."""
    import tempfile

    native = native_cache[0]
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with pytest.raises(native.Unsupported, match="no private temp directory.*sticky"):
        native.compile_library(lib_source(3))


@pytest.mark.slow  # (a native build of a whole program: seconds; the parts are tested above)
def test_dispatch_with_an_untrusted_cache_runs_native_and_same(tmp_path, monkeypatch):
    """A dispatch is not refused for the cache: the native tier builds privately, the bytes are
    the NumPy blocks', the cache is left as it was, a CacheWarning says why."""
    import numpy as np
    from test_basic import vadd_rig

    from wavelift.backends.numpy import runtime

    _need_compiler()
    d = tmp_path / "cache"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(d))
    monkeypatch.setattr(runtime, "NATIVE", "on")
    r, a, b, pc, cfg = vadd_rig(1000, 16)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        res = r.run(cfg, cache={})
    assert res.landed and res.stats["native"] and "native_problem" not in res.stats
    np.testing.assert_array_equal(r.read(pc, np.float32, 1000), a + b)
    assert list(d.iterdir()) == []
