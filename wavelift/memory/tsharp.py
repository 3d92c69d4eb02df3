"""GFX10/10.3 image (T#) and sampler (S#) descriptors decoded on the host: every field, by the
names and bit ranges of Mesa's register database (generated into tables/gfx10_image.json by
tools/gen_image_tables.py, never typed), plus what they mean for an image's layout.

frontend/image.py decodes the same fields in IR (a T# is usually loaded by the program at run
time); this module is for the host side: tests, ``wavelift show`` and reports.  Word 0 is
BASE_ADDRESS[39:8] and word 7 META_DATA_ADDRESS_HI (the register database gives them no field
list).  Meanings (RADV 22.3.6 radv_image.c gfx10_make_texture_descriptor and
si_set_mutable_tex_desc_fields):

* WIDTH = WIDTH_LO | WIDTH_HI << 2, plus 1; HEIGHT plus 1.
* DEPTH: the depth minus 1 of a 3-D image, the last layer of an array (BASE_ARRAY the first);
  GFX10.3 also names bits [13:0] PITCH (a custom row pitch minus 1 for 1-D/2-D images).
* MAX_MIP (word 5): the image's level count minus 1, which places every level (mip tails
  depend on it); BASE_LEVEL..LAST_LEVEL are the view's levels inside it.
* ARRAY_PITCH of a 3-D image: 0 for sampling (DEPTH is level 0's last slice), 1 for a storage
  view (BASE_ARRAY the first slice, DEPTH the bound level's last).
* Base address bits [15:8] of a tiled image in an _X/_T mode are its pipe/bank XOR (RADV's
  ``tile_swizzle``, ORed into word 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from . import layout

TYPE_1D, TYPE_2D, TYPE_3D, TYPE_CUBE, TYPE_1D_ARRAY, TYPE_2D_ARRAY, TYPE_2D_MSAA, TYPE_2D_MSAA_ARRAY = range(
    8, 16
)


@dataclass(frozen=True)
class ImgFormat:
    value: int
    name: str  # as Mesa names it, without GFX10_FORMAT_: "8_8_8_8_UNORM"
    bits: tuple[int, ...]  # channel sizes from bit 0 up (X first); () for a format that is not plain
    numeric: str  # UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT, SRGB, FLOAT_CLAMP; "" if not plain
    bytes: int  # bytes per texel; 0 when not plain (block-compressed, packed, YUV, FMASK, ...)
    buffers_only: bool


@cache
def formats() -> dict[int, ImgFormat]:
    out = {}
    for k, e in layout.tables()["formats"].items():
        out[int(k)] = ImgFormat(
            int(k), e["name"], tuple(e["bits"]), e["numeric"], e["bytes"], e["buffers_only"]
        )
    return out


def img_format(value: int) -> ImgFormat | None:
    """The IMG_FORMAT ``value`` names, or None (not a GFX10 format)."""
    return formats().get(value)


def enum_name(enum: str, value: int) -> str | None:
    return layout.tables()["enums"][enum].get(str(value))


@cache
def _fields(kind: str, gfx103: bool) -> tuple[tuple[str, int, int, int], ...]:
    t = layout.tables()[kind]["gfx103" if gfx103 else "gfx10"]
    return tuple((name, int(w), lo, hi) for w, fl in t.items() for name, lo, hi in fl)


def field_bits(name: str, kind: str = "tsharp") -> tuple[int, int, int]:
    """(word, low bit, high bit) of a field that GFX10 and GFX10.3 place alike."""
    found = {(w, lo, hi) for g in (False, True) for n, w, lo, hi in _fields(kind, g) if n == name}
    if len(found) != 1:
        raise KeyError(f"{name}: not one place on GFX10 and GFX10.3")
    return found.pop()


@cache
def tables11() -> dict:
    """tables/gfx11_image.json: GFX11's T# field layout and GFX11_FORMAT enum (Mesa 22.3.6's
    gfx11-rsrc.json, by tools/gen_image_tables.py)."""
    import json
    from importlib import resources

    return json.loads(resources.files("wavelift.memory").joinpath("tables/gfx11_image.json").read_text())


@cache
def _fields11() -> dict[str, tuple[int, int, int]]:
    return {name: (int(w), lo, hi) for w, fl in tables11()["tsharp"].items() for name, lo, hi in fl}


def field_bits11(name: str) -> tuple[int, int, int]:
    """(word, low bit, high bit) of GFX11 T# field ``name`` (KeyError: GFX11 has no such field)."""
    return _fields11()[name]


def unnamed_bits(places, words: range) -> dict[int, int]:
    """Per descriptor word in ``words``, the bits no field place (word, lo, hi) covers."""
    out = {}
    for w in words:
        used = 0
        for fw, lo, hi in places:
            if fw == w:
                used |= ((1 << (hi - lo + 1)) - 1) << lo
        out[w] = ~used & 0xFFFFFFFF
    return out


@cache
def reserved11() -> dict[int, int]:
    """Per T# word 1..6, the bits no GFX11 field names (reserved)."""
    return unnamed_bits(_fields11().values(), range(1, 7))


@cache
def format10_of11() -> dict[int, int]:
    """GFX11 IMG_FORMAT value -> the GFX10 IMG_FORMAT value of the same name (GFX11 renumbered
    the enum); formats without a GFX10 namesake are left out."""
    by_name = {e["name"]: int(k) for k, e in layout.tables()["formats"].items()}
    return {
        int(k): by_name[e["name"]]
        for k, e in tables11()["formats"].items()
        if e["name"] in by_name and e["name"] != "INVALID"
    }


def decode_fields(words: Sequence[int], kind: str = "tsharp", gfx103: bool = True) -> dict[str, int]:
    """Every named field of a T# (8 words, ``kind="tsharp"``) or S# (4 words, ``"ssharp"``).
    Fields that share bits (GFX10.3 DEPTH and PITCH, S# LOD_BIAS and BORDER_COLOR_PTR) are all
    given."""
    out = {}
    for name, w, lo, hi in _fields(kind, gfx103):
        out[name] = (int(words[w]) >> lo) & ((1 << (hi - lo + 1)) - 1)
    if kind == "tsharp":
        out["BASE_ADDRESS"] = int(words[0])
        out["META_DATA_ADDRESS_HI"] = int(words[7])
    return out


@dataclass(frozen=True)
class TSharp:
    words: tuple[int, ...]
    gfx103: bool
    fields: dict[str, int]

    @property
    def base_address(self) -> int:
        return (self.fields["BASE_ADDRESS"] | self.fields["BASE_ADDRESS_HI"] << 32) << 8

    @property
    def format(self) -> ImgFormat | None:
        return img_format(self.fields["FORMAT"])

    @property
    def type(self) -> int:
        return self.fields["TYPE"]

    @property
    def is_image(self) -> bool:
        """TYPE is an image type (8..15); a null descriptor (RADV: all zeros) is not."""
        return self.type >= TYPE_1D

    @property
    def width(self) -> int:
        return (self.fields["WIDTH_LO"] | self.fields["WIDTH_HI"] << 2) + 1

    @property
    def height(self) -> int:
        return self.fields["HEIGHT"] + 1

    @property
    def depth(self) -> int:
        """Slices of a 3-D image (DEPTH + 1), 1 otherwise."""
        return self.fields["DEPTH"] + 1 if self.type == TYPE_3D else 1

    @property
    def base_array(self) -> int:
        return self.fields["BASE_ARRAY"]

    @property
    def last_array(self) -> int:
        """The last layer of an array (DEPTH); the base layer for other types."""
        arrays = (TYPE_1D_ARRAY, TYPE_2D_ARRAY, TYPE_2D_MSAA_ARRAY, TYPE_CUBE)
        return self.fields["DEPTH"] if self.type in arrays else self.base_array

    @property
    def pitch(self) -> int | None:
        """GFX10.3 custom pitch (PITCH + 1) of a 1-D/2-D image when PITCH is set, else None."""
        if self.gfx103 and self.type in (TYPE_1D, TYPE_2D) and self.fields["PITCH"]:
            return self.fields["PITCH"] + 1
        return None

    @property
    def dst_sel(self) -> tuple[int, int, int, int]:
        return tuple(self.fields[f"DST_SEL_{c}"] for c in "XYZW")  # type: ignore[return-value]

    @property
    def levels(self) -> tuple[int, int]:
        return self.fields["BASE_LEVEL"], self.fields["LAST_LEVEL"]

    @property
    def sw_mode(self) -> int:
        return self.fields["SW_MODE"]

    @property
    def compressed(self) -> bool:
        return bool(self.fields["COMPRESSION_EN"] or self.fields["WRITE_COMPRESS_ENABLE"])

    def layout(self, chip: layout.Chip) -> tuple[layout.Surface, int, int] | tuple[str, str]:
        """(surface, aligned base address, pipe/bank XOR) of the image (levels 0..MAX_MIP;
        BASE_LEVEL is the one an access without a mip argument reads), or (refusal code, reason)
        when wavelift does not lay the image out."""
        f = self.format
        if not self.is_image:
            return "image.unsupported_descriptor", "not an image (TYPE below 8: a null descriptor)"
        if f is None or not f.bytes or f.bytes & (f.bytes - 1):
            return (
                "image.unsupported_format",
                f"IMG_FORMAT {self.fields['FORMAT']} has no power-of-two texel size",
            )
        if self.type in (TYPE_2D_MSAA, TYPE_2D_MSAA_ARRAY, TYPE_CUBE):
            return "image.unsupported_descriptor", "MSAA and cube images are not laid out"
        if self.compressed:
            return "image.unsupported_layout", "DCC-compressed"
        if self.pitch is not None:
            return "image.unsupported_descriptor", "a custom pitch"
        rsrc = {TYPE_1D: 0, TYPE_1D_ARRAY: 0, TYPE_3D: 2}.get(self.type, 1)
        slices = self.depth if self.type == TYPE_3D else self.last_array + 1
        # the whole chain is laid out (MAX_MIP + 1 levels, RADV: the image's level count); the
        # view's BASE_LEVEL..LAST_LEVEL lie inside it
        levels = self.fields["MAX_MIP"] + 1
        if self.levels[0] > self.levels[1] or self.levels[1] >= levels:
            return "image.unsupported_descriptor", "BASE_LEVEL..LAST_LEVEL outside the MAX_MIP + 1 levels"
        s = layout.Surface(
            self.sw_mode, rsrc, f.bytes.bit_length() - 1, self.width, self.height, slices, levels
        )
        if not layout.supported(chip, s):
            name = layout.sw_mode_names().get(self.sw_mode, str(self.sw_mode))
            return "image.unsupported_layout", f"swizzle mode {name} is not laid out for this image type"
        base = self.base_address
        k = layout.mode_kind(self.sw_mode)
        if k is None:
            return s, base, 0
        low = base & ((1 << k[0]) - 1)
        facts = layout.mode_facts(chip, self.sw_mode, rsrc, s.bpe_log2)
        if facts is None or low & ~facts.xor_mask:
            # (frontend/image.py refuses the same T#s)
            return (
                "image.unsupported_layout",
                "the base address has bits set inside its swizzle block "
                "other than an _X/_T mode's pipe/bank XOR",
            )
        return s, base - low, low >> 8  # _X/_T modes: the bits above 256 B are the pipe/bank XOR


def decode_tsharp(words: Sequence[int], gfx103: bool = True) -> TSharp:
    w = tuple(int(x) & 0xFFFFFFFF for x in words)
    if len(w) != 8:
        raise ValueError("a T# is 8 dwords")
    return TSharp(w, gfx103, decode_fields(w, "tsharp", gfx103))


def decode_ssharp(words: Sequence[int], gfx103: bool = True) -> dict[str, int]:
    w = tuple(int(x) & 0xFFFFFFFF for x in words)
    if len(w) != 4:
        raise ValueError("an S# is 4 dwords")
    return decode_fields(w, "ssharp", gfx103)
