"""The PM4 stream walker: runs packets in order against guest memory and a register file.

- Type-3 packets are COUNT+2 dwords; 0xFFFF1000 (header-only NOP) and type-2 packets are 1 dword.
- INDIRECT_BUFFER without CHAIN is a call (depth-limited); with CHAIN it replaces the current
  buffer (a jump). An IB reached again while it is still being walked (call recursion, or a
  chain coming back) is a loop: refused.
- Bounded work (docs/decisions/0015-bounded-work.md): a StreamLimits, shared by every stream of
  one capture's replay, counts the dwords copied (every call and chain hop copies its whole IB;
  LOAD_SH_REG_INDEX its registers' dwords) and the packets walked (`stream.budget`), the bytes
  DMA_DATA copies or fills (`stream.dma_budget`), the dispatches and the instructions they ran
  (`stream.dispatch_budget`); each is checked before the work.
- Every refusal stops the stream and names the packet and its dword offset; what ran before
  stays, nothing after runs. The walker writes guest memory only where a packet names it
  (WRITE_DATA, COPY_DATA, DMA_DATA, RELEASE_MEM) and never waits: an unmet WAIT_REG_MEM is
  refused (`stream.wait_unmet`).
- DISPATCH_DIRECT / DISPATCH_INDIRECT write COMPUTE_DIM_* and COMPUTE_DISPATCH_INITIATOR (as the
  CP does) and call `on_dispatch(DispatchEvent)` synchronously, so later packets see the
  dispatch's results.

Graphics-state packets RADV 22.3 emits on the GFX queue and that carry nothing for compute are
skipped: CONTEXT_CONTROL, CLEAR_STATE, PFP_SYNC_ME, SET_CONTEXT_REG / SET_CONFIG_REG /
SET_UCONFIG_REG(_INDEX) (recorded in the register file), SET_PREDICATION (remembered: a later
predicated packet is refused while a predicate is set), INCREMENT_CE/DE_COUNTER,
WAIT_ON_CE_COUNTER (constant-engine sync, no CE here), ACQUIRE_MEM and EVENT_WRITE without an
address (caches and pipeline events).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import Refused
from ..memory.guest import GuestMemory, GuestMemoryError, canonical
from . import pm4
from . import registers as R

MAX_IB_DEPTH = 4  # IB1 -> IB2 is all hardware has; a little more is tolerated
MAX_IB_DWORDS = 0xFFFFF  # IB_SIZE is 20 bits
# per capture (all its streams; one stream walked alone is a capture of one):
MAX_STREAM_DWORDS = 1 << 24  # dwords copied (16 Mi = 64 MiB of PM4): bounds fan-out and chains
MAX_PACKETS = 1 << 20  # packets walked (~3-8 us each: a 1-dword NOP_PAD costs one too)
MAX_DMA_BYTES = 1 << 30  # bytes DMA_DATA copies or fills (one packet: BYTE_COUNT, < 64 MiB)
MAX_DISPATCHES = 1 << 12  # dispatches started (~1-10 ms of set-up each, whatever they run)
MAX_INSTRUCTIONS = 1 << 32  # instructions the dispatches ran (no dispatch starts past it)


@dataclass
class StreamLimits:
    """What one capture's streams may do in all, and what they have done (replay shares one
    between its walkers, so a stream list naming one IB a million times is bounded too)."""

    dwords: int = MAX_STREAM_DWORDS
    packets: int = MAX_PACKETS
    dma_bytes: int = MAX_DMA_BYTES
    dispatches: int = MAX_DISPATCHES
    instructions: int = MAX_INSTRUCTIONS
    used_dwords: int = 0
    used_packets: int = 0
    used_dma_bytes: int = 0
    used_dispatches: int = 0
    used_instructions: int = 0  # (replay adds each dispatch's count)


@dataclass
class DispatchEvent:
    kind: str  # "direct" | "indirect"
    dims: tuple[int, int, int]  # DIM_X/Y/Z as the packet (or indirect buffer) gave them
    initiator: int
    regs: R.RegisterFile  # the live register file (valid during the callback)
    ib_address: int  # where the packet is
    offset: int  # its dword offset in that IB
    indirect_address: int | None = None


@dataclass
class WalkStats:
    packets: int = 0
    dwords: int = 0
    dispatches: int = 0
    ibs: int = 0
    skipped: dict = field(default_factory=dict)  # packet name -> count (skipped packets)


class _Frame:
    __slots__ = ("address", "size", "dw", "i")

    def __init__(self, address, size, dw):
        self.address, self.size, self.dw, self.i = address, size, dw, 0


_WAIT_OPS = {
    0: lambda v, r: True,
    1: lambda v, r: v < r,
    2: lambda v, r: v <= r,
    3: lambda v, r: v == r,
    4: lambda v, r: v != r,
    5: lambda v, r: v >= r,
    6: lambda v, r: v > r,
}

_SKIP = {
    pm4.CONTEXT_CONTROL,
    pm4.CLEAR_STATE,
    pm4.PFP_SYNC_ME,
    pm4.INCREMENT_CE_COUNTER,
    pm4.INCREMENT_DE_COUNTER,
    pm4.WAIT_ON_CE_COUNTER,
}


class StreamWalker:
    """Walks one stream. `on_dispatch(event)` is called for each dispatch; `on_packet(ib_address,
    packet)` (optional) before each packet runs; `timestamp` gives RELEASE_MEM/COPY_DATA
    timestamps (a deterministic counter)."""

    def __init__(
        self,
        memory: GuestMemory,
        regs: R.RegisterFile,
        on_dispatch: Callable[[DispatchEvent], None] | None = None,
        on_packet: Callable | None = None,
        max_depth: int = MAX_IB_DEPTH,
        max_dwords: int = MAX_STREAM_DWORDS,
        limits: StreamLimits | None = None,
    ):
        self.memory, self.regs = memory, regs
        self.on_dispatch, self.on_packet = on_dispatch, on_packet
        self.max_depth = max_depth
        self.limits = StreamLimits(dwords=max_dwords) if limits is None else limits
        self.bases: dict[int, int] = {}
        self.predicate_set = False
        self.stats = WalkStats()
        self._clock = 0
        self._where = (0, 0)

    # --- helpers ----------------------------------------------------------------------------
    def _timestamp(self) -> int:
        self._clock += 1
        return self._clock

    def _load_ib(self, address: int, size: int, where: str) -> np.ndarray:
        if address & 3:
            raise Refused("stream.malformed", f"{where}IB address 0x{address:016x} is not 4-byte aligned")
        if size > MAX_IB_DWORDS:
            raise Refused("stream.malformed", f"{where}IB of {size} dwords (IB_SIZE is 20 bits)")
        self._copying(size, f"{where}copying the IB's")
        try:
            # a copy: the CP fetches the IB; packets that later write into it do not change it
            return self.memory.read_dwords(address, size)
        except GuestMemoryError as e:
            raise Refused(
                "stream.bad_address", f"{where}IB [0x{address:016x}, +{size} dwords): {e}"
            ) from None

    def _copying(self, n: int, what: str):
        """Charge ``n`` dwords about to be copied to the capture's limit (stream.budget)."""
        lim = self.limits
        if lim.used_dwords + n > lim.dwords:
            raise Refused(
                "stream.budget", f"{what} {n} dwords pass the limit of {lim.dwords} dwords copied per capture"
            )
        lim.used_dwords += n

    def _mem(self, fn, *args, what=""):
        try:
            return fn(*args)
        except GuestMemoryError as e:
            raise Refused("stream.bad_address", f"{what}: {e}") from None

    # --- walking ----------------------------------------------------------------------------
    def walk(self, address: int, size_dw: int) -> WalkStats:
        address = canonical(address)
        stack: list[_Frame] = []
        active: list[set] = []  # per frame: the IBs of its chain walked so far
        where = f"IB 0x{address:016x}: "
        stack.append(_Frame(address, size_dw, self._load_ib(address, size_dw, where)))
        active.append({(address, size_dw)})
        self.stats.ibs += 1
        while stack:
            f = stack[-1]
            if f.i >= len(f.dw):
                stack.pop()
                active.pop()
                continue
            loc = f"IB 0x{f.address:016x} dword {f.i}: "
            p = pm4.read_packet(f.dw, f.i, f"IB 0x{f.address:016x} ")
            self._where = (f.address, f.i)
            f.i += p.size
            self.stats.packets += 1
            self.limits.used_packets += 1
            if self.limits.used_packets > self.limits.packets:
                raise Refused(
                    "stream.budget",
                    f"{loc}the capture's streams walked more than {self.limits.packets} packets",
                )
            self.stats.dwords += p.size  # (within the IBs copied: bounded by stream.budget)
            if self.on_packet is not None:
                self.on_packet(f.address, p)
            if p.type == 2 or p.header == pm4.NOP_PAD or p.opcode == pm4.NOP:
                continue
            try:
                jump = self._run(p, loc)
            except Refused as e:
                if e.refusal.message.startswith("IB 0x"):
                    raise
                raise Refused(e.refusal.code, f"{loc}{p.name}: {e.refusal.message}") from None
            if jump is None:
                continue
            target, size, chain = jump
            key = (target, size)
            if any(key in s for s in active):
                raise Refused(
                    "stream.ib_loop",
                    f"{loc}INDIRECT_BUFFER to 0x{target:016x} (+{size} dwords) comes back "
                    f"to an IB that is still being walked",
                )
            dw = self._load_ib(target, size, loc + "INDIRECT_BUFFER: ")
            self.stats.ibs += 1
            if chain:
                stack[-1] = _Frame(target, size, dw)
                active[-1].add(key)
            else:
                if len(stack) >= self.max_depth:
                    raise Refused(
                        "stream.ib_depth", f"{loc}INDIRECT_BUFFER call nests deeper than {self.max_depth} IBs"
                    )
                stack.append(_Frame(target, size, dw))
                active.append({key})
        return self.stats

    def _run(self, p: pm4.Packet, loc: str):
        op = p.opcode
        if op not in _HANDLED:
            raise Refused(
                "stream.unknown_opcode",
                f"{loc}type-3 opcode 0x{op:02X} ({p.name}) with {len(p.body)} body dwords",
            )
        if p.predicate and self.predicate_set and op not in _SKIP:
            raise Refused(
                "stream.unsupported",
                f"{loc}{p.name} is predicated on a SET_PREDICATION condition, which "
                f"the walker does not evaluate",
            )
        if op in _SKIP:
            self.stats.skipped[p.name] = self.stats.skipped.get(p.name, 0) + 1
            return None
        f = pm4.decode_body(op, p.body)
        if op in pm4.SET_REG_SPACE:
            for k, v in enumerate(f["values"]):
                self.regs.write(f["address"] + 4 * k, v)
        elif op == pm4.INDIRECT_BUFFER:
            if f["low_bits"]:
                raise Refused("stream.malformed", "IB_BASE_LO bits [1:0] are not zero")
            if f["size_dw"] == 0:
                return None
            return f["address"], f["size_dw"], f["chain"]
        elif op == pm4.SET_BASE:
            self.bases[f["base_index"]] = f["address"]
        elif op == pm4.DISPATCH_DIRECT:
            self._dispatch("direct", (f["x"], f["y"], f["z"]), f["initiator"], loc, None)
        elif op == pm4.DISPATCH_INDIRECT:
            if f["address"] is None:
                if 1 not in self.bases:
                    raise Refused(
                        "stream.malformed", "data_offset form without a SET_BASE of INDIRECT_BASE (index 1)"
                    )
                addr = canonical(self.bases[1] + f["data_offset"])
            else:
                addr = f["address"]
            if addr & 3:
                raise Refused("stream.malformed", f"dispatch dimensions at unaligned 0x{addr:016x}")
            dims = self._mem(self.memory.read_dwords, addr, 3, what=f"dimensions at 0x{addr:016x}")
            self._dispatch("indirect", tuple(int(x) for x in dims), f["initiator"], loc, addr)
        elif op == pm4.LOAD_SH_REG_INDEX:
            if f["index"] != 0 or f["data_format"] != 0:
                raise Refused(
                    "stream.unsupported",
                    f"index mode {f['index']} / data format {f['data_format']} "
                    f"(only direct address, offset+count is carried out)",
                )
            n = f["count"]
            if 4 * (f["reg_offset"] + n) > R.SPACES["SH"][1]:
                raise Refused("stream.malformed", "loads past the end of the SH register space")
            self._copying(n, "loading")
            vals = self._mem(
                self.memory.read_dwords, f["address"], n, what=f"{n} dwords at 0x{f['address']:016x}"
            )
            for k, v in enumerate(vals):
                self.regs.write(f["address_reg"] + 4 * k, int(v))
        elif op == pm4.WRITE_DATA:
            self._write_data(f)
        elif op == pm4.COPY_DATA:
            self._copy_data(f)
        elif op == pm4.DMA_DATA:
            self._dma_data(f)
        elif op == pm4.RELEASE_MEM:
            self._release_mem(f)
        elif op == pm4.ACQUIRE_MEM:
            pass
        elif op == pm4.EVENT_WRITE:
            if f["address"] is not None:
                raise Refused(
                    "stream.unsupported",
                    f"EVENT_WRITE {f['event_type']} with an address (a query sample) is not carried out",
                )
        elif op == pm4.WAIT_REG_MEM:
            self._wait_reg_mem(f)
        elif op == pm4.SET_PREDICATION:
            self.predicate_set = f["op"] != 0
        return None

    def _dispatch(self, kind, dims, initiator, loc, indirect_address):
        for k, v in enumerate(dims):
            self.regs.write(0xB804 + 4 * k, v)
        self.regs.write(0xB800, initiator)
        lim = self.limits
        if lim.used_dispatches >= lim.dispatches or lim.used_instructions >= lim.instructions:
            raise Refused(
                "stream.dispatch_budget",
                f"the capture has started {lim.used_dispatches} dispatches running "
                f"{lim.used_instructions} instructions (limits: {lim.dispatches} "
                f"dispatches, {lim.instructions} instructions)",
            )
        lim.used_dispatches += 1
        self.stats.dispatches += 1
        if self.on_dispatch is not None:
            ib, off = self._where
            self.on_dispatch(
                DispatchEvent(kind, tuple(dims), initiator, self.regs, ib, off, indirect_address)
            )

    # --- memory-writing packets -------------------------------------------------------------
    def _dst_mem(self, address: int, nbytes: int, what: str) -> np.ndarray:
        if address & 3:
            raise Refused("stream.malformed", f"{what} destination 0x{address:016x} is not 4-byte aligned")
        return self._mem(self.memory.view, address, nbytes, what=f"{what} destination")

    def _write_data(self, f):
        sel, vals = f["dst_sel"], f["values"]
        if sel == pm4.WRITE_DST_REG:
            reg = (f["dst_lo"] & 0x3FFFF) << 2
            for k, v in enumerate(vals):
                self.regs.write(reg if f["one_addr"] else reg + 4 * k, v)
            return
        if sel not in (pm4.WRITE_DST_MEM_GRBM, pm4.WRITE_DST_TC_L2, pm4.WRITE_DST_MEM):
            raise Refused("stream.unsupported", f"DST_SEL {sel} (only memory and registers)")
        if f["one_addr"]:
            self._dst_mem(f["address"], 4, "WRITE_DATA").view("<u4")[0] = vals[-1]
        else:
            self._dst_mem(f["address"], 4 * len(vals), "WRITE_DATA").view("<u4")[:] = vals

    def _copy_data(self, f):
        n = 2 if f["count64"] else 1
        src_sel, dst_sel = f["src_sel"], f["dst_sel"]
        if src_sel == pm4.COPY_SRC_IMM:
            data = [f["src"] & 0xFFFFFFFF, f["src"] >> 32][:n]
        elif src_sel in (pm4.COPY_SRC_MEM, pm4.COPY_SRC_TC_L2):
            src = canonical(f["src"])
            if src & 3:
                raise Refused("stream.malformed", f"source 0x{src:016x} is not 4-byte aligned")
            data = [int(x) for x in self._mem(self.memory.read_dwords, src, n, what=f"source 0x{src:016x}")]
        elif src_sel == pm4.COPY_SRC_REG:
            reg = (f["src"] & 0x3FFFF) << 2
            data = [self.regs.get(reg + 4 * k, 0) for k in range(n)]
        elif src_sel == pm4.COPY_SRC_TIMESTAMP:
            t = self._timestamp()
            data = [t & 0xFFFFFFFF, t >> 32][:n]
        else:
            raise Refused("stream.unsupported", f"SRC_SEL {src_sel} (GDS/perf counters)")
        if dst_sel == pm4.COPY_DST_REG:
            reg = (f["dst"] & 0x3FFFF) << 2
            for k, v in enumerate(data):
                self.regs.write(reg + 4 * k, v)
        elif dst_sel in (pm4.COPY_DST_MEM_GRBM, pm4.COPY_DST_TC_L2, pm4.COPY_DST_MEM):
            self._dst_mem(canonical(f["dst"]), 4 * n, "COPY_DATA").view("<u4")[:] = data
        else:
            raise Refused("stream.unsupported", f"DST_SEL {dst_sel} (GDS/perf counters)")

    def _dma_data(self, f):
        if f["sas"] or f["das"] or f["saic"] or f["daic"]:
            raise Refused("stream.unsupported", "register address spaces / no-increment modes")
        n = f["byte_count"]
        lim = self.limits
        if lim.used_dma_bytes + n > lim.dma_bytes:
            raise Refused(
                "stream.dma_budget", f"{n} bytes pass the limit of {lim.dma_bytes} DMA_DATA bytes per capture"
            )
        lim.used_dma_bytes += n
        src_sel, dst_sel = f["src_sel"], f["dst_sel"]
        if src_sel == pm4.DMA_SRC_GDS or dst_sel == pm4.DMA_DST_GDS:
            raise Refused("stream.unsupported", "GDS source or destination")
        if src_sel == pm4.DMA_SRC_DATA:
            if n % 4:
                raise Refused("stream.malformed", f"fill of {n} bytes is not whole dwords")
            fill = f["src"] & 0xFFFFFFFF
            if dst_sel == pm4.DMA_DST_NOWHERE or n == 0:
                return
            self._dst_mem(canonical(f["dst"]), n, "DMA_DATA").view("<u4")[:] = fill
            return
        src = canonical(f["src"])
        if n == 0:
            return
        s = self._mem(self.memory.view, src, n, what=f"DMA_DATA source 0x{src:016x}")
        if dst_sel == pm4.DMA_DST_NOWHERE:  # prefetch: the source must exist, nothing written
            return
        dst = canonical(f["dst"])
        d = self._mem(self.memory.view, dst, n, what=f"DMA_DATA destination 0x{dst:016x}")
        if src != dst:
            d[:] = s.copy() if np.shares_memory(s, d) else s

    def _release_mem(self, f):
        sel = f["data_sel"]
        if sel == pm4.DATA_SEL_DISCARD:
            return
        if f["dst_sel"] not in (0, 1):
            raise Refused("stream.unsupported", f"DST_SEL {f['dst_sel']}")
        if sel == pm4.DATA_SEL_32:
            self._dst_mem(f["address"], 4, "RELEASE_MEM").view("<u4")[0] = f["data"] & 0xFFFFFFFF
        elif sel in (pm4.DATA_SEL_64, pm4.DATA_SEL_TIMESTAMP):
            v = f["data"] if sel == pm4.DATA_SEL_64 else self._timestamp()
            if f["address"] & 7:
                raise Refused(
                    "stream.malformed", f"64-bit write to 0x{f['address']:016x} is not 8-byte aligned"
                )
            self._dst_mem(f["address"], 8, "RELEASE_MEM").view("<u8")[0] = v
        else:
            raise Refused("stream.unsupported", f"DATA_SEL {sel} (GDS or reserved)")

    def _wait_reg_mem(self, f):
        fn = f["function"]
        if fn not in _WAIT_OPS:
            raise Refused("stream.malformed", f"WAIT_REG_MEM function {fn} is reserved")
        if f["mem_space"] == 1:
            a = f["address"]
            if a & 3:
                raise Refused("stream.malformed", f"address 0x{a:016x} is not 4-byte aligned")
            v = self._mem(self.memory.read_u32, a, what=f"WAIT_REG_MEM address 0x{a:016x}")
            what = f"memory at 0x{a:016x}"
        elif f["mem_space"] == 0:
            reg = (f["addr_lo"] & 0x3FFFF) << 2
            v = self.regs.get(reg, 0)
            what = f"register {R.name_of(reg)}"
        else:
            raise Refused("stream.malformed", f"WAIT_REG_MEM MEM_SPACE {f['mem_space']} is reserved")
        if not _WAIT_OPS[fn](v & f["mask"], f["reference"]):
            raise Refused(
                "stream.wait_unmet",
                f"WAIT_REG_MEM waits for ({what} = 0x{v:08x}) & 0x{f['mask']:08x} "
                f"{['always', '<', '<=', '==', '!=', '>=', '>'][fn]} 0x{f['reference']:08x}, "
                f"which does not hold and nothing else can change it",
            )


_HANDLED = (
    set(pm4.SET_REG_SPACE)
    | _SKIP
    | {
        pm4.NOP,
        pm4.INDIRECT_BUFFER,
        pm4.SET_BASE,
        pm4.DISPATCH_DIRECT,
        pm4.DISPATCH_INDIRECT,
        pm4.LOAD_SH_REG_INDEX,
        pm4.WRITE_DATA,
        pm4.COPY_DATA,
        pm4.DMA_DATA,
        pm4.RELEASE_MEM,
        pm4.ACQUIRE_MEM,
        pm4.EVENT_WRITE,
        pm4.WAIT_REG_MEM,
        pm4.SET_PREDICATION,
    }
)


def walk(
    memory: GuestMemory, regs: R.RegisterFile, address: int, size_dw: int, on_dispatch=None, **kw
) -> WalkStats:
    """Walk one stream (an IB in guest memory). Raises Refused on a bad packet."""
    return StreamWalker(memory, regs, on_dispatch, **kw).walk(address, size_dw)
