"""A cached CUDA build found from the module key alone (backends/cuda/stored.py; issue 24, 0009's
2026-12-05 amendment): no generation on a hit, the same module as generating gives, and every
mismatch or damaged entry falls back to generating.  NVRTC is replaced by a stand-in (no GPU, no
NVRTC needed); the program is vadd (clang -O2, wave32) as Device launches it, which has preloads."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from wavelift.backends import disk_cache
from wavelift.backends.cuda import codegen, stored
from wavelift.backends.cuda import compile as cc

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_cuda_build_tier import _vadd_program  # noqa: E402

ARCH = "sm_90"


def _fake_nvrtc(source, arch=cc.DEFAULT_ARCH):
    return b"\x7fELF cubin of " + hashlib.sha256(source.encode()).digest()


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setattr(cc, "nvrtc_compile", _fake_nvrtc)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path / "cuda"))
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "off")
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import module_key

    prog, cfg, base = _vadd_program()
    key = module_key(prog, cfg, "lane", "cuda")
    calls = []
    real = codegen.generate

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(codegen, "generate", counting)
    import wavelift.backends.cuda as C

    monkeypatch.setattr(C, "generate", counting)
    return (
        (lambda k=key: build_module(k, prog, cfg, "lane", arch=ARCH, base_address=base)),
        calls,
        key,
        tmp_path,
    )


def _same(a, b):
    assert a.cubin == b.cubin and a.source == b.source and a.slots == b.slots
    for x, y in zip(a.preloads, b.preloads, strict=True):
        assert [repr(o) for o in x] == [repr(o) for o in y]
        assert [[type(v) for v in o.attrs.values()] for o in x] == [
            [type(v) for v in o.attrs.values()] for o in y
        ]
        assert [o.instr for o in x] == [o.instr for o in y]
    # a load is the same object as its op in the plan where generation made it so
    ids_a = [[i for i, p in enumerate(a.preloads[1]) if p is o] for o in a.preloads[0]]
    ids_b = [[i for i, p in enumerate(b.preloads[1]) if p is o] for o in b.preloads[0]]
    assert ids_a == ids_b


def test_cached_build_skips_generation_and_equals_the_generated(env):
    build, calls, key, _ = env
    first = build()
    assert calls == [1] and first.compiled_by == "nvrtc" and first.preloads[0]  # vadd preloads
    again = build()
    assert calls == [1] and again.compiled_by == "disk"
    _same(first, again)


def test_cached_build_in_a_new_process(env):
    build, calls, key, tmp = env
    first = build()
    out = tmp / "out.json"
    child = f"""
import json, sys
sys.path.insert(0, {str(HERE)!r})
from wavelift.backends.cuda import codegen
import wavelift.backends.cuda as C
def boom(*a, **k):
    raise AssertionError("generated")
codegen.generate = C.generate = boom
from test_cuda_build_tier import _vadd_program
from wavelift.run.execute import module_key
prog, cfg, base = _vadd_program()
m = C.build_module(module_key(prog, cfg, "lane", "cuda"), prog, cfg, "lane", arch={ARCH!r}, base_address=base)
json.dump({{"how": m.compiled_by, "cubin": m.cubin.hex(), "source": m.source, "slots": m.slots,
           "pre": [[repr(o) for o in x] for x in m.preloads]}}, open({str(out)!r}, "w"))
"""
    e = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", child], env=e, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    assert got["how"] == "disk" and bytes.fromhex(got["cubin"]) == first.cubin
    assert got["source"] == first.source and [tuple(s) for s in got["slots"]] == list(first.slots)
    assert got["pre"] == [[repr(o) for o in x] for x in first.preloads]


def _entry(tmp, key, base):
    d = tmp / "cuda"
    return d, stored.entry_name(key, ARCH, base)


@pytest.mark.parametrize(
    "damage",
    ["garbage", "other_key", "bad_field", "pickle_like", "flipped_byte"],
)
def test_damaged_or_mismatched_entry_generates(env, damage):
    build, calls, key, tmp = env
    first = build()
    prog, cfg, base = _vadd_program()
    d, name = _entry(tmp, key, base)
    good = disk_cache.read(d, name, stored.SUFFIX)
    assert good is not None
    doc = json.loads(good)
    if damage == "garbage":
        disk_cache.write(d, name, stored.SUFFIX, b"\x00not json")
    elif damage == "other_key":
        doc["key"] = repr(("other",))
        disk_cache.write(d, name, stored.SUFFIX, json.dumps(doc).encode())
    elif damage == "bad_field":
        doc["slots"] = [["4", True]]
        disk_cache.write(d, name, stored.SUFFIX, json.dumps(doc).encode())
    elif damage == "pickle_like":
        doc["plan"][0][3] = [["value", ["obj", "os.system"]]]
        disk_cache.write(d, name, stored.SUFFIX, json.dumps(doc).encode())
    else:  # the data altered in place: its digest no longer matches
        digest = (d / f"{name}.sha256").read_bytes()[:64].decode()
        p = d / f"{name}-{digest[:16]}{stored.SUFFIX}"
        b = bytearray(p.read_bytes())
        b[10] ^= 1
        p.write_bytes(bytes(b))
    again = build()
    assert calls == [1, 1]
    _same(first, again)
    assert build().compiled_by == "disk" and calls == [1, 1]  # written over with a good entry


def test_source_entry_not_the_named_one_generates(env):
    build, calls, key, tmp = env
    first = build()
    prog, cfg, base = _vadd_program()
    d, name = _entry(tmp, key, base)
    disk_cache.write(d, name + "-src", ".cu", first.source.encode() + b"// other\n")  # whole, but not named
    again = build()
    assert calls == [1, 1]
    _same(first, again)
    assert build().compiled_by == "disk" and calls == [1, 1]


def test_missing_cubin_generates(env):
    build, calls, key, tmp = env
    first = build()
    for p in (tmp / "cuda").glob("*.cubin"):
        p.unlink()
    again = build()
    assert calls == [1, 1] and again.compiled_by == "nvrtc"
    _same(first, again)


@pytest.mark.parametrize(
    "setting, values",
    [
        ("WAVELIFT_CUDA_PASSES", ("off",)),
        ("WAVELIFT_CUDA_BLENDS", ("eager", "blocks")),  # (`atomics` is the default)
        ("WAVELIFT_CUDA_HOIST", ("access", "loops")),  # (`induction` is)
        ("WAVELIFT_CUDA_OCCUPANCY", ("1024",)),
        ("WAVELIFT_CUDA_OCCUPANCY_STEP", ("32",)),
        ("WAVELIFT_CUDA_LDS", ("direct",)),  # (`lanes` is the default)
        ("WAVELIFT_CUDA_BUDGET", ("checked",)),  # (`straight` is)
        ("WAVELIFT_CUDA_EXEC", ("every",)),  # (`known` is)
        ("WAVELIFT_CUDA_NAN", ("every",)),  # (`chain` is)
        ("WAVELIFT_CUDA_WAVESYNC", ("spaces", "commute")),
        ("WAVELIFT_CUDA_LDSBASE", ("kept",)),
        ("WAVELIFT_CUDA_OCCUPANCY_FULL", ("off", "auto")),  # (`on` is)
        ("WAVELIFT_CUDA_MAPMARK", ("span", "general")),  # (`group` is)
        ("WAVELIFT_CUDA_MAPFILL", ("atomic",)),  # (`store` is)
        ("WAVELIFT_CUDA_COUNT_SLOTS", ("1024", "16384")),
        ("WAVELIFT_CUDA_STATS", ("wave", "block", "pair")),
    ],
)
def test_changed_setting_misses(env, monkeypatch, setting, values):
    """The settings a stored build is keyed by, in one place: under each value in turn a build
    misses every entry stored before it (the default's and the other values': each value names
    an entry of its own)."""
    build, calls, key, tmp = env
    build()
    for v in values:
        monkeypatch.setenv(setting, v)
        build()
    assert calls == [1] * (1 + len(values))


def test_changed_key_arch_nvrtc_or_code_misses(env, monkeypatch):
    build, calls, key, tmp = env
    build()
    build(key + ("x",))
    assert calls == [1, 1]
    real = cc.nvrtc_version
    monkeypatch.setattr(cc, "nvrtc_version", lambda: "99.9")
    build()
    assert calls == [1, 1, 1]
    monkeypatch.setattr(cc, "nvrtc_version", real)
    assert build().compiled_by == "disk" and len(calls) == 3
    monkeypatch.setattr(stored, "code_fingerprint", lambda: "edited")  # a file of the code changed
    build()
    assert len(calls) == 4
    assert build(key).compiled_by == "disk" and len(calls) == 4
    # the arch and the base address are the entry name's own components
    assert stored.entry_name(key, "sm_80", 0) != stored.entry_name(key, "sm_90", 0)
    assert stored.entry_name(key, "sm_90", 0) != stored.entry_name(key, "sm_90", 256)


def test_no_disk_never_reads_or_writes(env):
    build, calls, key, tmp = env
    prog, cfg, base = _vadd_program()
    from wavelift.backends.cuda import build_module

    build_module(key, prog, cfg, "lane", arch=ARCH, base_address=base, use_disk=False)
    build_module(key, prog, cfg, "lane", arch=ARCH, base_address=base, use_disk=False)
    assert calls == [1, 1] and not (tmp / "cuda").exists()


# where a refuse_if op is numbered in a generated source (codegen's _refuse_if: instruction, ordinal)
_REFUSE_SITE = re.compile(r"wl_flag\(C, WL_REFUSE, (\d+)u, (\d+)u")


def test_gpu_check_precompiles_the_program_execute_runs(monkeypatch, tmp_path):
    """bench/gpu_check.py's workers build each fixture dispatch's module from
    test_cuda_backend.translate_dispatch into the disk cache its GPU half's execute_dispatch then
    finds by the module key alone: the stored source must be that of the program execute runs.
    gfx1030's ACO descriptor_types (an image store: its translation reads GB_ADDR_CONFIG) through
    the stand-in device, its kernel reporting NumPy's refusal (image.unsupported_format at the
    image store) by the stored source's numbering: the host names it as NumPy does, and the
    launched source numbers its refuse_if ops as the host's table.  Before (session 47's bad
    report with WAVELIFT_CUDA_MAP=bits, decision 0049's amendment h128): translate_dispatch
    translated without GB_ADDR_CONFIG, 78 refuse_if ops against execute's 75, and the host read
    ordinal 76 in a table of 75 (backend.bad_report)."""
    import copy
    import ctypes

    import fixture_dispatches as F
    import numpy as np
    import standin_cupy as S
    from test_cuda_backend import translate_dispatch

    import wavelift.backends.cuda as C
    from wavelift.run.execute import execute_dispatch, module_key

    monkeypatch.setattr(cc, "nvrtc_compile", _fake_nvrtc)
    monkeypatch.setattr(cc, "warm_split_pool", lambda ops: None)  # (no pool of processes)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path / "cuda"))
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "off")
    name = "gfx1030/aco/descriptor_types-w32.bin"
    mem, cfg = next((m, c) for n, m, c in F.aco_dispatches() if n == name)
    want = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", cache={}).refusal
    assert want is not None and want.code == "image.unsupported_format"
    # the worker: the module compiled (the stand-in NVRTC) and stored under the dispatch's key
    prog, base = translate_dispatch(copy.deepcopy(mem), cfg)
    C.build_module(module_key(prog, cfg, "lane", "cuda"), prog, cfg, "lane", arch=ARCH, base_address=base)
    table = codegen.refusal_table(prog)  # (what the stored source numbers)
    at = prog.instructions
    named = [(code, f"offset {at[i].offset:#x}: {at[i].text} ({why})") for i, why, code in table]
    k = named.index((want.code, want.message))  # (runtime._raise_flags's name of refuse_if k)

    def kernel(arena, written, ws, we, wo, consts):  # (the kernel's wl_flag_ of refuse_if k)
        status = (ctypes.c_uint32 * 16).from_address(int(consts["WL_STATUS"][:8].view(np.uint64)[0]))
        status[0] |= codegen.WL_REFUSE
        status[5], status[1], status[2], status[3] = codegen.WL_REFUSE, table[k][0], k, 0

    launched = []
    real = C._stored_build
    monkeypatch.setattr(C, "_stored_build", lambda *a: launched.append(real(*a)) or launched[-1])
    with S.installed() as state:
        state.kernel = kernel
        got = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache={}).refusal
    assert [m.compiled_by for m in launched] == ["disk"]  # (the worker's module: the path under test)
    assert got is not None and (got.code, got.message) == (want.code, want.message)
    m = launched[0]
    sites = [(int(a), int(b)) for a, b in _REFUSE_SITE.findall(m.source)]
    assert sites == [(ins, j) for j, (ins, _, _) in enumerate(codegen.refusal_table(m.program))]
