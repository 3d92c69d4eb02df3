"""RADV-style dispatch of aco-compile shaders (Device.load_aco_shader), checked field by field
against the aco-compile JSON and against what RADV 22.3 itself emitted for the same shaders
(tests/fixtures/radv/*: PM4 listing + every buffer object), through the real path
(Device -> PM4 -> stream walker -> dispatch setup)."""

import json
import re
import struct

import numpy as np
import pytest
from testpaths import FIXTURES, ROOT

import wavelift
from wavelift.driver import LaunchError
from wavelift.driver.aco import Image, buffer_descriptor, image_descriptor
from wavelift.driver.device import WINDOW_HI
from wavelift.errors import Refusal
from wavelift.run.result import DispatchResult

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
ACO = [b for b in MANIFEST["binaries"] if b["kind"] in ("aco", "radv-llvm")]
OK_CODES = (None, "backend.unavailable")


def config_only(memory, config, index):
    """Stands in for execution: these tests check the config the real stream path builds."""
    return DispatchResult(index, config, Refusal("backend.unavailable", "config-only test"))


def _bind_all(dev, info, n=4096):
    buffers, images = {}, {}
    for s in info["descriptor_layout"]["sets"]:
        for b in s["bindings"]:
            key = (s["set"], b["binding"])
            if b["type"] in ("ubo", "ssbo", "ubo_dyn", "ssbo_dyn"):
                buffers[key] = dev.alloc(n)
            elif b["type"] == "storage_image":
                images[key] = Image(dev.alloc(16 * 16 * 4), 16, 16, "rgba8")
    return buffers, images


@pytest.mark.parametrize("entry", ACO, ids=[b["path"].split("fixtures/")[1] for b in ACO])
def test_aco_dispatch_config_golden(entry):
    info = json.loads((ROOT / entry["json"]).read_text())
    dev = wavelift.Device(entry["target"], execute=config_only)
    sh = dev.load_aco_shader(ROOT / entry["json"])
    buffers, images = _bind_all(dev, info)
    pc = bytes(range(info["push_constants"]["size"]))
    groups = (3, 2, 1)
    r = sh.launch(groups=groups, buffers=buffers, images=images, push_constants=pc)
    regs = info["registers"]
    rec = sh.last_launch
    assert rec.registers["COMPUTE_PGM_RSRC2"] == int(regs["rsrc2"], 16)
    assert r.refusal is None or r.refusal.code in OK_CODES, r.refusal
    c = r.config
    assert c is not None
    assert c.program_address == sh.address and c.program_address % 256 == 0
    assert c.program_address >> 32 == WINDOW_HI
    assert dev.memory.read(sh.address, len(sh.code)) == (ROOT / entry["path"]).read_bytes()
    assert c.wave_size == info["wave_size"] == entry["wave_size"]
    assert bool(c.initiator & (1 << 15)) == bool(regs["dispatch_initiator_cs_w32_en"])
    assert (c.rsrc1, c.rsrc2, c.rsrc3) == tuple(int(regs[k], 16) for k in ("rsrc1", "rsrc2", "rsrc3"))
    assert c.block == tuple(info["local_size"]) == tuple(regs["compute_num_thread_xyz"])
    assert c.group_end == groups and not c.partial_tg
    assert c.tidig_comp_cnt == regs["rsrc2_fields"]["TIDIG_COMP_CNT"]
    assert c.lds_bytes == info["lds"]["bytes"]
    # user SGPRs, one layout entry at a time
    user = c.user_sgprs
    assert len(user) == info["user_sgprs"]["count"] == regs["rsrc2_fields"]["USER_SGPR"]
    for e in info["user_sgprs"]["layout"]:
        f, n, what = e["first"], e["count"], e["what"]
        vals = user[f : f + n]
        if what == "scratch_ring_offsets":
            if info["scratch"]["enabled"]:
                va = vals[0] | ((vals[1] & 0xFFFF) << 32)
                assert vals[1] >> 31 == 1  # SWIZZLE_ENABLE (GFX10/10.3)
                assert va == sh.last_launch.scratch_address & ((1 << 48) - 1)
            else:
                assert f in c.unwritten_user_sgprs  # RADV leaves it unwritten
        elif what == "descriptor_set":
            s = next(s for s in info["descriptor_layout"]["sets"] if s["set"] == e["set"])
            va = (WINDOW_HI << 32) | vals[0]
            mem = dev.memory.read(va, s["size_bytes"])
            for b in s["bindings"]:
                key = (s["set"], b["binding"])
                if b["type"] in ("ubo", "ssbo"):
                    want = buffer_descriptor(buffers[key].address, buffers[key].nbytes, False)
                    assert list(struct.unpack_from("<4I", mem, b["offset"])) == want
                elif b["type"] == "storage_image":
                    want = image_descriptor(images[key], False)
                    assert list(struct.unpack_from("<8I", mem, b["offset"])) == want
        elif what == "inline_push_constants":
            assert list(vals) == [
                struct.unpack_from("<I", pc.ljust(256, b"\0"), 4 * d)[0] for d in e["push_constant_dwords"]
            ]
        elif what == "grid_size":
            if n == 3:
                assert tuple(vals) == groups
            else:
                ptr = vals[0] | (vals[1] << 32)
                assert struct.unpack("<3I", dev.memory.read(ptr, 12)) == groups
        elif what == "push_constants":
            va = (WINDOW_HI << 32) | vals[0]
            assert dev.memory.read(va, len(pc)) == pc
        else:
            raise AssertionError(f"layout entry {what} not checked")
    # system SGPRs: the positions ACO's p_startpgm declared
    for s in info["system_sgprs"]:
        if s["what"] == "scratch_wave_offset":
            if s.get("written_by_hardware", True):
                assert c.system_sgprs["scratch_wave_offset"] == s["first"]
            else:
                assert "scratch_wave_offset" not in c.system_sgprs
        else:
            assert c.system_sgprs[s["what"]] == s["first"], s
    # scratch
    assert c.scratch_enabled == info["scratch"]["enabled"]
    if c.scratch_enabled:
        assert c.scratch_wave_bytes == info["scratch"]["tmpring_wavesize"] * 1024
        assert c.scratch_wave_bytes >= info["scratch"]["bytes_per_wave"]
        waves = 3 * 2 * -(-np.prod(info["local_size"]) // info["wave_size"])
        assert c.tmpring_waves == waves
        assert dev.memory.find(sh.last_launch.scratch_address, waves * c.scratch_wave_bytes)


# ---- against RADV's own stream -----------------------------------------------------------------


def _listing(path):
    """SET_SH_REG values (last write wins) and the DISPATCH_DIRECT dwords of a pm4_listing.txt."""
    regs, dispatch = {}, None
    for line in path.read_text().splitlines():
        if "SET_SH_REG " in line and "SET_SH_REG_INDEX" not in line:
            for name, val in re.findall(r"(\w+)=0x([0-9a-f]+)", line):
                regs[name] = int(val, 16)
        m = re.search(r"DISPATCH_DIRECT ((?:0x[0-9a-f]+ ?){4})", line)
        if m:
            dispatch = [int(x, 16) for x in m.group(1).split()]
    return regs, dispatch


def _buffers_txt(path):
    out = {}
    for line in path.read_text().splitlines():
        kv = dict(x.split("=", 1) for x in line.split())
        if "set" in kv:
            out[(int(kv["set"]), int(kv["binding"]))] = (int(kv["va"], 16), int(kv["size"]))
        elif "groups" in kv:
            out["groups"] = tuple(int(x) for x in kv["groups"].split(","))
    return out


RADV = [
    ("push_consts_ubo-w32", "gfx1030/aco/push_consts_ubo-w32"),
    ("scratch_array-w64", "gfx1030/aco/scratch_array-w64"),
    ("scratch_array-w32", "gfx1030/aco/scratch_array-w32"),
]


@pytest.mark.parametrize("cap,fixture", RADV)
def test_matches_radv_stream(cap, fixture):
    """Same shader, same buffers at the same VAs, same push constants: our registers, user SGPRs
    and descriptor-set bytes equal RADV's, except addresses of memory we place ourselves."""
    d = FIXTURES / "radv" / cap
    want, want_dispatch = _listing(d / "pm4_listing.txt")
    bufs = _buffers_txt(d / "raw" / "buffers.txt")
    dev = wavelift.Device("gfx1030", execute=config_only)
    sh = dev.load_aco_shader(FIXTURES / f"{fixture}.json")
    radv_code = (d / "raw/submit0/bo0001_ffff800000100000.bin").read_bytes()
    prog = ((want["COMPUTE_PGM_HI"] << 40) | (want["COMPUTE_PGM_LO"] << 8)) - 0x8000_0010_0000
    assert radv_code[prog : prog + len(sh.code)] == sh.code  # the very same machine code
    bound = {}
    for key, val in bufs.items():
        if key == "groups":
            continue
        va, size = val
        a = dev.memory.alloc(size, name=f"radv{key}", address=va)
        bound[key] = wavelift.driver.Buffer(a, size)
    push = d / "inputs" / "push.bin"
    pc = push.read_bytes() if push.exists() else b""
    r = sh.launch(groups=bufs["groups"], buffers=bound, push_constants=pc)
    assert r.config is not None and (r.refusal is None or r.refusal.code in OK_CODES)
    got = sh.last_launch.registers
    for name in (
        "COMPUTE_PGM_HI",
        "COMPUTE_PGM_RSRC1",
        "COMPUTE_PGM_RSRC2",
        "COMPUTE_PGM_RSRC3",
        "COMPUTE_RESOURCE_LIMITS",
        "COMPUTE_NUM_THREAD_X",
        "COMPUTE_NUM_THREAD_Y",
        "COMPUTE_NUM_THREAD_Z",
    ):
        assert got[name] == want[name], name
    assert want_dispatch == list(bufs["groups"]) + [sh.last_launch.initiator]
    # TMPRING: WAVESIZE equal; WAVES is ours (waves in this dispatch), RADV's is 32 * CUs
    if "COMPUTE_TMPRING_SIZE" in want:
        assert got["COMPUTE_TMPRING_SIZE"] >> 12 == want["COMPUTE_TMPRING_SIZE"] >> 12
    # user data: same registers written; pointers differ only where we placed the memory
    want_user = {int(k.rsplit("_", 1)[1]): v for k, v in want.items() if k.startswith("COMPUTE_USER_DATA_")}
    got_user = {int(k.rsplit("_", 1)[1]): v for k, v in got.items() if k.startswith("COMPUTE_USER_DATA_")}
    assert set(got_user) == set(want_user)
    sets = {e["first"]: e for e in sh.user_sgpr_layout}
    for i, v in want_user.items():
        e = next(e for e in sh.user_sgpr_layout if e["first"] <= i < e["first"] + e["count"])
        if e["what"] == "descriptor_set":
            # compare the set's bytes: RADV's BO content vs ours
            radv_set_va = (WINDOW_HI << 32) | v
            bo = next(
                p
                for p in (d / "raw/submit0").iterdir()
                if p.name.startswith("bo")
                and int(p.stem.split("_")[1], 16)
                <= radv_set_va
                < int(p.stem.split("_")[1], 16) + p.stat().st_size
            )
            off = radv_set_va - int(bo.stem.split("_")[1], 16)
            s = sh.sets[e["set"]]
            radv_bytes = bo.read_bytes()[off : off + s["size_bytes"]]
            ours = dev.memory.read((WINDOW_HI << 32) | got_user[i], s["size_bytes"])
            assert ours == radv_bytes
        elif e["what"] == "scratch_ring_offsets":
            if i == e["first"] + 1:
                assert v >> 31 == got_user[i] >> 31 == 1  # SWIZZLE_ENABLE
                assert (v & 0xFFFF) >> 15 == (got_user[i] & 0xFFFF) >> 15 == 1  # upper half
        else:
            assert got_user[i] == v, (i, e["what"])  # push constants, grid size
    assert sets  # layout was non-empty


# ---- misuse ------------------------------------------------------------------------------------


def test_aco_errors(tmp_path):
    dev = wavelift.Device("gfx1030")
    sh = dev.load_aco_shader(FIXTURES / "gfx1030/aco/push_consts_ubo-w32.json")
    with pytest.raises(LaunchError, match="no descriptor set 5"):
        sh.launch(groups=(1,), buffers={(5, 0): dev.alloc(16)})
    with pytest.raises(LaunchError, match="push constants"):
        sh.launch(groups=(1,), buffers={}, push_constants=bytes(100))
    with pytest.raises(LaunchError, match="Buffer"):
        sh.launch(groups=(1,), buffers={(0, 0): 1234})
    with pytest.raises(wavelift.errors.UserError, match="gfx1030"):
        wavelift.Device("gfx1010").load_aco_shader(FIXTURES / "gfx1030/aco/push_consts_ubo-w32.json")
    with pytest.raises(wavelift.errors.UserError, match="cannot read"):
        dev.load_aco_shader(tmp_path / "missing.json")
    dt = dev.load_aco_shader(FIXTURES / "gfx1030/aco/descriptor_types-w32.json")
    with pytest.raises(LaunchError, match="not supported"):
        dt.launch(groups=(1,), buffers={(1, 0): dev.alloc(64)})  # a texel buffer


def test_aco_ndarray_binding_and_replay(tmp_path):
    dev = wavelift.Device("gfx1030")
    sh = dev.load_aco_shader(FIXTURES / "gfx1030/aco/lds_reduce-w64.json")
    r = sh.launch(groups=(2,), buffers={(0, 0): np.arange(512, dtype=np.uint32), (0, 1): dev.alloc(64)})
    assert r.config is not None and r.config.lds_bytes == 1024
    p = tmp_path / "aco.wlcap"
    dev.save_capture(p)
    res = wavelift.replay(str(p))
    assert len(res) == 1 and res[0].config == r.config
