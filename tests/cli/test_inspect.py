"""`wavelift info` / `wavelift trace` for a person reading a capture: kernel names (code-object
symbols, capture notes), `info --packets`, `--json` on both, the wave state at the first escape;
progress that names the native tier's background compile and the module cache right."""

import io
import json
import re

import numpy as np
from clipaths import CAPTURES, record_only

import wavelift

FULLSCREEN = CAPTURES / "radv-fullscreen-indirect-w32.wlcap"
LISTING = re.compile(r"^0x[0-9a-f]{16}\+0x[0-9a-f]{4,}  [A-Z0-9_]+")


def section(out: str, title: str) -> str:
    for block in out.split("\n\n"):
        if block.startswith(title):
            return block
    raise AssertionError(f"no section {title!r} in\n{out}")


def mutate_user_data(src, reg_name: str, value: int, out):
    """`src` with the one SET_SH_REG value of `reg_name` in its IBs replaced by `value`."""
    from testpaths import set_sh_register

    cap = wavelift.Capture.load(str(src))
    assert set_sh_register(cap, reg_name, value) == 1
    cap.save(str(out))
    return out


# --- kernel names --------------------------------------------------------------------------------
def test_names_from_the_code_object_in_guest_memory(wavelift_cmd, built):
    p = wavelift_cmd("info", built["vadd"])
    assert p.returncode == 0, p.stderr
    assert re.search(
        r"^dispatch 0 \(DISPATCH_DIRECT at 0x[0-9a-f]{16} dword \d+\): program vadd "
        r"\(code:basic-O2-w32-mubuf\.hsaco\+0x2200\)$",
        p.stdout,
        re.M,
    ), p.stdout
    assert re.search(r"^0\s+0x0000000100002200\s+4x1x1 x 256x1x1\s+32\s+8\s+-\s+-\s+vadd$", p.stdout, re.M)
    p = wavelift_cmd("trace", built["vadd"], "-d", "0")
    assert p.returncode == 0, p.stderr
    assert re.search(
        r"^  program\s+0x0000000100002200 vadd \(code:basic-O2-w32-mubuf\.hsaco"
        r"\+0x2200\)$",
        p.stdout,
        re.M,
    )


def test_names_from_capture_notes_are_escaped(wavelift_cmd, tmp_path):
    cap = wavelift.Capture.load(str(FULLSCREEN))
    cap.notes = dict(cap.notes, programs={"0xffff800000118300": "shade\x1b[2J\nfake line"})
    path = tmp_path / "named.wlcap"
    cap.save(str(path))
    p = wavelift_cmd("info", path)
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\nfake line" not in p.stdout
    shown = r"shade\\x1b\[2J\\nfake line"
    assert re.search(rf"^dispatch 1 .*: program {shown} \(bo1\+0x18300\)$", p.stdout, re.M), p.stdout
    p = wavelift_cmd("trace", path, "-d", "1")
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout
    assert re.search(rf"^  program\s+0xffff800000118300 {shown} \(bo1\+0x18300\)$", p.stdout, re.M)
    p = wavelift_cmd("info", path, "--json")
    assert json.loads(p.stdout)["dispatches"][0]["kernel"] == "shade\x1b[2J\nfake line"


def test_unnamed_programs_keep_the_allocation_name(wavelift_cmd):
    p = wavelift_cmd("info", FULLSCREEN)
    assert re.search(r"^dispatch 0 .*: program in bo1\+0x18300$", p.stdout, re.M)


def test_damaged_elf_images_give_no_names_and_no_error():
    """Every byte of a loaded image flipped in turn (and random tails): the symbol reader
    returns a list, never raises (guest memory is untrusted)."""
    from wavelift.commands.names import image_symbols

    cap = wavelift.Capture.load(str(CAPTURES.parent.parent.parent / "examples" / "vadd.wlcap"))
    code = cap.memory.allocations[0]
    img = bytes(cap.memory.view(code.base, code.size))
    assert "vadd" in [n for _, _, n, k in image_symbols(img) if k]
    rng = np.random.default_rng(1)
    for i in list(range(0, 0x400)) + list(rng.integers(0, len(img), 300)):
        b = bytearray(img)
        b[i] ^= 0xFF
        assert isinstance(image_symbols(bytes(b)), list)
    for n in (64, 65, 200, 1000):
        assert isinstance(image_symbols(img[:n] + rng.bytes(n)), list)


# --- info --packets ------------------------------------------------------------------------------
def test_info_packets_lists_every_packet_of_a_radv_capture(wavelift_cmd):
    p = wavelift_cmd("info", FULLSCREEN, "--packets")
    assert p.returncode == 0, p.stderr
    listing = section(p.stdout, "packet listing (").splitlines()
    total = int(re.search(r"^packets \((\d+), by opcode\)", p.stdout, re.M).group(1))
    assert listing[0].startswith(f"packet listing ({total};")
    lines = listing[1:]
    assert len(lines) == total == 567
    assert all(LISTING.match(line) for line in lines), [x for x in lines if not LISTING.match(x)][:3]
    assert lines[0] == (
        "0xffff800100025000+0x0000  INDIRECT_BUFFER        address=0xffff800100009000 "
        "low_bits=0 size_dw=328 chain=0 valid=0 vmid=0"
    )
    want = [
        r"^0xffff800100013000\+0x0058  SET_SH_REG\s+COMPUTE_PGM_LO=0x00001183$",
        r"^0xffff800100013000\+0x0064  SET_SH_REG\s+COMPUTE_PGM_RSRC1=0x602c0001 "
        r"COMPUTE_PGM_RSRC2=0x0000098e$",
        r"^0xffff800100013000\+0x00a0  DISPATCH_DIRECT\s+x=3 y=2 z=1 initiator=0x8045$",
        r"^0xffff800100013000\+0x00b4  SET_BASE\s+base_index=1 address=0xffff800100011000$",
        r"^0xffff800100013000\+0x00c4  DISPATCH_INDIRECT\s+data_offset=0 initiator=0x8041$",
        r"^0xffff800100013000\+0x0018  DMA_DATA\s+.*src=0xffff800000118300 dst=0xffff800000118300 "
        r"byte_count=544",
    ]
    for w in want:
        assert re.search(w, "\n".join(lines), re.M), w
    # the dispatch lines name the packet the listing shows at that offset (dword 40 = byte 0xa0)
    assert re.search(r"^dispatch 0 \(DISPATCH_DIRECT at 0xffff800100013000 dword 40\)", p.stdout, re.M)
    assert "packet listing" not in wavelift_cmd("info", FULLSCREEN).stdout


# --- --json -------------------------------------------------------------------------------------
def test_info_json(wavelift_cmd, built):
    p = wavelift_cmd("info", FULLSCREEN, "--json", "--packets")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["schema"] == "wavelift-info" and d["version"] == 1
    assert set(d) == {
        "schema",
        "version",
        "wavelift",
        "capture",
        "notes",
        "allocations",
        "streams",
        "packet_counts",
        "packets",
        "dispatches",
        "stream_refusals",
        "expected",
    }
    assert d["capture"]["target"] == "gfx1030" and len(d["allocations"]) == 11
    assert d["packet_counts"]["DISPATCH_INDIRECT"] == 1
    assert len(d["packets"]) == sum(d["packet_counts"].values())
    pk = next(
        x
        for x in d["packets"]
        if x["opcode"] == "SET_SH_REG" and x["fields"]["registers"][0]["name"] == "COMPUTE_PGM_LO"
    )
    assert pk["fields"]["registers"] == [{"name": "COMPUTE_PGM_LO", "address": "0x0b830", "value": 0x1183}]
    assert pk["ib"] == "0xffff800100013000" and pk["offset"] == 0x58 // 4
    d0, d1 = d["dispatches"]
    assert set(d0) == {"index", "refusal", "config", "kernel", "program_in", "packet"}
    assert d0["config"]["program_address"] == "0xffff800000118300" and d0["kernel"] is None
    assert d1["packet"] == {"ib": "0xffff800100013000", "offset": 49, "opcode": "DISPATCH_INDIRECT"}
    assert json.loads(wavelift_cmd("info", FULLSCREEN, "--json").stdout)["packets"] is None

    d = json.loads(wavelift_cmd("info", built["two"], "--json").stdout)
    assert d["dispatches"][0]["kernel"] == "vadd"
    assert d["dispatches"][1]["config"] is None
    assert d["dispatches"][1]["refusal"]["code"] == "dispatch.unsupported_mode"


def test_trace_json(wavelift_cmd, built):
    p = wavelift_cmd("trace", built["vadd"], "-d", "0", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["schema"] == "wavelift-trace" and d["version"] == 1
    assert set(d) == {
        "schema",
        "version",
        "wavelift",
        "capture",
        "backend",
        "mode",
        "dispatch",
        "program",
        "wave_state",
    }
    r = d["dispatch"]
    assert r["landed"] and r["kernel"] == "vadd" and r["program_in"].endswith("+0x2200")
    assert r["write_spans"] and r["stats"]["waves"] == 32
    ins = d["program"]["instructions"]
    assert ins[-1]["text"] == "s_endpgm" and ins[0]["offset"] == 0
    assert any(i["annotation"] and i["annotation"].startswith("window (global") for i in ins)
    assert d["wave_state"] is None
    p = wavelift_cmd("trace", built["two"], "-d", "1", "--json")
    assert p.returncode == 1
    d = json.loads(p.stdout)
    assert d["dispatch"]["config"] is None and d["program"] is None


# --- the wave state at the first escape -----------------------------------------------------------
def test_trace_wave_state_at_the_first_escape(wavelift_cmd, built):
    p = wavelift_cmd("trace", built["escape"], "-d", "0")
    assert p.returncode == 1
    st = section(p.stdout, "wave state at the first escape")
    assert st.startswith("wave state at the first escape (wave 0, lane 0;")
    assert "  pc    0x80: global_load_dword v3, v[4:5], off  (load at 0x0000700000000000)" in st
    assert re.search(r"^  EXEC  0xffffffff  VCC 0x[0-9a-f]{8}  M0 0x[0-9a-f]{8}  SCC [01]$", st, re.M)
    assert re.search(r"^    s0   ", st, re.M) and re.search(r"^    v0   ", st, re.M)
    # v[4:5] of lane 0 hold the address that escaped
    vrow = re.search(r"^    v0   (.*)$", st, re.M).group(1).replace("*", " ").split()
    assert vrow[4:6] == ["00000000", "00007000"]

    d = json.loads(wavelift_cmd("trace", built["escape"], "-d", "0", "--json").stdout)
    ws = d["wave_state"]
    assert {
        "wave",
        "lane",
        "pc",
        "instruction",
        "address",
        "kind",
        "wave_size",
        "exec",
        "vcc",
        "m0",
        "scc",
        "sgprs",
        "vgprs",
        "pending",
    } == set(ws)
    assert (ws["wave"], ws["lane"], ws["pc"], ws["kind"]) == (0, 0, 0x80, "load")
    assert ws["address"] == "0x0000700000000000" and ws["exec"] == 0xFFFFFFFF
    assert len(ws["sgprs"]) == 106 and all(len(v) == 32 for v in ws["vgprs"])
    assert [ws["vgprs"][4][k] for k in range(3)] == [0, 4, 8]  # each lane's address
    assert all(ws["vgprs"][5][k] == 0x7000 for k in range(32))
    assert 4 in ws["pending"]["vgprs"]  # v[4:5] were written in the access's block


def test_trace_wave_state_of_a_mutated_radv_capture(wavelift_cmd, tmp_path):
    """push_consts_ubo with its descriptor set pointer (USER_DATA_2) moved off every allocation:
    the scalar load through it escapes, and the dump shows the pointer in s2."""
    path = mutate_user_data(
        CAPTURES / "radv-push_consts_ubo-w32.wlcap",
        "COMPUTE_USER_DATA_2",
        0x7FFF0000,
        tmp_path / "escapes.wlcap",
    )
    p = wavelift_cmd("trace", path, "-d", "0")
    assert p.returncode == 1
    assert "result: refused: escape:" in p.stdout
    st = section(p.stdout, "wave state at the first escape")
    assert "s_load_dwordx4 s[0:3], s[2:3], null  (load at 0xffff80007fff0000)" in st
    srow = re.search(r"^    s0   (.*)$", st, re.M).group(1).replace("*", " ").split()
    assert srow[2:4] == ["7fff0000", "ffff8000"]
    ws = json.loads(wavelift_cmd("trace", path, "-d", "0", "--json").stdout)["wave_state"]
    assert ws["sgprs"][2] == 0x7FFF0000 and ws["kind"] == "load"


def test_no_wave_state_without_an_escape_and_the_hook_is_cleared(cli, built):
    from wavelift.backends.numpy import runtime

    rc, out, _ = cli("trace", built["vadd"], "-d", "0")
    assert rc == 0 and "wave state" not in out
    rc, out, _ = cli("trace", built["escape"], "-d", "0")
    assert rc == 1 and "wave state at the first escape" in out
    assert runtime.WAVE_STATE is None


# --- progress and the module cache ----------------------------------------------------------------
def test_module_cache_named_right():
    from wavelift.commands.common import module_cache_text

    assert module_cache_text({"module_cache_hit": True}) == "hit"
    assert module_cache_text({"module_cache_hit": False, "native_library": "disk cache"}) == "disk hit"
    assert module_cache_text({"module_cache_hit": False, "native_library": "compiled"}) == "miss"
    assert module_cache_text({"module_cache_hit": False}) == "miss"
    assert module_cache_text({"module_cache_hit": False, "cubin": "disk cache"}) == "disk hit"
    assert module_cache_text({"module_cache_hit": False, "cubin": "compiled"}) == "miss"
    assert module_cache_text({}) == "-"


def test_progress_names_the_background_compile():
    from wavelift.commands.common import Progress
    from wavelift.run.result import DispatchResult

    out = io.StringIO()
    pr = Progress(True, stream=out)
    pr.done(
        3, DispatchResult(3, None, None, stats={"time_s": 0.5, "native": False, "native_compiling": True})
    )
    pr.done(4, DispatchResult(4, None, None, stats={"time_s": 0.5, "native": True}))
    a, b = out.getvalue().splitlines()
    assert a == (
        "wavelift: dispatch 3 landed in 0.500s; native tier compiling in the background: NumPy blocks"
    )
    assert b == "wavelift: dispatch 4 landed in 0.500s"


def test_run_says_disk_hit_when_the_native_library_came_from_the_disk_cache(wavelift_cmd, built, tmp_path):
    import os

    d = tmp_path / "native-cache"
    d.mkdir(mode=0o700)
    env = dict(os.environ, WAVELIFT_NATIVE_CACHE=str(d), WL_NATIVE="on", WAVELIFT_NATIVE="on")
    rows = []
    for _ in range(2):
        p = wavelift_cmd("run", built["vadd"], env=env)
        assert p.returncode == 0, p.stderr
        rows.append(re.search(r"^0\s+0x[0-9a-f]{16}\s.*$", p.stdout, re.M).group(0))
    assert re.search(r"\smiss\s", rows[0]) and re.search(r"\sdisk hit\s", rows[1]), rows


def test_trace_wave_state_past_the_budget(wavelift_cmd, tmp_path):
    """scratch_game with its step count (USER_DATA_4) mutated to 2^32-1 spins until the budget:
    trace dumps the spinning wave as a hang dump would, its loop bound in s4."""
    path = mutate_user_data(
        CAPTURES / "radv-scratch_game-chained-w64.wlcap",
        "COMPUTE_USER_DATA_4",
        0xFFFFFFFF,
        tmp_path / "spins.wlcap",
    )
    p = wavelift_cmd("trace", path, "-d", "0", "--budget", "5000")
    assert p.returncode == 1
    assert "result: refused: dispatch.budget_exceeded" in p.stdout
    st = section(p.stdout, "wave state past its budget")
    assert re.search(r"^  EXEC  0xffffffffffffffff  VCC 0x[0-9a-f]{16}", st, re.M)
    srow = re.search(r"^    s0   (.*)$", st, re.M).group(1).replace("*", " ").split()
    assert srow[4] == "ffffffff"
    ws = json.loads(wavelift_cmd("trace", path, "-d", "0", "--budget", "5000", "--json").stdout)["wave_state"]
    assert ws["kind"] == "budget_exceeded" and ws["address"] is None and ws["wave_size"] == 64
    assert ws["sgprs"][4] == 0xFFFFFFFF and all(len(v) == 64 for v in ws["vgprs"])


def test_trace_wave_state_of_a_jump_off_the_program(wavelift_cmd, tmp_path):
    """s_setpc_b64 s[0:1] with s[0:1] = two bytes into the code: program.bad_jump, and the dump
    names the target and shows it in s0/s1."""

    from wavelift import pm4

    dev = wavelift.Device("gfx1030", execute=record_only)
    code = dev.upload(np.array([0xBE802000] + [0xBF810000] * 63, "<u4"), name="jumper")
    a = int(code.address)
    dev.submit_dispatch(
        {
            "COMPUTE_PGM_LO": (a >> 8) & 0xFFFFFFFF,
            "COMPUTE_PGM_HI": a >> 40,
            "COMPUTE_PGM_RSRC1": 0,
            "COMPUTE_PGM_RSRC2": 2 << 1,
            "COMPUTE_NUM_THREAD_X": 32,
            "COMPUTE_NUM_THREAD_Y": 1,
            "COMPUTE_NUM_THREAD_Z": 1,
            "COMPUTE_USER_DATA_0": (a + 2) & 0xFFFFFFFF,
            "COMPUTE_USER_DATA_1": a >> 32,
        },
        (1, 1, 1),
        pm4.initiator(wave32=True),
    )
    path = tmp_path / "jumps.wlcap"
    dev.save_capture(path)
    p = wavelift_cmd("trace", path, "-d", "0")
    assert p.returncode == 1 and "result: refused: program.bad_jump" in p.stdout
    st = section(p.stdout, "wave state jumping off the program")
    assert f"  pc    0x0: s_setpc_b64 s[0:1]  (the last instruction of that block, to 0x{a + 2:016x})" in st
    srow = re.search(r"^    s0   (.*)$", st, re.M).group(1).split()
    assert [int(x, 16) for x in srow[:2]] == [(a + 2) & 0xFFFFFFFF, a >> 32]
