"""Global accesses of one block at known offsets from one base, tested once (decision 0047,
amendment "global accesses at known offsets from one base, one window test").

In a block, a global load or store whose address is ``root + c`` -- ``root`` one IR value, ``c``
a constant reached through u64 ``add``s of constants (``global_load_dword v1, v[2:3], off
offset:16`` and its neighbours on the same pair) -- belongs to the group of ``root``.  A group of
two or more accesses is tested once, before its first access, against that first access's
window guess: the whole span ``[root + lo, root + hi)`` (lo the least ``c``, hi the greatest
``c + size``) inside the guessed window and ``root`` a multiple of the largest alignment the
members need (min(size, 4)).  Where that holds every member lies inside that window, aligned, so
its direct access reads or writes exactly the bytes the per-access path would (windows do not
overlap: the window holding an address is the only one its search can find); where it does not,
every member takes the per-access path as before (guess, hint, search, escape).  A member whose
``c`` is not a multiple of its own alignment, or a group whose span is wider than ``MAX_SPAN``,
stays per access.  Loads the host may preload, mirrored uniform loads, wave64 uniform loads
(lane 0 and an exchange) and atomics are never grouped."""

from __future__ import annotations

M64 = (1 << 64) - 1
MAX_SPAN = 1 << 16  # bytes a group's span may cover (the rest: per-access tests)
MAX_OFFSET = 1 << 62  # |c| beyond this: not grouped (kept far from i64's edges)


class Span:
    """One group: its root value, the first member (whose guess is tested), lo, the span's
    length and the alignment root must have; ``members``: id(op) -> c."""

    __slots__ = ("root", "lead", "lo", "need", "align", "members")

    def __init__(self, root, lead, lo: int, need: int, align: int, members: dict):
        self.root, self.lead, self.lo, self.need, self.align, self.members = (
            root,
            lead,
            lo,
            need,
            align,
            members,
        )


def _const(op) -> int | None:
    if op is None or op.name != "const" or op.type not in ("u64", "i64"):
        return None
    v = op.attrs["value_np"] if "value_np" in op.attrs else op.attrs["value"]
    try:
        return int(v) & M64
    except (TypeError, ValueError):
        return None


def base_and_offset(addr, defs) -> tuple:
    """(root value, c) with addr == root + c (mod 2^64), following u64 adds of a constant."""
    c, v = 0, addr
    for _ in range(64):
        d = defs.get(v.id)
        if d is None or d.name != "add" or d.type != "u64" or len(d.args) != 2:
            break
        k0, k1 = _const(defs.get(d.args[0].id)), _const(defs.get(d.args[1].id))
        if (k0 is None) == (k1 is None):
            break
        if k0 is not None:
            c, v = (c + k0) & M64, d.args[1]
        elif k1 is not None:
            c, v = (c + k1) & M64, d.args[0]
    if c >= 1 << 63:
        c -= 1 << 64
    return v, c


def _size(op) -> int:
    return op.attrs["nbytes"]


def find(program, eligible) -> tuple[dict, dict]:
    """-> ({id(member op): its Span}, {id(first member op): its Span}) over ``program``'s
    blocks, for the global loads and stores ``eligible(op)`` admits (codegen decides: not
    preloaded, not mirrored, not a wave64 uniform load, a guess slot)."""
    of: dict = {}
    lead: dict = {}
    for b in program.blocks:
        defs = {op.out.id: op for op in b.ops if op.out is not None}
        by_root: dict = {}
        for op in b.ops:
            if op.name not in ("load", "store") or op.attrs["space"] != "global" or not eligible(op):
                continue
            nb = _size(op)
            if not (nb in (1, 2) or nb % 4 == 0):
                continue
            root, c = base_and_offset(op.args[0], defs)
            if abs(c) >= MAX_OFFSET or c % min(nb, 4):
                continue  # (such a member could never be aligned with an aligned root)
            by_root.setdefault(root.id, (root, []))[1].append((op, c))
        for root, members in by_root.values():
            if len(members) < 2:
                continue
            lo = min(c for _, c in members)
            hi = max(c + _size(op) for op, c in members)
            if hi - lo > MAX_SPAN:
                continue
            align = max(min(_size(op), 4) for op, _ in members)
            s = Span(root, members[0][0], lo, hi - lo, align, {id(op): c for op, c in members})
            lead[id(members[0][0])] = s
            for op, _ in members:
                of[id(op)] = s
    return of, lead
