"""The native driver's thread split (runtime.thread_split, decision 0030) on tiled images: a
dispatch whose waves write disjoint texels of a tiled image runs in two threads (the split falls
between the image's block rows, so the threads' write ranges stay apart), and one whose threads
really meet (a wave reads texels another thread writes) is found by the race check and run
serially, with the serial result every time.  Expected memory: a NumPy model of the image with
texel places from wavelift/memory/layout.py (checked against addrlib in tests/memory)."""

from __future__ import annotations

import numpy as np
import pytest
from harness import Rig

from wavelift.memory import layout as L

# wave64, 8x8 texels a workgroup: x = tgid.x * 8 + lane % 8, y = tgid.y * 8 + lane / 8 (T# in
# s[0:7], workgroup ids in s8, s9); each texel is read and written back XOR 0x5a5a0000: every
# wave touches only its own texels
DISJOINT = """
  s_lshl_b32 s13, s8, 3
  s_lshl_b32 s14, s9, 3
  v_and_b32 v1, 7, v0
  v_add_nc_u32 v1, s13, v1
  v_lshrrev_b32 v2, 3, v0
  v_add_nc_u32 v2, s14, v2
  image_load v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_xor_b32 v3, 0x5a5a0000, v3
  image_store v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_endpgm
"""
# the same texels, each given the value of the texel 8 rows below it (0 past the image): a
# workgroup row reads what the next row's workgroups write, so threads split between rows meet
SHIFTED = """
  s_lshl_b32 s13, s8, 3
  s_lshl_b32 s14, s9, 3
  v_and_b32 v1, 7, v0
  v_add_nc_u32 v1, s13, v1
  v_lshrrev_b32 v2, 3, v0
  v_add_nc_u32 v2, s14, v2
  v_mov_b32 v4, v1
  v_add_nc_u32 v5, 8, v2
  image_load v3, v[4:5], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  image_store v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_endpgm
"""
# 34 rows of 8x8 workgroups: an even split falls at workgroup row 17, texel row 136, inside the
# second row of 64 KiB blocks (128 x 128 texels of 4 bytes)
W, H = 64, 272
GROUPS = (W // 8, H // 8)
FMT_R32UI = 20
MODE = next(m for m, n in L.sw_mode_names().items() if n == "64KB_S")


def tsharp(addr, w, h, fmt, sw_mode):
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | sw_mode << 20 | 9 << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        0,
        0,
        0,
        0,
    ]


@pytest.fixture
def two_threads(monkeypatch, tmp_path):
    """The native tier for every dispatch, its driver in two threads from one workgroup on."""
    from wavelift.backends import host
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setattr(runtime, "NATIVE", "on")
    monkeypatch.setattr(runtime, "NATIVE_DRIVER", True)
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    return runtime


def _image():
    """-> (image bytes as u32 words: random texels, random padding; texel word index [H, W])."""
    chip = L.Chip(True, 0)
    s = L.Surface(MODE, L.RSRC_2D, 2, W, H)
    size = L.surface_info(s, chip).slice_size
    y, x = np.mgrid[0:H, 0:W]
    offs = L.address(chip, s, x.ravel(), y.ravel(), 0).astype(np.int64).reshape(H, W)
    assert len(np.unique(offs)) == offs.size and offs.max() + 4 <= size
    mem = np.random.default_rng(30).integers(0, 2**32, size // 4, dtype=np.uint64).astype(np.uint32)
    return mem, offs // 4


def _run(src, runs):
    """``runs`` dispatches of ``src`` on fresh copies of the image (one module cache) -> per run
    (result, image words after it, the image before it, texel word index), and the module."""
    mem, idx = _image()
    r = Rig(src, wave64=True)
    a = r.mem.alloc(mem.nbytes, name="img", align=65536, data=mem.tobytes())
    cfg = r.config(
        user_sgprs=tsharp(a, W, H, FMT_R32UI, MODE),
        groups=(*GROUPS, 1),
        block=(64, 1, 1),
        tgid=(True, True, False),
    )
    cache: dict = {}
    out = []
    for _ in range(runs):
        r.mem.write(a, mem.tobytes())
        res = r.run(cfg, cache=cache)
        assert res.landed, res.refusal
        out.append((res, r.read(a, np.uint32, mem.size)))
    module = next(v for v in cache.values() if hasattr(getattr(v, "blocks", None), "natives"))
    return out, mem, idx, module


def test_split_falls_between_block_rows():
    """The split of this dispatch and of bench_sampling's 1920x1080 pass (240x135 groups of 8x8)
    over two threads: the most even one first (rows 17 and 67: inside a block row), then, once
    the threads met (align 2), at a multiple of 16 workgroup rows (128 texel rows: a 64 KiB
    block of 4-byte texels).  And the split's shape in general: increasing, whole rows, the even
    split's balance at align 1; chunks of a power of two at least the alignment, the largest
    range within SPLIT_SLACK of the most even chunked split's, above."""
    from wavelift.backends.numpy.runtime import SPLIT_SLACK, thread_split

    total = GROUPS[0] * GROUPS[1]
    assert (GROUPS[1] // 2 * 8) % 128 != 0  # (the even split falls inside a block row)
    assert thread_split(total, GROUPS[0], 2) == ((0, 17 * GROUPS[0], total), 1)
    assert thread_split(total, GROUPS[0], 2, 2) == ((0, 16 * GROUPS[0], total), 16)
    b, a = thread_split(240 * 135, 240, 2, 2)
    assert len(b) == 3 and b[1] % 240 == 0 and (b[1] // 240 * 8) % 128 == 0
    assert thread_split(240 * 135, 240, 2)[0] == (0, 67 * 240, 240 * 135)
    for total, row, threads, align in [
        (32400, 240, 2, 1),
        (32400, 240, 2, 2),
        (32400, 240, 4, 2),
        (32400, 240, 8, 4),
        (32400, 240, 16, 2),
        (1000, 1000, 2, 1),
        (1000, 1000, 2, 2),
        (1000, 1000, 3, 4),
        (999, 37, 5, 1),
        (999, 37, 5, 2),
        (7, 1, 16, 1),
        (7, 1, 16, 2),
        (64, 64, 2, 64),
    ]:
        b, a = thread_split(total, row, threads, align)
        t = len(b) - 1
        assert b[0] == 0 and b[-1] == total and all(x < y for x, y in zip(b, b[1:], strict=False))
        assert 1 <= t <= threads
        unit = row if total >= threads * row else 1
        n = total // unit
        assert all(x % unit == 0 for x in b[:-1])
        largest = max(y - x for x, y in zip(b, b[1:], strict=False))
        if align <= 1:
            assert t == min(threads, n) and largest <= -(-n // t) * unit + total % unit
            continue
        a0 = 1 << (align - 1).bit_length()
        assert (t > 1) == (n >= 2 and a0 < n)  # one range only where no chunk split is left
        if t > 1:
            assert a >= align and a & (a - 1) == 0
            assert all(x % (unit * a) == 0 for x in b[:-1])
            # the most even split with chunks of a0 has ranges of at most n / t0 + a0 units
            t0 = min(threads, -(-n // a0))
            assert largest <= SPLIT_SLACK * (n / t0 + a0) * unit + total % unit


def test_tiled_image_disjoint_texels_run_in_two_threads(two_threads):
    """Every wave reads and writes only its own texels of a 64KB_S image.  The first run's even
    split (row 17) falls inside a block row: both threads' write ranges hold it, the run is
    redone in one thread; from then on the split falls between block rows (row 16) and the runs
    stay parallel (before decision 0030 the program stayed serial).  The image is the model's
    on every run."""
    out, mem, idx, module = _run(DISJOINT, 3)
    want = mem.copy()
    want[idx] ^= np.uint32(0x5A5A0000)
    for k, (res, got) in enumerate(out):
        np.testing.assert_array_equal(got, want)
        assert res.stats["native_driver"] and res.stats["native_threads"] == (1 if k == 0 else 2)
    assert not module.native_serial and module.native_align == 2


def test_tiled_image_overlap_runs_serially(two_threads):
    """Each texel takes the one 8 rows below: thread 0's last workgroup row reads texels thread
    1 writes.  The race check finds it whatever the timing (the threads' ranges meet), the run is
    redone in one thread; the next dispatches split at block rows (row 16, then 32: they still
    meet) and the program then runs serially.  Every result is the serial one."""
    out, mem, idx, module = _run(SHIFTED, 4)
    want = mem.copy()
    want[idx[: H - 8]] = mem[idx[8:]]
    want[idx[H - 8 :]] = 0  # past the image: 0
    for res, got in out:
        np.testing.assert_array_equal(got, want)
        assert res.stats["native_driver"] and res.stats["native_threads"] == 1
    assert module.native_serial and module.native_align == 64
