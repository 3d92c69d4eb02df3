"""Fixtures for the command-line tests: call wavelift.cli.main(argv) in-process, and captures
built with the public API (recorded without running, so they hold the state before each
dispatch)."""

import importlib.util

import numpy as np
import pytest
from clipaths import ROOT, VADD_HSACO, command_runner, record_only


@pytest.fixture
def cli(capsys):
    """cli(*argv) -> (exit status, stdout, stderr)."""
    from wavelift.cli import main

    def run(*argv):
        rc = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.fixture
def wavelift_cmd():
    """wavelift_cmd(*argv, **run_kwargs) -> CompletedProcess of the installed `wavelift` command
    (text output captured), as a user runs it."""
    return command_runner(120)


def _example_module():
    spec = importlib.util.spec_from_file_location(
        "make_vadd_capture", ROOT / "examples" / "make_vadd_capture.py"
    )
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """Captures made here with wavelift.Device / wavelift.Capture:
    vadd: the example's recipe (c zero before the dispatch), plus what a + b must give;
    two: vadd, then a dispatch refused at setup (dispatch.unsupported_mode);
    escape: vadd whose b points at unmapped memory (refused: escape);
    images: allocations holding test images (no dispatch)."""
    import wavelift
    from wavelift import pm4

    d = tmp_path_factory.mktemp("captures")
    out = {}

    m = _example_module()
    out["vadd"] = d / "vadd.wlcap"
    m.build(str(out["vadd"]))
    x = np.arange(m.N, dtype=np.float32)
    b = ((m.N - x) / 4).astype(np.float32)
    b[::3] = -x[::3]
    out["vadd_c"] = (x / 4).astype(np.float32) + b
    out["vadd_n"] = m.N

    dev = wavelift.Device("gfx1030", execute=record_only)
    k = dev.load_code_object(VADD_HSACO, name="basic.hsaco").kernel("vadd")
    a = dev.upload(np.arange(64, dtype=np.float32), name="a")
    c = dev.alloc(256, name="c")
    k.launch(groups=(1, 1, 1), block=(64, 1, 1), args=[a, a, c, np.uint32(64)])
    # a second stream: COMPUTE_SHADER_EN clear -> refused dispatch.unsupported_mode
    dev.capture.submit(pm4.dispatch_direct(1, 1, 1, initiator=0), name="bad_ib")
    out["two"] = d / "two.wlcap"
    dev.save_capture(out["two"])

    dev = wavelift.Device("gfx1030", execute=record_only)
    k = dev.load_code_object(VADD_HSACO, name="basic.hsaco").kernel("vadd")
    a = dev.upload(np.arange(64, dtype=np.float32), name="a")
    c = dev.alloc(256, name="c")
    k.launch(groups=(1, 1, 1), block=(64, 1, 1), args=[a, np.uint64(0x7000_0000_0000), c, np.uint32(64)])
    out["escape"] = d / "escape.wlcap"
    dev.save_capture(out["escape"])

    cap = wavelift.Capture(target="gfx1030")
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, size=(8, 16, 4), dtype=np.uint8)
    cap.alloc(img.nbytes, data=img.reshape(-1), name="img")
    f = np.linspace(-1.0, 3.0, 12 * 10, dtype=np.float32).reshape(10, 12)
    f[2, 3] = np.nan
    f[4, 5] = np.inf
    cap.alloc(f.nbytes + 64, data=f.reshape(-1).view(np.uint8), name="floats")
    u = (np.arange(6 * 7, dtype=np.uint32) * 1000).reshape(6, 7)
    cap.alloc(u.nbytes, data=u.reshape(-1).view(np.uint8), name="uints")
    out["images"] = d / "images.wlcap"
    out["img"], out["floats"], out["uints"] = img, f, u
    cap.save(out["images"])
    return out
