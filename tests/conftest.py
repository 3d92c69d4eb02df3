import gc
import pathlib
import sys

import pytest

# Make tests/testpaths.py importable from every test folder (`from testpaths import FIXTURES`).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from testpaths import FIXTURES, ROOT, have_tool  # noqa: E402,F401


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    return FIXTURES


# ---- the cyclic garbage collector (decision 0031, amendment h150) -----------------------------
# A worker's heap grows to millions of objects (module caches of translated programs, collected
# items), and each full collection walks all of it: 1.4-2.3 s at 2-3 million objects, 13-33 s
# late in a loaded CI worker (tests/cuda/conftest.py young_gc).  Python's default young threshold
# (700 allocations) promotes the translator's and the passes' short-lived objects, which then
# set off those full collections (16-17 a file here, 15-20 % of its time).  A larger young
# generation lets them die by reference count first; nothing a test checks depends on when the
# collector runs (the tests that need a collection call gc.collect).


def pytest_configure(config):
    gc.set_threshold(10_000, 10, 10)


def pytest_sessionfinish(session):
    """pytest's own session cleanup collects five times over (unraisable exceptions); after one
    collection here, which finalises every cycle left (their unraisable exceptions are reported as
    before), the heap that no longer changes is frozen, so those five walk only what is made
    after it (8-12 s a worker at 2-3 million objects, the end of every xdist worker's run)."""
    gc.collect()
    gc.freeze()


# ---- NumPy backend tiers (docs/decisions/0012-native-tier.md) ----------------------------------
# A test marked `tiers` (or in a module whose `pytestmark` is) runs three times: on NumPy blocks
# only ("numpy", every dispatch), with the native tier forced on for every dispatch ("native": the
# driver runs programs whose every block is native, in two threads) and with the native driver off ("native-blocks":
# native blocks under the Python scheduler, as for programs the driver does not take).  The native
# runs fail when any library could not be built (a compile error or a tier bug would otherwise
# fall back to NumPy blocks silently).  Mark only tests that run a program (execute a dispatch's
# module): the tier cannot change a test that runs none (oracle checks, helper unit tests, a
# refusal before anything runs), and repeating it only inflates the count.


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("tiers"):
        metafunc.parametrize("tier", ["numpy", "native", "native-blocks"], indirect=True)


@pytest.hookimpl(tryfirst=True)  # before -m 'not slow' deselects
def pytest_collection_modifyitems(config, items):
    """A tiers module may define ``native_default(test_id) -> bool``: its native-tier runs for
    which that is false are marked slow (NumPy blocks still run them by default)."""
    for item in items:
        spec = getattr(item, "callspec", None)
        keep = getattr(getattr(item, "module", None), "native_default", None)
        if spec is None or keep is None or spec.params.get("tier") in (None, "numpy"):
            continue
        if not keep(spec.id):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def _native_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("native-cache")


@pytest.fixture(scope="session", autouse=True)
def _piece_cache(tmp_path_factory):
    """The NumPy backend's pieces on disk (decision 0045, amendment "pieces on disk") go to a
    directory of this test session's, never the user's cache (child processes inherit it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WAVELIFT_PIECE_CACHE", str(tmp_path_factory.mktemp("piece-cache")))
        yield


@pytest.fixture(scope="session", autouse=True)
def _native_after_off():
    """A dispatch below NATIVE_MIN_WAVES does not ask for its native library once its module's
    NumPy runs took WAVELIFT_NATIVE_AFTER_MS (decision 0012, amendment h95) in the test suite:
    which tier runs a test's small dispatch (and so its stats) would depend on how fast this host
    ran the module's earlier dispatches.  Tests of that rule set it themselves."""
    from wavelift.backends.numpy import runtime

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runtime, "NATIVE_AFTER_S", 0)
        yield


@pytest.fixture(scope="session", autouse=True)
def _passes_check():
    """A block changed after its liveness ran fails the test (ir/passes/pipeline.CHECK): the live
    sets are never computed again, which holds only while nothing changes the IR after translation."""
    from wavelift.ir.passes import pipeline

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pipeline, "CHECK", True)
        yield


@pytest.fixture
def calls(monkeypatch):
    """calls(owner, name) -> a list that gets the arguments of every later call of ``owner.name``
    (a module's function or a class's method, which still runs): what a test counts or reads."""

    def watch(owner, name: str) -> list:
        seen: list = []
        real = getattr(owner, name)

        def call(*args, **kwargs):
            seen.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, call)
        return seen

    return watch


@pytest.fixture
def driver_runs(calls) -> list:
    """The runs of the native driver (numpy runtime's Runtime._drive_parts) from here on, one
    entry each: a dispatch whose guesses failed runs it twice."""
    from wavelift.backends.numpy import runtime

    return calls(runtime.Runtime, "_drive_parts")


@pytest.fixture(autouse=True)  # autouse: in every test's closure, parametrized for marked ones
def tier(request, monkeypatch):
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime

    if getattr(request, "param", None) is None:
        yield None
        return
    if request.param == "numpy":
        monkeypatch.setattr(runtime, "NATIVE", "off")
        yield "numpy"
        return
    if host.compiler() is None:
        pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
    monkeypatch.setattr(runtime, "NATIVE", "on")
    monkeypatch.setattr(runtime, "NATIVE_DRIVER", request.param == "native")
    # the driver's threads for every dispatch of two or more workgroups (racing programs are
    # found and run again serially: the results must not change)
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(request.getfixturevalue("_native_cache")))
    # tests check exactness, not speed: -O1 builds (several times faster to compile than a user's
    # -O3 on the big fixture programs; IEEE results are the same under -ffp-contract=off). The
    # benches (bench_exec, bench_scratch, fixture_digests) build at -O3 and compare outputs.
    flags = tuple("-O1" if f.startswith("-O") else f for f in native.FLAGS)
    # and clang's loop rotation without header duplication: on the image shaders' sources it took
    # ~3/4 of the middle end's time (a 0.7 MB source: 46 s -> 25 s a build); it changes which
    # loops are rotated, never a value
    if "clang" in pathlib.Path(host.compiler() or "").name:
        flags += ("-mllvm", "-rotation-max-header-size=0")
    monkeypatch.setattr(native, "FLAGS", flags)
    before = len(native.PROBLEMS)
    yield request.param
    new = native.PROBLEMS[before:]
    assert not new, f"native tier libraries failed to build: {new[:3]}"
