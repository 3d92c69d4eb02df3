"""Dead code removal, the pass after forward (passes/forward.py): keep effects and whatever they
(and the terminator) use; drop register writes that a later write covers with no read between
(a VGPR write is covered by one under the same mask value) and writes of registers not live
after the block (``live_out``, passes/liveness.py) that nothing after them in the block reads."""

from __future__ import annotations

from ..ops import KEEP_OPS
from ..program import EXEC_HI, EXEC_LO, MODE_REG, Op, Value


def dce(ops: list[Op], term: tuple, live_out) -> list[Op]:
    """The ops of ``ops`` that are kept, in order.  ``live_out``: (SGPRs, VGPRs) that later
    blocks may read (None: all)."""
    live = {x.id for x in term if isinstance(x, Value)}
    keep = []
    later: dict = {}  # (file, reg) -> the next write's mask id ("all" for an
    # SGPR), "dead" (unread after the block) or "read"

    def after(f, r):  # what follows the block
        if live_out is None or r in live_out[f == "vset"]:
            return "read"
        return "dead"

    for op in reversed(ops):
        if op.name in ("sset", "vset"):
            r = (op.name, op.attrs["reg"])
            nxt = later.get(r) or after(*r)
            if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI, MODE_REG):
                nxt = "read"  # EXEC/MODE are read outside the IR (lane counts, regroup)
            mask = op.args[1].id if op.name == "vset" else "all"
            if nxt == "dead" or nxt == mask:
                continue
            later[r] = mask
        if op.name in KEEP_OPS or (op.out is not None and op.out.id in live):
            keep.append(op)
            live.update(x.id for x in op.args)
            if op.name in ("sget", "vget"):
                later[("sset" if op.name == "sget" else "vset", op.attrs["reg"])] = "read"
    keep.reverse()
    return keep
