"""Fuzz target: loading corrupted captures, then `info` (walks every stream) and replay.

One case = one corrupted .wlcap built from the seed: a base capture (two made here with
wavelift.Capture, examples/vadd.wlcap, tests/fixtures/captures/*.wlcap), then one or more of:
truncation at a random point, trailing bytes, bit flips, header fields rewritten (huge extents,
offsets, versions) with the header CRC fixed, metadata values replaced by other types, huge
numbers, deep nesting or escape sequences, sections duplicated or dropped, extents pointing at
shared or foreign file bytes, payload bytes changed with their CRC fixed (so the mutated streams
and programs load and run). Checked:
- Capture.load returns a Capture or raises CaptureError (capture.*); nothing else;
- no allocation over the documented limit is attempted (tracemalloc's peak during the load);
- `wavelift info` on a loadable capture exits 0/1/2, never 3 (internal error), and its output is
  printable text (guest strings escaped);
- one case in REPLAY_EVERY of those that load also replays on NumPy blocks: every dispatch lands
  or is refused, and the expected-results check runs;
- the whole case takes at most TIME_LIMIT seconds.

    python3 tools/fuzz.py capture --count 10000 --jobs 2        (docs/fuzzing.md)
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import pathlib
import random
import struct
import tempfile
import time
import tracemalloc
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIME_LIMIT = 60.0  # a case takes well under a second alone; generous on a busy machine
REPLAY_EVERY = 8
CAPTURE_CODES = ("capture.corrupt", "capture.version", "capture.too_large", "capture.target")
NASTY = ["\x1b]0;pwned\x07\x1b[2J", "a\nb", "\u202eevil", "\x9b31m", "\x00", "\\x1b", "é"]


@functools.cache
def bases() -> tuple:
    """(name, bytes) of the captures every case starts from."""
    from wavelift import Capture, pm4

    out = []
    d = tempfile.mkdtemp(prefix="wl-fuzz-capture-")
    # a dispatch of s_endpgm, a write, a sparse allocation in the upper half, expected results
    cap = Capture("gfx1030")
    code = cap.alloc(256, data=struct.pack("<I", 0xBF810000) * 4, name="code")
    out_ = cap.alloc(4096, name="out")
    ring = cap.alloc(1 << 20, name="ring", address=0xFFFF_8000_0001_0000)
    cap.write(ring + 0x40000, b"\x01\x02\x03")
    cap.submit(
        pm4.set_sh_reg("COMPUTE_PGM_LO", code >> 8)
        + pm4.write_data(out_, 7)
        + pm4.dispatch_direct(2, 1, 1, initiator=pm4.initiator(wave32=True))
    )
    cap.submit_at(cap.memory.allocations[-2].base, 3)
    cap.expect_memory(out_, 4, name="out")
    cap.expected["dispatches"] = [None]
    cap.notes = {"made_by": "fuzz_capture", "nested": {"list": [1, 2, {"k": "v"}]}}
    p = os.path.join(d, "small.wlcap")
    cap.save(p)
    out.append(("small", pathlib.Path(p).read_bytes()))
    # many small allocations with several extents each, no streams
    cap = Capture("gfx1010")
    for k in range(6):
        a = cap.alloc(5 * 4096, name=f"buf{k}")
        cap.write(a + 4096 * (k % 3), bytes([k + 1]) * 100)
        cap.write(a + 4 * 4096, b"\xff" * 4096)
    p = os.path.join(d, "extents.wlcap")
    cap.save(p)
    out.append(("extents", pathlib.Path(p).read_bytes()))
    for f in [
        ROOT / "examples" / "vadd.wlcap",
        *sorted((ROOT / "tests" / "fixtures" / "captures").glob("*.wlcap")),
    ]:
        out.append((f.name, f.read_bytes()))
    return tuple(out)


# --- the file's structure ---------------------------------------------------------------------
def _split(data: bytes):
    from wavelift.memory.capture import HEADER

    return list(HEADER.unpack(data[:64]))


def _header(fields) -> bytes:
    from wavelift.memory.capture import HEADER

    h = HEADER.pack(*fields[:8], 0)
    return h[:60] + struct.pack("<I", zlib.crc32(h[:60]))


def _with_meta_bytes(data: bytes, mb: bytes) -> bytes:
    """`data` with its metadata replaced by `mb`, every size and CRC fixed."""
    f = _split(data)
    moff = f[3]
    out = bytearray(data[:moff]) + mb
    f[4], f[5], f[6] = len(mb), len(out), zlib.crc32(mb)
    out[:64] = _header(f)
    return bytes(out)


def _meta(data: bytes):
    f = _split(data)
    return json.loads(data[f[3] : f[3] + f[4]])


# --- metadata mutations -----------------------------------------------------------------------
def _paths(v, path=()):
    yield path
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:8]):
            yield from _paths(x, path + (i,))


def _get(v, path):
    for k in path:
        v = v[k]
    return v


def _odd_value(r: random.Random):
    return r.choice(
        [
            None,
            True,
            False,
            -1,
            0,
            1,
            3,
            2**31,
            2**32 + 5,
            2**46,
            2**48,
            2**63,
            2**64 + 1,
            -(2**63),
            10**30,
            0.5,
            1e300,
            "",
            "x",
            "0x",
            "0x" + "f" * 16,
            "0xffff800000000000",
            "0x0000800000000000",
            "-0x10",
            " 0x10",
            "0x1_0",
            "0x" + "1" * 40,
            "z" * 3000,
            r.choice(NASTY),
            [],
            [1, 2],
            [[0, 16, 64, 0]],
            {},
            {"a": 1},
            {"address": "0x0", "size_dw": 1},
        ]
    )


def _deep(r: random.Random):
    v = r.choice([0, "x", None])
    for _ in range(r.choice([20, 40, 300])):  # deeper: _mutate_meta_text
        v = [v] if r.random() < 0.5 else {"k": v}
    return v


def _mutate_meta(meta, r: random.Random) -> None:
    kind = r.randrange(10)
    paths = list(_paths(meta))
    path = r.choice(paths[1:]) if len(paths) > 1 else ()
    parent, key = (_get(meta, path[:-1]), path[-1]) if path else (None, None)
    if kind <= 2 and parent is not None:  # a value of another type/size
        parent[key] = _odd_value(r)
    elif kind == 3 and parent is not None:  # deep nesting
        parent[key] = _deep(r)
    elif kind == 4 and isinstance(parent, dict):  # a key dropped
        del parent[key]
    elif kind == 5:  # a section repeated
        from wavelift.memory.capture import MAX_ALLOCATIONS, MAX_STREAMS

        key = r.choice(["allocations", "streams"])
        lst = meta.get(key)
        if isinstance(lst, list) and lst:
            n = r.choice([1, 2, 50, 50, (MAX_ALLOCATIONS if key == "allocations" else MAX_STREAMS) + 1])
            one = r.choice(lst)
            if n > 50 and key == "allocations":  # small records: cheap to write
                one = {"name": "", "base": "0x0000000000001000", "size": 1, "extents": []}
            lst.extend([one] * n)
    elif kind == 6 and meta.get("allocations"):  # a huge extent / allocation
        a = r.choice(meta["allocations"])
        a["size"] = r.choice([2**40, 2**46, 2**47, 2**48, 5 << 30])
        if r.random() < 0.5:
            a["extents"] = [[0, a["size"], 64, 0]]
    elif kind == 7 and meta.get("allocations"):  # extents sharing file bytes
        es = [e for a in meta["allocations"] for e in a.get("extents") or []]
        if len(es) >= 2:
            r.choice(es)[2] = r.choice(es)[2]
        elif es:
            es[0][2] = r.choice([0, 1, 63, es[0][2] + 1])
    elif kind == 8:  # guest text with escapes
        if meta.get("allocations"):
            r.choice(meta["allocations"])["name"] = r.choice(NASTY) * r.choice([1, 3])
        meta["notes"] = {r.choice(NASTY): r.choice(NASTY), "n": [r.choice(NASTY)]}
        if isinstance(meta.get("expected"), dict):
            for m in meta["expected"].get("memory") or []:
                m["name"] = r.choice(NASTY)
            meta["expected"]["dispatches"] = [r.choice(NASTY)]
    else:  # target, version, format
        meta[r.choice(["target", "version", "format"])] = r.choice(
            ["gfx1100", "gfx9999", "gfx1010", 2, "wlcap", None, ["gfx1030"]]
        )


def _mutate_meta_text(mb: bytes, r: random.Random) -> bytes:
    kind = r.randrange(5)
    if kind == 0:  # a duplicated key
        i = mb.find(b'"streams"')
        return mb[:i] + b'"streams": [], ' + mb[i:] if i > 0 else mb
    if kind == 1:  # nesting far past any limit
        n = r.choice([100, 2000, 200000])
        return b"[" * n + b"]" * n
    if kind == 2:  # not UTF-8 / not JSON tokens
        b = bytearray(mb)
        for _ in range(r.randint(1, 4)):
            b[r.randrange(len(b))] = r.choice([0xFF, 0xC3, 0x00, ord("{"), ord('"')])
        return bytes(b)
    if kind == 3:  # NaN, huge numbers, lone surrogates
        tok = r.choice([b"NaN", b"Infinity", b"1" * 5000, b"1e999", b'"\\ud800"', b"-0"])
        i = mb.find(b'"size": ')
        if i > 0:
            j = i + len(b'"size": ')
            k = j
            while mb[k : k + 1].isdigit():
                k += 1
            return mb[:j] + tok + mb[k:]
        return mb
    return mb[: r.randrange(len(mb) + 1)]  # cut inside the JSON


# --- payload with its CRC fixed (the mutated streams/programs load) ------------------------------
def _mutate_payload(data: bytes, r: random.Random) -> bytes:
    meta = _meta(data)
    try:
        es = [
            e
            for a in meta["allocations"]
            for e in a["extents"]
            if isinstance(e, list)
            and len(e) == 4
            and all(type(x) is int for x in e)
            and 64 <= e[2]
            and e[1] > 0
            and e[2] + e[1] <= len(data)
        ]
    except (KeyError, TypeError, IndexError):  # an earlier step broke the metadata's shape
        es = []
    if not es:
        return data
    b = bytearray(data)
    e = r.choice(es)
    off, ln, foff, _ = e
    for _ in range(r.choice([1, 1, 2, 8, 64])):
        i = foff + r.randrange(ln)
        b[i] = r.getrandbits(8) if r.random() < 0.5 else b[i] ^ (1 << r.randrange(8))
    e[3] = zlib.crc32(bytes(b[foff : foff + ln]))
    return _with_meta_bytes(bytes(b), json.dumps(meta, indent=1, sort_keys=True).encode())


def corrupt(seed: int) -> tuple[str, bytes]:
    """(what was done, the corrupted file) for `seed`."""
    r = random.Random(seed)
    name, data = r.choice(bases())
    done = [name]
    for _ in range(r.choice([1, 1, 1, 2, 3])):
        kind = r.randrange(8)
        try:
            meta_ok = isinstance(_meta(data), dict)
        except Exception:  # an earlier step broke the structure: raw edits only
            meta_ok = False
        if not meta_ok:
            kind = r.choice([0, 1, 2])
        if kind == 0:
            cut = r.randrange(len(data) + 1)
            data = data[:cut]
            done.append(f"truncate {cut}")
        elif kind == 1:
            data = data + bytes(r.getrandbits(8) for _ in range(r.choice([1, 7, 64])))
            done.append("trailing")
        elif kind == 2 and data:
            b = bytearray(data)
            for _ in range(r.choice([1, 1, 2, 8])):
                lo, hi = r.choice([(0, 64), (64, len(b) // 2), (0, len(b))])
                hi = min(hi, len(b))
                i = r.randrange(lo, hi) if lo < hi else r.randrange(len(b))
                b[i] ^= 1 << r.randrange(8)
            data = bytes(b)
            done.append("bit flips")
        elif kind == 3:  # header fields, header CRC fixed
            f = _split(data)
            i = r.choice([1, 2, 3, 4, 5, 6])
            f[i] = r.choice(
                [0, 1, 63, 64, len(data), 2**46, 2**48, 2**63, 2**64 - 1, f[i] + 1, max(f[i] - 1, 0)]
            ) & (2 ** (32 if i in (1, 2, 6) else 64) - 1)
            data = _header(f) + data[64:]
            done.append(f"header field {i} = {f[i]}")
        elif kind in (4, 5) and meta_ok:
            meta = _meta(data)
            try:
                _mutate_meta(meta, r)
            except (AttributeError, IndexError, KeyError, TypeError):
                done.append("metadata value (skipped: an earlier step changed its shape)")
                continue
            data = _with_meta_bytes(data, json.dumps(meta, indent=r.choice([None, 1])).encode())
            done.append("metadata value")
        elif kind == 6 and meta_ok:
            f = _split(data)
            data = _with_meta_bytes(data, _mutate_meta_text(data[f[3] : f[3] + f[4]], r))
            done.append("metadata text")
        elif kind == 7 and meta_ok:
            data = _mutate_payload(data, r)
            done.append("payload, CRC fixed")
    return ", ".join(done), data


# --- running one case -------------------------------------------------------------------------
def _check_printable(seed, what, text):
    bad = [c for c in text if not (c.isprintable() or c in "\n")]
    assert not bad, f"seed {seed} ({what}): non-printable output {bad[:5]!r}"


def _info(seed, what, path) -> None:
    from wavelift.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["info", path])
    assert rc in (0, 1, 2), f"seed {seed} ({what}): info exit {rc}: {err.getvalue().strip()}"
    _check_printable(seed, what, out.getvalue() + err.getvalue())


def _replay(seed, what, cap) -> None:
    from wavelift.run.replay import replay

    results = replay(cap, backend="numpy", mode="wave")
    for r in results:
        assert r.refusal is None or r.refusal.code, f"seed {seed} ({what}): result {r!r}"
    cap.check_expected(results)


def run_file(seed: int, what: str, path: str, replay: bool) -> None:
    from wavelift.memory.capture import MAX_GUEST_BYTES, Capture, CaptureError

    limit = MAX_GUEST_BYTES + 2 * os.path.getsize(path) + (64 << 20)
    tracemalloc.start()
    try:
        cap = Capture.load(path)
    except CaptureError as e:
        assert e.refusal.code in CAPTURE_CODES, f"seed {seed} ({what}): {e.refusal.code}"
        cap = None
    except Exception as e:
        raise AssertionError(
            f"seed {seed} ({what}): Capture.load raised {type(e).__name__}: {str(e)[:300]}"
        ) from e
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak <= limit, f"seed {seed} ({what}): loading allocated {peak} bytes (limit {limit})"
    _info(seed, what, path)
    if cap is not None and replay:
        try:
            _replay(seed, what, cap)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(
                f"seed {seed} ({what}): replay raised {type(e).__name__}: {str(e)[:300]}"
            ) from e


def case(seed: int) -> None:
    what, data = corrupt(seed)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wl-fuzz-capture-") as d:
        path = os.path.join(d, "c.wlcap")
        with open(path, "wb") as f:
            f.write(data)
        run_file(seed, what, path, replay=seed % REPLAY_EVERY == 0)
    t = time.perf_counter() - t0
    assert t <= TIME_LIMIT, f"seed {seed} ({what}): {t:.1f}s (limit {TIME_LIMIT}s)"


def test_fuzz_capture_short():
    """A few hundred cases (a few seconds); `tools/fuzz.py capture` runs many more."""
    for seed in range(300):
        case(seed)


if __name__ == "__main__":
    import sys

    for s in range(int(sys.argv[1]) if len(sys.argv) > 1 else 300):
        case(s)
