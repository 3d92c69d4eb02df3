"""Scratch rules on hand-assembled programs (llvm-mc-19), dispatched through PM4 streams.

Layout of every program here: s[0:3] scratch V#, s[4:5] output pointer, s6 workgroup id x,
s7 the scratch wave offset register (docs/decisions/0008-scratch.md).
"""

import numpy as np
import pytest
from rig import HAVE_MC, ScratchRig

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")

STORE_OUT = """
v_lshlrev_b32 v9, 2, v0
global_store_dword v9, v2, s[4:5]
s_endpgm
"""

# every lane writes 1000+L at per-lane offset 0 and 2000+L at offset 4 through scratch_*, then
# reads back through the scratch V# with soffset = 4 (unswizzled): the word of lane L+1.
CROSS_LANE = (
    """
v_add_nc_u32 v1, 1000, v0
v_add_nc_u32 v3, 2000, v0
v_mov_b32 v4, 0
scratch_store_dword v4, v1, off
scratch_store_dword v4, v3, off offset:4
s_mov_b32 s8, 4
buffer_load_dword v2, off, s[0:3], s8
s_waitcnt vmcnt(0)
"""
    + STORE_OUT
)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("wave64", [False, True])
def test_wave_mode_sees_the_hardware_layout_lane_mode_escapes(wave64):
    W = 64 if wave64 else 32
    r = ScratchRig(CROSS_LANE, wave64)
    res = r.run(mode="wave")
    assert res.landed, res.refusal
    got = r.out_words(W)
    lanes = np.arange(W)
    # byte 4 + 4L is lane L+1's word at offset 0; for the last lane it is lane 0's offset-4 word
    want = np.where(lanes < W - 1, 1000 + lanes + 1, 2000)
    np.testing.assert_array_equal(got, want)
    r2 = ScratchRig(CROSS_LANE, wave64)
    res = r2.run(mode="lane")
    assert not res.landed and res.refusal.code == "escape"
    assert res.escapes and res.escapes[0].kind == "scratch"
    assert (r2.out_words() == 0x5A5A5A5A).all()  # nothing landed


# multi-dword, byte and half accesses, both ways (scratch_* and the V#), swizzled per dword
WIDTHS = (
    """
v_mov_b32 v20, 8
v_add_nc_u32 v10, 0x100, v0
v_add_nc_u32 v11, 0x200, v0
v_add_nc_u32 v12, 0x300, v0
v_add_nc_u32 v13, 0x400, v0
scratch_store_dwordx4 v20, v[10:13], off
buffer_load_dword v2, v20, s[0:3], 0 offen offset:8      ; dword 2 of the x4 -> 0x300+L
buffer_load_ushort v14, v20, s[0:3], 0 offen offset:12   ; low half of dword 3 -> 0x400+L
buffer_load_ubyte v15, v20, s[0:3], 0 offen offset:1     ; byte 1 of dword 0 -> 0x01
v_mov_b32 v16, 0xABCD
buffer_store_short v16, v20, s[0:3], 0 offen offset:6    ; high half of dword 1
scratch_load_dword v17, v20, off offset:4                ; 0xABCD0000 | (0x200+L)
scratch_load_sbyte v18, v20, off offset:7                ; 0xAB sign-extended
s_waitcnt vmcnt(0)
v_add_nc_u32 v2, v2, v14
v_add_nc_u32 v2, v2, v15
v_xor_b32 v2, v2, v17
v_add_nc_u32 v2, v2, v18
"""
    + STORE_OUT
)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave64", [False, True])
def test_widths_both_ways(wave64, mode):
    W = 64 if wave64 else 32
    r = ScratchRig(WIDTHS, wave64)
    res = r.run(mode=mode, wavesize_kib=4)
    assert res.landed, res.refusal
    L = np.arange(W, dtype=np.uint32)
    want = ((0x300 + L) + (0x400 + L) + 1) ^ (0xABCD0000 | (0x200 + L))
    want = (want + np.uint32(0xFFFFFFAB)).astype(np.uint32)
    np.testing.assert_array_equal(r.out_words(W), want)
    assert all(not (a <= 0x7F00_0000_0000 < a + n) for a, n in res.write_spans)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize(
    "src,what",
    [
        ("v_mov_b32 v4, 0x400\nscratch_store_dword v4, v0, off\n", "past the wave's bytes"),
        (
            "v_mov_b32 v4, 0x3fc\nscratch_store_dword v4, v0, off\nv_mov_b32 v4, 0x400\n"
            "scratch_load_dword v2, v4, off\n",
            "load past the end",
        ),
        # MUBUF scratch keeps the alignment rule (LLVM never emits it misaligned on GFX10)
        ("v_mov_b32 v4, 2\nbuffer_store_dword v0, v4, s[0:3], 0 offen\n", "misaligned dword"),
        ("v_mov_b32 v4, 3\nbuffer_store_short v0, v4, s[0:3], 0 offen\n", "half across dwords"),
        ("v_mov_b32 v4, 1\nbuffer_load_dword v2, v4, s[0:3], 0 offen\n", "misaligned dword load"),
        # a flat-scratch access crossing a dword is in range, but not past the wave's bytes
        ("v_mov_b32 v4, 0x3fe\nscratch_store_dword v4, v0, off\n", "unaligned dword past the end"),
        ("v_mov_b32 v4, -4\nscratch_load_dword v2, v4, off\n", "negative offset"),
        ("v_mov_b32 v4, 0x80000000\nscratch_store_dword v4, v0, off\n", "offset that would wrap"),
        ("s_mov_b32 s8, 0x8000\nbuffer_store_dword v0, off, s[0:3], s8\n", "soffset past the end"),
    ],
)
@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_out_of_range_and_misaligned_are_escapes(src, what, mode):
    # 1 KiB per wave, wave32: per-lane offsets 0..31 (dwords 0..7) are in range
    r = ScratchRig(src + "v_mov_b32 v2, 7\n" + STORE_OUT)
    res = r.run(mode=mode, wavesize_kib=1)
    assert not res.landed and res.refusal.code == "escape", what
    assert res.escapes[0].kind == "scratch"
    assert (r.out_words() == 0x5A5A5A5A).all(), "an escaping dispatch landed something"


# scratch_* (flat scratch) accesses that cross a dword: LLVM emits them whenever flat scratch
# is enabled (clang -O2 byte arrays), and each byte stays in the lane's own linear space.
UNALIGNED_FLAT = (
    """
v_mov_b32 v4, 2
v_lshlrev_b32 v1, 8, v0
v_or_b32 v1, 0x44332211, v1
scratch_store_dword v4, v1, off                          ; bytes 2..5 of this lane
scratch_load_ubyte v5, v4, off offset:2                  ; byte 4 = 0x33 (next dword, same lane)
scratch_load_ushort v6, v4, off offset:1                 ; bytes 3..4 = 0x3322 | (L << 8 & 0xff00)
scratch_load_dword v2, v4, off                           ; the whole word back
s_waitcnt vmcnt(0)
v_add_nc_u32 v2, v2, v5
v_xor_b32 v2, v2, v6
"""
    + STORE_OUT
)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave64", [False, True])
def test_unaligned_flat_scratch_stays_in_the_lane(wave64, mode):
    W = 64 if wave64 else 32
    r = ScratchRig(UNALIGNED_FLAT, wave64)
    res = r.run(mode=mode, wavesize_kib=4)
    assert res.landed, res.refusal
    L = np.arange(W, dtype=np.uint32)
    word = np.uint32(0x44332211) | (L << 8)
    want = (word + np.uint32(0x33)) ^ ((word >> 8) & np.uint32(0xFFFF))
    np.testing.assert_array_equal(r.out_words(W), want.astype(np.uint32))


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_last_dword_of_the_wave_is_in_range():
    # 2 KiB per wave, wave32: per-lane offset 60 -> dword 15 of each lane, the last ones
    src = (
        "v_mov_b32 v4, 60\nv_add_nc_u32 v1, 9, v0\nscratch_store_dword v4, v1, off\n"
        "scratch_load_dword v2, v4, off\ns_waitcnt vmcnt(0)\n" + STORE_OUT
    )
    r = ScratchRig(src)
    res = r.run(wavesize_kib=2)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), 9 + np.arange(32))
    r = ScratchRig(src.replace("60", "64"))
    assert r.run(wavesize_kib=2).refusal.code == "escape"


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_scratch_is_private_per_wave_and_starts_zero():
    # two workgroups: each reads (0) then writes its group id; no wave sees another's value
    src = """
v_mov_b32 v4, 0
scratch_load_dword v2, v4, off
s_waitcnt vmcnt(0)
v_mov_b32 v5, s6
scratch_store_dword v4, v5, off
scratch_load_dword v6, v4, off
s_waitcnt vmcnt(0)
v_add_nc_u32 v2, v2, v6
s_lshl_b32 s9, s6, 7
v_lshlrev_b32 v9, 2, v0
v_add_nc_u32 v9, s9, v9
global_store_dword v9, v2, s[4:5]
s_endpgm
"""
    r = ScratchRig(src)
    res = r.run(groups=2)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(64), np.repeat([0, 1], 32))


# ---- the offset register -------------------------------------------------------------------

OFFSET_WRITTEN = {
    "soffset": "s_mov_b32 s7, 16\nbuffer_store_dword v0, off, s[0:3], s7\n",
    "base": "s_load_dword s7, s[4:5], 0x0\ns_waitcnt lgkmcnt(0)\ns_add_u32 s0, s0, s7\n"
    "s_addc_u32 s1, s1, 0\nbuffer_store_dword v0, off, s[0:3], 0\n",
    "flat_scratch": "s_mov_b32 s7, 0x100\ns_add_u32 s0, s0, s7\ns_addc_u32 s1, s1, 0\n"
    "s_setreg_b32 hwreg(HW_REG_FLAT_SCR_LO), s0\n"
    "s_setreg_b32 hwreg(HW_REG_FLAT_SCR_HI), s1\n"
    "scratch_store_dword off, v0, off\n",
    "copied": "s_mov_b32 s7, 16\ns_mov_b32 s9, s7\nbuffer_store_dword v0, off, s[0:3], s9\n",
    "through_vgpr": "s_mov_b32 s7, 16\nv_mov_b32 v8, s7\nv_readfirstlane_b32 s9, v8\n"
    "buffer_store_dword v0, off, s[0:3], s9\n",
    "through_memory": "s_mov_b32 s7, 16\nv_mov_b32 v8, s7\nv_mov_b32 v9, 0\n"
    "global_store_dword v9, v8, s[4:5]\ns_load_dword s9, s[4:5], 0x0\n"
    "s_waitcnt lgkmcnt(0)\nbuffer_store_dword v0, off, s[0:3], s9\n",
    "one_branch": "s_cmp_eq_u32 s6, 0\ns_cbranch_scc1 skip\ns_mov_b32 s7, 4\nskip:\n"
    "buffer_store_dword v0, off, s[0:3], s7\n",
    "loop_carried": "s_mov_b32 s9, 0\nloop:\nbuffer_store_dword v0, off, s[0:3], s7\n"
    "s_add_u32 s7, s7, 4\ns_add_u32 s9, s9, 1\ns_cmp_lt_u32 s9, 3\n"
    "s_cbranch_scc1 loop\n",
}


@pytest.mark.parametrize("case", sorted(OFFSET_WRITTEN))
def test_offset_written_reaching_scratch_is_refused(case):
    r = ScratchRig(OFFSET_WRITTEN[case] + "v_mov_b32 v2, 1\n" + STORE_OUT)
    res = r.run()
    assert res.refusal is not None and res.refusal.code == "scratch.offset_written", (case, res.refusal)
    assert "s7" in res.refusal.message
    assert (r.out_words() == 0x5A5A5A5A).all()


OFFSET_FINE = {
    # clang -O2: the offset goes into s[0:1], then the register is reused for a kernel argument
    "clang_reuse": "s_add_u32 s0, s0, s7\ns_addc_u32 s1, s1, 0\ns_load_dword s7, s[4:5], 0x40\n"
    "v_mov_b32 v4, 0\nscratch_store_dword v4, v0, off\n"
    "buffer_store_dword v0, off, s[0:3], 0 offset:4\n"
    "s_waitcnt lgkmcnt(0)\nv_mov_b32 v2, s7\n",
    # the entry value (read as zero) may reach everything
    "entry_value": "buffer_store_dword v0, off, s[0:3], s7\ns_add_u32 s0, s0, s7\n"
    "s_addc_u32 s1, s1, 0\nbuffer_load_dword v2, off, s[0:3], s7\n"
    "s_waitcnt vmcnt(0)\n",
    # a written value used as a per-lane offset (an array index) is an ordinary offset
    "as_index": "s_mov_b32 s7, 8\nv_mov_b32 v4, s7\nscratch_store_dword v4, v0, off\n"
    "buffer_load_dword v2, v4, s[0:3], 0 offen\ns_waitcnt vmcnt(0)\n",
    # the written value is dead before any scratch access
    "overwritten_copy": "s_mov_b32 s9, s7\ns_mov_b32 s7, 99\nv_mov_b32 v2, s7\n"
    "buffer_store_dword v0, off, s[0:3], s9\n",
}


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("case", sorted(OFFSET_FINE))
def test_offset_written_reaching_no_scratch_address_is_fine(case):
    r = ScratchRig(OFFSET_FINE[case] + STORE_OUT)
    res = r.run()
    assert res.landed, (case, res.refusal)


# ---- the static test -----------------------------------------------------------------------


def test_buffer_vsharp_from_memory_is_not_scratch():
    # a V# loaded from memory (s_load) is a buffer; at the same time the scratch V# in s[0:3]
    # still reaches scratch.  User SGPRs: s[0:3] V#, s[4:5] out, s[6:7] -> the buffer's V#.
    import struct

    r = ScratchRig()
    data = r.cap.alloc(256, data=np.arange(64, dtype=np.uint32).tobytes(), name="data")
    table = r.cap.alloc(
        16, data=struct.pack("<4I", data & 0xFFFFFFFF, data >> 32, 256, 0x31016FAC), name="vsharp"
    )
    r.user += [table & 0xFFFFFFFF, table >> 32]
    r.program(
        """
s_load_dwordx4 s[12:15], s[6:7], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v4, 2, v0
buffer_load_dword v2, v4, s[12:15], 0 offen
v_mov_b32 v5, 0
scratch_store_dword v5, v0, off
buffer_load_dword v6, v5, s[0:3], 0 offen
s_waitcnt vmcnt(0)
v_add_nc_u32 v2, v2, v6
"""
        + STORE_OUT
    )
    res = r.run()
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), 2 * np.arange(32))
    assert any(w.address <= data < w.address + w.size for w in res.windows)


def test_vsharp_in_user_sgprs_without_scratch_is_a_buffer():
    # SCRATCH_EN clear: s[0:3] is just a buffer V#, traced and windowed like any other
    r = ScratchRig()
    buf = r.cap.alloc(256, data=np.arange(64, dtype=np.uint32).tobytes(), name="buf")
    r.user[:4] = [buf & 0xFFFFFFFF, buf >> 32, 256, 0x31016FAC]
    r.program(
        "v_lshlrev_b32 v4, 2, v0\nbuffer_load_dword v2, v4, s[0:3], 0 offen\ns_waitcnt vmcnt(0)\n" + STORE_OUT
    )
    res = r.run(scratch=False)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), np.arange(32))


def test_ambiguous_base_is_refused():
    src = """
s_cmp_eq_u32 s6, 0
s_cbranch_scc1 other
s_mov_b32 s12, s0
s_mov_b32 s13, s1
s_branch go
other:
s_mov_b32 s12, s4
s_mov_b32 s13, s5
go:
s_mov_b32 s14, -1
s_mov_b32 s15, 0x31c16000
buffer_store_dword v0, off, s[12:15], 0
s_endpgm
"""
    res = ScratchRig(src).run()
    assert res.refusal is not None and res.refusal.code == "scratch.ambiguous_base"


# ---- stream-level refusals and the module key ----------------------------------------------


@pytest.mark.parametrize(
    "kw,code",
    [
        ({"tmpring": False}, "scratch.no_tmpring"),
        ({"wavesize_kib": 0}, "scratch.size_zero"),
        ({"waves": 0}, "scratch.size_zero"),
        ({"wavesize_kib": 257}, "scratch.too_large"),
    ],
)
def test_stream_refusals_leave_memory_untouched(kw, code):
    r = ScratchRig("v_mov_b32 v2, 1\n" + STORE_OUT)
    before = r.cap.read(r.out, r.out_bytes)
    res = r.run(**kw)
    assert res.refusal is not None and res.refusal.code == code
    assert r.cap.read(r.out, r.out_bytes) == before


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_256_kib_per_wave_is_carried_out():
    r = ScratchRig(
        "v_mov_b32 v4, 0x1ffc\nscratch_store_dword v4, v0, off\n"
        "scratch_load_dword v2, v4, off\ns_waitcnt vmcnt(0)\n" + STORE_OUT
    )
    res = r.run(wavesize_kib=256)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), np.arange(32))


def test_wavesize_is_part_of_the_module_key():
    cache = {}
    src = (
        "v_mov_b32 v4, 0\nscratch_store_dword v4, v0, off\nscratch_load_dword v2, v4, off\n"
        "s_waitcnt vmcnt(0)\n" + STORE_OUT
    )
    r = ScratchRig(src)
    res1 = r.run(cache=cache, wavesize_kib=1)
    # replay re-runs every dispatch submitted so far: use one capture per dispatch
    r2 = ScratchRig(src)
    res2 = r2.run(cache=cache, wavesize_kib=2)
    r3 = ScratchRig(src)
    res3 = r3.run(cache=cache, wavesize_kib=2)
    assert res1.landed and res2.landed and res3.landed
    assert not res1.stats["module_cache_hit"] and not res2.stats["module_cache_hit"]
    assert res3.stats["module_cache_hit"]
    modules = [k for k in cache if k[0] != "program"]
    assert len(modules) == 2
    # (the two keys differ where the wave's scratch bytes are, and only there)
    a, b = modules
    diff = {tuple(sorted((x, y))) for x, y in zip(a, b) if x != y}
    assert len(a) == len(b) and diff == {(1024, 2048)}, diff
