"""The tinygrad hook's warm path over new buffers (decision 0045, amendment h100): what a call
over fresh host buffers reuses from earlier calls with the same code -- the config of the same
registers but the user SGPRs (_config), the merged and cut spans of the same ranges (_SPANS,
_CUTS) -- is what the full computation gives for *this* call: other buffer sizes, other
kernargs and other user SGPRs are never answered from an earlier call's.  Expected values from
tinygrad's CPU device (the fixtures) or from build_config itself, never from the cached path."""

from __future__ import annotations

import ctypes
import random

import pytest

from tests.compat import bounds, harness
from wavelift.compat import tinygrad as tg
from wavelift.dispatch.setup import build_config
from wavelift.errors import Refusal, Refused


@pytest.fixture(autouse=True)
def _fresh_caches():
    for kept in (tg._PLANS, tg._MEMORIES, tg._CONFIGS, tg._CONFIG_SHAPES, tg._SPANS, tg._CUTS):
        kept.clear()
    yield


def _fixture(name: str) -> harness.Fixture:
    return harness.load(next(p for p in harness.fixtures("gfx1100") if p.stem == name))


def _built(target, pc, dims, block, rsrc1, rsrc2, rsrc3, scratch, wave, user):
    """build_config of the registers the hook writes (or its refusal): the independent answer."""
    regs, initiator = tg._registers(target, pc, *dims, *block, rsrc1, rsrc2, rsrc3, scratch, wave, user)
    try:
        return build_config(regs, target, dims=dims, initiator=initiator)
    except Refused as r:
        return r.refusal


def test_config_over_other_user_sgprs_is_build_configs():
    """Many calls with the same registers but the user SGPRs (the kernarg and scratch addresses
    of new buffers), and some with other registers: each config equal to build_config's for its
    own values (a config kept by the other registers alone, or one whose user SGPRs were not
    put in, fails here); a refused one (a 2048-thread workgroup) refused the same way."""
    rng = random.Random(7)
    shapes = []
    for rsrc2 in (0x8C, 0x19C, 0x19D, 0x9C | 1 << 15, 0x20, 0x3E):  # (0x3E: 31 user SGPRs)
        for dims, block in (
            ((4, 1, 1), (64, 1, 1)),
            ((1, 1, 1), (32, 1, 1)),
            ((2, 3, 1), (8, 8, 1)),
            ((1, 1, 1), (2048, 1, 1)),
        ):
            shapes.append(("gfx1100", 0x7F0000001000, dims, block, tg.DEFAULT_RSRC1, rsrc2, 0, 256, 32))
    shapes.append(("gfx1030", 0x7F0000002000, (3, 1, 1), (64, 1, 1), tg.DEFAULT_RSRC1, 0x19C, 0, 0, 64))
    for _ in range(6):
        for shape in shapes:
            n_user = (shape[5] >> 1) & 0x1F
            user = tuple(rng.getrandbits(32) for _ in range(n_user))
            got = tg._config(*shape, list(user))
            want = _built(*shape, user)
            assert got == want
            if not isinstance(want, Refusal):
                assert got.user_sgprs == user
    assert any(isinstance(_built(*s, (0,) * 16), Refusal) for s in shapes)  # (2048 threads)


def _sized(monkeypatch, pad: list):
    """harness.HostBlock with ``pad[0]`` bytes more than asked: a replay's buffers other sizes
    (other ranges, other relative placement) than the last one's."""
    real = harness.HostBlock
    monkeypatch.setattr(harness, "HostBlock", lambda size: real(size + pad[0]))


@pytest.mark.parametrize("name", ["sort", "softmax", "matmul", "gather"])
def test_fresh_buffers_of_other_sizes_land_the_right_results(monkeypatch, name):
    """The same loaded code replayed over new buffers of other sizes each time (new kernargs,
    new ranges): tinygrad's CPU device's results each time, and every kept span and cut the
    uncached functions' answer for its key."""
    fx = _fixture(name)
    pad = [0]
    _sized(monkeypatch, pad)
    keep = []
    calls: list = []

    def hook(*a, **k):
        calls.append(a)
        return tg.run_asm(*a, **k)

    for pad[0] in (0, 4096, 64, 1 << 16, 0):
        run = harness.replay(fx, hook, keep_code=True)
        keep.append(run)  # (alive: the next replay's buffers are at other addresses)
        assert all(c == tg.OK for c in run.codes), (name, pad[0], run.codes)
        assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None, (name, pad[0])
        # (the last call's own user SGPRs: its kernarg pointer, not an earlier call's)
        user = tuple(calls[-1][12])
        got = tg.last_result().config.user_sgprs
        assert got[: len(user)] == user and calls[-1][8] == user[-2] | user[-1] << 32
    assert tg._SPANS and tg._CUTS
    for rkey, spans in tg._SPANS.items():
        assert spans == tuple(tg._merged(rkey))
    for (rkey, *cuts), cut in tg._CUTS.items():
        assert cut == tuple(tg._cut(tg._merged(rkey), cuts))


def test_an_escape_over_fresh_buffers_is_refused_on_the_warm_path():
    """where_arange landed once; replayed over new buffers with its output buffer left out of
    the ranges (warm caches: config shape, code stamp, translation, module): the store escapes,
    the call is refused and the output buffer is not written."""
    fx = _fixture("where_arange")
    first = harness.replay(fx, tg.run_asm, keep_code=True)
    assert first.codes == [tg.OK]
    out = next(int(b) for b in fx.meta["buffers"] if int(b) == 40)
    run = harness.replay(fx, tg.run_asm, keep_code=True, drop=frozenset({out}))
    assert run.codes == [tg.REFUSED]
    assert tg.last_result().refusal.code == "escape"
    init = fx.arrays.get(f"init_{out}")
    want = bytes(run.blocks[out].size) if init is None else init.tobytes().ljust(run.blocks[out].size, b"\0")
    assert run.blocks[out].view.tobytes() == want  # (as the replay set it: nothing landed)
    # and over new buffers with every range: it lands again
    again = harness.replay(fx, tg.run_asm, keep_code=True)
    assert again.codes == [tg.OK]
    assert bounds.check(fx.name, again.output, fx.expected(), fx.inputs()) is None


def test_a_config_refusal_is_refused_again_from_the_kept_shape():
    """A dispatch build_config refuses (a 2048-thread workgroup): BAD_CALL with the same refusal
    on the first call and on later ones over other kernargs (other user SGPRs: answered from the
    kept shape)."""
    code = harness.HostBlock(4096)
    ctypes.memmove(code.address, bytes.fromhex("0000b0bf") * 4, 16)  # (s_endpgm)
    codes, kept = [], []
    for _ in range(3):
        args = harness.HostBlock(256)
        kept.append(args)  # (alive: each call's kernargs at another address)
        ranges = [(code.address, code.size), (args.address, args.size)]
        rc = tg.run_asm(
            code.address, code.size, 1, 1, 1, 2048, 1, 1, args.address, 0x4, 0, "rdna3", ranges=ranges
        )
        codes.append((rc, tg.last_result().code))
    assert codes == [(tg.BAD_CALL, "dispatch.bad_register")] * 3
    assert len(tg._CONFIGS) == 3 and len(tg._CONFIG_SHAPES) == 1


def test_more_user_sgprs_than_there_are_is_a_bad_call():
    """RSRC2.USER_SGPR 31 (more USER_DATA registers than there are): BAD_CALL with
    build_config's refusal, nothing raised out of run_asm (before: KeyError), again after."""
    code = harness.HostBlock(4096)
    ctypes.memmove(code.address, bytes.fromhex("0000b0bf") * 4, 16)  # (s_endpgm)
    args = harness.HostBlock(256)
    ranges = [(code.address, code.size), (args.address, args.size)]
    for user in ([1] * 31, [2] * 20):
        rc = tg.run_asm(
            code.address, code.size, 1, 1, 1, 32, 1, 1, args.address, 0x3E, 0, "rdna3", user, ranges=ranges
        )
        assert (rc, tg.last_result().code) == (tg.BAD_CALL, "dispatch.user_sgpr")


def test_fresh_buffers_take_execute_records_by_shape():
    """sort replayed over fresh buffers (each kernel's next launch: a new config object, its
    kernarg and scratch addresses new): after the first replay no execute record is built by
    the full path -- each is made from the record of its config's shape (decision 0035,
    amendment h113) -- and every result is tinygrad's CPU device's."""
    from wavelift.run import execute as E

    fx = _fixture("sort")
    keep = []
    for i in range(3):
        made, hits = E.PREPARED_MADE[0], E.SHAPED_HITS[0]
        run = harness.replay(fx, tg.run_asm, keep_code=True)
        keep.append(run)  # (alive: the next replay's buffers are at other addresses)
        assert all(c == tg.OK for c in run.codes), run.codes
        assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None
        if i:
            assert E.PREPARED_MADE[0] == made and E.SHAPED_HITS[0] >= hits + 10


@pytest.mark.parametrize("name", ["softmax", "matmul", "sigmoid_gelu"])
def test_a_first_replay_over_fresh_buffers_runs_each_dispatch_once(
    monkeypatch, name, _native_cache, driver_runs
):
    """A kernel's first dispatch over new buffers after its cold one (bench_tinygrad's warm
    column): its windows are all under the NumPy backend's GUESS_MIN_BYTES, so the native driver guesses
    nothing about them and runs each dispatch once -- before, it aliased every window at a new
    address (never written there), the kernel's store into one was dropped and the run done
    again (decision 0035, amendment h117).  Results are tinygrad's CPU device's."""
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime

    if host.compiler() is None:
        pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
    runs = driver_runs
    # (the driver whatever the disk cache holds; the test run's own cache, -O1 as conftest's tier)
    monkeypatch.setattr(runtime, "NATIVE", "on")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(_native_cache))
    monkeypatch.setattr(native, "FLAGS", tuple("-O1" if f.startswith("-O") else f for f in native.FLAGS))
    fx = _fixture(name)
    keep = []
    for _ in range(3):
        runs.clear()
        run = harness.replay(fx, tg.run_asm, keep_code=True)
        keep.append(run)  # (alive: the next replay's buffers are at other addresses)
        assert all(c == tg.OK for c in run.codes), run.codes
        assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None
        assert tg.last_result().stats.get("native_driver")
        assert len(runs) == len(run.codes)
