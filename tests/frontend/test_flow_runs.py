"""Straight-line runs kept by their bytes in control-flow discovery (frontend/flow.py _RUNS,
decision 0045 amendment): a discovery that takes instructions from kept runs gives exactly the
instructions (every field, at every offset) and block leaders that decoding each one gives, for
programs at other offsets, with branches into the middle of a kept run, constant-tracked call
sequences (s_getpc_b64 / s_add_u32 / s_addc_u32 / s_setpc_b64) inside and after runs, and
refusals (bytes that do not decode) after a kept run."""

from __future__ import annotations

import pytest

from wavelift.errors import Refused
from wavelift.frontend import flow

MOVS = "".join(f"v_mov_b32 v{i}, {i * 0x01010101 + 7}\n" for i in range(1, 12)) + "".join(
    f"s_mov_b32 s{i}, {i * 0x1000193 & 0x7FFFFFFF}\n" for i in range(2, 14)
)
STORES = "".join(f"global_store_b32 v240, v{i}, s[20:21] offset:{128 * i}\n" for i in range(12))
HALF = STORES.index("global_store_b32 v240, v6,")
SOURCES = [
    MOVS + "v_add_nc_u32 v0, v1, v2\n" + STORES + "s_endpgm\n",
    MOVS + "v_mul_f32 v0, v1, v2\nv_fma_f32 v3, v0, v4, v5\n" + STORES + "s_endpgm\n",
    # a loop whose back edge lands in the middle of the stores (a leader inside a kept run)
    MOVS
    + "s_mov_b32 s30, 3\nloop:\n"
    + STORES[:HALF]
    + "mid:\n"
    + STORES[HALF:]
    + "s_sub_u32 s30, s30, 1\ns_cmp_eq_u32 s30, 0\ns_cbranch_scc0 mid\ns_cbranch_vccz loop\ns_endpgm\n",
    # a branch to the middle of a run (L3), discovered before the run's start (L1): the kept run
    # at L1 (the moves start every program) stops where instructions were decoded before
    "s_branch L2\nL1:\n"
    + MOVS[: MOVS.index("v_mov_b32 v3,")]
    + "L3:\n"
    + MOVS[MOVS.index("v_mov_b32 v3,") :]
    + STORES
    + "s_endpgm\nL2:\ns_cbranch_scc0 L1\ns_branch L3\n",
    # a constant-tracked call: s_getpc_b64 and the adds inside runs of moves, then s_setpc_b64
    MOVS + "s_getpc_b64 s[40:41]\n" + MOVS + "s_add_u32 s40, s40, target-(.+0)\n"
    "s_addc_u32 s41, s41, 0\n" + MOVS + "s_setpc_b64 s[40:41]\ns_nop 0\ntarget:\n" + STORES + "s_endpgm\n",
]


def _programs():
    from tests.execute.asm import HAVE_MC, assemble

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    return [assemble(s, mcpu="gfx1100") for s in SOURCES]


def _call(code, base, entry):
    try:
        return flow.discover(code, "gfx1100", False, base, entry)
    except Refused as r:
        return ("refused", r.refusal.code, str(r))


def _fresh(code, base, entry):
    """discover with no run kept or looked up: every instruction decoded."""
    saved = flow._RUNS, flow._keep_run
    flow._RUNS, flow._keep_run = {}, (lambda *a: None)
    try:
        return _call(code, base, entry)
    finally:
        flow._RUNS, flow._keep_run = saved


def test_kept_runs_give_the_decoded_instructions(monkeypatch, calls):
    progs = _programs()
    pad = bytes.fromhex("00008fbf") * 3  # s_nop 0 x 3: the same bytes at other offsets
    bad = bytes.fromhex("000102a3")  # (no instruction: a decode refusal after the runs)
    cases = [(c, 0) for c in progs] + [(pad + c, len(pad)) for c in progs]
    cases += [(c[:-4] + bad + c[-4:], 0) for c in progs[:2]]
    monkeypatch.setattr(flow, "_RUNS", {})
    monkeypatch.setattr(flow, "RUNS_PER_KEY", 1 << 10)  # (every run kept: these share a start)
    decoded = calls(flow, "decode_one")
    refused = 0
    for rounds in range(2):  # (the second round: every run kept)
        for code, entry in cases:
            for base in (0x1000, 0x7FFF0000):
                want = _fresh(code, base, entry)
                decoded.clear()
                got = _call(code, base, entry)
                assert got == want
                if got[0] == "refused":
                    refused += 1
                elif rounds:
                    assert len(decoded) < len(got[0]) // 2  # (most came from kept runs)
    assert flow._RUNS and refused == 8
    assert len(progs) == 5


def test_a_key_keeps_at_most_runs_per_key(monkeypatch):
    """Runs that share their first 16 bytes (a common start, then new code: each instruction
    test's) are kept up to RUNS_PER_KEY: a lookup scans no more; the others decode as before."""
    progs = _programs()
    monkeypatch.setattr(flow, "_RUNS", {})
    for _ in range(2):  # (the second time: the same runs, not kept again)
        for code in progs:
            assert _call(code, 0x1000, 0) == _fresh(code, 0x1000, 0)
    assert flow._RUNS and max(len(v) for v in flow._RUNS.values()) <= flow.RUNS_PER_KEY
    assert any(len(v) == flow.RUNS_PER_KEY for v in flow._RUNS.values())
