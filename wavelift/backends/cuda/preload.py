"""Preloads: uniform global loads whose address is a dispatch constant, read by the host.

Kernels read their arguments with scalar loads from an address in user SGPRs (the kernarg
pointer, a descriptor-table pointer), often again through a pointer read that way.  Such an
address is the same in every wave of a dispatch, so the host can work it out before the launch
and put the words it names in constant memory (codegen: WL_PO / WL_PRE): the load becomes a
constant read, with no address arithmetic, window check or memory round trip.  Each load's words
have a fixed place in WL_PRE (``layout``), so the kernel reads them as constants at known
offsets; WL_PO says only whether the host resolved the load this dispatch.

A load qualifies (``find``, when the module is built) when it is a uniform global load of whole
words whose mask and address are made, within its block, only of constants, integer ops, words of
qualifying loads and user SGPRs that still hold their dispatch value there (no block on any path
from the entry wrote them; programs with s_setpc are left alone).  ``evaluate`` (each dispatch)
computes those values with the IR's reference semantics (ir/interp.py, the bits every backend
gives) and reads the words from the windows; a load whose address it cannot resolve -- a system
SGPR, not inside one window, unaligned, a failed op -- simply keeps the kernel's own path.
Exact because checked: the host reruns the dispatch without preloads when it wrote any byte it
preloaded (runtime.py, as for mirrors).
"""

from __future__ import annotations

import numpy as np

from ...ir import interp
from ...ir.ops import INTS
from ...ir.program import Op, Program
from ...kept import keep

USER_SGPRS = 16  # user SGPRs the kernel takes from its parameters (codegen P_USER)
MAX_PRELOADS = 256  # loads with a WL_PO entry
PRELOAD_WORDS = 1024  # constant memory for the words (WL_PRE)

# ops evaluated on the host: integer and b1 only (no float mode involved)
_OPS = {
    "const",
    "add",
    "sub",
    "mul",
    "mulhi",
    "and",
    "or",
    "xor",
    "not",
    "neg",
    "shl",
    "shr",
    "sar",
    "min",
    "max",
    "cmp",
    "select",
    "cvt",
    "pack64",
    "lo32",
    "hi32",
    "word",
    "sget",
    "load",
}
_INT = frozenset(("b1", *INTS))


def find(program: Program) -> tuple[list, list]:
    """-> (the qualifying loads in program order, the ops ``evaluate`` runs: every op their
    addresses and masks need, in program order)."""
    blocks = program.blocks
    nb = len(blocks)
    if nb == 0 or any(b.term[0] == "setpc" for b in blocks):
        return [], []
    written = [{op.attrs["reg"] for op in b.ops if op.name == "sset"} for b in blocks]
    preds: list[list[int]] = [[] for _ in blocks]
    for b in blocks:
        for s in b.successors() or ():  # (no s_setpc here)
            if 0 <= s < nb:
                preds[s].append(b.index)
    # registers holding their dispatch value at each block's start (a must-analysis from the
    # entry, block 0, whose start holds them all unless a branch returns to it)
    user = frozenset(range(USER_SGPRS))
    held: list = [None] * nb
    held[0] = user
    changed = True
    while changed:
        changed = False
        for i in range(nb):
            ins = [held[p] - written[p] for p in preds[i] if held[p] is not None]
            if i == 0:
                ins.append(user)
            if not ins:
                continue
            h = frozenset.intersection(*ins)
            if h != held[i]:
                held[i], changed = h, True
    loads: list = []
    ops_of: dict[int, Op] = {}  # value id -> op that makes it (known values only)
    for b in blocks:
        if held[b.index] is None:
            continue
        regs = set(held[b.index])
        for op in b.ops:
            n = op.name
            if n == "sset":
                regs.discard(op.attrs["reg"])
                continue
            if op.out is None or n not in _OPS or not op.out.uniform:
                continue
            if n == "sget":
                if op.attrs["reg"] in regs:
                    ops_of[op.out.id] = op
                continue
            if not all(x.id in ops_of for x in op.args):
                continue
            if n == "load":
                if op.attrs["space"] == "global" and op.attrs["nbytes"] % 4 == 0 and op.attrs["words"] >= 1:
                    ops_of[op.out.id] = op
                    loads.append(op)
            elif (
                op.type in _INT
                and all(x.type in _INT for x in op.args)
                and (n != "cvt" or op.attrs.get("to") in _INT)
            ):
                ops_of[op.out.id] = op
    loads = [op for op, at in zip(loads[:MAX_PRELOADS], layout(loads[:MAX_PRELOADS])) if at is not None]
    need: set = set()
    stack = [x for op in loads for x in op.args]
    while stack:
        v = stack.pop()
        if v.id in need:
            continue
        need.add(v.id)
        stack.extend(ops_of[v.id].args)
    need.update(op.out.id for op in loads)
    plan = [
        op
        for b in blocks
        for op in b.ops
        if op.out is not None and op.out.id in need and ops_of.get(op.out.id) is op
    ]
    return loads, plan


def layout(loads) -> list:
    """Where each load's words start in WL_PRE: one after another in program order; None for a
    load past PRELOAD_WORDS (find leaves it out)."""
    out, pos = [], 0
    for op in loads:
        w = op.attrs["words"]
        out.append(pos if pos + w <= PRELOAD_WORDS else None)
        pos += w if pos + w <= PRELOAD_WORDS else 0
    return out


# evaluate()'s results kept for the next dispatches: (plan, user SGPRs, fixed registers, window
# layout) -> (plan, the (address, bytes read) of each load evaluated, words, ranges)
_MEMO: dict = {}
MEMO_ENTRIES = 64


def evaluate(loads, plan, program: Program, wave_size: int, user_sgprs, fixed_regs, windows):
    """-> (words per load, None where unresolved; the (arena index, bytes) ranges read).
    ``user_sgprs``: the dispatch's user SGPR values; ``fixed_regs``: SGPR indices the dispatch
    sets per group or wave (system SGPRs), never taken as dispatch values; ``windows``: the
    dispatch's WindowSet (a load is read only from inside one window).

    The result is a function of those values, the window layout and the bytes the loads read,
    so it is kept (``_MEMO``) and given again while the same loads read the same bytes (each
    re-read from guest memory: a few words; an evaluation costs 100s of microseconds)."""
    if not loads:
        return [], []
    key = (
        id(plan),
        tuple(int(v) & 0xFFFFFFFF for v in user_sgprs),
        frozenset(fixed_regs),
        windows.starts.tobytes(),
        windows.ends.tobytes(),
        windows.offs.tobytes(),
    )
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is plan:
        if all(windows.memory.read(a, len(b)) == b for a, b in hit[1]):
            return [None if w is None else w.copy() for w in hit[2]], list(hit[3])
    read: list = []
    words, ranges = _evaluate(loads, plan, user_sgprs, fixed_regs, windows, read)
    keep(
        _MEMO, key, (plan, read, [None if w is None else w.copy() for w in words], list(ranges)), MEMO_ENTRIES
    )
    return words, ranges


def _evaluate(loads, plan, user_sgprs, fixed_regs, windows, read: list):
    """evaluate() itself; ``read`` gets the (address, bytes) of every load it reads."""
    val: dict = {}
    ranges: list = []
    nuser = min(len(user_sgprs), USER_SGPRS)
    for op in plan:
        n = op.name
        if n == "const":
            v = op.attrs.get("value_np")  # (a constant of the IR's passes: its NumPy value)
            val[op.out.id] = interp.const_value(op.type, op.attrs["value"]) if v is None else v
            continue
        if n == "sget":
            r = op.attrs["reg"]
            if r < nuser and r not in fixed_regs:
                val[op.out.id] = np.uint32(int(user_sgprs[r]) & 0xFFFFFFFF)
            continue
        if not all(x.id in val for x in op.args):
            continue
        if n == "load":
            addr, mask = int(val[op.args[0].id]), bool(val[op.args[1].id])
            nb = op.attrs["nbytes"]
            w = np.zeros(op.attrs["words"], np.uint32)
            if mask:
                d = windows.locate(addr, addr, nb) if addr % 4 == 0 else None
                if d is None:
                    continue
                # (from guest memory: the CUDA runtime's host arena holds no window, 0026)
                got = windows.memory.read(addr, nb)
                read.append((addr, got))
                w[: nb // 4] = np.frombuffer(got, "<u4")
                ranges.append((addr + d, nb))
            val[op.out.id] = w
            continue
        if n == "word":
            val[op.out.id] = np.uint32(val[op.args[0].id][op.attrs["k"]])
            continue
        r = interp.evaluate_op(op, [val[x.id] for x in op.args])
        if r is not None:  # (else: the kernel's own path)
            val[op.out.id] = r[()]
    return [val.get(op.out.id) for op in loads], ranges
