#!/usr/bin/env python3
"""Convert a raw radv-capture submit directory into a wavelift capture (.wlcap).

usage: radv_to_wlcap.py SUBMITDIR OUT.wlcap [--target gfx1030] [--name NAME]

SUBMITDIR holds radv_capture's `capture.json` and `boNNNN_<va>.bin` files (see
../shared/tools/radv-capture/README.md), possibly trimmed as tests/fixtures/radv/README.md
describes: a BO file shorter than the BO (or missing) means the rest is zero; `stored.json`, if
present, gives the sha256 of each full BO, which is checked here. Every BO becomes one allocation
at its VA (named `bo<id>` plus `-ib` for IBs); every IB of every submit becomes one stream, in
submit order. Zero regions cost nothing in the .wlcap (only non-zero 64 KiB extents are stored).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

import numpy as np

try:
    import wavelift  # noqa: F401
except ImportError:                                   # running from a checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from wavelift.memory.capture import Capture            # noqa: E402


class ConversionError(Exception):
    pass


def convert(submit_dir: str, target: str = "gfx1030", name: str | None = None) -> Capture:
    cj = os.path.join(submit_dir, "capture.json")
    with open(cj) as f:
        meta = json.load(f)
    if meta.get("format") != "radv-capture 1":
        raise ConversionError(f"{cj}: format {meta.get('format')!r}, expected 'radv-capture 1'")
    stored = {}
    sj = os.path.join(submit_dir, "stored.json")
    if os.path.exists(sj):
        with open(sj) as f:
            stored = json.load(f).get("bos", {})
    cap = Capture(target=target)
    for bo in meta["bos"]:
        va, size = int(bo["va"], 16), int(bo["size"])
        path = os.path.join(submit_dir, bo["file"])
        data = None
        if os.path.exists(path):
            data = np.fromfile(path, dtype=np.uint8)
            if len(data) > size:
                raise ConversionError(f"{bo['file']}: {len(data)} bytes, more than the BO's {size}")
        label = f"bo{bo['id']}" + ("-ib" if bo.get("ib") else "")
        addr = cap.alloc(size, data=data, name=label, address=va, align=4096 if va % 4096 == 0 else 4)
        rec = stored.get(bo["file"])
        if rec is not None:
            h = hashlib.sha256(cap.memory.view(addr, size)).hexdigest()
            if h != rec["sha256"]:
                raise ConversionError(f"{bo['file']}: rebuilt BO does not match stored.json's sha256")
    for s in meta["submits"]:
        for ib in s.get("ibs", []):
            cap.submit_at(int(ib["va"], 16), int(ib["size_dw"]))
    cap.notes = {"source": "radv-capture 1 (Mesa RADV 22.3.6 null device)",
                 "converted_by": "tools/radv_to_wlcap.py",
                 "name": name or os.path.basename(os.path.dirname(os.path.abspath(submit_dir))),
                 "ibs": [dict(ip=s.get("ip"), role=ib.get("role"), va=ib["va"], size_dw=ib["size_dw"])
                         for s in meta["submits"] for ib in s.get("ibs", [])]}
    return cap


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("submit_dir")
    ap.add_argument("out")
    ap.add_argument("--target", default="gfx1030")
    ap.add_argument("--name")
    a = ap.parse_args(argv)
    try:
        cap = convert(a.submit_dir, a.target, a.name)
    except (ConversionError, OSError, ValueError, KeyError) as e:
        print(f"radv_to_wlcap: {e}", file=sys.stderr)
        return 1
    cap.save(a.out)
    print(f"{a.out}: {len(cap.memory)} allocations, {len(cap.streams)} streams, "
          f"{os.path.getsize(a.out)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
