"""RADV image captures as committed fixtures (tools/radv_capture): a gzipped capture loaded as a
fresh copy (replay writes into the capture it runs; gzip only keeps the fixture small, the
.wlcap is `wavelift import-radv`'s output byte for byte), the bindings its buffers.txt lists,
and a binding's bytes after the replay."""

from __future__ import annotations

import gzip
from pathlib import Path

from wavelift import Capture

_RAW: dict[Path, bytes] = {}


def load_capture(gz: Path, tmp_path: Path) -> Capture:
    if gz not in _RAW:
        _RAW[gz] = gzip.decompress(gz.read_bytes())
    p = tmp_path / gz.name.removesuffix(".gz")
    p.write_bytes(_RAW[gz])
    return Capture.load(p)


def read_bindings(folder: Path) -> dict[int, dict[str, str]]:
    """buffers.txt: per binding of set 0, its fields (va, size; images also readback_va, bytes)."""
    out = {}
    for line in (folder / "buffers.txt").read_text().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if "binding" in f:
            assert f["set"] == "0"
            out[int(f["binding"])] = f
    return out


def binding_bytes(cap: Capture, f: dict[str, str]) -> bytes:
    """A binding's bytes after the replay: an image's read-back buffer, else the buffer."""
    if "readback_va" in f:
        return cap.read(int(f["readback_va"], 16), int(f["bytes"]))
    return cap.read(int(f["va"], 16), int(f["size"]))
