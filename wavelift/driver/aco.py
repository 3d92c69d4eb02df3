"""Shaders compiled by tools/aco_compile (Mesa RADV 22.3 + ACO), dispatched the way RADV
22.3 dispatches them: code, descriptor sets, push-constant buffer and scratch in RADV's 32-bit
window 0xffff8000_xxxxxxxx, user SGPRs per the shader's recorded `user_sgprs.layout`, and the
registers radv_pipeline_emit_hw_cs / radv_emit_dispatch_packets write.

    sh = dev.load_aco_shader("tests/fixtures/gfx1030/aco/push_consts_ubo-w32.json")
    r = sh.launch(groups=(2, 1, 1), buffers={(0, 0): ubo, (1, 0): vals}, push_constants=pc)

Facts are from the aco-compile README ("What a dispatch of this code needs", Mesa 22.3.6 line
numbers) and the RADV captures in tests/fixtures/radv/; docs/decisions/0004-driver.md lists them.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import UserError
from ..memory import tsharp
from ..stream import pm4
from .hsa import TARGETS, LaunchError, align_up, ceil_div, make_grid, scratch_waves
from .launch import Buffer, LaunchRecord


class Device(Protocol):
    """What an ACO launch needs of a wavelift.Device (device.py, which loads shaders through
    this module)."""

    target: str
    launches: list[LaunchRecord]
    launch_count: int

    def alloc_window(self, size: int, name: str, align: int = 256, data=None) -> int: ...
    def launch_alloc(
        self, size: int, name: str, align: int = 256, data=None, window: bool = False
    ) -> int: ...
    def record_launch(self, rec: LaunchRecord) -> None: ...
    def scratch_window(self, size: int) -> int: ...
    def upload(self, array, name: str = "") -> Buffer: ...
    def submit_dispatch(
        self, registers: dict[str, int], dims, initiator: int, preamble: list[int] | None = None
    ) -> tuple[list[int], Any]: ...


def radv_resource_limits(waves_per_group: int, target: str) -> int:
    """COMPUTE_RESOURCE_LIMITS as RADV 22.3 computes it (radv_get_compute_resource_limits ->
    ac_get_compute_resource_limits): SIMD_DEST_CNTL when the wave count is a multiple of 4,
    FORCE_SIMD_DIST for one-wave groups when CUs per SE is not a multiple of 4, WAVES_PER_SH 0,
    CU_GROUP_COUNT = threadgroups_per_cu - 1 with threadgroups_per_cu = 2 for one-wave groups on
    GFX10+.  Checked against the RADV captures (0x01000000 for one wave, 0 for two)."""
    t = TARGETS[target]
    v = (1 << 22) if waves_per_group % 4 == 0 else 0
    if (t["cus"] // t["ses"]) % 4 and waves_per_group == 1:
        v |= 1 << 23
    tg_per_cu = 2 if waves_per_group == 1 else 1
    return v | ((tg_per_cu - 1) << 24)


# Buffer V# dword3 (aco-compile README, radv_descriptor_set.c:1045-1095): DST_SEL XYZW,
# FORMAT 32_FLOAT, OOB_SELECT RAW, RESOURCE_LEVEL 1 (GFX10/10.3); GFX11 has no RESOURCE_LEVEL.
BUFFER_DWORD3 = {False: 0x31016FAC, True: 0x30016FAC}

# Image formats for storage images: name -> (GFX10 IMG_FORMAT, bytes per texel).  GFX10_FORMAT
# values from Mesa's gfx10-rsrc.json / gfx10_format_table (32_UINT 20, 32_SINT 21, 32_FLOAT 22,
# 8_8_8_8_UNORM 56).
IMAGE_FORMATS = {"r32ui": (20, 4), "r32i": (21, 4), "r32f": (22, 4), "rgba8": (56, 4)}
# more GLSL layout names -> the GFX10 format Mesa's gfx10_format_table gives their pipe format
# (AMD names channels from the most significant bit: R11G11B10 is 10_11_11, RGB10A2 2_10_10_10);
# values and sizes from the generated table (frontend/formats.py converts them)
_GLSL_FORMATS = {
    "r8": "8_UNORM", "r8_snorm": "8_SNORM", "r8ui": "8_UINT", "r8i": "8_SINT", "rg8": "8_8_UNORM",
    "rgba8_snorm": "8_8_8_8_SNORM", "rgba8ui": "8_8_8_8_UINT", "rgba8i": "8_8_8_8_SINT",
    "r16": "16_UNORM", "r16_snorm": "16_SNORM", "r16f": "16_FLOAT", "r16ui": "16_UINT", "r16i": "16_SINT",
    "rg16f": "16_16_FLOAT", "rgba16": "16_16_16_16_UNORM", "rgba16_snorm": "16_16_16_16_SNORM",
    "rgba16f": "16_16_16_16_FLOAT", "rgba16ui": "16_16_16_16_UINT", "rgba16i": "16_16_16_16_SINT",
    "rg32f": "32_32_FLOAT", "rgba32f": "32_32_32_32_FLOAT", "rgba32ui": "32_32_32_32_UINT",
    "rgba32i": "32_32_32_32_SINT", "r11f_g11f_b10f": "10_11_11_FLOAT", "rgb10_a2": "2_10_10_10_UNORM",
    "rgb10_a2ui": "2_10_10_10_UINT",
}  # fmt: skip


def _more_formats() -> None:
    by_name = {f.name: (v, f.bytes) for v, f in tsharp.formats().items()}
    for glsl, name in _GLSL_FORMATS.items():
        IMAGE_FORMATS[glsl] = by_name[name]


_more_formats()
SQ_RSRC_IMG_2D = 9

TARGET_OF_LEVEL = {"GFX10": "gfx1010", "GFX10_3": "gfx1030", "GFX11": "gfx1100"}


@dataclass(frozen=True)
class Image:
    """A linear 2-D storage image in guest memory, laid out as addrlib lays out linear images
    (and the hardware reads them): rows ``pitch`` texels apart, the width aligned to 256 bytes
    (frontend/image.py)."""

    buffer: Buffer
    width: int
    height: int
    format: str = "rgba8"

    @property
    def address(self) -> int:
        return self.buffer.address

    @property
    def pitch(self) -> int:
        """Texels from one row to the next."""
        bpp = IMAGE_FORMATS[self.format][1]
        return -(-int(self.width) * bpp // 256) * 256 // bpp


def buffer_descriptor(address: int, size: int, gfx11: bool) -> list[int]:
    """RADV's buffer V# (write_buffer_descriptor, radv_descriptor_set.c:1045-1095)."""
    return [
        address & 0xFFFFFFFF,
        (address >> 32) & 0xFFFF,
        align_up(size, 4) & 0xFFFFFFFF,
        BUFFER_DWORD3[gfx11],
    ]


def image_descriptor(img: Image, gfx11: bool) -> list[int]:
    """An 8-dword storage-image T# for a linear 2-D image, with the fields RADV's
    gfx10_make_texture_descriptor + radv_set_mutable_tex_desc_fields write: BASE_ADDRESS (va>>8)
    and BASE_ADDRESS_HI, FORMAT [28:20] (GFX11: [27:20], GFX11's numbering), WIDTH-1 split over
    WIDTH_LO [31:30] / WIDTH_HI [13:0],
    HEIGHT-1 [27:14], RESOURCE_LEVEL (not GFX11), DST_SEL XYZW, TYPE 2D, SW_MODE 0 (linear).
    The image's buffer holds ``height`` rows of ``pitch`` texels."""
    if img.format not in IMAGE_FORMATS:
        raise LaunchError(
            f"image format {img.format!r} not supported (supported: {', '.join(IMAGE_FORMATS)})"
        )
    if img.address % 256:
        raise LaunchError("an image's base address must be 256-byte aligned")
    fmt, _bpp = IMAGE_FORMATS[img.format]
    if gfx11:  # GFX11 renumbered IMG_FORMAT: the GFX11 format of the same name (register database)
        name = tsharp.formats()[fmt].name
        (fmt,) = [int(k) for k, e in tsharp.tables11()["formats"].items() if e["name"] == name]
    w, h = int(img.width) - 1, int(img.height) - 1
    if not (0 <= w < 1 << 14 and 0 <= h < 1 << 14):
        raise LaunchError(f"image size {img.width}x{img.height} out of range")
    d0 = (img.address >> 8) & 0xFFFFFFFF
    d1 = ((img.address >> 40) & 0xFF) | (fmt << 20) | ((w & 3) << 30)
    d2 = (w >> 2) | (h << 14) | ((0 if gfx11 else 1) << 31)
    d3 = 4 | (5 << 3) | (6 << 6) | (7 << 9) | (SQ_RSRC_IMG_2D << 28)
    return [d0, d1, d2, d3, 0, 0, 0, 0]


class AcoShader:
    """An aco-compile output (.json + .bin) loaded into a Device."""

    def __init__(self, device: Device, info: dict, code: bytes, name: str = ""):
        self.device = device
        self.info = info
        self.name = name or "aco"
        target = info.get("llvm_cpu") or TARGET_OF_LEVEL.get(info.get("gfx_level", ""), "")
        if target != device.target:
            raise UserError(f"shader {self.name} is for {target}, the device is {device.target}")
        self.gfx11 = TARGETS[target]["gfx11"]
        self.wave_size = int(info["wave_size"])
        regs = info["registers"]
        self.rsrc1 = int(regs["rsrc1"], 16)
        self.rsrc2 = int(regs["rsrc2"], 16)
        self.rsrc3 = int(regs["rsrc3"], 16)
        self.local_size = tuple(int(x) for x in info["local_size"])
        if len(code) != int(info["code"]["code_size"]):
            raise UserError(
                f"{self.name}: .bin has {len(code)} bytes, the JSON says {info['code']['code_size']}"
            )
        self.code = code
        self.address = device.alloc_window(len(code), f"aco_code:{self.name}", align=256, data=code)
        self.last_launch: LaunchRecord | None = None

    @classmethod
    def load(cls, device: Device, json_path, bin_path=None) -> AcoShader:
        json_path = os.fspath(json_path)
        try:
            with open(json_path) as f:
                info = json.load(f)
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read aco-compile JSON {json_path}: {e}") from None
        if bin_path is None:
            bin_path = os.path.join(
                os.path.dirname(json_path),
                info.get("code", {}).get("bin_file") or os.path.basename(json_path)[:-5] + ".bin",
            )
        try:
            with open(bin_path, "rb") as f:
                code = f.read()
        except OSError as e:
            raise UserError(f"cannot read shader code {bin_path}: {e.strerror}") from None
        name = os.path.basename(json_path)[:-5] if json_path.endswith(".json") else json_path
        return cls(device, info, code, name)

    # ---- layout helpers ----------------------------------------------------------------------
    @property
    def sets(self) -> dict[int, dict]:
        return {s["set"]: s for s in self.info["descriptor_layout"]["sets"]}

    @property
    def user_sgpr_layout(self) -> list[dict]:
        return self.info["user_sgprs"]["layout"]

    @property
    def scratch_enabled(self) -> bool:
        return bool(self.rsrc2 & 1)

    def _binding(self, set_, binding) -> dict:
        s = self.sets.get(set_)
        if s is not None:
            for b in s["bindings"]:
                if b["binding"] == binding:
                    return b
        raise LaunchError(f"shader {self.name} has no descriptor set {set_} binding {binding}")

    def _as_range(self, value, what) -> tuple[int, int]:
        dev = self.device
        if isinstance(value, tuple) and len(value) == 3:
            buf, off, rng = value
            return self._as_range(buf, what)[0] + int(off), int(rng)
        if isinstance(value, Buffer):
            return value.address, value.nbytes
        if isinstance(value, np.ndarray):
            b = dev.upload(value, name=f"{self.name}:{what}")
            return b.address, b.nbytes
        raise LaunchError(
            f"{what}: bind a Buffer, a NumPy array or (Buffer, offset, range), not {type(value).__name__}"
        )

    # ---- launch ------------------------------------------------------------------------------
    def launch(self, groups=(1, 1, 1), buffers=None, push_constants=b"", images=None, inline_uniforms=None):
        rec = self.prepare(groups, buffers, push_constants, images, inline_uniforms)
        dw, result = self.device.submit_dispatch(rec.registers, rec.dims, rec.initiator)
        rec.pm4 = dw
        rec.result = result
        self.device.record_launch(rec)
        self.last_launch = rec
        return result

    def prepare(
        self, groups=(1, 1, 1), buffers=None, push_constants=b"", images=None, inline_uniforms=None
    ) -> LaunchRecord:
        dev, info = self.device, self.info
        buffers = dict(buffers or {})
        images = dict(images or {})
        inline_uniforms = dict(inline_uniforms or {})
        grid = make_grid(groups, self.local_size)
        gx, gy, gz = grid.groups
        pc = bytes(push_constants)
        pcinfo = info.get("push_constants", {})
        pc_size = int(pcinfo.get("size", 0))
        if len(pc) > max(pc_size, int(pcinfo.get("radv_push_constant_size", 0))):
            raise LaunchError(f"{len(pc)} bytes of push constants; the shader declares {pc_size}")
        for key in list(buffers) + list(images) + list(inline_uniforms):
            self._binding(*key)

        # descriptor sets (in the 32-bit window)
        set_va: dict[int, int] = {}
        dyn_vs: dict[int, list[int]] = {}
        idx = dev.launch_count
        for sno, s in sorted(self.sets.items()):
            size = max(int(s["size_bytes"]), 16)
            mem = bytearray(size)
            for b in s["bindings"]:
                for i in range(int(b["count"])):
                    key = (sno, b["binding"]) if b["count"] == 1 else (sno, b["binding"], i)
                    val = buffers.get(key)
                    if val is None and b["count"] > 1 and i == 0:
                        val = buffers.get((sno, b["binding"]))
                    # a dynamic buffer has no place in the set (its V# follows the push constants)
                    off = 0 if b["offset"] is None else int(b["offset"]) + i * int(b["stride"])
                    t = b["type"]
                    if t in ("ubo", "ssbo"):
                        if val is not None:
                            a, n = self._as_range(val, f"set {sno} binding {b['binding']}")
                            struct.pack_into("<4I", mem, off, *buffer_descriptor(a, n, self.gfx11))
                    elif t in ("ubo_dyn", "ssbo_dyn"):
                        if val is not None:
                            a, n = self._as_range(val, f"set {sno} binding {b['binding']}")
                            dyn_vs[int(b["push_buffer_offset"]) + 16 * i] = buffer_descriptor(
                                a, n, self.gfx11
                            )
                    elif t == "storage_image":
                        img = images.get(key) or (images.get((sno, b["binding"])) if i == 0 else None)
                        if img is not None:
                            struct.pack_into("<8I", mem, off, *image_descriptor(img, self.gfx11))
                    elif t == "inline_uniform_block":
                        data = inline_uniforms.get((sno, b["binding"]))
                        if data is not None:
                            data = bytes(data)
                            if len(data) > int(b.get("bytes", len(data))):
                                raise LaunchError(
                                    f"inline uniform block set {sno} binding "
                                    f"{b['binding']}: {len(data)} bytes, room for "
                                    f"{b['bytes']}"
                                )
                            mem[off : off + len(data)] = data
                    else:
                        if val is not None or key in images:
                            raise LaunchError(
                                f"descriptor type {t!r} (set {sno} binding "
                                f"{b['binding']}) is not supported by wavelift's "
                                f"RADV runtime; leave it unbound (a null descriptor)"
                            )
            set_va[sno] = dev.launch_alloc(
                size, f"{self.name}:set{sno}#{idx}", align=64, data=bytes(mem), window=True
            )

        # push-constant buffer: push constants padded to radv_push_constant_size, then dynamic V#s
        layout_whats = {e["what"] for e in self.user_sgpr_layout}
        push_va = 0
        if "push_constants" in layout_whats:
            dl = info["descriptor_layout"]["dynamic_buffers"]
            size = max(
                int(dl.get("push_constant_buffer_bytes", 0)),
                16,
                int(pcinfo.get("radv_push_constant_size", 0)),
            )
            pbuf = bytearray(size)
            pbuf[: len(pc)] = pc
            for off, v in dyn_vs.items():
                struct.pack_into("<4I", pbuf, off, *v)
            push_va = dev.launch_alloc(
                size, f"{self.name}:push#{idx}", align=16, data=bytes(pbuf), window=True
            )
        elif dyn_vs:
            raise LaunchError("dynamic buffers bound but the shader has no push-constant pointer")

        # scratch (RADV: radv_emit_compute_scratch; WAVESIZE from the JSON)
        scratch_va, wave_bytes, waves = 0, 0, 0
        t = TARGETS[dev.target]
        if self.scratch_enabled:
            wavesize = int(info["scratch"]["tmpring_wavesize"])
            wave_bytes = wavesize * t["wavesize_unit"]
            if wave_bytes < int(info["scratch"]["bytes_per_wave"]):
                raise LaunchError(
                    f"{self.name}: tmpring_wavesize {wavesize} is smaller than "
                    f"{info['scratch']['bytes_per_wave']} bytes per wave"
                )
            total_waves = (
                ceil_div(self.local_size[0] * self.local_size[1] * self.local_size[2], self.wave_size)
                * gx
                * gy
                * gz
            )
            waves, slots = scratch_waves(dev.target, total_waves)
            scratch_va = dev.scratch_window(slots * wave_bytes)
            tmpring = waves | (wavesize << 12)
        else:
            tmpring = 0

        # user SGPRs, from the recorded layout
        user: list[int | None] = [None] * int(info["user_sgprs"]["count"])
        grid_ptr = 0

        def put(first, vals):
            for j, v in enumerate(vals):
                user[first + j] = v & 0xFFFFFFFF

        for e in self.user_sgpr_layout:
            what, first, count = e["what"], int(e["first"]), int(e["count"])
            if what == "scratch_ring_offsets":
                if scratch_va:
                    swz = (1 << 30) if self.gfx11 else (1 << 31)
                    put(first, [scratch_va, ((scratch_va >> 32) & 0xFFFF) | swz])
            elif what == "descriptor_set":
                sno = int(e["set"])
                put(first, [set_va[sno]])
            elif what == "indirect_descriptor_sets":
                table = bytearray(128)
                for sno, va in set_va.items():
                    struct.pack_into("<I", table, 4 * sno, va & 0xFFFFFFFF)
                put(
                    first,
                    [
                        dev.launch_alloc(
                            128, f"{self.name}:sets#{idx}", align=16, data=bytes(table), window=True
                        )
                    ],
                )
            elif what == "push_constants":
                put(first, [push_va])
            elif what == "inline_push_constants":
                raw = pc.ljust(4 * (max(e["push_constant_dwords"]) + 1), b"\0")
                put(first, [struct.unpack_from("<I", raw, 4 * d)[0] for d in e["push_constant_dwords"]])
            elif what == "grid_size":
                if count == 3:
                    put(first, [gx, gy, gz])
                else:  # GFX10.1: a pointer to 12 bytes
                    grid_ptr = dev.launch_alloc(
                        16,
                        f"{self.name}:grid#{idx}",
                        align=16,
                        data=struct.pack("<3I", gx, gy, gz),
                        window=True,
                    )
                    put(first, [grid_ptr, grid_ptr >> 32])
            else:
                raise LaunchError(
                    f"user SGPR {e['sgpr']} ({what}) is not supported by wavelift's RADV runtime"
                )

        regs = {
            "COMPUTE_PGM_LO": (self.address >> 8) & 0xFFFFFFFF,
            "COMPUTE_PGM_HI": (self.address >> 40) & 0xFF,
            "COMPUTE_PGM_RSRC1": self.rsrc1,
            "COMPUTE_PGM_RSRC2": self.rsrc2,
            "COMPUTE_PGM_RSRC3": self.rsrc3,
            "COMPUTE_RESOURCE_LIMITS": radv_resource_limits(
                ceil_div(self.local_size[0] * self.local_size[1] * self.local_size[2], self.wave_size),
                dev.target,
            ),
            "COMPUTE_TMPRING_SIZE": tmpring,
        }
        if self.gfx11 and scratch_va:
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] = (scratch_va >> 8) & 0xFFFFFFFF
            regs["COMPUTE_DISPATCH_SCRATCH_BASE_HI"] = (scratch_va >> 40) & 0xFF
        for i, sgpr in enumerate(user):
            if sgpr is not None:  # RADV leaves s[0:1] unwritten without scratch
                regs[f"COMPUTE_USER_DATA_{i}"] = sgpr
        for i, axis in enumerate("XYZ"):
            regs[f"COMPUTE_NUM_THREAD_{axis}"] = self.local_size[i]
        initiator = pm4.initiator(wave32=self.wave_size == 32, force_start_at_000=True, order_mode=True)
        return LaunchRecord(
            index=idx,
            kernel=self.name,
            kind="aco",
            grid=grid,
            registers=regs,
            initiator=initiator,
            dims=grid.groups,
            user_sgprs=[0 if v is None else v for v in user],
            pm4=[],
            program_address=self.address,
            scratch_address=scratch_va,
            lds_bytes=int(info.get("lds", {}).get("bytes", 0)),
            extra={
                "sets": set_va,
                "push": push_va,
                "grid_ptr": grid_ptr,
                "scratch_waves": waves,
                "scratch_wave_bytes": wave_bytes,
                "unwritten_user_sgprs": [i for i, v in enumerate(user) if v is None],
            },
        )

    def __repr__(self) -> str:
        return f"AcoShader({self.name!r} at 0x{self.address:x})"
