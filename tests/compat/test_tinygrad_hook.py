"""wavelift.compat.tinygrad.run_asm: tinygrad's own kernels (tests/fixtures/tinygrad, built by
tinygrad 0.14.0 for gfx1030 and gfx1100) against tinygrad's CPU device on the same inputs, and
the hook's contract (escapes, code reuse at one address, the descriptor, bad calls)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.compat import bounds, harness
from wavelift.compat import tinygrad as tg


def _cases():
    out = []
    for target in ("gfx1030", "gfx1100"):
        for p in harness.fixtures(target):
            out.append(pytest.param(p, id=f"{target}-{p.stem}"))
    return out


def _why():
    r = tg.last_result()
    return getattr(r, "refusal", r)


@pytest.mark.parametrize("path", _cases())
def test_op_matches_tinygrad_cpu(path):
    fx = harness.load(path)
    run = harness.replay(fx, tg.run_asm)
    assert run.codes and all(c == tg.OK for c in run.codes), _why()
    assert len(run.codes) == sum(s[0] == "kernel" for s in fx.meta["steps"])
    problem = bounds.check(fx.name, run.output, fx.expected(), fx.inputs())
    assert problem is None, problem


def test_fixtures_cover_the_op_list():
    for target in ("gfx1030", "gfx1100"):
        names = {p.stem for p in harness.fixtures(target)}
        for need in ("matmul", "conv2d", "reduce_sum_max", "softmax", "exp_log", "sin_cos", "half_matmul"):
            assert need in names, (target, need)
        for need in ("int64_arith", "gather", "sort"):
            assert need in names, (target, need)


def test_escape_is_refused_and_writes_nothing():
    fx = harness.load(harness.FIXTURES / "gfx1030" / "matmul.npz")
    out = fx.meta["out"]
    run = harness.replay(fx, tg.run_asm, drop=frozenset({out}))
    assert run.codes == [tg.REFUSED]
    assert _why().code == "escape"
    assert not run.output.view(np.uint8).any()  # (zeros, as allocated)


def test_reads_outside_the_ranges_land_nothing():
    fx = harness.load(harness.FIXTURES / "gfx1030" / "matmul.npz")
    step = next(s for s in fx.meta["steps"] if s[0] == "kernel")
    an_input = next(b for b in step[2] if b != fx.meta["out"])
    run = harness.replay(fx, tg.run_asm, drop=frozenset({an_input}))
    assert run.codes == [tg.REFUSED] and _why().code == "escape"
    assert not run.output.view(np.uint8).any()
    kept = run.blocks[next(b for b in step[2] if b not in (an_input, fx.meta["out"]))]
    assert kept.view.any()  # the other input is still the bytes copied in


def test_kernels_reusing_one_code_address():
    names = ("matmul", "exp_log", "reduce_int")
    fxs = [harness.load(harness.FIXTURES / "gfx1030" / f"{n}.npz") for n in names]
    size = max(fx.arrays[k].size for fx in fxs for k in fx.arrays if k.startswith("image_"))
    code = harness.HostBlock(-(-size // harness.ALIGN) * harness.ALIGN)
    for fx in fxs + fxs[:1]:  # the first again: its module, not the last one's
        run = harness.replay(fx, tg.run_asm, code=code)
        assert run.codes == [tg.OK], _why()
        assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None, fx.name


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
def test_descriptor_found_near_the_entry(target):
    fx = harness.load(harness.FIXTURES / target / "matmul.npz")
    kern = fx.meta["kernels"][0]
    img = harness.HostBlock(harness.ALIGN * 4)
    image = fx.arrays["image_0"]
    img.view[: image.size] = image
    kd = bytes(image[kern["rodata"] : kern["rodata"] + 64])
    entry = int.from_bytes(kd[16:24], "little", signed=True)
    lib = img.address + kern["rodata"] + entry
    rsrc2 = int.from_bytes(kd[52:56], "little") | (3 << 15)  # the runtime adds the LDS size
    assert tg._find_descriptor(img.view, img.address, lib, rsrc2) == kd
    assert tg._find_descriptor(img.view, img.address, lib, rsrc2 ^ 0x80) is None  # another RSRC2
    assert tg._find_descriptor(img.view, img.address, lib + 256, rsrc2) is None  # another entry
    run = harness.replay(fx, tg.run_asm, pass_rsrc1=False)
    assert run.codes == [tg.OK], _why()
    assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None


def test_user_data_none_puts_the_kernarg_pointer_in_s0_s1():
    # (gfx1100: architected flat scratch, no private segment V# before the kernarg pointer)
    fx = harness.load(harness.FIXTURES / "gfx1100" / "matmul.npz")
    kern = fx.meta["kernels"][0]
    kcp = int.from_bytes(fx.arrays["image_0"][kern["rodata"] + 56 : kern["rodata"] + 58].tobytes(), "little")
    assert kcp & 3 == 0  # (no scratch V#, no dispatch pointer: s[0:1] is the kernarg pointer)
    run = harness.replay(fx, tg.run_asm, pass_user=False)
    assert run.codes == [tg.OK], _why()
    assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None


@pytest.mark.parametrize("arch", ["cdna", "gfx90a", "gfx9000"])  # rdna4 (gfx1201) runs: decision 0027
def test_an_arch_wavelift_does_not_run_is_a_bad_call(arch):
    buf = harness.HostBlock(4096)
    rc = tg.run_asm(
        buf.address, 4096, 1, 1, 1, 32, 1, 1, buf.address, 0x19C, 0, arch, [], ranges=[(buf.address, 4096)]
    )
    assert rc == tg.BAD_CALL
    assert tg.last_result().code == "dispatch.bad_target"
    assert not buf.view.any()


def test_code_outside_the_ranges_is_a_bad_call():
    buf, other = harness.HostBlock(4096), harness.HostBlock(4096)
    rc = tg.run_asm(
        buf.address,
        4096,
        1,
        1,
        1,
        32,
        1,
        1,
        buf.address,
        0x19C,
        0,
        "gfx1030",
        [],
        ranges=[(other.address, 4096)],
    )
    assert rc == tg.BAD_CALL and tg.last_result().code == "program.bad_address"


def test_empty_grid_is_a_bad_call():
    buf = harness.HostBlock(4096)
    rc = tg.run_asm(
        buf.address,
        4096,
        0,
        1,
        1,
        32,
        1,
        1,
        buf.address,
        0x19C,
        0,
        "gfx1030",
        [],
        ranges=[(buf.address, 4096)],
    )
    assert rc == tg.BAD_CALL


def test_overlapping_ranges_are_merged_touching_ones_kept_apart():
    assert tg._merged([(100, 50), (0, 10), (140, 20), (10, 5), (300, 0)]) == [(0, 10), (10, 15), (100, 160)]


@pytest.mark.slow
def test_fixtures_rebuild_with_tinygrad(tmp_path):
    """tinygrad compiles the kernels again (its AMD LLVM compiler with Debian's libLLVM-19) and
    the hook runs them: the committed fixtures are what build.py makes."""
    pytest.importorskip("tinygrad")
    llvm = "/usr/lib/llvm-19/bin"
    if not os.path.exists(os.path.join(llvm, "clang")):
        pytest.skip("no LLVM 19 clang for tinygrad's CPU device")
    script = harness.FIXTURES / "build.py"
    copy = tmp_path / "build.py"
    shutil.copy(script, copy)
    env = dict(os.environ, PATH=f"{llvm}:{os.environ.get('PATH', '')}", TG_OPS="matmul,int64_arith")
    subprocess.run(
        [sys.executable, str(copy), "gfx1030"], env=env, check=True, capture_output=True, timeout=600
    )
    for name in ("matmul", "int64_arith"):
        fx = harness.load(tmp_path / "gfx1030" / f"{name}.npz")
        run = harness.replay(fx, tg.run_asm)
        assert run.codes == [tg.OK], _why()
        assert bounds.check(name, run.output, fx.expected(), fx.inputs()) is None


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
@pytest.mark.parametrize("name", ["matmul", "softmax", "sort", "int64_arith"])
def test_without_ranges_or_rsrc1(target, name):
    """As tinygrad's instruction tests call the emulator: positional arguments only; the memory is
    the host bytes at the pointers handed over (wavelift.compat.tinygrad._near_pointers)."""
    fx = harness.load(harness.FIXTURES / target / f"{name}.npz")
    run = harness.replay(fx, tg.run_asm, extras=False)
    assert run.codes and all(c == tg.OK for c in run.codes), _why()
    assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None


@pytest.mark.parametrize("name", ["matmul", "softmax"])
def test_unaligned_code_runs_from_an_aligned_copy(name):
    fx = harness.load(harness.FIXTURES / "gfx1100" / f"{name}.npz")
    run = harness.replay(fx, tg.run_asm, code_shift=0x30)
    assert run.codes and all(c == tg.OK for c in run.codes), _why()
    assert tg.last_result().config.program_address == tg.UNALIGNED_CODE
    assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None


def test_cut_makes_points_boundaries():
    assert tg._cut([(0, 100), (200, 300)], [50, 0, 100, 250, 250]) == [
        (0, 50),
        (50, 100),
        (200, 250),
        (250, 300),
    ]


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
def test_host_memory_below_4gib(monkeypatch, target):
    """Buffers, kernargs and code below 4 GiB (a non-PIE Python's heap is there; seen on the GPU
    machine, where every hook call escaped): pointers whose high word is 0 are still pointers."""
    monkeypatch.setattr(harness, "LOW", [0x3000_0000])
    fx = harness.load(harness.FIXTURES / target / "matmul.npz")
    run = harness.replay(fx, tg.run_asm)
    assert all(b.address < 1 << 32 for b in run.blocks.values())
    assert run.codes == [tg.OK], _why()
    np.testing.assert_array_equal(run.output, harness.replay(fx, tg.run_asm).output)


def test_kernargs_are_a_window_of_their_own():
    """The kernargs sit in a larger range (tinygrad's kernarg ring): only they are windowed."""
    fx = harness.load(harness.FIXTURES / "gfx1100" / "matmul.npz")
    run = harness.replay(fx, tg.run_asm)
    assert run.codes == [tg.OK], _why()
    res = tg.last_result()
    args = res.config.user_sgprs[0] | res.config.user_sgprs[1] << 32
    kernarg_size = fx.meta["kernels"][0]["kernarg_size"]
    (w,) = [w for w in res.windows if w.address == args]
    assert w.size == -(-(kernarg_size + tg.DISPATCH_PACKET) // 64) * 64 < 1 << 16


SCRATCH_KERNEL = """
    s_load_b64 s[2:3], s[0:1], 0x0
    v_add_nc_u32 v1, 1000, v0
    v_mov_b32 v4, OFFSET
    scratch_store_b32 v4, v1, off
    s_waitcnt vmcnt(0)
    scratch_load_b32 v2, v4, off
    s_waitcnt vmcnt(0) lgkmcnt(0)
    v_lshlrev_b32 v3, 2, v0
    global_store_b32 v3, v2, s[2:3]
    s_endpgm
"""


@pytest.mark.parametrize("offset, landed", [(0, True), (1 << 20, False)])
def test_scratch_size_without_scratch_en(offset, landed):
    """As tinygrad's instruction tests call it: RSRC2 0x19c (no SCRATCH_EN), 64 KiB a lane, code
    not aligned, no ranges: the lanes get scratch (at most wavelift's bound: past it, an escape)."""
    from tests.execute.asm import HAVE_MC, assemble

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    code = assemble(SCRATCH_KERNEL.replace("OFFSET", str(256 + offset)), mcpu="gfx1100")
    buf = harness.HostBlock(4096)
    out = harness.HostBlock(4096)
    args = harness.HostBlock(4096)
    buf.view[0x10 : 0x10 + len(code)] = np.frombuffer(code, np.uint8)
    args.view[:8] = np.frombuffer(np.uint64(out.address).tobytes(), np.uint8)
    rc = tg.run_asm(buf.address + 0x10, len(code), 1, 1, 1, 32, 1, 1, args.address, 0x19C, 0x10000)
    got = out.view[:128].view(np.uint32)
    if landed:
        assert rc == tg.OK, _why()
        assert (got == 1000 + np.arange(32)).all()
    else:
        assert rc == tg.REFUSED and _why().code == "escape"
        assert not got.any()
