"""Where native shade's 3x between the guest's 8x8 blocks and its best shape comes from: the
block count (32,400 blocks of 64 threads) or the access pattern (a warp over 4 rows of 8 pixels).
native.cu's shade at 2-D shapes next to shade_tiles (the same 8x8 tiles, 1, 2, 4, 8 or 16 of them
in a 1-D block: the layout of decision 0046's slots, which the translated kernel runs).  Kernel
time: events around 200 launches back to back, best of 5.  Run on the GPU machine:
    python bench/device_jobs/shade_shapes.py"""

import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]


def main() -> None:
    import cupy
    from gpu_check import native_module

    w, h = 1920, 1080
    m = native_module(f"sm_{cupy.cuda.Device().compute_capability}")
    rng = np.random.default_rng(1)
    px = cupy.asarray(rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32))
    wt = cupy.asarray(rng.uniform(0.0, 2.0, w * h).astype(np.float32))
    out = cupy.zeros(w * h, cupy.uint32)
    args = (px, wt, out, np.uint32(w), np.uint32(h), np.float32(1.25), np.float32(-8.0))

    def timed(fn, grid, blk):
        fn(grid, blk, args)
        best = 1e9
        for _ in range(5):
            s, e = cupy.cuda.Event(), cupy.cuda.Event()
            s.record()
            for _ in range(200):
                fn(grid, blk, args)
            e.record()
            e.synchronize()
            best = min(best, cupy.cuda.get_elapsed_time(s, e) / 200 * 1e3)
        return best, out.get()

    shade, tiles = m.get_function("shade"), m.get_function("shade_tiles")
    ref = None
    for sx, sy in ((8, 8), (16, 16), (32, 8), (32, 16), (64, 4), (256, 1)):
        us, got = timed(shade, (-(-w // sx), -(-h // sy)), (sx, sy))
        ref = got if ref is None else ref
        print(f"shade 2-D {sx}x{sy}: {us:.2f} us  same {np.array_equal(got, ref)}")
    ntiles = (-(-w // 8)) * (-(-h // 8))
    for per in (1, 2, 4, 8, 16):
        us, got = timed(tiles, (-(-ntiles // per),), (64 * per,))
        print(
            f"shade_tiles {per} 8x8 tiles a block ({64 * per} threads): {us:.2f} us  same {np.array_equal(got, ref)}"
        )


if __name__ == "__main__":
    main()
