"""wavelift/memory/layout.py's GFX11 layouts (``Chip.gfx11``, decision 0039) against Mesa's own
GFX11 addrlib (Gfx11Lib: family 145, AMDGPU_FAMILY_GFX1100, chip revision 0x01, Navi31), built
from Debian's Mesa 22.3.6 source by tools/addrlib_oracle/build.sh.

Every swizzle mode GFX11's addrlib gives a pattern for (2-D: 256B_D, 4KB_D/_D_X, 64KB_D/_D_T/
_D_X/_Z_X/_R_X, 256KB_D_X/_Z_X/_R_X; 3-D: 4KB_S/_S_X, 64KB_S/_S_T/_S_X/_D_X/_Z_X/_R_X,
256KB_S_X/_Z_X/_R_X; 1-D: 64KB_Z_X/_R_X) x every bytes-per-element (1..16) x resource type, one
level and mip chains (tails included), 2-D arrays and 3-D slices, on random sizes and
coordinates with random pipe/bank XOR values, for several GB_ADDR_CONFIGs: the null device's 0
(what RADV's null winsys lays captures out with) and 4/8/16/32 pipes with as many packers, and
16 pipes with 8 packers (the real Navi31 value is not recorded in Mesa or the kernel source:
the driver reads the register).  Addresses (Addr2ComputeSurfaceAddrFromCoord), surface info
(pitch, height, slice size, every level's offset and mip-tail coordinates), which surfaces are
laid out (exactly what addrlib accepts, but for 3-D 64KB_D_X of 8/16-byte elements and 3-D
256KB_D_X, which addrlib accepts without an address equation) and the facts arithmetic frontend/image.py carries
out.  The default run checks several thousand coordinates; ``-m slow`` over 10^5.  Skipped when
the oracle cannot be built."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from tests.memory.test_layout import facts_checked, oracle  # noqa: F401  (oracle: the built addr_oracle, or a skip)
from wavelift.memory import layout as L

REV, FAMILY = "0x01", "145"  # Navi31, AMDGPU_FAMILY_GFX1100
GBS = [0x0, 0x242, 0x343, 0x344, 0x444, 0x545]
CHIPS = [(gb, L.Chip.from_gb_addr_config(gb, rbplus=True, gfx11=True)) for gb in GBS]
NAMES = L.sw_mode_names(True)


def _ask(path, gb, lines):
    p = subprocess.run([path, hex(gb), REV, FAMILY], input="".join(lines), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.split("\n")


def _cases(chip, rng, per_surface):
    """(surface, pipe_bank_xor, mips, xs, ys, zs) over every laid-out mode x type x bpe, one
    level and a chain."""
    for mode in sorted(NAMES):
        for rsrc in (L.RSRC_1D, L.RSRC_2D, L.RSRC_3D):
            for bpe_log2 in range(5):
                for chain in (False, True):
                    w = int(rng.integers(1, 700))
                    h = 1 if rsrc == L.RSRC_1D else int(rng.integers(1, 700))
                    d = int(rng.integers(1, 12))
                    most = max(w, h, d if rsrc == L.RSRC_3D else 1).bit_length()
                    levels = int(rng.integers(2, most + 1)) if chain and most > 1 else 1
                    s = L.Surface(mode, rsrc, bpe_log2, w, h, d, levels)
                    if not L.supported(chip, s):
                        continue
                    k = L.mode_kind(mode, True)
                    pbx = int(rng.integers(0, 1 << 12)) if k is not None and k[2] else 0
                    mips = rng.integers(0, levels, per_surface)
                    dd = [d if rsrc != L.RSRC_3D else max(d >> int(m), 1) for m in mips]
                    ext = np.array([[max(-(-v >> int(m)), 1) for v in (w, h)] for m in mips])
                    xs = (rng.random(per_surface) * ext[:, 0]).astype(np.int64)
                    ys = (rng.random(per_surface) * ext[:, 1]).astype(np.int64)
                    zs = (rng.random(per_surface) * np.array(dd)).astype(np.int64)
                    yield s, pbx, mips, xs, ys, zs


def _compare(path, per_surface, seed):
    checked = 0
    modes_seen = set()
    for gb, chip in CHIPS:
        rng = np.random.default_rng([seed, gb])
        cases = list(_cases(chip, rng, per_surface))
        lines = [
            f"A {s.sw_mode} {s.rsrc} {8 << s.bpe_log2} {s.width} {s.height} {s.depth} {s.levels} "
            f"{pbx} {x} {y} {z} {m}\n"
            for s, pbx, mips, xs, ys, zs in cases
            for m, x, y, z in zip(mips, xs, ys, zs)
        ]
        want = _ask(path, gb, lines)
        i = 0
        for s, pbx, mips, xs, ys, zs in cases:
            modes_seen.add((NAMES[s.sw_mode], s.rsrc, s.bpe_log2))
            for m in np.unique(mips):
                sel = mips == m
                got = L.address(chip, s, xs[sel], ys[sel], zs[sel], int(m), pbx)
                exp = [want[j] for j in np.flatnonzero(sel) + i]
                for j, (g, e) in enumerate(zip(got, exp)):
                    if e.startswith("E") or int(e) != int(g):
                        pytest.fail(
                            f"gb {gb:#x} {NAMES[s.sw_mode]} {s} mip {m} pbx {pbx:#x} at "
                            f"({xs[sel][j]}, {ys[sel][j]}, {zs[sel][j]}): layout {int(g)}, addrlib {e}"
                        )
                checked += int(sel.sum())
            i += len(mips)
    # every (mode, type, bpe) GFX11 lays out was reached: 2-D 11 modes x 5, 3-D 9 x 5 (64KB_D_X
    # 3 of 5; Z 4 of 5 each: 64KB_Z_X and 256KB_Z_X), 1-D 2 modes
    assert len(modes_seen) >= 11 * 5 + 9 * 5 - 2 - 2 + 2 * 5 - 1 - 3
    return checked


def test_gfx11_layout_equals_addrlib(oracle):  # noqa: F811
    assert _compare(oracle, per_surface=6, seed=1) > 5000


@pytest.mark.slow
def test_gfx11_layout_equals_addrlib_many(oracle):  # noqa: F811
    assert _compare(oracle, per_surface=120, seed=2) >= 100_000


def test_gfx11_surface_info_equals_addrlib(oracle):  # noqa: F811
    """Pitch, height, slice size, each level's macro-block offset, whether it is in the mip tail
    and its coordinates there (Addr2ComputeSurfaceInfo), every laid-out mode x type x bpe."""
    n = 0
    for gb, chip in CHIPS:
        for seed in (3, 4):
            rng = np.random.default_rng([seed, gb])
            cases = [c[0] for c in _cases(chip, rng, 1)]
            q = [
                f"I {s.sw_mode} {s.rsrc} {8 << s.bpe_log2} {s.width} {s.height} {s.depth} {s.levels}\n"
                for s in cases
            ]
            for s, line in zip(cases, _ask(oracle, gb, q)):
                v = [int(t) for t in line.split()]
                info = L.surface_info(s, chip)
                what = f"gb {gb:#x} {NAMES[s.sw_mode]} {s}"
                assert (info.pitch, info.height, info.slices, info.slice_size) == (v[0], v[1], v[2], v[6]), (
                    what
                )
                assert info.block == (v[3], v[4], v[5]), what
                for i, mip in enumerate(info.mips):
                    _, macro, _, _, _, tx, ty, tz = v[9 + 8 * i : 17 + 8 * i]
                    assert mip.offset == macro, (what, i)
                    assert (mip.tail or (0, 0, 0)) == (tx, ty, tz), (what, i)
                    assert (mip.tail is not None) == (s.sw_mode != L.LINEAR and i >= v[8]), (what, i)
                n += 1
    assert n > 1000


def test_gfx11_laid_out_exactly_what_addrlib_accepts(oracle):  # noqa: F811
    """Every SW_MODE value 0..31 x resource type x element size: GFX11's layout lays a surface
    out exactly when GFX11's addrlib accepts it, but for 3-D 64KB_D_X of 8/16-byte elements and
    3-D 256KB_D_X (addrlib accepts them and has no address equation, for 256KB_D_X no 3-D
    pattern at all: its ComputeSurfaceAddrFromCoord fails, so nothing could check a layout;
    refused by name)."""
    for gb, chip in CHIPS:
        keys, q = [], []
        for m in range(32):
            for r in (L.RSRC_1D, L.RSRC_2D, L.RSRC_3D):
                for b in range(5):
                    s = L.Surface(m, r, b, 64, 1 if r == L.RSRC_1D else 64, 4)
                    keys.append((m, r, b, L.supported(chip, s)))
                    q.append(f"I {m} {r} {8 << b} 64 {s.height} 4 1\n")
        for (m, r, b, ours), line in zip(keys, _ask(oracle, gb, q)):
            theirs = not line.startswith("E")
            if theirs and not ours:
                no_equation = m == 26 and b >= 3 or m == 30  # 3-D 64KB_D_X 8/16 B, 3-D 256KB_D_X
                assert r == L.RSRC_3D and no_equation, (gb, m, r, b)
            else:
                assert ours == theirs, (gb, NAMES.get(m, m), r, b, ours, theirs)


def test_gfx11_modes_laid_out():
    """The GFX11 modes per resource type (Gfx11Rsrc{1d,2d,3d}SwModeMask with a pattern)."""
    chip = CHIPS[0][1]
    got = {
        (NAMES[m], r)
        for m in NAMES
        for r in (L.RSRC_1D, L.RSRC_2D, L.RSRC_3D)
        if all(L.supported(chip, L.Surface(m, r, b, 64, 64)) for b in range(3))
    }
    two_d = {"LINEAR", "256B_D", "4KB_D", "4KB_D_X", "64KB_D", "64KB_D_T", "64KB_D_X", "256KB_D_X"}
    two_d |= {"64KB_Z_X", "64KB_R_X", "256KB_Z_X", "256KB_R_X"}
    three_d = {"LINEAR", "4KB_S", "4KB_S_X", "64KB_S", "64KB_S_T", "64KB_S_X", "256KB_S_X", "64KB_D_X"}
    three_d |= {"64KB_Z_X", "64KB_R_X", "256KB_Z_X", "256KB_R_X"}
    one_d = {"LINEAR", "64KB_Z_X", "64KB_R_X"}
    want = {(n, L.RSRC_2D) for n in two_d} | {(n, L.RSRC_3D) for n in three_d}
    assert got == want | {(n, L.RSRC_1D) for n in one_d}
    # GFX10.3's names for the same values are not GFX11's past 27
    assert L.sw_mode_names().get(28) is None and NAMES[28] == "256KB_Z_X"


def test_gfx11_facts_arithmetic_equals_layout():
    """mode_facts / level_plan / address_by_facts (what frontend/image.py carries out in IR)
    equal surface_info and address on GFX11 (which equal addrlib's: above), every laid-out mode
    x type x bpe, with random pipe/bank XOR; a mode has facts exactly when it is laid out."""
    checked = 0
    for gb, chip in CHIPS[:3]:
        rng = np.random.default_rng([5, gb])
        checked += facts_checked(chip, NAMES, _cases(chip, rng, 8), f"gb {gb:#x}")
    assert checked > 5000
