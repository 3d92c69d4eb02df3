"""Chains of f32 fmas tested for NaN once, at their end (WAVELIFT_CUDA_NAN=chain, the default since session 46; decision
0047's amendment h106).

Each ``wl_fma`` is ``__fmaf_rn`` and a test of its result for NaN (the AMD NaN a NaN result must
carry: an operand's, quieted, or the default one) -- on NVIDIA a compare, a branch and its
reconvergence around every fma: 4 of matmul16's 5 SASS instructions a multiply-add.

An fma is *inner* when its result reaches, bit for bit and nowhere else, one operand of another
f32 fma of the same block: through 32-bit bitcasts and through a register written and read back
in the block (a deferred write, ir/blends.py, that a later write of the register in the block
overwrites, read by exactly one forwarded vget).  Inner fmas are lowered as the bare
``__fmaf_rn``; the fma at the end of a chain (the *root*: not inner, fed by inner ones) as the
bare fma and, where its result is NaN, the whole chain again with ``wl_fma``.

Exact: an fma with a NaN operand has a NaN result (IEEE 754; ``__fmaf_rn`` with any NaN), so an
inner fma's NaN reaches the root: a root that is not NaN had no NaN on its way, and then every
bare result equals ``wl_fma``'s (which keeps any result that is not NaN); a root that is NaN is
computed again from the chain's leaves exactly as before.  Values are per lane, and a chain's
register values outside its writes' mask are arbitrary both ways (ir/blends.py: consumed only
under that mask)."""

from __future__ import annotations

_BITS32 = ("u32", "i32", "f32")


def chains(ops, term_args, src: dict | None, skip=frozenset(), most: int = 4) -> dict:
    """-> {operand value id: the inner fma whose result it is, bit for bit} for each inner fma
    of the block ``ops`` (see the module's text), keyed by the operand of the fma it feeds;
    ``src``: deferred_blends's forwarded vgets (None: no chain through a register); ``skip``:
    ops the kernel leaves out (none of them on a chain); ``most``: fmas in a chain at most (an
    fma that would make one longer ends it: the chain's operands stay live in registers until
    its end's test)."""
    uses: dict[int, list] = {}
    for op in ops:
        for i, x in enumerate(op.args):
            if hasattr(x, "id"):
                uses.setdefault(x.id, []).append((op, i))
    ends = {x.id for x in term_args if hasattr(x, "id")}
    readers: dict[int, list] = {}  # raw value id -> the vgets forwarded to it
    for op in ops:
        if op.name == "vget" and src is not None and op.out.id in src:
            readers.setdefault(src[op.out.id].id, []).append(op)
    pos = {id(op): k for k, op in enumerate(ops)}
    later_write: set = set()  # id(vset) of each register write a later one of the block overwrites
    seen: dict = {}
    for op in reversed(ops):
        if op.name == "vset":
            if op.attrs["reg"] in seen:
                later_write.add(id(op))
            seen[op.attrs["reg"]] = op

    def target(x):
        """the operand value (of an f32 fma) that value x reaches bit for bit and alone, or None"""
        for _ in range(len(ops)):
            if x.id in ends:
                return None
            u = uses.get(x.id, [])
            r = readers.get(x.id, [])
            if len(u) != 1 or id(u[0][0]) in skip:
                return None
            op, _i = u[0]
            if op.name == "fma" and op.type == "f32" and not r:
                return x
            if op.name == "bitcast" and op.type in _BITS32 and op.attrs.get("to") in _BITS32 and not r:
                x = op.out
            elif op.name == "vset" and id(op) in later_write and len(r) == 1 and id(r[0]) not in skip:
                if pos[id(r[0])] < pos[id(op)]:
                    return None
                x = r[0].out
            else:
                return None
        return None

    out: dict = {}
    size: dict = {}  # id(fma) -> fmas in the chain ending at it so far
    for op in ops:
        if op.name == "fma" and op.type == "f32" and id(op) not in skip and op.out is not None:
            size[id(op)] = 1 + sum(size[id(out[x.id])] for x in op.args if x.id in out)
            if all(x.type == "f32" for x in op.args) and size[id(op)] < most:
                w = target(op.out)
                if w is not None:
                    out[w.id] = op
    return out


def exact(op, inner_of: dict, name: dict) -> str:
    """``wl_fma`` of the chain ending at ``op``, from its leaves: an operand an inner fma feeds
    (``inner_of``: chains's result) is that fma's exact expression; a leaf is its name"""
    a = [exact(inner_of[x.id], inner_of, name) if x.id in inner_of else name[x.id] for x in op.args]
    return f"wl_fma({a[0]}, {a[1]}, {a[2]})"
