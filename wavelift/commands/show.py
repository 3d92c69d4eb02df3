"""`wavelift show CAPTURE ALLOCATION --format F --width W`: an allocation as a PNG image.

Pixels are read row by row from `--offset` (bytes into the allocation), `--stride` bytes apart
(default width x pixel size); `--height` defaults to as many whole rows as fit. What is shown:
the allocation as stored in the capture; `--dispatch N`: after dispatch N ran (the dispatches
before it run too); `--dispatch N --before-after`: before and after dispatch N side by side
(before on the left, a 2-pixel gray gap, after on the right). `--scale N` makes each pixel an
N x N square (nearest neighbour), gap included.

Formats (little-endian): rgba8, bgra8 (4 bytes, shown as RGBA), r8 (gray), r32ui, r32i (gray),
r32f (gray), rg32f (R, G; B = 0), rgba32f (RGBA). Alpha of rgba8/bgra8/rgba32f, `--alpha`:
opaque (the default: the colour channels as stored, alpha ignored, so a buffer whose alpha is 0
is still seen), checker (composited over a gray checkerboard of 8-pixel squares: transparent
parts show the board), keep (an RGBA PNG with the stored alpha). Integer formats
other than 8-bit and all float formats are mapped linearly from a range [lo, hi] to 0..255:
    v8 = clip(floor((x - lo) / (hi - lo) * 255 + 0.5), 0, 255)        (0 when hi == lo)
The range is `--range lo,hi`, or by default the smallest and largest finite value shown (of
both images with --before-after, so they compare); a negative lo needs no `=`
(`--range -1,1`). NaN pixels are magenta (255, 0, 255) and +-inf clip to 255 / 0; float images
are written as RGB(A) for that reason.

Tiled images: `--swizzle MODE` (a GFX10/10.3/11 swizzle mode as addrlib names it: 64KB_S, 4KB_D,
64KB_R_X, ...) reads level 0, slice 0 of a 2-D image of `--width` x `--height` (required) pixels
laid out as the GPU lays it out, through wavelift/memory/layout.py (the code image load/store
uses; checked against Mesa's addrlib). The _X and _T modes depend on the GPU's pipes and
packers: give its `--gb-addr-config` (RADV's null device: 0) and, when the T#'s base address
has bits 15:8 set, `--pipe-bank-xor` (those bits). The capture's target picks the GFX10,
GFX10.3 (RB+) or GFX11 patterns and modes.
"""

from __future__ import annotations

import argparse
import re

import numpy as np
from numpy.typing import DTypeLike

from ..terminal import shown
from .common import (
    add_backend,
    add_budget,
    add_debug,
    check_backend,
    check_outputs,
    execute_fn,
    hexa,
    load_capture,
    replay_until,
    write_output,
)

# name: (bytes per pixel, dtype, channels, kind)
FORMATS: dict[str, tuple[int, DTypeLike, int, str]] = {
    "rgba8": (4, np.uint8, 4, "u8"),
    "bgra8": (4, np.uint8, 4, "u8"),
    "r8": (1, np.uint8, 1, "u8"),
    "r32ui": (4, np.dtype("<u4"), 1, "mapped"),
    "r32i": (4, np.dtype("<i4"), 1, "mapped"),
    "r32f": (4, np.dtype("<f4"), 1, "float"),
    "rg32f": (8, np.dtype("<f4"), 2, "float"),
    "rgba32f": (16, np.dtype("<f4"), 4, "float"),
}
GAP = 2
GAP_VALUE = 128
NAN_RGB = (255, 0, 255)
CHECKER = 8, (153, 102)  # --alpha checker: square size and its two gray levels
MAX_PIXELS = 1 << 26  # of the PNG written (8192 x 8192): bounds the memory show takes


def texels(raw: np.ndarray, fmt: str, width: int, height: int, stride: int, offsets=None) -> np.ndarray:
    """height x width x channels values of `fmt` from bytes `raw` (rows `stride` bytes apart, or
    each pixel at its byte offset in `offsets`, height x width, for a tiled image)."""
    bpp, dt, ch, _ = FORMATS[fmt]
    if offsets is not None:
        rows = raw[offsets[:, :, None] + np.arange(bpp)].reshape(height, width * bpp)
        return np.ascontiguousarray(rows).view(dt).reshape(height, width, ch)
    rows = np.stack([raw[y * stride : y * stride + width * bpp] for y in range(height)])
    return rows.reshape(height, -1).view(dt).reshape(height, width, ch)


def tiled_offsets(target: str, a, bpp: int) -> tuple[np.ndarray, int]:
    """(height x width byte offsets, bytes the image spans) of --swizzle's layout."""
    from ..errors import UserError
    from ..memory import layout

    g11 = target.startswith("gfx11")  # GFX11's own layouts (decision 0039)
    modes = {n: m for m, n in layout.sw_mode_names(g11).items()}
    mode = modes.get(a.swizzle.upper())
    if mode is None:
        raise UserError(f"--swizzle {a.swizzle!r}: not a swizzle mode (e.g. {', '.join(list(modes)[:6])})")
    if a.stride is not None or a.height is None:
        raise UserError("--swizzle needs --height and takes no --stride (the layout places each pixel)")
    if not 0 < a.height <= MAX_PIXELS // a.width:
        raise UserError(f"--height {a.height}: give 1 to {MAX_PIXELS // a.width} rows of {a.width} pixels")
    if not target.startswith(("gfx101", "gfx103", "gfx11")):
        raise UserError(f"--swizzle: GFX10/10.3/11 layouts only; the capture's target is {target}")
    k = layout.mode_kind(mode, g11)
    if k is not None and k[2] and a.gb_addr_config is None:
        raise UserError(f"--swizzle {a.swizzle}: an _X/_T mode needs the GPU's --gb-addr-config")
    try:
        # Navi10 (gfx1010) lacks addrlib's dsMipmapHtileFix (it changes only Z-mode mip tails)
        chip = layout.Chip.from_gb_addr_config(
            a.gb_addr_config or 0, target.startswith("gfx103"), target != "gfx1010", gfx11=g11
        )
    except ValueError as e:
        raise UserError(f"--gb-addr-config {a.gb_addr_config:#x}: {e}") from None
    s = layout.Surface(mode, layout.RSRC_2D, bpp.bit_length() - 1, a.width, a.height)
    if not layout.supported(chip, s):
        raise UserError(f"--swizzle {a.swizzle}: not a layout of {bpp}-byte 2-D images on {target}")
    yy, xx = np.indices((a.height, a.width))
    offs = layout.address(chip, s, xx, yy, 0, 0, a.pipe_bank_xor).astype(np.int64)
    return offs, int(layout.surface_info(s, chip).slice_size)


def auto_range(*arrays) -> tuple[float, float]:
    vals = [a[np.isfinite(a)] if a.dtype.kind == "f" else a.reshape(-1) for a in arrays]
    vals = [v for v in vals if v.size]
    if not vals:
        return 0.0, 1.0
    return float(min(v.min() for v in vals)), float(max(v.max() for v in vals))


def to_pixels(t: np.ndarray, fmt: str, lo: float, hi: float) -> np.ndarray:
    """uint8 pixels (H x W x C, C in 1/3/4) for texels `t` of `fmt`, mapped by [lo, hi]; alpha
    as stored (apply_alpha decides what becomes of it)."""
    kind = FORMATS[fmt][3]
    if kind == "u8":
        px = t.copy()
        if fmt == "bgra8":
            px = px[:, :, [2, 1, 0, 3]]
        return px
    x = t.astype(np.float64)
    if hi > lo:
        with np.errstate(invalid="ignore", over="ignore"):
            v = np.floor((x - lo) / (hi - lo) * 255.0 + 0.5)
    else:
        v = np.where(np.isnan(x), np.nan, 0.0)
    nan = np.isnan(v)
    v8 = np.clip(np.nan_to_num(v, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.uint8)
    h, w, ch = v8.shape
    if kind == "mapped":
        return v8
    # floats: RGB (or RGBA) so that NaN can be marked; one channel is gray
    out = np.zeros((h, w, 4 if ch == 4 else 3), np.uint8)
    out[:, :, :ch] = v8
    if ch == 1:
        out[:, :, 1] = out[:, :, 2] = v8[:, :, 0]
    anynan = nan.any(axis=2)
    out[anynan, 0], out[anynan, 1], out[anynan, 2] = NAN_RGB
    if ch == 4:
        out[anynan, 3] = 255
    return out


def side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    h, w, c = left.shape
    out = np.full((h, 2 * w + GAP, c), GAP_VALUE, np.uint8)
    if c in (2, 4):
        out[:, :, -1] = 255
    out[:, :w] = left
    out[:, w + GAP :] = right
    return out


def scaled(px: np.ndarray, n: int) -> np.ndarray:
    """Each pixel as an n x n square (nearest neighbour)."""
    return px if n == 1 else np.repeat(np.repeat(px, n, axis=0), n, axis=1)


def apply_alpha(px: np.ndarray, how: str) -> np.ndarray:
    """RGBA pixels as --alpha says (see the module docstring); other pixels unchanged."""
    if px.shape[2] != 4 or how == "keep":
        return px
    if how == "opaque":
        return px[:, :, :3].copy()
    size, (light, dark) = CHECKER
    h, w = px.shape[:2]
    yy, xx = np.indices((h, w))
    board = np.where((yy // size + xx // size) % 2 == 0, light, dark).astype(np.float64)
    a = px[:, :, 3:4].astype(np.float64) / 255.0
    rgb = px[:, :, :3].astype(np.float64) * a + board[:, :, None] * (1.0 - a)
    return np.floor(rgb + 0.5).astype(np.uint8)


def _safe_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_") or "allocation"


def cmd_show(a) -> int:
    from ..errors import UserError
    from .common import find_allocation

    cap = load_capture(a.capture)
    fmt = a.format
    bpp = FORMATS[fmt][0]
    if a.width <= 0:
        raise UserError("--width must be positive")
    if not 1 <= a.scale <= 64:
        raise UserError(f"--scale {a.scale}: give 1 to 64 (screen pixels per image pixel)")
    if a.before_after and a.dispatch is None:
        raise UserError("--before-after needs --dispatch N (the dispatch to compare around)")
    alloc = find_allocation(cap.memory, a.allocation)
    offsets = None
    if a.swizzle is not None:
        offsets, span = tiled_offsets(cap.target, a, bpp)
        if not 0 <= a.offset < alloc.size or span > alloc.size - a.offset:
            raise UserError(
                f"a {a.width}x{a.height} {a.swizzle} {fmt} image spans {span} bytes from offset "
                f"{a.offset}, but allocation {alloc.name!r} has {alloc.size}"
            )
    stride = a.stride if a.stride is not None else a.width * bpp
    if stride < a.width * bpp:
        raise UserError(f"--stride {stride} is smaller than a row ({a.width} x {bpp} bytes)")
    if not 0 <= a.offset < alloc.size:
        raise UserError(f"--offset {a.offset} is outside allocation {alloc.name!r} ({alloc.size} bytes)")
    avail = alloc.size - a.offset
    if a.height is None:
        height = (avail - a.width * bpp) // stride + 1 if avail >= a.width * bpp else 0
        if height <= 0:
            raise UserError(
                f"allocation {alloc.name!r} has {avail} bytes from offset "
                f"{a.offset}: not one row of {a.width} {fmt} pixels"
            )
    else:
        height = a.height
        need = (height - 1) * stride + a.width * bpp
        if height <= 0 or need > avail:
            raise UserError(
                f"{a.width}x{height} {fmt} pixels (stride {stride}) need {need} bytes "
                f"from offset {a.offset}, but allocation {alloc.name!r} has {avail}"
            )
    nbytes = (height - 1) * stride + a.width * bpp if offsets is None else span
    pixels = height * (2 * a.width + GAP if a.before_after else a.width) * a.scale**2
    if pixels > MAX_PIXELS:
        raise UserError(
            f"the PNG would have {pixels} pixels (at most {MAX_PIXELS}): lower --scale, --width or --height"
        )
    out = a.png or (_safe_name(alloc.name) + ("-before-after" if a.before_after else "") + ".png")
    check_outputs({"the capture": a.capture}, {"--png": out})
    lo_hi = None
    if a.range:
        try:
            lo, hi = (float(x) for x in a.range.split(","))
        except ValueError:
            raise UserError(f"--range {a.range!r}: give two numbers, lo,hi (e.g. 0,1)") from None
        lo_hi = (lo, hi)
    address = alloc.base + a.offset

    def snap(memory):
        return np.array(memory.peek(address, nbytes))

    before = None
    if a.dispatch is not None:
        check_backend(a.backend)
        held: dict[str, np.ndarray] = {}
        results = replay_until(
            cap,
            a.dispatch,
            execute_fn(a.backend, a.mode, {}, a.budget),
            before=lambda memory, config: held.setdefault("b", snap(memory)),
        )
        if len(results) <= a.dispatch:
            raise UserError(f"{a.capture} has {len(results)} dispatch(es); there is no dispatch {a.dispatch}")
        r = results[a.dispatch]
        before = held.get("b", snap(cap.memory))
        status = "landed" if r.refusal is None else f"refused: {shown(r.refusal)}"
        print(f"dispatch {a.dispatch}: {status}")
    after = snap(cap.memory)
    t_after = texels(after, fmt, a.width, height, stride, offsets)
    t_before = texels(before, fmt, a.width, height, stride, offsets) if before is not None else None
    kind = FORMATS[fmt][3]
    if lo_hi is None and kind != "u8":
        lo_hi = auto_range(t_after, *([t_before] if (t_before is not None and a.before_after) else []))
    lo, hi = lo_hi if lo_hi else (0.0, 255.0)
    img = to_pixels(t_after, fmt, lo, hi)
    if a.before_after:
        assert t_before is not None  # --before-after needs --dispatch (checked above)
        img = side_by_side(to_pixels(t_before, fmt, lo, hi), img)
        changed = int(
            np.any(
                t_before.view(np.uint8).reshape(height, a.width, -1)
                != t_after.view(np.uint8).reshape(height, a.width, -1),
                axis=2,
            ).sum()
        )
    img = apply_alpha(scaled(img, a.scale), "opaque" if a.opaque else a.alpha)
    from .. import png
    from ..outfile import atomic_output

    def write(path):
        data = png.encode(img)
        with atomic_output(path) as f:
            f.write(data)

    write_output("--png", out, write)
    rng = f", range [{lo:g}, {hi:g}]" if kind != "u8" else ""
    what = f"{alloc.name!r} at {hexa(address)}"
    print(
        f"wrote {out}: {img.shape[1]}x{img.shape[0]} PNG of {what}, {a.width}x{height} {fmt}"
        f"{rng}" + (" (before | after)" if a.before_after else "")
    )
    if a.before_after:
        print(f"{changed} of {a.width * height} pixels changed")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "show",
        help="render an allocation as a PNG image (optionally before/after a dispatch)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("capture", help=".wlcap file")
    p.add_argument("allocation", help="allocation name (or unique prefix), or an address in it")
    p.add_argument("--format", "-f", choices=list(FORMATS), required=True)
    p.add_argument("--width", "-W", type=int, required=True, help="pixels per row")
    p.add_argument("--height", "-H", type=int, help="rows (default: as many as fit)")
    p.add_argument(
        "--offset",
        type=lambda s: int(s, 0),
        default=0,
        help="bytes into the allocation where the image starts",
    )
    p.add_argument(
        "--stride",
        type=lambda s: int(s, 0),
        default=None,
        help="bytes from one row to the next (default: width x pixel size)",
    )
    p.add_argument(
        "--range",
        metavar="LO,HI",
        help="value range mapped to 0..255 (default: min,max of the finite values shown)",
    )
    p.add_argument(
        "--alpha",
        choices=["opaque", "checker", "keep"],
        default="opaque",
        help="rgba8/bgra8/rgba32f alpha: ignore it (default), composite over a "
        "checkerboard, or keep it in an RGBA PNG",
    )
    p.add_argument("--opaque", action="store_true", help=argparse.SUPPRESS)  # older --alpha opaque
    p.add_argument(
        "--scale", type=int, default=1, metavar="N", help="each pixel as an N x N square (default 1)"
    )
    p.add_argument(
        "--swizzle",
        metavar="MODE",
        help="a tiled 2-D image in this GFX10/10.3/11 swizzle mode (64KB_S, 4KB_D, 64KB_R_X, ...); needs --height",
    )
    p.add_argument(
        "--gb-addr-config",
        type=lambda s: int(s, 0),
        metavar="VALUE",
        help="the GPU's GB_ADDR_CONFIG, for the _X/_T modes (RADV's null device: 0)",
    )
    p.add_argument(
        "--pipe-bank-xor",
        type=lambda s: int(s, 0),
        default=0,
        metavar="VALUE",
        help="_X/_T modes: the pipe/bank XOR (the T# base address bits 15:8; default 0)",
    )
    p.add_argument("--png", metavar="FILE", help="output file (default: <allocation>.png)")
    p.add_argument("--dispatch", "-d", type=int, metavar="N", help="show the allocation after dispatch N ran")
    p.add_argument(
        "--before-after",
        action="store_true",
        help="with --dispatch: before and after dispatch N side by side",
    )
    add_backend(p)
    p.add_argument("--mode", choices=["wave", "lane"], default="wave")
    add_budget(p)
    add_debug(p)
    p.set_defaults(func=cmd_show)
