"""Deferred EXEC blends: which VGPR writes of a block may blend with the old value only once, at
the block's end.  An analysis of the IR that both C-family targets lower by (the CUDA kernel: a
select per write otherwise; the native tier: a blend per write) and the liveness pass reads (a
masked write read only where its mask holds does not make the register live before the block)."""

from __future__ import annotations

from .ops import PURE_OPS
from .program import EXEC_HI, EXEC_LO

# ops computed lane by lane from their operands alone: their result is tainted by an operand's
# mask (the pure ops, and the denormal flushes, which also read MODE)
LANEWISE = PURE_OPS | {"fin", "fout"}


def deferred_blends(ops, defined, term_args=(), atomics: bool = False) -> dict | None:
    """Register writes whose EXEC blend can wait until the block's end, or None.

    A vset under mask m stores the raw value; a later read of the register uses it as is.
    Such a value (and anything computed from it lane by lane) is right in the lanes where
    m is set and arbitrary elsewhere: it is *tainted* by m.  That is exact as long as every
    tainted value is consumed only where m masks it again: lane-wise ops (their result is
    tainted), a vset, load or store under m, a ballot of (x & m); the one blend with the old
    register value is done at the end, for registers live after the block.  Anything else
    (another mask, a cross-lane read, a refusal test, two masks mixed) -> None: the block
    blends at every write.  ``term_args``: the values the block's terminator reads (a
    tainted one -> None).  Returns vget output id -> the raw value it reads.  Both the CUDA
    kernel (a thread per lane: a select per write otherwise) and the host's native blocks
    (native/) lower by it.

    ``atomics``: an atomic under m is consumed as a load or store is (its address, data and
    compare are used only in the lanes its mask runs; its result, the old value, is clean) --
    for a target whose atomic runs only in its mask's lanes and leaves 0 in the others (the
    CUDA kernel's, WAVELIFT_CUDA_BLENDS=atomics; decision 0047's amendment h115).  Off: a
    block with a tainted atomic blends at every write, as before (the native tier, liveness:
    which then keeps more registers live, never fewer)."""
    taint: dict[int, int] = {}  # value id -> the mask id it is tainted by
    reg: dict[int, tuple] = {}  # VGPR -> (raw value, mask id) of its last write
    src: dict[int, object] = {}
    same: dict[int, int] = {}  # exec op's value id -> the first exec op's since EXEC changed
    first_exec = None

    def t(x):
        return taint.get(getattr(x, "id", None))

    def mid(x):  # a mask's id (EXEC read twice is one mask)
        return same.get(x.id, x.id)

    for op in ops:
        n, args = op.name, op.args
        if n == "exec":
            first_exec = first_exec if first_exec is not None else op.out.id
            same[op.out.id] = first_exec
            continue
        if n == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI):
            first_exec = None
        ts = {t(x) for x in args} - {None}
        if len(ts) > 1:
            return None
        m = next(iter(ts), None)
        if n == "vget":
            r = reg.get(op.attrs["reg"])
            if r is not None:  # (even a clean value: the register's other lanes
                src[op.out.id] = r[0]  # hold the old value, the raw one does not)
                taint[op.out.id] = r[1]
        elif n == "vset":
            v, mask = args
            prev = reg.get(op.attrs["reg"])
            if (
                t(mask) is not None
                or m not in (None, mid(mask))
                or (prev is not None and prev[1] != mid(mask))
            ):
                return None
            reg[op.attrs["reg"]] = (v, mid(mask))
        elif n in ("load", "store") or n == "atomic" and atomics:
            if m is not None and (t(args[1]) is not None or m != mid(args[1])):
                return None  # (a load's or atomic's result is clean: inactive lanes read 0)
        elif n == "ballot":
            if m is not None:
                d = defined.get(args[0].id)
                if d is None or d.name != "and" or all(not hasattr(x, "id") or mid(x) != m for x in d.args):
                    return None
        elif n in LANEWISE or n == "lanes":
            # (lanes(x), which only the passes emit — forward's ballot_bit: bit `lane` of the
            # wave32 ballot of b is b — is x in each lane: lowered as x itself by every target)
            if m is not None and op.out is not None:
                taint[op.out.id] = m
        elif m is not None:
            return None  # cross-lane reads, refusal tests, ...
    if any(t(x) is not None for x in term_args):
        return None
    return src
