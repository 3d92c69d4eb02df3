"""Kernel.prepare's kept plan and Device.put (issue 24, decision 0029): a Device(record=False)
launch that repeats the last one's arguments builds no kernargs, packet or registers again,
and its reused launch allocations are written only where their bytes differ.  Checked against
a Device whose kernels forget their plan before every launch (the full path), over a session
that changes each input of the plan in turn (buffers, by-value numbers of several types, grid,
offset, block, the kernel) and scribbles over the launch allocations between launches."""

import numpy as np
import pytest
from testpaths import FIXTURES

import wavelift
from wavelift.driver import device as D
from wavelift.driver.launch import _MUTABLE, Buffer, record_fields
from wavelift.run.replay import default_execute


def _device():
    seen: list = []
    inner = default_execute("numpy", "wave")

    def execute(memory, config, index):
        seen.append(config)
        return inner(memory, config, index)

    dev = wavelift.Device("gfx1030", record=False, execute=execute)
    co = dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-flat.hsaco")
    return dev, co, seen


def _script(seed: int):
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(60):
        u = rng.random()
        if u < 0.1:
            steps.append(("scribble", int(rng.integers(0, 3)), int(rng.integers(1, 255))))
        elif u < 0.45 and steps and steps[-1][0] != "scribble":
            steps.append(steps[-1])  # the same launch again
        elif u < 0.52:
            steps.append(("private", int(rng.choice([32, 64])), int(rng.integers(1, 5))))
        else:
            n = int(rng.choice([64, 64, 64, 128, 96]))
            block = int(rng.choice([64, 64, 32]))
            picks = tuple(int(x) for x in rng.integers(0, 3, 3))
            kind = int(rng.integers(0, 3))  # np.uint32, a Python int, np.int32 (other bytes' type)
            offset = int(rng.choice([0, 0, 0, 64]))
            steps.append(("vadd", n, block, picks, int(rng.integers(1, n + 1)), kind, offset))
    return steps


def _session(keep: bool, seed: int, plans: list):
    """-> (each step's results, the configs executed, how many launches Kernel._plan planned);
    ``plans``: the calls fixture's list of Kernel._plan's calls (cleared here)."""
    dev, co, seen = _device()
    vadd, private = co.kernel("vadd"), co.kernel("private_array")
    rng = np.random.default_rng(seed + 7)
    bufs = [dev.upload(rng.standard_normal(128).astype(np.float32)) for _ in range(3)]
    plans.clear()
    out = []
    for step in _script(seed):
        if not keep:
            vadd._memo = private._memo = None
        if step[0] == "scribble":
            # the host writes over a launch allocation (kernargs, packet, IB) between launches
            rec = dev.launches[-1] if dev.launches else None
            if rec is None:
                continue
            addr = (rec.kernarg_address, rec.packet_address, rec.kernarg_address + 8)[step[1]]
            dev.memory.write(addr, bytes([step[2]]) * 8)
            out.append(("scribble",))
            continue
        if step[0] == "private":
            r = private.launch(
                global_size=(step[1] * step[2], 1, 1),
                block=(step[1], 1, 1),
                args=[bufs[1], bufs[2], np.uint32(step[2])],
            )
        else:
            _, n, block, picks, count, kind, offset = step
            a, b, c = (bufs[i] for i in picks)
            cnt = (np.uint32(count), count, np.int32(count))[kind]
            r = vadd.launch(
                global_size=(n, 1, 1),
                block=(block, 1, 1),
                global_offset=(offset, 0, 0),
                args=[a, b, c, cnt],
            )
        rec = dev.launches[-1]
        mem = [(x.base, x.size, bytes(x.data)) for x in dev.memory.allocations]
        fields = (
            rec.registers,
            rec.user_sgprs,
            rec.kernargs,
            rec.packet,
            rec.kernarg_address,
            rec.packet_address,
            rec.scratch_address,
            rec.scratch,
            rec.grid,
            rec.lds_bytes,
            rec.extra,
            rec.initiator,
            rec.dims,
        )
        # the launch allocations hold what the record says, whatever was written over them
        assert dev.memory.read(rec.kernarg_address, len(rec.kernargs)) == rec.kernargs
        assert dev.memory.read(rec.packet_address, len(rec.packet)) == rec.packet
        out.append((fields, r.refusal, r.write_spans, mem, dev._regs.snapshot()))
    return out, seen, len(plans)


def test_kept_plan_equals_the_full_path(calls):
    plans = calls(D.Kernel, "_plan")
    for seed in (3, 4):
        kept, seen_k, plans_k = _session(True, seed, plans)
        full, seen_f, plans_f = _session(False, seed, plans)
        assert len(kept) == len(full)
        for a, b in zip(kept, full):
            assert a == b
        assert seen_k == seen_f
        launches = sum(1 for s in _script(seed) if s[0] != "scribble")
        assert plans_f == launches  # (the full path plans every launch)
        # the kept plan was used, and only for launches that repeat the last one's arguments
        # exactly the launches that repeat the arguments of the same kernel's last launch
        # (not the Device's first launch: it makes the queue, whose address the kernargs hold)
        last: dict = {}
        repeats = 0
        first = True
        for s in _script(seed):
            if s[0] != "scribble":
                repeats += last.get(s[0]) == s
                last[s[0]] = None if first else s
                first = False
        assert launches - plans_k == repeats > 0


def test_each_input_of_the_plan_is_part_of_its_key():
    dev, co, _ = _device()
    vadd = co.kernel("vadd")
    a, b = dev.upload(np.arange(64, dtype=np.float32)), dev.upload(np.ones(64, np.float32))
    c, c2 = dev.alloc(256), dev.alloc(256)
    base = dict(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(64)])
    vadd.launch(**base)  # (the first launch makes the queue: nothing kept)
    assert vadd._memo is None
    vadd.launch(**base)
    plan = vadd._memo[1]
    vadd.launch(**base)
    assert vadd._memo[1] is plan  # the same launch: kept
    changes = [
        dict(args=[a, b, c2, np.uint32(64)]),  # another buffer
        dict(args=[a, b, c, np.uint32(63)]),  # another count
        dict(args=[a, b, c, np.int32(64)]),  # the same number as another type
        dict(args=[a, b, c, 64]),
        dict(global_size=(32, 1, 1)),
        dict(block=(32, 1, 1)),
        dict(global_offset=(64, 0, 0)),
        dict(dims=2),
    ]
    for ch in changes:
        vadd.launch(**(base | ch))
        assert vadd._memo[1] is not plan, ch
        vadd.launch(**base)
        plan = vadd._memo[1]
    np.testing.assert_array_equal(dev.download(c, np.float32), np.arange(64, dtype=np.float32) + 1)


def test_value_keys():
    k = D._value_key
    assert k(-0.0) != k(0.0)
    assert k(np.float32(-0.0)) != k(np.float32(0.0))
    assert k(np.uint32(1)) != k(np.int32(1)) != k(1) != k(True)
    assert k(float("nan")) == k(float("nan"))  # (the same bits)
    assert k((1, 2)) != k([1, 2]) and k((1, 2)) == k((1, 2))
    assert k(Buffer(0x1000, 4)) == k(Buffer(0x1000, 8)) != k(Buffer(0x2000, 4))  # (the address only)
    assert k(D.Local(16)) != k(D.Local(32))
    grid = D._grid_of(None, None, None, (0, 0, 0), None, None, 1)
    assert D._launch_key(grid, [object()]) is None
    assert D._launch_key(grid, [np.zeros(2)]) is None


def test_put_writes_only_what_differs(calls):
    dev, _, _ = _device()
    addr = dev._alloc(64, "x")
    writes = calls(dev.memory, "view")
    dev.put(addr, 64, b"abc")
    assert writes and dev.memory.read(addr, 64) == b"abc" + bytes(61)
    writes.clear()
    dev.put(addr, 64, b"abc")  # the same bytes: not written
    dev.put(addr, 64, np.frombuffer(b"abc", np.uint8))
    assert not writes
    dev.memory.write(addr + 40, b"\x01")  # the zero tail changed
    dev.put(addr, 64, b"abc")
    assert writes and dev.memory.read(addr, 64) == b"abc" + bytes(61)
    writes.clear()
    dev.put(addr, 64, b"abd")
    assert writes and dev.memory.read(addr, 64) == b"abd" + bytes(61)
    writes.clear()
    dev.put(addr, 64)
    assert writes and dev.memory.read(addr, 64) == bytes(64)
    writes.clear()
    dev.put(addr, 64, bytes(range(64)))
    dev.put(addr, 64, bytes(range(64)))
    assert len(writes) == 1 and dev.memory.read(addr, 64) == bytes(range(64))
    with pytest.raises(ValueError):
        dev.put(addr, 4, b"abcdef")


def test_replay_writes_when_the_file_already_holds_the_result():
    """RegisterFile.replay_writes' shortcut (the file equals what the stream leaves): taken only
    when the writes agree with it; otherwise the full check decides, as before."""
    from wavelift.stream.registers import RegisterFile

    after = {0xB900: 1, 0xB904: 3}
    r = RegisterFile("gfx1030")
    r.write(0xB900, 1)
    r.write(0xB904, 3)
    assert r.replay_writes({0xB904: 3}, 2, after) and r.writes == 4 and r.values() == after
    assert not r.replay_writes({0xB904: 4}, 1, after)  # (writes that disagree with `after`)
    assert not r.replay_writes({0xB908: 4}, 1, after)  # (a register `after` does not hold)
    assert r.writes == 4 and r.values() == after


def test_a_records_copy_shares_no_mutable_field():
    """launch.record_fields (a kept launch's record, and each record made from it: the kept
    records themselves are tests/cuda/test_launch_again_host.py's) copies every field of a launch
    record that can change in place -- exactly the ones _MUTABLE names, pm4 made from the stream's
    dwords --, each equal and shared with nothing, extra's whole contents too."""
    dev, co, _ = _device()
    vadd = co.kernel("vadd")
    a, c = dev.upload(np.arange(64, dtype=np.float32)), dev.alloc(256)
    recs = []
    for n in (64, 64, 32):
        vadd.launch(global_size=(n, 1, 1), block=(32, 1, 1), args=[a, a, c, np.uint32(n)])
        recs.append(vadd.last_launch)
    mutable = (dict, list, set, bytearray, np.ndarray)
    for rec in recs:
        got = {k: getattr(rec, k) for k in _MUTABLE}
        for k, v in vars(rec).items():
            assert not isinstance(v, mutable) or k in _MUTABLE, k  # (a new mutable field: in _MUTABLE)
        t = record_fields(vars(rec))
        for k in _MUTABLE[:-1]:
            assert t[k] == got[k] and t[k] is not got[k], k
        for k, v in got["extra"].items():
            assert t["extra"][k] == v and (not isinstance(v, mutable) or t["extra"][k] is not v), k
        assert t["extra"].keys() == got["extra"].keys()
