"""The forward pass as it was before its rules were split into named functions (commit
798b56b, wavelift/ir/passes/forward.py): one walk with the rules inline.  Kept only as the
oracle of tests/ir/passes/test_forward_rules.py, which holds the split pass to this one's output on
every fixture program; when a rule is meant to change the output, change or delete both.

The forward pass: one walk over a block's ops, for one MODE value (docs/decisions/0006: MODE
is a number per block), that rewrites them over the same values:

* MODE specialisation: MODE reads (before the block writes MODE) become constants; fin/fout
  become the identity or a flush of denormals as MODE says (a flush of a constant, folded);
* register forwarding: repeated reads of a register version (and of EXEC) share one read; an
  SGPR read back after the block wrote it (u32, uniform, not a constant) is the written value;
  bit ``lane`` of a wave32 ballot of b is b itself;
* 64-bit arithmetic in 32 bits (passes/narrow.py), then constant folding and simplification
  (passes/fold.py), then value numbering of what is left (passes/cse.py).

The rules share one value table because each feeds the next in the same walk (a forwarded read
makes a constant, a constant folds, a folded op is shared): run one after another they would
need repeating to a fixpoint.  Dead ops stay for passes/dce.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from wavelift.ir import numerics
from wavelift.ir.ops import PURE_OPS
from wavelift.ir.passes.cse import ValueTable
from wavelift.ir.passes.fold import simplify
from wavelift.ir.passes.narrow import Narrowing
from wavelift.ir.program import EXEC_HI, EXEC_LO, MODE_REG, Block, Op, Value

# ops without side effects whose value depends only on their operands (folded, CSE'd, dropped):
# the op table's pure ops but const (what folding makes), lane_id and word, left as they are
_PURE = PURE_OPS - {"const", "lane_id", "word"}


def flushes(mode: int, t: str, out: bool) -> bool:
    """Whether MODE.FP_DENORM flushes denormals of type ``t`` on input (fin) or output (fout)."""
    d = (mode >> (4 if t == "f32" else 6)) & 3
    return d in ((0, 1) if out else (0, 2))


def forward(blk: Block, mode: int, wave_size: int) -> tuple[list[Op], tuple]:
    """The rewritten op list of ``blk`` for ``mode`` (before dead code removal) and its
    terminator."""
    tab = ValueTable()
    nar = Narrowing(tab)
    sub, cval, cse = tab.sub, tab.cval, tab.cse
    version: dict = {}
    mode_written = False
    set_val: dict = {}  # sset reg -> (version, Value written)
    from_set: dict = {}  # sget value id -> Value of the sset it reads back
    ballot_lo: dict = {}  # u32 value id -> b1 arg of the (wave32) ballot it holds
    for op in blk.ops:
        args = tuple(sub.get(x.id, x) for x in op.args)
        out: Any = op.out  # (None only for effects, which keep it)
        n = op.name
        if args != op.args:
            op = Op(n, op.type, args, op.attrs, out, op.instr)
        if n == "const":
            tab.block_const(op)
            continue
        if n in ("sset", "vset"):
            reg = op.attrs["reg"]
            version[(n, reg)] = version.get((n, reg), 0) + 1
            if n == "sset":
                set_val[reg] = (version[(n, reg)], args[0])
            if n == "sset" and reg == MODE_REG:
                mode_written = True
            tab.ops.append(op)
            continue
        if n == "sget" and op.attrs["reg"] == MODE_REG and not mode_written:
            sub[out.id] = tab.const("u32", np.uint32(mode))
            continue
        if n in ("fin", "fout"):
            x = args[0]
            if not flushes(mode, x.type, n == "fout"):
                sub[out.id] = x
                continue
            if x.id in cval:
                with np.errstate(all="ignore"):
                    sub[out.id] = tab.const(op.type, np.asarray(numerics.flush(cval[x.id]))[()])
                continue
            tab.ops.append(op)
            continue
        if n == "exec":  # one EXEC read per EXEC value (masks compare equal)
            key = ("exec", version.get(("sset", EXEC_LO), 0), version.get(("sset", EXEC_HI), 0))
            if key in cse:
                sub[out.id] = cse[key]
                continue
            cse[key] = out
            tab.ops.append(op)
            continue
        if n in ("sget", "vget"):
            reg = op.attrs["reg"]
            if n == "sget" and reg in set_val:
                ver, val = set_val[reg]
                if ver == version.get(("sset", reg), 0):
                    from_set[out.id] = val
                    # read back what this block wrote: the written value itself (a computed
                    # u32 [waves, 1] array like the read; constants still read)
                    if (
                        val.type == op.type == "u32"
                        and val.uniform
                        and val.id not in cval
                        and reg != MODE_REG
                    ):
                        sub[out.id] = val
                        continue
            key = (n, reg, version.get(("sset" if n == "sget" else "vset", reg), 0))
            if key in cse:
                sub[out.id] = cse[key]
                continue
            cse[key] = out
            tab.ops.append(op)
            continue
        if n == "ballot" and wave_size == 32:
            ballot_lo[out.id] = args[0]
        if n == "maskbit" and wave_size == 32 and args[0].id in nar.zext:
            v = nar.zext[args[0].id]
            v = from_set.get(v.id, v)
            if v.id in ballot_lo:  # bit `lane` of the wave32 ballot of b: b itself
                tab.emit("lanes", "b1", (ballot_lo[v.id],), {}, op.instr, out)
                continue
        if n not in _PURE:
            tab.ops.append(op)
            continue
        if n in ("lo32", "cvt") and out.type == "u32" and args[0].id in ballot_lo:
            ballot_lo[out.id] = ballot_lo[args[0].id]
        if nar.rewrite(op, args):
            continue
        x = simplify(tab, op, args)
        if x is not None:
            sub[out.id] = x
            continue
        tab.keep(op)
    term = tuple(sub.get(x.id, x) if isinstance(x, Value) else x for x in blk.term)
    return tab.ops, term
