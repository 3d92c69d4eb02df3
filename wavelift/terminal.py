"""Text for the terminal, shared by the command line and every `python -m wavelift.<module>`
entry point: guest text made safe to print (`shown`), and output into a closed pipe ended
quietly (`quiet_broken_pipe`)."""

from __future__ import annotations

import os
import sys


def shown(text) -> str:
    """Guest-controlled text (allocation names, capture notes, symbol names, refusal messages
    that quote them) as text output may carry it: every character that is not printable (C0/C1
    controls such as ESC and CSI, DEL, newlines, bidi overrides, lone surrogates) is written as
    its Python escape, so the output never drives the terminal or forges lines. All of its
    output is printable, so showing shown text changes nothing. A name quoted with repr() is
    safe as it is (repr escapes the same characters). JSON output does not use this: JSON
    escapes."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def quiet_broken_pipe(fn):
    """Run an entry point's `fn()` (returning its exit status) with its output flushed inside:
    when the reader went away (`| head`) the command ends quietly with status 0 instead of a
    BrokenPipeError traceback, here or when Python flushes stdout at exit."""
    try:
        rc = fn()
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        try:  # nothing more can reach the reader; keep exit's flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
