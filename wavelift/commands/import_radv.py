"""`wavelift import-radv RAW_DIR -o OUT.wlcap`: radv_capture's raw output as a capture.

RAW_DIR is what tools/radv_capture/ writes (buffers.txt, submit0/, submit1/; or one submitN/),
possibly trimmed by tools/radv_capture_raw/trim.py. It is read as untrusted input
(wavelift/importers/radv.py); the output is written all or nothing and never over an input.
"""

from __future__ import annotations

import os
import re

from ..errors import UserError
from .common import add_debug, check_outputs, write_output


def _expect_arg(v: str) -> tuple[int, int, str]:
    m = re.fullmatch(r"([0-9]{1,4}):([0-9]{1,4}):(.+)", v)
    if m is None:
        raise UserError(f"--expect {v!r}: give SET:BINDING:FILE")
    return int(m.group(1)), int(m.group(2)), m.group(3)


def cmd_import_radv(a) -> int:
    from ..importers import radv

    if not os.path.isdir(a.raw_dir):
        raise UserError(f"{a.raw_dir}: not a directory (give radv_capture's output directory)")
    expect = [_expect_arg(v) for v in a.expect or []]
    inputs = {f"the input file {p}": p for p in radv.input_files(a.raw_dir, a.submit)}
    inputs.update({f"the --expect file {f}": f for _, _, f in expect})
    check_outputs(inputs, {"-o": a.out})
    cap = radv.convert(a.raw_dir, a.target, a.name, a.submit, expect, a.expect_name)
    write_output("-o", a.out, cap.save)
    print(
        f"{a.out}: {cap.target}, {len(cap.memory)} allocations, {len(cap.streams)} stream(s), "
        f"{os.path.getsize(a.out)} bytes"
    )
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "import-radv",
        help="convert radv_capture's raw output (tools/radv_capture) into a .wlcap capture",
        description=__doc__,
    )
    p.add_argument("raw_dir", metavar="RAW_DIR", help="radv_capture's output directory (or a submitN/ in it)")
    p.add_argument("-o", "--out", required=True, metavar="OUT.wlcap", help="the capture to write")
    p.add_argument(
        "--target",
        choices=["gfx1030", "gfx1010", "gfx1100"],
        default="gfx1030",
        help="gfx1030 for RADV_FORCE_FAMILY=navi21 (default), gfx1010 for navi10, gfx1100 for gfx1100",
    )
    p.add_argument("--name", help="the capture's name in its notes (default: the directory that holds raw/)")
    p.add_argument(
        "--submit",
        type=int,
        default=0,
        metavar="N",
        help="which submitN/ to convert (default 0: radv_capture's dispatch)",
    )
    p.add_argument(
        "--expect",
        action="append",
        metavar="SET:BINDING:FILE",
        help="record that buffer SET:BINDING (buffers.txt) must hold FILE's bytes after "
        "replay (`wavelift run` checks it); repeatable",
    )
    p.add_argument(
        "--expect-name",
        default="expected",
        metavar="NAME",
        help="the name of those expected results (e.g. lavapipe)",
    )
    add_debug(p)
    p.set_defaults(func=cmd_import_radv)
