"""Device.launch for clang-19 code objects, checked through the real path: Device -> PM4 ->
stream walker -> dispatch setup -> DispatchConfig.  Every expectation is recomputed here from the
kernel descriptor / metadata (the manifest's independent copy where it has one), not taken from
the driver.  Execution may not exist yet: results are either landed or refused
`backend.unavailable`; the config is checked either way."""

import json
import shutil
import struct
import subprocess

import numpy as np
import pytest
from testpaths import FIXTURES, ROOT

import wavelift
from wavelift.driver import CodeObjectError, LaunchError, Local
from wavelift.driver.codeobject import load
from wavelift.errors import Refusal, UserError
from wavelift.run.result import DispatchResult

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
CLANG = [b for b in MANIFEST["binaries"] if b["kind"] == "clang"]
HIDDEN = MANIFEST.get("hidden_arg_layouts", [])
CASES = [(b, ki) for b in CLANG for ki in b["kernel_info"]]
OK_CODES = (None, "backend.unavailable")


def config_only(memory, config, index):
    """Stands in for execution: these tests check the config the real stream path builds."""
    return DispatchResult(index, config, Refusal("backend.unavailable", "config-only test"))


SWIZZLE = 1 << 31
ADD_TID = 1 << 23


def _args_for(dev, ki, n=4096):
    args = []
    for _off, size, kind, *_tn in ki["args"]:
        if kind == "global_buffer":
            args.append(dev.alloc(n))
        elif kind == "by_value":
            args.append(np.uint32(7) if size == 4 else np.uint64(7))
        else:
            raise AssertionError(kind)
    return args


def _launch(entry, ki, groups=(2, 1, 1), block=None):
    dev = wavelift.Device(entry["target"], execute=config_only)
    lco = dev.load_code_object(ROOT / entry["path"])
    k = lco.kernel(ki["name"])
    if block is None:
        req = k.info.metadata.get(".reqd_workgroup_size")
        block = tuple(req) if req else (64, 1, 1)
    r = k.launch(groups=groups, block=block, args=_args_for(dev, ki))
    return dev, lco, k, r


def _u64(words, i):
    return words[i] | (words[i + 1] << 32)


@pytest.mark.parametrize(
    "entry,ki", CASES, ids=[f"{b['path'].split('fixtures/')[1]}:{k['name']}" for b, k in CASES]
)
def test_dispatch_config_golden(entry, ki):
    dev, lco, k, r = _launch(entry, ki)
    assert r is not None and (r.refusal is None or r.refusal.code in OK_CODES), r.refusal
    c = r.config
    assert c is not None, "dispatch setup refused the driver's own stream"
    rsrc1 = int(ki["compute_pgm_rsrc1"], 16)
    rsrc2 = int(ki["compute_pgm_rsrc2"], 16)
    kcp = int(ki["kernel_code_properties"], 16)
    wave = 32 if kcp & (1 << 10) else 64
    assert wave == entry["wave_size"]
    # program, wave size, resources
    assert c.target == entry["target"]
    assert c.program_address == lco.base + int(ki["entry_address"], 16)
    assert c.program_address % 256 == 0
    assert c.wave_size == wave and bool(c.initiator & (1 << 15)) == (wave == 32)
    assert c.rsrc1 == rsrc1 and c.rsrc3 == int(ki["compute_pgm_rsrc3"], 16)
    lds_field = -(-ki["group_segment_fixed_size"] // 512)
    assert c.rsrc2 == (rsrc2 & ~(0x1FF << 15)) | (lds_field << 15)
    assert c.lds_bytes == lds_field * 512 >= ki["group_segment_fixed_size"]
    assert c.tgid_enabled == tuple(bool(rsrc2 >> b & 1) for b in (7, 8, 9))
    assert c.tidig_comp_cnt == (rsrc2 >> 11) & 3
    assert c.block == k.last_launch.grid.block and c.group_start == (0, 0, 0)
    assert c.group_end == (2, 1, 1) and not c.partial_tg
    # user SGPRs: count and each value, in AMDGPUUsage order
    user = list(c.user_sgprs)
    n_user = (rsrc2 >> 1) & 0x1F
    assert len(user) == n_user
    mem = dev.memory
    i = 0
    scratch_en = bool(rsrc2 & 1)
    rec = k.last_launch
    if kcp & 1:  # private segment buffer V#
        v = user[i : i + 4]
        base = v[0] | ((v[1] & 0xFFFF) << 32)
        assert v[1] & SWIZZLE and (v[1] >> 16) & 0x3FFF == 0  # swizzled, stride 0
        assert v[3] & ADD_TID and (v[3] >> 21) & 3 == (3 if wave == 64 else 2)
        assert (v[3] >> 28) & 3 == 2 and (v[3] >> 24) & 1 == 1  # OOB_SELECT 2, RES_LEVEL
        assert (v[3] >> 12) & 0x7F == 20  # BUF_FORMAT_32_UINT
        if scratch_en:
            assert base and mem.find(base, v[2]) is not None
            assert v[2] == c.tmpring_waves * c.scratch_wave_bytes
        i += 4
    if kcp & 2:  # dispatch packet
        pkt_addr = _u64(user, i)
        assert pkt_addr % 64 == 0
        hdr, setup, wx, wy, wz, _r0, gx, gy, gz, priv, grp, kobj, karg = struct.unpack(
            "<HHHHHHIIIIIQQ", mem.read(pkt_addr, 48)
        )
        assert hdr & 0xFF == 2 and 1 <= setup & 3 <= 3
        assert (wx, wy, wz) == c.block
        assert (gx, gy, gz) == tuple(b * g for b, g in zip(c.block, (2, 1, 1)))
        assert priv >= ki["private_segment_fixed_size"] and priv % 4 == 0
        assert grp == ki["group_segment_fixed_size"]
        assert kobj == lco.base + int(ki["kd_address"], 16)
        assert karg == rec.kernarg_address
        i += 2
    if kcp & 4:
        assert _u64(user, i) == rec.queue_address and mem.read(rec.queue_address, 8) == bytes(8)
        i += 2
    if kcp & 8:  # kernarg segment
        ka = _u64(user, i)
        assert ka == rec.kernarg_address and ka % 16 == 0
        assert mem.read(ka, ki["kernarg_segment_size"]) == rec.kernargs
        i += 2
    if kcp & 16:
        assert _u64(user, i) == 0  # dispatch id: first dispatch of this device
        i += 2
    if kcp & 32:  # flat scratch init = scratch backing base
        assert _u64(user, i) == rec.scratch_address
        i += 2
    if kcp & 64:
        assert user[i] == -(-ki["private_segment_fixed_size"] // 16) * 16
        i += 1
    assert i == n_user
    # system SGPRs: workgroup ids, then (GFX10/10.3) the scratch wave offset
    pos = n_user
    for axis, en in zip("xyz", c.tgid_enabled):
        if en:
            assert c.system_sgprs[f"workgroup_id_{axis}"] == pos
            pos += 1
    assert not rsrc2 & (1 << 10)  # no TG_SIZE in these fixtures
    if scratch_en:
        assert c.system_sgprs["scratch_wave_offset"] == pos
        assert c.scratch_enabled
        per_lane = -(-ki["private_segment_fixed_size"] // 16) * 16
        assert c.scratch_wave_bytes == -(-per_lane * wave // 1024) * 1024
        assert c.tmpring_waves == 2 * -(
            -(64 * 1 if not k.info.metadata.get(".reqd_workgroup_size") else 256) // wave
        )
    else:
        assert "scratch_wave_offset" not in c.system_sgprs
        assert c.tmpring_size == 0


def _hidden(ki):
    idx = ki["hidden_args"]
    return {kind: (off, size) for off, size, kind in HIDDEN[idx]} if idx is not None else {}


HIDDEN_CASES = [(b, ki) for b, ki in CASES if ki["hidden_args"] is not None and b["opt_level"] == "O0"]


@pytest.mark.parametrize(
    "entry,ki", HIDDEN_CASES, ids=[f"{b['path'].split('fixtures/')[1]}:{k['name']}" for b, k in HIDDEN_CASES]
)
def test_kernarg_layout(entry, ki):
    """Explicit arguments at their metadata offsets; hidden arguments as CLR fills them."""
    dev = wavelift.Device(entry["target"], execute=config_only)
    lco = dev.load_code_object(ROOT / entry["path"])
    k = lco.kernel(ki["name"])
    req = k.info.metadata.get(".reqd_workgroup_size")
    block = tuple(req) if req else (48, 1, 1)
    gs = (block[0] * 3 - 5,)
    args = _args_for(dev, ki)
    r = k.launch(global_size=gs, block=block, args=args, global_offset=(16, 0, 0))
    assert r.config is not None
    ka = dev.memory.read(k.last_launch.kernarg_address, ki["kernarg_segment_size"])
    for (off, size, kind, *_), a in zip(ki["args"], args):
        got = ka[off : off + size]
        if kind == "global_buffer":
            assert int.from_bytes(got, "little") == a.address
        else:
            assert got == a.tobytes()
    h = _hidden(ki)
    want = {
        "block_count_x": 3,
        "block_count_y": 1,
        "block_count_z": 1,
        "group_size_x": block[0],
        "group_size_y": 1,
        "group_size_z": 1,
        "remainder_x": block[0] - 5,
        "remainder_y": 0,
        "remainder_z": 0,
        "global_offset_x": 16,
        "global_offset_y": 0,
        "global_offset_z": 0,
        "grid_dims": 1,
        "queue_ptr": dev.queue_address(),
        "hostcall_buffer": 0,
        "multigrid_sync_arg": 0,
        "heap_v1": 0,
        "default_queue": 0,
        "completion_action": 0,
    }
    assert set(h) <= set(want)
    for kind, (off, size) in h.items():
        assert int.from_bytes(ka[off : off + size], "little") == want[kind], kind
    # the partial last workgroup reaches the registers and the config
    c = r.config
    assert c.partial_tg and c.partial == (block[0] - 5, 0, 0) and c.group_end == (3, 1, 1)
    assert k.last_launch.registers["COMPUTE_NUM_THREAD_X"] == block[0] | ((block[0] - 5) << 16)
    assert k.last_launch.initiator & 0b111 == 0b111  # SHADER_EN | PARTIAL_TG | START_AT_000


def _basic(target="gfx1030", w=32, execute=None):
    dev = wavelift.Device(target, execute=execute)
    lco = dev.load_code_object(FIXTURES / f"{target}/basic-O2-w{w}-mubuf.hsaco")
    return dev, lco


def test_public_api_example():
    dev, lco = _basic()
    k = lco.kernel("vadd")
    a = dev.upload(np.arange(1024, dtype=np.float32))
    b = dev.upload(np.ones(1024, dtype=np.float32))
    out = dev.alloc(4096)
    r = k.launch(groups=(4, 1, 1), block=(256, 1, 1), args=[a, b, out, np.uint32(1024)])
    assert r.refusal is None or r.refusal.code == "backend.unavailable"
    assert isinstance(r, wavelift.DispatchResult)
    got = dev.download(out, np.float32)
    assert got.shape == (1024,)
    if r.landed:
        np.testing.assert_array_equal(got, np.arange(1024, dtype=np.float32) + 1)
    else:
        assert not got.any()  # a refused dispatch changes no memory
    np.testing.assert_array_equal(dev.download(a), np.arange(1024, dtype=np.float32))


def test_capture_replay_reproduces_configs(tmp_path):
    dev, lco = _basic()
    k = lco.kernel("private_array")
    src = dev.upload(np.arange(256, dtype=np.int32))
    out = dev.alloc(1024)
    r1 = k.launch(groups=(4,), block=(64,), args=[src, out, np.uint32(3)])
    r2 = lco.kernel("vadd").launch(global_size=(100,), block=(64,), args=[src, src, out, np.uint32(100)])
    path = tmp_path / "run.wlcap"
    dev.save_capture(path)
    res = wavelift.replay(str(path), backend="numpy")
    assert len(res) == 2
    assert res[0].config == r1.config and res[1].config == r2.config
    assert [x.refusal for x in res] == [r1.refusal, r2.refusal]


def test_scratch_backing_and_tmpring():
    dev, lco = _basic(w=64, execute=config_only)
    k = lco.kernel("private_array")
    r = k.launch(groups=(3,), block=(128,), args=[dev.alloc(4096), dev.alloc(4096), np.uint32(1)])
    c, rec = r.config, k.last_launch
    priv = k.info.private_segment_fixed_size
    assert priv > 0 and c.scratch_enabled
    assert c.scratch_wave_bytes == -(-(-(-priv // 16) * 16 * 64) // 1024) * 1024
    assert c.tmpring_waves == 3 * 2  # every wave of the dispatch has a slot
    assert c.tmpring_size == c.tmpring_waves | (c.scratch_wave_bytes // 1024) << 12
    alloc = dev.memory.find(rec.scratch_address)
    assert alloc is not None and alloc.base == rec.scratch_address
    assert alloc.size >= c.tmpring_waves * c.scratch_wave_bytes


@pytest.mark.parametrize(
    ("target", "total", "want"),
    [
        ("gfx1030", 1, (1, 1)),
        ("gfx1030", 6, (6, 6)),
        ("gfx1030", 10**6, (2560, 2560)),  # (capped at 32 * 80 CUs)
        ("gfx1100", 1, (1, 6)),  # (WAVES per shader engine: a slot on each of the 6)
        ("gfx1100", 7, (2, 12)),
        ("gfx1100", 10**6, (512, 3072)),  # (32 * 96 CUs over 6 SEs)
        ("gfx1101", 100, (34, 102)),
    ],
)
def test_scratch_waves_per_target(target, total, want):
    """TMPRING_SIZE.WAVES and the backing's wave slots (hsa.scratch_waves, shared by the HSA
    launch's plan_scratch and the ACO launch): ROCr's rule by hand."""
    from wavelift.driver import hsa

    assert hsa.scratch_waves(target, total) == want


def test_launch_errors():
    dev, lco = _basic()
    k = lco.kernel("vadd")
    a = dev.alloc(64)
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        k.launch(groups=(1,), block=(64,), args=[a, a, a])
    with pytest.raises(LaunchError, match="by value"):
        k.launch(groups=(1,), block=(64,), args=[a, a, a, a])
    with pytest.raises(LaunchError, match="pointer"):
        k.launch(groups=(1,), block=(64,), args=[a, 1.5, a, np.uint32(1)])
    with pytest.raises(LaunchError, match="4 bytes"):
        k.launch(groups=(1,), block=(64,), args=[a, a, a, np.uint64(1)])
    with pytest.raises(LaunchError, match="1024"):
        k.launch(groups=(1,), block=(2048,), args=[a, a, a, np.uint32(1)])
    with pytest.raises(LaunchError, match="exactly one"):
        k.launch(groups=(1,), global_size=(64,), block=(64,), args=[a, a, a, np.uint32(1)])
    with pytest.raises(LaunchError, match="requires work-group size"):
        lco.kernel("lds_reduce").launch(groups=(1,), block=(64,), args=[a, a])
    assert dev.results == []  # nothing was submitted
    assert dev.capture.streams == []


def test_wrong_target_refused():
    dev = wavelift.Device("gfx1010")
    with pytest.raises(CodeObjectError, match="gfx1030"):
        dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-mubuf.hsaco")
    with pytest.raises(UserError, match="unknown target"):
        wavelift.Device("gfx9000")


def test_code_object_from_bytes_and_image():
    dev = wavelift.Device("gfx1030")
    data = (FIXTURES / "gfx1030/stack-O2-w32-mubuf.hsaco").read_bytes()
    lco = dev.load_code_object(data)
    co = load(FIXTURES / "gfx1030/stack-O2-w32-mubuf.hsaco")
    assert lco.base % co.image_align == 0
    # the whole image is there: the called function's code too
    f = co.symbol("wl_helper")
    assert dev.memory.read(lco.base + f.value, 16) == co.data[co.file_offset(f.value) :][:16]


CLANG19 = shutil.which("clang-19")


def _compile(tmp_path, src, *extra, name="k"):
    p = tmp_path / f"{name}.cl"
    p.write_text(src)
    out = tmp_path / f"{name}.hsaco"
    subprocess.run(
        [
            "clang-19",
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-Xclang",
            "-finclude-default-header",
            "-nogpulib",
            "-target",
            "amdgcn-amd-amdhsa",
            "-O2",
            *extra,
            str(p),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out


DYN_SRC = """
__kernel void dyn(__global uint *out, __local uint *tmp, float f, ulong q, __local ushort *t2) {
  __local uint fixed[16];
  uint i = __builtin_amdgcn_workitem_id_x();
  fixed[i & 15] = i; tmp[i] = i; t2[i] = i; __builtin_amdgcn_s_barrier();
  out[i] = tmp[63 - i] + (uint)f + (uint)q + fixed[(i + 1) & 15] + t2[i ^ 1];
}
__kernel void hid(__global uint *out, uint n) {
  __constant uint *p = (__constant uint *)__builtin_amdgcn_implicitarg_ptr();
  uint i = __builtin_amdgcn_workitem_id_x();
  if (i < 64) out[i] = p[i] + n;
}
"""


@pytest.mark.skipif(not CLANG19, reason="needs clang-19")
def test_dynamic_lds_and_by_value(tmp_path):
    hsaco = _compile(tmp_path, DYN_SRC, "-mcpu=gfx1030")
    dev = wavelift.Device("gfx1030", execute=config_only)
    lco = dev.load_code_object(hsaco)
    k = lco.kernel("dyn")
    static = k.info.group_segment_fixed_size
    assert static == 64
    out = dev.alloc(256)
    r = k.launch(
        groups=(1,), block=(64,), args=[out, Local(256), np.float32(2.5), np.uint64(1 << 40), Local(128)]
    )
    ka = k.last_launch.kernargs
    args = {a.offset: a for a in k.info.explicit_args}
    offs = sorted(args)
    assert int.from_bytes(ka[offs[1] : offs[1] + 4], "little") == 64  # after static LDS
    assert struct.unpack_from("<f", ka, offs[2])[0] == 2.5
    assert struct.unpack_from("<Q", ka, offs[3])[0] == 1 << 40
    assert int.from_bytes(ka[offs[4] : offs[4] + 4], "little") == 64 + 256  # next local arg
    assert k.last_launch.lds_bytes == 64 + 256 + 128
    assert r.config.lds_bytes == -(-(64 + 256 + 128) // 512) * 512
    with pytest.raises(LaunchError, match="Local"):
        k.launch(groups=(1,), block=(64,), args=[out, 256, 1.0, 1, Local(4)])
    with pytest.raises(LaunchError, match="LDS"):
        k.launch(groups=(1,), block=(64,), args=[out, Local(65536), 1.0, 1, Local(4)])


@pytest.mark.skipif(not CLANG19, reason="needs clang-19")
@pytest.mark.parametrize("cov,target", [(4, "gfx1010"), (5, "gfx1030"), (5, "gfx1010")])
def test_hidden_args_v4_v5(tmp_path, cov, target):
    hsaco = _compile(tmp_path, DYN_SRC, f"-mcpu={target}", f"-mcode-object-version={cov}")
    co = load(hsaco)
    assert co.version == cov
    if cov == 4:
        assert co.xnack == "any" and co.sramecc == "unsupported"
    dev = wavelift.Device(target, execute=config_only)
    k = dev.load_code_object(hsaco).kernel("hid")
    out = dev.alloc(256)
    r = k.launch(global_size=(40, 3), block=(16, 2), args=[out, 9], global_offset=(1, 2, 0))
    assert r.config is not None and r.config.group_end == (3, 2, 1)
    ka = k.last_launch.kernargs
    hidden = {a.value_kind: a for a in k.info.args if a.hidden}
    want = {
        "hidden_global_offset_x": 1,
        "hidden_global_offset_y": 2,
        "hidden_global_offset_z": 0,
        "hidden_block_count_x": 3,
        "hidden_block_count_y": 2,
        "hidden_group_size_x": 16,
        "hidden_group_size_y": 2,
        "hidden_remainder_x": 8,
        "hidden_remainder_y": 1,
        "hidden_grid_dims": 2,
    }
    for kind, a in hidden.items():
        v = int.from_bytes(ka[a.offset : a.offset + a.size], "little")
        if kind in want:
            assert v == want[kind], kind
        elif kind in ("hidden_queue_ptr", "hidden_default_queue") and kind == "hidden_queue_ptr":
            assert v == dev.queue_address()
    assert "hidden_global_offset_x" in hidden
    assert int.from_bytes(ka[0:8], "little") == out.address
    assert int.from_bytes(ka[8:12], "little") == 9


def test_launch_save_replay_gives_identical_memory(tmp_path):
    """Device.launch -> save_capture -> replay: the replay redoes the Device's work, so every
    allocation ends up byte-identical — with dispatches that read what earlier ones wrote, and a
    host write between launches (it travels in the stream as DMA_DATA)."""
    dev, lco = _basic()
    vadd = lco.kernel("vadd")
    a = dev.upload(np.arange(1000, dtype=np.float32))
    b = dev.upload(np.full(1000, 0.5, np.float32))
    c = dev.alloc(4000)
    r1 = vadd.launch(global_size=(1000,), block=(64,), args=[a, b, c, np.uint32(1000)])
    dev.write(b, np.full(1000, 2.0, np.float32))  # host update after a launch
    r2 = vadd.launch(global_size=(1000,), block=(64,), args=[c, b, a, np.uint32(1000)])  # a = c + b
    assert r1.landed and r2.landed, (r1.refusal, r2.refusal)
    np.testing.assert_array_equal(dev.download(a), np.arange(1000, dtype=np.float32) + 2.5)
    path = tmp_path / "run.wlcap"
    dev.save_capture(path)
    cap = wavelift.Capture.load(str(path))
    # the capture starts from the state before the first launch
    np.testing.assert_array_equal(
        np.frombuffer(cap.read(a.address, 4000), np.float32), np.arange(1000, dtype=np.float32)
    )
    res = wavelift.replay(cap, backend="numpy")
    assert [r.landed for r in res] == [True, True]
    assert [x.base for x in cap.memory.allocations] == [x.base for x in dev.memory.allocations]
    for mine, theirs in zip(dev.memory.allocations, cap.memory.allocations):
        assert bytes(mine.data) == bytes(theirs.data), mine.name
