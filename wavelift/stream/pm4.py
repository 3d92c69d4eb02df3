"""PM4 packets: encoders (each returns list[int] of uint32 dwords, so `+` concatenates) and
decoders (one place that splits a dword buffer into packets and a packet body into fields).

Sources: /work/shared/reference/amd-facts.md §2 (Mesa `sid.h`, `pkt3.json`, `ac_parse_ib.c`,
`radv_cs.h`, `radv_cmd_buffer.c`). Packet size is COUNT+2 dwords, except the header-only NOP
0xFFFF1000 and the type-2 NOP 0x80000000 (1 dword each).

Registers are given by name (see registers.py), by byte address (e.g. 0xB848) or by dword offset
within the packet's register space (e.g. 0x212).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Refused
from . import registers as R

# --- opcodes ---------------------------------------------------------------------------------
NOP = 0x10
SET_BASE = 0x11
CLEAR_STATE = 0x12
INDEX_BUFFER_SIZE = 0x13
DISPATCH_DIRECT = 0x15
DISPATCH_INDIRECT = 0x16
SET_PREDICATION = 0x20
COND_EXEC = 0x22
PRED_EXEC = 0x23
DRAW_INDIRECT = 0x24
DRAW_INDEX_INDIRECT = 0x25
INDEX_BASE = 0x26
DRAW_INDEX_2 = 0x27
CONTEXT_CONTROL = 0x28
INDEX_TYPE = 0x2A
DRAW_INDIRECT_MULTI = 0x2C
DRAW_INDEX_AUTO = 0x2D
NUM_INSTANCES = 0x2F
DRAW_INDEX_MULTI_AUTO = 0x30
INDIRECT_BUFFER_CONST = 0x33
STRMOUT_BUFFER_UPDATE = 0x34
DRAW_INDEX_OFFSET_2 = 0x35
WRITE_DATA = 0x37
DRAW_INDEX_INDIRECT_MULTI = 0x38
MEM_SEMAPHORE = 0x39
WAIT_REG_MEM = 0x3C
INDIRECT_BUFFER = 0x3F
COPY_DATA = 0x40
CP_DMA = 0x41
PFP_SYNC_ME = 0x42
SURFACE_SYNC = 0x43
COND_WRITE = 0x45
EVENT_WRITE = 0x46
EVENT_WRITE_EOP = 0x47
RELEASE_MEM = 0x49
DMA_DATA = 0x50
ACQUIRE_MEM = 0x58
LOAD_SH_REG_INDEX = 0x63
SET_CONFIG_REG = 0x68
SET_CONTEXT_REG = 0x69
SET_SH_REG = 0x76
SET_SH_REG_OFFSET = 0x77
SET_UCONFIG_REG = 0x79
SET_UCONFIG_REG_INDEX = 0x7A
INCREMENT_CE_COUNTER = 0x84
INCREMENT_DE_COUNTER = 0x85
WAIT_ON_CE_COUNTER = 0x86
SET_SH_REG_INDEX = 0x9B

OPCODE_NAMES = {
    v: k
    for k, v in dict(globals()).items()
    if k.isupper() and isinstance(v, int) and 0 <= v <= 0xFF and not k.startswith("_")
}

NOP_PAD = 0xFFFF1000  # PKT3(NOP, 0x3FFF, 0): header-only, 1 dword
TYPE2_NOP = 0x80000000  # PKT2_NOP_PAD: 1 dword

# register space of each SET_*_REG opcode
SET_REG_SPACE = {
    SET_SH_REG: "SH",
    SET_SH_REG_INDEX: "SH",
    SET_CONTEXT_REG: "CONTEXT",
    SET_CONFIG_REG: "CONFIG",
    SET_UCONFIG_REG: "UCONFIG",
    SET_UCONFIG_REG_INDEX: "UCONFIG",
}

# COPY_DATA selects
COPY_SRC_REG, COPY_SRC_MEM, COPY_SRC_TC_L2, COPY_SRC_GDS, COPY_SRC_PERF, COPY_SRC_IMM = 0, 1, 2, 3, 4, 5
COPY_SRC_TIMESTAMP = 9
COPY_DST_REG, COPY_DST_MEM_GRBM, COPY_DST_TC_L2, COPY_DST_GDS, COPY_DST_PERF, COPY_DST_MEM = 0, 1, 2, 3, 4, 5
# WRITE_DATA DST_SEL
WRITE_DST_REG, WRITE_DST_MEM_GRBM, WRITE_DST_TC_L2, WRITE_DST_GDS, WRITE_DST_MEM = 0, 1, 2, 3, 5
# DMA_DATA selects
DMA_SRC_ADDR, DMA_SRC_GDS, DMA_SRC_DATA, DMA_SRC_ADDR_TC_L2 = 0, 1, 2, 3
DMA_DST_ADDR, DMA_DST_GDS, DMA_DST_NOWHERE, DMA_DST_ADDR_TC_L2 = 0, 1, 2, 3
# RELEASE_MEM DATA_SEL
DATA_SEL_DISCARD, DATA_SEL_32, DATA_SEL_64, DATA_SEL_TIMESTAMP, DATA_SEL_GDS = 0, 1, 2, 3, 5
# EVENT_TYPE values (gfx103.json VGT_EVENT_TYPE)
CACHE_FLUSH_TS, CACHE_FLUSH, CS_PARTIAL_FLUSH = 4, 6, 7
CACHE_FLUSH_AND_INV_TS_EVENT, BOTTOM_OF_PIPE_TS, CS_DONE = 20, 40, 47
# WAIT_REG_MEM functions
WAIT_ALWAYS, WAIT_LT, WAIT_LE, WAIT_EQ, WAIT_NE, WAIT_GE, WAIT_GT = 0, 1, 2, 3, 4, 5, 6

MAX_COUNT = 0x3FFF

# DISPATCH_INITIATOR bits
INIT_COMPUTE_SHADER_EN = 1 << 0
INIT_PARTIAL_TG_EN = 1 << 1
INIT_FORCE_START_AT_000 = 1 << 2
INIT_USE_THREAD_DIMENSIONS = 1 << 5
INIT_ORDER_MODE = 1 << 6
INIT_TUNNEL_ENABLE = 1 << 13
INIT_CS_W32_EN = 1 << 15


def initiator(
    wave32: bool = False,
    force_start_at_000: bool = True,
    partial_tg: bool = False,
    use_thread_dimensions: bool = False,
    order_mode: bool = True,
    tunnel: bool = False,
) -> int:
    """A COMPUTE_DISPATCH_INITIATOR value (COMPUTE_SHADER_EN always set)."""
    return (
        INIT_COMPUTE_SHADER_EN
        | (INIT_CS_W32_EN if wave32 else 0)
        | (INIT_FORCE_START_AT_000 if force_start_at_000 else 0)
        | (INIT_PARTIAL_TG_EN if partial_tg else 0)
        | (INIT_USE_THREAD_DIMENSIONS if use_thread_dimensions else 0)
        | (INIT_ORDER_MODE if order_mode else 0)
        | (INIT_TUNNEL_ENABLE if tunnel else 0)
    )


DEFAULT_INITIATOR = initiator()  # 0x45: wave64, start at 0


# --- encoders --------------------------------------------------------------------------------
def _u32(v) -> int:
    v = int(v)
    if not -(1 << 31) <= v < (1 << 32):
        raise ValueError(f"{v:#x} does not fit in 32 bits")
    return v & 0xFFFFFFFF


def header(opcode: int, count: int, predicate: int = 0, shader_type: int = 0) -> int:
    if not 0 <= count <= MAX_COUNT:
        raise ValueError(f"PM4 COUNT {count} out of range")
    return (3 << 30) | (count << 16) | ((opcode & 0xFF) << 8) | ((shader_type & 1) << 1) | (predicate & 1)


def packet(opcode: int, body, predicate: int = 0, shader_type: int = 0) -> list[int]:
    body = [_u32(x) for x in body]
    if not body:
        raise ValueError("a type-3 packet has at least one body dword")
    if len(body) - 1 >= MAX_COUNT:
        raise ValueError(f"body of {len(body)} dwords is too long for one packet")
    return [header(opcode, len(body) - 1, predicate, shader_type)] + body


def _lo_hi(address: int) -> list[int]:
    a = int(address) & ((1 << 64) - 1)
    return [a & 0xFFFFFFFF, a >> 32]


def _set_reg(opcode, space, reg, values, index=0, **kw) -> list[int]:
    if not values:
        raise ValueError("SET_*_REG needs at least one value")
    addr = R.address_of(reg, space)
    base, size = R.SPACES[space]
    off = (addr - base) >> 2
    if addr + 4 * len(values) > base + size:
        raise ValueError(f"{len(values)} registers from 0x{addr:x} leave the {space} space")
    return packet(opcode, [off | ((index & 0xF) << 28)] + list(values), **kw)


def set_sh_reg(reg, *values, predicate=0) -> list[int]:
    return _set_reg(SET_SH_REG, "SH", reg, values, predicate=predicate)


def set_sh_reg_index(reg, *values, index=3, predicate=0) -> list[int]:
    return _set_reg(SET_SH_REG_INDEX, "SH", reg, values, index, predicate=predicate)


def set_context_reg(reg, *values) -> list[int]:
    return _set_reg(SET_CONTEXT_REG, "CONTEXT", reg, values)


def set_config_reg(reg, *values) -> list[int]:
    return _set_reg(SET_CONFIG_REG, "CONFIG", reg, values)


def set_uconfig_reg(reg, *values) -> list[int]:
    return _set_reg(SET_UCONFIG_REG, "UCONFIG", reg, values)


def set_uconfig_reg_index(reg, *values, index=0) -> list[int]:
    return _set_reg(SET_UCONFIG_REG_INDEX, "UCONFIG", reg, values, index)


def set_sh_regs(regs: dict) -> list[int]:
    """SET_SH_REG packets for {name_or_address: value}, runs of consecutive registers merged."""
    items = sorted((R.address_of(k, "SH"), _u32(v)) for k, v in regs.items())
    out, i = [], 0
    while i < len(items):
        j = i + 1
        while j < len(items) and items[j][0] == items[j - 1][0] + 4:
            j += 1
        out += set_sh_reg(items[i][0], *[v for _, v in items[i:j]])
        i = j
    return out


def set_base(base_index: int, address: int) -> list[int]:
    """SET_BASE; base_index 1 = INDIRECT_BASE (the base of DISPATCH_INDIRECT's data_offset)."""
    return packet(SET_BASE, [base_index & 0xF] + _lo_hi(address))


def dispatch_direct(
    x: int, y: int = 1, z: int = 1, initiator: int = DEFAULT_INITIATOR, predicate: int = 0
) -> list[int]:
    return packet(DISPATCH_DIRECT, [x, y, z, initiator], predicate, shader_type=1)


def dispatch_indirect(
    data_offset: int = 0,
    initiator: int = DEFAULT_INITIATOR,
    *,
    address: int | None = None,
    predicate: int = 0,
) -> list[int]:
    """DISPATCH_INDIRECT. Without `address`: the GFX-queue form RADV emits (COUNT=1:
    data_offset relative to SET_BASE index 1, initiator). With `address`: the compute-queue form
    (COUNT=2: address lo, hi, initiator). The 12 bytes there hold x, y, z."""
    if address is not None:
        return packet(DISPATCH_INDIRECT, _lo_hi(address) + [initiator], predicate, shader_type=1)
    return packet(DISPATCH_INDIRECT, [data_offset, initiator], predicate, shader_type=1)


def load_sh_reg_index(address: int, reg, count: int) -> list[int]:
    """LOAD_SH_REG_INDEX as RADV emits it on GFX10.3+ (indirect grid size into user SGPRs):
    va_lo, va_hi, SH dword offset, number of dwords."""
    off = (R.address_of(reg, "SH") - R.SH_BASE) >> 2
    if int(address) & 3:
        raise ValueError("LOAD_SH_REG_INDEX address must be 4-byte aligned")
    return packet(LOAD_SH_REG_INDEX, _lo_hi(address) + [off, count], shader_type=1)


def indirect_buffer(
    address: int, size_dw: int, chain: bool = False, vmid: int = 0, valid: bool | None = None
) -> list[int]:
    """INDIRECT_BUFFER: a call (returns) or, with chain=True, a jump (CHAIN|VALID as RADV does)."""
    if int(address) & 3:
        raise ValueError("IB address must be 4-byte aligned")
    if not 0 <= size_dw <= 0xFFFFF:
        raise ValueError(f"IB size {size_dw} dwords does not fit in 20 bits")
    valid = chain if valid is None else valid
    ctl = size_dw | (int(chain) << 20) | (int(valid) << 23) | ((vmid & 0xF) << 24)
    return packet(INDIRECT_BUFFER, _lo_hi(address) + [ctl])


def nop(n: int = 2) -> list[int]:
    """Filler of exactly n dwords: n == 1 is the header-only NOP 0xFFFF1000, otherwise one
    type-3 NOP with n-1 ignored body dwords."""
    if n == 1:
        return [NOP_PAD]
    if not 2 <= n <= MAX_COUNT + 1:
        raise ValueError(f"nop({n}): one NOP packet is 1..{MAX_COUNT + 1} dwords")
    return [header(NOP, n - 2)] + [0] * (n - 1)


def nop_pad() -> list[int]:
    return [NOP_PAD]


def type2_nop() -> list[int]:
    return [TYPE2_NOP]


def write_data(
    address: int,
    *values,
    dst_sel: int = WRITE_DST_MEM,
    wr_confirm: bool = True,
    one_addr: bool = False,
    engine: int = 0,
) -> list[int]:
    """WRITE_DATA of `values` to memory (or, with dst_sel=0, to register dword address)."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = tuple(values[0])
    if not values:
        raise ValueError("WRITE_DATA needs at least one dword")
    ctl = (dst_sel & 0xF) << 8 | int(one_addr) << 16 | int(wr_confirm) << 20 | (engine & 3) << 30
    return packet(WRITE_DATA, [ctl] + _lo_hi(address) + list(values))


def copy_data(
    src_sel: int,
    src: int,
    dst_sel: int,
    dst: int,
    *,
    count64: bool = False,
    wr_confirm: bool = True,
    engine: int = 0,
) -> list[int]:
    """COPY_DATA: src/dst are addresses, register dword addresses, or (COPY_SRC_IMM) the value."""
    ctl = (
        (src_sel & 0xF)
        | (dst_sel & 0xF) << 8
        | int(count64) << 16
        | int(wr_confirm) << 20
        | (engine & 1) << 30
    )
    return packet(COPY_DATA, [ctl] + _lo_hi(src) + _lo_hi(dst))


def dma_data(
    src: int,
    dst: int,
    byte_count: int,
    *,
    src_sel: int = DMA_SRC_ADDR_TC_L2,
    dst_sel: int = DMA_DST_ADDR_TC_L2,
    cp_sync: bool = True,
    raw_wait: bool = False,
    disable_wr_confirm: bool = False,
    engine: int = 0,
) -> list[int]:
    """DMA_DATA (GFX9+ form). With src_sel=DMA_SRC_DATA, `src` is the 32-bit fill value."""
    if not 0 <= byte_count < (1 << 26):
        raise ValueError("DMA_DATA BYTE_COUNT is 26 bits")
    w0 = (engine & 1) | (dst_sel & 3) << 20 | (src_sel & 3) << 29 | int(cp_sync) << 31
    cmd = byte_count | int(raw_wait) << 30 | int(disable_wr_confirm) << 31
    return packet(DMA_DATA, [w0] + _lo_hi(src) + _lo_hi(dst) + [cmd])


def release_mem(
    address: int = 0,
    data: int = 0,
    *,
    event_type: int = BOTTOM_OF_PIPE_TS,
    event_index: int = 5,
    data_sel: int = DATA_SEL_32,
    dst_sel: int = 0,
    int_sel: int = 0,
    cache_bits: int = 0,
    ctxid: int = 0,
) -> list[int]:
    """RELEASE_MEM (GFX9+, COUNT=6): at end of pipe, write `data` (32/64-bit) to `address`."""
    op = (event_type & 0x3F) | (event_index & 0xF) << 8 | (cache_bits & ~0xFFF & 0xFFFFFFFF)
    sel = (dst_sel & 3) << 16 | (int_sel & 7) << 24 | (data_sel & 7) << 29
    d = int(data) & ((1 << 64) - 1)
    return packet(RELEASE_MEM, [op, sel] + _lo_hi(address) + [d & 0xFFFFFFFF, d >> 32, ctxid])


def acquire_mem(
    coher_cntl: int = 0,
    size: int = 0xFFFFFFFF_FFFFFFFF,
    base: int = 0,
    poll_interval: int = 0x0A,
    gcr_cntl: int = 0,
) -> list[int]:
    """ACQUIRE_MEM (GFX10+ form, COUNT=6): a cache operation; nothing for an emulator to do."""
    size_units = (int(size) >> 8) & ((1 << 56) - 1)  # COHER_SIZE is in 256-byte units
    b = int(base) >> 8
    return packet(
        ACQUIRE_MEM,
        [
            coher_cntl,
            size_units & 0xFFFFFFFF,
            (size_units >> 32) & 0xFF,
            b & 0xFFFFFFFF,
            (b >> 32) & 0xFFFFFF,
            poll_interval,
            gcr_cntl,
        ],
    )


def event_write(
    event_type: int, event_index: int | None = None, address: int | None = None, inv_l2: bool = False
) -> list[int]:
    if event_index is None:
        event_index = 4 if event_type == CS_PARTIAL_FLUSH else 0
    w0 = (event_type & 0x3F) | (event_index & 0xF) << 8 | int(inv_l2) << 20
    return packet(EVENT_WRITE, [w0] + ([] if address is None else _lo_hi(address)))


def wait_reg_mem(
    address: int,
    reference: int,
    mask: int = 0xFFFFFFFF,
    function: int = WAIT_EQ,
    mem_space: int = 1,
    engine: int = 0,
    poll_interval: int = 4,
) -> list[int]:
    """WAIT_REG_MEM: wait until (mem & mask) <function> reference (mem_space 0: a register)."""
    w0 = (function & 7) | (mem_space & 3) << 4 | (engine & 1) << 8
    return packet(WAIT_REG_MEM, [w0] + _lo_hi(address) + [reference, mask, poll_interval])


def context_control(load: int = 0x80000000, shadow: int = 0x80000000) -> list[int]:
    return packet(CONTEXT_CONTROL, [load, shadow])


def clear_state() -> list[int]:
    return packet(CLEAR_STATE, [0])


def pfp_sync_me() -> list[int]:
    return packet(PFP_SYNC_ME, [0])


def set_predication(op: int = 0, address: int = 0, continue_: bool = False) -> list[int]:
    """SET_PREDICATION (GFX9+ form): dw0 [18:16] PRED_OP (0 = clear), address lo/hi."""
    return packet(SET_PREDICATION, [(op & 7) << 16 | int(continue_) << 31] + _lo_hi(address))


# --- decoders --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Packet:
    offset: int  # dword index of the header within its buffer
    header: int
    type: int  # 2 or 3
    opcode: int | None  # type-3 only
    body: tuple  # body dwords (empty for 1-dword packets)
    predicate: int = 0
    shader_type: int = 0

    @property
    def size(self) -> int:
        return 1 + len(self.body) if self.type == 3 and self.header != NOP_PAD else 1

    @property
    def name(self) -> str:
        if self.type == 2:
            return "TYPE2_NOP"
        if self.header == NOP_PAD:
            return "NOP"
        assert self.opcode is not None  # every type-3 packet carries one
        return OPCODE_NAMES.get(self.opcode, f"OP_0x{self.opcode:02X}")

    def fields(self) -> dict:
        if self.type != 3:
            return {}
        assert self.opcode is not None
        return decode_body(self.opcode, self.body)


def opcode_name(op: int) -> str:
    return OPCODE_NAMES.get(op, f"OP_0x{op:02X}")


def read_packet(dw, i: int, where: str = "") -> Packet:
    """The packet whose header is dw[i]. Raises Refused (stream.bad_packet_type,
    stream.truncated) naming the dword offset."""
    n = len(dw)
    h = int(dw[i])
    typ = h >> 30
    if typ == 2:
        return Packet(i, h, 2, None, ())
    if typ != 3:
        raise Refused("stream.bad_packet_type", f"{where}dword {i}: header 0x{h:08x} is a type-{typ} packet")
    op, cnt = (h >> 8) & 0xFF, (h >> 16) & 0x3FFF
    if op == NOP and cnt == MAX_COUNT:
        return Packet(i, h, 3, op, ())
    if i + cnt + 2 > n:
        raise Refused(
            "stream.truncated",
            f"{where}dword {i}: {opcode_name(op)} needs {cnt + 2} dwords but the buffer has {n - i} left",
        )
    body = dw[i + 1 : i + cnt + 2]  # (tolist: C speed; a stream may be 16 Mi dwords)
    body = tuple(body.tolist()) if hasattr(body, "tolist") else tuple(int(x) for x in body)
    return Packet(i, h, 3, op, body, h & 1, (h >> 1) & 1)


def decode(dwords) -> list[Packet]:
    """Split a buffer into packets (does not follow INDIRECT_BUFFER)."""
    out, i = [], 0
    while i < len(dwords):
        p = read_packet(dwords, i)
        out.append(p)
        i += p.size
    return out


def _addr(lo: int, hi: int) -> int:
    from ..memory.guest import canonical

    return canonical(lo | (hi << 32))


def _need(name, body, *sizes):
    if len(body) not in sizes:
        want = " or ".join(str(s - 1) for s in sizes)
        raise Refused("stream.malformed", f"{name} with COUNT={len(body) - 1}; it must be {want}")


def decode_body(op: int, body) -> dict:
    """Fields of a type-3 packet body, by name. Raises Refused(stream.malformed) when the body
    has the wrong size for its opcode. Unknown opcodes give {}."""
    b = [int(x) for x in body]
    name = opcode_name(op)
    if op in SET_REG_SPACE:
        space = SET_REG_SPACE[op]
        if len(b) < 2:
            raise Refused("stream.malformed", f"{name} without register values")
        base, size = R.SPACES[space]
        off = b[0] & 0xFFFF
        if 4 * (off + len(b) - 1) > size:
            raise Refused(
                "stream.malformed",
                f"{name} writes {len(b) - 1} registers from offset 0x{off:x}, past the "
                f"end of the {space} register space",
            )
        return dict(space=space, address=base + 4 * off, offset=off, index=b[0] >> 28, values=tuple(b[1:]))
    if op == SET_BASE:
        _need(name, b, 3)
        return dict(base_index=b[0] & 0xF, address=_addr(b[1], b[2]))
    if op == DISPATCH_DIRECT:
        _need(name, b, 4)
        return dict(x=b[0], y=b[1], z=b[2], initiator=b[3])
    if op == DISPATCH_INDIRECT:
        _need(name, b, 2, 3)
        if len(b) == 2:
            return dict(data_offset=b[0], initiator=b[1], address=None)
        return dict(data_offset=None, address=_addr(b[0], b[1]), initiator=b[2])
    if op == LOAD_SH_REG_INDEX:
        _need(name, b, 4)
        return dict(
            address=_addr(b[0] & ~3, b[1]),
            index=b[0] & 3,
            reg_offset=b[2] & 0xFFFF,
            address_reg=R.SH_BASE + 4 * (b[2] & 0xFFFF),
            data_format=b[2] >> 31,
            count=b[3] & 0x3FFF,
        )
    if op == INDIRECT_BUFFER:
        _need(name, b, 3)
        return dict(
            address=_addr(b[0] & ~3, b[1] & 0xFFFF),
            low_bits=b[0] & 3,
            size_dw=b[2] & 0xFFFFF,
            chain=bool(b[2] >> 20 & 1),
            valid=bool(b[2] >> 23 & 1),
            vmid=b[2] >> 24 & 0xF,
        )
    if op == WRITE_DATA:
        if len(b) < 4:
            raise Refused("stream.malformed", f"WRITE_DATA with COUNT={len(b) - 1}: no data dwords")
        return dict(
            dst_sel=b[0] >> 8 & 0xF,
            one_addr=bool(b[0] >> 16 & 1),
            wr_confirm=bool(b[0] >> 20 & 1),
            engine=b[0] >> 30,
            dst_lo=b[1],
            dst_hi=b[2],
            address=_addr(b[1], b[2]),
            values=tuple(b[3:]),
        )
    if op == COPY_DATA:
        _need(name, b, 5)
        return dict(
            src_sel=b[0] & 0xF,
            dst_sel=b[0] >> 8 & 0xF,
            count64=bool(b[0] >> 16 & 1),
            wr_confirm=bool(b[0] >> 20 & 1),
            engine=b[0] >> 30 & 1,
            src=b[1] | b[2] << 32,
            dst=b[3] | b[4] << 32,
        )
    if op == DMA_DATA:
        _need(name, b, 6)
        return dict(
            engine=b[0] & 1,
            dst_sel=b[0] >> 20 & 3,
            src_sel=b[0] >> 29 & 3,
            cp_sync=bool(b[0] >> 31),
            src=b[1] | b[2] << 32,
            dst=b[3] | b[4] << 32,
            byte_count=b[5] & 0x3FFFFFF,
            sas=b[5] >> 26 & 1,
            das=b[5] >> 27 & 1,
            saic=b[5] >> 28 & 1,
            daic=b[5] >> 29 & 1,
            raw_wait=bool(b[5] >> 30 & 1),
            disable_wr_confirm=bool(b[5] >> 31),
        )
    if op == RELEASE_MEM:
        _need(name, b, 7)
        return dict(
            event_type=b[0] & 0x3F,
            event_index=b[0] >> 8 & 0xF,
            cache_bits=b[0] & ~0xFFF,
            dst_sel=b[1] >> 16 & 3,
            int_sel=b[1] >> 24 & 7,
            data_sel=b[1] >> 29 & 7,
            address=_addr(b[2], b[3]),
            addr_lo=b[2],
            data=b[4] | b[5] << 32,
            ctxid=b[6],
        )
    if op == ACQUIRE_MEM:
        _need(name, b, 6, 7)
        return dict(coher_cntl=b[0], body=tuple(b))
    if op == EVENT_WRITE:
        _need(name, b, 1, 3)
        return dict(
            event_type=b[0] & 0x3F,
            event_index=b[0] >> 8 & 0xF,
            inv_l2=bool(b[0] >> 20 & 1),
            address=_addr(b[1], b[2]) if len(b) == 3 else None,
        )
    if op == WAIT_REG_MEM:
        _need(name, b, 6)
        return dict(
            function=b[0] & 7,
            mem_space=b[0] >> 4 & 3,
            engine=b[0] >> 8 & 1,
            address=_addr(b[1], b[2]),
            addr_lo=b[1],
            reference=b[3],
            mask=b[4],
            poll_interval=b[5],
        )
    if op == SET_PREDICATION:
        _need(name, b, 3)
        return dict(op=b[0] >> 16 & 7, continue_=bool(b[0] >> 31), address=_addr(b[1], b[2]))
    if op == CONTEXT_CONTROL:
        _need(name, b, 2)
        return dict(load=b[0], shadow=b[1])
    if op in (NOP, CLEAR_STATE, PFP_SYNC_ME):
        return {}
    return {}
