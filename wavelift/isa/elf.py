"""Minimal read-only ELF64 reader for AMDHSA code objects: sections, symbols, e_flags.

Small on purpose (the driver's code-object loader is the full one); used by `wavelift disasm`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

EF_AMDGPU_MACH = 0xFF
MACH_TO_TARGET = {0x33: "gfx1010", 0x36: "gfx1030"}


class ElfError(ValueError):
    pass


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    addr: int
    offset: int
    size: int


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: int      # STT_*
    shndx: int


class Elf:
    def __init__(self, data: bytes):
        if data[:4] != b"\x7fELF" or len(data) < 64:
            raise ElfError("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            raise ElfError("not a little-endian ELF64 file")
        self.data = data
        (self.e_type, self.e_machine, _, _, _, shoff, self.e_flags, _, _, _, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        if shoff + shnum * shentsize > len(data):
            raise ElfError("section headers run past the end of the file")
        raw = []
        for i in range(shnum):
            raw.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
        strtab = raw[shstrndx] if shstrndx < len(raw) else None
        self.sections = []
        for r in raw:
            name = self._str(strtab[4], strtab[5], r[0]) if strtab else ""
            self.sections.append(Section(name, r[1], r[3], r[4], r[5]))
        self._raw = raw

    def _str(self, off, size, idx):
        if idx >= size:
            return ""
        end = self.data.find(b"\0", off + idx, off + size)
        return self.data[off + idx:end if end >= 0 else off + size].decode("utf-8", "replace")

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def section_bytes(self, s: Section) -> bytes:
        if s.offset + s.size > len(self.data):
            raise ElfError(f"section {s.name} runs past the end of the file")
        return self.data[s.offset:s.offset + s.size]

    def symbols(self):
        out = []
        for i, r in enumerate(self._raw):
            if r[1] != 2:          # SHT_SYMTAB
                continue
            link = self._raw[r[6]]
            off, size, ent = r[4], r[5], r[9] or 24
            for k in range(1, size // ent):
                nm, info, _, shndx, value, sz = struct.unpack_from("<IBBHQQ", self.data, off + k * ent)
                out.append(Symbol(self._str(link[4], link[5], nm), value, sz, info & 0xF, shndx))
        return out

    @property
    def target(self):
        return MACH_TO_TARGET.get(self.e_flags & EF_AMDGPU_MACH)

    def read_addr(self, addr, n):
        for s in self.sections:
            if s.type != 8 and s.addr <= addr and addr + n <= s.addr + s.size and s.size:
                o = s.offset + addr - s.addr
                return self.data[o:o + n]
        return None
