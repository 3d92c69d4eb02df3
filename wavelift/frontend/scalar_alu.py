"""SOP1 / SOP2 / SOPK / SOPC / SOPP: scalar ALU, SCC, EXEC, M0, MODE, branches and program flow."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.program import EXEC_HI, EXEC_LO, FLAT_SCR_HI, FLAT_SCR_LO, MODE_REG, SCC, VCC_HI, VCC_LO, Value
from .common import read_sreg, set_scc, unsupported, write_lanemask, write_sdst

NOPS = {
    "s_nop",
    "s_waitcnt",
    "s_waitcnt_vscnt",
    "s_waitcnt_vmcnt",
    "s_waitcnt_expcnt",
    "s_waitcnt_lgkmcnt",
    "s_waitcnt_depctr",
    "s_clause",
    "s_inst_prefetch",
    "s_sleep",
    "s_setprio",
    "s_icache_inv",
    "s_ttracedata",
    "s_ttracedata_imm",
    "s_version",
    "s_sendmsg",
    "s_sendmsghalt",
    "s_wait_idle",
    "s_dcache_inv",
    "s_gl1_inv",
    "s_incperflevel",
    "s_decperflevel",
    "s_code_end",
    "s_round_mode_nop",
    "s_delay_alu",  # GFX11: a scheduling hint only (decision 0023)
}

HWREG_MODE, HWREG_FLAT_SCR_LO, HWREG_FLAT_SCR_HI = 1, 20, 21


def _bits(name: str) -> int:
    return 64 if name.endswith("64") else 32


def _t(bits, signed=False):
    return ("i" if signed else "u") + str(bits)


def _c(b, t, v):
    return b.const(t, v)


def _src(b, ins, field, t):
    return read_sreg(b, ins.fields[field], t, ins.literal)


def _nonzero(b, v):
    return b.cmp("ne", v.type, v, _c(b, v.type, 0))


def _shamt(b, v, bits):
    return b.bin("and", v.type, v, _c(b, v.type, bits - 1))


def _exec(b) -> Value:
    return read_sreg(b, EXEC_LO, "u64" if b.wave_size == 64 else "u32")


def _write_exec(b, v):
    if v.type == "u64":
        write_lanemask(b, EXEC_LO, v)
    else:
        b.sset(EXEC_LO, v)


_LOGIC = {
    "and": lambda b, t, x, y: b.bin("and", t, x, y),
    "or": lambda b, t, x, y: b.bin("or", t, x, y),
    "xor": lambda b, t, x, y: b.bin("xor", t, x, y),
    "andn2": lambda b, t, x, y: b.bin("and", t, x, b.un("not", t, y)),
    "orn2": lambda b, t, x, y: b.bin("or", t, x, b.un("not", t, y)),
    "andn1": lambda b, t, x, y: b.bin("and", t, b.un("not", t, x), y),
    "orn1": lambda b, t, x, y: b.bin("or", t, b.un("not", t, x), y),
    "nand": lambda b, t, x, y: b.un("not", t, b.bin("and", t, x, y)),
    "nor": lambda b, t, x, y: b.un("not", t, b.bin("or", t, x, y)),
    "xnor": lambda b, t, x, y: b.un("not", t, b.bin("xor", t, x, y)),
}


# ---------------------------------------------------------------------------------------- SOP2
def sop2(ins, b: Builder):
    n = ins.name
    base = n[2:].rsplit("_", 1)[0]
    bits = _bits(n)
    d = ins.fields["sdst"]
    if base in _LOGIC:
        t = _t(bits)
        r = _LOGIC[base](b, t, _src(b, ins, "ssrc0", t), _src(b, ins, "ssrc1", t))
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n in ("s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32"):
        x = b.cvt("u64", _src(b, ins, "ssrc0", "u32"))
        y = b.cvt("u64", _src(b, ins, "ssrc1", "u32"))
        op = "add" if "add" in n else "sub"
        r = b.bin(op, "u64", x, y)
        if n in ("s_addc_u32", "s_subb_u32"):
            r = b.bin(op, "u64", r, b.cvt("u64", b.sget(SCC)))
        write_sdst(b, d, b.lo32(r))
        set_scc(b, _nonzero(b, b.hi32(r)))
        return
    if n in ("s_add_i32", "s_sub_i32"):
        x = _src(b, ins, "ssrc0", "i32")
        y = _src(b, ins, "ssrc1", "i32")
        op = "add" if "add" in n else "sub"
        r = b.bin(op, "i32", x, y)
        rx = b.bin("xor", "i32", r, x)
        ov = b.bin("and", "i32", rx, b.bin("xor", "i32", r, y) if op == "add" else b.bin("xor", "i32", x, y))
        write_sdst(b, d, r)
        set_scc(b, b.cmp("lt", "i32", ov, _c(b, "i32", 0)))
        return
    if n.startswith("s_min_") or n.startswith("s_max_"):
        t = "i32" if n.endswith("i32") else "u32"
        x, y = _src(b, ins, "ssrc0", t), _src(b, ins, "ssrc1", t)
        c = b.cmp("lt" if n.startswith("s_min") else "gt", t, x, y)
        write_sdst(b, d, b.select(c, x, y))
        set_scc(b, c)
        return
    if n.startswith("s_cselect_"):
        t = _t(bits)
        c = _nonzero(b, b.sget(SCC))
        write_sdst(b, d, b.select(c, _src(b, ins, "ssrc0", t), _src(b, ins, "ssrc1", t)))
        return
    if n.startswith(("s_lshl_", "s_lshr_", "s_ashr_")):
        t = _t(bits, n.startswith("s_ashr"))
        x = _src(b, ins, "ssrc0", t)
        s = b.cvt(t, _shamt(b, _src(b, ins, "ssrc1", "u32"), bits))
        r = b.bin({"s_lshl": "shl", "s_lshr": "shr", "s_ashr": "sar"}[n[:6]], t, x, s)
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n in ("s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32"):
        k = int(n[6])
        x = b.cvt("u64", _src(b, ins, "ssrc0", "u32"))
        r = b.bin(
            "add", "u64", b.bin("shl", "u64", x, _c(b, "u64", k)), b.cvt("u64", _src(b, ins, "ssrc1", "u32"))
        )
        write_sdst(b, d, b.lo32(r))
        set_scc(b, b.cmp("gt", "u64", r, _c(b, "u64", 0xFFFFFFFF)))
        return
    if n in ("s_mul_i32",):
        write_sdst(b, d, b.bin("mul", "u32", _src(b, ins, "ssrc0", "u32"), _src(b, ins, "ssrc1", "u32")))
        return
    if n in ("s_mul_hi_u32", "s_mul_hi_i32"):
        t = "u32" if n.endswith("u32") else "i32"
        write_sdst(b, d, b.bin("mulhi", t, _src(b, ins, "ssrc0", t), _src(b, ins, "ssrc1", t)))
        return
    if n.startswith("s_bfm_"):
        t = _t(bits)
        w = b.cvt(t, b.bin("and", "u32", _src(b, ins, "ssrc0", "u32"), _c(b, "u32", bits - 1)))
        o = b.cvt(t, b.bin("and", "u32", _src(b, ins, "ssrc1", "u32"), _c(b, "u32", bits - 1)))
        m = b.bin("sub", t, b.bin("shl", t, _c(b, t, 1), w), _c(b, t, 1))
        write_sdst(b, d, b.bin("shl", t, m, o))
        return
    if n.startswith("s_bfe_"):
        signed = n[6] == "i"
        t = _t(bits, signed)
        x = _src(b, ins, "ssrc0", t)
        ctl = _src(b, ins, "ssrc1", "u32")
        off = b.bin("and", "u32", ctl, _c(b, "u32", bits - 1))
        width = b.bin("and", "u32", b.bin("shr", "u32", ctl, _c(b, "u32", 16)), _c(b, "u32", 0x7F))
        r = bitfield_extract(b, x, off, width, bits, signed)
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n == "s_absdiff_i32":
        x, y = _src(b, ins, "ssrc0", "i32"), _src(b, ins, "ssrc1", "i32")
        r = b.un("abs", "i32", b.bin("sub", "i32", x, y))
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n.startswith("s_pack_"):
        x, y = _src(b, ins, "ssrc0", "u32"), _src(b, ins, "ssrc1", "u32")
        h = lambda v: b.bin("shr", "u32", v, _c(b, "u32", 16))
        lo = lambda v: b.bin("and", "u32", v, _c(b, "u32", 0xFFFF))
        if n[7:9] not in ("ll", "lh", "hl", "hh"):
            unsupported()
        # the first letter picks S0's half for D[15:0], the second S1's for D[31:16] (GFX11 adds hl)
        a = h(x) if n[7] == "h" else lo(x)
        c = h(y) if n[8] == "h" else lo(y)
        write_sdst(b, d, b.bin("or", "u32", a, b.bin("shl", "u32", c, _c(b, "u32", 16))))
        return
    unsupported()


def bitfield_extract(b, x, off, width, bits, signed):
    """x[off +: width] (width 0 gives 0), sign-extended when ``signed``; off/width are u32."""
    t = x.type
    sh = b.cvt(t, off)
    v = b.bin("shr" if not signed else "sar", t, x, sh)
    w = b.bin("min", "u32", width, _c(b, "u32", bits))
    full = b.cmp("ge", "u32", w, _c(b, "u32", bits))
    wt = b.cvt(t, b.bin("and", "u32", w, _c(b, "u32", bits - 1)))
    if signed:
        left = b.bin("sub", "u32", _c(b, "u32", bits), w)
        left = b.cvt(t, b.bin("and", "u32", left, _c(b, "u32", bits - 1)))
        r = b.bin("sar", t, b.bin("shl", t, v, left), left)
        r = b.select(b.cmp("eq", "u32", w, _c(b, "u32", 0)), _c(b, t, 0), r)
    else:
        m = b.bin("sub", t, b.bin("shl", t, _c(b, t, 1), wt), _c(b, t, 1))
        r = b.select(full, v, b.bin("and", t, v, m))
    return r


# ---------------------------------------------------------------------------------------- SOP1
def sop1(ins, b: Builder):
    n = ins.name
    bits = _bits(n)
    t = _t(bits)
    d = ins.fields["sdst"]
    if (
        n.endswith("_saveexec_b32")
        or n.endswith("_saveexec_b64")
        or n.endswith("_wrexec_b32")
        or n.endswith("_wrexec_b64")
    ):
        op = n[2:].split("_")[0]
        x = _src(b, ins, "ssrc0", t)
        old = _exec(b)
        if n.endswith(("_wrexec_b32", "_wrexec_b64")):
            r = _LOGIC[op](b, t, x, old) if op == "andn1" else _LOGIC[op](b, t, old, x)
            # s_andn1_wrexec: EXEC = ~S0 & EXEC; s_andn2_wrexec: EXEC = S0 & ~EXEC
            r = _LOGIC["andn2"](b, t, x, old) if op == "andn2" else r
            _write_exec(b, r)
            write_sdst(b, d, r)
        else:
            # saveexec: D = EXEC; EXEC = op(S0, EXEC) (andn1/orn1: op(~S0, EXEC))
            if op in ("andn2", "orn2"):
                r = _LOGIC[op](b, t, x, old)
            elif op in ("andn1", "orn1"):
                r = _LOGIC["andn2" if op == "andn1" else "orn2"](b, t, old, x)
            else:
                r = _LOGIC[op](b, t, x, old)
            write_sdst(b, d, old)
            _write_exec(b, r)
        set_scc(b, _nonzero(b, r))
        return
    if n in ("s_mov_b32", "s_mov_b64"):
        write_sdst(b, d, _src(b, ins, "ssrc0", t))
        return
    if n in ("s_cmov_b32", "s_cmov_b64"):
        c = _nonzero(b, b.sget(SCC))
        write_sdst(b, d, b.select(c, _src(b, ins, "ssrc0", t), read_sreg(b, d, t)))
        return
    if n in ("s_not_b32", "s_not_b64"):
        r = b.un("not", t, _src(b, ins, "ssrc0", t))
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n in ("s_brev_b32", "s_brev_b64"):
        write_sdst(b, d, b.un("bitrev", t, _src(b, ins, "ssrc0", t)))
        return
    if n.startswith("s_bcnt"):
        x = _src(b, ins, "ssrc0", t)
        if n.startswith("s_bcnt0"):
            x = b.un("not", t, x)
        r = b.cvt("u32", b.un("popcount", t, x))
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n.startswith("s_ff0_") or n.startswith("s_ff1_"):
        x = _src(b, ins, "ssrc0", t)
        if n.startswith("s_ff0"):
            x = b.un("not", t, x)
        write_sdst(b, d, b.bitcast("u32", b.cvt("i32", b.un("ctz", t, x))))
        return
    if n.startswith("s_flbit_i32_b"):
        x = _src(b, ins, "ssrc0", t)
        write_sdst(b, d, b.bitcast("u32", b.cvt("i32", b.un("clz", t, x))))
        return
    if n in ("s_flbit_i32", "s_flbit_i32_i64"):
        st = "i64" if n.endswith("i64") else "i32"
        x = _src(b, ins, "ssrc0", st)
        neg = b.cmp("lt", st, x, _c(b, st, 0))
        y = b.bitcast(t, b.select(neg, b.un("not", st, x), x))
        # leading bits equal to the sign bit, the sign bit included (0x40000000 -> 1,
        # 0xfffffffe -> 31, as v_ffbh_i32); 0 and -1 give -1 (clz of 0 is -1)
        write_sdst(b, d, b.bitcast("u32", b.cvt("i32", b.un("clz", t, y))))
        return
    if n in ("s_sext_i32_i8", "s_sext_i32_i16"):
        st = "i8" if n.endswith("i8") else "i16"
        x = _src(b, ins, "ssrc0", "u32")
        write_sdst(b, d, b.bitcast("u32", b.cvt("i32", b.cvt(st, x))))
        return
    if n.startswith("s_bitset"):
        pos = b.cvt(t, b.bin("and", "u32", _src(b, ins, "ssrc0", "u32"), _c(b, "u32", bits - 1)))
        bit = b.bin("shl", t, _c(b, t, 1), pos)
        old = read_sreg(b, d, t)
        r = (
            b.bin("or", t, old, bit)
            if n.startswith("s_bitset1")
            else b.bin("and", t, old, b.un("not", t, bit))
        )
        write_sdst(b, d, r)
        return
    if n in ("s_wqm_b32", "s_wqm_b64", "s_quadmask_b32", "s_quadmask_b64"):
        # RDNA3 ISA guide: S_WQM sets all four bits of a quad (D[i] = S0[i&~3 +3 : i&~3] != 0),
        # S_QUADMASK gives one bit per quad (D[i] = S0[4i+3:4i] != 0); SCC = D != 0
        x = _src(b, ins, "ssrc0", t)
        ones = _c(b, t, int("1" * (bits // 4), 16))  # bit 0 of every quad
        q = x
        for k in (1, 2, 3):
            q = b.bin("or", t, q, b.bin("shr", t, x, _c(b, t, k)))
        q = b.bin("and", t, q, ones)  # bit 4i: quad i has a bit set
        if n.startswith("s_wqm"):
            r = b.bin("mul", t, q, _c(b, t, 0xF))
        else:
            r = _c(b, t, 0)
            for i in range(bits // 4):
                bit = b.bin("and", t, b.bin("shr", t, q, _c(b, t, 3 * i)), _c(b, t, 1 << i))
                r = b.bin("or", t, r, bit)
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n == "s_abs_i32":
        r = b.un("abs", "i32", _src(b, ins, "ssrc0", "i32"))
        write_sdst(b, d, r)
        set_scc(b, _nonzero(b, r))
        return
    if n == "s_getpc_b64":
        write_sdst(b, d, _c(b, "u64", b.base_address + ins.offset + ins.size))
        return
    if n == "s_setpc_b64":
        b.term = ("setpc", _src(b, ins, "ssrc0", "u64"))
        return
    if n == "s_swappc_b64":
        target = _src(b, ins, "ssrc0", "u64")
        write_sdst(b, d, _c(b, "u64", b.base_address + ins.offset + ins.size))
        b.term = ("setpc", target)
        return
    unsupported()


# ---------------------------------------------------------------------------------------- SOPK
_CMP = {"eq": "eq", "lg": "ne", "gt": "gt", "ge": "ge", "lt": "lt", "le": "le"}


def _simm(ins, signed=True):
    v = ins.fields["simm16"] & 0xFFFF
    return v - 0x10000 if signed and v & 0x8000 else v


def sopk(ins, b: Builder):
    n = ins.name
    d = ins.fields.get("sdst", 0)
    if n in ("s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_version"):
        return
    if n == "s_movk_i32":
        write_sdst(b, d, _c(b, "u32", _simm(ins) & 0xFFFFFFFF))
        return
    if n == "s_cmovk_i32":
        c = _nonzero(b, b.sget(SCC))
        write_sdst(b, d, b.select(c, _c(b, "u32", _simm(ins) & 0xFFFFFFFF), b.sget(d)))
        return
    if n.startswith("s_cmpk_"):
        cond, ty = n[7:].split("_")
        x = read_sreg(b, d, ty)
        y = _c(b, ty, _simm(ins, ty == "i32"))
        set_scc(b, b.cmp(_CMP[cond], ty, x, y))
        return
    if n == "s_addk_i32":
        x = b.bitcast("i32", b.sget(d))
        y = _c(b, "i32", _simm(ins))
        r = b.bin("add", "i32", x, y)
        ov = b.bin("and", "i32", b.bin("xor", "i32", r, x), b.bin("xor", "i32", r, y))
        write_sdst(b, d, r)
        set_scc(b, b.cmp("lt", "i32", ov, _c(b, "i32", 0)))
        return
    if n == "s_mulk_i32":
        write_sdst(b, d, b.bin("mul", "u32", b.sget(d), _c(b, "u32", _simm(ins) & 0xFFFFFFFF)))
        return
    if n == "s_call_b64":
        write_sdst(b, d, _c(b, "u64", b.base_address + ins.offset + ins.size))
        b.term = ("jump", ins.offset + 4 + 4 * _simm(ins))
        return
    if n in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        hw = ins.fields["simm16"]
        hid, off, size = hw & 0x3F, (hw >> 6) & 0x1F, ((hw >> 11) & 0x1F) + 1
        reg = {HWREG_MODE: MODE_REG, HWREG_FLAT_SCR_LO: FLAT_SCR_LO, HWREG_FLAT_SCR_HI: FLAT_SCR_HI}.get(hid)
        if reg in (FLAT_SCR_LO, FLAT_SCR_HI) and getattr(b, "target", "").startswith("gfx11"):
            # GFX11 sets FLAT_SCRATCH itself (architected flat scratch): no value is modelled
            unsupported("GFX11 FLAT_SCRATCH through s_getreg/s_setreg")
        if reg is None:
            unsupported(f"hardware register {hid}")
        mask = ((1 << size) - 1) if size < 32 else 0xFFFFFFFF
        if n == "s_getreg_b32":
            v = b.bin("and", "u32", b.bin("shr", "u32", b.sget(reg), _c(b, "u32", off)), _c(b, "u32", mask))
            write_sdst(b, d, v)
            return
        v = _c(b, "u32", ins.literal) if n == "s_setreg_imm32_b32" else b.sget(d)
        fm = (mask << off) & 0xFFFFFFFF
        new = b.bin(
            "or",
            "u32",
            b.bin("and", "u32", b.sget(reg), _c(b, "u32", ~fm & 0xFFFFFFFF)),
            b.bin("and", "u32", b.bin("shl", "u32", v, _c(b, "u32", off)), _c(b, "u32", fm)),
        )
        b.sset(reg, new)
        if reg == MODE_REG:
            b.term = ("mode", ins.offset + ins.size)
        return
    unsupported()


# ---------------------------------------------------------------------------------------- SOPC
def sopc(ins, b: Builder):
    n = ins.name
    if n.startswith("s_cmp_"):
        cond, ty = n[6:].split("_")
        x, y = _src(b, ins, "ssrc0", ty), _src(b, ins, "ssrc1", ty)
        set_scc(b, b.cmp(_CMP[cond], ty, x, y))
        return
    if n.startswith("s_bitcmp"):
        bits = _bits(n)
        t = _t(bits)
        x = _src(b, ins, "ssrc0", t)
        pos = b.cvt(t, b.bin("and", "u32", _src(b, ins, "ssrc1", "u32"), _c(b, "u32", bits - 1)))
        bit = b.bin("and", t, b.bin("shr", t, x, pos), _c(b, t, 1))
        set_scc(b, b.cmp("eq" if n.startswith("s_bitcmp0") else "ne", t, bit, _c(b, t, 0)))
        return
    unsupported()


# ---------------------------------------------------------------------------------------- SOPP
def sopp(ins, b: Builder):
    n = ins.name
    if n in NOPS:
        return
    if n == "s_endpgm":
        b.term = ("end",)
        return
    target = ins.offset + 4 + 4 * _simm(ins)
    if n == "s_branch":
        b.term = ("jump", target)
        return
    if n.startswith("s_cbranch_"):
        k = n[10:]
        if k in ("scc0", "scc1"):
            c = b.cmp("eq" if k == "scc0" else "ne", "u32", b.sget(SCC), _c(b, "u32", 0))
        elif k in ("vccz", "vccnz", "execz", "execnz"):
            lo, hi = (VCC_LO, VCC_HI) if k.startswith("vcc") else (EXEC_LO, EXEC_HI)
            m = b.sget(lo)
            if b.wave_size == 64:
                m = b.bin("or", "u32", m, b.sget(hi))
            c = b.cmp("eq" if k.endswith("z") and not k.endswith("nz") else "ne", "u32", m, _c(b, "u32", 0))
        else:
            unsupported()
        b.term = ("branch", c, target, ins.offset + ins.size)
        return
    if n == "s_barrier":
        b.term = ("barrier", ins.offset + ins.size)
        return
    if n in ("s_denorm_mode", "s_round_mode"):
        v = _simm(ins, False) & 0xF
        sh = 4 if n == "s_denorm_mode" else 0
        keep = ~(0xF << sh) & 0xFFFFFFFF
        b.sset(
            MODE_REG,
            b.bin(
                "or", "u32", b.bin("and", "u32", b.sget(MODE_REG), _c(b, "u32", keep)), _c(b, "u32", v << sh)
            ),
        )
        b.term = ("mode", ins.offset + ins.size)
        return
    unsupported()


HANDLERS = {"SOP1": sop1, "SOP2": sop2, "SOPK": sopk, "SOPC": sopc, "SOPP": sopp}
BLOCK_ENDERS = {
    "s_endpgm",
    "s_branch",
    "s_setpc_b64",
    "s_swappc_b64",
    "s_call_b64",
    "s_barrier",
    "s_denorm_mode",
    "s_round_mode",
    "s_setreg_b32",
    "s_setreg_imm32_b32",
}


def ends_block(ins) -> bool:
    return (
        ins.name in BLOCK_ENDERS
        or ins.name.startswith("s_cbranch_")
        and ins.name not in ("s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork")
    )


def branch_targets(ins) -> list[int]:
    n = ins.name
    if n in ("s_branch", "s_call_b64") or n.startswith("s_cbranch_"):
        return [ins.offset + 4 + 4 * _simm(ins)]
    return []


def falls_through(ins) -> bool:
    return ins.name not in ("s_endpgm", "s_branch", "s_setpc_b64", "s_code_end")
