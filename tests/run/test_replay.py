"""replay() and run_stream(): one register file across submissions, stream refusals."""

from wavelift import Capture, Refusal, pm4, replay
from wavelift.run.replay import run_stream
from wavelift.run.result import DispatchResult
from wavelift.stream.registers import RegisterFile


def recorder(calls):
    def execute(memory, config, index):
        calls.append(config)
        memory.write_u32(out_addr[0], index + 100)  # an engine that lands a write
        return DispatchResult(index, config)

    return execute


out_addr = [0]


def build():
    cap = Capture(target="gfx1030")
    code = cap.alloc(256, data=b"\x00" * 256, name="code")
    out = cap.alloc(64, name="out")
    out_addr[0] = out
    cap.submit(
        pm4.set_sh_regs(
            {
                "COMPUTE_PGM_LO": code >> 8,
                "COMPUTE_PGM_RSRC2": 2 << 1,
                "COMPUTE_USER_DATA_0": 11,
                "COMPUTE_USER_DATA_1": 12,
                "COMPUTE_NUM_THREAD_X": 64,
                "COMPUTE_NUM_THREAD_Y": 1,
                "COMPUTE_NUM_THREAD_Z": 1,
            }
        )
        + pm4.dispatch_direct(2, 1, 1, initiator=pm4.initiator(wave32=True))
    )
    # second submission relies on SH state from the first, and waits on the first's result
    cap.submit(
        pm4.wait_reg_mem(out, 100) + pm4.set_sh_reg("COMPUTE_USER_DATA_1", 13) + pm4.dispatch_direct(1, 1, 1)
    )
    return cap, out


def test_registers_persist_across_submissions_and_results_are_visible():
    cap, out = build()
    calls = []
    rs = replay(cap, execute=recorder(calls))
    assert [r.index for r in rs] == [0, 1] and all(r.landed for r in rs)
    assert calls[0].user_sgprs == (11, 12) and calls[1].user_sgprs == (11, 13)
    assert calls[0].wave_size == 32 and calls[1].wave_size == 64
    assert cap.read(out, 4) == (101).to_bytes(4, "little")


def test_replay_from_file_and_a_refused_dispatch(tmp_path):
    cap, out = build()
    p = tmp_path / "r.wlcap"
    cap.save(p)

    def unavailable(memory, config, index):
        return DispatchResult(index, config, Refusal("backend.unavailable", "no engine here"))

    rs = replay(str(p), execute=unavailable)
    assert rs[0].refusal.code == "backend.unavailable" and rs[0].config is not None
    # nothing landed, so the second submission's WAIT_REG_MEM can never be met
    assert rs[1].config is None and rs[1].refusal.code == "stream.wait_unmet"
    assert len(rs) == 2


def test_stream_refusal_yields_result_and_stops():
    cap, out = build()
    cap.streams.insert(1, (cap.submit(pm4.packet(0x2D, [0, 0])), 3))
    cap.streams.pop()  # (submit appended it too)
    calls = []
    rs = replay(cap, execute=recorder(calls))
    assert [r.refusal.code if r.refusal else None for r in rs] == [None, "stream.unknown_opcode"]
    assert rs[1].config is None and len(calls) == 1  # later submissions never ran


def test_dispatch_setup_refusal_does_not_stop_the_stream():
    cap = Capture()
    cap.submit(
        pm4.dispatch_direct(1, 1, 1)
        + pm4.set_sh_reg("COMPUTE_PGM_LO", 1)
        + pm4.set_sh_reg("COMPUTE_NUM_THREAD_X", 1, 1, 1)
        + pm4.dispatch_direct(1, 1, 1)
    )
    rs = replay(cap, execute=lambda m, c, i: DispatchResult(i, c))
    assert rs[0].refusal.code == "dispatch.no_program" and rs[1].landed


def test_run_stream_is_the_low_level_path():
    cap, out = build()
    regs, results = RegisterFile("gfx1030"), []
    a, n = cap.streams[0]
    assert (
        run_stream(cap.memory, "gfx1030", a, n, regs, lambda m, c, i: DispatchResult(i, c), results) is None
    )
    assert len(results) == 1 and regs["COMPUTE_USER_DATA_0"] == 11
    r = run_stream(cap.memory, "gfx1030", out, 16, regs, None, results)  # zeros: type-0 headers
    assert r.code == "stream.bad_packet_type" and results[-1].refusal == r


def test_package_replay_is_the_function_after_its_module_is_imported():
    import wavelift
    import wavelift.run.replay as mod

    cap, _ = build()
    assert wavelift.replay is mod.replay
    assert len(wavelift.replay(cap, execute=lambda m, c, i: DispatchResult(i, c))) == 2
