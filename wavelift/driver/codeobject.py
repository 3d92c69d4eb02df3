"""AMDHSA code objects (v3-v6): ELF64 for EM_AMDGPU, kernel descriptors, metadata, loading.

What is read, and where it is defined (LLVM AMDGPUUsage.rst):
- ELF header: e_machine 224 (EM_AMDGPU), EI_OSABI 64 (ELFOSABI_AMDGPU_HSA), EI_ABIVERSION =
  code object version - 2 (1 = v3, 2 = v4, 3 = v5, 4 = v6); e_flags: EF_AMDGPU_MACH [7:0],
  v4+: XNACK [9:8] and SRAMECC [11:10] (0 unsupported, 1 any, 2 off, 3 on); v3: XNACK bit 8 and
  SRAMECC bit 9 as plain on/off.
- Symbols: each kernel is an STT_FUNC (its code) and an STT_OBJECT ``<name>.kd`` (its 64-byte
  kernel descriptor, amd-facts 5.1).  The entry point is ``kd address +
  kernel_code_entry_byte_offset``.
- The NT_AMDGPU_METADATA (32) note of owner "AMDGPU": a msgpack map with ``amdhsa.kernels``.

`CodeObject.load_image(base)` gives the bytes of every PT_LOAD segment placed at ``base``
(a load bias, as ROCr's loader applies it) with the dynamic relocations applied, so PC-relative
code (s_getpc_b64 + offset), calls between functions and relocated pointers all work.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
PT_LOAD, PT_NOTE = 1, 4
SHT_SYMTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 4, 7, 8, 9, 11
SHF_ALLOC = 2
STT_NOTYPE, STT_OBJECT, STT_FUNC = 0, 1, 2
NT_AMDGPU_METADATA = 32
MAX_IMAGE = 1 << 30  # largest loaded image (virtual address span) we accept

# R_AMDGPU_* relocation types (AMDGPUUsage "Relocation Records").
R_AMDGPU_NONE = 0
R_AMDGPU_ABS32_LO = 1
R_AMDGPU_ABS32_HI = 2
R_AMDGPU_ABS64 = 3
R_AMDGPU_REL32 = 4
R_AMDGPU_REL64 = 5
R_AMDGPU_ABS32 = 6
R_AMDGPU_REL32_LO = 10
R_AMDGPU_REL32_HI = 11
R_AMDGPU_RELATIVE64 = 13

# EF_AMDGPU_MACH values (AMDGPUUsage "AMDGPU EF_AMDGPU_MACH Values").
MACH: dict[int, str] = {
    0x20: "gfx600",
    0x21: "gfx601",
    0x22: "gfx700",
    0x23: "gfx701",
    0x24: "gfx702",
    0x25: "gfx703",
    0x26: "gfx704",
    0x28: "gfx801",
    0x29: "gfx802",
    0x2A: "gfx803",
    0x2B: "gfx810",
    0x2C: "gfx900",
    0x2D: "gfx902",
    0x2E: "gfx904",
    0x2F: "gfx906",
    0x30: "gfx908",
    0x31: "gfx909",
    0x32: "gfx90c",
    0x33: "gfx1010",
    0x34: "gfx1011",
    0x35: "gfx1012",
    0x36: "gfx1030",
    0x37: "gfx1031",
    0x38: "gfx1032",
    0x39: "gfx1033",
    0x3A: "gfx602",
    0x3B: "gfx705",
    0x3C: "gfx805",
    0x3D: "gfx1035",
    0x3E: "gfx1034",
    0x3F: "gfx90a",
    0x40: "gfx940",
    0x41: "gfx1100",
    0x42: "gfx1013",
    0x43: "gfx1150",
    0x44: "gfx1103",
    0x45: "gfx1036",
    0x46: "gfx1101",
    0x47: "gfx1102",
    0x48: "gfx1200",
    0x4A: "gfx1151",
    0x4B: "gfx941",
    0x4C: "gfx942",
    0x4E: "gfx1201",
    0x4F: "gfx950",
    0x55: "gfx1152",  # clang-19 -mcpu=gfx1152 writes it (tests/fixtures/gfx1152)
}
MACH_BY_NAME = {v: k for k, v in MACH.items()}
FEATURE_STATE = {0: "unsupported", 1: "any", 2: "off", 3: "on"}

# kernel_code_properties bits (AMDHSAKernelDescriptor.h; amd-facts 5.1).
KCP_PRIVATE_SEGMENT_BUFFER = 1 << 0
KCP_DISPATCH_PTR = 1 << 1
KCP_QUEUE_PTR = 1 << 2
KCP_KERNARG_SEGMENT_PTR = 1 << 3
KCP_DISPATCH_ID = 1 << 4
KCP_FLAT_SCRATCH_INIT = 1 << 5
KCP_PRIVATE_SEGMENT_SIZE = 1 << 6
KCP_WAVEFRONT_SIZE32 = 1 << 10
KCP_USES_DYNAMIC_STACK = 1 << 11


class CodeObjectError(UserError):
    """The file is not a usable AMDHSA code object; the message says why."""


@dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    address: int  # sh_addr (image-relative virtual address)
    offset: int  # sh_offset (file offset)
    size: int
    link: int
    info: int
    entsize: int

    @property
    def alloc(self) -> bool:
        return bool(self.flags & SHF_ALLOC)


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int  # image-relative virtual address for defined symbols
    size: int
    type: int  # STT_*
    bind: int  # STB_*
    visibility: int
    section_index: int
    table: str  # ".symtab" or ".dynsym"

    @property
    def defined(self) -> bool:
        return self.section_index != 0


@dataclass(frozen=True)
class Segment:
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int
    align: int


@dataclass(frozen=True)
class Relocation:
    offset: int  # image-relative address patched
    type: int
    symbol: Symbol | None
    addend: int


@dataclass(frozen=True)
class KernelDescriptor:
    """The 64-byte kernel descriptor (amd-facts 5.1; AMDHSAKernelDescriptor.h)."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int
    compute_pgm_rsrc3: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    kernel_code_properties: int
    kernarg_preload: int
    raw: bytes = field(repr=False, default=b"")

    SIZE = 64

    @classmethod
    def parse(cls, raw: bytes) -> KernelDescriptor:
        if len(raw) < 64:
            raise CodeObjectError(f"kernel descriptor truncated: {len(raw)} of 64 bytes")
        g, p, ka = struct.unpack_from("<III", raw, 0)
        (entry,) = struct.unpack_from("<q", raw, 16)
        r3, r1, r2 = struct.unpack_from("<III", raw, 44)
        kcp, preload = struct.unpack_from("<HH", raw, 56)
        return cls(g, p, ka, entry, r3, r1, r2, kcp, preload, bytes(raw[:64]))

    def _kcp(self, bit: int) -> bool:
        return bool(self.kernel_code_properties & bit)

    # kernel_code_properties
    @property
    def enable_sgpr_private_segment_buffer(self) -> bool:
        return self._kcp(KCP_PRIVATE_SEGMENT_BUFFER)

    @property
    def enable_sgpr_dispatch_ptr(self) -> bool:
        return self._kcp(KCP_DISPATCH_PTR)

    @property
    def enable_sgpr_queue_ptr(self) -> bool:
        return self._kcp(KCP_QUEUE_PTR)

    @property
    def enable_sgpr_kernarg_segment_ptr(self) -> bool:
        return self._kcp(KCP_KERNARG_SEGMENT_PTR)

    @property
    def enable_sgpr_dispatch_id(self) -> bool:
        return self._kcp(KCP_DISPATCH_ID)

    @property
    def enable_sgpr_flat_scratch_init(self) -> bool:
        return self._kcp(KCP_FLAT_SCRATCH_INIT)

    @property
    def enable_sgpr_private_segment_size(self) -> bool:
        return self._kcp(KCP_PRIVATE_SEGMENT_SIZE)

    @property
    def enable_wavefront_size32(self) -> bool:
        return self._kcp(KCP_WAVEFRONT_SIZE32)

    @property
    def uses_dynamic_stack(self) -> bool:
        return self._kcp(KCP_USES_DYNAMIC_STACK)

    @property
    def wave_size(self) -> int:
        return 32 if self.enable_wavefront_size32 else 64

    @property
    def kernarg_preload_length(self) -> int:
        return self.kernarg_preload & 0x7F

    @property
    def kernarg_preload_offset(self) -> int:
        return self.kernarg_preload >> 7

    # RSRC2 fields
    @property
    def user_sgpr_count(self) -> int:
        return (self.compute_pgm_rsrc2 >> 1) & 0x1F

    @property
    def scratch_en(self) -> bool:
        return bool(self.compute_pgm_rsrc2 & 1)

    @property
    def tgid_enabled(self) -> tuple[bool, bool, bool]:
        r = self.compute_pgm_rsrc2
        return bool(r >> 7 & 1), bool(r >> 8 & 1), bool(r >> 9 & 1)

    @property
    def tg_size_en(self) -> bool:
        return bool((self.compute_pgm_rsrc2 >> 10) & 1)

    @property
    def tidig_comp_cnt(self) -> int:
        return (self.compute_pgm_rsrc2 >> 11) & 3

    @property
    def lds_size_field(self) -> int:
        return (self.compute_pgm_rsrc2 >> 15) & 0x1FF

    def user_sgpr_layout(self) -> list[tuple[str, int, int]]:
        """(what, first SGPR, count) of every user SGPR this descriptor enables, in hardware
        order (AMDGPUUsage "SGPR Register Set Up Order"; amd-facts 5.2)."""
        out, n = [], 0
        for bit, what, cnt in (
            (KCP_PRIVATE_SEGMENT_BUFFER, "private_segment_buffer", 4),
            (KCP_DISPATCH_PTR, "dispatch_ptr", 2),
            (KCP_QUEUE_PTR, "queue_ptr", 2),
            (KCP_KERNARG_SEGMENT_PTR, "kernarg_segment_ptr", 2),
            (KCP_DISPATCH_ID, "dispatch_id", 2),
            (KCP_FLAT_SCRATCH_INIT, "flat_scratch_init", 2),
        ):
            if self._kcp(bit):
                out.append((what, n, cnt))
                n += cnt
        if self.kernarg_preload_length:
            out.append(("preloaded_kernargs", n, self.kernarg_preload_length))
            n += self.kernarg_preload_length
        if self._kcp(KCP_PRIVATE_SEGMENT_SIZE):
            out.append(("private_segment_size", n, 1))
            n += 1
        return out


@dataclass(frozen=True)
class KernelArg:
    """One entry of a kernel's ``.args`` metadata (explicit or hidden)."""

    offset: int
    size: int
    value_kind: str
    name: str = ""
    type_name: str = ""
    address_space: str = ""
    pointee_align: int = 0
    is_const: bool = False
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def hidden(self) -> bool:
        return self.value_kind.startswith("hidden_")


@dataclass(frozen=True)
class KernelInfo:
    name: str  # .name (source name)
    symbol: str  # .symbol (the .kd symbol)
    kd_address: int  # image-relative virtual address of the kernel descriptor
    code_address: int  # image-relative virtual address of the entry point
    kd: KernelDescriptor
    metadata: dict = field(repr=False, compare=False, default_factory=dict)
    code_symbol: str = ""  # the STT_FUNC at the entry point, if any
    code_offset: int = 0  # file offset of the entry point

    @property
    def args(self) -> list[KernelArg]:
        return list(self._args()[0])

    @property
    def explicit_args(self) -> list[KernelArg]:
        return list(self._args()[1])

    def _args(self) -> tuple[tuple[KernelArg, ...], tuple[KernelArg, ...]]:
        """(every argument, the explicit ones), parsed once per `.args` list object (a launch
        asks for them twice; KernelArg is frozen)."""
        raw = self.metadata.get(".args", [])
        memo = self.__dict__.get("_args_memo")
        if memo is None or memo[0] is not raw or memo[1] != len(raw):
            every = tuple(_arg(a) for a in raw)
            memo = (raw, len(raw), every, tuple(a for a in every if not a.hidden))
            object.__setattr__(self, "_args_memo", memo)  # (frozen: a cache, not a field)
        return memo[2], memo[3]

    @property
    def kernarg_segment_size(self) -> int:
        return int(self.metadata.get(".kernarg_segment_size", self.kd.kernarg_size))

    @property
    def kernarg_segment_align(self) -> int:
        return int(self.metadata.get(".kernarg_segment_align", 16))

    @property
    def group_segment_fixed_size(self) -> int:
        return int(self.metadata.get(".group_segment_fixed_size", self.kd.group_segment_fixed_size))

    @property
    def private_segment_fixed_size(self) -> int:
        return int(self.metadata.get(".private_segment_fixed_size", self.kd.private_segment_fixed_size))

    @property
    def wavefront_size(self) -> int:
        return self.kd.wave_size

    @property
    def sgpr_count(self) -> int | None:
        return self.metadata.get(".sgpr_count")

    @property
    def vgpr_count(self) -> int | None:
        return self.metadata.get(".vgpr_count")

    @property
    def uses_dynamic_stack(self) -> bool:
        return bool(self.metadata.get(".uses_dynamic_stack", self.kd.uses_dynamic_stack))


def _arg(a: dict) -> KernelArg:
    try:
        return KernelArg(
            offset=int(a[".offset"]),
            size=int(a[".size"]),
            value_kind=str(a[".value_kind"]),
            name=str(a.get(".name", "")),
            type_name=str(a.get(".type_name", "")),
            address_space=str(a.get(".address_space", "")),
            pointee_align=int(a.get(".pointee_align", 0)),
            is_const=bool(a.get(".is_const", False)),
            raw=a,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise CodeObjectError(f"kernel argument metadata without a usable {e}: {a!r}") from None


def _cstr(buf: bytes, off: int) -> str:
    if off >= len(buf):
        raise CodeObjectError("string table offset out of range")
    end = buf.find(b"\0", off)
    if end < 0:
        raise CodeObjectError("unterminated string in string table")
    return buf[off:end].decode("utf-8", "replace")


class CodeObject:
    """A parsed AMDHSA code object.  Construct with `CodeObject(data)` or `CodeObject.from_file`."""

    def __init__(self, data: bytes, path: str = ""):
        self.data = bytes(data)
        self.path = path
        self._parse_header()
        self._parse_sections()
        self._parse_segments()
        self._parse_symbols()
        self._parse_notes()
        self._parse_relocations()
        self._parse_kernels()

    @classmethod
    def from_file(cls, path) -> CodeObject:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise CodeObjectError(f"cannot read code object {path}: {e.strerror}") from None
        return cls(data, path=str(path))

    # ---- ELF structure ------------------------------------------------------------------
    def _need(self, off: int, n: int, what: str) -> None:
        if off < 0 or n < 0 or off + n > len(self.data):
            raise CodeObjectError(
                f"truncated code object: {what} at byte {off}+{n} lies past "
                f"the end of the file ({len(self.data)} bytes)"
            )

    def _parse_header(self) -> None:
        d = self.data
        if len(d) < 4 or d[:4] != b"\x7fELF":
            raise CodeObjectError("not an ELF file (no \\x7fELF magic)")
        self._need(0, 64, "ELF header")
        if d[4] != 2:
            raise CodeObjectError("not an AMDHSA code object: ELF class is not ELF64")
        if d[5] != 1:
            raise CodeObjectError("not an AMDHSA code object: not little-endian")
        self.osabi, self.abi_version = d[7], d[8]
        (
            self.e_type,
            self.e_machine,
            _ver,
            _entry,
            self.e_phoff,
            self.e_shoff,
            self.e_flags,
            _ehsize,
            self.e_phentsize,
            self.e_phnum,
            self.e_shentsize,
            self.e_shnum,
            self.e_shstrndx,
        ) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        if self.e_machine != EM_AMDGPU:
            raise CodeObjectError(
                f"wrong machine: e_machine {self.e_machine}, expected {EM_AMDGPU} (EM_AMDGPU)"
            )
        if self.osabi != ELFOSABI_AMDGPU_HSA:
            raise CodeObjectError(
                f"not an AMDHSA code object: EI_OSABI {self.osabi} "
                f"(expected {ELFOSABI_AMDGPU_HSA}, ELFOSABI_AMDGPU_HSA)"
            )
        if self.e_type == ET_REL:
            raise CodeObjectError(
                "relocatable object (ET_REL), not a linked code object: "
                "link it with ld.lld (clang does this unless -c is given)"
            )
        if self.e_type not in (ET_DYN, ET_EXEC):
            raise CodeObjectError(f"unsupported ELF type {self.e_type} (expected ET_DYN)")
        if not 1 <= self.abi_version <= 4:
            raise CodeObjectError(
                f"unsupported code object version: EI_ABIVERSION {self.abi_version} (v3-v6 are supported)"
            )
        self.version = self.abi_version + 2
        mach = self.e_flags & 0xFF
        if mach not in MACH:
            raise CodeObjectError(f"unknown EF_AMDGPU_MACH 0x{mach:02x}")
        self.mach = mach
        self.processor = MACH[mach]
        if self.version >= 4:
            self.xnack = FEATURE_STATE[(self.e_flags >> 8) & 3]
            self.sramecc = FEATURE_STATE[(self.e_flags >> 10) & 3]
        else:
            self.xnack = "on" if self.e_flags & 0x100 else "any"
            self.sramecc = "on" if self.e_flags & 0x200 else "any"

    @property
    def target(self) -> str:
        """The processor name, e.g. "gfx1030" (what wavelift.Device takes)."""
        return self.processor

    @property
    def target_id(self) -> str:
        """The full target id, e.g. "amdgcn-amd-amdhsa--gfx1010:xnack+"."""
        s = f"amdgcn-amd-amdhsa--{self.processor}"
        for feat, st in (("sramecc", self.sramecc), ("xnack", self.xnack)):
            if st in ("on", "off"):
                s += f":{feat}{'+' if st == 'on' else '-'}"
        return s

    def _parse_sections(self) -> None:
        self.sections: list[Section] = []
        if self.e_shoff == 0 or self.e_shnum == 0:
            return
        if self.e_shentsize != 64:
            raise CodeObjectError(f"bad section header size {self.e_shentsize}")
        self._need(self.e_shoff, 64 * self.e_shnum, "section headers")
        raw = []
        for i in range(self.e_shnum):
            raw.append(struct.unpack_from("<IIQQQQIIQQ", self.data, self.e_shoff + 64 * i))
        names = b""
        if self.e_shstrndx < len(raw):
            s = raw[self.e_shstrndx]
            self._need(s[4], s[5], "section name table")
            names = self.data[s[4] : s[4] + s[5]]
        for i, (nm, typ, flags, addr, off, size, link, info, _al, ent) in enumerate(raw):
            if typ != SHT_NOBITS and typ != 0:
                self._need(off, size, f"section {i}")
            name = _cstr(names, nm) if names else ""
            self.sections.append(Section(i, name, typ, flags, addr, off, size, link, info, ent))

    def section(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def section_data(self, sec: Section) -> bytes:
        if sec.type == SHT_NOBITS:
            return bytes(sec.size)
        return self.data[sec.offset : sec.offset + sec.size]

    @property
    def text(self) -> Section | None:
        return self.section(".text")

    @property
    def text_offset(self) -> int:
        """File offset of .text (for tools that disassemble the raw bytes)."""
        t = self.text
        if t is None:
            raise CodeObjectError("code object has no .text section")
        return t.offset

    @property
    def text_address(self) -> int:
        t = self.text
        if t is None:
            raise CodeObjectError("code object has no .text section")
        return t.address

    def _parse_segments(self) -> None:
        self.segments: list[Segment] = []
        if self.e_phnum == 0:
            return
        if self.e_phentsize != 56:
            raise CodeObjectError(f"bad program header size {self.e_phentsize}")
        self._need(self.e_phoff, 56 * self.e_phnum, "program headers")
        for i in range(self.e_phnum):
            typ, flags, off, vaddr, _pa, fsz, msz, align = struct.unpack_from(
                "<IIQQQQQQ", self.data, self.e_phoff + 56 * i
            )
            if typ == PT_LOAD:
                self._need(off, fsz, f"PT_LOAD segment {i}")
                if msz < fsz:
                    raise CodeObjectError(f"PT_LOAD segment {i} has p_memsz < p_filesz")
                if vaddr + msz > MAX_IMAGE:
                    raise CodeObjectError(
                        f"PT_LOAD segment {i} ends at 0x{vaddr + msz:x}, past "
                        f"the {MAX_IMAGE >> 20} MiB wavelift loads"
                    )
            self.segments.append(Segment(typ, flags, off, vaddr, fsz, msz, align))

    def _read_symtab(self, sec: Section) -> list[Symbol]:
        if sec.entsize not in (0, 24):
            raise CodeObjectError(f"bad symbol entry size in {sec.name}")
        if sec.link >= len(self.sections):
            raise CodeObjectError(f"{sec.name}: bad string table link")
        strs = self.section_data(self.sections[sec.link])
        out = []
        for i in range(sec.size // 24):
            nm, info, other, shndx, value, size = struct.unpack_from(
                "<IBBHQQ", self.data, sec.offset + 24 * i
            )
            out.append(
                Symbol(_cstr(strs, nm), value, size, info & 0xF, info >> 4, other & 3, shndx, sec.name)
            )
        return out

    def _parse_symbols(self) -> None:
        self.symbols: list[Symbol] = []
        self.dynsyms: list[Symbol] = []
        for s in self.sections:
            if s.type == SHT_SYMTAB:
                self.symbols += self._read_symtab(s)
            elif s.type == SHT_DYNSYM:
                self.dynsyms += self._read_symtab(s)
        if not self.symbols:  # stripped: .dynsym still names the kernels
            self.symbols = list(self.dynsyms)

    def symbol(self, name: str) -> Symbol | None:
        for s in self.symbols:
            if s.name == name and s.defined:
                return s
        for s in self.dynsyms:
            if s.name == name and s.defined:
                return s
        return None

    @property
    def functions(self) -> list[Symbol]:
        """Every defined STT_FUNC (kernels and called functions), by address."""
        seen, out = set(), []
        for s in sorted(self.symbols, key=lambda s: (s.value, s.name)):
            if s.type == STT_FUNC and s.defined and s.name not in seen:
                seen.add(s.name)
                out.append(s)
        return out

    def _parse_notes(self) -> None:
        self.metadata: dict[str, Any] = {}
        blobs = []
        notes = [s for s in self.sections if s.type == SHT_NOTE]
        if notes:
            blobs = [(s.offset, s.size) for s in notes]
        else:
            blobs = [(p.offset, p.filesz) for p in self.segments if p.type == PT_NOTE]
        for off, size in blobs:
            self._need(off, size, "note")
            pos, end = off, off + size
            while pos + 12 <= end:
                namesz, descsz, typ = struct.unpack_from("<III", self.data, pos)
                name_off = pos + 12
                desc_off = name_off + ((namesz + 3) & ~3)
                nxt = desc_off + ((descsz + 3) & ~3)
                if desc_off + descsz > end:
                    raise CodeObjectError("truncated note in code object")
                name = self.data[name_off : name_off + namesz].rstrip(b"\0")
                if name == b"AMDGPU" and typ == NT_AMDGPU_METADATA:
                    self.metadata = _unpack_metadata(self.data[desc_off : desc_off + descsz])
                pos = nxt
        if self.version >= 3 and not self.metadata:
            raise CodeObjectError("code object has no NT_AMDGPU_METADATA note")

    def _parse_relocations(self) -> None:
        self.relocations: list[Relocation] = []
        for s in self.sections:
            if s.type not in (SHT_RELA, SHT_REL) or not s.alloc:
                continue  # only dynamic relocations are applied at load time
            ent = 24 if s.type == SHT_RELA else 16
            symtab: list[Symbol] = []
            if s.link and s.link < len(self.sections):
                symtab = self._read_symtab(self.sections[s.link])
            for i in range(s.size // ent):
                if s.type == SHT_RELA:
                    off, info, addend = struct.unpack_from("<QQq", self.data, s.offset + ent * i)
                else:
                    off, info = struct.unpack_from("<QQ", self.data, s.offset + ent * i)
                    addend = None
                sym_idx, typ = info >> 32, info & 0xFFFFFFFF
                sym = None
                if sym_idx:
                    if sym_idx >= len(symtab):
                        raise CodeObjectError(f"relocation names symbol {sym_idx}, past the table")
                    sym = symtab[sym_idx]
                self.relocations.append(Relocation(off, typ, sym, addend))

    # ---- image ---------------------------------------------------------------------------
    @property
    def loads(self) -> list[Segment]:
        return [p for p in self.segments if p.type == PT_LOAD]

    @property
    def image_size(self) -> int:
        """Bytes from virtual address 0 to the end of the last PT_LOAD segment."""
        ls = self.loads
        if not ls:
            raise CodeObjectError("code object has no PT_LOAD segment")
        return max(p.vaddr + p.memsz for p in ls)

    @property
    def image_align(self) -> int:
        """The load base alignment: the largest p_align, at least 256 (code must be 256-byte
        aligned: COMPUTE_PGM_LO holds address bits [39:8])."""
        a = max([p.align for p in self.loads] + [256])
        return 1 << (a - 1).bit_length()

    def load_image(self, base: int) -> bytes:
        """The loaded image (virtual addresses 0..image_size) for a load base ``base``: file
        bytes of each PT_LOAD, zero fill beyond p_filesz (.bss), relocations applied."""
        img = bytearray(self.image_size)
        for p in self.loads:
            img[p.vaddr : p.vaddr + p.filesz] = self.data[p.offset : p.offset + p.filesz]
        for r in self.relocations:
            self._apply(img, r, base)
        return bytes(img)

    def _apply(self, img: bytearray, r: Relocation, base: int) -> None:
        if r.type == R_AMDGPU_NONE:
            return
        size = 8 if r.type in (R_AMDGPU_ABS64, R_AMDGPU_RELATIVE64, R_AMDGPU_REL64) else 4
        if r.offset + size > len(img):
            raise CodeObjectError(f"relocation at 0x{r.offset:x} lies outside the loaded image")
        fmt = "<Q" if size == 8 else "<I"
        a = r.addend if r.addend is not None else struct.unpack_from(fmt, img, r.offset)[0]
        if r.type == R_AMDGPU_RELATIVE64:
            v = base + a
        else:
            if r.symbol is None or not r.symbol.defined:
                nm = r.symbol.name if r.symbol else "?"
                raise CodeObjectError(
                    f"relocation against undefined symbol {nm!r}: the code "
                    f"object needs something a runtime library would provide"
                )
            s = base + r.symbol.value
            p = base + r.offset
            if r.type == R_AMDGPU_ABS64:
                v = s + a
            elif r.type == R_AMDGPU_ABS32_LO or r.type == R_AMDGPU_ABS32:
                v = s + a
            elif r.type == R_AMDGPU_ABS32_HI:
                v = (s + a) >> 32
            elif r.type in (R_AMDGPU_REL32, R_AMDGPU_REL64, R_AMDGPU_REL32_LO):
                v = s + a - p
            elif r.type == R_AMDGPU_REL32_HI:
                v = (s + a - p) >> 32
            else:
                raise CodeObjectError(f"unsupported dynamic relocation type {r.type} at 0x{r.offset:x}")
        struct.pack_into(fmt, img, r.offset, v & ((1 << (8 * size)) - 1))

    def read_image(self, address: int, n: int) -> bytes:
        """n bytes at image-relative virtual address ``address`` (before relocation)."""
        out = bytearray(n)
        covered = 0
        for p in self.loads:
            lo, hi = max(address, p.vaddr), min(address + n, p.vaddr + p.memsz)
            if lo >= hi:
                continue
            fhi = min(hi, p.vaddr + p.filesz)
            if fhi > lo:
                out[lo - address : fhi - address] = self.data[
                    p.offset + lo - p.vaddr : p.offset + fhi - p.vaddr
                ]
            covered += hi - lo
        if covered < n:
            raise CodeObjectError(f"address 0x{address:x}+{n} is not inside a loaded segment")
        return bytes(out)

    def file_offset(self, address: int) -> int | None:
        for p in self.loads:
            if p.vaddr <= address < p.vaddr + p.filesz:
                return p.offset + address - p.vaddr
        return None

    # ---- kernels -------------------------------------------------------------------------
    def _parse_kernels(self) -> None:
        self.kernels: list[KernelInfo] = []
        metas = self.metadata.get("amdhsa.kernels", []) if self.metadata else []
        if not isinstance(metas, list):
            raise CodeObjectError("amdhsa.kernels metadata is not a list")
        by_symbol = {}
        for m in metas:
            if not isinstance(m, dict) or ".symbol" not in m:
                raise CodeObjectError("kernel metadata without a .symbol")
            by_symbol[m[".symbol"]] = m
        kd_syms = [s for s in self.symbols if s.type == STT_OBJECT and s.defined and s.name.endswith(".kd")]
        names = [m[".symbol"] for m in metas] + [s.name for s in kd_syms if s.name not in by_symbol]
        funcs = {s.value: s.name for s in self.functions}
        for symname in names:
            sym = self.symbol(symname)
            if sym is None:
                raise CodeObjectError(f"kernel descriptor symbol {symname!r} is not defined")
            kd = KernelDescriptor.parse(self.read_image(sym.value, 64))
            entry = sym.value + kd.kernel_code_entry_byte_offset
            if entry % 256:
                raise CodeObjectError(f"kernel {symname}: entry point 0x{entry:x} is not 256-byte aligned")
            m = by_symbol.get(symname, {})
            name = str(m.get(".name", symname[:-3] if symname.endswith(".kd") else symname))
            off = self.file_offset(entry)
            self.kernels.append(
                KernelInfo(
                    name,
                    symname,
                    sym.value,
                    entry,
                    kd,
                    m,
                    funcs.get(entry, ""),
                    off if off is not None else -1,
                )
            )

    def kernel(self, name: str) -> KernelInfo:
        for k in self.kernels:
            if name in (k.name, k.symbol, k.code_symbol):
                return k
        have = ", ".join(k.name for k in self.kernels) or "none"
        raise CodeObjectError(f"no kernel {name!r} in the code object (kernels: {have})")

    def __repr__(self) -> str:
        return f"CodeObject({self.target_id}, v{self.version}, kernels={[k.name for k in self.kernels]})"


def _unpack_metadata(blob: bytes) -> dict:
    try:
        import msgpack
    except ImportError:  # pragma: no cover - msgpack is a declared dependency
        raise CodeObjectError("reading code object metadata needs the msgpack package") from None
    try:
        m = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except Exception as e:  # msgpack raises several types (ExtraData, FormatError, ValueError…)
        raise CodeObjectError(f"NT_AMDGPU_METADATA is not valid msgpack: {e}") from None
    if not isinstance(m, dict):
        raise CodeObjectError("NT_AMDGPU_METADATA is not a msgpack map")
    return m


def load(source) -> CodeObject:
    """A CodeObject from a path or from bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return CodeObject(bytes(source))
    return CodeObject.from_file(source)
