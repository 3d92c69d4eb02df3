"""`wavelift info CAPTURE`: what a capture holds, without running any dispatch.

The file is never written: packets that write guest memory (WRITE_DATA, COPY_DATA, DMA_DATA,
RELEASE_MEM) change only the copy in memory that info walks to find the dispatches. Names and
notes from the capture are printed with control characters escaped.
"""
# The walk runs on this process's private copy (decision 0018); escaping: wavelift.terminal.shown.
from __future__ import annotations

import os

from ..terminal import shown
from .common import add_debug, fmt_grid, hexa, load_capture, name_of, table, where


def walk_capture(cap):
    """Walk every stream without executing dispatches. Returns (packet counts by name,
    DispatchResults holding only configs, stream refusals [(stream index, Refusal)],
    {dispatch index: (IB address, dword offset, packet name)})."""
    from ..replay import run_stream
    from ..result import DispatchResult
    from ..stream.registers import RegisterFile
    counts: dict[str, int] = {}
    last = {}
    located: dict = {}

    def on_packet(ib, p):
        counts[p.name] = counts.get(p.name, 0) + 1
        last["at"] = (ib, p.offset, p.name)

    def record(memory, config, index):
        located[index] = last.get("at")
        return DispatchResult(index, config, None, stats={})

    regs = RegisterFile(cap.target)
    results: list = []
    stopped = []
    for k, (address, size) in enumerate(cap.streams):
        ref = run_stream(cap.memory, cap.target, address, size, regs, record, results,
                         on_packet=on_packet)
        if ref is not None:
            stopped.append((k, ref))
            break
    return counts, results, stopped, located


def cmd_info(a) -> int:
    cap = load_capture(a.capture)
    size = os.path.getsize(a.capture)
    print(f"capture   {a.capture} ({size} bytes, format version 1)")
    print(f"target    {cap.target}")
    if cap.notes:
        for k, v in sorted(cap.notes.items()):
            print(f"note      {shown(k)}: {shown(v)}")
    allocs = cap.memory.allocations
    print()
    print(f"allocations ({len(allocs)}, {sum(x.size for x in allocs)} bytes):")
    print(table([[str(i), hexa(x.base), hexa(x.end), str(x.size), name_of(x)]
                 for i, x in enumerate(allocs)], ["#", "base", "end", "size", "name"], {0, 3}))
    print()
    print(f"streams ({len(cap.streams)}):")
    print(table([[str(i), hexa(ad), str(n), where(cap.memory, ad)]
                 for i, (ad, n) in enumerate(cap.streams)], ["#", "address", "dwords", "in"], {0, 2}))

    counts, results, stopped, located = walk_capture(cap)
    print()
    print(f"packets ({sum(counts.values())}, by opcode):")
    print(table([[name, str(n)] for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))],
                ["opcode", "count"], {1}))
    print()
    print(f"dispatches ({len(results)}; found by walking the streams, none was run):")
    rows = []
    for r in results:
        c = r.config
        if c is None:
            rows.append([str(r.index), "-", "-", "-", "-", "-", f"refused: {r.refusal.code}"])
            continue
        scratch = f"{c.scratch_wave_bytes} B/wave" if c.scratch_enabled else "-"
        rows.append([str(r.index), hexa(c.program_address), fmt_grid(c), str(c.wave_size),
                     str(len(c.user_sgprs)), scratch, f"{c.lds_bytes}" if c.lds_bytes else "-"])
    print(table(rows, ["#", "program", "grid (groups x block)", "wave", "user SGPRs",
                       "scratch", "LDS"], {0, 3, 4}))
    for r in results:
        c = r.config
        if c is None:
            print(f"dispatch {r.index}: {shown(r.refusal)}")
            continue
        loc = located.get(r.index)
        at = f" ({loc[2]} at {hexa(loc[0])} dword {loc[1]})" if loc else ""
        print(f"dispatch {r.index}{at}: program in {where(cap.memory, c.program_address)}")
        if c.user_sgprs:
            vals = " ".join(f"s{i}=0x{v:08x}" for i, v in enumerate(c.user_sgprs))
            print(f"  user SGPRs: {vals}")
    for k, ref in stopped:
        print(f"stream {k} stopped: {shown(ref)}")
    if cap.expected:
        exp = cap.expected
        print()
        print(f"expected results: {len(exp.get('memory') or [])} memory region(s)"
              + (", dispatch outcomes: " + ", ".join(
                  f"{i} {'landed' if c is None else 'refused ' + shown(c)}"
                  for i, c in enumerate(exp["dispatches"] or [])) if "dispatches" in exp else ""))
    return 0


def register(sub) -> None:
    p = sub.add_parser("info", help="show what a capture holds (without running it)",
                       description=__doc__)
    p.add_argument("capture", help=".wlcap file")
    add_debug(p)
    p.set_defaults(func=cmd_info)
