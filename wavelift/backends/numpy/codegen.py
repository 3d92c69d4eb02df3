"""Lower IR blocks to Python source over NumPy arrays (numbers only; no guest text).

Generated block functions have the signature ``blk(R, w, N, mode)``:
  R     the runtime (state arrays S [regs, waves, 1] and V [regs, waves, lanes], memory)
  w     the waves of the group: ``slice(None)`` when all waves of the batch run, else indices
  N     number of waves in the group
  mode  the group's MODE register value (waves are grouped by it)
and return the next block index (int or per-wave int array), or for ``setpc`` the target address.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import pathlib
import struct
import sys
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ... import settings
from ...frontend.instr_cache import key_for
from ...ir.passes.pipeline import Passes, optimize
from ...ir.program import EXEC_HI, EXEC_LO, LAZY_MODE, MODE_REG, Block, Program, Value, refusal_of
from .. import disk_cache
from .expr import EXPR, ExprLowering


class Lowering(ExprLowering):
    """Python source of blocks (``block_source``), each after the IR's passes (ir/passes) for its
    MODE when one is given."""

    def lane_count_points(self, blk: Block) -> dict:
        """Exact ``lane_instructions``: op index -> statement adding (vector instructions of the
        segment starting there) x (active lanes).  Segments end after each instruction that
        writes EXEC, so every vector instruction is counted with the EXEC it ran under."""
        from ...frontend.program import lane_count_points

        points = lane_count_points(self.p, blk)
        hi = f"S[{EXEC_HI}, w]" if self.L == 64 else "None"
        return {i: f"    R.count_lanes({k}, S[{EXEC_LO}, w], {hi})" for i, k in points.items()}

    @staticmethod
    def reads_to_copy(blk: Block) -> set:
        """Op indices of register reads that must copy: a read is a view of the register file,
        so it is copied only when the value (or a value that may be a view of it: a bitcast,
        a broadcast, a select or min/max that may return an operand, G.sel) is used after the
        next write of that register in the block."""
        roots: dict[int, tuple] = {}
        last_use: dict[int, int] = {}

        def rs(x):
            return roots.get(x.id, (x.id,))

        for i, op in enumerate(blk.ops):
            for x in op.args:
                for r in rs(x):
                    last_use[r] = i
            if op.name in ("bitcast", "lanes") and op.out is not None:
                roots[op.out.id] = rs(op.args[0])
            elif op.name in ("select", "fmin", "fmax") and op.out is not None:
                roots[op.out.id] = sum((rs(x) for x in op.args[-2:]), ())
        end = len(blk.ops)
        for x in blk.term[1:]:
            if hasattr(x, "id"):
                for r in rs(x):
                    last_use[r] = end
        import bisect

        writes: dict = {}
        for k, op in enumerate(blk.ops):
            if op.name in ("sset", "vset"):
                writes.setdefault((op.name, op.attrs["reg"]), []).append(k)
        out = set()
        for i, op in enumerate(blk.ops):
            if op.name not in ("sget", "vget"):
                continue
            ws = writes.get(("sset" if op.name == "sget" else "vset", op.attrs["reg"]))
            if not ws:
                continue
            assert op.out is not None  # a register read has a result
            p = bisect.bisect_right(ws, i)
            if p < len(ws) and last_use.get(op.out.id, -1) > ws[p]:
                out.add(i)
        return out

    def block_source(self, blk: Block, mode=None, live_out=None, optimised: Block | None = None) -> str:
        """The source of ``blk``'s function for MODE ``mode`` (None: any, no passes), after the
        passes with ``live_out`` after it; ``optimised``: that block already through the passes
        (pipeline.Passes ``block``)."""
        head = "R, w, N, mode" if self.ib is None else "R, w, N, mode, IB"
        lines = [f"def blk_{blk.index}({head}):", "    S = R.S; V = R.V"]
        if blk.uses_float:
            first = self.ins(blk.instrs[0]) if blk.instrs else None
            if mode is None:
                lines.append(f"    if mode & 15: R.refuse_rounding(mode, w, {first})")
            elif mode & 15:
                lines.append(f"    R.refuse_rounding(mode, w, {first})")
        if optimised is not None:
            blk = optimised
        elif mode is not None:
            blk = optimize(blk, mode, self.L, live_out)
        st = _Block(lines, mode, self.reads_to_copy(blk))
        counts = self.lane_count_points(blk)
        # values named by their order in the block (v0, v1, ...), not by their ids: the text
        # is then a function of the block's ops up to value numbering, so two pieces that
        # differ only there share their source and its code object (_piece_code)
        made = 0
        for i, op in enumerate(blk.ops):
            if i in counts:
                lines.append(counts[i])
            a = [st.name[x.id] for x in op.args]
            o = None
            if op.out is not None:
                o = f"v{made}"
                made += 1
            e = BLOCK[op.name](self, st, i, op, a, o)
            if e is None:
                continue
            assert op.out is not None and o is not None  # (every op left is a value op)
            lines.append(f"    {o} = {e}")
            st.name[op.out.id] = o
        if len(blk.ops) in counts:
            lines.append(counts[len(blk.ops)])
        term = blk.term
        k = term[0]
        if k in ("jump", "barrier", "mode"):
            lines.append(f"    return {term[1]}")
        elif k == "branch":
            c = st.name[term[1].id]
            lines.append(f"    c = np.asarray({c})")
            lines.append(f"    if c.ndim == 0: return {term[2]} if c else {term[3]}")
            lines.append(f"    return np.where(c.reshape(-1), {term[2]}, {term[3]})")
        elif k == "end":
            lines.append("    return -1")
        elif k == "setpc":
            lines.append(
                f"    return np.broadcast_to(np.asarray({st.name[term[1].id]}, np.uint64).reshape(-1), (N,))"
            )
        else:
            raise NotImplementedError(k)
        return "\n".join(lines) + "\n"


class _Block:
    """What the lowering of one block's ops keeps between them (block_source)."""

    def __init__(self, lines: list[str], mode, must_copy: set):
        self.lines = lines
        self.mode = mode  # the MODE value the block is specialised for (None: any)
        self.must_copy = must_copy  # op indices of register reads that copy (reads_to_copy)
        self.name: dict[int, str] = {}  # value id -> its Python name
        self.kval: dict = {}  # name of a constant -> its value
        self.exec_full: dict = {}  # exec value name -> name of its "all lanes on" flag
        self.exec_cache: str | None = None  # name of the current EXEC's exec value
        self.exec_m: set = set()  # exec value names whose u32 mask (for G.blend) is made


# Each op's lowering in a block: (lowering, block state, op index, op, argument names, result
# name) -> the value's expression (the caller assigns it to the result name), or None when it
# wrote its own statements.


def _value(low, st, i, op, a, o):
    return low.expr(op, a)


def _const(low, st, i, op, a, o):
    if "value_np" in op.attrs:
        low.consts.append(op.attrs["value_np"])
        e = f"K[{len(low.consts) - 1}]"
    else:
        e = low.const(op.type, op.attrs["value"])
    st.kval[o] = low.consts[-1]
    return e


def _reg_read(file: str):
    def read(low, st, i, op, a, o):
        e = f"{file}[{op.attrs['reg']}, w]"
        return e + ".copy()" if i in st.must_copy else e

    return read


def _exec(low, st, i, op, a, o):
    assert op.out is not None and o is not None  # exec has a result
    if st.exec_cache is not None:
        st.name[op.out.id] = st.exec_cache
        return None
    e = f"H.exec_mask(S[{EXEC_LO}, w], S[{EXEC_HI}, w], {low.L}, R.LANEBITS)"
    st.exec_cache = o
    st.lines.append(f"    {o} = {e}")
    st.lines.append(f"    {o}_all = bool({o}.all())")
    st.name[op.out.id] = o
    st.exec_full[o] = f"{o}_all"
    return None


def _flush(low, st, i, op, a, o):
    if st.mode is not None:
        return f"H.flush({a[0]})"  # kept by the passes only when MODE flushes
    return low.expr(op, a)


def _fminmax(low, st, i, op, a, o):
    if op.type == "f32" and op.out is not None:
        e = _minmax_const(op.name, a, st.kval, not op.out.uniform)
        if e:
            return e
    return low.expr(op, a)


def _fcommute(low, st, i, op, a, o):
    """fadd/fmul f32/f64.  NumPy computes an array and a 0-d constant as constant op array, so
    with two NaN operands it gave the constant's NaN, not the first operand's (RDNA: the first
    NaN operand quieted; docs/float-semantics.md): with a NaN constant operand, nan_first."""
    e = low.expr(op, a)
    if op.type in ("f32", "f64") and any(_is_nan(st.kval.get(x)) for x in a):
        return f"H.nan_first({e}, {a[0]})"
    return e


def _is_nan(k) -> bool:
    return isinstance(k, np.floating) and bool(np.isnan(k))


def _sset(low, st, i, op, a, o):
    st.lines.append(f"    S[{op.attrs['reg']}, w] = {a[0]}")
    if op.attrs["reg"] in (EXEC_LO, EXEC_HI):
        st.exec_cache = None


def _vset(low, st, i, op, a, o):
    r, lines, full = op.attrs["reg"], st.lines, st.exec_full
    if a[1] in full:  # EXEC mask: a plain store when all lanes are on
        if a[1] not in st.exec_m:
            st.exec_m.add(a[1])
            lines.append(f"    {a[1]}_m = None if {full[a[1]]} else G.umask({a[1]})")
        lines.append(f"    if {full[a[1]]}: V[{r}, w] = {a[0]}")
        lines.append(f"    else: G.blend(V, {r}, w, {a[0]}, {a[1]}_m)")
    else:
        lines.append(f"    G.blend(V, {r}, w, {a[0]}, G.umask({a[1]}))")


def _refuse_if(low, st, i, op, a, o):
    k, why, code = refusal_of(op)
    st.lines.append(f"    if np.any({a[0]}): R.refuse_at({low.ins(k)}, {why!r}, {code!r}, w, {a[0]})")


def _store(low, st, i, op, a, o):
    ws = "(" + "".join(x + ", " for x in a[2:]) + ")"
    st.lines.append(
        f"    R.store({op.attrs['space']!r}, {low.ins(op.instr)}, {a[0]}, {a[1]}, {ws}, {op.attrs['nbytes']}, w, N)"
    )


# op name -> its lowering in a block: every op of ir/ops.py and the passes' PASS_OPS, one entry
# each (a missing one is a KeyError, which tests/ir/test_ops.py's probe reports); value ops
# without an entry of their own are their expression (expr.EXPR)
BLOCK: dict[str, Callable[..., str | None]] = {
    **{n: _value for n in EXPR},
    "const": _const,
    "sget": _reg_read("S"),
    "vget": _reg_read("V"),
    "exec": _exec,
    "fin": _flush,
    "fout": _flush,
    "fmin": _fminmax,
    "fmax": _fminmax,
    "fadd": _fcommute,
    "fmul": _fcommute,
    "sset": _sset,
    "vset": _vset,
    "refuse_if": _refuse_if,
    "store": _store,
}


def _minmax_const(n, a, kval, per_lane):
    """f32 fmin/fmax with one non-NaN constant operand C, exactly as H.fmin/H.fmax: their
    equal-operand fix (bitwise OR for min / AND for max) changes nothing unless C is a zero, and
    their two-NaN fix never applies, so this is np.fmin/np.fmax (same operand order, so the same
    NaN results) and, for C = +-0, the OR/AND of x and C where x is a zero (x itself or C).
    Per-lane results only: a uniform x is a [waves, 1] array, which np.fmin/np.fmax run in
    their scalar loop, and that returns a signaling NaN x quieted instead of C (H.fmin's fix)."""
    if not per_lane:
        return None
    for x, c in ((a[0], a[1]), (a[1], a[0])):
        k = kval.get(c)
        if k is None or not isinstance(k, np.float32) or np.isnan(k):
            continue
        e = f"np.{n}({a[0]}, {a[1]})"
        if k == 0:
            if (n == "fmin") != bool(np.signbit(k)):  # min(x, +0) / max(x, -0): x
                e = f"G.sel({x} == {c}, {x}, {e})"
            elif n == "fmax":  # max(x, +0) >= +0 (NaN x: +0): |r| turns -0 into +0
                e = f"np.abs({e})"
            else:  # min(x, -0) <= -0: -|r| turns +0 into -0
                e = f"np.negative(np.abs({e}))"
        return e
    return None


def compile_program(program: Program, wave_size: int):
    """-> list of block functions (compiled once; cached with the module)."""
    low = Lowering(program, wave_size)
    src = "\n".join(low.block_source(b) for b in program.blocks)
    ns = low.namespace()
    exec(compile(src, "<wavelift-module>", "exec"), ns)
    return [ns[f"blk_{b.index}"] for b in program.blocks], src


class ModeBlocks:
    """Block functions specialised for one MODE value each, compiled on first use (the
    scheduler runs a group of waves that share MODE; docs/decisions/0006)."""

    def __init__(self, program: Program, wave_size: int, index_key: tuple | None = None):
        """``index_key``: the program as every process names it (numpy.build_module), under
        which the native index keeps its libraries; None: not kept there."""
        self.program = program
        self.L = wave_size
        self.fns: dict = {}
        self.sources: list = []
        self.passes: dict = {}  # MODE -> its pipeline.Passes (liveness, each block's passes once)
        self.natives: dict = {}  # MODE -> native.NativeBlocks (or the reason there are none)
        self.index_key = index_key
        self._indexed: set = set()  # MODEs whose index entry was read or written
        self._looked: set = set()  # MODEs looked for in the index

    def _passes(self, mode: int) -> Passes:
        p = self.passes.get(mode)
        if p is None:
            p = self.passes[mode] = Passes(self.program, int(mode), self.L)
        return p

    def settle(self) -> None:
        """Drop the passes' kept blocks (the end of a dispatch): they are made for the blocks a
        dispatch compiles and the native library it asks for (pipeline.Passes: once, not once
        per user); held on by a cached module they cost as much memory as its IR (h154: 158k
        objects, 20 MB over 30 fixture programs).  What a later dispatch compiles (a block
        reached later, the library asked for after NATIVE_AFTER_MS) makes them again."""
        for p in self.passes.values():
            p.drop()

    def _live(self, mode: int):
        """Per block, the registers live after it for ``mode``."""
        return self._passes(mode).live

    def get(self, index: int, mode: int):
        f = self.fns.get((index, mode))
        if f is None and PIECES.on:
            f = PIECES.block(self, index, int(mode))
            if f is not None:
                self.fns[(index, mode)] = f
        if f is None:
            p = self._passes(mode)
            low = Lowering(self.program, self.L)
            src = low.block_source(self.program.blocks[index], int(mode), p.live[index], p.block(index))
            ns = low.namespace()
            exec(compile(src, f"<wavelift-block-{index}-mode-{mode:#x}>", "exec"), ns)
            f = self.fns[(index, mode)] = ns[f"blk_{index}"]
            self.sources.append(src)
        return f

    def native(self, index: int, mode: int):
        """The native-tier function of block ``index`` for ``mode`` (native.py; its library is
        compiled on the first request for that MODE), or None: the NumPy block runs."""
        return self.native_library(mode).get(index)

    def native_library(self, mode: int, background: bool = False):
        """native.NativeBlocks of ``mode`` (or NoNative: why there is none).  ``background``
        (WL_NATIVE=auto): a library not in the disk cache compiles while NumPy blocks run; it
        is used from the first request after it is ready."""
        from .. import native

        nb = self.natives.get(mode)
        if nb is None:
            # (a background compile writes the index entry itself once the library is on disk)
            index = self._index_name(mode) if background else None
            try:
                nb = native.NativeBlocks(
                    self.program, self.L, int(mode), self._passes(mode), background, index
                )
            except native.Unsupported as e:
                nb = native.NoNative(str(e))
            except Exception as e:  # noqa: BLE001 - a tier bug must not fail the dispatch:
                # its NumPy blocks run instead, and the tier tests fail on the recorded problem
                nb = native.NoNative(f"internal error: {type(e).__name__}: {e}")
            self.natives[mode] = nb
        if isinstance(nb, native.NativeBlocks) and nb.pending is not None:
            try:
                if not nb.ready():
                    return native.COMPILING
            except native.Unsupported as e:
                nb = self.natives[mode] = native.NoNative(str(e))
            except Exception as e:  # noqa: BLE001 - as above
                nb = self.natives[mode] = native.NoNative(f"internal error: {type(e).__name__}: {e}")
        if (
            isinstance(nb, native.NativeBlocks)
            and (nb.library or nb.nothing_lowered)
            and mode not in self._indexed
        ):
            # (a library made from its source: the index names it; or no block lowered: the index
            # says so, and a later process makes no source for it -- decision 0012, amendment h107)
            self._indexed.add(mode)
            name = self._index_name(mode)
            if name:
                native.index_store(name, nb.index_entry())
        return nb

    def native_known(self, mode: int):
        """``mode``'s native library when it is there without making its source (decision 0012,
        amendment h95): attached in this process, or named by the native index and found in
        the disk cache; else None (nothing is compiled)."""
        from .. import native

        nb = self.natives.get(mode)
        if type(nb) is native.NativeBlocks and nb.pending is None and nb.fns:
            return nb  # (attached)
        if mode in self.natives:
            nb = self.native_library(mode, background=True)
            return nb if isinstance(nb, native.NativeBlocks) and nb.fns else None  # (a block runs)
        if mode in self._looked:
            return None  # (looked for once)
        self._looked.add(mode)
        name = self._index_name(mode)
        nb = native.NativeBlocks.from_index(name) if name else None
        if nb is not None:
            self.natives[mode] = nb
            self._indexed.add(mode)
            if nb.nothing_lowered:
                return None  # (NumPy blocks, and nothing asked for: native_library has it)
        return nb

    def _index_name(self, mode: int) -> str | None:
        from .. import native

        if self.index_key is None:
            return None
        try:
            return native.index_name(_code_version(), self.index_key, int(mode), self.L)
        except OSError:  # (the package's files cannot be read: no version, so no index)
            return None


# ---- pieces: a block's code from parts shared by programs (docs/decisions/0040) ----------------

PIECE_MIN_INSTRS = 24  # a block shorter than this is compiled whole
PIECE_CUT = 2  # a cut before an instruction whose words' CRC-32 is 0 modulo this (content-defined)
# runs: a cut whose CRC-32 is 0 modulo PIECE_CUT * PIECE_GROUP also ends a run of pieces, which is
# compiled as one piece of its own once the same run is seen again (decision 0045 amendment)
PIECE_GROUP = 8
# sub-runs: a run not kept is split at the cuts whose CRC-32 is 0 modulo PIECE_CUT * g for each g
# here in turn, each sub-run kept as a run is (decision 0045 amendment, later)
PIECE_SUBGROUPS = (4, 2)
PIECE_LIMIT = 8192  # kept pieces (cleared when full)


def _plain(x):
    """``x`` as a key part that equals another only for the same type and bits (a float by its
    bits: -0.0 and 0.0 differ, NaN payloads count), or _NOKEY for anything else."""
    if x is None or type(x) in (int, str, bool):
        return (type(x).__name__, x)
    if type(x) is float:
        return ("f", struct.pack("<d", x))
    if type(x) is tuple:
        parts = tuple(_plain(y) for y in x)
        return _NOKEY if _NOKEY in parts else ("t", parts)
    return _NOKEY


_NOKEY = ("nokey",)

# an instruction's words -> their CRC-32, which the cut rule of PieceCache._cuts reads (a pure
# function of the key; at most PIECE_LIMIT entries)
_CUT_CRC: dict = {}


# (piece source, MODE) -> its code object: a new piece whose source another piece already had
# (another key, the same text) is not compiled again; the code runs in its own lowering's
# namespace (its constants K), so it is exactly a fresh compile (at most PIECE_LIMIT entries)
_PIECE_CODE: dict = {}


def _piece_code(src: str, mode: int):
    key = (src, mode)
    code = _PIECE_CODE.get(key)
    if code is None:
        code = compile(src, f"<wavelift-piece-mode-{mode:#x}>", "exec")
        if len(_PIECE_CODE) >= PIECE_LIMIT:
            _PIECE_CODE.clear()
        _PIECE_CODE[key] = code
    return code


# ---- pieces on disk (decision 0045, amendment "pieces on disk") -------------------------------
# A piece about to be compiled is first looked for in a disk cache (piece_disk.py: packs in a
# directory private to this user, each pack checked whole against its SHA-256: decision 0016's
# rules), under a name made of its key with every instr_cache serial replaced by a digest of the
# key it names (the same in every process) and of this code's version (the package's sources and
# tables, Python's bytecode magic, NumPy's version): the code object of its source and its
# constants K.  What a key holds decides the source within a process (the in-memory cache above
# rests on that); with the same code, the same in another.
PIECE_DISK = [True]  # (False: never on disk; tests compare)
DISK_FORMAT = 1
_DISK_DIRS: dict = {}  # setting's value -> its piece_disk.PieceDisk, or None (refused, or "off")
_VERSION: list = [None]  # this code's version (_code_version), made on first use
_STABLE: dict = {}  # instr_cache serial -> a digest of the key it names (its repr), else False
_SCALAR_KINDS = frozenset("biuf")  # (the constants a disk entry holds: NumPy scalars of these)


def _code_version() -> str:
    """A digest of what makes a piece's code from its key, or a native library's source from its
    program (the native index): wavelift's sources, headers and tables (every .py, .h and .json
    file of the package), Python's bytecode magic and version, NumPy's version."""
    v = _VERSION[0]
    if v is None:
        root = pathlib.Path(__file__).resolve().parents[2]
        h = hashlib.sha256()
        for part in (importlib.util.MAGIC_NUMBER, sys.version.encode(), np.__version__.encode()):
            h.update(part + b"\0")
        for f in sorted(root.rglob("*")):
            if f.suffix in (".py", ".json", ".h") and "__pycache__" not in f.parts:
                data = f.read_bytes()
                h.update(f"{f.relative_to(root)}\0{len(data)}\0".encode())
                h.update(data)
        v = _VERSION[0] = h.hexdigest()
    return v


def _reprable(x) -> bool:
    """Whether repr(x) names x in any process: None, bool, int, str, bytes, float, tuples of them."""
    t = type(x)
    if t is tuple:
        return all(_reprable(y) for y in x)
    return x is None or t in (bool, int, str, bytes, float)


def _disk():
    """The pieces' disk cache (piece_disk.PieceDisk over the checked directory: decision 0016),
    or None (refused: a CacheWarning says why; or WAVELIFT_PIECE_CACHE=off)."""
    where = settings.get("WAVELIFT_PIECE_CACHE")
    pd = _DISK_DIRS.get(where, False)
    if pd is False:
        from .piece_disk import PieceDisk

        d = None if where == "off" else disk_cache.usable_dir("pieces", "WAVELIFT_PIECE_CACHE")
        try:
            pd = None if d is None else PieceDisk(d, _code_version())
        except OSError:  # (the package's files cannot be read: no version, so no disk)
            pd = None
        _DISK_DIRS[where] = pd
    return pd


def _disk_name(key) -> str | None:
    """The disk cache's name of a piece keyed ``key`` (PieceCache._key), or None (not kept on
    disk: a serial no longer known, or a part whose repr is not the same everywhere)."""
    if key[0] == "instrs":
        names = []
        for s in key[-1]:
            k = None
            if s is not None:
                k = _STABLE.get(s)
                if k is None:
                    k = key_for(s)
                    if len(_STABLE) >= PIECE_LIMIT:
                        _STABLE.clear()
                    # (the instruction's key by its digest: a shorter text to hash per piece)
                    k = _STABLE[s] = (
                        hashlib.sha256(repr(k).encode()).hexdigest()[:32]
                        if k is not None and _reprable(k)
                        else False
                    )
                if k is False:
                    return None
            names.append(k)
        head = key[:-1]
        if not _reprable(head):
            return None
        key = (*head, tuple(names))
    elif not _reprable(key):
        return None
    return hashlib.sha256(f"{_code_version()}\0{DISK_FORMAT}\0{key!r}".encode()).hexdigest()[:40]


def _disk_load(pd, name: str, low: Lowering):
    """The function of entry ``name`` run in ``low``'s namespace with the entry's constants, or
    None (a miss)."""
    data = pd.get(name)
    if data is None:
        return None
    try:
        fmt, fname, code, consts = marshal.loads(data)
        if fmt != DISK_FORMAT or type(fname) is not str or type(consts) is not tuple:
            return None
        low.consts = [np.frombuffer(b, np.dtype(t))[0] for t, b in consts]
        ns = low.namespace()
        exec(code, ns)
        return ns[fname]
    except Exception:  # noqa: BLE001 - an entry of another form is a miss (compiled and written over)
        return None


def _disk_store(pd, name: str, fname: str, code, consts: list) -> None:
    """Write entry ``name``: the code and its constants, when every constant is a NumPy scalar that
    its dtype and bytes give back as the same type and bits (else nothing is written)."""
    packed = []
    for c in consts:
        # (a NumPy scalar of its dtype's own type: np.frombuffer(its bytes, its dtype)[0] is the
        # same type with the same bits)
        if not isinstance(c, np.generic) or type(c) is not c.dtype.type or c.dtype.kind not in _SCALAR_KINDS:
            return
        packed.append((c.dtype.str, c.tobytes()))
    pd.add(name, marshal.dumps((DISK_FORMAT, fname, code, tuple(packed))))


def _cut_crc(words) -> int:
    key = tuple(words)
    r = _CUT_CRC.get(key)
    if r is None:
        r = zlib.crc32(repr(key).encode())
        if len(_CUT_CRC) >= PIECE_LIMIT:
            _CUT_CRC.clear()
        _CUT_CRC[key] = r
    return r


_LANE_COUNT_POINTS: list = [None]  # frontend.program.lane_count_points (imported on first use:
# no import cycle, and no import statement per piece key)


def _cut_before(words) -> bool:
    return _cut_crc(words) % PIECE_CUT == 0


class PieceCache:
    """Compiled pieces of blocks kept across programs (decision 0040), while ``on`` (the tinygrad
    hook turns it on for one-wave dispatches: one-shot programs whose code generation and
    ``compile()`` is most of their cost).

    A block of at least PIECE_MIN_INSTRS instructions is cut at instruction boundaries that no
    value crosses (each instruction's IR reads its operands from the register file, so most
    boundaries are such), where an instruction's words hash to 0 modulo PIECE_CUT: a
    content-defined cut, so the same instruction sequence in two programs (a common prologue or
    epilogue at another offset) is cut the same way.  Each piece is a block of its own for the
    passes (all registers live after it but the last, which has the block's live-out) and the
    lowering, and its function is kept under a key holding everything both read: MODE, wave
    size, the live-out, the lane-count points, the block's float flag, and every op (name, type,
    arguments as values numbered within the piece or as constants, attributes, result, its
    instruction relative to the piece's first); instruction indices in the code are relative
    to the piece's first, passed as IB.  The block's function calls its pieces in order.  A
    piece whose ops have an attribute of another kind than numbers/strings/None/tuples is not
    kept (compiled for this block alone).

    Runs (decision 0045 amendment): the pieces from a cut whose CRC-32 is also 0 modulo
    PIECE_CUT * PIECE_GROUP to the next such cut are a run, keyed as one piece; a run seen
    before (``seen``) is compiled as one piece and used whole from then on, so a recurring
    sequence (a common prologue) runs with forwarding across its inner cuts and costs one key
    and one call, while new code costs only its own small pieces."""

    def __init__(self):
        self.enabled = True  # (False: the hook never turns pieces on; tests compare)
        self.on = False
        self.fns: dict = {}
        self.hits = 0
        self.misses = 0
        self.disk_hits = 0  # (misses whose function came from the disk cache)
        self.seen: dict = {}  # keys of runs of pieces seen once (compiled when seen again)

    def block(self, mb: ModeBlocks, index: int, mode: int):
        """The function of block ``index`` for ``mode`` made of pieces, or None (compile it whole)."""
        blk = mb.program.blocks[index]
        if not blk.instrs or len(blk.instrs) < PIECE_MIN_INSTRS or (blk.uses_float and mode & 15):
            return None
        found = self._cuts(mb.program, blk)
        if found is None:
            return None  # (MODE written: the passes specialise a piece for the MODE it starts with)
        cuts, at = found
        if not cuts:
            return None
        live = mb._live(mode)[index]
        bounds = [0, *cuts, blk.n_ops()]
        # each piece's instructions: from its first op's (the block's first, for the first
        # piece) to before the next piece's (instructions without ops, e.g. s_nop, included)
        starts = [blk.instrs[0], *at, blk.instrs[-1] + 1]
        n = len(bounds) - 1
        # runs of pieces: from a cut whose words' CRC-32 is 0 modulo PIECE_CUT * PIECE_GROUP to
        # the next (piece indices k0 <= k < k1)
        # runs of pieces: from a cut whose words' CRC-32 is 0 modulo PIECE_CUT * PIECE_GROUP to
        # the next; a run not kept is split the same way at the finer PIECE_CUT * PIECE_SUBGROUP
        # (sub-runs), and a sub-run not kept into its pieces (piece k ends at cut k)
        instructions = mb.program.instructions
        crcs = [_cut_crc(instructions[c].words) for c in at]
        levels = (PIECE_CUT * PIECE_GROUP, *(PIECE_CUT * g for g in PIECE_SUBGROUPS))
        exec_info = blk.exec_writes()
        parts: list = []
        keyr = self._range_keys(mb, blk, mode, live, bounds, starts, exec_info)

        def add(k0: int, k1: int, level: int) -> None:
            # pieces k0 <= k < k1, split at the cuts of ``level`` (their ranges looked up whole)
            while level < len(levels):
                m = levels[level]
                edges = [k0, *(k for k in range(k0 + 1, k1) if crcs[k - 1] % m == 0), k1]
                if len(edges) > 2 or level == 0:
                    break
                level += 1  # (one range, the one just looked up: straight to the next level)
            else:
                for k in range(k0, k1):
                    end = k + 1 == n
                    # (a kept piece found by its key without a sub-block; else _piece, which
                    # keys it again from the sub-block and compiles it)
                    key, ib = keyr(k, k + 1)
                    f = self.fns.get(key) if key is not None and key is not _NOKEY else None
                    if f is not None:
                        self.hits += 1
                    else:
                        sub = self._sub(blk, bounds, starts, k, k + 1, end)
                        info = (*exec_info, bounds[k])
                        f = self._piece(mb, sub, mode, live if end else None, info=info)
                    parts.append((f, ib))
                return
            for a, b in zip(edges, edges[1:]):
                if b - a > 1:
                    # a range seen before is one piece (compiled on its second sighting: a
                    # sequence that recurs, e.g. a common prologue, runs without the cuts inside)
                    lv = live if b == n else None
                    key, ib = keyr(a, b)
                    rsub: Block | None = None
                    if key is _NOKEY:  # (not keyed from the block's tables: from the sub-block)
                        rsub = self._sub(blk, bounds, starts, a, b, b == n)
                        key = self._key(mb, rsub, mode, lv, ib, (*exec_info, bounds[a]))
                    if key is not None:
                        f = self.fns.get(key)
                        if f is not None:
                            self.hits += 1
                        elif key in self.seen:
                            if rsub is None:
                                rsub = self._sub(blk, bounds, starts, a, b, b == n)
                            f = self._piece(mb, rsub, mode, lv, key)
                        else:
                            if len(self.seen) >= PIECE_LIMIT:
                                self.seen.clear()
                            self.seen[key] = True
                        if f is not None:
                            parts.append((f, ib))
                            continue
                add(a, b, level + 1)

        add(0, n, 0)
        fns = tuple(f for f, _ in parts)
        ibs = tuple(ib for _, ib in parts)
        head, tail = fns[:-1], fns[-1]
        tail_ib = ibs[-1]
        pairs = tuple(zip(head, ibs[:-1], strict=True))

        def run(R, w, N, mode):
            for f, ib in pairs:
                f(R, w, N, mode, ib)
            return tail(R, w, N, mode, tail_ib)

        return run

    @staticmethod
    def _range_keys(mb: ModeBlocks, blk: Block, mode: int, live, bounds: list, starts: list, exec_info):
        """A function: pieces (k0, k1) of ``blk`` -> (their key, their first instruction): the key
        ``_key`` gives their sub-block (``_sub``), found from tables of the block made once here
        (each instruction's instr_cache serial and op count, whether it is a vector instruction
        or writes EXEC, as prefix sums) instead of a walk over the range's instructions per
        range looked up; _NOKEY where ``_key`` would look at the ops (a terminator holding
        values, or not every op of the range from instr_cache keys): the caller asks ``_key``."""
        instrs = blk.instrs
        ik = mb.program.instr_keys
        instructions = mb.program.instructions
        from ...frontend.program import VECTOR as vector  # (one import a block)

        last_op, writes_exec = exec_info
        keys: list = []
        nops = [0]  # (prefix sums: ops of the instructions with a key)
        vec = [0]  # (prefix sums: vector instructions)
        writers: list = []  # positions in instrs of the instructions that write EXEC
        n_ops = v = 0
        for j, i in enumerate(instrs):
            e = ik.get(i)
            if e is None:
                keys.append(None)
            else:
                keys.append(e[0])
                n_ops += e[1]
            nops.append(n_ops)
            if instructions[i].encoding in vector:
                v += 1
            vec.append(v)
            if i in writes_exec:
                writers.append(j)
        lv_end = None if live is None else (tuple(sorted(live[0])), tuple(sorted(live[1])))
        n = len(bounds) - 1
        term = tuple(_plain(x) for x in blk.term) if not any(isinstance(x, Value) for x in blk.term) else None
        jump = (_plain("jump"), _plain(-1))  # (a piece before the last: _sub's ("jump", -1))
        L, uses_float = mb.L, blk.uses_float

        def key(k0: int, k1: int):
            j0 = bisect_left(instrs, starts[k0])
            j1 = bisect_left(instrs, starts[k1])
            ib = instrs[j0]
            last = k1 == n
            t = term if last else jump
            if t is None or _NOKEY in t or nops[j1] - nops[j0] != bounds[k1] - bounds[k0]:
                return _NOKEY, ib
            # lane_count_points(program, sub, (*exec_info, bounds[k0])), from the tables
            first = bounds[k0]
            points: dict[int, int] = {}
            start, seg = 0, j0
            for w in writers[bisect_left(writers, j0) : bisect_left(writers, j1)]:
                c = vec[w + 1] - vec[seg]
                if c:
                    points[start] = points.get(start, 0) + c
                start, seg = last_op[instrs[w]] + 1 - first, w + 1
            c = vec[j1] - vec[seg]
            if c:
                points[start] = points.get(start, 0) + c
            lv = lv_end if last else None
            return (
                "instrs",
                mode,
                L,
                lv,
                tuple(sorted(points.items())),
                uses_float,
                t,
                tuple(keys[j0:j1]),
            ), ib

        return key

    @staticmethod
    def _sub(blk: Block, bounds: list, starts: list, k0: int, k1: int, last: bool) -> Block:
        """Pieces k0..k1-1 of ``blk`` as a block: their ops and instructions, the block's
        terminator for the last piece, else a jump nowhere."""
        sub = object.__new__(Block)  # (dataclasses.replace without its per-field work)
        sub.__dict__.update(blk.__dict__)
        sub.instrs = blk.instrs[bisect_left(blk.instrs, starts[k0]) : bisect_left(blk.instrs, starts[k1])]
        lazy = blk.__dict__.get("_lazy")
        if lazy is None:
            sub.ops = blk.ops[bounds[k0] : bounds[k1]]
        else:  # (its ops made only if read: a piece to compile)
            sub.set_lazy(lazy.view(bounds[k0], bounds[k1]))
        sub.term = blk.term if last else ("jump", -1)
        return sub

    @staticmethod
    def _cuts(program: Program, blk: Block):
        """(op indices a piece starts at (never 0), the instruction at each), or None when the
        block writes MODE.  A cut is at the first op of an instruction whose words hash to 0
        modulo PIECE_CUT, where no value made before is used from there on (terminator
        included); each piece holds ops of at least one instruction."""
        # one pass: a cut is a candidate at an instruction's first op (the CRC-32 rule); a use at
        # op j of a value made at op m drops every candidate after m (the uses come in order, so
        # those are the last ones): what is left is where no value made before is used after
        cuts: list[int] = []
        at: list[int] = []
        made: dict[int, int] = {}  # value id -> the op making it
        prev = None
        instructions = program.instructions
        lazy = blk.__dict__.get("_lazy")
        segs: Iterable[tuple[int, Any]] = lazy.items() if lazy is not None else ((0, (blk.ops,)),)
        for i0, seg in segs:
            ops = seg[0]
            if ops is None:
                # an instr_cache entry's ops, not made: every value they use is their own
                # (instr_cache._entry), so nothing crosses into or out of them
                if seg[4] & LAZY_MODE:
                    return None
                ins = seg[3]
                if i0 and ins != prev:
                    words = getattr(instructions[ins], "words", None)
                    if words is not None and _cut_before(words):
                        cuts.append(i0)
                        at.append(ins)
                prev = ins
                continue
            for i, op in enumerate(ops, i0):
                if i and op.instr != prev:
                    words = getattr(instructions[op.instr], "words", None)
                    if words is not None and _cut_before(words):
                        cuts.append(i)
                        at.append(op.instr)
                prev = op.instr
                for x in op.args:
                    if x.__class__ is Value:
                        m = made.get(x.id)
                        if m is not None:
                            while cuts and cuts[-1] > m:
                                cuts.pop()
                                at.pop()
                if op.out is not None:
                    made[op.out.id] = i
                elif op.name == "sset" and op.attrs["reg"] == MODE_REG:
                    return None
        for x in blk.term[1:]:
            if isinstance(x, Value):
                m = made.get(x.id)
                if m is not None:
                    while cuts and cuts[-1] > m:
                        cuts.pop()
                        at.pop()
        return cuts, at

    def _piece(self, mb: ModeBlocks, sub: Block, mode: int, live, key=_NOKEY, info=None):
        base = sub.instrs[0]
        if key is _NOKEY:
            key = self._key(mb, sub, mode, live, base, info)
            f = self.fns.get(key) if key is not None else None
            if f is not None:
                self.hits += 1
                return f
        self.misses += 1
        low = Lowering(mb.program, mb.L)
        low.ib = base
        d = _disk() if key is not None and PIECE_DISK[0] else None
        name = _disk_name(key) if d is not None else None
        f = _disk_load(d, name, low) if name is not None else None
        if f is not None:
            self.disk_hits += 1
        else:
            src = low.block_source(sub, mode, live)
            ns = low.namespace()
            code = _piece_code(src, mode)
            exec(code, ns)
            fname = f"blk_{sub.index}"
            f = ns[fname]
            if name is not None:
                _disk_store(d, name, fname, code, low.consts)
        if key is not None:
            if len(self.fns) >= PIECE_LIMIT:
                self.fns.clear()
            self.fns[key] = f
        return f

    @staticmethod
    def _key(mb: ModeBlocks, sub: Block, mode: int, live, base: int, info=None):
        """The piece's key: its ops as the instructions' frontend/instr_cache keys (serials) when
        the instructions that have one (their ops are that key's recipe replayed, values
        numbered within the instruction) account for every op -- an instruction without one
        (a terminator such as s_endpgm) then made no op and holds its place as None; its
        effect is the terminator, which is in the key --, else every op spelled out
        (``_full_key``); None: not kept.  ``info``: (Block.exec_writes of the whole block, the
        piece's first op index in it), from which its lane-count points are found without a
        walk over its ops (lane_count_points' ``within``; None: from the piece's own ops)."""
        ik = mb.program.instr_keys
        lv = None if live is None else (tuple(sorted(live[0])), tuple(sorted(live[1])))
        lcp = _LANE_COUNT_POINTS[0]
        if lcp is None:
            from ...frontend.program import lane_count_points

            lcp = _LANE_COUNT_POINTS[0] = lane_count_points
        points = tuple(sorted(lcp(mb.program, sub, info).items()))
        keys: list = []
        n = 0
        for i in sub.instrs:
            e = ik.get(i)
            if e is None:  # (no key: allowed where it made no op, e.g. s_endpgm: n says so)
                keys.append(None)
            else:
                keys.append(e[0])
                n += e[1]
        if n == sub.n_ops():
            pos = (
                {op.out.id: j for j, op in enumerate(sub.ops) if op.out is not None}
                if any(isinstance(x, Value) for x in sub.term)
                else {}
            )
            term = tuple(("v", pos[x.id]) if isinstance(x, Value) else _plain(x) for x in sub.term)
            if _NOKEY not in term:
                return ("instrs", mode, mb.L, lv, points, sub.uses_float, term, tuple(keys))
        return PieceCache._full_key(sub, mode, mb.L, lv, points, base)

    @staticmethod
    def _full_key(sub: Block, mode: int, L: int, lv, points, base: int):
        num: dict[int, int] = {}

        def val(x):
            if isinstance(x, Value):
                n = num.setdefault(x.id, len(num))
                return ("v", n, x.type, x.uniform)
            return _plain(x)

        body = []
        for op in sub.ops:
            attrs = tuple((k, _plain(v)) for k, v in op.attrs.items())
            args = tuple(val(x) for x in op.args)
            out = val(op.out) if op.out is not None else None
            part = (op.name, op.type, args, attrs, out, op.instr - base)
            if any(a == _NOKEY for a in args) or any(v == _NOKEY for _, v in attrs):
                return None
            body.append(part)
        term = tuple(val(x) for x in sub.term)
        if _NOKEY in term:
            return None
        return ("ops", mode, L, lv, points, sub.uses_float, term, tuple(body))


PIECES = PieceCache()
