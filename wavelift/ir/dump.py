"""The text form of a program's IR after the passes (ir/passes), for people debugging:
``wavelift trace --ir`` prints it.  One block after another, each with its first instruction's
offset, the registers live after it, its ops (one per line, ``%id:type`` values, ``[]`` for a
per-lane value) and its terminator.  Constants show their value and, for floats, their bits."""

from __future__ import annotations

import numpy as np

from .passes.pipeline import Passes
from .program import Block, Op, Program, Value


def _value(x) -> str:
    return repr(x) if isinstance(x, Value) else str(x)


def _const(v) -> str:
    a = np.asarray(v)
    if a.dtype.kind == "f":
        bits = int(a.view(f"u{a.dtype.itemsize}"))
        return f"{a[()]!r} (0x{bits:0{2 * a.dtype.itemsize}x})"
    if a.dtype == np.bool_:
        return str(bool(a))
    return f"{int(a)} (0x{int(a) & ((1 << (8 * a.dtype.itemsize)) - 1):x})"


def op_text(op: Op) -> str:
    """One op as a line: ``%7:u32[] = add.u32 %3:u32[], %5:u32 attr=value``."""
    if op.name == "const":
        v = op.attrs.get("value_np", op.attrs.get("value"))
        rhs = f"const.{op.type} {_const(v)}"
    else:
        args = ", ".join(_value(x) for x in op.args)
        attrs = "".join(f" {k}={v!r}" for k, v in sorted(op.attrs.items()))
        rhs = f"{op.name}.{op.type} {args}".rstrip() + attrs
    return f"{op.out!r} = {rhs}" if op.out is not None else rhs


def _regs(live) -> str:
    if live is None:
        return "all"
    s, v = live
    return f"s[{','.join(map(str, sorted(s)))}] v[{','.join(map(str, sorted(v)))}]"


def block_text(blk: Block, live_out=None) -> list[str]:
    """Lines of one block: a heading, its ops (indented), its terminator."""
    term = " ".join(_value(x) for x in blk.term)
    lines = [
        f"block {blk.index} @ {blk.start:#x} ({len(blk.instrs)} instructions; live after: {_regs(live_out)})"
    ]
    lines += [f"  {op_text(op)}" for op in blk.ops]
    lines.append(f"  -> {term}")
    return lines


def program_text(program: Program, wave_size: int, mode: int) -> list[str]:
    """Lines of every block of ``program`` after the passes, for MODE value ``mode``."""
    passes = Passes(program, mode, wave_size)
    lines = []
    for b in program.blocks:
        lines += block_text(passes.block(b.index), passes.live[b.index])
    return lines
