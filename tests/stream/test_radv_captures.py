"""Real RADV 22.3 streams (tests/fixtures/radv, converted to tests/fixtures/captures/*.wlcap by
tools/radv_to_wlcap.py) walk to their dispatches, and each DispatchConfig matches what
aco-compile says for the same shader (tests/fixtures/gfx1030/aco/*.json)."""

import json
import re
import sys

import pytest
from testpaths import FIXTURES, ROOT

from wavelift import Capture, replay
from wavelift.run.result import DispatchResult

RADV = FIXTURES / "radv"
CAPS = FIXTURES / "captures"
NAMES = (
    sorted(p.name for p in RADV.iterdir() if (p / "raw" / "submit0" / "capture.json").exists())
    if RADV.exists()
    else []
)


def command(name):
    txt = (RADV / name / "command.txt").read_text()
    shader = re.search(r"glsl/(\w+)\.comp", txt).group(1)
    groups = tuple(int(x) for x in re.search(r"--groups (\d+),(\d+),(\d+)", txt).groups())
    return shader, groups, "--indirect" in txt


def target(name):
    return "gfx1010" if "RADV_FORCE_FAMILY=navi10" in (RADV / name / "command.txt").read_text() else "gfx1030"


def run(cap):
    configs = []

    def execute(memory, config, index):
        configs.append(config)
        return DispatchResult(index, config)

    rs = replay(cap, execute=execute)
    return rs, configs


def test_every_raw_capture_is_converted():
    assert NAMES, "no raw RADV captures found"
    assert sorted(p.name for p in CAPS.glob("radv-*.wlcap")) == [f"radv-{n}.wlcap" for n in NAMES]


@pytest.mark.parametrize("name", NAMES)
def test_radv_capture_matches_aco(name):
    shader, groups, indirect = command(name)
    wave = 32 if name.endswith("-w32") else 64
    gfx = target(name)
    aco = json.loads((FIXTURES / gfx / "aco" / f"{shader}-w{wave}.json").read_text())
    prog = (FIXTURES / gfx / "aco" / aco["code"]["bin_file"]).read_bytes()
    cap = Capture.load(CAPS / f"radv-{name}.wlcap")
    rs, configs = run(cap)
    assert all(r.landed for r in rs), [str(r.refusal) for r in rs]
    assert len(configs) == (2 if indirect else 1)
    regs = aco["registers"]
    for c in configs:
        assert cap.read(c.program_address, len(prog)) == prog
        assert (c.rsrc1, c.rsrc2, c.rsrc3) == tuple(int(regs[k], 16) for k in ("rsrc1", "rsrc2", "rsrc3"))
        assert c.wave_size == aco["wave_size"] == wave
        assert c.block == tuple(aco["local_size"]) == tuple(regs["compute_num_thread_xyz"])
        assert c.num_groups == groups and c.group_start == (0, 0, 0)
        assert len(c.user_sgprs) == aco["user_sgprs"]["count"]
        # RADV writes the scratch ring's s[0:1] only when there is scratch; nothing else is unwritten
        ring_sgprs = (
            ()
            if aco["scratch"]["enabled"]
            else tuple(
                tuple(
                    tuple(range(e["first"], e["first"] + e["count"]))
                    for e in aco["user_sgprs"]["layout"]
                    if e["what"] == "scratch_ring_offsets"
                )
            )[0]
        )
        assert c.unwritten_user_sgprs == ring_sgprs
        hw = {s["what"]: s["first"] for s in aco["system_sgprs"] if s.get("written_by_hardware", True)}
        assert c.system_sgprs == hw
        assert c.tidig_comp_cnt + 1 == sum(v.get("written_by_hardware", False) for v in aco["input_vgprs"])
        assert c.lds_bytes == aco["lds"]["bytes"]
        sc = aco["scratch"]
        assert c.scratch_enabled == sc["enabled"]
        if sc["enabled"]:
            assert c.scratch_wave_bytes == sc["tmpring_wavesize"] * sc["tmpring_wavesize_unit_bytes"]
            assert c.scratch_wave_bytes >= sc["bytes_per_wave"]
            ring_lo, ring_hi = c.user_sgprs[0], c.user_sgprs[1]
            ring = (ring_lo | (ring_hi & 0xFFFF) << 32) | 0xFFFF << 48
            assert cap.memory.find(ring, c.scratch_wave_bytes * c.tmpring_waves) is not None
        for entry in aco["user_sgprs"]["layout"]:
            if entry["what"] == "grid_size" and entry["count"] == 3:
                f = entry["first"]
                assert c.user_sgprs[f : f + 3] == groups


def test_converter_reproduces_committed_captures(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import radv_to_wlcap
    finally:
        sys.path.pop(0)
    for name in NAMES:
        out = tmp_path / f"{name}.wlcap"
        cap = radv_to_wlcap.convert(str(RADV / name / "raw" / "submit0"), target(name), name=name)
        # expected results are added after conversion (tools/lavapipe_run/record.sh: lavapipe's bytes)
        cap.expected = Capture.load(CAPS / f"radv-{name}.wlcap").expected
        cap.save(out)
        assert out.read_bytes() == (CAPS / f"radv-{name}.wlcap").read_bytes(), name


def test_chained_capture_follows_the_chain():
    name = [n for n in NAMES if "chained" in n]
    if not name:
        pytest.skip("no chained capture")
    cap = Capture.load(CAPS / f"radv-{name[0]}.wlcap")
    from wavelift.stream import pm4
    from wavelift.stream.registers import RegisterFile
    from wavelift.stream.walker import StreamWalker

    chains = []

    def on_packet(ib, p):
        if p.opcode == pm4.INDIRECT_BUFFER and p.type == 3 and p.fields()["chain"]:
            chains.append(p.fields()["address"])

    events = []
    w = StreamWalker(cap.memory, RegisterFile("gfx1030"), events.append, on_packet=on_packet)
    for a, n in cap.streams:
        w.walk(a, n)
    assert chains and len(events) == 1
