"""GFX12 VBUFFER forms clang-19 does not emit from the buffer intrinsics (decision 0027, "VBUFFER"),
on programs assembled by llvm-mc-19 --mcpu=gfx1200, against NumPy references written from the
RDNA3/RDNA4 pseudo-code: the d16 loads (low/high half, u8/i8/b16; the other half kept) and d16_hi
stores, atomics without TH_ATOMIC_RETURN (VDATA unchanged), inc/dec (32/64-bit), M0 and an SGPR
as SOFFSET, idxen+offen with a VGPR pair, ADD_TID_ENABLE with a stride, and NUM_RECORDS cutting
through the forms (per dword, with its payload)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))

from asm import HAVE_MC, assemble  # noqa: E402
from harness import Rig, ptr  # noqa: E402

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
W = 32
SEL = 4 | 5 << 3 | 6 << 6 | 7 << 9
FLAGS = SEL | 22 << 12 | 3 << 28  # FORMAT 32_FLOAT, OOB_SELECT 3 (raw)


class Rig12(Rig):
    def __init__(self, src: str):
        super().__init__("s_endpgm")
        self.target = "gfx1200"
        self.code = assemble(src, False, mcpu="gfx1200")
        self.prog = self.mem.alloc(len(self.code) + 256, name="code12", data=self.code + b"\0" * 256)


def vsharp(addr: int, nrec: int, stride: int = 0, flags: int = FLAGS) -> list[int]:
    return [addr & 0xFFFFFFFF, (addr >> 32 & 0xFFFF) | stride << 16, nrec, flags]


def u32(x: int) -> int:
    return x & 0xFFFFFFFF


D16 = """
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, 0x11112222
  v_mov_b32 v2, 0x33334444
  v_mov_b32 v3, 0x55556666
  v_mov_b32 v4, 0x77778888
  v_mov_b32 v5, 0x9999aaaa
  v_mov_b32 v6, 0xbbbbcccc
  buffer_load_d16_b16 v1, v10, s[4:7], null offen
  buffer_load_d16_hi_b16 v2, v10, s[4:7], null offen offset:2
  buffer_load_d16_u8 v3, v10, s[4:7], null offen offset:1
  buffer_load_d16_hi_u8 v4, v10, s[4:7], null offen offset:3
  buffer_load_d16_i8 v5, v10, s[4:7], null offen offset:3
  buffer_load_d16_hi_i8 v6, v10, s[4:7], null offen offset:1
  s_wait_loadcnt 0x0
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v2, s[0:1] offset:128
  global_store_b32 v10, v3, s[0:1] offset:256
  global_store_b32 v10, v4, s[0:1] offset:384
  global_store_b32 v10, v5, s[0:1] offset:512
  global_store_b32 v10, v6, s[0:1] offset:640
  v_mul_u32_u24 v7, 0x01030507, v0
  buffer_store_d16_hi_b16 v7, v10, s[4:7], null offen offset:1024
  buffer_store_d16_hi_b8 v7, v10, s[4:7], null offen offset:1026
  s_endpgm
"""


def d16_ref(data: np.ndarray, nrec: int):
    by = data.view(np.uint8)
    out = np.zeros((6, W), np.uint32)
    mem = by.copy()

    def ld(off, n):
        return int.from_bytes(by[off : off + n].tobytes(), "little") if off + n <= nrec else 0

    def sx8(v):
        return (v - 256 if v & 0x80 else v) & 0xFFFF

    for L in range(W):
        a = 4 * L
        out[0, L] = 0x11110000 | ld(a, 2)
        out[1, L] = 0x4444 | ld(a + 2, 2) << 16
        out[2, L] = 0x55550000 | ld(a + 1, 1)
        out[3, L] = 0x8888 | ld(a + 3, 1) << 16
        out[4, L] = 0x99990000 | sx8(ld(a + 3, 1))
        out[5, L] = 0xCCCC | sx8(ld(a + 1, 1)) << 16
        v = L * 0x030507  # v_mul_u32_u24: the 24-bit operands
        if a + 1024 + 2 <= nrec:
            mem[a + 1024 : a + 1026] = np.frombuffer((v >> 16).to_bytes(2, "little"), np.uint8)
        if a + 1026 + 1 <= nrec:
            mem[a + 1026] = (v >> 16) & 0xFF
    return out, mem.view(np.uint32)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("nrec", [2048, 4 * 20 + 2, 4 * 20 + 3, 1024 + 4 * 9 + 3])
def test_d16_loads_and_hi_stores(nrec, mode):
    rng = np.random.default_rng(nrec)
    data = rng.integers(0, 2**32, 512, dtype=np.uint64).astype(np.uint32)
    r = Rig12(D16)
    buf = r.buf(data, "buf")
    out = r.buf(np.full(6 * W, 0xDEADBEEF, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=ptr(out) + (0, 0) + tuple(vsharp(buf, nrec)), tgid=(False,) * 3), mode=mode
    )
    assert res.landed, res.refusal
    want_out, want_mem = d16_ref(data, nrec)
    np.testing.assert_array_equal(r.read(out, np.uint32, 6 * W).reshape(6, W), want_out)
    np.testing.assert_array_equal(r.read(buf, np.uint32, 512), want_mem)


ATOMICS = """
  v_lshlrev_b32 v10, 2, v0
  v_lshlrev_b32 v11, 3, v0
  v_mul_u32_u24 v20, 3, v0
  v_mov_b32 v21, v20
  v_mov_b32 v22, v20
  v_mov_b32 v23, 0
  v_mov_b32 v24, v20
  v_mov_b32 v25, 0
  v_mov_b32 v26, 77
  buffer_atomic_inc_u32 v20, v10, s[4:7], null offen
  buffer_atomic_dec_u32 v21, v10, s[4:7], null offen offset:256 th:TH_ATOMIC_RETURN
  buffer_atomic_inc_u64 v[22:23], v11, s[4:7], null offen offset:512 th:TH_ATOMIC_RETURN
  buffer_atomic_dec_u64 v[24:25], v11, s[4:7], s8 offen offset:768 th:TH_ATOMIC_RETURN
  buffer_atomic_add_u32 v26, v10, s[4:7], m0 offen offset:1024
  s_wait_loadcnt 0x0
  global_store_b32 v10, v20, s[0:1]
  global_store_b32 v10, v21, s[0:1] offset:128
  global_store_b64 v11, v[22:23], s[0:1] offset:256
  global_store_b64 v11, v[24:25], s[0:1] offset:512
  global_store_b32 v10, v26, s[0:1] offset:768
  s_endpgm
"""


def atomics_ref(mem0: np.ndarray, s8: int, m0: int, nrec: int):
    mem = mem0.copy().view(np.uint8)
    out = np.zeros(224, np.uint32)
    M64 = (1 << 64) - 1

    def rmw(addr, rel, n, fn):
        if rel + n > nrec:
            return 0
        old = int.from_bytes(mem[addr : addr + n].tobytes(), "little")
        mem[addr : addr + n] = np.frombuffer(fn(old).to_bytes(n, "little"), np.uint8)
        return old

    for L in range(W):
        d = 3 * L
        rmw(4 * L, 4 * L, 4, lambda o: 0 if o >= d else o + 1)  # no return: v20 stays d
        out[L] = d
        out[32 + L] = rmw(256 + 4 * L, 256 + 4 * L, 4, lambda o: d if o == 0 or o > d else o - 1)
        o64 = rmw(512 + 8 * L, 512 + 8 * L, 8, lambda o: 0 if o >= d else (o + 1) & M64)
        out[64 + 2 * L], out[64 + 2 * L + 1] = o64 & 0xFFFFFFFF, o64 >> 32
        o64 = rmw(s8 + 768 + 8 * L, 768 + 8 * L, 8, lambda o: d if o == 0 or o > d else o - 1)
        out[128 + 2 * L], out[128 + 2 * L + 1] = o64 & 0xFFFFFFFF, o64 >> 32
        rmw(m0 + 1024 + 4 * L, 1024 + 4 * L, 4, lambda o: (o + 77) & 0xFFFFFFFF)
        out[192 + L] = 77
    return out, mem.view(np.uint32)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("nrec", [4096, 256 + 4 * 13, 512 + 8 * 7 + 4, 700])
def test_inc_dec_no_return_soffset(nrec, mode):
    """inc: old >= data ? 0 : old + 1; dec: old == 0 || old > data ? data : old - 1 (32 and
    64 bits); an atomic without TH_ATOMIC_RETURN leaves VDATA as it was; SOFFSET from an SGPR
    and from M0 (NUM_RECORDS leaves their accesses all in or all out of range: where counting
    SOFFSET would decide, the dispatch is refused, test_gfx12_buffers.py)."""
    rng = np.random.default_rng(nrec)
    mem0 = rng.integers(0, 100, 1536, dtype=np.uint32)
    mem0[128:384:2] = rng.integers(0, 100, 128)
    mem0[129:384:2] = np.where(rng.random(128) < 0.2, 1, 0)  # some 64-bit values past 2^32
    s8, m0 = 16, 64
    src = ATOMICS.replace(
        "  v_lshlrev_b32 v10, 2, v0",
        f"  s_mov_b32 s8, {s8}\n  s_mov_b32 m0, {m0}\n  v_lshlrev_b32 v10, 2, v0",
    )
    r = Rig12(src)
    buf = r.buf(mem0, "buf")
    out = r.buf(np.full(224, 0xDEADBEEF, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=ptr(out) + (0, 0) + tuple(vsharp(buf, nrec)), tgid=(False,) * 3), mode=mode
    )
    assert res.landed, res.refusal
    want_out, want_mem = atomics_ref(mem0, s8, m0, nrec)
    np.testing.assert_array_equal(r.read(out, np.uint32, 224), want_out)
    np.testing.assert_array_equal(r.read(buf, np.uint32, 1536), want_mem)


STRUCT = """
  v_lshlrev_b32 v10, 2, v0
  v_and_b32 v2, 3, v0
  v_lshlrev_b32 v2, 2, v2
  v_mov_b32 v1, v0
  s_mov_b32 m0, 8
  buffer_load_b32 v3, v[1:2], s[4:7], m0 idxen offen offset:4
  buffer_load_b64 v[4:5], off, s[8:11], s12 offset:12
  s_wait_loadcnt 0x0
  global_store_b32 v10, v3, s[0:1]
  global_store_b32 v10, v4, s[0:1] offset:128
  global_store_b32 v10, v5, s[0:1] offset:256
  s_endpgm
"""


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("nrec", [64, 20])
def test_idxen_offen_pair_and_add_tid(nrec, mode):
    """idxen+offen: index VGPR[VADDR], offset VGPR[VADDR+1]; M0 as SOFFSET; a second V# with
    ADD_TID_ENABLE and stride 16 (index = lane) and no VGPR address (off), OOB_SELECT 1 (index
    against NUM_RECORDS)."""
    data = np.arange(1024, dtype=np.uint32) * 7 + 3
    r = Rig12(STRUCT)
    buf = r.buf(data, "buf")
    out = r.buf(np.full(3 * W, 0xDEADBEEF, np.uint32), "out")
    f1 = SEL | 22 << 12 | 1 << 28
    f2 = f1 | 1 << 23
    sg = ptr(out) + (0, 0) + tuple(vsharp(buf, nrec, 32, f1)) + tuple(vsharp(buf, nrec, 16, f2)) + (20,)
    res = r.run(r.config(user_sgprs=sg, tgid=(False,) * 3), mode=mode)
    assert res.landed, res.refusal
    by = data.view(np.uint8)

    def word(a):
        return int.from_bytes(by[a : a + 4].tobytes(), "little")

    want = np.zeros((3, W), np.uint32)
    for L in range(W):
        if L < nrec:
            want[0, L] = word(8 + 32 * L + 4 + 4 * (L & 3))
            want[1, L] = word(20 + 16 * L + 12)
            want[2, L] = word(20 + 16 * L + 16)
    np.testing.assert_array_equal(r.read(out, np.uint32, 3 * W).reshape(3, W), want)
