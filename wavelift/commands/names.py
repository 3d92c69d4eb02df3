"""Kernel names for program addresses, as info and trace show them: `vadd (code:x.hsaco+0x2200)`.

Two sources, both guest data (untrusted: text output passes every name through `shown`):
- code objects loaded in guest memory: an allocation that starts with an AMDGPU ELF header is a
  loaded image (wavelift.Device.load_code_object); its dynamic symbol table names the kernels
  (`NAME.kd` descriptors, whose entry is the descriptor's address + kernel_code_entry_byte_offset)
  and the functions (STT_FUNC). The image has no section headers (they are not loaded), so the
  table is found through PT_DYNAMIC, as a runtime loader finds it;
- the capture's notes: `"programs": {"0x<address>": "name", ...}` (docs/report-schema.md), for
  captures whose code is not an ELF image (RADV, ACO shaders).

Reading the image is bounded: at most MAX_IMAGE bytes of an allocation, every offset checked
against them, at most MAX_SYMBOLS symbols of MAX_NAME bytes each per code object; anything
malformed gives no names.
"""

from __future__ import annotations

import struct

MAX_SYMBOLS = 4096
MAX_NAME = 256
MAX_IMAGE = 64 << 20  # bytes of an allocation read as an image (code objects are smaller)
_EM_AMDGPU = 224
_PT_DYNAMIC = 2
_DT_HASH, _DT_STRTAB, _DT_SYMTAB, _DT_STRSZ, _DT_SYMENT, _DT_GNU_HASH = 4, 5, 6, 10, 11, 0x6FFFFEF5
_STT_OBJECT, _STT_FUNC = 1, 2
_KD_SIZE = 64


class _Bad(Exception):
    pass


def _u(fmt: str, img: bytes, off: int):
    if off < 0 or off + struct.calcsize(fmt) > len(img):
        raise _Bad
    return struct.unpack_from(fmt, img, off)


def _cstr(img: bytes, off: int, end: int) -> str:
    if not 0 <= off < end:
        raise _Bad
    stop = img.find(b"\0", off, min(end, off + MAX_NAME + 1))
    if stop < 0:
        raise _Bad
    return img[off:stop].decode("utf-8", "replace")


def image_symbols(img: bytes) -> list[tuple[int, int, str, bool]]:
    """[(image-relative address, size, name, is a kernel entry)] of a loaded AMDGPU ELF image;
    [] when `img` is not one or is malformed."""
    try:
        return _image_symbols(img)
    except (_Bad, struct.error):
        return []


def _image_symbols(img: bytes) -> list[tuple[int, int, str, bool]]:
    if img[:4] != b"\x7fELF" or len(img) < 64 or img[4] != 2 or img[5] != 1:
        return []
    (machine,) = _u("<H", img, 18)
    if machine != _EM_AMDGPU:
        return []
    (phoff,) = _u("<Q", img, 32)
    phentsize, phnum = _u("<HH", img, 54)
    if phentsize < 56 or phnum > 64:
        raise _Bad
    dyn = None
    for k in range(phnum):
        ptype, _, _, vaddr, _, _, memsz, _ = _u("<IIQQQQQQ", img, phoff + k * phentsize)
        if ptype == _PT_DYNAMIC:
            dyn = (vaddr, memsz)
    if dyn is None:
        return []
    tags: dict[int, int] = {}
    for k in range(min(dyn[1] // 16, 256)):
        tag, val = _u("<qQ", img, dyn[0] + 16 * k)
        if tag == 0:
            break
        tags.setdefault(tag, val)
    if _DT_SYMTAB not in tags or _DT_STRTAB not in tags:
        return []
    symtab, strtab = tags[_DT_SYMTAB], tags[_DT_STRTAB]
    strend = min(len(img), strtab + tags.get(_DT_STRSZ, len(img)))
    entsize = tags.get(_DT_SYMENT, 24)
    if entsize < 24:
        raise _Bad
    if _DT_HASH in tags:
        (count,) = _u("<I", img, tags[_DT_HASH] + 4)  # nchain = number of symbols
    else:  # (the table ends at the strings,
        count = (strtab - symtab) // entsize if strtab > symtab else 0  # where LLVM puts them)
    out = []
    for k in range(1, min(count, MAX_SYMBOLS)):
        st_name, info, _, shndx, value, size = _u("<IBBHQQ", img, symtab + k * entsize)
        kind = info & 15
        if shndx == 0 or kind not in (_STT_OBJECT, _STT_FUNC):
            continue
        name = _cstr(img, strtab + st_name, strend)
        if kind == _STT_FUNC:
            out.append((value, size, name, False))
        elif name.endswith(".kd") and size == _KD_SIZE:
            (entry_off,) = _u("<q", img, value + 16)
            out.append((value + entry_off, 0, name[:-3], True))
    return out


class ProgramNames:
    """Names of program addresses in one capture's guest memory (built once, then looked up)."""

    def __init__(self, memory, notes=None):
        self.memory = memory
        self.exact: dict[int, str] = {}  # address -> name (kernel or function entry)
        self.ranges: list[tuple[int, int, str]] = []  # functions: (start, end, name)
        from ..memory.guest import canonical

        for a in memory.allocations:
            if a.size < 64 or bytes(memory.peek(a.base, 4)) != b"\x7fELF":
                continue
            img = bytes(memory.peek(a.base, min(a.size, MAX_IMAGE)))
            for off, size, name, kernel in image_symbols(img):
                addr = canonical(a.base + off)
                if kernel or addr not in self.exact:
                    self.exact[addr] = name
                if size:
                    self.ranges.append((addr, addr + size, name))
        programs = (notes or {}).get("programs") if isinstance(notes, dict) else None
        if isinstance(programs, dict):
            for k, v in programs.items():
                try:
                    addr = canonical(int(str(k), 16))
                except ValueError:
                    continue
                if isinstance(v, str) and v:
                    self.exact.setdefault(addr, v[:MAX_NAME])

    def kernel(self, address: int) -> str | None:
        """The name at `address` (raw guest text: escape it before printing), `f+0x10` inside a
        function, or None."""
        from ..memory.guest import canonical

        a = canonical(address)
        if a in self.exact:
            return self.exact[a]
        for lo, hi, name in self.ranges:
            if lo <= a < hi:
                return f"{name}+0x{a - lo:x}"
        return None

    def shown(self, address: int) -> str:
        """`vadd (code:x.hsaco+0x2200)` — or only the allocation and offset when no name is
        known (text output: guest text escaped)."""
        from ..terminal import shown
        from .common import where

        place = where(self.memory, address)
        k = self.kernel(address)
        return f"{shown(k)} ({place})" if k else place
