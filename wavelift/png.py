"""A small PNG encoder and decoder (zlib + struct, no other dependency).

`encode(pixels)` writes 8-bit grayscale (H x W or H x W x 1), RGB (H x W x 3) or RGBA
(H x W x 4) uint8 arrays, non-interlaced, each row filtered with the "Up" filter (type 2) except
the first (type 0). `decode(data)` reads what `encode` writes and, more generally, any
non-interlaced PNG of bit depth 8 and colour type 0 (gray), 2 (RGB), 4 (gray + alpha) or
6 (RGBA), with any of the five row filters; it returns an H x W x C uint8 array (C = 1, 3, 2, 4)
and checks every chunk CRC. Anything else raises PNGError.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}
_COLOR_TYPE = {1: 0, 3: 2, 2: 4, 4: 6}


class PNGError(ValueError):
    """A PNG this module cannot read (or pixels it cannot write)."""


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(pixels) -> bytes:
    """PNG bytes for an H x W (gray) or H x W x C (C = 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)
    uint8 array."""
    a = np.asarray(pixels)
    if a.dtype != np.uint8:
        raise PNGError(f"pixels must be uint8, not {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.shape[2] not in _COLOR_TYPE:
        raise PNGError(f"pixels must be H x W or H x W x (1|2|3|4), not {a.shape}")
    h, w, c = a.shape
    if h == 0 or w == 0:
        raise PNGError("an image needs at least one pixel")
    rows = np.ascontiguousarray(a).reshape(h, w * c)
    filtered = np.empty((h, 1 + w * c), np.uint8)
    filtered[:, 0] = 2  # Up
    filtered[0, 0] = 0  # None for the first row
    filtered[0, 1:] = rows[0]
    filtered[1:, 1:] = rows[1:] - rows[:-1]  # uint8 arithmetic wraps mod 256
    ihdr = struct.pack(">IIBBBBB", w, h, 8, _COLOR_TYPE[c], 0, 0, 0)
    return (
        SIGNATURE
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(filtered.tobytes(), 6))
        + _chunk(b"IEND", b"")
    )


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw: bytes, h: int, w: int, c: int) -> np.ndarray:
    stride = w * c
    if len(raw) != h * (stride + 1):
        raise PNGError(f"image data is {len(raw)} bytes, expected {h * (stride + 1)}")
    data = np.frombuffer(raw, np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(h):
        ft, line = int(data[y, 0]), data[y, 1:]
        if ft == 0:
            cur = line.copy()
        elif ft == 2:
            cur = line + prev
        elif ft in (1, 3, 4):  # Sub / Average / Paeth: byte by byte
            cur = np.zeros(stride, np.uint8)
            L, P = line.tolist(), prev.tolist()
            r = [0] * stride
            for i in range(stride):
                left = r[i - c] if i >= c else 0
                up = P[i]
                if ft == 1:
                    pred = left
                elif ft == 3:
                    pred = (left + up) >> 1
                else:
                    pred = _paeth(left, up, P[i - c] if i >= c else 0)
                r[i] = (L[i] + pred) & 0xFF
            cur[:] = r
        else:
            raise PNGError(f"row {y}: unknown filter type {ft}")
        out[y] = cur
        prev = cur
    return out.reshape(h, w, c)


def decode(data: bytes) -> np.ndarray:
    """H x W x C uint8 pixels of a PNG (8-bit gray, gray+alpha, RGB or RGBA, not interlaced)."""
    data = bytes(data)
    if data[:8] != SIGNATURE:
        raise PNGError("not a PNG (bad signature)")
    pos, ihdr, idat = 8, None, []
    while True:
        if pos + 8 > len(data):
            raise PNGError("truncated PNG (no IEND chunk)")
        n, kind = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8 : pos + 8 + n]
        if len(body) != n or pos + 12 + n > len(data):
            raise PNGError(f"truncated {kind!r} chunk")
        (crc,) = struct.unpack_from(">I", data, pos + 8 + n)
        if zlib.crc32(kind + body) != crc:
            raise PNGError(f"CRC mismatch in {kind!r} chunk")
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if ihdr is None:
        raise PNGError("no IHDR chunk")
    w, h, depth, ctype, comp, filt, interlace = ihdr
    if depth != 8 or ctype not in _CHANNELS or comp or filt or interlace:
        raise PNGError(
            f"unsupported PNG: bit depth {depth}, colour type {ctype}, "
            f"interlace {interlace} (only 8-bit, non-interlaced gray/RGB/RGBA)"
        )
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise PNGError(f"corrupt image data ({e})") from None
    return _unfilter(raw, h, w, _CHANNELS[ctype])


def write(path, pixels) -> None:
    with open(path, "wb") as f:
        f.write(encode(pixels))


def read(path) -> np.ndarray:
    with open(path, "rb") as f:
        return decode(f.read())
