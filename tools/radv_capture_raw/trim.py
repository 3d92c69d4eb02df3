#!/usr/bin/env python3
"""Make a raw radv_capture output directory small, losslessly.

usage: trim.py RAWDIR          (RAWDIR holds submit0/, submit1/, ... from radv_capture)

For every submitN/boNNNN_<va>.bin:
  - trailing zero bytes are cut (the file is then shorter than the BO's "size" in capture.json;
    the missing tail is zero); a BO that is all zero loses its file entirely (e.g. the 40 MiB
    scratch ring, the output buffers);
  - in submitN (N > 0), a .bin whose full bytes equal submit0's file of the same name is removed
    (radv_capture writes every live BO again for each submit; the null device runs nothing).
capture.json is left exactly as radv_capture wrote it. Each submitN/stored.json records, per BO
file name: size (the BO size), stored_bytes (length of the .bin kept, 0 = no file), sha256 of the
full untrimmed bytes, and same_as (a path relative to RAWDIR) where the bytes live in submit0.
"""

import hashlib
import json
import os
import sys


def main():
    raw = sys.argv[1]
    subs = sorted(d for d in os.listdir(raw) if d.startswith("submit"))
    full0 = {}
    for sub in subs:
        sd = os.path.join(raw, sub)
        cap = json.load(open(os.path.join(sd, "capture.json")))
        stored = {}
        for bo in cap["bos"]:
            fn = bo["file"]
            path = os.path.join(sd, fn)
            data = open(path, "rb").read()
            assert len(data) == bo["size"], (path, len(data), bo["size"])
            sha = hashlib.sha256(data).hexdigest()
            entry = {"va": bo["va"], "size": bo["size"], "sha256": sha}
            if sub == "submit0":
                full0[fn] = sha
            if sub != "submit0" and full0.get(fn) == sha:
                os.remove(path)
                entry["stored_bytes"] = 0
                entry["same_as"] = "submit0/" + fn
            else:
                end = len(data.rstrip(b"\0"))
                end = (end + 3) & ~3
                if end == 0:
                    os.remove(path)
                else:
                    with open(path, "wb") as f:
                        f.write(data[:end])
                entry["stored_bytes"] = end
                if end == 0:
                    entry["all_zero"] = True
            stored[fn] = entry
        with open(os.path.join(sd, "stored.json"), "w") as f:
            json.dump(
                {
                    "note": "see tools/radv_capture_raw/trim.py: a .bin holds the first "
                    "stored_bytes bytes of the BO, the rest is zero; stored_bytes 0 "
                    "means no file (all zero, or same_as names the file)",
                    "bos": stored,
                },
                f,
                indent=1,
                sort_keys=True,
            )
            f.write("\n")


if __name__ == "__main__":
    main()
