"""Scratch: the one static test "this access is scratch", and the offset-register rule.

Decision record: docs/decisions/0008-scratch.md (our version of D954).

The test
    An access is a scratch access when its base is the dispatch's scratch base:
      * every ``scratch_*`` instruction (base FLAT_SCRATCH) and a flat access in the private
        aperture;
      * a MUBUF access whose V# base (words 0-1 of ``srsrc``) is derived, by data flow, from a
        *scratch root*.
    The scratch roots are the user SGPRs that hold the scratch base when the dispatch has
    SCRATCH_EN:
      * s0:s1 when s1 has SWIZZLE_ENABLE (bit 31; GFX11: bits 31:30) — the HSA private segment buffer V# s[0:3]
        (LLVM; s[0:3] are skipped by the tracer when s3 has ADD_TID_ENABLE) and RADV's
        ring_offsets (RADV's LLVM path builds its V# from s0:s1, ACO writes it into FLAT_SCRATCH);
      * the user SGPRs whose values the program writes into FLAT_SCR_LO/HI with s_setreg (the
        HSA flat_scratch_init pair, ACO's s0:s1).
    The translation sends a scratch access to the module's scratch array, never to a window; the
    buffer tracer leaves every root out (``Plan.tracer_skip``), so window placement and write
    spans never see a scratch address.  A MUBUF whose V# base mixes a root with another user
    SGPR is refused (``scratch.ambiguous_base``): it would be scratch on one path and a buffer on
    another.

The offset register
    The scratch wave offset SGPR reads zero.  A value the program *wrote* into that register that
    can reach a scratch address — a scratch MUBUF's ``soffset``, the base words of a scratch V#,
    or a value written into FLAT_SCR_LO/HI — is refused (``scratch.offset_written``).  Writes that
    reach no scratch address are fine (clang -O2 adds the offset into s[0:1], then reloads a
    kernel argument into the same register).

Data flow
    Forward, over the CFG of the decoded program (blocks from ``flow.blocks``; an ``s_setpc`` /
    ``s_swappc`` goes to its constant target, or else to every return point and call target).  Every register (SGPRs, VCC, M0, EXEC, SCC, VGPRs) carries
    two bit sets, joined by union:
      ``ent``  the entry SGPRs its value was computed from (through moves and ALU ops; a load
               starts a fresh value),
      ``wr``   the SGPRs whose program-written values it was computed from (through ALU ops,
               loads' addresses, and memory: anything stored anywhere may come back in any load).
    SGPR writes replace (a strong update); VGPR writes add (EXEC keeps other lanes' values).
    The facts (``Facts``) depend on the program only; ``plan`` applies a dispatch's ABI
    (``ScratchABI``: scratch enabled, s1 swizzled, where the offset register is) to them.
    ``ScratchABI`` is part of the program and module cache keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Refused
from ..ir.program import Plan

SCC_ID = 253  # the SCC pseudo register in the analysis (the SRC code for src_scc)
VGPR0 = 256  # VGPR v is register VGPR0 + v
VCC = (106, 107)
EXEC = (126, 127)
HWREG_FLAT_SCR = (20, 21)
ALL_SGPRS = (1 << 106) - 1

_SCC_READ = (
    "s_addc_u32",
    "s_subb_u32",
    "s_cselect_b32",
    "s_cselect_b64",
    "s_cmov_b32",
    "s_cmov_b64",
    "s_cmovk_i32",
)
_SCC_WRITE = (
    "s_add_",
    "s_sub_",
    "s_addc_",
    "s_subb_",
    "s_cmp",
    "s_and",
    "s_or",
    "s_xor",
    "s_nand",
    "s_nor",
    "s_xnor",
    "s_lshl",
    "s_lshr",
    "s_ashr",
    "s_bfe_",
    "s_min_",
    "s_max_",
    "s_abs",
    "s_not_",
    "s_bcnt",
    "s_bitcmp",
    "s_addk_",
    "s_quadmask",
    "s_wqm",
    "s_ff",
    "s_flbit",
    "s_absdiff",
)
_SOPK_SRC_ONLY = ("s_cmpk_", "s_setreg_b32")


@dataclass(frozen=True)
class ScratchABI:
    """What of the dispatch the scratch decision depends on (part of the cache keys)."""

    enabled: bool = False  # SCRATCH_EN with a usable size
    ring_root: bool = False  # s0:s1 hold the scratch base (s1 has SWIZZLE_ENABLE)
    offset_reg: int | None = None  # the scratch wave offset SGPR
    user_sgprs: int = 0


def abi(config) -> ScratchABI:
    u = config.user_sgprs
    en = bool(config.scratch_enabled) and config.scratch_wave_bytes > 0
    # SWIZZLE_ENABLE: word 1 bit 31 on GFX10/10.3; bits [31:30] on GFX11 (RADV sets bit 30)
    swizzle = 0xC0000000 if config.gfx_level == 11 else 0x80000000
    ring = en and len(u) >= 2 and bool(u[1] & swizzle)
    return ScratchABI(en, ring, config.system_sgprs.get("scratch_wave_offset"), len(u))


def scratch_sgprs(config) -> set[int]:
    """User SGPRs that hold the scratch base by value (s0:s1); the ones the program uses as
    scratch (FLAT_SCRATCH writes, the upper words of a scratch V# taken whole from user SGPRs)
    come from the program (``Plan.tracer_skip``)."""
    return {0, 1} if abi(config).ring_root else set()


# ------------------------------------------------------------------------------ facts
@dataclass
class Facts:
    """Per-instruction results of the data flow (program only)."""

    mubuf_ent: dict = field(default_factory=dict)  # offset -> entry SGPRs of the V# base
    mubuf_ent_hi: dict = field(default_factory=dict)  # ... of the V#'s words 2..3
    mubuf_wr: dict = field(default_factory=dict)  # offset -> written SGPRs in base/soffset
    flat_scr_ent: dict = field(default_factory=dict)  # s_setreg FLAT_SCR offset -> entry SGPRs
    flat_scr_wr: dict = field(default_factory=dict)  # ... -> written SGPRs
    text: dict = field(default_factory=dict)  # offset -> LLVM text (messages only)


def _bits(regs):
    m = 0
    for r in regs:
        m |= 1 << r
    return m


def _reg_ids(op):
    k = op.kind
    if k == "sgpr":
        return list(range(op.index, op.index + op.count))
    if k == "vgpr":
        return [VGPR0 + op.index + j for j in range(op.count)]
    if k == "special":
        if op.index in (106, 124, 126):
            return list(range(op.index, op.index + max(op.count, 1)))
        if op.index in (107, 127):
            return [op.index]
        if op.index == 253:
            return [SCC_ID]
    if k == "ttmp":
        return []
    return []


def _is_dst(ins, op) -> bool:
    n, role, enc = ins.name, op.role, ins.encoding
    if role in ("sdst", "vdst"):
        if enc == "SOPK" and n.startswith(_SOPK_SRC_ONLY):
            return False
        if enc in ("FLAT", "GLOBAL", "SCRATCH") and "store" in n:
            return False
        return True
    if role == "sdata":
        return "load" in n or "atomic" in n and bool(ins.fields.get("glc"))
    if role == "vdata":
        if "load" in n:
            return True
        return "atomic" in n and bool(ins.fields.get("glc"))
    return False


def _effects(ins):
    """-> (dst ids, src ids, kind) with kind 'alu' | 'load' | 'store' | 'atomic' | 'none'."""
    n, enc = ins.name, ins.encoding
    dst, src = [], []
    for op in ins.operands:
        ids = _reg_ids(op)
        if not ids:
            continue
        (dst if _is_dst(ins, op) else src).extend(ids)
    if enc == "SOPK" and n in ("s_addk_i32", "s_mulk_i32", "s_cmovk_i32"):
        src.extend(dst)
    if n in _SCC_READ:
        src.append(SCC_ID)
    if enc in ("SOP1", "SOP2", "SOPC", "SOPK") and n.startswith(_SCC_WRITE):
        dst.append(SCC_ID)
    if "saveexec" in n or "wrexec" in n:
        src.extend(EXEC)
        dst.extend(EXEC)
    if enc in ("VOP2", "VOPC") and ins.variant in ("", "e32", "dpp", "dpp8", "sdwa"):
        if enc == "VOPC" or "_co_" in n or "cndmask" in n or "subb" in n or "addc" in n:
            src.extend(VCC)  # read, and weakly written (see _step)
            dst.extend(VCC)
    if n.startswith("v_writelane") or n.startswith("v_movreld"):
        src.extend(dst)
    if n.startswith(("s_movrels", "s_movreld", "s_movrelsd")):
        src.append(-1)  # any SGPR
    if n.startswith(("v_movrels", "v_movrelsd")):
        src.append(-2)  # any VGPR
    if enc == "SMEM":
        kind = "load" if dst else ("store" if "store" in n else "none")
    elif enc in ("MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH", "DS", "MIMG"):
        if (
            "atomic" in n
            or enc == "DS"
            and n.startswith("ds_")
            and dst
            and src
            and "read" not in n
            and "load" not in n
        ):
            kind = "atomic"
        elif dst:
            kind = "load"
        elif "store" in n or "write" in n or enc == "DS":
            kind = "store"
        else:
            kind = "none"
    else:
        kind = "alu"
    return dst, src, kind


class _State:
    __slots__ = ("ent", "wr")

    def __init__(self, ent=None, wr=None):
        self.ent = dict(ent or {})
        self.wr = dict(wr or {})

    def copy(self) -> _State:
        return _State(self.ent, self.wr)

    def join(self, o) -> bool:
        ch = False
        for mine, theirs in ((self.ent, o.ent), (self.wr, o.wr)):
            for r, v in theirs.items():
                old = mine.get(r, 0)
                if old | v != old:
                    mine[r] = old | v
                    ch = True
        return ch


def _entry_state() -> _State:
    return _State({r: 1 << r for r in range(106)}, {})


def _get(st, ids, which):
    d = st.ent if which == "ent" else st.wr
    m = 0
    for r in ids:
        if r == -1:
            for k in range(106):
                m |= d.get(k, 0)
        elif r == -2:
            for k, v in d.items():
                if k >= VGPR0:
                    m |= v
        else:
            m |= d.get(r, 0)
    return m


def _step(ins, st, mem_wr, facts, record):
    dst, src, kind = _effects(ins)
    n = ins.name
    ent = _get(st, src, "ent")
    wr = _get(st, src, "wr")
    if kind == "load":
        ent = 0
        wr |= mem_wr[0]
    elif kind == "atomic":
        mem_wr[0] |= wr
        ent = 0
        wr |= mem_wr[0]
    elif kind == "store":
        mem_wr[0] |= wr
    if record:
        if ins.encoding == "MUBUF" and ("load" in n or "store" in n or "atomic" in n):
            f = ins.fields
            r = f["srsrc"] * 4
            base = [r, r + 1]
            so = f.get("soffset", 125)
            facts.mubuf_ent[ins.offset] = facts.mubuf_ent.get(ins.offset, 0) | _get(st, base, "ent")
            facts.mubuf_ent_hi[ins.offset] = facts.mubuf_ent_hi.get(ins.offset, 0) | _get(
                st, [r + 2, r + 3], "ent"
            )
            wr_use = _get(st, base, "wr") | (_get(st, [so], "wr") if so < 106 else 0)
            facts.mubuf_wr[ins.offset] = facts.mubuf_wr.get(ins.offset, 0) | wr_use
            facts.text[ins.offset] = ins.text
        if n == "s_setreg_b32" and (ins.fields.get("simm16", 0) & 0x3F) in HWREG_FLAT_SCR:
            s = ins.fields.get("sdst", 125)
            facts.flat_scr_ent[ins.offset] = facts.flat_scr_ent.get(ins.offset, 0) | _get(st, [s], "ent")
            facts.flat_scr_wr[ins.offset] = facts.flat_scr_wr.get(ins.offset, 0) | _get(st, [s], "wr")
            facts.text[ins.offset] = ins.text
    if n in ("s_getpc_b64", "s_swappc_b64", "s_call_b64"):
        ent, wr = 0, 0
    for r in dst:
        if r < VGPR0 and r != SCC_ID and not (r in VCC and ins.encoding in ("VOP2", "VOPC")):
            st.ent[r] = ent
            st.wr[r] = wr | (1 << r)
        else:
            st.ent[r] = st.ent.get(r, 0) | ent
            st.wr[r] = st.wr.get(r, 0) | wr
    if SCC_ID in dst:
        st.ent[SCC_ID] = ent
        st.wr[SCC_ID] = wr


def _constant_target(instrs, g, base_address):
    """The byte offset an s_setpc/s_swappc ending block ``g`` goes to, when the block builds it
    from constants (s_getpc_b64 + s_add_u32/s_addc_u32, as flow.discover follows it)."""
    from .flow import _track

    consts: dict = {}
    carry = 0
    for off in g[:-1]:
        carry = _track(instrs[off], consts, base_address, carry)
    r = instrs[g[-1]].fields.get("ssrc0", -1)
    if r in consts and r + 1 in consts:
        return ((consts[r + 1] << 32) | consts[r]) - base_address
    return None


def analyze(instrs: dict, groups: list[list[int]], base_address: int = 0) -> Facts:
    """Run the data flow over the program's blocks (``flow.blocks`` output).  An
    ``s_setpc``/``s_swappc`` whose target the block builds from constants goes there; any other
    (a return, a computed jump) goes to every return point (the instruction after an
    ``s_swappc``/``s_call``) and every constant call target — the discipline compilers keep."""
    from .scalar_alu import branch_targets, falls_through

    if not any(instrs[o].encoding == "MUBUF" or instrs[o].name == "s_setreg_b32" for o in instrs):
        return Facts()
    start = {g[0]: i for i, g in enumerate(groups)}
    targets: dict[int, int | None] = {}  # block -> its constant target (None: computed)
    returns: set[int] = set()
    for i, g in enumerate(groups):
        last = instrs[g[-1]]
        if last.name in ("s_setpc_b64", "s_swappc_b64"):
            t = _constant_target(instrs, g, base_address)
            targets[i] = start[t] if t is not None and t in start else None
        if last.name in ("s_swappc_b64", "s_call_b64") and g[-1] + last.size in start:
            returns.add(start[g[-1] + last.size])
    # a return or computed jump goes to a return point or a function entry (compiler discipline)
    anywhere = returns | {t for t in targets.values() if t is not None}
    succ = []
    for i, g in enumerate(groups):
        last = instrs[g[-1]]
        s: set[int] = set()
        if i in targets:
            tgt = targets[i]
            s = {tgt} if tgt is not None else set(anywhere)
        else:
            for t in branch_targets(last):
                if t in start:
                    s.add(start[t])
            nxt = g[-1] + last.size
            if falls_through(last) and nxt in start and last.name not in ("s_call_b64",):
                s.add(start[nxt])
        succ.append(sorted(s))
    facts = Facts()
    mem_wr = [0]
    while True:
        before = mem_wr[0]
        ins_state: list[_State | None] = [None] * len(groups)
        ins_state[0] = _entry_state()
        work = [0]
        while work:
            i = work.pop()
            cur = ins_state[i]
            assert cur is not None  # a block is queued once its state is set
            st = cur.copy()
            for off in groups[i]:
                _step(instrs[off], st, mem_wr, facts, False)
            for j in succ[i]:
                prev = ins_state[j]
                if prev is None:
                    ins_state[j] = st.copy()
                    work.append(j)
                elif prev.join(st):
                    work.append(j)
        if mem_wr[0] == before:
            break
    for i, g in enumerate(groups):
        state = ins_state[i]
        if state is None:
            continue
        st = state.copy()
        for off in g:
            _step(instrs[off], st, mem_wr, facts, True)
    return facts


# ------------------------------------------------------------------------------- plan
# (Plan, what this decides, lives with the Program it belongs to: ir.py)


def _regs(mask):
    return [r for r in range(106) if mask >> r & 1]


def _names(mask):
    return ", ".join(f"s{r}" for r in _regs(mask))


def plan(facts: Facts, a: ScratchABI | None) -> Plan:
    """Apply a dispatch's ABI to the facts; raises Refused for the scratch refusals."""
    if a is None or not a.enabled:
        return Plan()
    user = (1 << a.user_sgprs) - 1
    roots = 0b11 if a.ring_root else 0
    for ent in facts.flat_scr_ent.values():
        roots |= ent & user
    # FLAT_SCR_LO/HI name a pair: both halves are roots
    for r in _regs(roots):
        roots |= 1 << (r ^ 1) if (r ^ 1) < a.user_sgprs else 0
    scratch = set()
    for off, ent in facts.mubuf_ent.items():
        if ent & roots:
            other = ent & user & ~roots
            if other:
                raise Refused(
                    "scratch.ambiguous_base",
                    f"offset {off:#x}: {facts.text.get(off, '')}: the buffer base comes "
                    f"from the scratch base ({_names(ent & roots)}) and from "
                    f"{_names(other)}",
                )
            scratch.add(off)
    if a.offset_reg is not None:
        bit = 1 << a.offset_reg
        uses = [
            (off, "a scratch buffer access") for off in sorted(scratch) if facts.mubuf_wr.get(off, 0) & bit
        ]
        uses += [(off, "FLAT_SCRATCH") for off, wr in sorted(facts.flat_scr_wr.items()) if wr & bit]
        if uses:
            off, what = uses[0]
            raise Refused(
                "scratch.offset_written",
                f"offset {off:#x}: {facts.text.get(off, '')}: a value the program wrote "
                f"into the scratch wave offset register s{a.offset_reg} reaches {what} "
                f"(the module reads that register as zero)",
            )
    # a scratch V# taken whole from user SGPRs: its words 2..3 are no pointer either.  Decided
    # from the program, never from the values (a push constant in s3 with bit 23 set, ADD_TID's
    # bit, once hid the descriptor pointer in s2 from the tracer: a RADV dispatch refused)
    skip = set(_regs(roots))
    for off in scratch:
        skip |= set(_regs(facts.mubuf_ent_hi.get(off, 0) & user))
    return Plan(frozenset(scratch), frozenset(_regs(roots)), frozenset(skip))
