#!/usr/bin/env python3
"""Decode + disassembly speed: wavelift vs llvm-objdump-19 on the largest fixture.

    python bench/bench_decode.py [--repeat N] [--file PATH] [--profile] [--json FILE]

The file is the largest compiler fixture that `wavelift disasm` handles (by size; an -O0 clang
code object).  Measured in one run:

- **wavelift listing**: `wavelift.isa.disasm_cli.code_object_listing` (every symbol of .text,
  decode + LLVM text, the same work as `wavelift disasm` minus writing to stdout), in-process.
  *first* = the first call in this process (includes loading the opcode tables), *best* = best
  of --repeat further calls.
- **wavelift decode**: `wavelift.isa.decode_one` over the same function bytes (Instruction objects,
  text included), best of --repeat.
- **llvm-objdump-19 -d** on the same file (output to a pipe, best of --repeat; includes process
  start, like `wavelift disasm` from a shell would).

Instructions/s = instructions listed / wall time; ratio = wavelift time / objdump time.
Target: wavelift > 200k instructions/s (best).  Exit status 0 = target met, 1 = below target,
3 = llvm-objdump-19 missing (wavelift numbers still printed).  --profile prints cProfile's top
functions of one listing run.
"""
from __future__ import annotations

import argparse
import cProfile
import glob
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from wavelift.isa import DecodeError, decode_one  # noqa: E402
from wavelift.isa.disasm_cli import code_object_listing  # noqa: E402

TARGET_RATE = 200_000
OBJDUMP = "llvm-objdump-19"


def largest_fixture():
    files = glob.glob(os.path.join(ROOT, "tests", "fixtures", "**", "*.hsaco"), recursive=True)
    return max(files, key=os.path.getsize)


def chunks(data):
    """(target, wave64, bytes) of every function, as the listing splits them."""
    from wavelift.driver.codeobject import CodeObject
    co = CodeObject(data)
    t = co.text
    body = co.section_data(t)
    addrs = sorted({s.value for s in co.symbols if s.section_index == t.index and s.name})
    w64 = {k.kd.wave_size == 64 for k in co.kernels} == {True}
    out = []
    for i, a in enumerate(addrs):
        end = addrs[i + 1] if i + 1 < len(addrs) else t.address + t.size
        out.append((co.target, w64, body[a - t.address:end - t.address]))
    return out


def decode_all(code, target, wave64):
    """Instructions of ``code``; bytes that do not decode are stepped over a dword at a time
    (as the listing and objdump do)."""
    out, pos, n = [], 0, len(code)
    while pos < n:
        try:
            ins = decode_one(code, pos, target, wave64)
        except DecodeError:
            pos += 4
            continue
        out.append(ins)
        pos += ins.size
    return out


def best(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--file", default=None)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    path = a.file or largest_fixture()
    data = open(path, "rb").read()

    t0 = time.perf_counter()
    lines = code_object_listing(data)
    first = time.perf_counter() - t0
    n = sum(1 for x in lines if x.startswith("\t"))
    t_list = best(lambda: code_object_listing(data), a.repeat)
    parts = chunks(data)
    t_dec = best(lambda: [decode_all(c, tg, w) for tg, w, c in parts], a.repeat)
    wave64 = parts[0][1] if parts else False

    res = {"file": os.path.relpath(path, ROOT), "bytes": len(data), "instructions": n,
           "wavelift_first_s": first, "wavelift_listing_s": t_list, "wavelift_decode_s": t_dec,
           "wavelift_listing_rate": n / t_list, "wavelift_decode_rate": n / t_dec}
    print(f"file: {res['file']} ({len(data)} bytes, {n} instructions, "
          f"{'wave64' if wave64 else 'wave32'})")
    print(f"wavelift listing: first {first * 1e3:8.1f} ms   best {t_list * 1e3:8.1f} ms   "
          f"{n / t_list:10,.0f} instructions/s")
    print(f"wavelift decode : {'':24} best {t_dec * 1e3:8.1f} ms   {n / t_dec:10,.0f} instructions/s")

    rc = 0
    if shutil.which(OBJDUMP):
        args = [OBJDUMP, "-d", path] + (["--mattr=+wavefrontsize64"] if wave64 else [])
        t_obj = best(lambda: subprocess.run(args, stdout=subprocess.PIPE, check=True), a.repeat)
        res.update(objdump_s=t_obj, objdump_rate=n / t_obj, ratio_listing=t_list / t_obj,
                   ratio_first=first / t_obj)
        print(f"llvm-objdump-19 : {'':24} best {t_obj * 1e3:8.1f} ms   {n / t_obj:10,.0f} instructions/s")
        print(f"ratio wavelift/objdump: best {t_list / t_obj:.2f}x, first {first / t_obj:.2f}x "
              f"(objdump includes its process start)")
    else:
        print(f"{OBJDUMP} not installed: no baseline")
        rc = 3
    ok = n / t_list > TARGET_RATE
    print(f"target > {TARGET_RATE:,} instructions/s: {'met' if ok else 'NOT met'}")
    if not ok and rc == 0:
        rc = 1
    if a.profile or not ok:
        pr = cProfile.Profile()
        pr.enable()
        code_object_listing(data)
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15)
        print("\ncProfile, one listing run, by own time:")
        print("\n".join(s.getvalue().splitlines()[:40]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
