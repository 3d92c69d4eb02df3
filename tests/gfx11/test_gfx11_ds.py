"""GFX11 (gfx1100) DS exchanges and 64-bit LDS atomics against a NumPy model of LDS written from
the RDNA3 ISA guide: DS_STOREXCHG_RTN_B64, DS_STOREXCHG_2ADDR[_STRIDE64]_RTN_B32/B64 (two
exchanges at base + OFFSETn * size (* 64), both old values returned), DS_ADD_RTN_U64,
DS_MIN_RTN_I64, DS_CMPSTORE_RTN_B64 (DATA0 the new value, DATA1 the compare value),
DS_INC_RTN_U64."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, Rig11
from harness import ptr

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")
N_WORDS = 1024  # 4 KiB of LDS
N_RET = 18  # returned words per lane


def _program() -> str:
    lines = [
        "v_lshlrev_b32 v1, 2, v0",  # lane * 4
        "v_or_b32 v3, 0xa0000000, v1",
    ]
    for k in range(N_WORDS // 32):  # LDS word at byte a holds a | 0xa0000000
        lines += [f"v_add_nc_u32 v2, {k * 128}, v3", f"ds_store_b32 v1, v2 offset:{k * 128}"]
    lines += [
        "s_waitcnt lgkmcnt(0)",
        "v_lshlrev_b32 v4, 3, v0",  # lane * 8
        "v_add_nc_u32 v20, 0x100, v0",
        "v_add_nc_u32 v21, 0x200, v0",
        "v_add_nc_u32 v22, 0x300, v0",
        "v_add_nc_u32 v23, 0x400, v0",
        "v_add_nc_u32 v24, 0x500, v0",
        "v_add_nc_u32 v25, 0x600, v0",
        "v_mov_b32 v28, 0x80000000",
        "v_add_nc_u32 v28, v28, v0",
        "v_mov_b32 v29, 0xfffffff0",
        "ds_storexchg_rtn_b64 v[30:31], v4, v[22:23]",
        "v_add_nc_u32 v5, 256, v4",
        "ds_storexchg_2addr_rtn_b32 v[32:33], v5, v20, v21 offset1:1",
        "v_add_nc_u32 v6, 1024, v1",
        "ds_storexchg_2addr_stride64_rtn_b32 v[34:35], v6, v21, v20 offset0:1 offset1:2",
        "v_add_nc_u32 v7, 2048, v4",
        "ds_storexchg_2addr_stride64_rtn_b64 v[36:39], v7, v[22:23], v[24:25] offset0:1 offset1:2",
        "v_add_nc_u32 v8, 3328, v4",
        "ds_add_rtn_u64 v[40:41], v8, v[28:29]",
        # ds_min_rtn_i64 at 512 + lane * 8: data (hi 0xa0000280 or 0x10000000, lo lane), signed
        "v_add_nc_u32 v9, 512, v4",
        "v_mov_b32 v44, v0",
        "v_and_b32 v52, 1, v0",
        "v_cmp_ne_u32 vcc_lo, 0, v52",
        "v_mov_b32 v58, 0x10000000",
        "v_cndmask_b32 v45, 0xa0000280, v58, vcc_lo",  # odd lanes: positive (signed compare)
        "ds_min_rtn_i64 v[42:43], v9, v[44:45]",
        # ds_cmpstore_rtn_b64 at 768 + lane * 8: DATA0 the new value, DATA1 the compare value
        # (the word's own value in even lanes, one bit off in odd lanes)
        "v_add_nc_u32 v11, 768, v4",
        "v_add_nc_u32 v48, 0x700, v0",
        "v_add_nc_u32 v49, 0x800, v0",
        "v_or_b32 v50, 0xa0000000, v11",
        "v_xor_b32 v50, v50, v52",
        "v_add_nc_u32 v51, 4, v11",
        "v_or_b32 v51, 0xa0000000, v51",
        "ds_cmpstore_rtn_b64 v[46:47], v11, v[48:49], v[50:51]",
        # ds_inc_rtn_u64 at 1664 + lane * 8: data all ones (even lanes: +1) or 0 (odd: -> 0)
        "v_add_nc_u32 v12, 1664, v4",
        "v_subrev_nc_u32 v54, 1, v52",
        "v_mov_b32 v55, v54",
        "ds_inc_rtn_u64 v[56:57], v12, v[54:55]",
        "s_waitcnt lgkmcnt(0)",
    ]
    for j, reg in enumerate(list(range(30, 44)) + [46, 47, 56, 57]):
        lines.append(f"global_store_b32 v1, v{reg}, s[0:1] offset:{128 * j}")
    lines.append(f"s_add_u32 s0, s0, {N_RET * 128}\ns_addc_u32 s1, s1, 0")
    for k in range(N_WORDS // 32):
        lines += [
            f"ds_load_b32 v2, v1 offset:{k * 128}",
            "s_waitcnt lgkmcnt(0)",
            f"global_store_b32 v1, v2, s[0:1] offset:{k * 128}" if k * 128 < 4096 else "",
        ]
    lines.append("s_endpgm")
    return "\n".join(line for line in lines if line)


def _model():
    """(returned words [N_RET, 32], final LDS words) from the guide's pseudo-code."""
    mem = np.arange(N_WORDS, dtype=np.uint64) * 4 | 0xA0000000
    lane = np.arange(32, dtype=np.uint64)
    rets = []

    def xchg(byte_addr, words, vals):
        old = []
        for w in range(words):
            i = (byte_addr // 4 + w).astype(np.int64)
            old.append(mem[i].copy())
            mem[i] = vals[w]
        return old

    rets += xchg(lane * 8, 2, [lane + 0x300, lane + 0x400])
    a = 256 + lane * 8
    rets += xchg(a, 1, [lane + 0x100]) + xchg(a + 4, 1, [lane + 0x200])
    a = 1024 + lane * 4
    rets += xchg(a + 256, 1, [lane + 0x200]) + xchg(a + 512, 1, [lane + 0x100])
    a = 2048 + lane * 8
    rets += xchg(a + 512, 2, [lane + 0x300, lane + 0x400]) + xchg(a + 1024, 2, [lane + 0x500, lane + 0x600])
    a = ((3328 + lane * 8) // 4).astype(np.int64)
    old = mem[a] | mem[a + 1] << 32
    new = (old + ((0xFFFFFFF0 << 32) | (0x80000000 + lane))) & 0xFFFFFFFFFFFFFFFF
    mem[a], mem[a + 1] = new & 0xFFFFFFFF, new >> 32
    rets += [old & 0xFFFFFFFF, old >> 32]

    def rmw64(base, fn):
        i = ((base + lane * 8) // 4).astype(np.int64)
        old = mem[i] | mem[i + 1] << 32
        new = fn(old) & 0xFFFFFFFFFFFFFFFF
        mem[i], mem[i + 1] = new & 0xFFFFFFFF, new >> 32
        return [old & 0xFFFFFFFF, old >> 32]

    def signed(x):
        return x.astype(np.int64)  # two's complement view of the u64 bits

    data = np.where(lane & 1, 0x10000000, 0xA0000280).astype(np.uint64) << 32 | lane
    rets += rmw64(512, lambda old: np.where(signed(data) < signed(old), data, old))
    cmp = (768 + lane * 8 + 4 | 0xA0000000) << 32 | ((768 + lane * 8 | 0xA0000000) ^ (lane & 1))
    rets += rmw64(768, lambda old: np.where(old == cmp, (lane + 0x800) << 32 | (lane + 0x700), old))
    inc = np.where(lane & 1, 0, 0xFFFFFFFFFFFFFFFF).astype(np.uint64)
    rets += rmw64(1664, lambda old: np.where(old >= inc, 0, old + 1))
    return np.array(rets, np.uint32), mem.astype(np.uint32)


@pytest.mark.parametrize("mode", MODES)
def test_ds_exchanges_and_64bit_atomics(mode):
    r = Rig11(_program())
    n_out = N_RET * 32 + N_WORDS
    out = r.buf(np.full(n_out, 0xDEADBEEF, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out), lds=N_WORDS * 4), mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, n_out)
    rets, mem = _model()
    np.testing.assert_array_equal(got[: N_RET * 32].reshape(N_RET, 32), rets)
    lds = got[N_RET * 32 :].reshape(32, 32)  # row k: words k*32 .. k*32+31
    np.testing.assert_array_equal(lds.reshape(-1), mem)
