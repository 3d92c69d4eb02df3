"""Control flow: find the instructions reachable from the entry and split them into basic blocks.

Decoding follows the program from offset 0: fall-through, branch targets, and the targets of
s_setpc/s_swappc when they are constants built by s_getpc_b64 + s_add_u32/s_addc_u32 (the call
sequence compilers emit); the instruction after s_swappc/s_call is a return point.  A computed
jump to any other address is checked at run time against the block starts (``program.bad_jump``).
"""

from __future__ import annotations

import zlib

from ..errors import Refused
from ..isa import DecodeError, decode_one
from ..isa.instruction import moved
from .scalar_alu import branch_targets, ends_block, falls_through

MAX_INSTRUCTIONS = 200_000

# straight-line runs of instructions kept by their bytes (decision 0045, amendment): a run ends
# after an instruction whose words' CRC-32 is 0 modulo RUN_CUT (content-defined, so a recurring
# sequence is cut the same way at any offset) or before one that is not plain (_plain); a run of
# at least RUN_MIN instructions and RUN_KEY bytes is kept under (target, wave64, its first
# RUN_KEY bytes) with its bytes and the dword after them (the decoder may read one dword past
# an instruction: decoder._store), its instructions normalized at offsets from its start (each
# found again goes through _track as a decoded one does).  Decoding is a function of those bytes (decode_one's and
# _normalized's caches rest on the same), so a run found again is the instructions decoding
# would give.  At most RUNS_MAX keys (cleared when full), each with its first RUNS_PER_KEY runs.
RUN_CUT = 8
RUN_MIN = 2
RUN_KEY = 16
RUNS_MAX = 1 << 12
RUNS_PER_KEY = 4
_RUNS: dict = {}


def _simm(v):
    return v - 0x10000 if v & 0x8000 else v


def discover(code: bytes, target: str, wave64: bool, base_address: int, entry: int = 0):
    """-> (instructions by offset, set of block-leader offsets).  Decoding starts at byte
    ``entry`` of ``code`` (``code`` may begin before the entry: callees placed below it)."""
    from . import gfx12
    from .gfx11 import is_gfx11

    gfx12_ = gfx12.is_gfx12(target)
    gfx11 = is_gfx11(target) or gfx12_
    instrs: dict = {}
    leaders = {entry}
    work = [entry]
    code = bytes(code)
    n_code = len(code)
    while work:
        pos = work.pop()
        consts: dict[int, int] = {}
        carry = 0
        run_at = pos  # the run being read: its start, and its (offset, instruction)s
        run: list = []
        while True:
            if pos == run_at and pos >= 0:  # (a run starts here: one kept with these bytes?)
                found = _kept_run(code, pos, target, wave64)
                if found is not None:
                    _, size, rins = found
                    stop = False
                    for rel, r in rins:
                        p = pos + rel
                        if p in instrs:  # (as below: reached before, from elsewhere)
                            stop = True
                            break
                        instrs[p] = moved(r, p)
                        if len(instrs) > MAX_INSTRUCTIONS:
                            raise Refused("program.decode_error", "program has too many instructions")
                        carry = _track(instrs[p], consts, base_address, carry)  # (as below)
                    if stop:
                        break
                    pos = run_at = pos + size  # (every instruction of a run falls through)
                    continue
            if pos in instrs:
                _keep_run(code, run_at, run, target, wave64)
                break
            if pos < 0 or pos >= n_code:
                raise Refused(
                    "program.bad_address", f"control reaches offset {pos:#x}, outside the program's memory"
                )
            try:
                ins = decode_one(code, pos, target, wave64, 0)
            except DecodeError as e:
                raise Refused("program.decode_error", str(e)) from None
            if gfx11:
                ins = _normalized(ins, target, wave64, gfx12_)
            instrs[pos] = ins
            if len(instrs) > MAX_INSTRUCTIONS:
                raise Refused("program.decode_error", "program has too many instructions")
            nxt = pos + ins.size
            if _plain(ins):
                run.append((pos, ins))
                if _run_end(ins.words):
                    _keep_run(code, run_at, run, target, wave64)
                    run_at, run = nxt, []
            else:
                _keep_run(code, run_at, run, target, wave64)
                run_at, run = nxt, []
            for t in branch_targets(ins):
                leaders.add(t)
                work.append(t)
            carry = _track(ins, consts, base_address, carry)
            n = ins.name
            if n in ("s_setpc_b64", "s_swappc_b64"):
                r = ins.fields.get("ssrc0", -1)
                if r in consts and r + 1 in consts:
                    t = ((consts[r + 1] << 32) | consts[r]) - base_address
                    if 0 <= t < len(code):
                        leaders.add(t)
                        work.append(t)
            if n in ("s_swappc_b64", "s_call_b64"):
                leaders.add(nxt)
                work.append(nxt)
            if ends_block(ins):
                leaders.add(nxt)
            if not falls_through(ins) or n in ("s_swappc_b64", "s_call_b64"):
                break
            pos = nxt
    return instrs, leaders


_RUN_CRC: dict = {}


def _run_end(words) -> bool:
    """Whether a run ends after an instruction with these words (CRC-32 0 modulo RUN_CUT)."""
    r = _RUN_CRC.get(words)
    if r is None:
        if len(_RUN_CRC) >= RUNS_MAX:
            _RUN_CRC.clear()
        r = _RUN_CRC[words] = zlib.crc32(repr(tuple(words)).encode()) % RUN_CUT == 0
    return r


def _plain(ins) -> bool:
    """An instruction a run may hold: control only falls through it (no branch target, no
    block end, no call or computed jump: discover adds no leader or work for it)."""
    n = ins.name
    return (
        falls_through(ins)
        and not ends_block(ins)
        and not branch_targets(ins)
        and n not in ("s_setpc_b64", "s_swappc_b64", "s_call_b64")
    )


def _kept_run(code: bytes, pos: int, target: str, wave64: bool):
    """The run kept (see _RUNS) whose bytes (and the dword after them) are ``code``'s at
    ``pos``, or None."""
    kept = _RUNS.get((target, wave64, code[pos : pos + RUN_KEY]))
    if kept is not None:
        for k in kept:
            if code.startswith(k[0], pos):
                return k
    return None


def _keep_run(code: bytes, start: int, run: list, target: str, wave64: bool) -> None:
    """Keep ``run`` ((offset, instruction)s read from ``start`` on) by its bytes (see _RUNS)."""
    if len(run) < RUN_MIN:
        return
    end = run[-1][0] + run[-1][1].size
    if end - start < RUN_KEY or end + 4 > len(code):
        return
    raw = code[start : end + 4]  # (and the dword after: the decoder may have read it)
    key = (target, wave64, raw[:RUN_KEY])
    kept = _RUNS.get(key)
    if kept is not None and (len(kept) >= RUNS_PER_KEY or any(k[0] == raw for k in kept)):
        return  # (a key's first RUNS_PER_KEY runs: a run that holds new code shares a common start)
    rins = tuple((p - start, moved(i, p - start)) for p, i in run)
    if len(_RUNS) >= RUNS_MAX:
        _RUNS.clear()
    _RUNS.setdefault(key, []).append((raw, end - start, rins))


# GFX11/GFX12 instructions as the frontends see them, by what the decoder read (decision 0035)
_NORMALIZED: dict = {}
NORMALIZED_MAX = 1 << 16


def _normalized(ins, target: str, wave64: bool, gfx12_: bool):
    """``ins`` (decoded for a GFX11 or GFX12 target) in GFX10's names and operand codes
    (frontend/gfx11.py, decision 0023), first in GFX11's shape for GFX12 (frontend/gfx12.py,
    decision 0027).  Both are functions of the decoded instruction alone, which is a function of
    its words for (target, wave size): kept by those and the decoder's name, encoding and text,
    at offset 0, and handed out moved to ``ins``'s offset (fields shared: read-only)."""
    key = (target, wave64, ins.words, ins.size, ins.encoding, ins.name, ins.text)
    hit = _NORMALIZED.get(key)
    if hit is not None:
        return hit if ins.offset == 0 else moved(hit, ins.offset)
    from . import gfx12  # (here, not on every hit: an import statement costs ~1 us a call)
    from .gfx11 import normalize

    out = gfx12.normalize(ins) if gfx12_ else ins  # GFX11's shape (frontend/gfx12.py, decision 0027)
    out = normalize(out)  # GFX10 names and operand codes (frontend/gfx11.py, decision 0023)
    # (a refusal, which names the offset, is not kept)
    if len(_NORMALIZED) >= NORMALIZED_MAX:
        _NORMALIZED.clear()
    _NORMALIZED[key] = moved(out, 0)
    return out


# the names _track follows (any other instruction at most drops what its SDST held)
_TRACKED = frozenset(
    ("s_getpc_b64", "s_add_u32", "s_addc_u32", "s_sub_u32", "s_mov_b32", "s_sext_i32_i16", "s_mov_b64")
)
_SOP = frozenset(("SOP1", "SOP2", "SOPK"))


def _track(ins, consts, base, carry):
    """Constant-track the SGPRs of a s_getpc_b64 / s_add_u32 / s_addc_u32 / s_mov sequence."""
    n, f = ins.name, ins.fields
    d = f.get("sdst")
    if n not in _TRACKED and (d is None or ins.encoding not in _SOP):
        return carry  # (what the last branch below does for it: nothing)

    def val(code):
        if code == 255:
            return ins.literal & 0xFFFFFFFF
        if 128 <= code <= 192:
            return code - 128
        if 193 <= code <= 208:
            return (192 - code) & 0xFFFFFFFF
        return consts.get(code)

    if n == "s_getpc_b64":
        a = base + ins.offset + ins.size
        consts[d], consts[d + 1] = a & 0xFFFFFFFF, (a >> 32) & 0xFFFFFFFF
        return 0
    if n in ("s_add_u32", "s_addc_u32", "s_sub_u32"):
        x, y = val(f["ssrc0"]), val(f["ssrc1"])
        if x is None or y is None:
            consts.pop(d, None)
            return 0
        if n == "s_sub_u32":
            r = x - y
            consts[d] = r & 0xFFFFFFFF
            return 1 if r < 0 else 0
        r = x + y + (carry if n == "s_addc_u32" else 0)
        consts[d] = r & 0xFFFFFFFF
        return r >> 32
    if n == "s_mov_b32":
        v = val(f["ssrc0"])
        if v is None:
            consts.pop(d, None)
        else:
            consts[d] = v
        return carry
    if n == "s_sext_i32_i16":  # GFX12's call sequence: s_getpc_b64, then the PC's bit 47 extended
        v = val(f["ssrc0"])
        if v is None:
            consts.pop(d, None)
        else:
            consts[d] = (v & 0xFFFF) - ((v & 0x8000) << 1) & 0xFFFFFFFF
        return carry
    if n == "s_mov_b64":
        s = f["ssrc0"]
        if s in consts and s + 1 in consts:
            consts[d], consts[d + 1] = consts[s], consts[s + 1]
        else:
            consts.pop(d, None)
            consts.pop(d + 1, None)
        return carry
    if d is not None and ins.encoding in ("SOP1", "SOP2", "SOPK"):
        consts.pop(d, None)
        consts.pop(d + 1, None)
    return carry


def blocks(instrs: dict, leaders: set, entry: int = 0) -> list[list[int]]:
    """Offsets grouped into basic blocks, in address order, rotated so that the block at
    ``entry`` is first (block 0 is where every wave starts; code below the entry — callees the
    compiler placed before the kernel — follows the blocks at and above it)."""
    out = _blocks(instrs, leaders)
    if entry:
        out = [g for g in out if g[0] >= entry] + [g for g in out if g[0] < entry]
    return out


def _blocks(instrs: dict, leaders: set) -> list[list[int]]:
    out: list[list[int]] = []
    cur: list[int] = []
    prev_end = None
    for off in sorted(instrs):
        ins = instrs[off]
        if cur and (off in leaders or off != prev_end):
            out.append(cur)
            cur = []
        cur.append(off)
        prev_end = off + ins.size
        if ends_block(ins) or not falls_through(ins):
            out.append(cur)
            cur = []
            prev_end = None
    if cur:
        out.append(cur)
    return out
