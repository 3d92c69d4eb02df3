"""Deterministic input files for the image captures (tools/radv_capture/record_images.sh):
`make_image_inputs.py SHADER OUTDIR` writes the staging bytes of each input image and the bytes
of each input buffer the shader's capture reads, from a fixed NumPy seed. Values keep every
result determined: float texels finite and away from zero (no denormal halving), UNORM/SNORM
codes whose conversions never land on a rounding tie."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def img_storage(rng: np.random.Generator) -> dict[str, bytes]:
    f16 = rng.uniform(0.25, 4.0, (3, 4, 8, 4)) * rng.choice([-1.0, 1.0], (3, 4, 8, 4))
    return {
        "a.bin": rng.integers(0, 256, (8, 16, 4), dtype=np.uint8).tobytes(),
        "b.bin": rng.uniform(-100, 100, (4, 4, 8)).astype(np.float32).tobytes(),
        "c.bin": f16.astype(np.float16).tobytes(),
        "d.bin": rng.integers(0, 2**32, (8, 16), dtype=np.uint32).tobytes(),
        "e.bin": rng.integers(-32768, 32768, (8, 16, 2), dtype=np.int16).tobytes(),
    }


def _clear(x: float) -> bool:
    """A texel-space coordinate x is clear of decision 0025's precision windows: neither x nor
    x - 0.5 within 2**-7 (plus a margin) below an integer."""
    return all(0.02 < v - np.floor(v) < 0.98 for v in (x, x - 0.5))


def _small_floats(rng: np.random.Generator, n: int, mbits: int, ebits: int = 5) -> np.ndarray:
    """n finite, non-negative values of an unsigned float with `ebits` exponent and `mbits`
    mantissa bits (r11f/g11f: 6, b10f: 5), as raw codes (exponent below all ones)."""
    e = rng.integers(0, (1 << ebits) - 1, n)
    return (e << mbits | rng.integers(0, 1 << mbits, n)).astype(np.uint32)


def img_formats(rng: np.random.Generator) -> dict[str, bytes]:
    rg = rng.uniform(-60000, 60000, (64, 128, 2)).astype(np.float16)
    f32 = rng.uniform(-1e6, 1e6, (16, 16, 4)).astype(np.float32)
    r11, g11, b10 = _small_floats(rng, 256, 6), _small_floats(rng, 256, 6), _small_floats(rng, 256, 5)
    return {
        "r8.bin": rng.integers(0, 256, 64, dtype=np.uint8).tobytes(),
        "rg16f.bin": rg.tobytes(),
        "rgba32f.bin": f32.tobytes(),
        "rgb10a2.bin": rng.integers(0, 2**32, 256, dtype=np.uint32).tobytes(),
        "r11g11b10.bin": (r11 | g11 << 11 | b10 << 22).astype(np.uint32).tobytes(),
        "atomic.bin": rng.integers(0, 2**31, 64, dtype=np.uint32).tobytes(),
        "amax.bin": rng.integers(0, 2**28, 64, dtype=np.uint32).tobytes(),
    }


def img_sample(rng: np.random.Generator) -> dict[str, bytes]:
    # 128 invocations' (s, t, r, unused): each of s, t, r a normalized coordinate in [-1.2, 2.2]
    # clear for every axis size the shader samples it with (4, 8 and 16 texels)
    c = np.zeros((128, 4), np.float32)
    for k in range(128):
        for a in range(3):
            while True:
                v = np.float32(rng.uniform(-1.2, 2.2))
                if all(_clear(float(v) * n) for n in (4, 8, 16)):
                    c[k, a] = v
                    break
    return {
        "coords.bin": c.tobytes(),
        "t8.bin": rng.integers(0, 256, (16, 16, 4), dtype=np.uint8).tobytes(),
        "t16.bin": rng.uniform(-4, 4, (2, 8, 8, 4)).astype(np.float16).tobytes(),
        "t3d.bin": rng.uniform(-8, 8, (4, 8, 8)).astype(np.float32).tobytes(),
    }


def texel_buffers(rng: np.random.Generator) -> dict[str, bytes]:
    return {
        "u8.bin": rng.integers(0, 256, (256, 4), dtype=np.uint8).tobytes(),
        "uf.bin": rng.uniform(-1000, 1000, 256).astype(np.float32).tobytes(),
        "s16.bin": rng.uniform(-8, 8, (256, 4)).astype(np.float16).tobytes(),
        "sui.bin": rng.integers(0, 2**32, 256, dtype=np.uint32).tobytes(),
    }


def fullscreen_sample(rng: np.random.Generator) -> dict[str, bytes]:
    return {
        "albedo.bin": rng.integers(0, 256, (64, 64, 4), dtype=np.uint8).tobytes(),
        "light.bin": rng.uniform(0, 2, (32, 32, 4)).astype(np.float16).tobytes(),
    }


MAKERS = {f.__name__: f for f in (img_storage, img_formats, img_sample, texel_buffers, fullscreen_sample)}
SEEDS = {
    "fullscreen_sample": 2026,
    "img_sample": 2027,
    "img_storage": 2028,
    "texel_buffers": 2029,
    "img_formats": 2030,
}


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in MAKERS:
        print(f"usage: make_image_inputs.py {{{','.join(MAKERS)}}} OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEEDS[argv[1]])
    for name, data in MAKERS[argv[1]](rng).items():
        (out / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
