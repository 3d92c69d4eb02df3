"""The forward pass: one walk over a block's ops, for one MODE value (docs/decisions/0006: MODE
is a number per block) or for any MODE (``mode`` None: a CUDA kernel of a program that writes
MODE, which reads it at run time: rules 3 and 4 then leave the ops as they are), that rewrites
them over the same values.  Each op, its operands
substituted first, is offered to the rules below in this order (``RULES``) until one of them
has dealt with it; the last rule keeps whatever is left:

1. ``block_constant``: a ``const`` is kept with its NumPy value, or shared with an equal one;
2. ``register_write``: an ``sset`` / ``vset`` makes a new version of its register (and an sset
   of MODE ends MODE specialisation); kept;
3. ``mode_read``: a read of MODE before the block writes it is the MODE constant;
4. ``denormal_flush``: ``fin`` / ``fout`` are the identity where MODE keeps that type's
   denormals, else a flush (of a constant: folded);
5. ``exec_read``: one ``exec`` per EXEC value (reads after the same EXEC writes share it);
6. ``register_read``: an SGPR read back after the block wrote it (u32, uniform, not a
   constant) is the written value; repeated reads of one register version share one read;
7. ``ballot_bit``: bit ``lane`` of a wave32 ballot of b (read through a zero extension, lo32
   or the SGPR it was written to) is b itself; it records the ballots and their low words it
   needs and otherwise leaves the op to the next rules;
8. ``impure``: any other op that is not pure (memory, cross-lane, effects) is kept as it is;
9. ``narrow``: 64-bit arithmetic in 32 bits (passes/narrow.py);
10. ``simplify``: constant folding and simplification (passes/fold.py);
11. ``share``: value numbering of what is left (passes/cse.py): an equal op already kept is
    used instead, else the op is kept.

The rules share one value table (passes/cse.py ``ValueTable``) and the walk's state (``Walk``)
because each feeds the next in the same walk (a forwarded read makes a constant, a constant
folds, a folded op is shared): run one after another they would need repeating to a fixpoint.
A rule looks at one op and returns True when it has dealt with it (kept, substituted or
rewritten it), False to pass it on.  Dead ops stay for passes/dce.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import numerics
from ..ops import PURE_OPS
from ..program import EXEC_HI, EXEC_LO, MODE_REG, Block, Op, Value
from .cse import ValueTable
from .fold import simplify
from .narrow import Narrowing

# ops without side effects whose value depends only on their operands (folded, CSE'd, dropped):
# the op table's pure ops but const (what folding makes), lane_id and word, left as they are
_PURE = PURE_OPS - {"const", "lane_id", "word"}


def flushes(mode: int, t: str, out: bool) -> bool:
    """Whether MODE.FP_DENORM flushes denormals of type ``t`` on input (fin) or output (fout)."""
    d = (mode >> (4 if t == "f32" else 6)) & 3
    return d in ((0, 1) if out else (0, 2))


class Walk:
    """The state the rules share while walking one block: the value table (``tab``: rewritten
    ops, substitutions, constants, shared keys), the 64-bit make-up of values (``nar``), and
    what the register rules know."""

    def __init__(self, mode: int | None, wave_size: int) -> None:
        self.mode = mode
        self.wave_size = wave_size
        self.tab = ValueTable()
        self.nar = Narrowing(self.tab)
        self.version: dict = {}  # (sset | vset, reg) -> writes of it so far in the block
        self.mode_written = False  # the block wrote MODE (its reads are no longer constants)
        self.set_val: dict = {}  # sset reg -> (version, Value written)
        self.from_set: dict = {}  # sget value id -> Value of the sset it reads back
        self.ballot_lo: dict = {}  # u32 value id -> b1 arg of the (wave32) ballot it holds

    def substitute(self, op: Op, x: Value) -> bool:
        """``op``'s result is ``x`` from here on (a rule that drops the op)."""
        out: Any = op.out
        self.tab.sub[out.id] = x
        return True


Rule = Callable[[Walk, Op, tuple], bool]


def block_constant(w: Walk, op: Op, args: tuple) -> bool:
    if op.name != "const":
        return False
    w.tab.block_const(op)
    return True


def register_write(w: Walk, op: Op, args: tuple) -> bool:
    n = op.name
    if n not in ("sset", "vset"):
        return False
    reg = op.attrs["reg"]
    v = w.version[(n, reg)] = w.version.get((n, reg), 0) + 1
    if n == "sset":
        w.set_val[reg] = (v, args[0])
        if reg == MODE_REG:
            w.mode_written = True
    w.tab.ops.append(op)
    return True


def mode_read(w: Walk, op: Op, args: tuple) -> bool:
    if op.name != "sget" or op.attrs["reg"] != MODE_REG or w.mode_written or w.mode is None:
        return False
    return w.substitute(op, w.tab.const("u32", np.uint32(w.mode)))


def denormal_flush(w: Walk, op: Op, args: tuple) -> bool:
    if op.name not in ("fin", "fout"):
        return False
    x = args[0]
    if w.mode is None:  # any MODE: the backend flushes as MODE says at run time
        w.tab.ops.append(op)
        return True
    if not flushes(w.mode, x.type, op.name == "fout"):
        return w.substitute(op, x)
    if x.id in w.tab.cval:
        with np.errstate(all="ignore"):
            return w.substitute(op, w.tab.const(op.type, np.asarray(numerics.flush(w.tab.cval[x.id]))[()]))
    w.tab.ops.append(op)
    return True


def exec_read(w: Walk, op: Op, args: tuple) -> bool:
    if op.name != "exec":
        return False
    # one EXEC read per EXEC value (masks compare equal)
    key = ("exec", w.version.get(("sset", EXEC_LO), 0), w.version.get(("sset", EXEC_HI), 0))
    return _share_read(w, op, key)


def register_read(w: Walk, op: Op, args: tuple) -> bool:
    n = op.name
    if n not in ("sget", "vget"):
        return False
    reg = op.attrs["reg"]
    out: Any = op.out
    if n == "sget" and reg in w.set_val:
        ver, val = w.set_val[reg]
        if ver == w.version.get(("sset", reg), 0):
            w.from_set[out.id] = val
            # read back what this block wrote: the written value itself (a computed
            # u32 [waves, 1] array like the read; constants still read)
            if val.type == op.type == "u32" and val.uniform and val.id not in w.tab.cval and reg != MODE_REG:
                return w.substitute(op, val)
    key = (n, reg, w.version.get(("sset" if n == "sget" else "vset", reg), 0))
    return _share_read(w, op, key)


def _share_read(w: Walk, op: Op, key: tuple) -> bool:
    """The first read under ``key`` is kept; a later one is substituted by it."""
    cse = w.tab.cse
    if key in cse:
        return w.substitute(op, cse[key])
    cse[key] = op.out
    w.tab.ops.append(op)
    return True


def ballot_bit(w: Walk, op: Op, args: tuple) -> bool:
    n, out = op.name, op.out
    if w.wave_size != 32 or out is None:
        return False
    if n == "ballot":
        w.ballot_lo[out.id] = args[0]
    elif n == "maskbit" and args[0].id in w.nar.zext:
        v = w.nar.zext[args[0].id]
        v = w.from_set.get(v.id, v)
        if v.id in w.ballot_lo:  # bit `lane` of the wave32 ballot of b: b itself
            w.tab.emit("lanes", "b1", (w.ballot_lo[v.id],), {}, op.instr, out)
            return True
    elif n in ("lo32", "cvt") and out.type == "u32" and args[0].id in w.ballot_lo:
        w.ballot_lo[out.id] = w.ballot_lo[args[0].id]
    return False


def impure(w: Walk, op: Op, args: tuple) -> bool:
    if op.name in _PURE:
        return False
    w.tab.ops.append(op)
    return True


def narrow(w: Walk, op: Op, args: tuple) -> bool:
    return w.nar.rewrite(op, args)


def simplify_rule(w: Walk, op: Op, args: tuple) -> bool:
    x = simplify(w.tab, op, args)
    return False if x is None else w.substitute(op, x)


def share(w: Walk, op: Op, args: tuple) -> bool:
    w.tab.keep(op)
    return True


# the rules in the order the walk offers each op to them (the module's docstring)
RULES: tuple[Rule, ...] = (
    block_constant,
    register_write,
    mode_read,
    denormal_flush,
    exec_read,
    register_read,
    ballot_bit,
    impure,
    narrow,
    simplify_rule,
    share,
)
# the op names rules 1-6 take (each of them passes any other op on at once): every other op
# starts at rule 7, without six calls that return False (forward walks every op of a block)
_NAMED = frozenset({"const", "sset", "vset", "sget", "vget", "fin", "fout", "exec"})
_UNNAMED_RULES = RULES[6:]


def forward(blk: Block, mode: int | None, wave_size: int) -> tuple[list[Op], tuple]:
    """The rewritten op list of ``blk`` for ``mode`` (None: any MODE; before dead code removal)
    and its terminator."""
    w = Walk(mode, wave_size)
    sub = w.tab.sub
    for op in blk.ops:
        args = tuple(sub.get(x.id, x) for x in op.args)
        if args != op.args:
            op = Op(op.name, op.type, args, op.attrs, op.out, op.instr)
        for rule in RULES if op.name in _NAMED else _UNNAMED_RULES:
            if rule(w, op, args):
                break
    term = tuple(sub.get(x.id, x) if isinstance(x, Value) else x for x in blk.term)
    return w.tab.ops, term
