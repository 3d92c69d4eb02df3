"""GFX11 scratch through real PM4 streams (hand-assembled gfx1100 programs) and real compiler
output: architected flat scratch (COMPUTE_DISPATCH_SCRATCH_BASE, no offset SGPR), TMPRING_SIZE
WAVESIZE in 256-byte units (D954), the stream refusals, and no scratch address among windows or
write spans for the clang and ACO gfx1100 fixtures (decisions 0008, 0023)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "execute"))
sys.path.insert(0, str(TESTS / "scratch"))

from asm import HAVE_MC, assemble  # noqa: E402
from references import FIX, ref_scratch_game, run_scratch_array, run_scratch_game  # noqa: E402
from test_scratch_fixtures import _no_scratch_in_windows  # noqa: E402

import wavelift  # noqa: E402
from wavelift import Capture, pm4, replay  # noqa: E402

SCRATCH_BASE = 0x7F00_0000_0000
MODES = ("wave", "lane")

STORE_OUT = """
v_lshlrev_b32 v9, 2, v0
s_lshl_b32 s9, s2, 8
v_add_nc_u32 v9, s9, v9
global_store_b32 v9, v2, s[0:1]
s_endpgm
"""


class Rig11:
    """s[0:1] output pointer, s2 workgroup id x; scratch through scratch_* only."""

    def __init__(self, src: str, wave64: bool = False, out_bytes: int = 4096):
        self.wave64 = wave64
        self.cap = Capture(target="gfx1100")
        fill = np.full(out_bytes // 4, 0x5A5A5A5A, np.uint32).tobytes()
        self.out = self.cap.alloc(out_bytes, data=fill, name="out")
        self.out_bytes = out_bytes
        code = assemble(src, wave64, mcpu="gfx1100")
        self.code = self.cap.alloc(len(code) + 256, data=code + b"\0" * 256, name="code", align=256)

    def run(self, mode="wave", wavesize=4, waves=8, groups=1, scratch=True, tmpring=True, base=True):
        lanes = 64 if self.wave64 else 32
        r = {
            "COMPUTE_PGM_LO": (self.code >> 8) & 0xFFFFFFFF,
            "COMPUTE_PGM_HI": self.code >> 40,
            "COMPUTE_PGM_RSRC1": (0xF0 << 12) | (1 << 21),
            "COMPUTE_PGM_RSRC2": (2 << 1) | (1 << 7) | (1 if scratch else 0),
            "COMPUTE_NUM_THREAD_X": lanes,
            "COMPUTE_NUM_THREAD_Y": 1,
            "COMPUTE_NUM_THREAD_Z": 1,
            "COMPUTE_USER_DATA_0": self.out & 0xFFFFFFFF,
            "COMPUTE_USER_DATA_1": self.out >> 32,
        }
        if tmpring:
            r["COMPUTE_TMPRING_SIZE"] = (wavesize << 12) | waves
        if base:
            r["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] = (SCRATCH_BASE >> 8) & 0xFFFFFFFF
            r["COMPUTE_DISPATCH_SCRATCH_BASE_HI"] = SCRATCH_BASE >> 40
        init = 1 | (1 << 2) | (0 if self.wave64 else 1 << 15)
        self.cap.submit(pm4.set_sh_regs(r) + pm4.dispatch_direct(groups, 1, 1, initiator=init))
        return replay(self.cap, backend="numpy", mode=mode)[-1]

    def out_words(self, n):
        return np.frombuffer(self.cap.read(self.out, 4 * n), np.uint32).copy()


def _at(offset: int) -> str:
    return (
        f"v_mov_b32 v4, {offset}\nv_add_nc_u32 v1, 9, v0\nscratch_store_b32 v4, v1, off\n"
        "scratch_load_b32 v2, v4, off\ns_waitcnt vmcnt(0)\n" + STORE_OUT
    )


needs_mc = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")


@needs_mc
@pytest.mark.parametrize("mode", MODES)
def test_wavesize_counts_256_byte_units(mode):
    """WAVESIZE 4 is 1 KiB per wave: 32 bytes per lane in wave32, so the lane's dword at 28 is in
    range and the one at 32 escapes (in 1 KiB units, as GFX10 counts, it would be in range)."""
    r = Rig11(_at(28))
    res = r.run(mode=mode, wavesize=4)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), 9 + np.arange(32))
    r = Rig11(_at(32))
    res = r.run(mode=mode, wavesize=4)
    assert not res.landed and res.refusal.code == "escape"
    assert res.escapes[0].kind == "scratch"
    assert (r.out_words(r.out_bytes // 4) == 0x5A5A5A5A).all()


@needs_mc
def test_scratch_is_private_per_wave_and_starts_zero():
    src = """
v_mov_b32 v4, 0
scratch_load_b32 v2, v4, off
s_waitcnt vmcnt(0)
v_mov_b32 v5, s2
scratch_store_b32 v4, v5, off
scratch_load_b32 v6, v4, off
s_waitcnt vmcnt(0)
v_add_nc_u32 v2, v2, v6
""" + STORE_OUT.replace("s_lshl_b32 s9, s2, 8", "s_lshl_b32 s9, s2, 7")
    r = Rig11(src)
    res = r.run(groups=2)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(64), np.repeat([0, 1], 32))


@needs_mc
@pytest.mark.parametrize(
    "kw,code",
    [
        ({"base": False}, "scratch.no_base"),
        ({"tmpring": False}, "scratch.no_tmpring"),
        ({"wavesize": 0}, "scratch.size_zero"),
        ({"waves": 0}, "scratch.size_zero"),
        ({"wavesize": 1025}, "scratch.too_large"),  # 1025 x 256 bytes > 256 KiB per wave
    ],
)
def test_stream_refusals_leave_memory_untouched(kw, code):
    r = Rig11("v_mov_b32 v2, 1\n" + STORE_OUT)
    before = r.cap.read(r.out, r.out_bytes)
    res = r.run(**kw)
    assert res.refusal is not None and res.refusal.code == code
    assert r.cap.read(r.out, r.out_bytes) == before


@needs_mc
def test_256_kib_per_wave_is_carried_out():
    """WAVESIZE 1024 (a field wider than GFX10's: 256 KiB per wave) -> 8 KiB per lane."""
    r = Rig11(_at(0x1FFC))
    res = r.run(wavesize=1024)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.out_words(32), 9 + np.arange(32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["scratch_array-w32", "scratch_array-w64"])
def test_aco_scratch_array_never_in_windows(name, mode):
    dev = wavelift.Device("gfx1100", backend="numpy", mode=mode)
    r, sh, got, want = run_scratch_array(dev, FIX / "gfx1100" / "aco" / f"{name}.json", groups=3)
    assert r.landed, r.refusal
    assert sh.scratch_enabled
    np.testing.assert_array_equal(got, want)
    _no_scratch_in_windows(r, sh)


@pytest.mark.parametrize("name", ["scratch_game-w32", "scratch_game-w64"])
def test_aco_scratch_game_never_in_windows(name):
    dev = wavelift.Device("gfx1100", backend="numpy", mode="wave")
    r, sh, got, (seeds, steps) = run_scratch_game(dev, FIX / "gfx1100" / "aco" / f"{name}.json", (3, 2))
    assert r.landed, r.refusal
    np.testing.assert_array_equal(got, ref_scratch_game(seeds, steps))
    _no_scratch_in_windows(r, sh)


@pytest.mark.parametrize("stem", ["basic-O2-w32", "basic-O0-w64", "stack-O2-w32", "stack-O0-w64"])
def test_clang_scratch_never_in_windows(stem):
    """clang-19's gfx1100 private_array and call kernels (the shapes of the gfx1030 test in
    tests/scratch/test_scratch_fixtures.py): scratch only inside the module, WAVESIZE in
    256-byte units."""
    from reference import cases as C

    dev = wavelift.Device("gfx1100", backend="numpy", mode="wave")
    co = dev.load_code_object(str(FIX / "gfx1100" / f"{stem}.hsaco"))
    name = "call" if "stack" in stem else "private_array"
    n = 128
    inp = dev.upload(np.arange(n, dtype=np.int32) * 7 + 3, name="in")
    out = dev.alloc(4 * n, name="out")
    args = [inp, out] + ([np.uint32(5)] if name == "private_array" else [])
    r = co.kernel(name).launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
    assert r.landed, r.refusal
    if name == "call":
        want = C._ref_call(None, {"in": np.arange(n, dtype=np.int32) * 7 + 3})["out"]
        np.testing.assert_array_equal(dev.download(out, np.int32), want)
    rec = dev.launches[-1]
    base, size = rec.scratch_address, rec.scratch.total
    assert base and size, f"{stem} {name} should use scratch"
    assert rec.registers["COMPUTE_TMPRING_SIZE"] >> 12 == rec.scratch.wavesize
    assert rec.scratch.wave_bytes == rec.scratch.wavesize * 256
    for w in r.windows:
        assert not (w.address < base + size and base < w.address + w.size), (stem, w)
    for a, m in r.write_spans:
        assert not (a < base + size and base < a + m), (stem, hex(a))
    assert any(a < out.address + 4 * n and out.address < a + m for a, m in r.write_spans)
