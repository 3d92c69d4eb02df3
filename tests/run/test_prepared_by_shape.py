"""execute_dispatch's records by the config's shape (decision 0035, amendment h113): a new config
object whose fields are an earlier one's but the user SGPRs' values (new buffers: other kernarg
and scratch addresses) takes the earlier record's program, module key, module and budget, with
a trace key of its own; a config that differs in anything the skipped steps read -- the grid,
RSRC2, user SGPR 1's swizzle bits under the scratch ABI (they decide whether s0:s1 is the
scratch ring: another translation) -- gets a record built by the full path.  Results equal the
full path's (``_prepared`` off: no record of either kind) and the NumPy reference."""

from __future__ import annotations

import dataclasses

import numpy as np
from testpaths import FIXTURES

import wavelift
from wavelift.run import execute as E

SWIZZLE = 0x80000000  # GFX10.3: user SGPR 1's SWIZZLE_ENABLE (frontend/scratch.abi)


def _view(r):
    stats = {k: v for k, v in r.stats.items() if k != "module_cache_hit" and not k.endswith("_s")}
    return r.refusal, r.write_spans, [(w.address, w.size) for w in r.windows or []], stats


def _counts():
    return E.PREPARED_MADE[0], E.SHAPED_HITS[0]


def _stamped(dev, cfg):
    """The device's memory with its code allocation vouched for (GuestMemory.stamps, as the
    tinygrad hook does): what a record by shape needs (its key holds the code's stamp)."""
    mem = dev.memory
    code = mem.find(cfg.program_address)
    mem.stamps = {code: ("test code", id(code))}
    return mem


def _full(monkeypatch, mem, cfg):
    """The dispatch through the full path (no record of either kind)."""
    monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
    try:
        return E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    finally:
        monkeypatch.undo()


def _vadd():
    dev = wavelift.Device("gfx1030", record=False)
    co = dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-flat.hsaco")
    k = co.kernel("vadd")
    a = dev.upload(np.arange(256, dtype=np.float32))
    b = dev.upload(np.full(256, 2, np.float32))
    return dev, k, a, b


def _moved_kernargs(dev, cfg, c):
    """A config of ``cfg``'s fields whose kernarg pointer (user SGPRs) is a new copy of the last
    launch's kernargs with the output pointer (vadd: a, b, c, n; c at +16) set to ``c``: what a
    runtime's next launch over a new buffer hands over (its kernarg ring's next slot)."""
    ka = dev.launches[-1].kernarg_address
    u = list(cfg.user_sgprs)
    i = next(i for i in range(0, len(u) - 1) if u[i] | u[i + 1] << 32 == ka)
    held = dev.memory.find(ka)
    old = dev.memory.read(ka, held.end - ka)
    new = dev.alloc(len(old))
    dev.memory.write(new.address, old)
    dev.memory.write_u64(new.address + 16, c.address)
    u[i], u[i + 1] = new.address & 0xFFFFFFFF, new.address >> 32
    return dataclasses.replace(cfg, user_sgprs=tuple(u))


def _moved_launches(n):
    """A vadd launch, then ``n`` configs of it over new output buffers through new kernargs,
    and the memory stamped for the first."""
    dev, k, a, b = _vadd()
    c0 = dev.alloc(1024)
    r = k.launch(global_size=(256, 1, 1), block=(64, 1, 1), args=[a, b, c0, np.uint32(256)])
    assert r.refusal is None, r.refusal
    outs = [dev.alloc(1024) for _ in range(n)]
    configs = [_moved_kernargs(dev, r.config, c) for c in outs]
    return dev, configs, outs, _stamped(dev, configs[0])


def _as_full_path(monkeypatch, dev, mem, results, configs, outs):
    """Each result wrote its own buffer with a + b, as the full path does."""
    for got, cfg, c in zip(results, configs, outs, strict=True):
        assert got.refusal is None and got.write_spans == [(c.address, 1024)]
        assert _view(got) == _view(_full(monkeypatch, mem, cfg))
        assert np.array_equal(dev.download(c, np.float32), np.arange(256, dtype=np.float32) + 2)


def test_new_buffers_of_the_same_shape_take_the_record(monkeypatch):
    """vadd over new output buffers, each through new kernargs (new user SGPR values, a new
    config object each): one record built by the full path, the others made from it; each
    writes its own buffer with a + b, as the full path does."""
    dev, configs, outs, mem = _moved_launches(4)
    assert len({c.user_sgprs for c in configs}) == 4
    made, hits = _counts()
    rs = [E.execute_dispatch(mem, cfg, 0, "numpy", "wave") for cfg in configs]
    assert _counts() == (made + 1, hits + 3)
    _as_full_path(monkeypatch, dev, mem, rs, configs, outs)
    # the records by shape hold each config's own trace key (its user SGPRs)
    recs = [E._PREPARED[id(cfg)] for cfg in configs]
    assert [r.tkey[0] for r in recs] == [tuple(cfg.user_sgprs) for cfg in configs]
    assert len({id(r.program) for r in recs}) == 1


def test_a_field_of_the_shape_changed_builds_a_record(monkeypatch):
    """Another grid, another RSRC2, another program address (each a new config object with the
    same user SGPRs): no record by shape -- each built by the full path, its result the full
    path's; the first shape's next new config object takes the first record again."""
    dev, k, a, b = _vadd()
    c = dev.alloc(1024)
    r = k.launch(global_size=(256, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(256)])
    assert r.refusal is None
    mem = _stamped(dev, r.config)
    cfg = dataclasses.replace(r.config)  # (a config object without a record: the full path's)
    E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    variants = [
        dataclasses.replace(cfg, group_end=(2, 1, 1)),  # another grid: 2 of the 4 groups
        dataclasses.replace(cfg, rsrc2=cfg.rsrc2 ^ (1 << 7)),  # another RSRC2 (TGID_Y_EN)
        dataclasses.replace(cfg, block=(32, 1, 1)),  # another block
    ]
    for v in variants:
        made, hits = _counts()
        got = E.execute_dispatch(mem, v, 0, "numpy", "wave")
        assert _counts() == (made + 1, hits), v
        assert _view(got) == _view(_full(monkeypatch, mem, v))
    made, hits = _counts()
    again = E.execute_dispatch(mem, dataclasses.replace(cfg), 0, "numpy", "wave")
    assert _counts() == (made, hits + 1)
    assert _view(again) == _view(_full(monkeypatch, mem, cfg))


def test_user_sgpr_1_swizzle_under_scratch_is_part_of_the_shape(monkeypatch):
    """RADV's scratch_array (scratch through the ring V# in s0:s3): user SGPR 1 with SWIZZLE
    set makes s0:s1 the scratch ring (the scratch ABI's ring_root), cleared it does not -- another
    translation.  A config with the bit cleared must not take the record of the one with it set
    (nor the reverse); a config with only the scratch base's address moved takes it."""
    from wavelift.frontend.scratch import abi

    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    sh = dev.load_aco_shader(FIXTURES / "gfx1030" / "radv-llvm" / "scratch_array-w64.json")
    data = dev.upload(np.array([7, 3] + [0] * 64, np.uint32))
    r = sh.launch(groups=(1, 1, 1), buffers={(0, 0): data})
    assert r.refusal is None, r.refusal
    mem = _stamped(dev, r.config)
    cfg = dataclasses.replace(r.config)  # (a config object without a record: the full path's)
    u = list(cfg.user_sgprs)
    assert abi(cfg).ring_root and u[1] & SWIZZLE
    made, hits = _counts()
    base = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    assert _counts() == (made + 1, hits)
    assert base.refusal is None
    off = dataclasses.replace(cfg, user_sgprs=(u[0], u[1] & ~SWIZZLE, *u[2:]))
    assert not abi(off).ring_root
    made, hits = _counts()
    got = E.execute_dispatch(mem, off, 0, "numpy", "wave")
    assert _counts() == (made + 1, hits)  # (built: another translation, not the ring's record)
    assert E._PREPARED[id(off)].program is not E._PREPARED[id(cfg)].program
    assert _view(got) == _view(_full(monkeypatch, mem, off))
    # the bit set again on another config object: the ring's record, not the cleared one's
    on = dataclasses.replace(cfg, user_sgprs=tuple(u))
    made, hits = _counts()
    got = E.execute_dispatch(mem, on, 0, "numpy", "wave")
    assert _counts() == (made, hits + 1)
    assert E._PREPARED[id(on)].program is E._PREPARED[id(cfg)].program
    assert _view(got) == _view(base) == _view(_full(monkeypatch, mem, on))
    # the scratch base moved (user SGPR 0): the same shape
    moved = dataclasses.replace(cfg, user_sgprs=(u[0] + 0x10000, *u[1:]))
    made, hits = _counts()
    got = E.execute_dispatch(mem, moved, 0, "numpy", "wave")
    assert _counts() == (made, hits + 1)
    assert _view(got) == _view(_full(monkeypatch, mem, moved))


def test_no_stamp_no_record_by_shape():
    """A code allocation without a content stamp (host memory nobody vouches for): a new config
    object of the same fields is built by the full path (program_for reads the code again)."""
    dev, k, a, b = _vadd()
    c = dev.alloc(1024)
    r = k.launch(global_size=(256, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(256)])
    mem = dev.memory
    assert not mem.stamps
    made, hits = _counts()
    E.execute_dispatch(mem, dataclasses.replace(r.config), 0, "numpy", "wave")
    assert _counts() == (made + 1, hits)


def test_a_first_launch_works_out_its_shape_key_once(monkeypatch):
    """A config of a new shape: _shaped's miss hands its key and code allocation to the full
    path's _prepare (decision 0035, amendment h117: before, _prepare made the key again and the
    allocation was looked up twice); the record kept by that key serves the next config."""
    dev, configs, outs, mem = _moved_launches(2)
    keys: list = []
    real = E._shape_key

    def count(*args):
        key = real(*args)
        keys.append(key)
        return key

    monkeypatch.setattr(E, "_shape_key", count)
    made, hits = _counts()
    first = E.execute_dispatch(mem, configs[0], 0, "numpy", "wave")
    assert _counts() == (made + 1, hits) and len(keys) == 1 and keys[0] is not None
    second = E.execute_dispatch(mem, configs[1], 0, "numpy", "wave")
    assert _counts() == (made + 1, hits + 1) and len(keys) == 2 and keys[1] == keys[0]
    monkeypatch.undo()
    _as_full_path(monkeypatch, dev, mem, (first, second), configs, outs)
