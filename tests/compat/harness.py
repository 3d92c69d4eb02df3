"""Replaying a tinygrad fixture (tests/fixtures/tinygrad/build.py) the way tinygrad's AMD runtime
and mock GPU would: the code object image, the buffers and the kernargs in host memory, and each
kernel dispatched through a ``run_asm`` hook with host addresses (guest address = host address).

Written from tinygrad's ops_amd.py (AMDProgram: descriptor at .rodata, prog_addr, rsrc1/rsrc2
with the LDS size added; AMDComputeQueue.exec: the user SGPRs, private segment V#, dispatch
packet, kernarg pointer) and test/mockgpu/amd/amdgpu.py (_exec_dispatch_direct: what it passes).
"""

from __future__ import annotations

import ctypes
import json
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tinygrad"
ALIGN = 4096
LOADED: dict = {}  # (image bytes, shift) -> HostBlock: replay(keep_code=True)


@dataclass
class Fixture:
    path: Path
    meta: dict
    arrays: dict

    @property
    def name(self) -> str:
        return self.meta["op"]

    @property
    def target(self) -> str:
        return self.meta["target"]

    def inputs(self) -> list[np.ndarray]:
        return [
            self.arrays[f"input_{i}"].view(dt).reshape(shape)
            for i, (dt, shape) in enumerate(self.meta["inputs"])
        ]

    def expected(self) -> np.ndarray:
        return self.arrays["expected"].view(self.meta["out_dtype"]).reshape(self.meta["out_shape"])


def load(path) -> Fixture:
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop("meta").tobytes())
    return Fixture(Path(path), meta, arrays)


def fixtures(target: str) -> list[Path]:
    return sorted((FIXTURES / target).glob("*.npz"))


# HostBlocks below 4 GiB (where a non-PIE Python's heap lies) while set: low_addresses()
LOW: list[int] = []


class HostBlock:
    """``size`` zeroed host bytes at an ALIGN-aligned address, kept alive by this object (below
    4 GiB, from a fixed mapping, while ``LOW`` holds the next free low address)."""

    def __init__(self, size: int):
        self.size = max(int(size), 1)
        if LOW:
            self._raw = _low_mapping(-(-self.size // ALIGN) * ALIGN)
            self.address = ctypes.addressof(self._raw)
        else:
            self._raw = (ctypes.c_uint8 * (self.size + ALIGN))()
            self.address = -(-ctypes.addressof(self._raw) // ALIGN) * ALIGN
        self.view = np.ctypeslib.as_array((ctypes.c_uint8 * self.size).from_address(self.address))


def _low_mapping(size: int):
    """``size`` bytes mapped at the first free address from LOW[0] up (mmap MAP_FIXED_NOREPLACE),
    below 4 GiB; unmapped when the returned buffer is collected."""
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    fixed_noreplace = 0x100000
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | fixed_noreplace
    while LOW[0] + size < 1 << 32:
        at = LOW[0]
        LOW[0] += size + ALIGN
        got = libc.mmap(at, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
        if got == at:
            return (ctypes.c_uint8 * size).from_address(at)
    raise MemoryError("no free host address below 4 GiB")


@dataclass
class Run:
    codes: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    output: np.ndarray | None = None
    blocks: dict = field(default_factory=dict)


def _arch(target: str) -> str:
    return "rdna3" if target == "gfx1100" else target


def replay(
    fx: Fixture,
    hook,
    extras: bool = True,
    stop_on_error: bool = True,
    drop: frozenset[int] = frozenset(),
    code: HostBlock | None = None,
    pass_rsrc1: bool = True,
    pass_user: bool = True,
    code_shift: int = 0,
    keep_code: bool = False,
) -> Run:
    """Dispatch every kernel of ``fx`` through ``hook`` (run_asm's signature); ``extras``: also
    pass wavelift's ``ranges=`` and ``rsrc1=`` keywords (what a patched mock GPU passes).
    ``drop``: buffer ids left out of the ranges; ``code``: one block every kernel's image is
    copied into before it runs (the same address for every kernel); ``pass_rsrc1=False``: the
    hook finds the descriptor itself; ``pass_user=False``: user_data=None (the emulator's
    default: the kernarg pointer in s[0:1]); ``code_shift``: each image placed that many bytes
    past an aligned address (tinygrad's instruction tests hand over unaligned code);
    ``keep_code``: load each code object once and keep it at its address for later replays, as
    tinygrad's runtime keeps a compiled program loaded (LOADED)."""
    meta = fx.meta
    blocks: dict[int, HostBlock] = {}
    for bid, b in meta["buffers"].items():
        blocks[int(bid)] = HostBlock(b["size"])

    def addr(bid: int) -> int:
        off = 0
        while str(bid) in meta["base"]:
            base, o = meta["base"][str(bid)]
            bid, off = base, off + o
        return blocks[bid].address + off

    for key, arr in fx.arrays.items():
        if key.startswith("init_") and key[5:].isdigit():
            blocks[int(key[5:])].view[: arr.size] = arr
    images = []
    for k in range(len(meta["kernels"])):
        img = fx.arrays[f"image_{k}"]
        if code is not None:
            images.append(code)
            continue
        key = (img.tobytes(), code_shift)
        blk = LOADED.get(key) if keep_code else None
        if blk is None:
            blk = HostBlock(-(-(img.size + code_shift) // ALIGN) * ALIGN)
            blk.view[code_shift : code_shift + img.size] = img
            blk.address += code_shift
            blk.size -= code_shift
            blk.view = blk.view[code_shift:]
            if keep_code:
                LOADED[key] = blk
        images.append(blk)
    scratch = HostBlock(1 << 16)
    kernargs = HostBlock(1 << 16)
    kept = [b for i, b in blocks.items() if i not in drop]
    ranges = [(b.address, b.size) for b in [*kept, *dict.fromkeys(images), scratch, kernargs]]
    run = Run()
    for step in meta["steps"]:
        if step[0] == "copy":
            _, dst, src, size = step
            ctypes.memmove(addr(dst), addr(src), size)
            continue
        if step[0] == "copyin":
            _, dst, i = step
            data = fx.arrays[f"init_later{i}"]
            ctypes.memmove(addr(dst), data.ctypes.data, data.size)
            continue
        _, k, bufs, gsz, lsz, vals = step
        kern, img = meta["kernels"][k], images[k]
        if code is not None:
            image = fx.arrays[f"image_{k}"]
            code.view[:] = 0
            code.view[: image.size] = image
        kd = bytes(img.view[kern["rodata"] : kern["rodata"] + 64])
        group, private, kernarg_size = struct.unpack_from("<III", kd, 0)
        entry = struct.unpack_from("<q", kd, 16)[0]
        rsrc1, rsrc2 = struct.unpack_from("<II", kd, 48)
        kcp = struct.unpack_from("<H", kd, 56)[0]
        rsrc2 |= (((group + 511) // 512) & 0x1FF) << 15
        lib = img.address + kern["rodata"] + entry
        ka = kernargs.view
        ka[:] = 0
        for i, b in enumerate(bufs):
            struct.pack_into("<Q", ka, 8 * i, addr(b))
        for off, fmt, v in vals:
            struct.pack_into("<" + fmt, ka, off, v)
        user: list[int] = []
        if kcp & 1:  # private segment buffer: tinygrad's scratch V#
            user += [
                scratch.address & 0xFFFFFFFF,
                (scratch.address >> 32) | (1 << 31),
                0xFFFFFFFF,
                0x20C14000,
            ]
        if kcp & 2:  # dispatch packet after the kernargs (hsa_kernel_dispatch_packet_t)
            pkt = kernarg_size
            struct.pack_into("<HHH", ka, pkt + 4, *lsz)
            struct.pack_into("<III", ka, pkt + 12, *[g * l for g, l in zip(gsz, lsz)])
            struct.pack_into("<II", ka, pkt + 24, private, group)
            struct.pack_into("<Q", ka, pkt + 40, kernargs.address)
            user += [(kernargs.address + pkt) & 0xFFFFFFFF, (kernargs.address + pkt) >> 32]
        user += [kernargs.address & 0xFFFFFFFF, kernargs.address >> 32]
        lib_sz = img.address + img.size - lib
        args = (
            lib,
            lib_sz,
            *gsz,
            *lsz,
            kernargs.address,
            rsrc2,
            private,
            _arch(fx.target),
            user if pass_user else None,
        )
        kw = {"ranges": ranges, **({"rsrc1": rsrc1} if pass_rsrc1 else {})} if extras else {}
        t0 = time.perf_counter()
        rc = hook(*args, **kw)
        run.seconds.append(time.perf_counter() - t0)
        run.codes.append(rc)
        if rc != 0 and stop_on_error:
            break
    run.blocks = blocks
    out = blocks[meta["out"]].view
    run.output = out[: fx.arrays["expected"].size].copy().view(meta["out_dtype"]).reshape(meta["out_shape"])
    return run
