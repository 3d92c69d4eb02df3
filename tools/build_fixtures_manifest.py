#!/usr/bin/env python3
"""Write tests/fixtures/manifest.json from the command logs of tools/build_fixtures.sh.

Build-time only (uses llvm-readelf-19 / llvm-objdump-19 and PyYAML to describe the clang code
objects). Tests read manifest.json; they never run this.

Inputs:  tests/fixtures/build_log/{clang,aco}.tsv  (kind, path, source, target, wave, opt, scratch,
         command), tests/fixtures/radv/*/ (raw RADV captures).
Output:  tests/fixtures/manifest.json with
  binaries[]       one entry per code object: path, kind ("clang" | "aco" | "radv-llvm"), source,
                   target, wave_size, opt_level, scratch_mode, kernels, command, sha256, size, and
                   - clang: per-kernel HSA metadata + kernel-descriptor registers + what the code uses
                   - aco/radv-llvm: json/listing/spv paths and a few facts from the json
  radv_captures[]  one entry per tests/fixtures/radv/<name>/ directory
"""

import hashlib
import json
import os
import re
import struct
import subprocess

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FIX = "tests/fixtures"


def sha256(path):
    return hashlib.sha256(open(os.path.join(ROOT, path), "rb").read()).hexdigest()


def read_tsv(name):
    p = os.path.join(ROOT, FIX, "build_log", name)
    if not os.path.exists(p):
        return []
    rows = []
    for line in open(p):
        line = line.rstrip("\n")
        if line:
            rows.append(line.split("\t"))
    return rows


# ------------------------------------------------------------------ ELF (AMDHSA code object) --
def elf_symbols(data):
    """(sections, symbols) of an ELF64 little-endian file."""
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, off
        )
        secs.append(
            dict(name=name, type=typ, addr=addr, offset=offset, size=size, link=link, entsize=entsize)
        )
    shstr = secs[e_shstrndx]

    def cstr(sec, off):
        start = sec["offset"] + off
        return data[start : data.index(b"\0", start)].decode()

    for s in secs:
        s["name"] = cstr(shstr, s["name"])
    syms = []
    for s in secs:
        if s["type"] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s["link"]]
        for i in range(s["size"] // 24):
            nm, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, s["offset"] + i * 24)
            syms.append(
                dict(
                    name=cstr(strtab, nm),
                    type=info & 0xF,
                    bind=info >> 4,
                    shndx=shndx,
                    value=value,
                    size=size,
                )
            )
    return secs, syms


def kernel_descriptors(path):
    data = open(os.path.join(ROOT, path), "rb").read()
    secs, syms = elf_symbols(data)
    funcs = {s["name"]: s for s in syms if s["type"] == 2}  # STT_FUNC
    out = {}
    for s in syms:
        if not s["name"].endswith(".kd"):
            continue
        sec = secs[s["shndx"]]
        off = sec["offset"] + (s["value"] - sec["addr"])
        kd = data[off : off + 64]
        grp, priv, karg = struct.unpack_from("<III", kd, 0)
        (entry,) = struct.unpack_from("<q", kd, 16)
        rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", kd, 44)
        (props,) = struct.unpack_from("<H", kd, 56)
        kname = s["name"][:-3]
        f = funcs.get(kname)
        out[kname] = {
            "kd_symbol": s["name"],
            "kd_address": "0x%x" % s["value"],
            "entry_address": "0x%x" % (s["value"] + entry),
            "entry_matches_symbol": bool(f and f["value"] == s["value"] + entry),
            "kd_group_segment_fixed_size": grp,
            "kd_private_segment_fixed_size": priv,
            "kd_kernarg_size": karg,
            "compute_pgm_rsrc1": "0x%08x" % rsrc1,
            "compute_pgm_rsrc2": "0x%08x" % rsrc2,
            "compute_pgm_rsrc3": "0x%08x" % rsrc3,
            "kernel_code_properties": "0x%04x" % props,
        }
    func_names = sorted(n for n, f in funcs.items() if f["size"] > 0)
    return out, func_names


def hsa_metadata(path):
    txt = subprocess.run(
        ["llvm-readelf-19", "--notes", os.path.join(ROOT, path)], capture_output=True, text=True, check=True
    ).stdout
    m = re.search(r"^\s*---\n(.*?)^\s*\.\.\.$", txt, re.S | re.M)
    return yaml.safe_load(m.group(1))


TAGS = [
    ("dpp", re.compile(r"_dpp\b|\bdpp|quad_perm|row_")),
    ("sdwa", re.compile(r"_sdwa\b")),
    ("permlane", re.compile(r"^v_permlane")),
    ("packed_math", re.compile(r"^v_pk_")),
    ("call", re.compile(r"^s_swappc_b64")),
    ("return", re.compile(r"^s_setpc_b64")),
    ("lds", re.compile(r"^ds_")),
    ("barrier", re.compile(r"^s_barrier")),
    ("global_atomic", re.compile(r"^global_atomic")),
    ("lds_atomic", re.compile(r"^ds_(add|sub|min|max|and|or|xor|cmpst|wrxchg|inc|dec|rsub)")),
    ("f64", re.compile(r"_f64\b")),
    ("writelane", re.compile(r"^v_writelane")),
    ("readlane", re.compile(r"^v_readlane|^v_readfirstlane")),
    ("setreg_flat_scratch", re.compile(r"^s_setreg.*FLAT_SCR")),
    ("div_scale", re.compile(r"^v_div_scale")),
]


def scratch_form(mnem, ins):
    """'(offen)' for MUBUF with a VGPR offset; for scratch_*: '(vaddr)', '(saddr)', '(sv)' or
    '(st)' (no address register: offset only) from the vaddr/saddr operands."""
    if mnem.startswith("buffer_"):
        return "(offen)" if " offen" in ins else ""
    ops = [o.strip() for o in ins[len(mnem) :].split(",")]
    if "load" in mnem:
        vaddr, saddr = ops[1], ops[2].split()[0]
    else:
        vaddr, saddr = ops[0], ops[2].split()[0]
    v, s = vaddr != "off", saddr != "off"
    return "(sv)" if v and s else "(vaddr)" if v else "(saddr)" if s else "(st)"


def disasm_facts(path, gfx):
    txt = subprocess.run(
        ["llvm-objdump-19", "-d", "--mcpu=" + gfx, os.path.join(ROOT, path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    funcs = {}
    cur = None
    for line in txt.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), {"instructions": 0, "scratch_ops": {}, "tags": set()})
            continue
        if cur is None or not line.startswith("\t"):
            continue
        ins = line.strip().split("//")[0].strip()
        if not ins:
            continue
        mnem = ins.split()[0]
        cur["instructions"] += 1
        # scratch: all scratch_* ops; buffer_* memory ops (OpenCL global memory uses global_*,
        # so every MUBUF load/store in these kernels is a private/scratch access)
        if mnem.startswith("scratch_") or (
            mnem.startswith("buffer_") and ("load" in mnem or "store" in mnem)
        ):
            key = mnem + scratch_form(mnem, ins)
            cur["scratch_ops"][key] = cur["scratch_ops"].get(key, 0) + 1
        for tag, rx in TAGS:
            if rx.search(ins):
                cur["tags"].add(tag)
    for f in funcs.values():
        f["tags"] = sorted(f["tags"])
        f["scratch_ops"] = dict(sorted(f["scratch_ops"].items()))
    return funcs


HIDDEN_LAYOUTS = []


def layout_index(layout):
    """hidden_* kernel arguments are the same few layouts everywhere: store each once in
    manifest["hidden_arg_layouts"] and refer to it by index (null: no hidden arguments)."""
    if not layout:
        return None
    if layout not in HIDDEN_LAYOUTS:
        HIDDEN_LAYOUTS.append(layout)
    return HIDDEN_LAYOUTS.index(layout)


def clang_entry(row):
    kind, path, source, target, wave, opt, scratch, cmd = row
    meta = hsa_metadata(path)
    kds, func_names = kernel_descriptors(path)
    facts = disasm_facts(path, target)
    kernels = []
    for k in sorted(meta["amdhsa.kernels"], key=lambda k: k[".name"]):
        name = k[".name"]
        e = {
            "name": name,
            "symbol": k[".symbol"],
            # [offset, size, value_kind, type_name]; hidden_* arguments only as [offset, size, kind]
            "args": [
                [a[".offset"], a[".size"], a[".value_kind"]]
                + ([a[".type_name"]] if ".type_name" in a else [])
                for a in k.get(".args", [])
                if not a[".value_kind"].startswith("hidden_")
            ],
            "hidden_args": layout_index(
                [
                    [a[".offset"], a[".size"], a[".value_kind"][7:]]
                    for a in k.get(".args", [])
                    if a[".value_kind"].startswith("hidden_")
                ]
            ),
            "kernarg_segment_size": k[".kernarg_segment_size"],
            "group_segment_fixed_size": k[".group_segment_fixed_size"],
            "private_segment_fixed_size": k[".private_segment_fixed_size"],
            "uses_dynamic_stack": k.get(".uses_dynamic_stack", False),
            "sgpr_count": k[".sgpr_count"],
            "vgpr_count": k[".vgpr_count"],
            "sgpr_spill_count": k[".sgpr_spill_count"],
            "vgpr_spill_count": k[".vgpr_spill_count"],
            "wavefront_size": k[".wavefront_size"],
            "max_flat_workgroup_size": k[".max_flat_workgroup_size"],
        }
        if ".reqd_workgroup_size" in k:
            e["reqd_workgroup_size"] = k[".reqd_workgroup_size"]
        e.update(kds.get(name, {}))
        f = facts.get(name)
        if f:
            e["instructions"] = f["instructions"]
            e["scratch_ops"] = f["scratch_ops"]
            e["tags"] = f["tags"]
        kernels.append(e)
    knames = [k["name"] for k in kernels]
    other = {n: facts[n] for n in func_names if n not in knames and n in facts}
    ent = {
        "path": path,
        "kind": kind,
        "source": source,
        "include": FIX + "/opencl/wl_builtins.h",
        "target": target,
        "wave_size": int(wave[1:]),
        "opt_level": opt,
        "scratch_mode": scratch,
        "kernels": knames,
        "command": cmd,
        "size": os.path.getsize(os.path.join(ROOT, path)),
        "sha256": sha256(path),
        "kernel_info": kernels,
    }
    if other:
        ent["functions"] = other
    return ent


def aco_entry(row):
    kind, prefix, source, target, wave, _opt, _scr, cmd = row
    j = json.load(open(os.path.join(ROOT, prefix + ".json")))
    addressing = j["scratch"].get("addressing", "")
    mode = (
        "flat"
        if addressing.startswith("flat")
        else ("mubuf" if "mubuf" in addressing.lower() or "buffer" in addressing.lower() else addressing)
    )
    return {
        "path": prefix + ".bin",
        "kind": kind,
        "source": source,
        "target": target,
        "family": j["radv_force_family"],
        "wave_size": j["wave_size"],
        "opt_level": None,
        "scratch_mode": mode if j["scratch"]["enabled"] else "none",
        "scratch_addressing": addressing,
        "kernels": ["main"],
        "command": cmd,
        "json": prefix + ".json",
        "listing": prefix + ".s",
        "spirv": prefix + ".spv",
        "size": os.path.getsize(os.path.join(ROOT, prefix + ".bin")),
        "sha256": sha256(prefix + ".bin"),
        "compiler": j["compiler"],
        "local_size": j["local_size"],
        "scratch_bytes_per_lane": j["scratch"]["bytes_per_lane"],
        "lds_bytes": j["lds"]["bytes"],
        "rsrc1": j["registers"]["rsrc1"],
        "rsrc2": j["registers"]["rsrc2"],
        "cross_check_problems": len(j["cross_checks"].get("problems", [])),
    }


FAMILY_TARGET = {"navi21": "gfx1030", "navi10": "gfx1010"}  # RADV_FORCE_FAMILY of a capture


def capture_entries():
    base = os.path.join(ROOT, FIX, "radv")
    out = []
    if not os.path.isdir(base):
        return out
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        if not os.path.isdir(d):
            continue
        rel = FIX + "/radv/" + name
        cmd = [
            l for l in open(os.path.join(d, "command.txt")).read().splitlines() if l and not l.startswith("#")
        ]
        spv = sorted(f for f in os.listdir(d) if f.endswith(".spv"))
        subs = sorted(s for s in os.listdir(os.path.join(d, "raw")) if s.startswith("submit"))
        cap0 = json.load(open(os.path.join(d, "raw", "submit0", "capture.json")))
        fam = (
            [re.search(r"RADV_FORCE_FAMILY=(\w+)", l).group(1) for l in cmd if "RADV_FORCE_FAMILY=" in l]
            or ["navi21"]
        )[0]
        out.append(
            {
                "path": rel,
                "kind": "radv-capture",
                "family": fam,
                "target": FAMILY_TARGET[fam],
                "spirv": rel + "/" + spv[0],
                "source": FIX + "/glsl/" + spv[0][:-4] + ".comp",
                "submits": [rel + "/raw/" + s for s in subs],
                "ibs": cap0["submits"][0]["ibs"],
                "commands": cmd,
            }
        )
    return out


def dump(man):
    """Readable and compact: one line per field of a binary, one line per kernel."""
    c = lambda v: json.dumps(v, separators=(", ", ": "))
    out = ["{"]
    keys = list(man)
    for i, k in enumerate(keys):
        end = "," if i < len(keys) - 1 else ""
        v = man[k]
        if isinstance(v, list) and v and isinstance(v[0], dict):
            out.append(" %s: [" % c(k))
            for j, e in enumerate(v):
                out.append("  {")
                ek = list(e)
                for m, f in enumerate(ek):
                    fend = "," if m < len(ek) - 1 else ""
                    if f == "kernel_info":
                        out.append("   %s: [" % c(f))
                        out.append(",\n".join("    " + c(x) for x in e[f]))
                        out.append("   ]" + fend)
                    else:
                        out.append("   %s: %s%s" % (c(f), c(e[f]), fend))
                out.append("  }" + ("," if j < len(v) - 1 else ""))
            out.append(" ]" + end)
        else:
            out.append(" %s: %s%s" % (c(k), c(v), end))
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    binaries = [clang_entry(r) for r in read_tsv("clang.tsv")]
    binaries += [aco_entry(r) for r in read_tsv("aco.tsv")]
    binaries.sort(key=lambda e: e["path"])
    clang_ver = subprocess.run(["clang-19", "--version"], capture_output=True, text=True).stdout.splitlines()[
        0
    ]
    man = {
        "format": "wavelift-fixtures 1",
        "generated_by": "tools/build_fixtures.sh (manifest: tools/build_fixtures_manifest.py)",
        "tools": {
            "clang": clang_ver,
            "mesa": "Mesa 22.3.6 (Debian 12 mesa-vulkan-drivers "
            "22.3.6-1+deb12u2), via tools/aco_compile and tools/radv_capture",
        },
        "binaries": binaries,
        "radv_captures": capture_entries(),
        "hidden_arg_layouts": HIDDEN_LAYOUTS,
    }
    with open(os.path.join(ROOT, FIX, "manifest.json"), "w") as f:
        f.write(dump(man))
    print("%s/manifest.json: %d binaries, %d captures" % (FIX, len(binaries), len(man["radv_captures"])))


if __name__ == "__main__":
    main()
