"""Device(record=False)'s repeated-launch path (issue 24 item 2): a launch whose stream was seen
before skips PM4 building, the stream walk and build_config.  The dispatch it runs must be the
one the full path builds: the same config, register file, guest memory and results, over
launches with changing arguments, grid sizes, buffers and kernels, host writes and register
writes between launches; a change of the program or of any register takes the full path."""

import numpy as np
from testpaths import FIXTURES

import wavelift
from wavelift.run.replay import default_execute
from wavelift.stream import pm4


def _device(fast: bool):
    seen: list = []
    inner = default_execute("numpy", "wave")

    def execute(memory, config, index):
        seen.append(config)
        return inner(memory, config, index)

    dev = wavelift.Device("gfx1030", record=False, execute=execute)
    dev.fast_launch = fast
    co = dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-flat.hsaco")
    return dev, co, seen


def _state(dev):
    mem = [(a.base, a.size, bytes(a.data)) for a in dev.memory.allocations]
    return mem, dev._regs.snapshot(), dev._regs.writes, dev.dispatch_count


def _script(seed: int):
    """The same random session for both devices: (what, parameters)."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(70):
        u = rng.random()
        if u < 0.08:
            steps.append(("poke", int(rng.integers(0, 3))))
        elif u < 0.12:
            steps.append(("write", int(rng.integers(0, 3)), int(rng.integers(0, 1 << 30))))
        elif u < 0.17:
            steps.append(("upload", int(rng.integers(0, 1 << 30))))
        elif u < 0.27:
            steps.append(("private", int(rng.choice([32, 64])), int(rng.integers(1, 5))))
        else:
            n = int(rng.choice([64, 64, 64, 128, 96, 32]))
            block = int(rng.choice([64, 64, 32]))
            picks = tuple(int(x) for x in rng.integers(0, 4, 3))
            steps.append(("vadd", n, block, picks, int(rng.integers(1, n + 1))))
    return steps


def _session(fast: bool, seed: int):
    dev, co, seen = _device(fast)
    vadd, private = co.kernel("vadd"), co.kernel("private_array")
    rng = np.random.default_rng(seed + 1000)
    bufs = [dev.upload(rng.standard_normal(128).astype(np.float32)) for _ in range(4)]
    out = []
    took = []
    for step in _script(seed):
        before = dev.fast_launches
        if step[0] == "poke":
            # registers the kernels' streams do not write; build_config reads COMPUTE_START_X
            reg = "COMPUTE_START_X" if step[1] < 2 else "COMPUTE_USER_DATA_12"
            dev._run(pm4.set_sh_regs({reg: step[1]}))
            out.append(("poke",))
            continue
        if step[0] == "write":
            dev.write(bufs[step[1]], np.full(8, step[2], np.uint32))
            continue
        if step[0] == "upload":
            bufs[0] = dev.upload(np.full(128, step[1] & 0xFFFF, np.float32))
            continue
        if step[0] == "private":
            r = private.launch(
                global_size=(step[1] * step[2], 1, 1),
                block=(step[1], 1, 1),
                args=[bufs[1], bufs[2], np.uint32(step[2])],
            )
        else:
            _, n, block, picks, count = step
            a, b, c = (bufs[i] for i in picks)
            r = vadd.launch(global_size=(n, 1, 1), block=(block, 1, 1), args=[a, b, c, np.uint32(count)])
        took.append((step, dev.fast_launches - before))
        rec = dev.launches[-1]
        out.append((r.index, r.config, r.refusal, r.write_spans, rec.pm4, rec.registers, _state(dev)))
    return out, seen, took, dev


def test_repeated_launch_path_equals_full_path():
    for seed in (1, 2):
        fast, seen_f, took, dev = _session(True, seed)
        full, seen_s, took_s, dev_s = _session(False, seed)
        assert dev_s.fast_launches == 0 and all(t == 0 for _, t in took_s)
        assert len(fast) == len(full)
        for f, s in zip(fast, full):
            assert f == s
        assert seen_f == seen_s  # every config handed to execute, in order
        # the repeated-launch path was taken, and for launches whose arguments changed
        assert dev.fast_launches > len(took) // 3, (dev.fast_launches, len(took))
        changed = [
            i
            for i in range(1, len(took))
            if took[i][1]
            and took[i][0][0] == took[i - 1][0][0] == "vadd"
            and took[i][0][3:] != took[i - 1][0][3:]
        ]
        assert changed, "no repeated launch with other buffers or counts took the fast path"


def test_program_or_register_change_takes_the_full_path():
    dev, co, seen = _device(True)
    vadd, private = co.kernel("vadd"), co.kernel("private_array")
    a = dev.upload(np.arange(128, dtype=np.float32))
    b = dev.upload(np.ones(128, np.float32))
    c = dev.alloc(512)

    def launch(k=vadd, n=64, args=None):
        before = dev.fast_launches
        if k is vadd:
            r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args or [a, b, c, np.uint32(n)])
        else:
            r = k.launch(global_size=(n, 1, 1), block=(32, 1, 1), args=[a, c, np.uint32(3)])
        assert r.refusal is None, r.refusal
        return dev.fast_launches - before

    assert launch() == 0  # first sight
    assert launch() == 1
    assert launch(args=[b, a, c, np.uint32(17)]) == 1  # kernarg values only
    assert launch(private) == 0  # another program
    assert launch() == 1  # (the register file after private_array, given vadd's writes: vadd's)
    assert launch(n=128) == 0  # another grid: other NUM_THREAD / dims
    assert launch(n=128) == 1
    dev._run(pm4.set_sh_regs({"COMPUTE_START_X": 0}))  # a register vadd's stream does not write
    assert launch(n=128) == 0
    assert launch(n=128) == 1
    dev._run(pm4.set_sh_regs({"COMPUTE_USER_DATA_12": 5}))
    assert launch(n=128) == 0
    # the same register file reached again: the entry is good again
    dev._run(pm4.set_sh_regs({"COMPUTE_USER_DATA_12": 5}))
    assert launch(n=128) == 1
    dev.gb_addr_config = None  # part of every config
    assert launch(n=128) == 0
    assert seen[-1].gb_addr_config is None
    dev.fast_launch = False
    assert launch(n=128) == 0
    np.testing.assert_array_equal(dev.download(c, np.float32), np.arange(128, dtype=np.float32) + 1)


def test_replay_writes_checks_the_whole_file():
    from wavelift.stream.registers import RegisterFile

    r = RegisterFile("gfx1030")
    r.write(0xB900, 1)
    r.write(0xB904, 2)
    after = {0xB900: 1, 0xB904: 3, 0xB908: 4}
    assert r.replay_writes({0xB904: 3, 0xB908: 4}, 3, after)
    assert r.values() == after and r.writes == 5
    r.write(0xB90C, 9)  # a register `after` does not hold
    assert not r.replay_writes({0xB904: 3, 0xB908: 4}, 3, after)
    assert r.writes == 6 and r.get(0xB90C) == 9
    r2 = RegisterFile("gfx1030")
    r2.write(0xB900, 5)  # differs where the writes do not reach
    assert not r2.replay_writes({0xB904: 3, 0xB908: 4}, 3, after)
    assert r2.values() == {0xB900: 5} and r2.writes == 1
    assert not RegisterFile("gfx1030").replay_writes({0xB904: 3, 0xB908: 4}, 2, after)  # 0xB900 missing


def test_kept_grids_equal_made_ones():
    import pytest

    from wavelift.driver import hsa

    cases = [
        dict(groups=(4, 2), block=(8, 8)),
        dict(global_size=(100, 1, 1), block=(64, 1, 1)),
        dict(global_size=100, block=64, global_offset=(3, 0, 0)),
        dict(global_size=(100.0,), block=(np.int64(64),), dims=2),
        dict(groups=[4, 2], block=[8, 8]),  # (lists: not kept)
    ]
    for kw in cases * 2:
        full = dict(groups=None, block=(64, 1, 1), global_size=None, global_offset=(0, 0, 0), dims=None) | kw
        assert hsa.make_grid(**kw) == hsa._make_grid(**full)
    for _ in range(2):  # an error is raised every time, never kept
        with pytest.raises(hsa.LaunchError):
            hsa.make_grid(groups=(4, 1, 1), block=(2048, 1, 1))
