"""Capture save -> load round trip, copy-on-write loading, and refusal of corrupt files."""
import json
import os
import struct
import zlib

import numpy as np
import pytest

from wavelift import Capture, pm4
from wavelift.memory.capture import HEADER, CaptureError


def make_capture():
    cap = Capture(target="gfx1030")
    prog = bytes(range(256)) * 3
    code = cap.alloc(len(prog), data=prog, name="code", align=256)
    out = cap.alloc(4096, name="out")
    ring = cap.alloc(1 << 20, name="scratch", address=0xFFFF_8000_0001_8000)
    cap.write(ring + 0x80000, b"\x01\x02")                          # sparse: one non-zero chunk
    cap.submit(pm4.set_sh_reg("COMPUTE_PGM_LO", code >> 8) + pm4.write_data(out, 7)
               + pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True)))
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
    assert p.read_bytes() == p2.read_bytes()                         # deterministic
    assert os.path.getsize(p) < 64 * 1024                            # the 1 MiB ring is sparse


def test_load_is_copy_on_write(tmp_path):
    cap, code, out, ring = make_capture()
    p = tmp_path / "c.wlcap"
    cap.save(p)
    before = p.read_bytes()
    back = Capture.load(p)
    assert isinstance(back.memory.find(code).data, np.memmap)       # mapped, not read
    back.write(code, b"\xff" * 16)
    back.write(ring + 0x80000, b"\xee")
    assert back.read(code, 1) == b"\xff"
    assert p.read_bytes() == before
    back.save(p)                                                     # over the mapped file
    again = Capture.load(p)
    assert again.read(code, 1) == b"\xff" and again.read(ring + 0x80000, 2) == b"\xee\x02"
    assert back.read(code, 1) == b"\xff"                             # old mapping still valid


def test_large_sparse_allocation_costs_nothing(tmp_path):
    cap = Capture()
    a = cap.alloc(1 << 30, name="huge")                              # calloc'd, untouched
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
    magic, ver, flags, moff, msize, fsize, mcrc, res, hcrc = HEADER.unpack(bytes(data[:64]))
    meta = json.loads(bytes(data[moff:moff + msize]))
    fn(meta)
    mb = json.dumps(meta).encode()
    out = bytearray(data[:moff]) + mb
    hdr = HEADER.pack(magic, ver, flags, moff, len(mb), len(out), zlib.crc32(mb), res, 0)
    out[:64] = hdr[:60] + struct.pack("<I", zlib.crc32(hdr[:60]))
    return out


def test_corrupt_files_refused(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    refused(q, good[:40], "too short")
    refused(q, b"PK\x03\x04" + good[4:], "not a wavelift capture")
    d = bytearray(good); d[20] ^= 1
    refused(q, d, "header checksum")
    refused(q, good[:-10], "truncated")
    refused(q, good + b"\0", "trailing data")
    d = bytearray(good); d[-5] ^= 0x20
    refused(q, d, "metadata checksum")
    # version: valid checksums, other version
    d = bytearray(good); d[8:12] = struct.pack("<I", 2)
    d[60:64] = struct.pack("<I", zlib.crc32(bytes(d[:60])))
    refused(q, d, "version 2", code="capture.version")


def test_payload_corruption_refused_when_verified(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"
    d = bytearray(good); d[64 + 3] ^= 0xFF                           # first extent = code
    refused(q, d, "payload checksum")
    q.write_bytes(bytes(d))
    Capture.load(q, verify=False)                                    # bounds still checked, CRCs not


def test_bad_regions_refused(tmp_path):
    p, good = saved(tmp_path)
    q = tmp_path / "bad.wlcap"

    def ext_out_of_file(m):
        m["allocations"][0]["extents"][0][2] = 10 ** 9
    refused(q, rewrite_meta(good, ext_out_of_file), "outside the payload")

    def ext_out_of_alloc(m):
        m["allocations"][0]["extents"][0][1] = 10 ** 6
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


def test_submit_places_ib_in_guest_memory():
    cap = Capture()
    dw = pm4.nop(3) + pm4.dispatch_direct(1, 1, 1)
    a = cap.submit(dw)
    assert cap.streams == [(a, len(dw))] and a % 256 == 0
    assert cap.memory.read_dwords(a, len(dw)).tolist() == dw
    with pytest.raises(ValueError):
        cap.submit([])
