"""bench/gpu_check.py's fixture comparison split over two machines: --prepare DIR (the CPU half:
modules built into a disk cache, NumPy run, memory kept as digests) and --prepared DIR (the CUDA
half against DIR's summaries).  The digest comparison names the range and the chunk that differ;
the round trip runs --prepare in this process (--jobs 0) with NVRTC replaced by a stand-in, and
--prepared with the CUDA half replaced by NumPy (no GPU): the modules come from DIR's cache and
generation entries, and a flipped byte, an unprepared item and a changed input are reported."""

from __future__ import annotations

import gzip
import hashlib
import json
import pathlib
import pickle
import sys
import tarfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_check as G  # noqa: E402

CHUNK = G.CHUNK


def _mem(**ranges):
    return [(k, bytes(v)) for k, v in ranges.items()]


def _digests(mem):
    return G._stored_memory(mem, keep_bytes=False)


def test_memdiff_by_digest_names_the_range_and_the_chunk():
    a = bytearray(range(256)) * (3 * CHUNK // 256 + 7)  # three chunks and a part
    numpy = _mem(first=b"\1\2\3", big=a)
    assert G._memdiff(_digests(numpy), numpy) is None  # (stored NumPy, live CUDA)
    assert G._memdiff(_digests(numpy), _digests(numpy)) is None
    b = bytearray(a)
    b[2 * CHUNK + 5] ^= 1
    got = G._memdiff(_digests(numpy), _mem(first=b"\1\2\3", big=b))
    assert got == "big chunk 2 (+0x20000) differs (1 of 4 64 KiB chunks differ)"
    b[len(b) - 1] ^= 0x80  # (the last, partial chunk)
    got = G._memdiff(_digests(numpy), _mem(first=b"\1\2\3", big=b))
    assert got == "big chunk 2 (+0x20000) differs (2 of 4 64 KiB chunks differ)"
    # bytes on both sides (the live path, and the atomics items' kept bytes): the byte itself
    assert G._memdiff(numpy, _mem(first=b"\1\2\3", big=b)) == "big+0x20005 (2 bytes differ)"
    kept = G._stored_memory(numpy, keep_bytes=True)
    assert G._memdiff(kept, _mem(first=b"\1\2\3", big=b)) == "big+0x20005 (2 bytes differ)"
    # a range missing, another size
    got = G._memdiff(_digests(numpy), _mem(big=a))
    assert got == "memory ranges differ: numpy only ['first'], cuda only []"
    assert G._memdiff(_digests(numpy), _mem(first=b"\1\2", big=a)) == "first: 3 vs 2 bytes"
    # a damaged record: the whole differs, no chunk does
    bad = _digests(numpy)
    bad[1]["sha256"] = "0" * 64
    assert G._memdiff(bad, numpy) == "big: its SHA-256 differs, no chunk's does"


def test_compare_is_one_function_for_both_paths():
    """compare() on a stored (digest) NumPy summary and a live CUDA one: every field it reads."""
    mem = _mem(out=b"\0" * 8)
    s1 = dict(
        outcome="landed",
        refusal="None",
        escapes=0,
        spans=[[16, 8]],
        stats=dict(instructions=10, lane_instructions=320, waves=1),
        memory=_digests(mem),
    )
    live = {**s1, "memory": mem}
    assert G.compare("x", None, s1, live) == ("equal", "")
    for change, why in [
        (dict(outcome="dispatch.budget_exceeded", refusal="dispatch.budget_exceeded: ..."), "numpy: None"),
        (dict(escapes=1), "escapes 0 vs 1"),
        (dict(spans=[[16, 4]]), "write spans differ"),
        (dict(stats=dict(instructions=10, lane_instructions=321, waves=1)), "lane_instructions 320 vs 321"),
        (dict(memory=_mem(out=b"\0" * 7 + b"\1")), "memory: out chunk 0 (+0x0) differs"),
    ]:
        match, got = G.compare("x", None, s1, {**live, **change})
        assert match == "DIFFERENT" and why in got, (change, got)
    # an atomics item is race-ok only where nothing but its racy memory differs
    racy = dict(memory=_mem(out=b"\0" * 8, counters=b"\1"), stats={**s1["stats"], "waves": 2})
    s3 = {**s1, "memory": _digests(_mem(out=b"\0" * 8, counters=b"\0"))}
    match, got = G.compare("k:atomics:small", None, s3, {**live, **racy})
    assert (
        match == "DIFFERENT"
        and got == "waves 1 vs 2; memory: counters chunk 0 (+0x0) differs (1 of 1 64 KiB chunks differ)"
    )


ITEMS = ["gfx1010/basic-O2-w32-flat:atomics:small", "gfx1030/aco/fullscreen-w32.bin"]  # (collected so)
UNPREPARED = "gfx1030/aco/push_consts_ubo-w32.bin"


def _fake_nvrtc(source, arch="sm_90"):
    return b"\x7fELF cubin of " + hashlib.sha256(source.encode()).digest()


def test_prepare_and_prepared_round_trip(monkeypatch, tmp_path):
    from test_cuda_backend import translate_dispatch

    import wavelift.backends.cuda as C
    import wavelift.run.execute as X
    from wavelift.backends import disk_cache
    from wavelift.backends.cuda import compile as cc
    from wavelift.backends.cuda import stored

    # --prepare, in this process, NVRTC a stand-in, the lean siblings built (the cache entries
    # tracked by wrapping disk_cache's read and write in this process: undone after)
    for f in ("read_digest", "write"):
        monkeypatch.setattr(disk_cache, f, getattr(disk_cache, f))
    monkeypatch.setattr(G, "_TRACKED", [])
    monkeypatch.setattr(cc, "nvrtc_compile", _fake_nvrtc)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path / "unused"))  # (restored after: the
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "auto")  # worker sets both in this process)
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    monkeypatch.setattr(G, "REPORT", {"fixtures": [], "bench": [], "compile": {}, "errors": []})
    scratch = tmp_path / "scratch.pkl.gz"
    scratch.write_bytes(gzip.compress(pickle.dumps([])))
    d = tmp_path / "gc"
    only = ",".join(ITEMS)
    common = ["--skip-bench", "--scratch-dispatches", str(scratch)]
    args = G.parse(["--prepare", str(d), "--arch", "sm_90", "--jobs", "0", "--only", only, *common])
    assert G.prepare(args) == 0
    assert sorted(p.name for p in d.iterdir()) == [G.CACHE_ARCHIVE, G.PREPARED]
    man = json.loads(gzip.decompress((d / G.PREPARED).read_bytes()))
    assert [r["name"] for r in man["items"]] == ITEMS and man["arch"] == "sm_90"
    for r in man["items"]:
        (m,) = r["modes"]
        assert m["compiled_by"] == "nvrtc" and m["lean"][1] == "nvrtc"
        mem = m["summary"]["memory"]
        assert all(("data" in e) == (":atomics:" in r["name"]) for e in mem)  # (bytes: atomics only)

    # --prepared: the CUDA half replaced by NumPy, each module built as execute builds it (from
    # DIR's cache only: NVRTC refuses), in a tree whose code fingerprint differs (other mtimes)
    def no_nvrtc(*a, **k):
        raise AssertionError("NVRTC in --prepared")

    monkeypatch.setattr(cc, "nvrtc_compile", no_nvrtc)
    monkeypatch.setattr(stored, "code_fingerprint", lambda: "a copy of the tree: other mtimes")
    real = X.execute_dispatch
    builds = []
    flip: list = []

    def cuda_by_numpy(memory, config, index=0, backend="numpy", mode="wave", cache=None):
        if backend == "cuda":
            prog, base = translate_dispatch(memory, config)
            key = X.module_key(prog, config, mode, "cuda")
            mod = C.build_module(key, prog, config, mode, arch="sm_90", base_address=base)
            builds.append((mod.compiled_by, mod.variant(True, proved=True).compiled_by))
        r = real(memory, config, index, "numpy", mode, cache)
        for x in memory if backend == "cuda" else ():
            if x.name in flip:
                x.data[-1] ^= 1
        return r

    monkeypatch.setattr(X, "execute_dispatch", cuda_by_numpy)

    def prepared(only, where=d):
        monkeypatch.setattr(G, "T0", time.perf_counter())
        monkeypatch.setattr(G, "REPORT", {"fixtures": [], "bench": [], "compile": {}, "errors": []})
        args = G.parse(["--prepared", str(where), "--only", only, *common])
        fx = G.start_fixtures(args, "sm_90")
        G.finish_fixtures(fx, args)
        return G.REPORT

    rep = prepared(only + "," + UNPREPARED)
    assert rep["fixture_counts"] == dict(
        equal=2, DIFFERENT=0, error=0, skipped=0, unprepared=1, **{"race-ok": 0}
    )
    assert builds == [("disk", "disk")] * 2
    assert rep["prepared"]["builds"] == dict(
        stored=2, generated=0, cubin_disk=2, nvrtc_here=0, nvrtc_here_s=0
    )
    assert rep["unprepared"] == [dict(name=UNPREPARED, why="not in the prepared DIR")]
    assert stored.code_fingerprint() == "a copy of the tree: other mtimes"  # (undone)
    # --split-prepared: two part DIRs of one item each, each with its item's cache entries; a
    # part runs its own item only (the other is neither run nor reported unprepared)
    # (DIR's recorded scratch dispatches, as (name, memory, config): each goes with its item's
    # part, one of no item with none)
    recorded = [(ITEMS[0], "m0", "c0"), ("scratch-test#7:wave", "m7", "c7"), (ITEMS[1], "m1", "c1")]
    (d / G.SCRATCH_NAME).write_bytes(gzip.compress(pickle.dumps(recorded)))
    assert G.split_prepared(G.parse(["--split-prepared", str(d), "--parts", "2"])) == 0
    (d / G.SCRATCH_NAME).unlink()
    seen = []
    for k in (1, 2):
        part = d / f"part-{k}-of-2"
        pm = json.loads(gzip.decompress((part / G.PREPARED).read_bytes()))
        ((r,),) = [pm["items"]]
        assert pm["part"] == f"{k}/2"
        assert pickle.loads(gzip.decompress((part / G.SCRATCH_NAME).read_bytes())) == [
            x for x in recorded if x[0] == r["name"]
        ]
        with tarfile.open(part / G.CACHE_ARCHIVE) as tar:
            names = set(tar.getnames())
        assert {G._cache_entry(n) for n in names} == set(r["modes"][0]["entries"])
        builds.clear()
        rep = prepared(only, part)
        assert rep["fixture_counts"] == dict(
            equal=1, DIFFERENT=0, error=0, skipped=0, unprepared=0, **{"race-ok": 0}
        ), rep["fixture_counts"]
        assert [x["name"] for x in rep["fixtures"]] == [r["name"]] and builds == [("disk", "disk")]
        seen.append(r["name"])
    assert sorted(seen) == sorted(ITEMS)
    # the last byte of an input flipped in each CUDA result
    flip[:] = ["buffer1", "in"]
    rep = prepared(only)
    rows = {r["name"]: r for r in rep["fixtures"]}
    assert [rows[n]["match"] for n in ITEMS] == ["DIFFERENT", "DIFFERENT"]
    assert rows[ITEMS[0]]["why"] == "memory: in+0x51f (1 bytes differ)"  # (the atomics item's bytes)
    assert rows[ITEMS[1]]["why"] == "memory: buffer1 chunk 0 (+0x0) differs (1 of 1 64 KiB chunks differ)"
    # an input changed since --prepare: reported, not compared
    man["items"][0]["input"] = "0" * 64
    (d / G.PREPARED).write_bytes(gzip.compress(json.dumps(man).encode()))
    flip.clear()
    rep = prepared(only)
    assert rep["fixture_counts"]["unprepared"] == 1 and rep["fixture_counts"]["equal"] == 1
    assert rep["unprepared"][0]["name"] == ITEMS[0] and "inputs differ" in rep["unprepared"][0]["why"]

    # --prepare again into DIR, one item: its cache seeded with DIR's (no NVRTC: refused), the
    # archive holding that item's entries only (its generation entry, source, cubin, lean cubin:
    # a digest and a data file each), and --prepared of it finds them all
    args = G.parse(["--prepare", str(d), "--arch", "sm_90", "--jobs", "0", "--only", ITEMS[1], *common])
    assert G.prepare(args) == 0
    man = json.loads(gzip.decompress((d / G.PREPARED).read_bytes()))
    ((m,),) = [r["modes"] for r in man["items"]]
    assert m["compiled_by"] == "disk" and m["lean"][1] == "disk" and len(m["entries"]) == 4, m["entries"]
    with tarfile.open(d / G.CACHE_ARCHIVE) as tar:
        assert len(tar.getnames()) == 8
    rep = prepared(ITEMS[1])
    assert rep["fixture_counts"]["equal"] == 1 and rep["prepared"]["builds"]["nvrtc_here"] == 0


def test_prepared_dir_of_other_code_warns(monkeypatch, tmp_path, capsys):
    """A DIR made by other code is named in a warning (and its generation entries not taken)."""
    import io

    man = dict(
        version=G.PREPARED_VERSION,
        made="then",
        git="abc+dirty",
        code="0" * 64,
        stored_code="x",
        arch="sm_90",
        versions=G._versions(),
        settings=G._settings_env(),
        items=[],
    )
    d = tmp_path / "gc"
    d.mkdir()
    (d / G.PREPARED).write_bytes(gzip.compress(json.dumps(man).encode()))
    with tarfile.open(d / G.CACHE_ARCHIVE, "w:xz") as tar:
        tar.addfile(tarfile.TarInfo("empty"), io.BytesIO(b""))
    monkeypatch.setattr(G, "REPORT", {"fixtures": [], "bench": [], "compile": {}, "errors": []})
    args = G.parse(["--prepared", str(d)])
    from wavelift.backends.cuda import stored

    before = stored.code_fingerprint
    _, tmp, restore = G._load_prepared(args, "sm_90")
    try:
        assert stored.code_fingerprint is before
        assert G.REPORT["prepared"]["same_code"] is False
        assert "made by other code (wavelift/ differs: DIR's tree abc+dirty" in capsys.readouterr().out
    finally:
        restore()
        tmp.cleanup()


def test_range_names_leave_the_tree_out():
    """A code object's range is named by its path: another copy of the tree names it alike."""
    from types import SimpleNamespace

    x = SimpleNamespace(name=f"code:{G.ROOT}/tests/fixtures/a.hsaco", base=0x1000, data=b"")
    assert G._range_name(x) == "code:tests/fixtures/a.hsaco"
    assert G._range_name(SimpleNamespace(name=None, base=0x1000, data=b"")) == "0x1000"
