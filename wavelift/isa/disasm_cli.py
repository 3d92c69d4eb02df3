"""`wavelift disasm FILE [--target gfx1030|gfx1010|gfx1100|gfx1200|...] [--wave64] [--show-encoding] [--kernel NAME]`:
LLVM-syntax listing.

For an AMDHSA code object: every function symbol in .text, in address order, as llvm-objdump-19
prints it (a blank line, ``<16 hex digits address> <name>:``, then one tab-indented instruction
per line without objdump's ``// address: words`` comment; branch targets print as LLVM's
immediate, e.g. ``s_cbranch_execz 26``).  The wave size comes from the kernel descriptor
(``<name>.kd``, kernel_code_properties bit 10 = ENABLE_WAVEFRONT_SIZE32) unless --wave64 is
given (functions without a descriptor, e.g. callees, take the kernels' wave size); the target
from e_flags unless --target is given.  The ELF is read by wavelift.driver.codeobject.  A raw
file is decoded whole.
Bytes that do not decode print as objdump does (``.long 0x...`` / ``.byte ...``).
An instruction of a GFX11/GFX12 encoding wavelift does not decode yet (docs/isa-coverage.md)
ends the listing of its function (or raw file) with a ``; not decoded yet: ...`` line: its size is
unknown, so nothing after it is guessed.
``--show-encoding`` adds objdump's comment to each line, so that a code object's listing is
llvm-objdump-19 -d's from its first symbol on, byte for byte: the text padded to column 60,
``// ADDRESS: WORDS`` (12 hex digits, the encoding's dwords) and, for a SOPP branch, its
target as ``<symbol+0xoffset>``.  ``--kernel NAME`` lists only that symbol.
``--kernel-descriptor``: instead of code, each kernel's descriptor (``NAME.kd``) as the
``.amdhsa_kernel`` directives that encode it (AMDGPUUsage), the entry, the raw RSRC words and
the user SGPR layout.

For a .wlcap capture: the program of each dispatch (found by walking the streams, none is run),
once per program address, as ``<address> <dispatch N>:`` and its instructions from the entry
(those reachable from it when the whole program decodes, else up to the first s_endpgm past
every branch), with the capture's target and each dispatch's wave size.  A directory, an empty
file or anything that is not a regular file is an error.
"""

from __future__ import annotations

import os
import struct

from .decoder import NOT_DECODED, decode_one
from .instruction import DECODE_TARGETS as TARGETS
from .instruction import DecodeError


def _user_error(msg):
    from ..errors import UserError

    return UserError(msg)


def entries(code: bytes, target: str, wave64: bool, memo=None):
    """[(offset, size, text)] for ``code``: decoded text or objdump's fallback for bytes that do
    not decode (``.long 0x%08x`` per dword, ``.byte ...`` for a tail shorter than a dword).

    ``memo`` (a dict, shared by the calls of one listing) remembers the text of every decoded
    instruction by its bytes: compiled code repeats instructions a lot, and an instruction's text
    depends only on its own bytes (branch targets print as LLVM's immediate)."""
    out = []
    pos = 0
    n = len(code)
    memo = {} if memo is None else memo
    while pos < n:
        k = code[pos : pos + 4]
        hit = memo.get(k)
        if hit is not None:
            for size, full, text in hit:
                if size == 4 or code[pos : pos + size] == full:
                    out.append((pos, size, text))
                    pos += size
                    break
            else:
                hit = None
            if hit is not None:
                continue
        try:
            ins = decode_one(code, pos, target, wave64)
        except DecodeError as e:
            if e.reason.startswith(NOT_DECODED):
                # an encoding wavelift does not decode yet: its size is unknown, so the listing
                # stops here rather than guess (objdump would go on)
                out.append((pos, 0, f"; {e.reason} (the rest of this code is not listed)"))
                break
            if n - pos >= 4:
                out.append((pos, 4, f".long {struct.unpack_from('<I', code, pos)[0]:#010x}"))
                pos += 4
            else:
                out.append((pos, n - pos, ".byte " + ", ".join(f"0x{b:02x}" for b in code[pos:])))
                pos = n
            continue
        memo.setdefault(k, []).append((ins.size, code[pos : pos + ins.size], ins.text))
        out.append((pos, ins.size, ins.text))
        pos += ins.size
    return out


def listing(code: bytes, target: str, wave64: bool, memo=None):
    """The text of each of ``entries(code, ...)``."""
    return [t for _, _, t in entries(code, target, wave64, memo)]


# SOPP branches: objdump names their target (<symbol+0xoffset>) after the encoding
BRANCHES = frozenset(
    {
        "s_branch",
        "s_cbranch_scc0",
        "s_cbranch_scc1",
        "s_cbranch_vccz",
        "s_cbranch_vccnz",
        "s_cbranch_execz",
        "s_cbranch_execnz",
        "s_cbranch_cdbgsys",
        "s_cbranch_cdbguser",
        "s_cbranch_cdbgsys_or_user",
        "s_cbranch_cdbgsys_and_user",
    }
)


def branch_target(text: str, address: int):
    """The address a SOPP branch at ``address`` goes to (PC + 4 + 4 x simm16), else None."""
    name, _, rest = text.partition(" ")
    if name not in BRANCHES or not rest.isdigit():
        return None
    v = int(rest) & 0xFFFF
    return address + 4 + 4 * (v - 0x10000 if v & 0x8000 else v)


def formatted(ents, code: bytes, base: int, show_encoding: bool, label_of=None):
    """Listing lines (tab-indented) for ``entries`` of ``code`` loaded at ``base``; with
    ``show_encoding``, objdump's comment: ``// ADDRESS: WORDS`` and, for a branch, its target's
    label from ``label_of(address)`` (text padded to column 60, as llvm-objdump -d does)."""
    lines = []
    for pos, size, text in ents:
        if not show_encoding:
            lines.append("\t" + text)
            continue
        raw = code[pos : pos + size]
        words = (
            " ".join(f"{w:08X}" for w in struct.unpack(f"<{size // 4}I", raw))
            if size % 4 == 0
            else " ".join(f"{b:02X}" for b in raw)
        )
        line = ("\t" + text).ljust(60) + f"// {base + pos:012X}: {words}"
        target = branch_target(text, base + pos)
        label = label_of(target) if target is not None and label_of else None
        lines.append(line + (f" <{label}>" if label else ""))
    return lines


def code_object_listing(data: bytes, target=None, wave64=None, show_encoding=False, kernel=None):
    """objdump -d's listing of every symbol in .text, or of symbol ``kernel`` (see the module
    docstring)."""
    import bisect

    from ..driver.codeobject import STT_FUNC, STT_NOTYPE, CodeObject, CodeObjectError
    from ..terminal import shown

    co = CodeObject(data)
    target = target or co.target
    if target not in TARGETS:
        raise _user_error(
            f"code object is for {co.target}; wavelift decodes "
            f"{', '.join(TARGETS)} (pass --target to force one)"
        )
    text = co.text
    if text is None:
        raise CodeObjectError("code object has no .text section")
    body = co.section_data(text)
    funcs = sorted(
        {
            (s.value, s.name)
            for s in co.symbols
            if s.section_index == text.index
            and s.name
            and s.type in (STT_NOTYPE, STT_FUNC)
            and text.address <= s.value < text.address + text.size
        }
    )
    if kernel is not None and kernel not in (n for _, n in funcs):
        names = ", ".join(repr(n) for _, n in funcs) or "none"
        raise _user_error(f"no symbol {kernel!r} in .text (the code object has {names})")
    # wave size per kernel entry from its descriptor; functions without one (callees) take the
    # kernels' wave size when the kernels agree
    kw = {k.code_address: k.kd.wave_size == 64 for k in co.kernels}
    sizes = set(kw.values())
    default64 = sizes.pop() if len(sizes) == 1 else False
    starts = [a for a, _ in funcs]

    def label_of(address):
        i = bisect.bisect_right(starts, address) - 1
        if i < 0 or address >= text.address + text.size:
            return None
        a, name = funcs[i]
        return shown(name) + (f"+0x{address - a:x}" if address > a else "")

    lines = []
    memo: dict[bool, dict[bytes, list[tuple[int, bytes, str]]]] = {}  # per wave size: entries()'s
    for i, (addr, name) in enumerate(funcs):
        if kernel is not None and name != kernel:
            continue
        end = funcs[i + 1][0] if i + 1 < len(funcs) else text.address + text.size
        w64 = wave64 if wave64 is not None else kw.get(addr, default64)
        chunk = body[addr - text.address : end - text.address]
        lines.append("")
        lines.append(f"{addr:016x} <{shown(name)}>:")  # a symbol name is guest text
        lines.extend(
            formatted(
                entries(chunk, target, w64, memo.setdefault(w64, {})), chunk, addr, show_encoding, label_of
            )
        )
    return lines


def descriptor_listing(data: bytes, kernel=None):
    """Each kernel's descriptor (or kernel ``kernel``'s) as the assembler's ``.amdhsa_``
    directives it encodes, with the raw words as comments."""
    from ..driver.codeobject import CodeObject
    from ..terminal import shown

    co = CodeObject(data)
    ks = [k for k in co.kernels if kernel is None or kernel in (k.name, k.code_symbol)]
    if not ks:
        names = ", ".join(repr(k.name) for k in co.kernels) or "none"
        raise _user_error(
            f"no kernel {kernel!r} (the code object has {names})"
            if kernel
            else "the code object has no kernel descriptor"
        )
    lines = []
    for k in ks:
        d = k.kd
        flag = lambda v: str(int(bool(v)))  # noqa: E731
        lines += [
            "",
            f"{k.kd_address:016x} <{shown(k.symbol)}>:",
            f".amdhsa_kernel {shown(k.name)}",
            f"\t.amdhsa_group_segment_fixed_size {d.group_segment_fixed_size}",
            f"\t.amdhsa_private_segment_fixed_size {d.private_segment_fixed_size}",
            f"\t.amdhsa_kernarg_size {d.kernarg_size}",
        ]
        for what, on in (
            ("private_segment_buffer", d.enable_sgpr_private_segment_buffer),
            ("dispatch_ptr", d.enable_sgpr_dispatch_ptr),
            ("queue_ptr", d.enable_sgpr_queue_ptr),
            ("kernarg_segment_ptr", d.enable_sgpr_kernarg_segment_ptr),
            ("dispatch_id", d.enable_sgpr_dispatch_id),
            ("flat_scratch_init", d.enable_sgpr_flat_scratch_init),
            ("private_segment_size", d.enable_sgpr_private_segment_size),
        ):
            lines.append(f"\t.amdhsa_user_sgpr_{what} {flag(on)}")
        lines += [
            f"\t.amdhsa_user_sgpr_count {d.user_sgpr_count}",
            f"\t.amdhsa_wavefront_size32 {flag(d.enable_wavefront_size32)}",
            f"\t.amdhsa_uses_dynamic_stack {flag(d.uses_dynamic_stack)}",
            f"\t.amdhsa_system_sgpr_private_segment_wavefront_offset {flag(d.scratch_en)}",
        ]
        lines += [
            f"\t.amdhsa_system_sgpr_workgroup_id_{c} {flag(on)}" for c, on in zip("xyz", d.tgid_enabled)
        ]
        lines += [
            f"\t.amdhsa_system_sgpr_workgroup_info {flag(d.tg_size_en)}",
            f"\t.amdhsa_system_vgpr_workitem_id {d.tidig_comp_cnt}",
            ".end_amdhsa_kernel",
            f"\t; entry {k.code_address:#x} (kernel_code_entry_byte_offset "
            f"{d.kernel_code_entry_byte_offset:#x}); COMPUTE_PGM_RSRC1 "
            f"{d.compute_pgm_rsrc1:#010x}, RSRC2 {d.compute_pgm_rsrc2:#010x}, RSRC3 "
            f"{d.compute_pgm_rsrc3:#010x}",
        ]
        layout = ", ".join(
            f"s[{f}:{f + n - 1}] {w}" if n > 1 else f"s{f} {w}" for w, f, n in d.user_sgpr_layout()
        )
        lines.append(f"\t; user SGPRs: {layout or 'none'}")
    return lines


def capture_listing(path, wave64=None, show_encoding=False):
    """The listing of each dispatch's program in the capture at `path` (see the module
    docstring)."""
    from ..commands.common import load_capture
    from ..commands.info import walk_capture
    from ..commands.trace import decode_program
    from ..errors import Refused
    from ..run.execute import _program_bytes
    from ..terminal import shown

    cap = load_capture(path)
    if cap.target not in TARGETS:
        raise _user_error(f"{path}: the capture is for {cap.target}; wavelift decodes {', '.join(TARGETS)}")
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
        name = f"dispatch {indices[0]}"
        lines.extend(
            formatted(
                [(entry + i.offset, i.size, i.text) for i in instrs],
                code,
                address - entry,
                show_encoding,
                lambda t: name + (f"+0x{t - address:x}" if t > address else ""),
            )
        )
        if note:  # why the listing is linear, or stops
            lines.append(f"\t; {shown(note.lstrip(' —'))}")
    return lines


def disasm_command(
    path, target=None, wave64=None, out=None, show_encoding=False, kernel=None, descriptors=False
) -> int:
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
    if not stat.S_ISREG(mode):  # a FIFO would make the read wait
        raise _user_error(f"{path}: is {file_kind(mode)}, not a code object, raw code or capture")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise _user_error(f"{path}: is empty; there is no code to disassemble")
    if descriptors and data[:4] != b"\x7fELF":
        raise _user_error(f"{path}: is not a code object: only code objects have kernel descriptors")
    if data[: len(MAGIC)] == MAGIC:
        if target is not None:
            raise _user_error(f"{path}: is a capture; its target is its own (leave out --target)")
        if kernel is not None:
            raise _user_error(
                f"{path}: is a capture; its programs are named by dispatch, "
                f"--kernel selects a code object's symbol"
            )
        lines = capture_listing(path, wave64, show_encoding)
    elif data[:4] == b"\x7fELF":
        from ..driver.codeobject import CodeObjectError

        try:
            lines = (
                descriptor_listing(data, kernel)
                if descriptors
                else code_object_listing(data, target, wave64, show_encoding, kernel)
            )
        except CodeObjectError as e:
            raise _user_error(f"{path}: {e}") from None
    else:
        if kernel is not None:
            raise _user_error(f"{path}: is raw code, without symbols: --kernel needs a code object")
        lines = formatted(entries(data, target or "gfx1030", bool(wave64)), data, 0, show_encoding)
    out.write("\n".join(lines) + "\n")
    return 0
