"""`wavelift disasm FILE [--target gfx1030|gfx1010] [--wave64]`: LLVM-syntax listing.

For an AMDHSA code object: every function symbol in .text, in address order, as llvm-objdump-19
prints it (a blank line, ``<16 hex digits address> <name>:``, then one tab-indented instruction
per line without objdump's ``// address: words`` comment; branch targets print as LLVM's
immediate, e.g. ``s_cbranch_execz 26``).  The wave size comes from the kernel descriptor
(``<name>.kd``, kernel_code_properties bit 10 = ENABLE_WAVEFRONT_SIZE32) unless --wave64 is
given (functions without a descriptor, e.g. callees, take the kernels' wave size); the target
from e_flags unless --target is given.  The ELF is read by wavelift.driver.codeobject.  A raw
file is decoded whole.
Bytes that do not decode print as objdump does (``.long 0x...`` / ``.byte ...``).

For a .wlcap capture: the program of each dispatch (found by walking the streams, none is run),
once per program address, as ``<address> <dispatch N>:`` and its instructions from the entry
(those reachable from it when the whole program decodes, else up to the first s_endpgm past
every branch), with the capture's target and each dispatch's wave size.  A directory, an empty
file or anything that is not a regular file is an error.
"""
from __future__ import annotations

import os
import struct

from .decoder import decode_one
from .instruction import TARGETS, DecodeError


def _user_error(msg):
    from ..cli import UserError
    return UserError(msg)


def listing(code: bytes, target: str, wave64: bool, memo=None):
    """Lines (without tab) for ``code``: decoded text or objdump's fallback for bytes that do not
    decode (``.long 0x%08x`` per dword, ``.byte ...`` for a tail shorter than a dword).

    ``memo`` (a dict, shared by the calls of one listing) remembers the text of every decoded
    instruction by its bytes: compiled code repeats instructions a lot, and an instruction's text
    depends only on its own bytes (branch targets print as LLVM's immediate)."""
    out = []
    pos = 0
    n = len(code)
    memo = {} if memo is None else memo
    while pos < n:
        k = code[pos:pos + 4]
        hit = memo.get(k)
        if hit is not None:
            for size, full, text in hit:
                if size == 4 or code[pos:pos + size] == full:
                    out.append(text)
                    pos += size
                    break
            else:
                hit = None
            if hit is not None:
                continue
        try:
            ins = decode_one(code, pos, target, wave64)
        except DecodeError:
            if n - pos >= 4:
                out.append(f".long {struct.unpack_from('<I', code, pos)[0]:#010x}")
                pos += 4
            else:
                out.append(".byte " + ", ".join(f"0x{b:02x}" for b in code[pos:]))
                pos = n
            continue
        memo.setdefault(k, []).append((ins.size, code[pos:pos + ins.size], ins.text))
        out.append(ins.text)
        pos += ins.size
    return out


def code_object_listing(data: bytes, target=None, wave64=None):
    """objdump -d's listing of every symbol in .text (see the module docstring)."""
    from ..cli import shown
    from ..driver.codeobject import STT_FUNC, STT_NOTYPE, CodeObject, CodeObjectError
    co = CodeObject(data)
    target = target or co.target
    if target not in TARGETS:
        raise _user_error(f"code object is for {co.target}; wavelift decodes "
                          f"{', '.join(TARGETS)} (pass --target to force one)")
    text = co.text
    if text is None:
        raise CodeObjectError("code object has no .text section")
    body = co.section_data(text)
    funcs = sorted({(s.value, s.name) for s in co.symbols
                    if s.section_index == text.index and s.name and s.type in (STT_NOTYPE, STT_FUNC)
                    and text.address <= s.value < text.address + text.size})
    # wave size per kernel entry from its descriptor; functions without one (callees) take the
    # kernels' wave size when the kernels agree
    kw = {k.code_address: k.kd.wave_size == 64 for k in co.kernels}
    sizes = set(kw.values())
    default64 = sizes.pop() if len(sizes) == 1 else False
    lines = []
    memo = {}
    for i, (addr, name) in enumerate(funcs):
        end = funcs[i + 1][0] if i + 1 < len(funcs) else text.address + text.size
        w64 = wave64 if wave64 is not None else kw.get(addr, default64)
        chunk = body[addr - text.address:end - text.address]
        lines.append("")
        lines.append(f"{addr:016x} <{shown(name)}>:")      # a symbol name is guest text
        lines.extend("\t" + t for t in listing(chunk, target, w64, memo.setdefault(w64, {})))
    return lines


def capture_listing(path, wave64=None):
    """The listing of each dispatch's program in the capture at `path` (see the module
    docstring)."""
    from ..cli import shown
    from ..commands.common import load_capture
    from ..commands.info import walk_capture
    from ..commands.trace import decode_program
    from ..execute import _program_bytes
    from ..refusal import Refused
    cap = load_capture(path)
    if cap.target not in TARGETS:
        raise _user_error(f"{path}: the capture is for {cap.target}; wavelift decodes "
                          f"{', '.join(TARGETS)}")
    _, results, stopped, _ = walk_capture(cap)
    by_program: dict = {}
    for r in results:
        if r.config is not None:
            by_program.setdefault((r.config.program_address, r.config.wave_size), []).append(r.index)
    if not by_program:
        why = f" ({shown(stopped[0][1])})" if stopped else ""
        raise _user_error(f"{path}: the capture has no dispatch, so no program to disassemble{why}")
    lines = []
    for (address, wave), indices in by_program.items():
        w64 = wave == 64 if wave64 is None else wave64
        lines.append("")
        lines.append(f"{address:016x} <dispatch {', '.join(map(str, indices))}>:")
        config = next(r.config for r in results if r.index == indices[0])
        try:
            code, _, entry = _program_bytes(cap.memory, config)
        except Refused as e:
            lines.append(f"\t; {shown(e.refusal)}")
            continue
        instrs, note = decode_program(code[entry:], cap.target, w64, address)
        lines.extend("\t" + i.text for i in instrs)
        if note:                                    # why the listing is linear, or stops
            lines.append(f"\t; {shown(note.lstrip(' —'))}")
    return lines


def disasm_command(path, target=None, wave64=None, out=None) -> int:
    import stat
    import sys

    from ..memory.capture import MAGIC, file_kind
    out = out or sys.stdout
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise _user_error(f"{path}: no such file") from None
    except OSError as e:
        raise _user_error(f"{path}: cannot read it ({e.strerror})") from None
    if not stat.S_ISREG(mode):                     # a FIFO would make the read wait
        raise _user_error(f"{path}: is {file_kind(mode)}, not a code object, raw code or capture")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise _user_error(f"{path}: is empty; there is no code to disassemble")
    if data[:len(MAGIC)] == MAGIC:
        if target is not None:
            raise _user_error(f"{path}: is a capture; its target is its own (leave out --target)")
        lines = capture_listing(path, wave64)
    elif data[:4] == b"\x7fELF":
        from ..driver.codeobject import CodeObjectError
        try:
            lines = code_object_listing(data, target, wave64)
        except CodeObjectError as e:
            raise _user_error(f"{path}: {e}") from None
    else:
        lines = ["\t" + t for t in listing(data, target or "gfx1030", bool(wave64))]
    out.write("\n".join(lines) + "\n")
    return 0
