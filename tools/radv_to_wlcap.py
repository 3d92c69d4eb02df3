#!/usr/bin/env python3
"""Kept for old scripts: `radv_to_wlcap.py SUBMITDIR OUT.wlcap [--target T] [--name N]` is
`wavelift import-radv SUBMITDIR -o OUT.wlcap [--target T] [--name N]` (wavelift/importers/radv.py,
where `convert` lives; tools/radv_capture/README.md)."""

from __future__ import annotations

import os
import sys

try:
    import wavelift  # noqa: F401
except ImportError:  # running from a checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from wavelift.importers.radv import convert  # noqa: E402,F401  (tests import it here)


def main(argv=None) -> int:
    from wavelift.cli import main as wavelift_main

    args = list(sys.argv[1:] if argv is None else argv)
    pos = [a for a in args if not a.startswith("-")][:2]
    if len(pos) < 2 or args[:2] != pos:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    return wavelift_main(["import-radv", pos[0], "-o", pos[1]] + args[2:])


if __name__ == "__main__":
    sys.exit(main())
