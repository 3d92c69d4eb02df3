"""Fuzz target: PM4 streams, mutated real RADV captures and hand-built ones, replayed for real.

One case = one capture built from the seed:
  * a RADV capture of tests/fixtures/captures with mutations: bits flipped in its IBs, a user-data
    dword or another dispatch register replaced (random or extreme values), dispatch dimensions
    replaced (in the packet or the indirect buffer), the stream list repeated, a stream's size
    changed, random packets spliced in;
  * or a hand-built stream of random packets: register writes, dispatches of small programs (one
    stores, one spins), IB calls and chains (into themselves, into data, past the end), DMA_DATA
    of up to 64 MiB, WRITE_DATA/COPY_DATA/RELEASE_MEM/WAIT_REG_MEM at random addresses, raw
    random dwords.
Replayed by ``replay``, at most DISPATCHES dispatches a case (the capture limits' own values
are tested in tests/stream).  One seed in ENGINE_EVERY runs its dispatches on the engine (NumPy
backend, default instruction budget, grids of at most MAX_WAVES waves: a larger grid's cost is
the engine's, bounded by 0015's limits and tested in tests/run/test_budget_time.py); the
others stop at the dispatch's config (the walker and dispatch setup are what this target is
for; programs are fuzz_programs', and a real dispatch costs ~0.1-1 s where a stream costs ms).

Violations (AssertionError naming the seed): an exception escaping replay; a dispatch refused
although guest memory changed during it; a case past CASE_SECONDS of wall clock.

    python3 tools/fuzz.py pm4 --count 100000 --jobs 2        (docs/fuzzing.md)
"""

from __future__ import annotations

import copy
import functools
import random
import sys
import time

import numpy as np
from testpaths import FIXTURES

from wavelift import pm4
from wavelift.memory.capture import Capture
from wavelift.run.execute import execute_dispatch
from wavelift.run.replay import replay
from wavelift.run.result import DispatchResult
from wavelift.stream import registers as R
from wavelift.stream.walker import StreamLimits

CASE_SECONDS = 120.0  # wall clock per case; longer is a violation
TIME_LIMIT = 300.0  # tools/fuzz.py's watchdog
MAX_WAVES = 1 << 10  # larger grids are not executed here
DISPATCHES = 8  # StreamLimits.dispatches of a case
ENGINE_EVERY = 4  # seeds whose dispatches run on the engine: one in this many
CAPTURES = sorted((FIXTURES / "captures").glob("radv-*.wlcap"))
USER_DATA = R.address_of("COMPUTE_USER_DATA_0", "SH")
EXTREMES = (0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFFF8000, 0xFFFFFFFC, 0x00010000)
# registers a mutation may write (dispatch state)
REGS = (
    "COMPUTE_PGM_LO",
    "COMPUTE_PGM_HI",
    "COMPUTE_PGM_RSRC1",
    "COMPUTE_PGM_RSRC2",
    "COMPUTE_PGM_RSRC3",
    "COMPUTE_NUM_THREAD_X",
    "COMPUTE_NUM_THREAD_Y",
    "COMPUTE_NUM_THREAD_Z",
    "COMPUTE_TMPRING_SIZE",
    "COMPUTE_START_X",
    "COMPUTE_USER_DATA_0",
    "COMPUTE_USER_DATA_1",
    "COMPUTE_USER_DATA_2",
    "COMPUTE_USER_DATA_3",
)


@functools.cache
def _capture(path) -> Capture:
    return Capture.load(str(path))


@functools.cache
def _programs() -> dict:
    """Small programs (assembled once): a store of each lane's id through s[0:1], and a spin."""
    from asm import assemble

    store = """
  v_lshlrev_b32 v1, 2, v0
  global_store_dword v1, v0, s[0:1]
  s_endpgm"""
    spin = ".Ltop:\n  v_add_nc_u32 v5, 1, v5\n  s_branch .Ltop\n  s_endpgm"
    return {"store": assemble(store), "spin": assemble(spin), "end": assemble("  s_endpgm")}


def _digest(cap) -> tuple:
    """Guest memory, summed per allocation (sum and xor of its 8-byte words: a change that keeps
    both is contrived; a hash of a 60 MiB scratch backing per dispatch would be the fuzzer's
    whole cost)."""
    out = []
    for a in cap.memory.allocations:
        d = a.data
        w = d[: d.size & ~7].view("<u8")
        out.append(
            (
                a.base,
                int(w.sum(dtype=np.uint64)),
                int(np.bitwise_xor.reduce(w)) if w.size else 0,
                d[d.size & ~7 :].tobytes(),
            )
        )
    return tuple(out)


def _word(r):
    return r.choice(EXTREMES) if r.random() < 0.4 else r.getrandbits(32)


# --- mutations of a real capture --------------------------------------------------------------
def _ib_words(cap, k):
    """Stream k's dwords (a view: edits land in the IB), as far as its allocation goes (an
    earlier mutation may have changed its size)."""
    addr, n = cap.streams[k]
    al = cap.memory.find(addr)
    n = 0 if al is None else min(n, (al.end - addr) // 4)  # (a "size" mutation may make it < 0)
    return cap.memory.view(addr, 4 * n).view("<u4") if n > 0 else np.zeros(1, "<u4")


def _packets(dw):
    """(offset, header, opcode, body length) of each packet of ``dw`` that parses."""
    out, i = [], 0
    while i < len(dw):
        h = int(dw[i])
        if h >> 30 == 2 or h == pm4.NOP_PAD:
            i += 1
            continue
        if h >> 30 != 3:
            break
        cnt = (h >> 16) & 0x3FFF
        out.append((i, h, (h >> 8) & 0xFF, cnt + 1))
        i += cnt + 2
    return out


def mutate(cap, r) -> str:
    kind = r.choice(("flip", "user", "reg", "dims", "repeat", "size", "splice", "user", "dims"))
    k = r.randrange(len(cap.streams))
    dw = _ib_words(cap, k)
    pk = [p for p in _packets(dw) if p[0] + 1 + p[3] <= len(dw)]
    if kind == "flip":
        for _ in range(r.randint(1, 4)):
            i = r.randrange(len(dw))
            dw[i] ^= np.uint32(1 << r.randrange(32))
    elif kind in ("user", "reg"):
        sets = [p for p in pk if p[2] == pm4.SET_SH_REG and p[3] >= 2]  # (offset + a value)
        if not sets:
            return mutate(cap, r)
        off, _, _, n = r.choice(sets)
        base = R.SH_BASE + 4 * (int(dw[off + 1]) & 0xFFFF)
        j = r.randrange(1, n)
        users = [j for j in range(1, n) if 0 <= base + 4 * (j - 1) - USER_DATA < 64]
        if kind == "user" and users:
            j = r.choice(users)
        dw[off + 1 + j] = _word(r)
    elif kind == "dims":
        disp = [p for p in pk if p[2] in (pm4.DISPATCH_DIRECT, pm4.DISPATCH_INDIRECT)]
        if not disp:
            return mutate(cap, r)
        off, _, op, n = r.choice(disp)
        vals = [r.choice((0, 1, 2, 7, 64, 4096, 1 << 16, 0xFFFFFFFF)) for _ in range(3)]
        if op == pm4.DISPATCH_DIRECT:
            dw[off + 1 : off + 4] = vals
        else:  # the dimensions the packet points at, if found
            for a in cap.memory.allocations:
                if a.size >= 12 and a.size <= 64 and r.random() < 0.5:
                    a.data[:12] = np.array(vals, "<u4").view(np.uint8)
    elif kind == "repeat":
        cap.streams = cap.streams * r.choice((2, 10, 100))
    elif kind == "size":
        addr, n = cap.streams[k]
        cap.streams[k] = (addr, r.choice((0, 1, n - 1, n // 2, n + 1, n * 4, 0xFFFFF)))
    else:  # splice random packets into a copy of the IB
        words = dw.tolist()
        at = r.choice([p[0] for p in pk] or [0])
        new = words[:at] + random_packets(cap, r, r.randint(1, 4)) + words[at:]
        cap.streams[k] = (
            cap.alloc(4 * len(new), data=np.array(new, "<u4").view(np.uint8), name="spliced", align=256),
            len(new),
        )
    return kind


# --- hand-built streams -----------------------------------------------------------------------
def _address(cap, r):
    """A guest address: inside an allocation, just past one, 0, near the top, or random."""
    allocs = cap.memory.allocations
    a = r.choice(allocs)
    return r.choice(
        (
            a.base + r.randrange(0, max(1, a.size), 4),
            a.base + a.size - 4,
            a.end,
            0,
            0xFFFF_FFFF_FFFF_FFFC,
            0x0000_7FFF_FFFF_F000,
            r.getrandbits(48) & ~3,
        )
    )


def random_packets(cap, r, n) -> list:
    out = []
    for _ in range(n):
        k = r.randrange(12)
        a = _address(cap, r)
        if k == 0:
            out += pm4.set_sh_regs({r.choice(REGS): _word(r) for _ in range(r.randint(1, 3))})
        elif k == 1:
            dims = [r.choice((1, 2, 3, 64, 1 << 20, 0xFFFFFFFF)) for _ in range(3)]
            out += pm4.dispatch_direct(
                *dims, initiator=r.choice((pm4.DEFAULT_INITIATOR, pm4.initiator(wave32=True), _word(r)))
            )
        elif k == 2:
            out += pm4.dispatch_indirect(address=a, initiator=pm4.initiator(wave32=r.random() < 0.5))
        elif k == 3:
            out += pm4.indirect_buffer(a, r.choice((1, 4, 64, 4096, 0xFFFFF)), chain=r.random() < 0.5)
        elif k == 4:
            out += pm4.dma_data(_address(cap, r), a, r.choice((4, 4096, 1 << 20, (1 << 26) - 4)))
        elif k == 5:
            out += pm4.dma_data(_word(r), a, r.choice((4, 1 << 16, (1 << 26) - 4)), src_sel=pm4.DMA_SRC_DATA)
        elif k == 6:
            out += pm4.write_data(a, *[_word(r) for _ in range(r.randint(1, 4))])
        elif k == 7:
            out += pm4.copy_data(
                pm4.COPY_SRC_MEM, _address(cap, r), pm4.COPY_DST_MEM, a, count64=r.random() < 0.5
            )
        elif k == 8:
            out += pm4.release_mem(a & ~7, _word(r), data_sel=r.choice((1, 2, 3)))
        elif k == 9:
            out += pm4.wait_reg_mem(a, _word(r), function=r.randrange(8))
        elif k == 10:
            out += [r.getrandbits(32) for _ in range(r.randint(1, 6))]
        else:
            out += pm4.nop(r.randint(1, 40))
    return out


def build_random(r) -> Capture:
    cap = Capture(target=r.choice(("gfx1030", "gfx1010")))
    progs = _programs()
    code = {k: cap.alloc(len(v) + 256, data=v + b"\0" * 256, name=k, align=256) for k, v in progs.items()}
    buf = cap.alloc(4096, name="buf", data=np.arange(1024, dtype="<u4").view(np.uint8))
    dims = cap.alloc(16, name="dims", data=np.array([2, 1, 1, 0], "<u4").view(np.uint8))
    prog = code[r.choice(("store", "store", "spin", "end"))]
    head = pm4.set_sh_regs(
        {
            "COMPUTE_PGM_LO": prog >> 8,
            "COMPUTE_PGM_HI": prog >> 40,
            "COMPUTE_PGM_RSRC1": 0xF0 << 12,
            "COMPUTE_PGM_RSRC2": 2 << 1,
            "COMPUTE_USER_DATA_0": buf & 0xFFFFFFFF,
            "COMPUTE_USER_DATA_1": buf >> 32,
            "COMPUTE_NUM_THREAD_X": 32,
            "COMPUTE_NUM_THREAD_Y": 1,
            "COMPUTE_NUM_THREAD_Z": 1,
        }
    )
    subw = np.array(random_packets(cap, r, r.randint(1, 6)), "<u4")
    sub = cap.alloc(subw.nbytes, data=subw.view(np.uint8), name="sub", align=256)
    body = head + pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True))
    body += random_packets(cap, r, r.randint(1, 12))
    if r.random() < 0.5:
        body += pm4.indirect_buffer(sub, r.choice((1, subw.size)), chain=r.random() < 0.5)
    body += pm4.dispatch_indirect(address=dims, initiator=pm4.initiator(wave32=True))
    cap.submit(body)
    return cap


def build(seed: int):
    r = random.Random(seed)
    if seed % 3 or not CAPTURES:
        cap = copy.deepcopy(_capture(r.choice(CAPTURES)))
        what = [mutate(cap, r) for _ in range(r.choice((1, 1, 2, 3)))]
        return cap, "capture " + "+".join(what)
    return build_random(r), "hand-built"


def case(seed: int, budget: int | None = None) -> None:
    """Replay the seed's capture; ``budget`` (instructions a wave) is the default unless given
    (the short test gives a small one: a spinning dispatch then costs milliseconds)."""
    cap, what = build(seed)
    where = f"seed {seed} ({what})"

    def execute(memory, config, index):
        if seed % ENGINE_EVERY or config.waves > MAX_WAVES:
            return DispatchResult(index, config, stats={"not_run": True})
        before = _digest(cap)
        res = execute_dispatch(memory, config, index, budget=budget)
        if res.refusal is not None:
            assert _digest(cap) == before, (
                f"{where}: dispatch {index} refused ({res.refusal}) but guest memory changed"
            )
        return res

    t0 = time.perf_counter()
    try:
        replay(cap, execute=execute, limits=StreamLimits(dispatches=DISPATCHES))
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{where}: replay raised {type(e).__name__}: {e}") from e
    dt = time.perf_counter() - t0
    assert dt <= CASE_SECONDS, f"{where}: ran {dt:.1f} s (limit {CASE_SECONDS:g} s)"


def test_seeds(monkeypatch):
    """A fixed range of seeds in a few seconds: hand-built streams and mutations of the
    captures whose programs translate fastest (tools/fuzz.py runs them all)."""
    monkeypatch.setattr(
        sys.modules[__name__],
        "CAPTURES",
        [c for c in CAPTURES if "push_consts" in c.name or "fullscreen" in c.name],
    )
    for seed in range(24):
        case(seed, budget=4096)
