"""NumPy references for the GLSL scratch fixtures (tests/fixtures/glsl/scratch_*.comp) and
launch helpers shared by the tests and bench/bench_scratch.py."""

from __future__ import annotations

import pathlib
import struct

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"

M32 = np.uint32


def ref_scratch_array(seed: int, count: int, n_threads: int, N: int = 128) -> np.ndarray:
    gid = np.arange(n_threads, dtype=np.uint32)
    lanes = np.arange(n_threads)
    with np.errstate(over="ignore"):
        a = (gid[:, None] * M32(3) + np.arange(N, dtype=np.uint32)[None, :] * M32(seed)).astype(np.uint32)
        idx = ((gid * M32(7) + M32(seed)) % M32(N)).astype(np.int64)
        acc = np.zeros(n_threads, np.uint32)
        for _ in range(count):
            acc = acc + a[lanes, idx]
            j = (idx + 5) % N
            a[lanes, j] ^= acc
            idx = (idx * 5 + 1) % N
        return (acc + a[lanes, gid % N]).astype(np.uint32)


def ref_scratch_game(seeds: np.ndarray, steps: int) -> np.ndarray:
    s = seeds.astype(np.uint32)
    n = s.size
    lanes = np.arange(n)
    k = np.arange(96, dtype=np.uint32)
    with np.errstate(over="ignore"):
        cells = ((s[:, None] >> (k & M32(31))[None, :]) ^ (k * M32(2654435761))[None, :]).astype(np.uint32)
        pos = (s % M32(96)).astype(np.int64)
        score = np.zeros(n, np.uint32)
        for _ in range(steps):
            v = cells[lanes, pos].copy()
            score = score + (v & M32(0xFF))
            cells[lanes, pos] = v * M32(1664525) + M32(1013904223)
            q = (pos + 47) % 96
            cells[lanes, q] ^= score
            pos = (pos + 1 + (v >> M32(27)).astype(np.int64)) % 96
        return (score ^ cells[lanes, ((s >> M32(8)) % M32(96)).astype(np.int64)]).astype(np.uint32)


def run_scratch_array(dev, json_path, groups: int, seed: int = 7, count: int = 40):
    sh = dev.load_aco_shader(json_path)
    n = groups * 64
    data = np.zeros(2 + n, np.uint32)
    data[0], data[1] = seed, count
    data[2:] = 0xDEADBEEF
    buf = dev.upload(data, name="data")
    r = sh.launch(groups=(groups, 1, 1), buffers={(0, 0): buf})
    got = dev.download(buf, np.uint32)[2:]
    return r, sh, got, ref_scratch_array(seed, count, n)


def run_scratch_game(dev, json_path, groups, steps: int = 6, seed: int = 1):
    """groups: (gx, gy) workgroups of 8x8; the image is (8*gx) x (8*gy)."""
    sh = dev.load_aco_shader(json_path)
    gx, gy = groups
    width, height = 8 * gx, 8 * gy
    seeds = np.random.default_rng(seed).integers(0, 2**32, width * height, dtype=np.uint64).astype(np.uint32)
    sb = dev.upload(seeds, name="seeds")
    rb = dev.alloc(4 * seeds.size, name="result", fill=0xA5)
    r = sh.launch(
        groups=(gx, gy, 1), buffers={(0, 0): sb, (0, 1): rb}, push_constants=struct.pack("<2I", width, steps)
    )
    got = dev.download(rb, np.uint32)
    return r, sh, got, (seeds, steps)


def overlaps(a, n, b, m) -> bool:
    return a < b + m and b < a + n
