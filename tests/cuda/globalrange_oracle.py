"""The oracle of tests/cuda/test_globalrange.py (and bench's coverage count): a dispatch run on
the NumPy backend (the native tier off) with every global access's addresses recorded as the
runtime carries it out -- independent of globalrange's analysis -- and its proof checked
against them."""

from __future__ import annotations

import copy
import os
from collections import defaultdict

import numpy as np

from wavelift.backends.cuda import codegen as G
from wavelift.backends.cuda import globalrange as GR
from wavelift.backends.numpy import runtime as NR
from wavelift.run.execute import execute_dispatch, program_for
from wavelift.trace.tracer import trace
from wavelift.trace.windows import WindowSet


def recorded_run(mem, cfg):
    """Run on NumPy (wave mode, native tier off) -> ({instr: [(u64 addresses, nbytes, atomic)]},
    the result).  Every load, store and atomic of space global is recorded with the addresses
    of its active lanes, before the runtime resolves them."""
    seen: dict = defaultdict(list)
    orig = (NR.Runtime.load, NR.Runtime.store, NR.Runtime.atomic)

    def active(addr, mask):
        a = np.asarray(addr, np.uint64)
        m = np.asarray(mask, bool)
        shape = np.broadcast_shapes(a.shape, m.shape)
        return np.broadcast_to(a, shape)[np.broadcast_to(m, shape)].copy()

    def load(self, space, instr, addr, mask, nbytes, words, w, N, uniform):
        if space == "global":
            seen[int(instr)].append((active(addr, mask), nbytes, False))
        return orig[0](self, space, instr, addr, mask, nbytes, words, w, N, uniform)

    def store(self, space, instr, addr, mask, data, nbytes, w, N):
        if space == "global":
            seen[int(instr)].append((active(addr, mask), nbytes, False))
        return orig[1](self, space, instr, addr, mask, data, nbytes, w, N)

    def atomic(self, space, instr, op, bits, addr, mask, data, cmp, w, N):
        if space == "global":
            seen[int(instr)].append((active(addr, mask), bits // 8, True))
        return orig[2](self, space, instr, op, bits, addr, mask, data, cmp, w, N)

    old = os.environ.get("WAVELIFT_NATIVE")
    os.environ["WAVELIFT_NATIVE"] = "off"
    NR.Runtime.load, NR.Runtime.store, NR.Runtime.atomic = load, store, atomic
    try:
        res = execute_dispatch(mem, cfg, backend="numpy", mode="wave")
    finally:
        NR.Runtime.load, NR.Runtime.store, NR.Runtime.atomic = orig
        if old is None:
            os.environ.pop("WAVELIFT_NATIVE", None)
        else:
            os.environ["WAVELIFT_NATIVE"] = old
    return seen, res


def proof_of(mem, cfg):
    """(the program CUDA lowers, its global accesses, the proof, the windows [(start, end)])."""
    program, _ = program_for(mem, cfg)
    low = G.lowered(program, cfg.wave_size, G.baked_params(cfg))
    windows = trace(mem, cfg, scratch_roots=program.scratch.tracer_skip)
    win = WindowSet(windows, mem)
    try:
        proof = GR.prove_dispatch(low, cfg, win)
        wins = [(int(s), int(e)) for s, e in zip(win.starts, win.ends)]
    finally:
        win.release()
    return low, GR.global_accesses(low), proof, wins


def check(name, mem, cfg) -> tuple[int, int, list]:
    """-> (slots, slots proved, the violations: an access outside its proved window)."""
    low, acc, proof, wins = proof_of(copy.deepcopy(mem), cfg)
    seen, _ = recorded_run(copy.deepcopy(mem), cfg)
    by_instr: dict = defaultdict(list)
    for j, op in enumerate(acc):
        by_instr[op.instr].append(j)
    bad = []
    for instr, slots in by_instr.items():
        claims = [proof[j] for j in slots]
        if any(k is None for k in claims):
            # (an instruction with several global accesses is checked only when all are proved:
            # the NumPy runtime names the instruction, not the access)
            if len(slots) > 1 or claims[0] is None:
                continue
        ranges = [wins[k] for k in claims]
        for a, nb, atomic in seen.get(instr, ()):
            if not a.size:
                continue
            if atomic:
                a = a & np.uint64(~(nb - 1) & 0xFFFFFFFFFFFFFFFF)
            lo, hi = int(a.min()), int(a.max())
            inside = np.zeros(a.shape, bool)
            for s, e in ranges:
                inside |= (a >= np.uint64(s)) & (a + np.uint64(nb) <= np.uint64(e))
            if not inside.all():
                bad.append((name, instr, hex(lo), hex(hi), nb, [(hex(s), hex(e)) for s, e in ranges]))
    return len(acc), sum(k is not None for k in proof), bad


def unrefusable_of(mem, cfg, budget=None, longest=None):
    """globalrange.unrefusable of a dispatch, on the program CUDA lowers and the windows its
    trace finds (as proof_of)."""
    program, _ = program_for(mem, cfg)
    low = G.lowered(program, cfg.wave_size, G.baked_params(cfg))
    win = WindowSet(trace(mem, cfg, scratch_roots=program.scratch.tracer_skip), mem)
    try:
        return GR.unrefusable(low, cfg, win, budget=budget, longest=longest)
    finally:
        win.release()
