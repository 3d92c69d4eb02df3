"""image_load_mip / image_store_mip through every layout frontend/image.py carries out, on a real
dispatch: every swizzle mode wavelift lays out for the image type (the _X/_T modes with a random
pipe/bank XOR in the T#'s base, given the GPU's GB_ADDR_CONFIG) x every texel size (8_UINT,
16_UINT, 32_UINT, 32_32_UINT, 32_32_32_32_UINT) x 1-D, 2-D, 3-D, 1-D/2-D arrays, one level and
mip chains (tails included), on Navi10 (GFX10), Navi21-like (GFX10.3, RB+, 16 pipes / 16
packers) and RADV's null device (GB_ADDR_CONFIG 0).

Each lane reads a random texel (x, y, z or layer, level) and writes its own value to it.  The
expected results come from wavelift/memory/layout.py (layout.address, checked against Mesa's
addrlib in tests/memory/test_layout.py) on the same random image bytes: what each lane loads,
and the whole image after the stores (every other byte unchanged).  Also: the refusals the new
layouts keep (an _X mode without GB_ADDR_CONFIG, a level past LAST_LEVEL, a coordinate between a
level's rounded-down and rounded-up size, a layer of a one-layer T#), and BASE_ARRAY/BASE_LEVEL
views."""

from __future__ import annotations

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.frontend import image as I
from wavelift.memory import layout as L

# (name, target, GB_ADDR_CONFIG)
CHIPS = [
    ("navi10", "gfx1010", 0x00100044),
    ("navi21", "gfx1030", 0x00000444),
    ("navi21_null", "gfx1030", 0x00000000),
]
DIM_NAMES = {
    I.DIM_1D: "1D",
    I.DIM_2D: "2D",
    I.DIM_3D: "3D",
    I.DIM_1D_ARRAY: "1D_ARRAY",
    I.DIM_2D_ARRAY: "2D_ARRAY",
}
TYPE_OF = {
    I.DIM_1D: I.TYPE_1D,
    I.DIM_2D: I.TYPE_2D,
    I.DIM_3D: I.TYPE_3D,
    I.DIM_1D_ARRAY: I.TYPE_1D_ARRAY,
    I.DIM_2D_ARRAY: I.TYPE_2D_ARRAY,
}
FORMAT_OF_BPE = {0: (5, 1), 1: (11, 1), 2: (20, 1), 3: (62, 2), 4: (75, 4)}  # IMG_FORMAT, channels
LANES = 64  # two wave32 workgroups


def program(dim):
    n = I.NCOORD[dim] + 1  # the coordinates and the level
    return f"""
  s_lshl_b32 s20, s14, 5
  v_add_nc_u32 v0, s20, v0
  v_lshlrev_b32 v9, 4, v0
  global_load_dwordx4 v[1:4], v9, s[8:9]
  s_waitcnt vmcnt(0)
  image_load_mip v[10:13], v[1:{n}], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_{DIM_NAMES[dim]} unorm
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v9, v[10:13], s[10:11]
  v_and_b32 v14, s12, v0
  v_xor_b32 v15, s13, v14
  v_mov_b32 v16, v14
  v_mov_b32 v17, v15
  image_store_mip v[14:17], v[1:{n}], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_{DIM_NAMES[dim]} unorm
  s_endpgm
"""


def tsharp(addr, pbx, fmt, w, h, d, typ, sw_mode, levels, base_level=0, last_level=None, base_array=0):
    last_level = levels - 1 if last_level is None else last_level
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | base_level << 12 | last_level << 16 | sw_mode << 20 | typ << 28
    return [
        ((addr >> 8) & 0xFFFFFFFF) | pbx,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        (d - 1) | base_array << 16,
        (levels - 1) << 4,
        0,
        0,
    ]


def chip_for(target, gb):
    return L.Chip.from_gb_addr_config(gb, rbplus=target == "gfx1030", z_tail_fix=target != "gfx1010")


def _coords(rng, rsrc, dim, w, h, d, levels):
    """LANES distinct (x, y, z, level) in range (the API's rounded-down level sizes)."""
    seen, out = set(), []
    tries = 0
    while len(out) < LANES:
        m = int(rng.integers(0, levels))
        x = int(rng.integers(0, max(w >> m, 1)))
        y = int(rng.integers(0, max(h >> m, 1))) if dim in (I.DIM_2D, I.DIM_3D, I.DIM_2D_ARRAY) else 0
        zs = max(d >> m, 1) if rsrc == L.RSRC_3D else d
        z = int(rng.integers(0, zs)) if dim in (I.DIM_3D, I.DIM_1D_ARRAY, I.DIM_2D_ARRAY) else 0
        tries += 1
        if (x, y, z, m) in seen and tries < 8 * LANES:
            continue
        seen.add((x, y, z, m))
        out.append((x, y, z, m))  # (a small image: some texels twice, after many tries)
    return out


def _run_surface(rig, chip, gb, dim, mode, bpe_log2, levels, rng, run_mode="wave"):
    rsrc = I.RSRC_OF_DIM[dim]
    w = int(rng.integers(1, 300))
    h = 1 if rsrc == L.RSRC_1D else int(rng.integers(1, 300))
    d = int(rng.integers(1, 9)) if dim in (I.DIM_3D, I.DIM_1D_ARRAY, I.DIM_2D_ARRAY) else 1
    most = max(w, h, d if rsrc == L.RSRC_3D else 1).bit_length()
    levels = min(levels, most)
    s = L.Surface(mode, rsrc, bpe_log2, w, h, d, levels)
    assert L.supported(chip, s)
    info = L.surface_info(s, chip)
    size = info.slice_size * info.slices + 65536
    f = L.mode_facts(chip, mode, rsrc, bpe_log2)
    assert f is not None
    pbx = int(rng.integers(0, 1 << 16)) & (f.xor_mask >> 8)
    mem = rng.integers(0, 256, size, dtype=np.uint8)
    a = rig.mem.alloc(size, name="img", align=65536, data=mem.tobytes())
    co = _coords(rng, rsrc, dim, w, h, d, levels)
    # the instruction's coordinate registers: x [y] [z|layer] level
    regs = []
    for x, y, z, m in co:
        r = [x]
        if dim in (I.DIM_2D, I.DIM_3D, I.DIM_2D_ARRAY):
            r.append(y)
        if dim in (I.DIM_3D, I.DIM_1D_ARRAY, I.DIM_2D_ARRAY):
            r.append(z)
        r.append(m)
        regs.append(r + [0] * (4 - len(r)))
    cbuf = rig.buf(np.array(regs, np.uint32), "coords")
    out = rig.buf(np.full(LANES * 4, 0xDEADBEEF, np.uint32), "out")
    fmt, nch = FORMAT_OF_BPE[bpe_log2]
    bpe = 1 << bpe_log2
    cmask = (1 << min(8 * bpe // nch, 32)) - 1
    t = tsharp(a, pbx, fmt, w, h, d, TYPE_OF[dim], mode, levels)
    sg = t + list(ptr(cbuf)) + list(ptr(out)) + [cmask, 0x5A5A5A5A & cmask]
    cfg = rig.config(user_sgprs=sg, groups=(LANES // 32, 1, 1), gb_addr_config=gb)
    res = rig.run(cfg, mode=run_mode)
    what = f"{L.sw_mode_names()[mode]} dim {DIM_NAMES[dim]} bpe {bpe} {s} pbx {pbx:#x}"
    assert res.landed, (what, res.refusal)
    xs, ys, zs, ms = (np.array(c) for c in zip(*co))
    offs = np.zeros(LANES, np.int64)
    for m in np.unique(ms):
        sel = ms == m
        offs[sel] = L.address(chip, s, xs[sel], ys[sel], zs[sel], int(m), pbx).astype(np.int64)
    # loads: each channel of the texel (UINT: its bits), missing channels 0, 0, 1 (W)
    texel = mem[offs[:, None] + np.arange(bpe)]
    cw = bpe // nch
    chans = np.zeros((LANES, 4), np.uint32)
    for c in range(nch):
        for k in range(cw):
            chans[:, c] |= texel[:, c * cw + k].astype(np.uint32) << np.uint32(8 * k)
    if nch < 4:
        chans[:, 3] = 1
    got = rig.read(out, np.uint32, LANES * 4).reshape(LANES, 4)
    np.testing.assert_array_equal(got, chans, err_msg=what)
    # stores: lane i writes (i & mask, i & mask ^ 0x5a.., i & mask, ...) to its texel
    exp = mem.copy()
    lane = np.arange(LANES, dtype=np.uint32)
    v = lane & np.uint32(cmask)
    vals = [v, v ^ np.uint32(0x5A5A5A5A & cmask), v, v ^ np.uint32(0x5A5A5A5A & cmask)]
    for i in range(LANES):
        if co.index(co[i]) != i:
            continue  # (a repeated texel: written by its first lane and this one: skipped below)
        b = b"".join(int(vals[c][i]).to_bytes(cw, "little") for c in range(nch))
        exp[offs[i] : offs[i] + bpe] = np.frombuffer(b, np.uint8)
    after = rig.read(a, np.uint8, size)
    rep = {tuple(c) for i, c in enumerate(co) if co.index(c) != i}
    keep = np.ones(size, bool)
    for i, c in enumerate(co):
        if tuple(c) in rep:
            keep[offs[i] : offs[i] + bpe] = False
    np.testing.assert_array_equal(after[keep], exp[keep], err_msg=what)


def _modes(chip, rsrc):
    return [
        m
        for m in sorted(L.sw_mode_names())
        if all(L.mode_facts(chip, m, rsrc, b) is not None for b in range(4))
    ]


@pytest.mark.slow
@pytest.mark.parametrize("dim", list(DIM_NAMES), ids=list(DIM_NAMES.values()))
@pytest.mark.parametrize("name,target,gb", CHIPS, ids=[c[0] for c in CHIPS])
def test_every_layout_load_store(name, target, gb, dim):
    """Every laid-out mode for the dim's resource type x texel size x one level / a chain."""
    chip = chip_for(target, gb)
    rsrc = I.RSRC_OF_DIM[dim]
    rig = Rig(program(dim), target=target)
    rng = np.random.default_rng([gb, dim, len(target)])
    n = 0
    for mode in _modes(chip, rsrc):
        for bpe_log2 in range(5):
            if L.mode_facts(chip, mode, rsrc, bpe_log2) is None:
                continue
            for levels in (1, 16):
                _run_surface(rig, chip, gb, dim, mode, bpe_log2, levels, rng)
                n += 1
    assert n >= 10


# a quick subset for the default run: an _X mode and an _T mode, 2-D and 3-D, with chains
QUICK = [
    ("navi21", I.DIM_2D, "64KB_R_X", 2, 16),
    ("navi21", I.DIM_2D, "4KB_D_X", 0, 1),
    ("navi10", I.DIM_2D, "64KB_S_X", 4, 16),
    ("navi10", I.DIM_2D_ARRAY, "64KB_D_T", 3, 16),
    ("navi21", I.DIM_3D, "64KB_S_X", 2, 16),
    ("navi21_null", I.DIM_3D, "4KB_S", 1, 16),
    ("navi21", I.DIM_1D_ARRAY, "64KB_R_X", 2, 16),
    ("navi21", I.DIM_2D, "LINEAR", 2, 16),
]


@pytest.mark.parametrize("name,dim,mode_name,bpe_log2,levels", QUICK)
def test_layout_load_store(name, dim, mode_name, bpe_log2, levels):
    _, target, gb = next(c for c in CHIPS if c[0] == name)
    chip = chip_for(target, gb)
    mode = next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    rig = Rig(program(dim), target=target)
    rng = np.random.default_rng([gb, dim, mode, bpe_log2])
    for _ in range(2):
        _run_surface(rig, chip, gb, dim, mode, bpe_log2, levels, rng)


def _dispatch(dim, target, gb, words, coords, mem):
    """program(dim) on LANES lanes (coords repeated), the T# ``words`` with BASE_ADDRESS
    relative to the image's allocation (``mem`` bytes, 64 KiB aligned): (result, loaded, image)."""
    rig = Rig(program(dim), target=target)
    a = rig.mem.alloc(len(mem), name="img", align=65536, data=mem.tobytes())
    t = list(words)
    t[0] += a >> 8
    t[1] |= (a >> 40) & 0xFF
    regs = [list(coords[i % len(coords)]) + [0] * (4 - len(coords[i % len(coords)])) for i in range(LANES)]
    cbuf = rig.buf(np.array(regs, np.uint32), "coords")
    out = rig.buf(np.full(LANES * 4, 0xDEADBEEF, np.uint32), "out")
    sg = t + list(ptr(cbuf)) + list(ptr(out)) + [0, 0]
    res = rig.run(rig.config(user_sgprs=sg, groups=(LANES // 32, 1, 1), gb_addr_config=gb))
    return res, rig.read(out, np.uint32, LANES * 4).reshape(LANES, 4), rig.read(a, np.uint8, len(mem))


def _mode(name):
    return next(m for m, n in L.sw_mode_names().items() if n == name)


RGBA32UI = 75


def _refusal(dim, target, gb, words, coords, code, text):
    mem = np.random.default_rng(3).integers(0, 256, 1 << 20, dtype=np.uint8)
    res, got, after = _dispatch(dim, target, gb, words, coords, mem)
    assert res.refusal is not None and res.refusal.code == code, res.refusal
    assert text in res.refusal.message, res.refusal.message
    assert (got == 0xDEADBEEF).all()
    np.testing.assert_array_equal(after, mem)


@pytest.mark.parametrize("mode_name", ["64KB_R_X", "4KB_S_X", "64KB_D_T", "64KB_S_X", "64KB_Z_X"])
def test_xor_mode_without_gb_addr_config_refuses(mode_name):
    """A capture that does not record GB_ADDR_CONFIG: the _X/_T modes refuse by name."""
    t = tsharp(0, 0, RGBA32UI, 64, 64, 1, I.TYPE_2D, _mode(mode_name), 1)
    _refusal(I.DIM_2D, "gfx1030", None, t, [(1, 1, 0)], "image.unsupported_layout", "GB_ADDR_CONFIG")


def test_gb_addr_config_addrlib_has_no_patterns_for_refuses():
    """A pipe interleave other than 256 bytes (addrlib's patterns assume it) or more packers
    than pipes on an RB+ part: the _X modes refuse as without GB_ADDR_CONFIG."""
    t = tsharp(0, 0, RGBA32UI, 64, 64, 1, I.TYPE_2D, _mode("64KB_R_X"), 1)
    for gb in (0x00000444 | 1 << 3, 0x00000442):
        _refusal(I.DIM_2D, "gfx1030", gb, t, [(1, 1, 0)], "image.unsupported_layout", "GB_ADDR_CONFIG")


def test_level_past_last_level_refuses():
    t = tsharp(0, 0, RGBA32UI, 64, 64, 1, I.TYPE_2D, _mode("64KB_S"), 4, last_level=1)
    _refusal(I.DIM_2D, "gfx1030", 0x444, t, [(0, 0, 2)], "image.unsupported_descriptor", "LAST_LEVEL")


def test_coordinate_in_a_levels_rounding_band_refuses():
    """Width 5 at level 1: the API's size is 2, addrlib lays out 3; x = 2 refuses."""
    t = tsharp(0, 0, RGBA32UI, 5, 8, 1, I.TYPE_2D, _mode("64KB_S_X"), 2)
    _refusal(I.DIM_2D, "gfx1030", 0x444, t, [(2, 0, 1)], "image.unsupported_descriptor", "rounded")


def test_layer_of_a_one_layer_tsharp_refuses():
    """dim 2D_ARRAY on a TYPE 2D T# (RADV: an array view of a one-layer image): layer 0 is the
    image, any other layer refuses (whether hardware ignores it or bounds it is not established)."""
    t = tsharp(0, 0, RGBA32UI, 16, 16, 1, I.TYPE_2D, _mode("64KB_D"), 1)
    _refusal(I.DIM_2D_ARRAY, "gfx1030", 0x444, t, [(1, 1, 1, 0)], "image.unsupported_descriptor", "layer")
    mem = np.random.default_rng(4).integers(0, 256, 1 << 17, dtype=np.uint8)
    res, got, _ = _dispatch(I.DIM_2D_ARRAY, "gfx1030", 0x444, t, [(3, 5, 0, 0)], mem)
    assert res.landed, res.refusal
    s = L.Surface(_mode("64KB_D"), L.RSRC_2D, 4, 16, 16)
    off = int(L.address(chip_for("gfx1030", 0x444), s, 3, 5, 0))
    np.testing.assert_array_equal(got[0], mem[off : off + 16].view(np.uint32))


def test_base_array_and_base_level_views():
    """RADV's views: TYPE 2D_ARRAY with BASE_ARRAY 2..DEPTH 4 read by dim 2D (layer 2) and by
    dim 2D_ARRAY (layer 2 + the coordinate; past DEPTH reads 0), and BASE_LEVEL 1 read by
    image_load_mip level 1 (level 2), on a 64KB_R_X chain with a pipe/bank XOR."""
    chip, gb = chip_for("gfx1030", 0x444), 0x444
    mode = _mode("64KB_R_X")
    w, h, layers, levels = 100, 70, 6, 5
    s = L.Surface(mode, L.RSRC_2D, 4, w, h, layers, levels)
    info = L.surface_info(s, chip)
    mem = np.random.default_rng(5).integers(0, 256, info.slice_size * layers + 65536, dtype=np.uint8)
    pbx = 0x5 & (L.mode_facts(chip, mode, L.RSRC_2D, 4).xor_mask >> 8)  # type: ignore[union-attr]

    def texel(x, y, z, m):
        o = int(L.address(chip, s, x, y, z, m, pbx))
        return mem[o : o + 16].view(np.uint32)

    t = tsharp(0, pbx, RGBA32UI, w, h, 5, I.TYPE_2D_ARRAY, mode, levels, base_level=1, base_array=2)
    res, got, _ = _dispatch(I.DIM_2D, "gfx1030", gb, t, [(7, 9, 1)], mem)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(got[0], texel(7, 9, 2, 2))
    res, got, _ = _dispatch(I.DIM_2D_ARRAY, "gfx1030", gb, t, [(7, 9, 1, 0), (3, 4, 2, 2), (1, 1, 3, 0)], mem)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(got[0], texel(7, 9, 3, 1))
    np.testing.assert_array_equal(got[1], texel(3, 4, 4, 3))
    np.testing.assert_array_equal(got[2], [0, 0, 0, 0])  # layer 5: past DEPTH


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "name,dim,mode_name,bpe_log2",
    [("navi21", I.DIM_2D_ARRAY, "64KB_R_X", 2), ("navi10", I.DIM_3D, "64KB_S_X", 3)],
)
def test_layout_load_store_every_tier(name, dim, mode_name, bpe_log2):
    """The same on every tier: the C++ lowering of the layout IR (popcount parities, the level
    chain's u64 arithmetic) gives NumPy's addresses."""
    _, target, gb = next(c for c in CHIPS if c[0] == name)
    mode = next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    rig = Rig(program(dim), target=target)
    _run_surface(rig, chip_for(target, gb), gb, dim, mode, bpe_log2, 16, np.random.default_rng([gb, dim, 7]))


@pytest.mark.parametrize("dim,mode_name", [(I.DIM_2D, "64KB_S_X"), (I.DIM_3D, "4KB_S_X")])
def test_layout_load_store_lane_mode(dim, mode_name):
    """Lane mode (one invocation a lane) lays out the same."""
    _, target, gb = CHIPS[1]
    mode = next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    rig = Rig(program(dim), target=target)
    rng = np.random.default_rng([dim, 11])
    _run_surface(rig, chip_for(target, gb), gb, dim, mode, 2, 16, rng, run_mode="lane")


def test_device_gb_addr_config():
    """A Device has its target's GB_ADDR_CONFIG unless told (None: unknown), and refuses a value
    that is not a 32-bit register."""
    import wavelift
    from wavelift.driver.device import DEFAULT_GB_ADDR_CONFIG
    from wavelift.errors import UserError

    assert wavelift.Device("gfx1030").gb_addr_config == DEFAULT_GB_ADDR_CONFIG["gfx1030"] == 0x444
    assert wavelift.Device("gfx1010").gb_addr_config == 0x00100044
    assert wavelift.Device("gfx1030", gb_addr_config=None).gb_addr_config is None
    assert wavelift.Device("gfx1030", gb_addr_config=0).capture.gb_addr_config == 0
    for bad in (-1, 1 << 32, "0x444"):
        with pytest.raises(UserError, match="gb_addr_config"):
            wavelift.Device("gfx1030", gb_addr_config=bad)
