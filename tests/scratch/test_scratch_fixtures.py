"""Real compiler output with scratch: ACO shaders (flat scratch via s_setreg FLAT_SCR_LO/HI),
RADV's LLVM path (a V# built from s0:s1 with ADD_TID_ENABLE), and clang-19 HSA kernels (MUBUF
V# in s[0:3] bumped by the offset register / flat scratch init), in wave and lane mode.

The clang-19 matrix (private_array, spill, call, private_bytes x gfx1030/gfx1010 x O0/O2 x
w32/w64 x MUBUF/flat x wave/lane) is compared with PoCL/NumPy in tests/test_fixture_kernels.py;
here we add, for those kernels, that no scratch address ever appears among windows or write
spans.
"""

import json
import pathlib

import numpy as np
import pytest
from reference import cases as C
from references import FIX, ROOT, overlaps, ref_scratch_game, run_scratch_array, run_scratch_game

import wavelift

MODES = ("wave", "lane")


def _landed(r):
    assert r.landed, r.refusal


ACO_ARRAY = [
    ("gfx1030", "aco/scratch_array-w32"),
    ("gfx1030", "aco/scratch_array-w64"),
    ("gfx1010", "aco/scratch_array-w64"),
    ("gfx1030", "radv-llvm/scratch_array-w32"),
    ("gfx1030", "radv-llvm/scratch_array-w64"),
]
ACO_GAME = [
    ("gfx1030", "aco/scratch_game-w32"),
    ("gfx1030", "aco/scratch_game-w64"),
    ("gfx1010", "aco/scratch_game-w64"),
]


def _no_scratch_in_windows(r, sh):
    rec = sh.last_launch
    base = rec.scratch_address
    size = rec.extra["scratch_wave_bytes"] * rec.extra["scratch_waves"]
    assert base and size, "the fixture should use scratch"
    for w in r.windows:
        assert not overlaps(w.address, w.size, base, size), (w, hex(base))
    for a, n in r.write_spans:
        assert not overlaps(a, n, base, size), (hex(a), n)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target,name", ACO_ARRAY, ids=[f"{t}-{n}" for t, n in ACO_ARRAY])
def test_scratch_array(target, name, mode):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    r, sh, got, want = run_scratch_array(dev, FIX / target / f"{name}.json", groups=3)
    _landed(r)
    assert sh.scratch_enabled
    np.testing.assert_array_equal(got, want)
    _no_scratch_in_windows(r, sh)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target,name", ACO_GAME, ids=[f"{t}-{n}" for t, n in ACO_GAME])
def test_scratch_game(target, name, mode):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    r, sh, got, (seeds, steps) = run_scratch_game(dev, FIX / target / f"{name}.json", (3, 2))
    _landed(r)
    np.testing.assert_array_equal(got, ref_scratch_game(seeds, steps))
    _no_scratch_in_windows(r, sh)


def test_radv_llvm_path_is_scratch_by_the_static_test():
    """RADV's LLVM path reaches scratch with buffer_* through a V# built from s0:s1; the static
    test names those accesses scratch (and nothing else)."""
    from wavelift.frontend import scratch as S
    from wavelift.frontend.program import translate

    listing = (FIX / "gfx1030" / "radv-llvm" / "scratch_array-w64.s").read_text()
    assert "buffer_store_dword" in listing and "scratch_" not in listing
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    sh = dev.load_aco_shader(FIX / "gfx1030" / "radv-llvm" / "scratch_array-w64.json")
    data = dev.upload(np.array([7, 3] + [0] * 64, np.uint32))
    r = sh.launch(groups=(1, 1, 1), buffers={(0, 0): data})
    _landed(r)
    a = S.abi(r.config)
    assert a.enabled and a.ring_root
    prog = translate(sh.code, "gfx1030", 64, r.config.program_address, scratch_abi=a)
    mubuf = [i for i in prog.instructions if i.encoding == "MUBUF"]
    scr = [i for i in mubuf if i.offset in prog.scratch.mubuf_scratch]
    buf = [i for i in mubuf if i.offset not in prog.scratch.mubuf_scratch]
    assert scr and buf  # the private array, and the SSBO (data.result)
    loaded = {i.fields["sdata"] + k for i in prog.instructions if i.encoding == "SMEM" for k in range(4)}
    assert all(i.fields["srsrc"] * 4 in loaded for i in buf)  # V# from a descriptor set
    assert not any(i.fields["srsrc"] * 4 in loaded for i in scr)  # V# built from s0:s1
    assert {0, 1} <= set(prog.scratch.tracer_skip)
    # the same program without scratch roots: no access is scratch
    prog = translate(sh.code, "gfx1030", 64, r.config.program_address, scratch_abi=None)
    assert not prog.scratch.mubuf_scratch


def test_aco_roots_come_from_flat_scratch_writes():
    from wavelift.frontend import scratch as S
    from wavelift.frontend.program import translate

    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    sh = dev.load_aco_shader(FIX / "gfx1030" / "aco" / "scratch_array-w32.json")
    data = dev.upload(np.array([7, 3] + [0] * 64, np.uint32))
    r = sh.launch(groups=(1, 1, 1), buffers={(0, 0): data})
    _landed(r)
    facts = S.analyze(*_blocks(sh.code, r.config), r.config.program_address)
    assert facts.flat_scr_ent, "ACO writes FLAT_SCR_LO/HI"
    plan = S.plan(
        facts,
        S.ScratchABI(enabled=True, ring_root=False, offset_reg=None, user_sgprs=len(r.config.user_sgprs)),
    )
    assert {0, 1} <= set(plan.tracer_skip)  # found from the s_setreg writes alone
    del translate


def _blocks(code, config):
    from wavelift.frontend import flow

    instrs, leaders = flow.discover(code, config.target, config.wave_size == 64, config.program_address)
    return instrs, flow.blocks(instrs, leaders)


# ---- clang-19 kernels: windows and write spans never hold scratch ---------------------------

MANIFEST = json.loads((FIX / "manifest.json").read_text())
CLANG = [
    b
    for b in MANIFEST["binaries"]
    if b["kind"] == "clang"
    and b["target"] == "gfx1030"
    and pathlib.Path(b["path"]).stem.startswith(("stack-", "basic-"))
]


@pytest.mark.parametrize(
    "path", [b["path"] for b in CLANG], ids=[pathlib.Path(b["path"]).stem for b in CLANG]
)
def test_clang_scratch_never_windowed(path):
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    co = dev.load_code_object(str(ROOT / path))
    name = "call" if "stack" in path else "private_array"
    k = co.kernel(name)
    n = 128
    inp = dev.upload(np.arange(n, dtype=np.int32) * 7 + 3, name="in")
    out = dev.alloc(4 * n, name="out")
    args = [inp, out] + ([np.uint32(5)] if name == "private_array" else [])
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
    _landed(r)  # `call`'s callee lies before the kernel's entry (decision 0010)
    if name == "call":
        want = C._ref_call(None, {"in": np.arange(n, dtype=np.int32) * 7 + 3})["out"]
        np.testing.assert_array_equal(dev.download(out, np.int32), want)
    rec = dev.launches[-1]
    base = rec.scratch_address
    assert base and rec.scratch is not None and rec.scratch.total
    for w in r.windows:
        assert not overlaps(w.address, w.size, base, rec.scratch.total), (w, hex(base))
    for a, m in r.write_spans:
        assert not overlaps(a, m, base, rec.scratch.total)
    assert any(overlaps(a, m, out.address, 4 * n) for a, m in r.write_spans)


# ---- game-shaped dispatches ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(240, 135), (32400, 1)], ids=["240x135", "32400"])
def test_game_shaped_dispatch(shape):
    """The two full-screen passes of D954: 240x135 groups and 32400 groups of 8x8 threads, each
    with a dynamically indexed private array in scratch (ACO scratch_game, wave64)."""
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    r, sh, got, (seeds, steps) = run_scratch_game(
        dev, FIX / "gfx1030" / "aco" / "scratch_game-w64.json", shape, steps=4
    )
    _landed(r)
    np.testing.assert_array_equal(got, ref_scratch_game(seeds, steps))


def test_push_constant_with_bit_23_in_s3_is_not_taken_for_a_scratch_v_sharp():
    """RADV's scratch_game capture with its first push constant (width, inlined as USER_DATA_3)
    set to 0x00800010: s3 then has ADD_TID_ENABLE's bit 23, and the scratch ABI, decided from
    that value, took s0..s3 for a whole scratch V# and hid the descriptor pointer in s2 from the
    tracer (refused ``escape`` at the first descriptor load).  Decided from the program, it
    lands: row 0 (i = x) is the reference; every other row's i = y * width + x is outside both
    buffers (robust buffer access: loads 0, stores dropped)."""
    from testpaths import FIXTURES, set_sh_register

    from wavelift import Capture, replay

    cap = Capture.load(str(FIXTURES / "captures" / "radv-scratch_game-chained-w64.wlcap"))
    assert set_sh_register(cap, "COMPUTE_USER_DATA_3", 0x00800010, only_if=16) == 1
    seeds = np.fromfile(FIXTURES / "radv/scratch_game-chained-w64/inputs/seeds.bin", np.uint32)
    (res,) = replay(cap)
    assert res.landed, res.refusal
    out = np.frombuffer(cap.memory.read(0xFFFF800100006000, 1024), np.uint32)
    want = np.zeros(256, np.uint32)
    want[:16] = ref_scratch_game(seeds[:16], 25)
    np.testing.assert_array_equal(out, want)
