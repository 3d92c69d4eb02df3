"""One instruction's IR, kept across programs (decision 0035).

Programs that share instructions -- tinygrad's instruction tests are ~110 instructions each, a
common prologue and epilogue around a few under test -- translate the same words again and
again.  ``translate_one`` runs an instruction's frontend once per *key* and replays the ops it
emitted for every later instruction with that key: new ``Op``s and ``Value``s, the values
numbered from the program's counter exactly as the frontend would have numbered them, so a
replayed block is the block a fresh translation gives, op for op and value id for value id.

The key holds everything a frontend reads besides the Builder's emission methods: the
instruction as decoded (words, size, encoding, variant, name, text; its fields are a function of
these for a target), the target, the wave size and GB_ADDR_CONFIG; and, where a frontend reads
them, the instruction's guest address (``s_getpc_b64``, ``s_setpc_b64``, ``s_swappc_b64``,
``s_call_b64``) or the program's scratch decision for it (MUBUF/MTBUF: ``Plan.is_scratch_mubuf``).
What the frontend sets on the Builder besides ops is kept with them: the VGPRs it reaches
(``max_vgpr``) and whether it uses floats or scratch.

Kept only when the result is provably self-contained, checked on the ops themselves: no
terminator set (terms name block offsets and values), no DPP condition left live for a later
instruction (``_dpp_ok``), every Value argument made by one of the instruction's own ops, the
counter advanced once per op, and arguments and attributes plain data (numbers, strings,
None, tuples of them).  Anything else is translated afresh every time.  A refusal or an
Unsupported raised by a frontend is never kept (it is raised again on the next translation).
GFX12's own handlers (``gfx12.HANDLERS``) are never cached: they change ``b.target`` for a while.
"""

from __future__ import annotations

import itertools
from functools import partial

from ..ir.program import EXEC_HI, EXEC_LO, LAZY_EXEC, LAZY_MODE, MODE_REG, LazyOps, Op, Value

# key -> (recipe, number of values, max_vgpr, uses_float, uses_scratch, serial, flags): see _entry;
# flags: LAZY_EXEC / LAZY_MODE when the ops write EXEC / MODE (ir/program.LazyOps).
# ``serial`` names the key in Program.instr_keys (a small int that hashes in one step, for the
# piece keys of backends/numpy/codegen.py): a new one per entry made, never reused, so two
# instructions share a serial exactly when they share the key
_CACHE: dict = {}
_SERIAL = itertools.count()
# serial -> the key it names (``key_for``: the piece cache on disk names instructions by their keys,
# which are the same in every process; a serial is not); at most CACHE_MAX, cleared when full
_KEYS: dict = {}
CACHE_MAX = 1 << 13  # entries (an instruction's ops each, ~1-2 KB); cleared when full
ENABLED = [True]  # tests turn it off to compare against fresh translations
# while on (the tinygrad hook's one-wave dispatches, with backends/numpy PieceCache.on), a hit
# keeps its ops as the entry until they are read (frontend.program: Block.set_lazy, LazyOps)
LAZY = [False]

# names whose frontend reads the instruction's own address (frontend/scalar_alu.py)
PC_NAMES = frozenset({"s_getpc_b64", "s_setpc_b64", "s_swappc_b64", "s_call_b64"})
_PLAIN = (int, float, str, bool, type(None))
_MUBUF = frozenset(("MUBUF", "MTBUF"))


def _plain(x) -> bool:
    if isinstance(x, _PLAIN):
        return True
    if type(x) is tuple:
        return all(_plain(y) for y in x)
    return False


def key_of(ins, b):
    """The cache key of translating ``ins`` with Builder ``b`` (see the module's doc)."""
    where = None
    if ins.name in PC_NAMES:
        where = ("pc", b.base_address + ins.offset)
    elif ins.encoding in ("MUBUF", "MTBUF"):
        plan = getattr(b, "scratch", None)
        where = ("scratch", plan is not None and plan.is_scratch_mubuf(ins.offset))
    return (
        ins.words,
        ins.size,
        ins.encoding,
        ins.variant,
        ins.name,
        ins.text,
        b.target,
        b.wave_size,
        b.gb_addr_config,
        b.border_color_base,
        where,
    )


def translate_one(fe, ins, b) -> None:
    """``fe(ins, b)``, or the ops it emitted for an instruction with the same key, replayed."""
    if not ENABLED[0] or b.term is not None:
        fe(ins, b)
        return
    # (key_of's key, made here: one call fewer an instruction)
    name, enc = ins[6], ins[3]
    where = None
    if name in PC_NAMES or enc in _MUBUF:
        where = key_of(ins, b)[-1]
    key = (
        ins[2],
        ins[1],
        enc,
        ins[4],
        name,
        ins[10],
        b.target,
        b.wave_size,
        b.gb_addr_config,
        b.border_color_base,
        where,
    )
    hit = _CACHE.get(key)
    keys = getattr(b, "instr_keys", None)
    if hit is not None:
        lazy = b.lazy
        if lazy is None:
            _replay(hit, b)
        else:  # (the same counters and flags as _replay; the ops made when read: lazy_ops)
            counter = b._counter
            lazy.append((len(b.ops), hit, counter[0], b.instr))
            # (_counts, inline)
            counter[0] += hit[1]
            if hit[2] > b.max_vgpr:
                b.max_vgpr = hit[2]
            if hit[3]:
                b.uses_float = True
            if hit[4]:
                b.uses_scratch = True
        if keys is not None:
            keys[b.instr] = (hit[5], len(hit[0]))
        return
    start, first = len(b.ops), b._counter[0]
    saved = (b.max_vgpr, b.uses_float, b.uses_scratch)
    b.max_vgpr, b.uses_float, b.uses_scratch = -1, False, False
    try:
        fe(ins, b)
        entry = _entry(b, start, first)
    finally:
        mv, uf, us = b.max_vgpr, b.uses_float, b.uses_scratch
        b.max_vgpr = max(saved[0], mv)
        b.uses_float = saved[1] or uf
        b.uses_scratch = saved[2] or us
    if entry is not None:
        if len(_CACHE) >= CACHE_MAX:
            _CACHE.clear()
        serial = next(_SERIAL)
        _CACHE[key] = entry + (mv, uf, us, serial, _flags(entry[0]))
        if len(_KEYS) >= CACHE_MAX:
            _KEYS.clear()
        _KEYS[serial] = key
        if keys is not None:
            keys[b.instr] = (serial, len(entry[0]))


def key_for(serial: int):
    """The key that ``serial`` names (a serial is never reused), or None when it is no longer
    kept."""
    return _KEYS.get(serial)


def _entry(b, start: int, first: int):
    """(recipe, count) when the ops emitted since ``start`` can be replayed, else None."""
    if b.term is not None or getattr(b, "_dpp_ok", None) is not None:
        return None
    ops = b.ops[start:]
    count = b._counter[0] - first
    own = set()
    for op in ops:
        for a in op.args:
            if a.__class__ is Value:
                if id(a) not in own:
                    return None
            elif not _plain(a):
                return None
        for v in op.attrs.values():
            if not _plain(v):
                return None
        if op.out is not None:
            if not first < op.out.id <= first + count or id(op.out) in own:
                return None
            own.add(id(op.out))
    if len(own) != count:
        return None
    # the recipe: per op (name, type, args, attrs, result (type, uniform) or None, value refs):
    # args with each Value replaced by the index of the op value it is (refs: which positions)
    index: dict = {}
    recipe = []
    for op in ops:
        refs = tuple(j for j, a in enumerate(op.args) if a.__class__ is Value)
        args = tuple(index[id(a)] if a.__class__ is Value else a for a in op.args)
        res = None
        if op.out is not None:
            index[id(op.out)] = len(index)
            res = (op.out.type, op.out.uniform, op.out.id - first)
        recipe.append((op.name, op.type, args, dict(op.attrs), res, refs))
    return (tuple(recipe), count)


def _flags(recipe) -> int:
    """LAZY_EXEC / LAZY_MODE when the recipe's ops write EXEC / MODE (Block.exec_writes and the
    pieces' MODE test read them off a LazyOps segment without its ops)."""
    f = 0
    for name, _type, _args, attrs, _res, _refs in recipe:
        if name == "sset":
            r = attrs.get("reg")
            if r in (EXEC_LO, EXEC_HI):
                f |= LAZY_EXEC
            elif r == MODE_REG:
                f |= LAZY_MODE
    return f


def _make(hit, base: int, instr: int) -> list:
    """The ops of entry ``hit`` replayed for instruction ``instr``, values numbered from ``base``."""
    recipe = hit[0]
    vals: list = []
    out_ops: list = []
    for name, type_, args, attrs, res, refs in recipe:
        if refs:
            a = list(args)
            for j in refs:
                a[j] = vals[a[j]]
            args = tuple(a)
        out = None
        if res is not None:
            out = Value(base + res[2], res[0], res[1])
            vals.append(out)
        out_ops.append(Op(name, type_, args, dict(attrs), out, instr))
    return out_ops


def _replay(hit, b) -> None:
    b.ops.extend(_make(hit, b._counter[0], b.instr))
    _counts(hit, b)


def _counts(hit, b) -> None:
    """What replaying ``hit`` does to ``b`` besides its ops: the value counter and the flags."""
    _, count, mv, uf, us = hit[:5]
    b._counter[0] += count
    if mv > b.max_vgpr:
        b.max_vgpr = mv
    if uf:
        b.uses_float = True
    if us:
        b.uses_scratch = True


def lazy_ops(b) -> LazyOps | None:
    """The ops of ``b``'s block as a LazyOps (Block.set_lazy) when hits were kept lazily
    (``b.lazy``: (position in b.ops, entry, first value id, instruction) of each), else None."""
    holes = b.lazy
    if not holes:
        return None
    ops = b.ops
    segs: list = []
    starts: list = []
    n = prev = 0
    for pos, hit, base, instr in holes:
        if pos > prev:
            segs.append([ops[prev:pos], None, pos - prev, -1, 0])
            starts.append(n)
            n += pos - prev
            prev = pos
        k = len(hit[0])
        if k:  # (an entry with no op, e.g. s_nop, holds no segment)
            segs.append([None, partial(_make, hit, base, instr), k, instr, hit[6]])
            starts.append(n)
            n += k
    if len(ops) > prev:
        segs.append([ops[prev:], None, len(ops) - prev, -1, 0])
        starts.append(n)
        n += len(ops) - prev
    return LazyOps(segs, starts, 0, n)
