"""A dispatch that runs op variants (cases.Variant) through a backend's own interface
(backends/base.py: build_module, window_plan, run, land): one IR program, made with the IR's
Builder as the frontends make theirs, with one block per variant after an entry block.

Each workgroup is one wave (32 or 64 lanes; v0 the lane's index, s4 the workgroup id): lane case
``s4 * wave size + v0`` and wave case ``s4``.  The entry block loads every operand pool
(cases.pool_key) of the variants from guest memory: a lane case's operands by vector loads into
VGPRs, a wave case's by scalar loads (uniform values) into SGPRs.  A variant's block reads its
operands from those registers (so nothing is a constant the passes could fold; an operand the
variant makes a constant, ``Variant.const``, is an IR constant made there), computes the op
on the per-lane operands and on the uniform ones (a backend lowers the two differently), and
stores both results' bits: 16 bytes per lane case, (lane result, the wave's result), each as a
u64 (low word first; a narrower result zero-extended, b1 as 0/1).

Memory: ``in`` holds each pool as u64 slots (lane cases, then wave cases); ``out`` 16 bytes per
lane case per variant.
"""

from __future__ import annotations

import hashlib
import types

import numpy as np
from cases import bits_of, pool, pool_key

from wavelift.backends import base
from wavelift.dispatch.config import DispatchConfig
from wavelift.ir import ops
from wavelift.ir.builder import Builder
from wavelift.ir.program import Block, Program
from wavelift.memory.guest import GuestMemory
from wavelift.run.result import Window

IN, OUT = 0x1_0000_0000, 0x2_0000_0000  # guest addresses of the operand and result buffers
CODE = 0x3_0000_0000
S_ENDPGM = bytes.fromhex("000081bf")
FIRST_V, FIRST_S = 1, 8  # the pools' first VGPR and SGPR


class Layout:
    """The variants' pools, their registers and ``in`` offsets: ``groups`` waves of ``wave``
    lanes, so ``groups * wave`` lane cases and ``groups`` wave cases per variant."""

    def __init__(self, variants, groups: int, wave: int = 32):
        self.variants, self.groups, self.wave = list(variants), groups, wave
        self.lanes = groups * wave
        self.pools: dict[tuple, tuple[int, int, int]] = {}  # key -> (in offset, VGPR, SGPR)
        off, vr, sr = 0, FIRST_V, FIRST_S
        for v in self.variants:
            for i in range(len(v.args)):
                if i in dict(v.const):
                    continue
                key = pool_key(v, i)
                if key not in self.pools:
                    self.pools[key] = (off, vr, sr)
                    n = 2 if ops.BITS[key[0]] == 64 else 1
                    off, vr, sr = off + (self.lanes + groups) * 8, vr + n, sr + n
        assert sr <= 106 and vr <= 256, "too many operand pools for the register files"
        self.in_bytes, self.out_bytes = max(off, 8), max(len(self.variants), 1) * self.lanes * 16

    def operand_bytes(self) -> np.ndarray:
        """``in``'s contents (u64 slots)."""
        buf = np.zeros(self.in_bytes // 8, np.uint64)
        for key, (off, _, _) in self.pools.items():
            buf[off // 8 : off // 8 + self.lanes + self.groups] = bits_of(pool(key, self.lanes + self.groups))
        return buf

    def results(self, out: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Variant k's (lane results, wave results: one per lane, its wave's) as u64 bits."""
        r = out[k * self.lanes * 2 : (k + 1) * self.lanes * 2].reshape(-1, 2)
        return r[:, 0], r[:, 1]


def _words(b: Builder, v, name: str) -> list:
    """A result's bits as two u32 words (low first; zero-extended)."""
    if name in ("popcount", "clz", "ctz"):
        v = b.cvt("i32", v)  # (as the frontends read them: cases.I32_VALUE)
    zero = b.const("u32", 0)
    if v.type == "b1":
        return [b.cvt("u32", v), zero]
    n = ops.BITS[v.type]
    if n == 64:
        u = b.bitcast("u64", v)
        return [b.lo32(u), b.hi32(u)]
    if n == 32:
        return [b.bitcast("u32", v), zero]
    return [b.cvt("u32", b.bitcast({8: "u8", 16: "u16"}[n], v)), zero]


def _read(b: Builder, t: str, reg: int, uniform: bool):
    """An operand of IR type t from its register(s) (64-bit: two, low first)."""
    get = b.sget if uniform else b.vget
    if ops.BITS[t] == 64:
        return b.bitcast(t, b.pack64(get(reg), get(reg + 1)))
    w = get(reg)
    if t == "b1":
        return b.cmp("ne", "u32", w, b.const("u32", 0))
    if ops.BITS[t] == 32:
        return b.bitcast(t, w)
    return b.bitcast(t, b.cvt({8: "u8", 16: "u16"}[ops.BITS[t]], w))


def _const(b: Builder, t: str, bits: int):
    """A constant operand of IR type t with these bits (a float made from its bits, as a
    literal is)."""
    if t == "b1":
        return b.const("b1", bool(bits))
    if t in ops.FLOAT:
        return b.bitcast(t, b.const({16: "u16", 32: "u32", 64: "u64"}[ops.BITS[t]], bits))
    return b.const(t, bits)


def _address(b: Builder, lo: int, off: int, index):
    """The u64 s[lo:lo+1] + off + index * 8."""
    p = b.pack64(b.sget(lo), b.sget(lo + 1))
    o = b.bin("add", "u32", b.bin("shl", "u32", index, b.const("u32", 3)), b.const("u32", off))
    return b.bin("add", "u64", p, b.cvt("u64", o))


def _entry(counter, lay: Layout) -> Block:
    """Block 0: every pool into its registers (lane cases: VGPRs; wave cases: SGPRs)."""
    b = Builder(counter, lay.wave)
    case = b.bin("add", "u32", b.bin("mul", "u32", b.sget(4), b.const("u32", lay.wave)), b.vget(0))
    true = b.cmp("eq", "u32", b.const("u32", 0), b.const("u32", 0))  # (frontend/scalar_memory.py)
    for key, (off, vr, sr) in lay.pools.items():
        n = 2 if ops.BITS[key[0]] == 64 else 1
        for uniform in (False, True):
            where = b.sget(4) if uniform else case
            at = _address(b, 0, off + (lay.lanes * 8 if uniform else 0), where)
            mask = true if uniform else b.exec()
            ld = b.emit("load", "u32", at, mask, uniform=uniform, space="global", nbytes=4 * n, words=n)
            for j in range(n):
                w = b.emit("word", "u32", ld, k=j)
                if uniform:
                    b.sset(sr + j, w)
                else:
                    b.vset(vr + j, w)
    blk = Block(0, 0, [], b.ops, ("jump", 1))
    return blk


def _block(counter, lay: Layout, k: int) -> Block:
    v = lay.variants[k]
    b = Builder(counter, lay.wave)
    words = []
    ks = dict(v.const)
    for uniform in (False, True):
        args = [
            _const(b, t, ks[i])
            if i in ks
            else _read(b, t, lay.pools[pool_key(v, i)][2 if uniform else 1], uniform)
            for i, t in enumerate(v.args)
        ]
        words += _words(b, b.emit(v.name, v.type, *args, **v.attrs), v.name)
    case = b.bin("add", "u32", b.bin("mul", "u32", b.sget(4), b.const("u32", lay.wave)), b.vget(0))
    at = _address(b, 2, k * lay.lanes * 16, b.bin("shl", "u32", case, b.const("u32", 1)))
    b.effect("store", "u32", at, b.exec(), *words, space="global", nbytes=16)
    last = k == len(lay.variants) - 1
    blk = Block(k + 1, 4 * (k + 1), [], b.ops, ("end",) if last else ("jump", k + 2))
    blk.uses_float = b.uses_float
    return blk


def program(lay: Layout) -> Program:
    """The IR program of ``lay``: the entry block, then one block per variant, in order."""
    counter = [0]
    blocks = [_entry(counter, lay)] + [_block(counter, lay, k) for k in range(len(lay.variants))]
    return Program(
        blocks, [], {4 * i: i for i in range(len(blocks))}, max(r[1] for r in lay.pools.values()) + 1
    )


def config(lay: Layout, float_mode: int = 0xF0) -> DispatchConfig:
    """The dispatch: ``groups`` workgroups of one wave; s[0:1] ``in``, s[2:3] ``out``, s4 the
    workgroup id; MODE: ``float_mode``, DX10_CLAMP set, IEEE clear (as tests/execute's rig)."""
    return DispatchConfig(
        target="gfx1030",
        program_address=CODE,
        wave_size=lay.wave,
        rsrc1=(float_mode << 12) | (1 << 21),
        rsrc2=0,
        rsrc3=0,
        user_sgprs=(IN & 0xFFFFFFFF, IN >> 32, OUT & 0xFFFFFFFF, OUT >> 32),
        tgid_enabled=(True, False, False),
        tidig_comp_cnt=0,
        lds_bytes=0,
        block=(lay.wave, 1, 1),
        partial=(0, 0, 0),
        partial_tg=False,
        group_start=(0, 0, 0),
        group_end=(lay.groups, 1, 1),
        system_sgprs={"workgroup_id_x": 4},
    )


def key(lay: Layout, mode: str, float_mode: int) -> tuple:
    """A module key naming what the program is (its variants and size; a backend's disk cache
    finds a build by it): hashes of the variants, not an object's id."""
    ids = "|".join(v.id for v in lay.variants)
    return ("conformance", hashlib.sha256(ids.encode()).hexdigest(), lay.groups, lay.wave, mode, float_mode)


def run(backend_name: str, lay: Layout, prog: Program, mode: str = "wave", float_mode: int = 0xF0):
    """Build the module of ``prog`` on the backend and run it -> (``out``'s u64 slots, what the
    run left: its RunCounts and module).  An escape fails: the rig reaches only its windows."""
    from wavelift.trace.windows import WindowSet

    be = base.get(backend_name)
    mem = GuestMemory()
    mem.alloc(len(S_ENDPGM) + 256, name="code", address=CODE, data=S_ENDPGM + bytes(256))
    mem.alloc(lay.in_bytes, name="in", address=IN, data=lay.operand_bytes().view(np.uint8))
    mem.alloc(lay.out_bytes, name="out", address=OUT)
    cfg = config(lay, float_mode)
    module = be.build_module(key(lay, mode, float_mode), prog, cfg, mode, CODE)
    wins = [Window(IN, lay.in_bytes, "in", "conformance"), Window(OUT, lay.out_bytes, "out", "conformance")]
    ws = WindowSet(wins, mem, **be.window_plan(module))
    try:
        counts = be.run(module, cfg, ws, mode, 1 << 20)
        assert counts.escape_count == 0, counts.escapes[:3]
        base.land(ws, mem, counts)
    finally:
        ws.release()
    out = np.frombuffer(mem.read(OUT, lay.out_bytes), np.uint64).copy()
    return out, types.SimpleNamespace(counts=counts, module=module)
