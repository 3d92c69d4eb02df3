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


def walk_capture(cap, listing: list | None = None):
    """Walk every stream without executing dispatches. Returns (packet counts by name,
    DispatchResults holding only configs, stream refusals [(stream index, Refused)],
    {dispatch index: (IB address, dword offset, packet name)}). `listing`, if given, gets
    (IB address, Packet) for every packet walked, in order."""
    from ..run.replay import run_stream
    from ..run.result import DispatchResult
    from ..stream.registers import RegisterFile

    counts: dict[str, int] = {}
    last = {}
    located: dict = {}

    def on_packet(ib, p):
        counts[p.name] = counts.get(p.name, 0) + 1
        last["at"] = (ib, p.offset, p.name)
        if listing is not None:
            listing.append((ib, p))

    def record(memory, config, index):
        located[index] = last.get("at")
        return DispatchResult(index, config, None, stats={})

    regs = RegisterFile(cap.target)
    results: list = []
    stopped = []
    for k, (address, size) in enumerate(cap.streams):
        ref = run_stream(cap.memory, cap.target, address, size, regs, record, results, on_packet=on_packet)
        if ref is not None:
            stopped.append((k, ref))
            break
    return counts, results, stopped, located


# --- the packet listing (info --packets) ---------------------------------------------------------
def packet_fields(p) -> dict:
    """A packet's fields as the listing shows them (JSON-able: addresses as 0x strings): for
    SET_*_REG, `registers`: [{name, address, value}]; for other known opcodes the decoded
    fields; a body that does not decode as its opcode, or an unknown opcode: `body` dwords."""
    from ..errors import Refused
    from ..stream import pm4
    from ..stream.registers import name_of as register_name

    if p.type != 3 or p.header == pm4.NOP_PAD:
        return {}
    try:
        f = pm4.decode_body(p.opcode, p.body)
    except Refused:
        f = {}
    if not f:
        return {"body": [int(x) for x in p.body]} if p.body and p.opcode != pm4.NOP else {}
    if p.opcode in pm4.SET_REG_SPACE:
        return {
            "registers": [
                {
                    "name": register_name(f["address"] + 4 * k),
                    "address": f"0x{f['address'] + 4 * k:05x}",
                    "value": int(v),
                }
                for k, v in enumerate(f["values"])
            ]
        }
    out = {}
    for k, v in f.items():
        if k == "body":
            continue
        if isinstance(v, tuple):
            v = [int(x) for x in v]
        elif isinstance(v, bool) or v is None:
            pass
        elif k == "address" or k in ("src", "dst"):
            v = hexa(v)
        else:
            v = int(v)
        out[k] = v
    return out


def packet_line(ib: int, p) -> str:
    """One line of the listing, as UMR prints a stream: where (IB address + byte offset),
    opcode, then the registers a SET_*_REG writes or the packet's fields."""
    f = packet_fields(p)
    if "registers" in f:
        detail = " ".join(f"{r['name']}=0x{r['value']:08x}" for r in f["registers"])
    elif "body" in f:
        detail = " ".join(f"0x{x:08x}" for x in f["body"])
    else:
        detail = " ".join(f"{k}={_field_text(k, v)}" for k, v in f.items() if v is not None)
    pred = " (predicated)" if p.predicate else ""
    return f"{hexa(ib)}+0x{4 * p.offset:04x}  {p.name + pred:<22} {detail}".rstrip()


_DECIMAL = {
    "x",
    "y",
    "z",
    "size_dw",
    "byte_count",
    "count",
    "data_offset",
    "base_index",
    "poll_interval",
    "reg_offset",
    "index",
    "event_index",
    "vmid",
}


def _field_text(k: str, v) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, list):
        return ",".join(f"0x{x:x}" for x in v)
    if isinstance(v, int):
        return str(v) if k in _DECIMAL or v < 10 else f"0x{v:x}"
    return str(v)


def packet_record(ib: int, p) -> dict:
    return {
        "ib": hexa(ib),
        "offset": int(p.offset),
        "header": int(p.header),
        "opcode": p.name,
        "predicate": bool(p.predicate),
        "fields": packet_fields(p),
    }


# --- output ----------------------------------------------------------------------------------------
def info_document(path: str, cap, names, counts, results, stopped, located, listing) -> dict:
    """`info --json` (docs/report-schema.md, "wavelift info --json")."""
    from .. import __version__
    from ..run.report import dispatch_record

    dispatches = []
    for r in results:
        loc = located.get(r.index)
        c = r.config
        dispatches.append(
            {
                "index": int(r.index),
                "refusal": None
                if r.refusal is None
                else {"code": r.refusal.code, "message": r.refusal.message},
                "config": dispatch_record(r)["config"],
                "kernel": names.kernel(c.program_address) if c else None,
                "program_in": where(cap.memory, c.program_address) if c else None,
                "packet": {"ib": hexa(loc[0]), "offset": int(loc[1]), "opcode": loc[2]} if loc else None,
            }
        )
    exp = cap.expected
    return {
        "schema": "wavelift-info",
        "version": 1,
        "wavelift": __version__,
        "capture": {"path": path, "bytes": os.path.getsize(path), "target": cap.target},
        "notes": cap.notes or {},
        "allocations": [
            {"index": i, "base": hexa(x.base), "end": hexa(x.end), "size": int(x.size), "name": x.name}
            for i, x in enumerate(cap.memory.allocations)
        ],
        "streams": [
            {"index": i, "address": hexa(ad), "dwords": int(n)} for i, (ad, n) in enumerate(cap.streams)
        ],
        "packet_counts": dict(sorted(counts.items())),
        "packets": None if listing is None else [packet_record(ib, p) for ib, p in listing],
        "dispatches": dispatches,
        "stream_refusals": [{"stream": k, "code": ref.code, "message": ref.message} for k, ref in stopped],
        "expected": None
        if not exp
        else {
            "memory_regions": len(exp.get("memory") or []),
            "dispatches": [None if c is None else str(c) for c in exp["dispatches"]]
            if exp.get("dispatches") is not None
            else None,
        },
    }


def cmd_info(a) -> int:
    import json

    from .names import ProgramNames

    cap = load_capture(a.capture)
    listing: list | None = [] if a.packets else None
    counts, results, stopped, located = walk_capture(cap, listing)
    names = ProgramNames(cap.memory, cap.notes)
    if a.json:
        doc = info_document(a.capture, cap, names, counts, results, stopped, located, listing)
        print(json.dumps(doc, indent=1))
        return 0
    size = os.path.getsize(a.capture)
    print(f"capture   {a.capture} ({size} bytes, format version 1)")
    print(f"target    {cap.target}")
    if cap.notes:
        for k, v in sorted(cap.notes.items()):
            print(f"note      {shown(k)}: {shown(v)}")
    allocs = cap.memory.allocations
    print()
    print(f"allocations ({len(allocs)}, {sum(x.size for x in allocs)} bytes):")
    print(
        table(
            [[str(i), hexa(x.base), hexa(x.end), str(x.size), name_of(x)] for i, x in enumerate(allocs)],
            ["#", "base", "end", "size", "name"],
            {0, 3},
        )
    )
    print()
    print(f"streams ({len(cap.streams)}):")
    print(
        table(
            [[str(i), hexa(ad), str(n), where(cap.memory, ad)] for i, (ad, n) in enumerate(cap.streams)],
            ["#", "address", "dwords", "in"],
            {0, 2},
        )
    )

    print()
    print(f"packets ({sum(counts.values())}, by opcode):")
    print(
        table(
            [[name, str(n)] for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))],
            ["opcode", "count"],
            {1},
        )
    )
    if listing is not None:
        print()
        print(f"packet listing ({len(listing)}; IB address + byte offset, opcode, registers or fields):")
        for ib, p in listing:
            print(packet_line(ib, p))
    print()
    print(f"dispatches ({len(results)}; found by walking the streams, none was run):")
    rows = []
    for r in results:
        c = r.config
        if c is None:
            rows.append([str(r.index), "-", "-", "-", "-", "-", f"refused: {r.refusal.code}", ""])
            continue
        scratch = f"{c.scratch_wave_bytes} B/wave" if c.scratch_enabled else "-"
        k = names.kernel(c.program_address)
        rows.append(
            [
                str(r.index),
                hexa(c.program_address),
                fmt_grid(c),
                str(c.wave_size),
                str(len(c.user_sgprs)),
                scratch,
                f"{c.lds_bytes}" if c.lds_bytes else "-",
                shown(k) if k else "-",
            ]
        )
    print(
        table(
            rows,
            ["#", "program", "grid (groups x block)", "wave", "user SGPRs", "scratch", "LDS", "kernel"],
            {0, 3, 4},
        )
    )
    for r in results:
        c = r.config
        if c is None:
            print(f"dispatch {r.index}: {shown(r.refusal)}")
            continue
        loc = located.get(r.index)
        at = f" ({loc[2]} at {hexa(loc[0])} dword {loc[1]})" if loc else ""
        k = names.kernel(c.program_address)
        print(
            f"dispatch {r.index}{at}: program "
            + (names.shown(c.program_address) if k else f"in {where(cap.memory, c.program_address)}")
        )
        if c.user_sgprs:
            vals = " ".join(f"s{i}=0x{v:08x}" for i, v in enumerate(c.user_sgprs))
            print(f"  user SGPRs: {vals}")
    for k, ref in stopped:
        print(f"stream {k} stopped: {shown(ref)}")
    if cap.expected:
        exp = cap.expected
        print()
        print(
            f"expected results: {len(exp.get('memory') or [])} memory region(s)"
            + (
                ", dispatch outcomes: "
                + ", ".join(
                    f"{i} {'landed' if c is None else 'refused ' + shown(c)}"
                    for i, c in enumerate(exp["dispatches"] or [])
                )
                if "dispatches" in exp
                else ""
            )
        )
    return 0


def register(sub) -> None:
    p = sub.add_parser("info", help="show what a capture holds (without running it)", description=__doc__)
    p.add_argument("capture", help=".wlcap file")
    p.add_argument(
        "--packets",
        action="store_true",
        help="list every PM4 packet walked, one a line (UMR-style: IB address + "
        "offset, opcode, register names and values)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text (docs/report-schema.md)"
    )
    add_debug(p)
    p.set_defaults(func=cmd_info)
