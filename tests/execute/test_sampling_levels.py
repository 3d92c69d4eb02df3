"""image_sample_lz fetches one mip level (decision 0030): with λ' = 0 the level and the mip
blend are uniform, and a blend needs an S# MIN_LOD with a fraction under a linear mip filter,
which _lz refuses by name; every other _lz sample of a mip chain is the level _l gives at the
same LOD (the _l path is held to lavapipe in test_sampling_mips_lavapipe.py), and _l still blends.
The per-lane IR of _lz is then about half of _l's (it was the same: both levels fetched)."""

from __future__ import annotations

import numpy as np
from test_sampling import CLAMP, POINT, TWO_LEVELS, coords, run, sampler

from wavelift.frontend import sample as S
from wavelift.frontend.program import translate
from wavelift.ir.passes.pipeline import optimize
from wavelift.memory import ssharp

MIP = ssharp.enum("SQ_TEX_MIP_FILTER")


def _texels(seed):
    # level 0 (8 x 4, pitch 64) and level 1 after it: 16 rows of the pitch hold both
    return np.random.default_rng(seed).integers(0, 256, (16, 64, 4), dtype=np.uint8)


def test_lz_samples_the_level_l_gives():
    """_lz on a two-level view with MIN_LOD 0 and 1.0 (a linear mip filter: no fraction, so no
    blend) equals _l at λ 0 and 1; the two levels differ, so the level chosen is checked."""
    rng = np.random.default_rng(30)
    tex = _texels(31)
    # clear of texel boundaries on level 0 (8 x 4) and so on level 1 (4 x 2)
    s, t = coords(rng, 0, 1, 32, 8, 0.1), coords(rng, 0, 1, 32, 4, 0.1)
    wrap = CLAMP["WRAP"]
    got = {}
    for min_lod, lam in ((0, 0.0), (256, 1.0)):
        lz_s = sampler(wrap, wrap, POINT, POINT, MIP_FILTER=MIP["LINEAR"], MIN_LOD=min_lod)
        res, lz = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, sampler=lz_s, tsharp_patch=TWO_LEVELS)
        assert res.landed, res.refusal
        l_s = sampler(wrap, wrap, POINT, POINT, MIP_FILTER=MIP["LINEAR"])
        lod = np.full(32, lam, np.float32)
        res, l_ = run(
            "image_sample_l dmask:0xf", 3, 4, [s, t, lod], tex, sampler=l_s, tsharp_patch=TWO_LEVELS
        )
        assert res.landed, res.refusal
        np.testing.assert_array_equal(lz, l_)
        got[lam] = lz
    assert (got[0.0] != got[1.0]).any()


def test_lz_refuses_a_mip_blend_and_l_still_blends():
    """MIN_LOD 0.5 under a linear mip filter: _lz would blend levels 0 and 1 at weight 1/2 and
    refuses (image.unsupported_sampler); _l at λ 0.5 blends (lands, and differs from both
    levels)."""
    rng = np.random.default_rng(32)
    tex = _texels(33)
    s, t = coords(rng, 0, 1, 32, 8, 0.1), coords(rng, 0, 1, 32, 4, 0.1)
    wrap = CLAMP["WRAP"]
    half = sampler(wrap, wrap, POINT, POINT, MIP_FILTER=MIP["LINEAR"], MIN_LOD=128)
    res, _ = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, sampler=half, tsharp_patch=TWO_LEVELS)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_sampler", res.refusal
    # one level (no chain): MIN_LOD clamps to the last level, nothing to blend, it lands
    res, _ = run("image_sample_lz dmask:0xf", 2, 4, [s, t], tex, sampler=half)
    assert res.landed, res.refusal
    l_s = sampler(wrap, wrap, POINT, POINT, MIP_FILTER=MIP["LINEAR"])
    outs = []
    for lam in (0.0, 0.5, 1.0):
        lod = np.full(32, lam, np.float32)
        res, o = run("image_sample_l dmask:0xf", 3, 4, [s, t, lod], tex, sampler=l_s, tsharp_patch=TWO_LEVELS)
        assert res.landed, res.refusal
        outs.append(o)
    assert (outs[1] != outs[0]).any() and (outs[1] != outs[2]).any()


def _per_lane(form: str) -> int:
    """Per-lane IR ops (after the passes) of one sampling instruction."""
    from asm import assemble

    nregs = {"image_sample_lz": 2, "image_sample_l": 3}[form]
    code = assemble(
        f"  {form} v[10:13], v[1:{nregs}], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D\n  s_endpgm"
    )
    prog = translate(code, "gfx1030", 32, 0x10000000, gb_addr_config=0x444)
    return sum(
        1
        for blk in prog.blocks
        for op in optimize(blk, 0, 32).ops
        if op.instr == 0 and op.out is not None and not op.out.uniform
    )


def test_lz_per_lane_ir_is_one_level():
    """_lz's per-lane IR is one level's fetch, about half of _l's two (it was equal)."""
    lz, l_ = _per_lane("image_sample_lz"), _per_lane("image_sample_l")
    assert lz < 0.6 * l_, (lz, l_)
    assert S.parse("image_sample_lz")["lod"] == "lz"
