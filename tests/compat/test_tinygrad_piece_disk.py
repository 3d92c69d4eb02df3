"""Pieces on disk through the tinygrad hook (decision 0045, amendment "pieces on disk"): programs
shaped like tinygrad's instruction tests run in a fresh process with an empty piece cache, then in
another fresh process that finds every new piece on disk, give the bytes, return codes and
refusals they give without pieces; in the second process no piece is compiled."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import subprocess
import sys

from tests.compat.test_tinygrad_pieces import _programs, _run
from wavelift.backends.numpy import codegen

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHILD = r"""
import json, pickle, sys
from tests.compat.test_tinygrad_pieces import _run
from wavelift.backends.numpy import codegen
progs = pickle.load(open(sys.argv[1], "rb"))
out = [_run(c) for c in progs]
print(json.dumps({"out": [[rc, data.hex(), why] for rc, data, why in out],
                  "misses": codegen.PIECES.misses, "disk_hits": codegen.PIECES.disk_hits}))
"""


def _child(progs_file, cache) -> dict:
    env = dict(os.environ, WAVELIFT_PIECE_CACHE=str(cache), PYTHONPATH=str(ROOT))
    env.pop("PYTHONHASHSEED", None)  # (each child its own: nothing may rest on a process's hashes)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(progs_file)], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


def test_pieces_from_disk_in_another_process_give_the_same_results(tmp_path, monkeypatch):
    from wavelift.run import execute

    progs = _programs()
    monkeypatch.setattr(execute, "_CACHE", {})
    monkeypatch.setattr(codegen.PIECES, "enabled", False)
    want = [[rc, data.hex(), list(why) if why else None] for rc, data, why in (_run(c) for c in progs)]
    f = tmp_path / "progs.pkl"
    f.write_bytes(pickle.dumps(progs))
    cache = tmp_path / "pieces"
    cold = _child(f, cache)
    assert cold["out"] == want
    assert cold["misses"] > 0 and cold["disk_hits"] == 0
    assert [p for p in os.listdir(cache) if p.endswith(".pack")]  # (written at the child's exit)
    warm = _child(f, cache)
    assert warm["out"] == want
    assert warm["misses"] == cold["misses"] and warm["disk_hits"] == warm["misses"]
    # the same again with the disk cache off: compiled, the same results
    off = _child(f, "off")
    assert off["out"] == want and off["disk_hits"] == 0
