#!/usr/bin/env python3
"""Decode + disassembly speed: wavelift vs llvm-objdump-19 on the largest fixture.

    python bench/bench_decode.py [--repeat N] [--file PATH] [--profile] [--json FILE]

The file is the largest compiler fixture that `wavelift disasm` handles (by size; an -O0 clang
code object).  Measured in one run (instructions/s = instructions / wall time, best of --repeat):

- **first listing**: the first `wavelift.isa.disasm_cli.code_object_listing` call in this process
  (loads the opcode tables and compiles the per-opcode decoders it meets).
- **cold decode** (the headline, checked against the target): `wavelift.isa.decode_one` over
  every function's bytes with the result cache off (`decoder.set_result_cache(False)`): every
  instruction is decoded from scratch — fields, operands, LLVM text, Instruction.  Tables and
  compiled per-opcode decoders are already loaded (they are per process, not per instruction).
- **warm decode**: the same with the result cache on, after one pass has filled it (a repeated
  instruction is a copy with its offset swapped).
- **listing**: `code_object_listing` (every symbol of .text, decode + text, the same work as
  `wavelift disasm` minus writing to stdout), result cache on and warm.
- **llvm-objdump-19 -d** on the same file (output to a pipe; includes process start, like
  `wavelift disasm` from a shell would).

Ratio = wavelift time / objdump time.  Target: cold decode > 200k instructions/s.  Exit status
0 = target met, 1 = below target, 3 = llvm-objdump-19 missing (wavelift numbers still printed).
--profile prints cProfile's top functions of one cold decode pass.
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
from wavelift.isa.decoder import set_result_cache  # noqa: E402
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
        out.append((co.target, w64, body[a - t.address : end - t.address]))
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

    set_result_cache(True)
    t0 = time.perf_counter()
    lines = code_object_listing(data)
    first = time.perf_counter() - t0
    n = sum(1 for x in lines if x.startswith("\t"))
    parts = chunks(data)
    wave64 = parts[0][1] if parts else False
    run = lambda: [decode_all(c, tg, w) for tg, w, c in parts]  # noqa: E731
    assert sum(map(len, run())) == n, "decode and listing disagree on the instruction count"
    set_result_cache(False)
    try:
        t_cold = best(run, a.repeat)
    finally:
        set_result_cache(True)
    run()
    t_warm = best(run, a.repeat)
    t_list = best(lambda: code_object_listing(data), a.repeat)

    res = {
        "file": os.path.relpath(path, ROOT),
        "bytes": len(data),
        "instructions": n,
        "wavelift_first_s": first,
        "wavelift_cold_decode_s": t_cold,
        "wavelift_warm_decode_s": t_warm,
        "wavelift_listing_s": t_list,
        "wavelift_cold_decode_rate": n / t_cold,
        "wavelift_warm_decode_rate": n / t_warm,
        "wavelift_listing_rate": n / t_list,
    }
    print(f"file: {res['file']} ({len(data)} bytes, {n} instructions, {'wave64' if wave64 else 'wave32'})")
    print(f"wavelift first listing (tables+compile)  {first * 1e3:8.1f} ms")
    print(
        f"wavelift cold decode (no result cache)   {t_cold * 1e3:8.1f} ms   {n / t_cold:10,.0f} instructions/s"
    )
    print(
        f"wavelift warm decode (result cache)      {t_warm * 1e3:8.1f} ms   {n / t_warm:10,.0f} instructions/s"
    )
    print(
        f"wavelift listing (warm)                  {t_list * 1e3:8.1f} ms   {n / t_list:10,.0f} instructions/s"
    )

    rc = 0
    if shutil.which(OBJDUMP):
        args = [OBJDUMP, "-d", path] + (["--mattr=+wavefrontsize64"] if wave64 else [])
        t_obj = best(lambda: subprocess.run(args, stdout=subprocess.PIPE, check=True), a.repeat)
        res.update(
            objdump_s=t_obj,
            objdump_rate=n / t_obj,
            ratio_cold=t_cold / t_obj,
            ratio_listing=t_list / t_obj,
            ratio_first=first / t_obj,
        )
        print(
            f"llvm-objdump-19 -d                       {t_obj * 1e3:8.1f} ms   {n / t_obj:10,.0f} instructions/s"
        )
        print(
            f"ratio wavelift/objdump: cold {t_cold / t_obj:.2f}x, listing {t_list / t_obj:.2f}x, "
            f"first {first / t_obj:.2f}x (objdump includes its process start)"
        )
    else:
        print(f"{OBJDUMP} not installed: no baseline")
        rc = 3
    ok = n / t_cold > TARGET_RATE
    print(f"target: cold decode > {TARGET_RATE:,} instructions/s: {'met' if ok else 'NOT met'}")
    if not ok and rc == 0:
        rc = 1
    if a.profile or not ok:
        set_result_cache(False)
        pr = cProfile.Profile()
        pr.enable()
        run()
        pr.disable()
        set_result_cache(True)
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15)
        print("\ncProfile, one cold decode pass, by own time:")
        print("\n".join(s.getvalue().splitlines()[:40]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
