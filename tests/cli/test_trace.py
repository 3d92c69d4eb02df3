"""`wavelift trace`: config, outcome, windows with reasons, write spans, annotated program."""

import re

import pytest
from clipaths import CAPTURES

import wavelift


def section(out: str, title: str) -> str:
    """The block of lines starting with `title`, up to the next blank line."""
    for block in out.split("\n\n"):
        if block.startswith(title):
            return block
    raise AssertionError(f"no section {title!r} in\n{out}")


def test_trace_vadd(cli, built):
    cap = wavelift.Capture.load(built["vadd"])
    addr = {a.name: a.base for a in cap.memory}
    rc, out, err = cli("trace", built["vadd"], "--dispatch", "0")
    assert rc == 0, err
    cfg = section(out, "configuration:")
    assert re.search(r"wave size\s+32$", cfg, re.M)
    assert "4x1x1 x 256x1x1" in cfg
    assert re.search(r"s\[6:7\] -> 0x[0-9a-f]{16} \(kernargs:vadd#0\)", cfg)
    assert re.search(r"workgroup_id_x \(written by the hardware\)", cfg)
    assert "result: landed" in out
    win = section(out, "windows (")
    for name in ("a", "b", "c"):
        assert re.search(
            rf"^0x{addr[name]:016x}\s+4096\s+{name}\s+pointer in kernargs:vadd#0\+0x", win, re.M
        ), win
    spans = section(out, "write spans (1, 4096 bytes landed)")
    assert re.search(rf"^0x{addr['c']:016x}\s+4096\s+c$", spans, re.M)
    prog = section(out, "program (")
    assert re.search(
        r"s_load_dword\w* s\[\d+:\d+\], s\[6:7\].*; window \(scalar load from "
        r"s\[6:7\] = user SGPRs -> 0x[0-9a-f]+: window 'kernargs:vadd#0'\)",
        prog,
    )
    assert re.search(r"global_store_dword v\[\d+:\d+\], v\d+, off\s+; window \(global", prog)
    assert prog.rstrip().endswith("s_endpgm")
    assert "ESCAPE:" not in prog


def test_trace_escape(cli, built):
    rc, out, err = cli("trace", built["escape"], "--dispatch", "0")
    assert rc == 1
    assert "result: refused: escape:" in out
    assert "escapes (" in out
    prog = section(out, "program (")
    esc = [l for l in prog.splitlines() if "ESCAPE:" in l]
    assert esc and all("global_load_dword" in l for l in esc)
    assert "ESCAPE: load at 0x0000700000000000 (wave 0 lane 0)" in esc[0]


def test_trace_refused_at_setup(cli, built):
    rc, out, err = cli("trace", built["two"], "--dispatch", "1")
    assert rc == 1
    assert "refused before it could run: dispatch.unsupported_mode" in out


@pytest.mark.parametrize("name", ["radv-scratch_array-w32", "radv-scratch_array-w64"])
def test_trace_scratch_annotations(cli, name):
    rc, out, err = cli("trace", CAPTURES / f"{name}.wlcap", "-d", "0")
    prog = section(out, "program (")
    lines = [l for l in prog.splitlines() if re.search(r"\bscratch_(load|store)_", l)]
    assert lines, prog
    assert all(l.rstrip().endswith("; scratch") for l in lines)
    assert re.search(r"scratch\s+\d+ bytes per wave", out)


def test_trace_ir(cli, built):
    """`--ir` adds the program's IR after the passes, block by block: the loads and the store of
    vadd, values typed, every block ending in its terminator; the other sections stay."""
    rc, out, err = cli("trace", built["vadd"], "--dispatch", "0", "--ir")
    assert rc == 0, err
    assert "result: landed" in out and section(out, "program (")
    ir = section(out, "IR after the passes (")
    head, *lines = ir.splitlines()
    assert re.fullmatch(r"IR after the passes \(\d+ blocks, wave32, MODE 0x[0-9a-f]+\):", head)
    blocks = [l for l in lines if l.startswith("block ")]
    assert blocks and all(
        re.match(r"block \d+ @ 0x[0-9a-f]+ \(\d+ instructions; live after: ", b) for b in blocks
    )
    ops = [l.strip() for l in lines if l.startswith("  ") and not l.startswith("  ->")]
    assert any(
        re.fullmatch(r"%\d+:u32(\[\])? = load\.u32 %\d+:u64(\[\])?, %\d+:b1(\[\])?.*space='global'.*", o)
        for o in ops
    )
    assert any(o.startswith("store.") and "space='global'" in o for o in ops)
    assert sum(l.startswith("  -> ") for l in lines) == len(blocks)
    assert lines[-1].strip() == "-> end"
    _, plain, _ = cli("trace", built["vadd"], "--dispatch", "0")
    assert "IR after the passes" not in plain
