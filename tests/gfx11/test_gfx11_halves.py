"""GFX11 (gfx1100): S_WQM/S_QUADMASK, 16-bit VOP1/VOP2/VOPC operands in VGPR fields 128-255 (the
high half of v(n-128)), V_CNDMASK_B16 with op_sel, against NumPy references written from the
RDNA3 ISA guide's pseudo-code.  Encodings of the .h forms come from llvm-mc-19 itself
(``-mattr=+real-true16``: ``v1.h`` is VGPR field 129), or, where LLVM 19 refuses the .h
spelling (``v_cvt_f32_f16_e32 v5, v1.h``, v_fmac_f16, VOPC), the same field set on its e32 word."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, encode_true16, run11, vop3_opsel, words

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")


def _wqm(x: int, bits: int) -> int:
    return sum(0xF << (4 * i) for i in range(bits // 4) if (x >> (4 * i)) & 0xF)


def _quadmask(x: int, bits: int) -> int:
    return sum(1 << i for i in range(bits // 4) if (x >> (4 * i)) & 0xF)


@pytest.mark.parametrize("mode", MODES)
def test_s_wqm_and_s_quadmask(mode):
    """D and SCC of S_WQM_B32/B64 and S_QUADMASK_B32/B64 on random and edge operands."""
    rng = np.random.default_rng(23)
    vals32 = [0, 0xFFFFFFFF, 0x10000001, 0x0F0F0000] + [
        int(x) & int(rng.integers(0, 2**32)) for x in rng.integers(0, 2**32, 4)
    ]
    vals64 = [0, 1 << 63, 0x0000_F000_0000_0001] + [
        int(x) << 32 | int(y) for x, y in rng.integers(0, 2**32, (3, 2))
    ]
    lines, want = ["v_mov_b32 v10, 0"], []
    k = 0
    for x in vals32:
        for op, ref in (("s_wqm_b32", _wqm), ("s_quadmask_b32", _quadmask)):
            lines += [
                f"s_mov_b32 s4, {x:#x}",
                "s_cmp_eq_u32 0, 1",  # SCC = 0 before
                f"{op} s5, s4",
                "s_cselect_b32 s6, 1, 0",
                "v_mov_b32 v1, s5",
                "v_mov_b32 v2, s6",
                f"global_store_b32 v10, v1, s[0:1] offset:{8 * k}",
                f"global_store_b32 v10, v2, s[0:1] offset:{8 * k + 4}",
            ]
            r = ref(x, 32)
            want += [r, int(r != 0)]
            k += 1
    for x in vals64:
        for op, ref in (("s_wqm_b64", _wqm), ("s_quadmask_b64", _quadmask)):
            lines += [
                f"s_mov_b32 s4, {x & 0xFFFFFFFF:#x}",
                f"s_mov_b32 s5, {x >> 32:#x}",
                "s_cmp_eq_u32 0, 1",
                f"{op} s[6:7], s[4:5]",
                "s_cselect_b32 s8, 1, 0",
                "v_mov_b32 v1, s6",
                "v_mov_b32 v2, s7",
                "v_mov_b32 v3, s8",
                f"global_store_b32 v10, v1, s[0:1] offset:{4 * len(want)}",
                f"global_store_b32 v10, v2, s[0:1] offset:{4 * len(want) + 4}",
                f"global_store_b32 v10, v3, s[0:1] offset:{4 * len(want) + 8}",
            ]
            r = ref(x, 64)
            want += [r & 0xFFFFFFFF, r >> 32, int(r != 0)]
    lines.append("s_endpgm")
    res, out = run11("\n".join(lines), np.zeros(1, np.uint32), len(want), mode)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(out, np.array(want, np.uint32))


def _src0_hi(text: str) -> str:
    """e32 ``text`` (VOP1/VOP2) with its SRC0 field's VGPR number + 128 (vS.h)."""
    from asm import assemble

    w = int.from_bytes(assemble(text, mcpu="gfx1100")[:4], "little")
    w = w & ~0x1FF | ((w & 0x1FF) + 128)
    return words(w.to_bytes(4, "little"))


def _vopc_vsrc1_hi(text: str) -> str:
    """e32 ``text`` (VOPC) with its VSRC1 field (bits 16:9) + 128."""
    from asm import assemble

    w = int.from_bytes(assemble(text, mcpu="gfx1100")[:4], "little")
    w = w & ~(0xFF << 9) | ((((w >> 9) & 0xFF) + 128) << 9)
    return words(w.to_bytes(4, "little"))


HALVES = """
  v_lshlrev_b32 v10, 2, v0
  global_load_b32 v1, v10, s[2:3]
  global_load_b32 v2, v10, s[2:3] offset:128
  s_waitcnt vmcnt(0)
  v_mov_b32 v3, 0x12345678
  v_mov_b32 v4, 0x9abcdef0
  v_mov_b32 v6, 0x11112222
  {add}
  {mov_hi}
  {cvt}
  {fmac}
  v_mov_b32 v7, 0
  {cmp}
  v_cndmask_b32 v7, 0, 1, vcc_lo
  global_store_b32 v10, v3, s[0:1]
  global_store_b32 v10, v4, s[0:1] offset:128
  global_store_b32 v10, v5, s[0:1] offset:256
  global_store_b32 v10, v6, s[0:1] offset:384
  global_store_b32 v10, v7, s[0:1] offset:512
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_16bit_operands_in_high_vgpr_fields(mode):
    """v_add_f16_e32 v3.l, v1.h, v2.h (src0 and vsrc1 high halves; v3's high half kept),
    v_mov_b16_e32 v4.h, v1.l (the low half kept), v_cvt_f32_f16_e32 v5, v1.h,
    v_fmac_f16_e32 v6.l, v1.h, v2.l, v_cmp_eq_f16_e32 vcc, v1.l, v2.h."""
    rng = np.random.default_rng(5)
    h = rng.standard_normal((2, 2, 32)).astype(np.float16)
    h[0, 0, :4] = h[1, 1, :4]  # some equal pairs for the compare
    u = h.view(np.uint16).astype(np.uint32)
    v1 = u[0, 0] | u[0, 1] << 16
    v2 = u[1, 0] | u[1, 1] << 16
    src = HALVES.format(
        add=words(encode_true16("v_add_f16_e32 v3.l, v1.h, v2.h")),
        mov_hi=words(encode_true16("v_mov_b16_e32 v4.h, v1.l")),
        cvt=_src0_hi("v_cvt_f32_f16_e32 v5, v1"),
        fmac=_src0_hi("v_fmac_f16_e32 v6, v1, v2"),
        cmp=_vopc_vsrc1_hi("v_cmp_eq_f16_e32 vcc_lo, v1, v2"),
    )
    res, out = run11(src, np.stack([v1, v2]), 160, mode)
    assert res.landed, res.refusal
    got = out.reshape(5, 32)
    a_lo, a_hi, b_lo, b_hi = h[0, 0], h[0, 1], h[1, 0], h[1, 1]
    add = (a_hi + b_hi).view(np.uint16).astype(np.uint32)
    np.testing.assert_array_equal(got[0], 0x12340000 | add)
    np.testing.assert_array_equal(got[1], (a_lo.view(np.uint16).astype(np.uint32) << 16) | 0xDEF0)
    np.testing.assert_array_equal(got[2], a_hi.astype(np.float32).view(np.uint32))
    # fmac: one rounding of a_hi*b_lo + 0x2222 (f16), computed exactly in float64
    acc = np.full(32, 0x2222, np.uint16).view(np.float16)
    fm = (a_hi.astype(np.float64) * b_lo.astype(np.float64) + acc.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got[3], 0x11110000 | fm.view(np.uint16).astype(np.uint32))
    np.testing.assert_array_equal(got[4], (a_lo == b_hi).astype(np.uint32))


CNDMASK = """
  v_lshlrev_b32 v10, 2, v0
  global_load_b32 v1, v10, s[2:3]
  global_load_b32 v2, v10, s[2:3] offset:128
  s_waitcnt vmcnt(0)
  s_mov_b32 vcc_lo, 0x5a5a00ff
  v_mov_b32 v3, 0x12345678
  v_mov_b32 v4, 0x12345678
  v_mov_b32 v5, 0x12345678
  v_cndmask_b16 v3, v1, v2, vcc_lo
  {hi}
  v_cndmask_b16 v5, -v1, |v2|, vcc_lo
  global_store_b32 v10, v3, s[0:1]
  global_store_b32 v10, v4, s[0:1] offset:128
  global_store_b32 v10, v5, s[0:1] offset:256
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_v_cndmask_b16(mode):
    """D.b16 = VCC[lane] ? S1.b16 : S0.b16; op_sel picks each source's and the result's half
    (op_sel 0b1011: S0.h, S1.h into D.h), neg/abs act on the sign bit; the other half kept."""
    rng = np.random.default_rng(7)
    v = rng.integers(0, 2**32, (2, 32), dtype=np.uint64).astype(np.uint32)
    src = CNDMASK.format(hi=vop3_opsel("v_cndmask_b16 v4, v1, v2, vcc_lo", 0b1011))
    res, out = run11(src, v, 96, mode)
    assert res.landed, res.refusal
    got = out.reshape(3, 32)
    vcc = (0x5A5A00FF >> np.arange(32)) & 1 == 1
    lo1, lo2, hi1, hi2 = v[0] & 0xFFFF, v[1] & 0xFFFF, v[0] >> 16, v[1] >> 16
    np.testing.assert_array_equal(got[0], 0x12340000 | np.where(vcc, lo2, lo1))
    np.testing.assert_array_equal(got[1], 0x5678 | np.where(vcc, hi2, hi1) << 16)
    np.testing.assert_array_equal(got[2], 0x12340000 | np.where(vcc, lo2 & 0x7FFF, lo1 ^ 0x8000))
