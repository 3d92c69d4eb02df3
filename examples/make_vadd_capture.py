"""Make examples/vadd.wlcap: the clang-19 `vadd` kernel (tests/fixtures/opencl/basic.cl,
gfx1030, -O2, wave32) launched through wavelift's own runtime, recorded *before* it runs.

    python examples/make_vadd_capture.py            # writes examples/vadd.wlcap
    wavelift run examples/vadd.wlcap                # replays it: 1 dispatch, landed

The device records without running (execute=...): the capture holds c all zero and the
expected bytes of c (a + b, computed here with NumPy), so `wavelift run` checks the replay and
`wavelift show ... --dispatch 0 --before-after` shows c being filled.
"""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import wavelift  # noqa: E402

N = 1024
CODE = os.path.join(ROOT, "tests", "fixtures", "gfx1030", "basic-O2-w32-mubuf.hsaco")


def build(path: str) -> None:
    dev = wavelift.Device("gfx1030")
    co = dev.load_code_object(CODE, name="basic-O2-w32-mubuf.hsaco")
    k = co.kernel("vadd")
    x = np.arange(N, dtype=np.float32)
    a = dev.upload(x / 4, name="a")  # 0, 0.25, 0.5, ...
    b = dev.upload((N - x) / 4, name="b")  # a + b = N/4 = 256 everywhere ...
    b_host = ((N - x) / 4).astype(np.float32)
    b_host[::3] = -x[::3]  # ... except every third element
    dev.write(b, b_host)
    c = dev.alloc(4 * N, name="c")
    r = k.launch(groups=(N // 256, 1, 1), block=(256, 1, 1), args=[a, b, c, np.uint32(N)])
    assert r.landed, r.refusal
    expect = (x / 4).astype(np.float32) + b_host
    cap = dev.capture
    cap.expect_memory(
        c.address,
        c.nbytes,
        sha256=__import__("hashlib").sha256(expect.astype("<f4").tobytes()).hexdigest(),
        name="c",
    )
    cap.expected["dispatches"] = [None]  # dispatch 0 lands
    cap.notes = {
        "made_by": "examples/make_vadd_capture.py",
        "kernel": "vadd from tests/fixtures/opencl/basic.cl (clang-19 -O2, gfx1030, wave32)",
        "launch": f"groups=({N // 256},1,1) block=(256,1,1) args=[a, b, c, {N}]",
    }
    dev.save_capture(path)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "vadd.wlcap")
    build(out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")
