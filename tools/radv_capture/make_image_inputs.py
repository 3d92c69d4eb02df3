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


def img_border(rng: np.random.Generator) -> dict[str, bytes]:
    # 128 invocations' (s, t) twice: normalized coordinates in [-0.6, 1.6] clear for 8 texels
    # (about half outside [0, 1]: border texels, decision 0043)
    c = np.zeros((128, 4), np.float32)
    for k in range(128):
        for a in range(4):
            while True:
                v = np.float32(rng.uniform(-0.6, 1.6))
                if _clear(float(v) * 8):
                    c[k, a] = v
                    break
    return {
        "coords.bin": c.tobytes(),
        "t8.bin": rng.integers(0, 256, (8, 8, 4), dtype=np.uint8).tobytes(),
        "r32.bin": rng.uniform(-8, 8, (8, 8)).astype(np.float32).tobytes(),
        "h.bin": rng.uniform(-4, 4, (8, 8, 4)).astype(np.float16).tobytes(),
        "p16.bin": rng.integers(0, 65536, (8, 8), dtype=np.uint16).tobytes(),
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


def _chain(n: int, levels: int, layers: int = 1) -> list[tuple[int, int]]:
    """(texels of one layer, layers) of each level of an n x n chain: the staging layout
    (vkapp.h: levels in order, each level's layers in order, tightly packed)."""
    return [(max(n >> lv, 1) ** 2, layers) for lv in range(levels)]


def _palette_texels(rng: np.random.Generator, n: int, levels: int, layers: int = 1) -> bytes:
    """rgba8 texels of a mip chain, each level's drawn from its own 16 random colours (a few
    bits a texel, so the captures stay small gzipped; every level and layer distinct)."""
    out = []
    for texels, nl in _chain(n, levels, layers):
        pal = rng.integers(0, 256, (16, 4), dtype=np.uint8)
        out.append(pal[rng.integers(0, 16, texels * nl)])
    return np.concatenate(out).tobytes()


def img_mips(rng: np.random.Generator) -> dict[str, bytes]:
    count = sum(t * nl for t, nl in _chain(32, 6, 3))
    ccount = sum(t * nl for t, nl in _chain(16, 5, 6))
    pal = (rng.uniform(0.25, 500.0, 64) * rng.choice([-1.0, 1.0], 64)).astype(np.float16)
    return {
        "src.bin": _palette_texels(rng, 128, 8),
        "asrc.bin": rng.integers(0, 1 << 12, count, dtype=np.uint32).tobytes(),
        "csrc.bin": pal[rng.integers(0, 64, ccount * 4)].tobytes(),
    }


def _clear_all(v: float, sizes) -> bool:
    return all(_clear(v * n) for n in sizes)


def _lod(rng: np.random.Generator, top: float, point: bool) -> float:
    """A LOD in [0, top]: a nearest-mip one clear of the level choice's window (k + 0.5) and of
    the min/mag choice just above 0 (decision 0025)."""
    while True:
        v = float(np.float32(rng.uniform(0.0, top)))
        f = v - np.floor(v)
        if v > 0.05 and (not point or abs(f - 0.5) > 0.05):
            return v


def img_mipsample(rng: np.random.Generator) -> dict[str, bytes]:
    # per invocation three vec4: (s, t, point LOD, linear LOD) of the 128x128 chain; (cube
    # direction, point LOD); (s, t, point LOD of the 32x32 array, linear LOD of the cube <= 3).
    # s, t on a 2**-12 grid (s * N exact), clear for every level size; cube directions: a major
    # axis of +-1 and the others on a 2**-10 grid in [-0.7, 0.7] (face coordinates exact, the
    # linear footprint inside the face down to 4x4), clear for every level size
    sizes128 = [128 >> k for k in range(8)]
    sizes32 = [32 >> k for k in range(6)]

    def coord(sizes, lo=-0.3, hi=1.3):
        while True:
            v = np.round(rng.uniform(lo, hi) * 4096) / 4096
            if _clear_all(v, sizes):
                return v

    c = np.zeros((256, 3, 4), np.float32)
    for k in range(256):
        c[k, 0] = coord(sizes128), coord(sizes128), _lod(rng, 7.4, True), _lod(rng, 7.0, False)
        axis = rng.integers(0, 3)
        d = np.zeros(3)
        for a in range(3):
            if a == axis:
                d[a] = rng.choice([-1.0, 1.0])
            else:
                while True:
                    v = np.round(rng.uniform(-0.7, 0.7) * 1024) / 1024
                    if _clear_all((v + 1) / 2, sizes32):
                        d[a] = v
                        break
        c[k, 1] = *d, _lod(rng, 5.4, True)
        c[k, 2] = coord(sizes32), coord(sizes32), _lod(rng, 5.4, True), _lod(rng, 3.0, False)
    count = sum(t * nl for t, nl in _chain(32, 6, 3))
    return {
        "coords.bin": c.tobytes(),
        "t8.bin": _palette_texels(rng, 128, 8),
        "cube.bin": _palette_texels(rng, 32, 6, 6),
        "arr.bin": (np.round(rng.uniform(-8, 8, count) * 64) / 64).astype(np.float32).tobytes(),
    }


def img_mip3d(rng: np.random.Generator) -> dict[str, bytes]:
    # per invocation two vec4: (s, t, r, point LOD) of the 32x16x8 chain, in (0, 1), clear for
    # every level size; (cube direction as in img_mipsample, point LOD of the cube array)
    sizes = [32 >> k for k in range(6)]
    c = np.zeros((64, 2, 4), np.float32)
    for k in range(64):
        for a in range(3):
            while True:
                v = np.round(rng.uniform(0.02, 0.98) * 4096) / 4096
                if _clear_all(v, sizes):
                    c[k, 0, a] = v
                    break
        c[k, 0, 3] = _lod(rng, 5.4, True)
        axis = rng.integers(0, 3)
        for a in range(3):
            if a == axis:
                c[k, 1, a] = rng.choice([-1.0, 1.0])
            else:
                while True:
                    v = np.round(rng.uniform(-0.7, 0.7) * 1024) / 1024
                    if _clear_all((v + 1) / 2, [16 >> j for j in range(5)]):
                        c[k, 1, a] = v
                        break
        c[k, 1, 3] = _lod(rng, 4.4, True)
    count3 = sum(max(32 >> k, 1) * max(16 >> k, 1) * max(8 >> k, 1) for k in range(6))
    return {
        "coords.bin": c.tobytes(),
        "ca.bin": _palette_texels(rng, 16, 5, 12),
        "t3.bin": (np.round(rng.uniform(-8, 8, count3) * 64) / 64).astype(np.float32).tobytes(),
    }


MAKERS = {
    f.__name__: f
    for f in (
        img_storage,
        img_formats,
        img_sample,
        texel_buffers,
        fullscreen_sample,
        img_mips,
        img_mipsample,
        img_mip3d,
        img_border,
    )
}
SEEDS = {
    "fullscreen_sample": 2026,
    "img_sample": 2027,
    "img_storage": 2028,
    "texel_buffers": 2029,
    "img_formats": 2030,
    "img_mips": 2031,
    "img_mipsample": 2032,
    "img_mip3d": 2033,
    "img_border": 2034,
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
