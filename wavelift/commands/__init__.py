"""The user-facing subcommands: run, info, trace, show, batch, import-radv (see docs/guide.md).

`register(subparsers)` is called by wavelift/cli.py; each module adds its own parser.
"""

from __future__ import annotations


def register(sub) -> None:
    from . import batch, import_radv, info, run, show, trace

    run.register(sub)
    info.register(sub)
    trace.register(sub)
    show.register(sub)
    batch.register(sub)
    import_radv.register(sub)
