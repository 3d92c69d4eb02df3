"""`wavelift disasm FILE [--target gfx1030|gfx1010] [--wave64]`: LLVM-syntax listing.

For an AMDHSA code object: every function symbol in .text, in address order, as llvm-objdump-19
prints it (a blank line, ``<16 hex digits address> <name>:``, then one tab-indented instruction
per line without objdump's ``// address: words`` comment; branch targets print as LLVM's
immediate, e.g. ``s_cbranch_execz 26``).  The wave size comes from the kernel descriptor
(``<name>.kd``, kernel_code_properties bit 10 = ENABLE_WAVEFRONT_SIZE32) unless --wave64 is
given; the target from e_flags unless --target is given.  A raw file is decoded whole.
Bytes that do not decode print as objdump does (``.long 0x...`` / ``.byte ...``).
"""
from __future__ import annotations

import os
import struct

from .decoder import decode_one
from .elf import Elf, ElfError
from .instruction import DecodeError


def _user_error(msg):
    from ..cli import UserError
    return UserError(msg)


def listing(code: bytes, target: str, wave64: bool, base: int = 0):
    """Lines (without tab) for ``code`` at address ``base``: decoded text or objdump's fallback."""
    out = []
    pos = 0
    n = len(code)
    while pos < n:
        try:
            ins = decode_one(code, pos, target, wave64, base - 0 if False else 0)
            out.append(ins.text)
            pos += ins.size
        except DecodeError:
            if n - pos >= 4:
                out.append(f".long {struct.unpack_from('<I', code, pos)[0]:#010x}")
                pos += 4
            else:
                out.append(".byte " + ", ".join(f"0x{b:02x}" for b in code[pos:]))
                pos = n
    return out


def kernel_wave64(elf: Elf, name: str):
    syms = {s.name: s for s in elf.symbols()}
    kd = syms.get(name + ".kd")
    if kd is None:
        return None
    raw = elf.read_addr(kd.value, 64)
    if raw is None:
        return None
    props = struct.unpack_from("<H", raw, 56)[0]
    return not (props >> 10) & 1


def code_object_listing(data: bytes, target=None, wave64=None):
    elf = Elf(data)
    target = target or elf.target or "gfx1030"
    text = elf.section(".text")
    if text is None:
        raise ElfError("no .text section")
    tidx = elf.sections.index(text)
    body = elf.section_bytes(text)
    funcs = sorted({(s.value, s.name) for s in elf.symbols()
                    if s.shndx == tidx and s.name and s.type in (0, 2)})
    lines = []
    for i, (addr, name) in enumerate(funcs):
        end = funcs[i + 1][0] if i + 1 < len(funcs) else text.addr + text.size
        w64 = wave64 if wave64 is not None else bool(kernel_wave64(elf, name))
        chunk = body[addr - text.addr:end - text.addr]
        lines.append("")
        lines.append(f"{addr:016x} <{name}>:")
        lines.extend("\t" + t for t in listing(chunk, target, w64, addr))
    return lines


def disasm_command(path, target=None, wave64=None, out=None) -> int:
    import sys
    out = out or sys.stdout
    if not os.path.isfile(path):
        raise _user_error(f"{path}: no such file")
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x7fELF":
        try:
            lines = code_object_listing(data, target, wave64)
        except ElfError as e:
            raise _user_error(f"{path}: {e}") from None
    else:
        lines = ["\t" + t for t in listing(data, target or "gfx1030", bool(wave64))]
    out.write("\n".join(lines) + "\n")
    return 0
