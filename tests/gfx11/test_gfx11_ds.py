"""GFX11 (gfx1100) DS exchanges and 64-bit LDS atomics against a NumPy model of LDS written from
the RDNA3 ISA guide: DS_STOREXCHG_RTN_B64, DS_STOREXCHG_2ADDR[_STRIDE64]_RTN_B32/B64 (two
exchanges at base + OFFSETn * size (* 64), both old values returned), DS_ADD_RTN_U64."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, Rig11
from harness import ptr

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")
N_WORDS = 1024  # 4 KiB of LDS


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
        "s_waitcnt lgkmcnt(0)",
    ]
    for j, reg in enumerate(range(30, 42)):
        lines.append(f"global_store_b32 v1, v{reg}, s[0:1] offset:{128 * j}")
    lines.append("s_add_u32 s0, s0, 1536\ns_addc_u32 s1, s1, 0")
    for k in range(N_WORDS // 32):
        lines += [
            f"ds_load_b32 v2, v1 offset:{k * 128}",
            "s_waitcnt lgkmcnt(0)",
            f"global_store_b32 v1, v2, s[0:1] offset:{k * 128}" if k * 128 < 4096 else "",
        ]
    lines.append("s_endpgm")
    return "\n".join(line for line in lines if line)


def _model():
    """(returned words [12, 32], final LDS words) from the guide's pseudo-code."""
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
    return np.array(rets, np.uint32), mem.astype(np.uint32)


@pytest.mark.parametrize("mode", MODES)
def test_ds_exchanges_and_64bit_atomics(mode):
    r = Rig11(_program())
    n_out = 12 * 32 + N_WORDS
    out = r.buf(np.full(n_out, 0xDEADBEEF, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out), lds=N_WORDS * 4), mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, n_out)
    rets, mem = _model()
    np.testing.assert_array_equal(got[: 12 * 32].reshape(12, 32), rets)
    lds = got[12 * 32 :].reshape(32, 32)  # row k: words k*32 .. k*32+31
    np.testing.assert_array_equal(lds.reshape(-1), mem)
