"""`wavelift trace`'s wave state (issue 26 item 4) for the refusals a running wave meets besides
escapes, budgets and bad jumps: a refuse_if op (image.* T#s, forms translated only for what
they cannot do), a float block under another rounding mode, the time limit.  The dispatch runs
again on NumPy blocks with runtime.WAVE_STATE recording (commands/trace.py
rerun_for_wave_state); the registers recorded are checked against what the program computed."""

import numpy as np
import pytest
from harness import Rig, ptr
from test_images import PROG, H, W, _image, tsharp

from wavelift.backends.numpy import runtime
from wavelift.commands.trace import format_wave_state, rerun_for_wave_state, wants_state
from wavelift.run.execute import execute_dispatch


def _execute(**kw):
    def run(memory, config, index):
        return execute_dispatch(memory, config, index, **kw)

    return run


def _state(r, cfg, **kw):
    res = r.run(cfg, **kw)
    assert res.refusal is not None and wants_state(res.refusal.code), res.refusal
    st = rerun_for_wave_state(r.mem, cfg, _execute(**kw), 0, 0)
    assert runtime.WAVE_STATE is None
    return res, st


def test_image_refusal_records_the_lane_at_the_image_instruction():
    r = Rig(PROG)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    t = tsharp(a, W, H, fmt=169)  # BC1_UNORM: block-compressed, refused (image.unsupported_format)
    res, st = _state(r, r.config(user_sgprs=t + list(ptr(out)), tgid=(False,) * 3))
    assert res.refusal.code == "image.unsupported_format"
    assert st is not None and st["kind"] == "refused"
    assert st["instruction"].startswith("image_load") and f"{st['pc']:#x}" in res.refusal.message
    assert st["wave"] == 0 and st["exec"] == 0xFFFFFFFF
    assert st["sgprs"][:10] == t + list(ptr(out))  # the T# and the output pointer
    lane = st["lane"]
    assert lane == 0  # the first lane where the refusal held
    v = st["vgprs"]
    assert [v[0][k] for k in range(32)] == list(range(32))  # v0: the lane ids
    assert [v[1][k] for k in range(32)] == [k & 7 for k in range(32)]  # v1 = 7 & v0
    assert [v[2][k] for k in range(32)] == [k >> 3 for k in range(32)]  # v2 = v0 >> 3
    text = "\n".join(format_wave_state(st, 10))
    assert "wave state at the refusing instruction (wave 0, lane 0;" in text
    assert "pc    0x8: image_load" in text


def test_rounding_mode_records_the_wave_before_the_float_block():
    r = Rig(
        """
  v_mov_b32 v1, 3
  s_mov_b32 s5, 42
  s_round_mode 0x1
  v_add_f32 v2, v0, v1
  s_endpgm
"""
    )
    res, st = _state(r, r.config(user_sgprs=[11, 22], tgid=(False,) * 3))
    assert res.refusal.code == "float.rounding_mode"
    assert st is not None and st["kind"] == "rounding_mode"
    assert st["sgprs"][:2] == [11, 22] and st["sgprs"][5] == 42
    assert all(x == 3 for x in st["vgprs"][1])
    assert "wave state at the float block refused for its rounding mode" in "\n".join(
        format_wave_state(st, 2)
    )


def test_time_limit_records_the_spinning_wave():
    r = Rig(
        """
  s_mov_b32 s4, 0
loop:
  s_add_u32 s4, s4, 1
  s_branch loop
"""
    )
    cfg = r.config(user_sgprs=[5], tgid=(False,) * 3)
    res, st = _state(r, cfg, time_limit=0.3, budget=1 << 40)
    assert res.refusal.code == "dispatch.time_exceeded"
    assert st is not None and st["kind"] == "time_exceeded"
    assert st["sgprs"][0] == 5 and st["instruction"].startswith("s_branch")  # the loop's block
    # s4, which the loop writes, is marked: NumPy blocks store it only where a later read needs it
    assert st["pending"]["sgprs"] == [4]
    assert "wave state when the time limit passed (wave 0;" in "\n".join(format_wave_state(st, 1))


def test_a_translation_refusal_records_nothing():
    r = Rig("  s_endpgm\n")
    cfg = r.config(tgid=(False,) * 3)
    assert wants_state("image.unsupported_layout") and not wants_state("dispatch.grid_too_large")
    runtime.WAVE_STATE = None
    assert rerun_for_wave_state(r.mem, cfg, _execute(), 0, 0) is None  # (landed: nothing recorded)


@pytest.mark.parametrize("mode", ["lane"])
def test_image_refusal_in_lane_mode(mode):
    r = Rig(PROG)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    t = tsharp(a, W, H, fmt=4)
    res, st = _state(r, r.config(user_sgprs=t + list(ptr(out)), tgid=(False,) * 3), mode=mode)
    assert st is not None and st["kind"] == "refused" and st["sgprs"][:8] == t
