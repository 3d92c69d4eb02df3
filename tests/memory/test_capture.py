"""Capture save -> load round trip, copy-on-write loading, and refusal of corrupt files."""

import json
import os
import pathlib
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from wavelift import Capture, pm4
from wavelift.memory import capture as capture_module
from wavelift.memory.capture import HEADER, CaptureError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_capture():
    cap = Capture(target="gfx1030")
    prog = bytes(range(256)) * 3
    code = cap.alloc(len(prog), data=prog, name="code", align=256)
    out = cap.alloc(4096, name="out")
    ring = cap.alloc(1 << 20, name="scratch", address=0xFFFF_8000_0001_8000)
    cap.write(ring + 0x80000, b"\x01\x02")  # sparse: one non-zero chunk
    cap.submit(
        pm4.set_sh_reg("COMPUTE_PGM_LO", code >> 8)
        + pm4.write_data(out, 7)
        + pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True))
    )
    cap.submit_at(cap.memory.allocations[-2].base, 3)
    cap.expect_memory(out, 4, name="out")
    cap.notes = {"why": "test"}
    return cap, code, out, ring


def same(a, b):
    assert a.target == b.target and a.streams == b.streams and a.expected == b.expected
    assert a.notes == b.notes
    la, lb = a.memory.allocations, b.memory.allocations
    assert [(x.base, x.size, x.name) for x in la] == [(x.base, x.size, x.name) for x in lb]
    for x, y in zip(la, lb):
        assert np.array_equal(x.data, y.data)


def test_round_trip_identical(tmp_path):
    cap, *_ = make_capture()
    p = tmp_path / "c.wlcap"
    cap.save(p)
    back = Capture.load(p)
    same(cap, back)
    p2 = tmp_path / "c2.wlcap"
    back.save(p2)
    assert p.read_bytes() == p2.read_bytes()  # deterministic
    assert os.path.getsize(p) < 64 * 1024  # the 1 MiB ring is sparse


def test_load_is_copy_on_read(tmp_path):
    """Loaded allocations are private memory: changing, truncating or replacing the file after
    loading changes nothing, and writes never reach the file (decision 0018)."""
    cap, code, out, ring = make_capture()
    p = tmp_path / "c.wlcap"
    cap.save(p)
    before = p.read_bytes()
    back = Capture.load(p)
    assert not any(isinstance(a.data, np.memmap) for a in back.memory.allocations)
    back.write(code, b"\xff" * 16)
    back.write(ring + 0x80000, b"\xee")
    assert back.read(code, 1) == b"\xff"
    assert p.read_bytes() == before
    with open(p, "r+b") as f:  # the file changes under it
        f.seek(64)
        f.write(b"\x55" * 64)
    os.truncate(p, 64)
    assert back.read(code + 16, 4) == bytes(range(16, 20)) and back.read(ring + 0x80001, 1) == b"\x02"
    back.save(p)  # over the loaded file
    again = Capture.load(p)
    assert again.read(code, 1) == b"\xff" and again.read(ring + 0x80000, 2) == b"\xee\x02"


def test_file_truncated_after_load_is_no_sigbus(tmp_path):
    """A capture whose file shrinks after loading: the next touch of its memory used to raise
    SIGBUS (the allocation was a memory map of the file); now it reads what was loaded."""
    cap = Capture()
    big = cap.alloc(8 << 20, data=np.arange(8 << 20, dtype=np.uint64).astype(np.uint8), name="big")
    p = tmp_path / "c.wlcap"
    cap.save(p)
    prog = (
        f"import os, sys; from wavelift import Capture\n"
        f"cap = Capture.load({str(p)!r})\n"
        f"os.truncate({str(p)!r}, 4096)\n"
        f"print(int(cap.memory.view({big}, 8 << 20).astype('u8').sum()))\n"
    )
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, (r.returncode, r.stderr[-500:])  # -7 is SIGBUS
    assert int(r.stdout) == int(np.arange(8 << 20, dtype=np.uint64).astype(np.uint8).astype("u8").sum())


def test_non_regular_files_refused(tmp_path):
    """A FIFO as a capture path used to hang (open waits for a writer); a directory or device
    is refused as what it is."""
    fifo = tmp_path / "pipe.wlcap"
    os.mkfifo(fifo)
    prog = (
        f"from wavelift import Capture\nfrom wavelift.memory.capture import CaptureError\n"
        f"try:\n    Capture.load({str(fifo)!r})\n"
        f"except CaptureError as e:\n    print(e.refusal.code, e.refusal.message)\n"
    )
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("capture.corrupt") and "FIFO" in r.stdout, r
    for path, kind in ((tmp_path, "a directory"), ("/dev/null", "a character device")):
        with pytest.raises(CaptureError, match=kind):
            Capture.load(path)


def test_large_sparse_allocation_costs_nothing(tmp_path):
    cap = Capture()
    a = cap.alloc(1 << 30, name="huge")  # calloc'd, untouched
    cap.write(a + (1 << 29), b"x")
    p = tmp_path / "big.wlcap"
    cap.save(p)
    assert os.path.getsize(p) < 1 << 16
    assert Capture.load(p).read(a + (1 << 29), 1) == b"x"


def saved(tmp_path):
    cap, *_ = make_capture()
    p = tmp_path / "c.wlcap"
    cap.save(p)
    return p, bytearray(p.read_bytes())


def refused(p, data, match, code="capture.corrupt", **kw):
    p.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match=match) as e:
        Capture.load(p, **kw)
    assert e.value.refusal.code == code


def rewrite_meta(data, fn):
    """Change the metadata and fix every checksum, so only the semantic checks can catch it."""

    def edit(mb):
        meta = json.loads(mb)
        fn(meta)
        return json.dumps(meta).encode()

    return rewrite_meta_text(data, edit)


def rewrite_meta_text(data, fn):
    """rewrite_meta on the metadata's bytes (for what json.dumps cannot write)."""
    magic, ver, flags, moff, msize, fsize, mcrc, res, hcrc = HEADER.unpack(bytes(data[:64]))
    mb = fn(bytes(data[moff : moff + msize]))
    out = bytearray(data[:moff]) + mb
    hdr = HEADER.pack(magic, ver, flags, moff, len(mb), len(out), zlib.crc32(mb), res, 0)
    out[:64] = hdr[:60] + struct.pack("<I", zlib.crc32(hdr[:60]))
    return out


def test_corrupt_files_refused(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    refused(q, good[:40], "too short")
    refused(q, b"PK\x03\x04" + good[4:], "not a wavelift capture")
    d = bytearray(good)
    d[20] ^= 1
    refused(q, d, "header checksum")
    refused(q, good[:-10], "truncated")
    refused(q, good + b"\0", "trailing data")
    d = bytearray(good)
    d[-5] ^= 0x20
    refused(q, d, "metadata checksum")
    # version: valid checksums, other version
    d = bytearray(good)
    d[8:12] = struct.pack("<I", 2)
    d[60:64] = struct.pack("<I", zlib.crc32(bytes(d[:60])))
    refused(q, d, "version 2", code="capture.version")
    d = bytearray(good)
    d[12] = 1  # a flag it does not know
    d[60:64] = struct.pack("<I", zlib.crc32(bytes(d[:60])))
    refused(q, d, "flags 0x1", code="capture.version")
    d = bytearray(good)
    d[50] = 1  # reserved
    d[60:64] = struct.pack("<I", zlib.crc32(bytes(d[:60])))
    refused(q, d, "reserved")


def test_payload_corruption_refused(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    d = bytearray(good)
    d[64 + 3] ^= 0xFF  # first extent = code
    refused(q, d, "payload checksum")


def test_bad_regions_refused(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"

    def ext_out_of_file(m):
        m["allocations"][0]["extents"][0][2] = 10**9

    refused(q, rewrite_meta(good, ext_out_of_file), "outside the payload")

    def ext_out_of_alloc(m):
        m["allocations"][0]["extents"][0][1] = 10**6

    refused(q, rewrite_meta(good, ext_out_of_alloc), r"outside \[0")

    def overlap(m):
        m["allocations"][1]["base"] = m["allocations"][0]["base"]

    refused(q, rewrite_meta(good, overlap), "overlaps")

    def no_target(m):
        del m["target"]

    refused(q, rewrite_meta(good, no_target), "no target")

    def bad_stream(m):
        m["streams"][0]["size_dw"] = -1

    refused(q, rewrite_meta(good, bad_stream), "stream 0")
    refused(q, rewrite_meta(good, lambda m: m.__setitem__("allocations", 5)), "lacks allocations")


def test_untrusted_metadata_refused_before_anything_is_built(tmp_path, monkeypatch):
    """What used to escape the loader as RecursionError, MemoryError/ValueError, or load and
    fail later (AttributeError in `wavelift info`, gfx1100 refused by the engine), is refused at
    load with a capture.* code, and no guest memory is allocated for it."""
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    zeros = []
    real_zeros = np.zeros
    monkeypatch.setattr(
        capture_module.np, "zeros", lambda n, *a, **k: zeros.append(n) or real_zeros(n, *a, **k)
    )

    def deep(n):
        return lambda mb: mb.replace(b'"notes": {', b'"notes": {"x": ' + b"[" * n + b"]" * n + b", ", 1)

    refused(q, rewrite_meta_text(good, deep(100000)), "nested deeper", "capture.too_large")
    refused(
        q, rewrite_meta_text(good, deep(capture_module.MAX_META_DEPTH)), "nested deeper", "capture.too_large"
    )  # notes {"x": [[...]]}: 33 deep
    q.write_bytes(bytes(rewrite_meta_text(good, deep(capture_module.MAX_META_DEPTH - 1))))
    Capture.load(q)
    zeros.clear()

    def huge(m):  # 64 TiB, nothing stored
        m["allocations"][1]["size"] = 1 << 46

    refused(q, rewrite_meta(good, huge), "in all", "capture.too_large")

    def big_extent(m):  # an extent claiming 256 TiB
        m["allocations"][0]["size"] = 1 << 48
        m["allocations"][0]["extents"] = [[0, 1 << 48, 64, 0]]

    refused(q, rewrite_meta(good, big_extent), "in all", "capture.too_large")
    refused(q, rewrite_meta(good, lambda m: m.__setitem__("notes", ["a"])), "notes is not an object")
    refused(q, rewrite_meta(good, lambda m: m.__setitem__("expected", "yes")), "expected is not")
    refused(q, rewrite_meta(good, lambda m: m["expected"]["memory"][0].__setitem__("size", -4)), "bad size")
    refused(
        q, rewrite_meta(good, lambda m: m["allocations"][0].__setitem__("name", 7)), "name is not a string"
    )
    refused(q, rewrite_meta(good, lambda m: m.__setitem__("target", "gfx90a")), "gfx90a", "capture.target")
    refused(q, rewrite_meta(good, lambda m: m.__setitem__("target", ["gfx1030"])), "no target")
    assert zeros == []  # nothing built for any of them


@pytest.mark.parametrize(
    "address", ["0x1_0000", " 0x100", "-0x100", "0x" + "1" * 17, "0x0000800000000000", "256", 256]
)
def test_addresses_strict(tmp_path, address):
    p, good = saved(tmp_path)
    refused(
        tmp_path / "bad.wlcap",
        rewrite_meta(good, lambda m: m["streams"][0].__setitem__("address", address)),
        "address",
    )


def test_strict_json(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    refused(
        q,
        rewrite_meta_text(good, lambda mb: mb.replace(b'"streams"', b'"streams": [], "streams"', 1)),
        "twice",
    )
    refused(
        q,
        rewrite_meta_text(good, lambda mb: mb.replace(b'"why": "test"', b'"why": NaN', 1)),
        "NaN is not JSON",
    )
    refused(
        q,
        rewrite_meta_text(good, lambda mb: mb.replace(b'"why": "test"', b'"why": "\\ud800"', 1)),
        "lone surrogate",
    )
    refused(q, rewrite_meta_text(good, lambda mb: mb.replace(b'"test"', b'"t\xffst"', 1)), "not valid JSON")
    ok = rewrite_meta_text(good, lambda mb: mb.replace(b'"why": "test"', b'"why": "\\ud83d\\ude00"', 1))
    q.write_bytes(bytes(ok))
    assert Capture.load(q).notes == {"why": "\U0001f600"}  # a surrogate pair is text


def test_limits(tmp_path, monkeypatch):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    n = capture_module.MAX_STREAMS + 1
    refused(
        q,
        rewrite_meta(good, lambda m: m.__setitem__("streams", m["streams"][:1] * n)),
        f"{n} streams",
        "capture.too_large",
    )
    refused(
        q,
        rewrite_meta(good, lambda m: m["allocations"][0].__setitem__("name", "n" * 1025)),
        "1025 characters",
        "capture.too_large",
    )

    def shared(m):  # two extents, one file range
        m["allocations"][1]["extents"] = [
            [0, 768, m["allocations"][0]["extents"][0][2], m["allocations"][0]["extents"][0][3]]
        ]

    refused(q, rewrite_meta(good, shared), "share file bytes")
    monkeypatch.setattr(capture_module, "MAX_META_BYTES", 100)
    refused(q, good, "bytes of metadata", "capture.too_large")


def test_submit_places_ib_in_guest_memory():
    cap = Capture()
    dw = pm4.nop(3) + pm4.dispatch_direct(1, 1, 1)
    a = cap.submit(dw)
    assert cap.streams == [(a, len(dw))] and a % 256 == 0
    assert cap.memory.read_dwords(a, len(dw)).tolist() == dw
    with pytest.raises(ValueError):
        cap.submit([])


def test_gb_addr_config_round_trip_and_replay(tmp_path):
    """GB_ADDR_CONFIG (metadata gb_addr_config, optional: absent means not recorded) survives
    save/load, reaches every dispatch's config through replay, and a value that is not a 32-bit
    register is refused; a capture without it saves without the key (old files stay as they
    are)."""
    from wavelift.run import execute as engine
    from wavelift.run.replay import replay

    cap, _, _, _ = make_capture()
    p = tmp_path / "none.wlcap"
    cap.save(p)
    assert Capture.load(p).gb_addr_config is None
    assert b"gb_addr_config" not in p.read_bytes()
    cap.gb_addr_config = 0x00000444
    q = tmp_path / "gb.wlcap"
    cap.save(q)
    got = Capture.load(q)
    assert got.gb_addr_config == 0x444
    # every dispatch's config gets it (run_stream, as replay walks the streams)
    got.streams = []
    got.submit(
        pm4.set_sh_reg("COMPUTE_NUM_THREAD_X", 32, 1, 1)
        + pm4.set_sh_reg("COMPUTE_PGM_LO", got.memory.allocations[0].base >> 8)
        + pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True))
    )
    seen = []
    replay(
        got,
        execute=lambda mem, cfg, i: seen.append(cfg.gb_addr_config) or engine.execute_dispatch(mem, cfg, i),
    )
    assert seen == [0x444]
    good = q.read_bytes()
    for bad in (-1, 1 << 32, "0x444", 1.5, True):
        refused(
            tmp_path / "bad.wlcap",
            rewrite_meta(good, lambda m, v=bad: m.__setitem__("gb_addr_config", v)),
            "gb_addr_config",
        )
