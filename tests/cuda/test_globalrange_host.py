"""globalrange (decision 0049's amendment h110): the window each global access of a dispatch is
proved to lie in.  Oracle: the NumPy backend's own record of every global access it carries out
(globalrange_oracle.py) -- each must lie inside the window claimed for its slot --, and small
programs where no proof may be made.  The runtime's use: a module's first dispatch takes its
window guesses from the proof (WAVELIFT_CUDA_PROVE=on), through the host stand-in rig."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import globalrange_oracle as O  # noqa: E402
from fixture_dispatches import clang_dispatches  # noqa: E402
from test_resident_runtime_host import _run, rig  # noqa: E402,F401

from wavelift.backends.cuda import codegen as G  # noqa: E402
from wavelift.backends.cuda import globalrange as GR  # noqa: E402
from wavelift.backends.cuda.ldsrange import V, const  # noqa: E402
from wavelift.ir.program import Block, Op, Program, Value  # noqa: E402


@pytest.fixture(scope="module")
def dispatches():
    return clang_dispatches()


# O2 kernels of both wave sizes, flat and MUBUF stack builds, and an O0 one (scratch-held
# addresses: nothing proved there, nothing claimed)
PICK = (
    "gfx1030/basic-O2-w32-flat:vadd",
    "gfx1030/basic-O2-w64-mubuf:vadd",
    "gfx1030/basic-O2-w32-flat:atomics",
    "gfx1030/basic-O2-w64-flat:atomics",
    "gfx1030/basic-O2-w32-mubuf:divergent_loop",
    "gfx1030/basic-O2-w32-flat:lds_reduce",
    "gfx1030/basic-O2-w32-flat:private_array",
    "gfx1030/math-O2-w32-flat:int64_math",
    "gfx1030/math-O2-w64-flat:lane_ops",
    "gfx1030/stack-O2-w32-flat:call",
    "gfx1010/basic-O0-w32-flat:vadd",
)


@pytest.mark.parametrize("pick", PICK)
def test_every_access_lies_in_its_proved_window(dispatches, pick):
    got = [d for d in dispatches if d[0].startswith(pick + ":")]
    assert got, pick
    for name, mem, cfg in got:
        n, proved, bad = O.check(name, mem, cfg)
        assert not bad, bad
        if pick in WHOLE:
            assert proved == n == WHOLE[pick]


# dispatches every access of which is proved (bench/results/globalrange-*-coverage.txt): vadd's
# kernel-argument loads, a, b and c (wave64: the bounds test through s_and_saveexec's two
# halves and the carry through VCC), private_array's n = 328 in groups of 128 (group cases)
WHOLE = {
    "gfx1030/basic-O2-w32-flat:vadd": 7,
    "gfx1030/basic-O2-w64-mubuf:vadd": 7,
    "gfx1030/basic-O2-w32-flat:private_array": 5,
}


# ---- hand-made programs: where no proof may be made ----------------------------------------

_ids = iter(range(1, 1 << 20))


class _B:
    """A one-block program builder (the IR the frontends build)."""

    def __init__(self):
        self.ops: list = []

    def op(self, name, t, *args, uniform=None, **attrs):
        from wavelift.ir.ops import result_type

        u = all(a.uniform for a in args) if uniform is None else uniform
        v = Value(next(_ids), result_type(name, t, attrs), u)
        self.ops.append(Op(name, t, tuple(args), attrs, v, 0))
        return v

    def c(self, t, k):
        return self.op("const", t, value=k, uniform=True)

    def effect(self, name, t, *args, **attrs):
        self.ops.append(Op(name, t, tuple(args), attrs, None, 0))

    def program(self):
        return Program([Block(0, 0, [0], self.ops, ("end",))], [], {}, 0)


BASE = 0x100000000  # a's window: [BASE, BASE + 4096)
WIN = [(BASE, BASE + 4096), (BASE + 0x10000, BASE + 0x20000)]


def _store_at(b, lo, hi, mask=None):
    t = b.c("b1", True) if mask is None else mask
    b.effect("store", "u32", b.op("pack64", "u64", lo, hi), t, b.c("u32", 0), space="global", nbytes=4)


def _prove(b, sregs, shape=None, wave=32):
    return GR.prove(b.program(), wave, shape, sregs, {}, WIN)


SHAPE = {"block": (64, 1, 1), "tidig": 0, "packed": False}


def _addr_of_lid(b, scale, base_lo):
    """lo = base_lo + lid * scale with its carry into hi = BASE >> 32 (v_add_co_u32 /
    v_add_co_ci_u32 as the passes narrow them)."""
    lid = b.op("vget", "u32", reg=0, uniform=False)
    off = b.op("mul", "u32", lid, b.c("u32", scale))
    s0 = b.op("sget", "u32", reg=0)
    lo = b.op("add", "u32", s0, off)
    carry = b.op("cmp", "u32", lo, off, cond="lt")
    s1 = b.op("sget", "u32", reg=1)
    hi = b.op("add", "u32", s1, carry)
    return lo, hi


def test_a_carry_that_cannot_overflow_is_proved():
    b = _B()
    lo, hi = _addr_of_lid(b, 4, BASE)
    _store_at(b, lo, hi)
    assert _prove(b, {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}, SHAPE) == [0]


def test_a_carry_that_can_overflow_is_not_proved():
    # the low half at 2^32 - 8: lanes past the second carry into the high half
    b = _B()
    lo, hi = _addr_of_lid(b, 4, 0)
    _store_at(b, lo, hi)
    wins = [(0x1FFFFFFF8 - 8, 0x1FFFFFFF8 + 4096)]
    got = GR.prove(b.program(), 32, SHAPE, {0: const(0xFFFFFFF8), 1: const(1)}, {}, wins)
    assert got == [None]


def test_an_index_loaded_from_memory_is_not_proved():
    b = _B()
    t = b.c("b1", True)
    p = b.op("pack64", "u64", b.op("sget", "u32", reg=0), b.op("sget", "u32", reg=1))
    ld = b.op("load", "u32", p, t, space="global", nbytes=4, words=1, uniform=True)
    idx = b.op("word", "u32", ld, k=0)
    lo = b.op("add", "u32", b.op("sget", "u32", reg=0), b.op("shl", "u32", idx, b.c("u32", 2)))
    _store_at(b, lo, b.op("sget", "u32", reg=1))
    sregs = {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}
    assert _prove(b, sregs, SHAPE) == [0, None]  # (the load itself: proved)


def test_a_group_id_times_a_stride_past_the_window_is_not_proved():
    def build():
        b = _B()
        g = b.op("sget", "u32", reg=2)
        off = b.op("mul", "u32", g, b.c("u32", 1024))
        lo = b.op("add", "u32", b.op("sget", "u32", reg=0), off)
        _store_at(b, lo, b.op("sget", "u32", reg=1))
        return b

    sregs = {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}
    assert _prove(build(), {**sregs, 2: V(0, 3)}) == [0]  # (4 groups: 4 KiB)
    assert _prove(build(), {**sregs, 2: V(0, 4)}) == [None]  # (a fifth group: past the window)
    assert _prove(build(), sregs) == [None]  # (the group id not bounded)


def test_an_address_spanning_two_windows_is_not_proved():
    b = _B()
    lid = b.op("vget", "u32", reg=0, uniform=False)
    off = b.op("mul", "u32", lid, b.c("u32", 0x1000))
    lo = b.op("add", "u32", b.op("sget", "u32", reg=0), off)
    _store_at(b, lo, b.op("sget", "u32", reg=1))
    assert _prove(b, {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}, SHAPE) == [None]


def test_a_negative_sign_extension_is_not_followed():
    # v_ashrrev_i32 31 of a value that may be negative: the high half is not known
    b = _B()
    x = b.op("sget", "u32", reg=2)
    hi_ext = b.op("sar", "i32", x, b.c("i32", 31))
    lo = b.op("add", "u32", b.op("sget", "u32", reg=0), b.op("and", "u32", x, b.c("u32", 0xFC)))
    hi = b.op("add", "u32", b.op("sget", "u32", reg=1), hi_ext)
    _store_at(b, lo, hi)
    sregs = {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}
    assert _prove(b, {**sregs, 2: V(0, 0x7FFFFFFF)}) == [0]
    assert _prove(b, {**sregs, 2: V(0, 0x80000000)}) == [None]


def _narrowed(wave, halves, cond="lt", other=None):
    """EXEC = the lanes where v0 cond 100 (a ballot of it and EXEC, each written half and-ed with
    the old EXEC: s_and_saveexec; ``halves``: the EXEC registers written, ``other``: a second
    condition whose ballot gives EXEC_HI), then a store at BASE + 4 * v0 read after it (the
    window: 400 bytes, so only v0 < 100 fits)."""
    b = _B()
    ex = b.op("exec", "b1", uniform=False)
    v0 = b.op("vget", "u32", reg=0, uniform=False)

    def ballot(c):
        return b.op("ballot", "u64", b.op("and", "b1", b.op("cmp", "u32", v0, b.c("u32", 100), cond=c), ex))

    bal = ballot(cond)
    bal_hi = bal if other is None else ballot(other)
    for reg in halves:
        word = b.op("lo32" if reg == 126 else "hi32", "u32", bal if reg == 126 else bal_hi)
        b.effect("sset", "u32", b.op("and", "u32", word, b.op("sget", "u32", reg=reg)), reg=reg)
    m = b.op("exec", "b1", uniform=False)
    off = b.op("shl", "u32", b.op("vget", "u32", reg=0, uniform=False), b.c("u32", 2))
    lo = b.op("add", "u32", b.op("sget", "u32", reg=0), off)
    hi = b.op("add", "u32", b.op("sget", "u32", reg=1), b.op("cmp", "u32", lo, off, cond="lt"))
    _store_at(b, lo, hi, mask=m)
    shape = {"block": (128, 1, 1), "tidig": 0, "packed": False}
    sregs = {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}
    return GR.prove(b.program(), wave, shape, sregs, {}, [(BASE, BASE + 400)])


def test_an_exec_narrowed_by_a_bounds_test_proves_the_index():
    assert _narrowed(32, (126,)) == [0]
    assert _narrowed(64, (126, 127)) == [0]
    assert _narrowed(64, (127, 126)) == [0]


def test_an_exec_that_does_not_bound_the_index_proves_nothing():
    assert _narrowed(32, (126,), cond="gt") == [None]  # (v0 > 100: no upper bound)
    assert _narrowed(64, (126,)) == [None]  # (EXEC_HI still the old lanes)
    assert _narrowed(64, (126, 127), other="gt") == [None]  # (the halves of two ballots)
    assert _narrowed(32, ()) == [None]  # (no narrowing: v0 up to 127)


# ---- the runtime: a first dispatch's guesses ------------------------------------------------


def _first_guesses(the_rig, monkeypatch, prove: str):
    mem, cfg, (a, b, c), n, fm = the_rig
    monkeypatch.setenv("WAVELIFT_CUDA_PROVE", prove)
    program, _ = O.program_for(mem, cfg)
    low = G.optimized(program, cfg.wave_size, dict(G.baked_params(cfg)).get(G.P_MODE))
    acc = GR.global_accesses(low)
    fm.slots = tuple((GR.access_bytes(op), False) for op in acc)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    got = {name: h for name, h in fm.puts}
    return got["WL_GB"], got["WL_GL"], acc, (a, b, c)


def test_first_dispatch_guesses_come_from_the_proof(rig, monkeypatch):  # noqa: F811
    base, lim, acc, (a, b, c) = _first_guesses(rig, monkeypatch, "on")
    stores = [j for j, op in enumerate(acc) if op.name == "store"]
    loads = [j for j, op in enumerate(acc) if op.name == "load" and not op.out.uniform]
    assert len(stores) == 1 and len(loads) == 2
    # every slot guessed; the vector accesses into a's, b's and c's allocations
    assert (lim[: len(acc)] > 0).all()
    for j, addr in zip(loads + stores, (a, b, c)):
        assert int(base[j]) <= addr < int(base[j]) + int(lim[j])


def test_first_dispatch_has_no_guesses_with_the_setting_off(rig, monkeypatch):  # noqa: F811
    _, lim, acc, _ = _first_guesses(rig, monkeypatch, "off")
    assert not lim[: len(acc)].any()


def test_no_guesses_where_the_slots_are_not_the_programs(rig, monkeypatch):  # noqa: F811
    # a module whose slots do not number the lowered program's accesses: nothing is claimed
    mem, cfg, _, _, fm = rig
    monkeypatch.setenv("WAVELIFT_CUDA_PROVE", "on")
    fm.slots = ((4, False),) * 3
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    lim = {name: h for name, h in fm.puts}["WL_GL"]
    assert not lim[:3].any()


def test_the_proof_lowers_the_program_once_per_module(rig, monkeypatch, calls):  # noqa: F811
    # a module read from the disk (no kept program): the first proof lowers it, the next
    # first dispatch (its hints cleared) proves on the program the module now keeps
    mem, cfg, _, _, fm = rig
    lowered = calls(G, "optimized")
    base, lim, acc, _ = _first_guesses(rig, monkeypatch, "on")
    n = len(lowered)  # (_first_guesses lowers once itself)
    assert fm.lowered is not None and (lim[: len(acc)] > 0).all()
    fm.hints = None
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert len(lowered) == n
    assert ({k: h for k, h in fm.puts}["WL_GL"][: len(acc)] > 0).all()


def test_the_proof_takes_the_program_the_module_kept(rig, monkeypatch):  # noqa: F811
    # build_module keeps generate's program (Module.lowered): the proof lowers nothing
    mem, cfg, _, _, fm = rig
    program, _ = O.program_for(mem, cfg)
    fm.lowered = G.lowered(program, cfg.wave_size, G.baked_params(cfg))
    acc = GR.global_accesses(fm.lowered)
    fm.slots = tuple((GR.access_bytes(op), False) for op in acc)

    def no(*a):
        raise AssertionError("lowered again")

    monkeypatch.setattr(G, "optimized", no)
    monkeypatch.setenv("WAVELIFT_CUDA_PROVE", "on")
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert ({k: h for k, h in fm.puts}["WL_GL"][: len(acc)] > 0).all()


# ---- an access's mask narrows its address: MUBUF's range check --------------------------------


def _ranged_store(nrec, scale=4, cond="ge", join="and", ex_first=True):
    """A store at BASE + rel, rel = lid * ``scale`` (u64), under EXEC and not (rel ``cond``
    ``nrec``) -- the frontend's MUBUF mask (mubuf: a lane out of range accesses nothing);
    ``join``: "or" makes the mask a disjunction (nothing implied)."""
    b = _B()
    ex = b.op("exec", "b1", uniform=False)
    lid = b.op("vget", "u32", reg=0, uniform=False)
    rel = b.op("cvt", "u64", b.op("mul", "u32", lid, b.c("u32", scale)), to="u64")
    oob = b.op("cmp", "u64", rel, b.op("cvt", "u64", b.op("sget", "u32", reg=2), to="u64"), cond=cond)
    ok = b.op("not", "b1", oob)
    mask = b.op(join, "b1", ex, ok) if ex_first else b.op(join, "b1", ok, ex)
    base = b.op("pack64", "u64", b.op("sget", "u32", reg=0), b.op("sget", "u32", reg=1))
    b.effect("store", "u32", b.op("add", "u64", base, rel), mask, b.c("u32", 0), space="global", nbytes=4)
    sregs = {0: const(BASE & 0xFFFFFFFF), 1: const(BASE >> 32)}
    if nrec is not None:
        sregs[2] = const(nrec)
    shape = {"block": (2048, 1, 1), "tidig": 0, "packed": False}  # (lid * 4 up to 8 KiB: past a's window)
    return GR.prove(b.program(), 32, shape, sregs, {}, WIN)


def test_a_range_checked_offset_is_proved_by_num_records():
    # lanes past NUM_RECORDS access nothing: the rest lie in a's 4 KiB window, the last whole
    # word at 4092 (the offset a multiple of 4, its narrowed end too)
    assert _ranged_store(4096) == [0]
    assert _ranged_store(4093) == [0]
    assert _ranged_store(4096, ex_first=False) == [0]
    assert _ranged_store(4096, cond="gt") == [None]  # (rel <= 4096: the word at 4096 leaves it)
    assert _ranged_store(4095, cond="gt") == [0]


def test_a_range_that_does_not_bound_the_offset_proves_nothing():
    assert _ranged_store(4097) == [None]  # (a word at 4096: past the window's end)
    assert _ranged_store(8192) == [None]
    assert _ranged_store(None) == [None]  # (NUM_RECORDS not known)
    assert _ranged_store(4096, join="or") == [None]  # (the mask implies no compare)
    assert _ranged_store(4096, cond="ne") == [None]
    assert _ranged_store(4096, scale=3) == [None]  # (an offset of 4095: its word leaves the window)
    assert _ranged_store(0) == [None]  # (no lane in range: nothing claimed)


def _mubuf_rig(nrec, *, alloc=256, block=128, nrec_loaded=False):
    """A wave32 buffer_store_dword of each lane's id at 4 * lid (offen) through a raw V# in
    s[0:3] (OOB_SELECT 3) over an ``alloc``-byte buffer; ``nrec_loaded``: NUM_RECORDS read
    with s_load from an address that depends on the workgroup id (not a preload: not known)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))
    from asm import HAVE_MC
    from harness import Rig

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    load = "s_lshl_b32 s8, s6, 2\n s_load_dword s2, s[4:5], s8\n s_waitcnt lgkmcnt(0)" if nrec_loaded else ""
    r = Rig(f"""
        {load}
        v_lshlrev_b32 v1, 2, v0
        buffer_store_dword v0, v1, s[0:3], 0 offen
        s_endpgm
    """)
    buf = r.buf(np.zeros(alloc // 4, np.uint32), "buf")
    cnt = r.buf(np.full(4, nrec, np.uint32), "nrec")
    vsharp = [buf & 0xFFFFFFFF, (buf >> 32) & 0xFFFF, nrec, 0x31016FAC]
    cfg = r.config(user_sgprs=vsharp + [cnt & 0xFFFFFFFF, cnt >> 32], block=(block, 1, 1))
    return r.mem, cfg, buf


def test_a_mubuf_store_is_proved_by_its_descriptors_range():
    # 128 lanes, 64 in range: the others dropped by the range check (NumPy records no access
    # for them; the oracle checks every recorded one against the claim)
    mem, cfg, _ = _mubuf_rig(256)
    n, proved, bad = O.check("mubuf", mem, cfg)
    assert not bad and n == proved == 1
    mem, cfg, _ = _mubuf_rig(64, alloc=256)  # (a range inside the buffer)
    n, proved, bad = O.check("mubuf", mem, cfg)
    assert not bad and n == proved == 1


def test_a_mubuf_store_past_its_window_or_with_unknown_words_is_not_proved():
    mem, cfg, _ = _mubuf_rig(512, alloc=256)  # (the V#'s range crosses the window's end)
    assert O.proof_of(mem, cfg)[2] == [None]
    mem, cfg, _ = _mubuf_rig(256, nrec_loaded=True)  # (NUM_RECORDS not known before the run)
    assert O.proof_of(mem, cfg)[2][-1] is None
