"""`wavelift trace CAPTURE --dispatch N`: everything about one dispatch.

The dispatches before N are replayed (so guest memory is what dispatch N sees), then dispatch N
runs; the rest of the capture does not. Printed: the dispatch's configuration, its outcome and
statistics, the windows (guest ranges the module could reach) and why each was placed, the write
spans that landed, escapes, and the decoded program with every memory instruction annotated.

Annotations are static (what the instruction addresses, read from its encoding and, for scalar
loads and buffer/global accesses through SGPRs the program has not yet overwritten, from the
user SGPRs), except `ESCAPE`, which comes from the run: the engine reports escapes per
instruction. `window` = guest memory reached through the windows; `scratch` = the wave's private
memory; `LDS` = workgroup memory (never guest memory).
"""

from __future__ import annotations

from ..terminal import shown
from .common import (
    Progress,
    add_backend,
    add_budget,
    add_debug,
    check_backend,
    execute_fn,
    fmt_grid,
    hexa,
    load_capture,
    replay_until,
    table,
    where,
)


def _listing(memory, config):
    """(instructions with offsets from the program address, note, scratch plan, shift): the
    translated program itself (execute.program_for — callees below the entry included) when it
    translates, else a best-effort decode. shift = program address - the code's first byte."""
    from ..errors import Refused
    from ..run.execute import _program_bytes, program_for

    try:
        prog, code_base = program_for(memory, config)
    except Refused as e:
        if e.refusal.code == "program.bad_address":
            return None, None, None, 0
        code, _, entry = _program_bytes(memory, config)
        instrs, note = decode_program(
            code[entry:], config.target, config.wave_size == 64, config.program_address
        )
        return instrs, note or str(e.refusal), None, 0
    shift = config.program_address - code_base
    instrs = [i._replace(offset=i.offset - shift) for i in sorted(prog.instructions, key=lambda i: i.offset)]
    return instrs, None, prog.scratch, shift


def decode_program(code: bytes, target: str, wave64: bool, base: int):
    """(instructions in offset order, note). Reachable instructions (frontend.flow.discover)
    when the whole program decodes; else a linear decode up to the first problem."""
    from ..isa import DecodeError, Instruction, decode_one

    try:
        from ..errors import Refused
        from ..frontend.flow import discover

        try:
            instrs, _ = discover(code, target, wave64, base)
            return [instrs[o] for o in sorted(instrs)], None
        except Refused as e:
            note = str(e.refusal)
    except ImportError:
        note = None
    out: list[Instruction] = []
    pos = far = 0
    while pos < len(code):
        try:
            ins = decode_one(code, pos, target, wave64, 0)
        except DecodeError as e:
            return out, (note or "") + f" — listing stops: {e}"
        out.append(ins)
        if (
            ins.name
            in (
                "s_branch",
                "s_cbranch_scc0",
                "s_cbranch_scc1",
                "s_cbranch_vccz",
                "s_cbranch_vccnz",
                "s_cbranch_execz",
                "s_cbranch_execnz",
            )
            and ins.operands
        ):
            v = ins.operands[0].index
            v = v - 0x10000 if v & 0x8000 else v
            far = max(far, pos + 4 + 4 * v)
        pos += ins.size
        if ins.name in ("s_endpgm", "s_code_end") and pos > far:
            break
    return out, note


def _sgprs(op):
    return set(range(op.index, op.index + op.count)) if op.kind == "sgpr" else set()


def _written_sgprs(ins) -> set:
    out = set()
    for op in ins.operands:
        if op.role in ("sdst", "sdata") and op.kind == "sgpr":
            if ins.encoding == "SMEM" and ins.name.startswith("s_store"):
                continue
            out |= _sgprs(op)
    return out


class Annotator:
    def __init__(self, memory, config, result, scratch_plan=None, shift=0):
        # scratch_plan: the translated program's one static scratch test (frontend/scratch.py);
        # shift: program address minus the address its instruction offsets count from
        self.memory, self.config = memory, config
        self.scratch_plan, self.shift = scratch_plan, shift
        self.user = {i: v for i, v in enumerate(config.user_sgprs)}
        self.clobbered: set = set()
        self.escapes: dict = {}
        for e in result.escapes if result else []:
            self.escapes.setdefault(e.pc, []).append(e)
        self.windows = list(result.windows) if result else []

    def _user_pair(self, first: int):
        if first in self.clobbered or first + 1 in self.clobbered:
            return None
        if first in self.user and first + 1 in self.user:
            return (self.user[first + 1] << 32) | self.user[first]
        return None

    def _window_of(self, address: int) -> str:
        from ..memory.guest import canonical

        a = canonical(address)
        for w in self.windows:
            if w.address <= a < w.address + w.size:
                return f"window {w.name!r}"
        return f"{where(self.memory, a)}"

    def note(self, ins) -> str:
        enc, name, f = ins.encoding, ins.name, ins.fields
        ops = {op.role: op for op in ins.operands}
        text = ""
        if enc == "SMEM":
            base = ops.get("sbase")
            if base is not None:
                if name.startswith("s_buffer_"):
                    text = f"window (scalar buffer load through V# {base.text})"
                else:
                    p = self._user_pair(f["sbase"] * 2)
                    text = (
                        "window (scalar load from "
                        + base.text
                        + (f" = user SGPRs -> {hexa(p)}: {self._window_of(p)})" if p is not None else ")")
                    )
        elif enc == "GLOBAL":
            sa = f.get("saddr", 125)
            if sa not in (124, 125) and sa < 106:
                p = self._user_pair(sa)
                text = (
                    f"window (global: s[{sa}:{sa + 1}]"
                    + (f" = {hexa(p)} in {self._window_of(p)}" if p is not None else "")
                    + " + v offset)"
                )
            else:
                va = next((op.text for op in ins.operands if op.role == "addr" and op.kind == "vgpr"), "v")
                text = f"window (global: 64-bit address in {va})"
        elif enc == "FLAT":
            text = "window, or scratch if the address is in the private aperture (flat)"
        elif enc == "SCRATCH":
            text = "scratch"
        elif enc in ("MUBUF", "MTBUF"):
            srsrc = next((op for op in ins.operands if op.role == "srsrc"), None)
            if self.scratch_plan is None:
                text = "buffer or scratch (the program was not translated)"
            elif self.scratch_plan.is_scratch_mubuf(ins.offset + self.shift):
                text = "scratch (private segment buffer)"
            else:
                text = f"window (buffer through V# {srsrc.text if srsrc else '?'})"
        elif enc == "DS":
            text = "LDS" if not name.startswith("ds_gws") else "GDS"
        elif enc == "MIMG":
            text = "window (image through T#)"
        es = self.escapes.get(ins.offset)
        if es:
            e = es[0]
            text = (text + "; " if text else "") + (
                f"ESCAPE: {e.kind} at {hexa(e.address)} (wave {e.wave} lane {e.lane})"
                + (f" and {len(es) - 1} more reported" if len(es) > 1 else "")
            )
        self.clobbered |= _written_sgprs(ins)
        return text


def _rsrc_fields(config) -> list[str]:
    from ..stream.registers import BY_NAME

    lines = []
    for name, v in (
        ("COMPUTE_PGM_RSRC1", config.rsrc1),
        ("COMPUTE_PGM_RSRC2", config.rsrc2),
        ("COMPUTE_PGM_RSRC3", config.rsrc3),
    ):
        try:
            d = BY_NAME[name].decode(v, config.gfx_level)
            fields = " ".join(f"{k}={x}" for k, x in d.items() if x)
        except Exception:  # noqa: BLE001 - a register the table cannot decode is shown raw
            fields = ""
        lines.append(f"  {name:<18} 0x{v:08x}  {fields}")
    return lines


def format_config(memory, c, names=None) -> list[str]:
    k = names.kernel(c.program_address) if names is not None else None
    place = names.shown(c.program_address) if k else f"({where(memory, c.program_address)})"
    L = [
        f"  target             {c.target}",
        f"  program            {hexa(c.program_address)} {place}",
        f"  wave size          {c.wave_size}",
        f"  grid               {fmt_grid(c)} (groups x threads per group); dims "
        f"{'x'.join(map(str, c.dims))}, start {'x'.join(map(str, c.group_start))}",
    ]
    if c.partial_tg:
        L.append(f"  partial last group {'x'.join(map(str, c.partial))}")
    L.append(f"  initiator          0x{c.initiator:08x}")
    L += _rsrc_fields(c)
    L.append(f"  LDS                {c.lds_bytes} bytes")
    L.append(
        "  scratch            "
        + (
            f"{c.scratch_wave_bytes} bytes per wave, TMPRING_SIZE "
            f"0x{c.tmpring_size:08x} ({c.tmpring_waves} waves)"
            if c.scratch_enabled
            else "off"
        )
    )
    L.append(f"  user SGPRs         {len(c.user_sgprs)}")
    for i, v in enumerate(c.user_sgprs):
        extra = ""
        if i + 1 < len(c.user_sgprs):
            p = (c.user_sgprs[i + 1] << 32) | v
            a = memory.find(p)
            if a is not None and p:
                extra = f"  s[{i}:{i + 1}] -> {hexa(p)} ({where(memory, p)})"
        unw = "  (never written: reads 0)" if i in c.unwritten_user_sgprs else ""
        L.append(f"    s{i:<3} 0x{v:08x}{extra}{unw}")
    for k, v in sorted(c.system_sgprs.items(), key=lambda kv: kv[1]):
        L.append(f"    s{v:<3} {k} (written by the hardware)")
    return L


# refusals after which trace shows a wave's state (runtime.WAVE_STATE records it for these when a
# wave was running: a refuse_if op -- image.*, program.unsupported_instruction of a form
# translated only for what it cannot do --, a float block under another rounding mode, the time
# limit; the same codes raised by the translation, before any wave runs, record nothing)
STATE_REFUSALS = (
    "escape",
    "dispatch.budget_exceeded",
    "program.bad_jump",
    "program.bad_address",
    "program.unsupported_instruction",
    "float.rounding_mode",
    "dispatch.time_exceeded",
)


def wants_state(code: str) -> bool:
    """Whether trace shows a wave's state after a refusal with this code."""
    return code in STATE_REFUSALS or code.startswith("image.")


# wave states recorded after the block ending at their pc ran
_AFTER_BLOCK = {
    "budget_exceeded": "past its budget",
    "bad_jump": "jumping off the program",
    "runs_past": "running off the end of the program",
    "time_exceeded": "when the time limit passed",
}
# wave states recorded at the refusing instruction, before it ran (the rest: at an escaping
# access)
_AT_REFUSAL = {
    "refused": "at the refusing instruction",
    "rounding_mode": "at the float block refused for its rounding mode",
}


def rerun_for_wave_state(memory, config, execute, index, shift: int) -> dict | None:
    """The state of the first wave that escapes, from running dispatch `index` again on NumPy
    blocks with the runtime recording it (backends/numpy/runtime.py WAVE_STATE): a refused
    dispatch landed nothing, so memory is what the first run saw. None if no escape was
    recorded. `shift`: program address - the translated code's first byte (pcs count from the
    program address, as everywhere in trace)."""
    from ..backends.numpy import runtime

    sink: dict = {}
    runtime.WAVE_STATE = sink
    try:
        execute(memory, config, index)
    finally:
        runtime.WAVE_STATE = None
    if not sink:
        return None
    psg, pvg = _pending(memory, config, sink["pc"], through=sink["kind"] in _AFTER_BLOCK)
    S, V = sink["sgprs"], sink["vgprs"]
    from ..ir.program import EXEC_HI, EXEC_LO, M0, SCC, VCC_HI, VCC_LO

    wide = sink["wave_size"] == 64
    return {
        "wave": sink["wave"],
        "lane": sink["lane"],
        "pc": sink["pc"] - shift,
        "instruction": sink["instruction"],
        "address": None if sink["address"] is None else hexa(sink["address"]),
        "kind": sink["kind"],
        "wave_size": sink["wave_size"],
        "exec": int(S[EXEC_LO]) | (int(S[EXEC_HI]) << 32 if wide else 0),
        "vcc": int(S[VCC_LO]) | (int(S[VCC_HI]) << 32 if wide else 0),
        "m0": int(S[M0]),
        "scc": int(S[SCC]) & 1,
        "sgprs": [int(x) for x in S[:VCC_LO]],
        "vgprs": [[int(x) for x in row] for row in V],
        "pending": {"sgprs": psg, "vgprs": pvg},
    }


def _pending(memory, config, pc: int, through: bool = False) -> tuple[list, list]:
    """(SGPRs, VGPRs) that instructions of the escaping access's basic block write before it
    (`through`: and the instruction at `pc` itself): NumPy blocks store a register only where a
    later read needs it, so these may still hold their values from the block's start. `pc`
    counts from the translated code's first byte."""
    from ..errors import Refused
    from ..run.execute import program_for

    try:
        prog, _ = program_for(memory, config)
    except Refused:
        return [], []
    at = {i.offset: k for k, i in enumerate(prog.instructions)}.get(pc)
    blk = next((b for b in prog.blocks if at in b.instrs), None)
    if blk is None:
        return [], []
    sg: set = set()
    vg: set = set()
    for k in blk.instrs:
        if k == at and not through:
            break
        for op in prog.instructions[k].operands:
            if op.role in ("sdst", "vdst", "sdata") and op.kind in ("sgpr", "vgpr"):
                (sg if op.kind == "sgpr" else vg).update(range(op.index, op.index + op.count))
    return sorted(sg), sorted(vg)


def format_wave_state(st: dict, user_sgprs: int) -> list[str]:
    """The text dump of rerun_for_wave_state's record: PC, EXEC, VCC, M0, SCC, SGPRs (up to the
    last non-zero one, at least the user SGPRs), the VGPRs of the escaping lane."""
    digits = 16 if st["wave_size"] == 64 else 8
    budget = st["kind"] in _AFTER_BLOCK
    at = _AT_REFUSAL.get(st["kind"])
    L = [
        (
            f"wave state {_AFTER_BLOCK[st['kind']]} (wave {st['wave']}; the dispatch run again on "
            f"NumPy blocks, registers as they hold them after its last block):"
            if budget
            else f"wave state {at} (wave {st['wave']}, lane {st['lane']}; the dispatch run again "
            f"on NumPy blocks, registers as they hold them before it ran):"
            if at
            else f"wave state at the first escape (wave {st['wave']}, lane {st['lane']}; the "
            f"dispatch run again on NumPy blocks, registers as they hold them at the access):"
        ),
        f"  pc    0x{st['pc']:x}: {shown(st['instruction'])}"
        + (
            f"  (the last instruction of that block{', to ' + st['address'] if st['address'] else ''})"
            if budget
            else ("  (the first instruction of that block)" if st["kind"] == "rounding_mode" else "")
            if at
            else f"  ({st['kind']} at {st['address']})"
        ),
        f"  EXEC  0x{st['exec']:0{digits}x}  VCC 0x{st['vcc']:0{digits}x}  M0 0x{st['m0']:08x}"
        f"  SCC {st['scc']}",
    ]
    sg = st["sgprs"]
    last = max([i for i, v in enumerate(sg) if v] + [user_sgprs - 1, 0])
    n = min(len(sg), (last // 8 + 1) * 8)
    L.append(
        f"  SGPRs s0..s{n - 1} (s{n}..s{len(sg) - 1} are zero):" if n < len(sg) else f"  SGPRs s0..s{n - 1}:"
    )
    ps, pv = set(st["pending"]["sgprs"]), set(st["pending"]["vgprs"])

    def cell(v, pending):
        return f"{v:08x}" + ("* " if pending else "  ")

    for i in range(0, n, 8):
        L.append(
            (f"    s{i:<4}" + "".join(cell(v, i + k in ps) for k, v in enumerate(sg[i : i + 8]))).rstrip()
        )
    vg = st["vgprs"]
    lane = st["lane"]
    L.append(f"  VGPRs v0..v{len(vg) - 1} of lane {lane} (every lane: --json):")
    for i in range(0, len(vg), 8):
        L.append(
            (
                f"    v{i:<4}" + "".join(cell(row[lane], i + k in pv) for k, row in enumerate(vg[i : i + 8]))
            ).rstrip()
        )
    if ps or pv:
        L.append(
            "  * written earlier in the "
            + (
                "last block"
                if budget
                else "refusing instruction's basic block"
                if at
                else "access's basic block"
            )
            + ": NumPy blocks store a register "
            "only where a later read needs it, so it may still show its value from the "
            "block's start"
        )
    return L


def _stats_line(s: dict) -> str:
    from ..run.report import STAT_KEYS  # (the report's stats, in its order)
    from .common import module_cache_text

    return "  " + ", ".join(
        f"{k} {s[k]:.3f}s"
        if k == "time_s"
        else f"module cache {module_cache_text(s)}"
        if k == "module_cache_hit"
        else f"{k} {s[k]}"
        for k in STAT_KEYS
        if k in s
    )


def cmd_trace(a) -> int:
    from ..errors import UserError
    from .names import ProgramNames

    cap = load_capture(a.capture)
    check_backend(a.backend)
    n = a.dispatch
    if n < 0:
        raise UserError("--dispatch N: N counts from 0")
    import sys

    # progress on stderr: on a terminal (not with --json, unless asked) or with --progress
    progress = Progress(a.progress or (sys.stderr.isatty() and not a.json), total=n + 1)
    cache: dict = {}
    execute = execute_fn(a.backend, a.mode, cache, a.budget)
    try:
        results = replay_until(
            cap, n, progress.wrap(execute_fn(a.backend, a.mode, cache, a.budget, progress))
        )
    finally:
        progress.finish()
    if len(results) <= n:
        raise UserError(
            f"{a.capture} has {len(results)} dispatch(es) (0..{len(results) - 1}); there is no dispatch {n}"
            if results
            else f"{a.capture} has no dispatches"
        )
    r = results[n]
    c = r.config
    names = ProgramNames(cap.memory, cap.notes)
    rc = 0 if r.refusal is None else 1
    instrs = note = None
    plan, shift = None, 0
    state = None
    if c is not None:
        instrs, note, plan, shift = _listing(cap.memory, c)
        if r.refusal is not None and wants_state(r.refusal.code) and a.backend == "numpy":
            state = rerun_for_wave_state(cap.memory, c, execute, n, shift)
    if a.json:
        import json

        print(json.dumps(trace_document(a, cap, r, names, instrs, note, plan, shift, state), indent=1))
        return rc
    print(f"dispatch {n} of {a.capture} (backend {a.backend}, mode {a.mode})")
    print()
    if c is None:
        print(f"refused before it could run: {shown(r.refusal)}")
        return 1
    print("configuration:")
    print("\n".join(format_config(cap.memory, c, names)))
    print()
    if r.refusal is None:
        print("result: landed")
    else:
        print(f"result: refused: {shown(r.refusal)}")
    s = r.stats or {}
    if s:
        print(_stats_line(s))
        from .common import native_note

        nn = native_note(s)
        if nn:
            print(f"  {nn}")
    print()
    print(f"windows ({len(r.windows)}):")
    if r.windows:
        print(
            table(
                [[hexa(w.address), str(w.size), shown(w.name), shown(w.reason)] for w in r.windows],
                ["address", "size", "allocation", "why it was placed"],
                {1},
            )
        )
    else:
        print("  none (the engine placed none, or did not get that far)")
    print()
    print(
        f"write spans ({len(r.write_spans)}, {sum(n for _, n in r.write_spans)} bytes"
        f"{' landed' if r.refusal is None else ', not landed'}):"
    )
    if r.write_spans:
        print(
            table(
                [[hexa(ad), str(sz), where(cap.memory, ad)] for ad, sz in r.write_spans],
                ["address", "size", "where"],
                {1},
            )
        )
    if instrs is None:
        print()
        print(f"program: {hexa(c.program_address)} is not in guest memory")
        return rc
    if r.escapes:
        print()
        print(f"escapes ({len(r.escapes)} reported):")
        print(
            table(
                [
                    [f"0x{e.pc:x}", e.kind, hexa(e.address), str(e.wave), str(e.lane), shown(e.instruction)]
                    for e in r.escapes
                ],
                ["pc", "kind", "address", "wave", "lane", "instruction"],
                {3, 4},
            )
        )
    if state is not None:
        print()
        print("\n".join(format_wave_state(state, len(c.user_sgprs))))
    elif r.refusal is not None and wants_state(r.refusal.code):
        print()
        print(
            "wave state: not recorded ("
            + (
                (
                    "the dispatch did not escape when run again to record it)"
                    if r.refusal.code == "escape"
                    else "no wave was running when the dispatch was refused: the translation or "
                    "the set-up refused it)"
                )
                if a.backend == "numpy"
                else f"the {a.backend} backend does not record it; --backend numpy does)"
            )
        )
    print()
    print(
        f"program ({len(instrs)} instructions at {hexa(c.program_address)}; "
        f"annotations: window / scratch / LDS / ESCAPE):"
    )
    if note:
        print(f"  note: {shown(note)}")
    ann = Annotator(cap.memory, c, r, plan, shift)
    width = max((len(i.text) for i in instrs), default=0)
    for ins in instrs:
        t = ann.note(ins)
        line = f"  {ins.offset:6x}:  {ins.text.ljust(width)}"
        print((line + "  ; " + t) if t else line.rstrip())
    if a.ir:
        print()
        print("\n".join(ir_text(cap.memory, c)))
    return rc


def ir_text(memory, config) -> list[str]:
    """`--ir`: the program's IR after the passes (ir/dump.py), for the dispatch's initial MODE
    (the blocks a NumPy group of waves in that MODE runs; the native tier runs the same IR)."""
    from ..errors import Refused
    from ..ir.dump import program_text
    from ..run.execute import program_for

    try:
        prog, _ = program_for(memory, config)
    except Refused as e:
        return [f"IR: none ({shown(e.refusal)})"]
    # every wave's MODE at its start (as backends/numpy/runtime.py sets it)
    mode = config.float_mode | (int(config.dx10_clamp) << 8) | (int(config.ieee_mode) << 9)
    head = f"IR after the passes ({len(prog.blocks)} blocks, wave{config.wave_size}, MODE {mode:#x}):"
    return [head] + [shown(line) for line in program_text(prog, config.wave_size, mode)]


def trace_document(a, cap, r, names, instrs, note, plan, shift, state) -> dict:
    """`trace --json` (docs/report-schema.md, "wavelift trace --json")."""
    from .. import __version__
    from ..run.report import dispatch_record

    c = r.config
    d = dispatch_record(r)
    d["kernel"] = names.kernel(c.program_address) if c else None
    d["program_in"] = where(cap.memory, c.program_address) if c else None
    program = None
    if instrs is not None:
        ann = Annotator(cap.memory, c, r, plan, shift)
        program = {
            "address": hexa(c.program_address),
            "note": note,
            "instructions": [
                {"offset": int(i.offset), "text": i.text, "annotation": ann.note(i) or None} for i in instrs
            ],
        }
    return {
        "schema": "wavelift-trace",
        "version": 1,
        "wavelift": __version__,
        "capture": {"path": a.capture, "target": cap.target},
        "backend": a.backend,
        "mode": a.mode,
        "dispatch": d,
        "program": program,
        "wave_state": state,
    }


def register(sub) -> None:
    p = sub.add_parser(
        "trace", help="one dispatch in detail: config, windows, writes, program", description=__doc__
    )
    p.add_argument("capture", help=".wlcap file")
    p.add_argument(
        "--dispatch",
        "-d",
        type=int,
        required=True,
        metavar="N",
        help="dispatch number (as `wavelift run` numbers them, from 0)",
    )
    add_backend(p)
    p.add_argument("--mode", choices=["wave", "lane"], default="wave")
    add_budget(p)
    p.add_argument(
        "--ir",
        action="store_true",
        help="also print the program's IR after the passes, block by block (text output only)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text (docs/report-schema.md)"
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="print progress on stderr (dispatch i of N, the stage it is in) even when it is not a "
        "terminal or with --json",
    )
    add_debug(p)
    p.set_defaults(func=cmd_trace)
