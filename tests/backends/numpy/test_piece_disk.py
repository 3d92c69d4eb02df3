"""The NumPy backend's pieces on disk (backends/numpy/piece_disk.py and codegen's _disk_*: decision
0045, amendment "pieces on disk"): packs are used only whole, verified and private (decision
0016's rules), many packs are merged into one, a piece's constants come back with their types and
bits, and an entry's name depends on the code's version and on the instructions' keys, never on
a process's serials."""

from __future__ import annotations

import os

import numpy as np
import pytest

from wavelift.backends.numpy import codegen, piece_disk
from wavelift.backends.numpy.codegen import Lowering
from wavelift.backends.numpy.piece_disk import PieceDisk

V = "ab" * 32  # (a code version)


def _name(i: int) -> str:
    return f"{i:040x}"


def _packs(d):
    return sorted(p for p in os.listdir(d) if p.endswith(".pack"))


def test_pack_round_trip_and_what_is_not_a_pack():
    entries = {_name(i): bytes([i]) * i for i in range(40)}
    data = piece_disk.pack(entries)
    assert piece_disk.parse(data) == entries
    head = len(piece_disk.PACK_MAGIC) + 65
    bad = bytearray(data)
    bad[head + 50] ^= 1  # (a body byte: the digest no longer matches)
    assert piece_disk.parse(bytes(bad)) is None
    assert piece_disk.parse(data[:-1]) is None  # (torn)
    assert piece_disk.parse(b"X" + data[1:]) is None  # (another magic)
    # a body that hashes to its digest but does not parse whole (an entry's size past the end)
    body = _name(1).encode() + (100).to_bytes(4, "little") + b"ab"
    import hashlib

    forged = piece_disk.PACK_MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    assert piece_disk.parse(forged) is None
    with pytest.raises(ValueError):
        piece_disk.pack({"short": b""})


def test_entries_written_and_read_back_by_another_reader(tmp_path):
    a = PieceDisk(tmp_path, V)
    assert a.get(_name(1)) is None
    for i in range(piece_disk.FLUSH + 3):  # (one pack written when FLUSH are pending)
        a.add(_name(i), b"x%d" % i)
    assert len(_packs(tmp_path)) == 1
    a.flush()  # (what atexit would write)
    assert len(_packs(tmp_path)) == 2
    b = PieceDisk(tmp_path, V)
    assert all(b.get(_name(i)) == b"x%d" % i for i in range(piece_disk.FLUSH + 3))
    for p in _packs(tmp_path):
        assert p.startswith(V[:16] + "-") and os.stat(tmp_path / p).st_mode & 0o777 == 0o600
    # another version of the code reads none of them
    assert PieceDisk(tmp_path, "cd" * 32).get(_name(1)) is None


def _one_pack(d, entries) -> str:
    name = piece_disk._write_pack(d, V, entries)
    assert name is not None
    return name


def test_packs_the_rules_refuse_are_not_read(tmp_path):
    good = _one_pack(tmp_path, {_name(1): b"good"})
    # tampered in place (the digest no longer matches its body)
    t = _one_pack(tmp_path, {_name(2): b"tampered"})
    raw = bytearray((tmp_path / t).read_bytes())
    raw[-1] ^= 0xFF
    (tmp_path / t).write_bytes(bytes(raw))
    # writable by others
    w = _one_pack(tmp_path, {_name(3): b"others may write"})
    os.chmod(tmp_path / w, 0o666)
    # another user's
    o = _one_pack(tmp_path, {_name(4): b"another user's"})
    os.chown(tmp_path / o, 65534, 65534)
    # a second name (hard link)
    h = _one_pack(tmp_path, {_name(5): b"two names"})
    os.link(tmp_path / h, tmp_path / "elsewhere")
    # a link to a good pack elsewhere
    other = tmp_path / "other"
    other.mkdir()
    lk = _one_pack(other, {_name(6): b"through a link"})
    os.symlink(other / lk, tmp_path / lk)
    # a whole pack under a name that is not its digest's
    r = _one_pack(other, {_name(7): b"renamed"})
    os.rename(other / r, tmp_path / (V[:16] + "-" + "0" * 16 + ".pack"))
    pd = PieceDisk(tmp_path, V)
    assert pd.get(_name(1)) == b"good"
    assert [pd.get(_name(i)) for i in range(2, 8)] == [None] * 6
    assert good in _packs(tmp_path)


def test_many_packs_are_merged_into_one(tmp_path):
    names = [_one_pack(tmp_path, {_name(i): b"p%d" % i}) for i in range(piece_disk.PACK_MAX + 1)]
    assert len(_packs(tmp_path)) == len(names)
    pd = PieceDisk(tmp_path, V)
    assert pd.get(_name(0)) == b"p0"
    left = _packs(tmp_path)
    assert len(left) == 1 and left[0] not in names
    again = PieceDisk(tmp_path, V)
    assert all(again.get(_name(i)) == b"p%d" % i for i in range(len(names)))


def test_stale_packs_of_other_versions_are_removed(tmp_path):
    old = piece_disk._write_pack(tmp_path, "cd" * 32, {_name(1): b"old"})
    recent = piece_disk._write_pack(tmp_path, "ef" * 32, {_name(1): b"recent"})
    mine = piece_disk._write_pack(tmp_path, V, {_name(1): b"mine"})
    week = piece_disk.STALE_DAYS * 86400
    os.utime(tmp_path / old, (os.stat(tmp_path / old).st_atime, os.stat(tmp_path / old).st_mtime - week - 60))
    assert PieceDisk(tmp_path, V).get(_name(1)) == b"mine"
    assert _packs(tmp_path) == sorted([recent, mine])


CONSTS = [
    np.float32(np.frombuffer(np.uint32(0x7FC01234).tobytes(), np.float32)[0]),  # (a NaN payload)
    np.float32(-0.0),
    np.float16(-6.1e-5),
    np.float64(np.frombuffer(np.uint64(0xFFF8000000000123).tobytes(), np.float64)[0]),
    np.bool_(True),
    np.uint64(2**64 - 1),
    np.int32(-7),
    np.uint16(65535),
    np.int64(-(2**63)),
    np.uint32(0x80000000),
]


def test_constants_come_back_with_their_types_and_bits(tmp_path):
    pd = PieceDisk(tmp_path, V)
    src = "def blk_3(R, w, N, mode, IB):\n    return K\n"
    code = compile(src, "<test>", "exec")
    codegen._disk_store(pd, _name(9), "blk_3", code, list(CONSTS))
    pd.flush()
    low = Lowering(None, 32)
    f = codegen._disk_load(PieceDisk(tmp_path, V), _name(9), low)
    got = f(None, None, 1, 0, 0)
    assert [type(x) for x in got] == [type(x) for x in CONSTS]
    assert [x.tobytes() for x in got] == [x.tobytes() for x in CONSTS]
    # what is not a NumPy scalar of a number kind is not kept on disk
    for odd in (np.zeros(4, np.uint32), 5, np.str_("a")):
        codegen._disk_store(pd, _name(10), "blk_3", code, [odd])
        assert pd.get(_name(10)) is None


def test_entry_names_follow_keys_and_the_code_version(monkeypatch):
    from wavelift.frontend import instr_cache

    key_a = (("words", (1, 2)), "s_mov_b32", "gfx1100", 32)
    key_b = (("words", (1, 3)), "s_mov_b32", "gfx1100", 32)
    monkeypatch.setattr(instr_cache, "_KEYS", {101: key_a, 102: key_b, 201: key_a})
    monkeypatch.setattr(codegen, "_STABLE", {})

    def piece(*serials):
        return ("instrs", 0, 32, None, ((0, 1),), False, (("str", "end"),), serials)

    # serials naming the same instruction keys (another process's) give the same name
    assert codegen._disk_name(piece(101, None)) == codegen._disk_name(piece(201, None))
    assert codegen._disk_name(piece(101, None)) != codegen._disk_name(piece(102, None))
    assert codegen._disk_name(piece(999)) is None  # (a serial no longer known: not on disk)
    full = ("ops", 0, 32, None, (), False, (("str", "end"),), (("const", "u32", (), (), None, 0),))
    assert codegen._disk_name(full) is not None
    assert codegen._disk_name(("ops", np.uint32(1))) is None  # (a part whose repr may differ)
    before = codegen._disk_name(piece(101))
    monkeypatch.setattr(codegen, "_VERSION", ["another version of the code"])
    assert codegen._disk_name(piece(101)) != before


def test_off_and_a_refused_directory_mean_no_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(codegen, "_DISK_DIRS", {})
    monkeypatch.setenv("WAVELIFT_PIECE_CACHE", "off")
    assert codegen._disk() is None
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    monkeypatch.setenv("WAVELIFT_PIECE_CACHE", str(shared))
    from wavelift.backends.disk_cache import CacheWarning

    with pytest.warns(CacheWarning):
        assert codegen._disk() is None
    monkeypatch.setenv("WAVELIFT_PIECE_CACHE", str(tmp_path / "mine"))
    pd = codegen._disk()
    assert isinstance(pd, PieceDisk) and codegen._disk() is pd
    # the package's files cannot be read (no version): no disk, the dispatch is not failed

    def unreadable():
        raise PermissionError("no")

    monkeypatch.setattr(codegen, "_code_version", unreadable)
    monkeypatch.setenv("WAVELIFT_PIECE_CACHE", str(tmp_path / "other"))
    assert codegen._disk() is None
