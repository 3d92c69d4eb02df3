"""The `wavelift` command (its --help text is DESCRIPTION). Each subcommand lives next to the
code it drives; this file only parses. Errors a user can act on are one line on stderr (no
traceback unless --debug).
"""

from __future__ import annotations

import argparse
import re
import sys

from .commands import register as register_commands
from .errors import UserError
from .isa.instruction import DECODE_TARGETS
from .terminal import quiet_broken_pipe, shown

DESCRIPTION = (
    "Carry out AMD RDNA (GFX10/10.3) compute dispatches without an AMD GPU: replay a "
    ".wlcap capture, inspect it, render its memory, disassemble its code. "
    "Guide: docs/guide.md."
)


def _cmd_disasm(a) -> int:
    from .isa.disasm_cli import disasm_command

    return disasm_command(
        a.file,
        target=a.target,
        wave64=a.wave64,
        out=sys.stdout,
        show_encoding=a.show_encoding,
        kernel=a.kernel,
        descriptors=a.kernel_descriptor,
    )


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="wavelift", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"wavelift {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser(
        "disasm",
        help="disassemble an AMDHSA code object, raw code, or the "
        "programs of a capture's dispatches (LLVM syntax)",
    )
    d.add_argument("file", help="code object (.hsaco/.o), raw code, or .wlcap capture")
    d.add_argument(
        "--target",
        choices=list(DECODE_TARGETS),
        default=None,
        help="default: from the code object, else gfx1030",
    )
    d.add_argument(
        "--wave64",
        action="store_true",
        default=None,
        help="decode as wave64 (default: from the kernel descriptor)",
    )
    d.add_argument(
        "--show-encoding",
        "-e",
        action="store_true",
        help="each line with llvm-objdump's comment: address, encoding words, and "
        "a branch's target as <symbol+0xoffset>",
    )
    d.add_argument(
        "--kernel",
        "-k",
        metavar="NAME",
        help="only symbol NAME of a code object (llvm-objdump --disassemble-symbols)",
    )
    d.add_argument(
        "--kernel-descriptor",
        action="store_true",
        help="print each kernel's descriptor (.amdhsa_ directives) instead of code",
    )
    d.set_defaults(func=_cmd_disasm)
    register_commands(sub)  # run, info, trace, show, batch: each adds its own parser
    return p


def _parsers(p):
    yield p
    for action in p._actions:  # noqa: SLF001 - argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sp in action.choices.values():
                yield from _parsers(sp)


_NEGATIVE = re.compile(r"-[0-9.]")


def _join_negative_values(p, argv: list[str]) -> list[str]:
    """`--range -1,1` as `--range=-1,1`: argparse takes a value that starts with '-' for an
    option unless it is a plain number, so a value such as -1,1 or -1e3 after an option that
    takes one value is joined to it."""
    takes_value = {
        o
        for sp in _parsers(p)
        for a in sp._actions  # noqa: SLF001
        if a.nargs is None
        for o in a.option_strings
    }
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            return out + argv[i:]
        if argv[i] in takes_value and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_args(_join_negative_values(p, list(sys.argv[1:] if argv is None else argv)))
    return quiet_broken_pipe(lambda: _run(a))


def _run(a) -> int:
    try:
        return int(a.func(a) or 0)
    except UserError as e:
        if a.debug:
            raise
        print(f"wavelift: {shown(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if a.debug:
            raise
        print("wavelift: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # quiet_broken_pipe: the reader went away, not a bug
    except Exception as e:  # noqa: BLE001 - a bug in wavelift, not the user's input
        if a.debug:
            raise
        print(
            f"wavelift: internal error: {type(e).__name__}: {shown(e)} (this is a bug in wavelift; "
            f"run again with --debug for the traceback and report it)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
