"""tfe (texture fail enable) on GFX10/10.3 (decision 0041): the VGPR after an image load's,
sample's or gather's results is written only when the access fails (a non-resident page); on
the resident images wavelift reads it keeps its value, which RADV/ACO zero first.

* tests/fixtures/glsl/sampling/sparse.comp (GL_ARB_sparse_texture2: sparseTextureLodARB,
  sparseTexelFetchARB, sparseTextureGatherARB, sparseTextureLodOffsetARB; -DSTORAGE
  sparseImageLoadARB) compiled by ACO (command.txt): `image_sample_lz ... tfe`, `image_load ...
  tfe`, `image_gather4_lz ... tfe`, `image_sample_lz_o ... tfe`, each after a `v_mov_b32 vN, 0`
  of its status VGPR, and sparseTexelsResidentARB as `v_cmp_eq_i32 0, vN`.  It runs in wavelift
  (navi21 w32 wave and lane, navi10 w64; NumPy blocks and the native tier); the same lookups
  without residency (-DNOSPARSE, the SPIR-V lavapipe 22.3 can run: it has no sparse residency)
  run on lavapipe.  The texels equal lavapipe's and a NumPy reference bit for bit (rgba16f,
  point sampling), every residency code is 0 and every sparseTexelsResidentARB true.
* Hand-written: the status VGPR keeps a non-zero value it held (the hardware writes it only
  on a fail), image_load and image_sample alike; tfe through the null T# refuses
  (`image.unsupported_descriptor`); lwe, and tfe on stores, atomics, image_get_resinfo and
  image_get_lod, are not translated (`program.unsupported_instruction`)."""

from __future__ import annotations

import os
import struct
import subprocess

import numpy as np
import pytest
from harness import Rig, ptr
from test_sampling_lavapipe import (
    FIX,
    LVP_ICD,
    NEAREST,
    REPEAT,
    H,
    N,
    W,
    inputs,
    pytestmark,  # noqa: F401 (the skip when lavapipe is missing)
    radv_sampler,
)

import wavelift
from wavelift.driver.aco import Image, image_descriptor
from wavelift.memory import ssharp

R = 6  # uvec4 results per invocation (sparse.comp)
CLAMP = ssharp.enum("SQ_TEX_CLAMP")


def texels(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-4, 4, (H, W, 4)).astype(np.float16)


def args(seed: int) -> np.ndarray:
    c = inputs(seed)
    rng = np.random.default_rng(seed + 1)
    c[:, 2] = rng.integers(0, W - 1, N)  # x (and x + 1 for the second storage load)
    c[:, 3] = rng.integers(0, H, N)
    return c


def reference(tex: np.ndarray, c: np.ndarray, storage: bool) -> np.ndarray:
    """NumPy: sparse.comp's results on a resident image (REPEAT, point sampling)."""
    f = tex.astype(np.float32).view(np.uint32)
    out = np.zeros((N, R, 4), np.uint32)
    for k in range(N):
        x, y = int(c[k, 2]), int(c[k, 3])
        if storage:
            out[k, 0], out[k, 1] = f[y, x], f[y, x + 1]
        else:
            u, v = float(np.float32(c[k, 0]) * np.float32(W)), float(np.float32(c[k, 1]) * np.float32(H))
            i, j = int(np.floor(u)), int(np.floor(v))
            out[k, 0] = f[j % H, i % W]
            out[k, 1] = f[y, x]
            i0, j0 = int(np.floor(u - 0.5)), int(np.floor(v - 0.5))
            quad = [(i0, j0 + 1), (i0 + 1, j0 + 1), (i0 + 1, j0), (i0, j0)]
            out[k, 2] = [f[jj % H, ii % W, 1] for ii, jj in quad]
            out[k, 3] = f[(j - 1) % H, (i + 1) % W]
        out[k, 5] = 1  # the codes (row 4) are 0: every access resident
    if storage:
        out[:, 5] = 1
    return out


def run_lavapipe(exe, tmp_path, tex, c, storage):
    (tmp_path / "img.bin").write_bytes(tex.tobytes())
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    shader = "sparse-nosparse-storage-w32" if storage else "sparse-nosparse-w32"
    cmd = [str(exe), str(FIX / f"{shader}.spv"), str(tmp_path), "--groups", "1,1,1"]
    cmd += ["--image", f"0:0:97:{W}:{H}:{tmp_path / 'img.bin'}"]
    if storage:
        cmd += ["--storage"]
    else:
        cmd += ["--sampler", ":".join(str(v) for v in (NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0, 0))]
    cmd += ["--binding", f"0:1:{16 * N}:{tmp_path / 'in.bin'}", "--binding", f"0:2:{16 * R * N}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, R, 4)


def run_wavelift(shader, target, mode, tex, c, storage):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"{shader}.json"))
    pitch = -(-W * 8 // 256) * 256 // 8
    img = np.zeros((H, pitch, 4), np.float16)
    img[:, :W] = tex
    src = dev.upload(img.reshape(-1).view(np.uint8))
    inp = dev.upload(c)
    out = dev.upload(np.full((N, R, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    dev.memory.write(at, struct.pack("<8I", *image_descriptor(Image(src, W, H, "rgba16f"), False)))
    if not storage:  # the S# at +80 of a combined image sampler (RADV)
        samp = radv_sampler(NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0)
        dev.memory.write(at + 80, struct.pack("<4I", *samp))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    assert res.landed, res.refusal
    return dev.download(out, np.uint32).reshape(N, R, 4)


CASES = [
    ("sparse-w32", "gfx1030", "wave", False),
    ("sparse-w32", "gfx1030", "lane", False),
    ("sparse-navi10-w64", "gfx1010", "wave", False),
    ("sparse-storage-w32", "gfx1030", "wave", True),
    ("sparse-storage-w32", "gfx1030", "lane", True),
]


@pytest.mark.tiers
@pytest.mark.parametrize("shader,target,mode,storage", CASES)
def test_sparse_lookups_resident_equal_lavapipe_and_numpy(
    shader, target, mode, storage, lavapipe_sample, tmp_path
):
    """ACO's tfe lookups on a resident rgba16f image: the texels bit for bit as lavapipe's
    non-sparse lookups and the NumPy reference; residency codes 0, sparseTexelsResidentARB
    true."""
    seed = 3 + CASES.index((shader, target, mode, storage))
    tex = texels(seed)
    c = args(seed + 40)
    want = run_lavapipe(lavapipe_sample, tmp_path, tex, c, storage)
    got = run_wavelift(shader, target, mode, tex, c, storage)
    ref = reference(tex, c, storage)
    assert (want == ref).all(), np.argwhere(want != ref)[:4]
    assert (got == ref).all(), np.argwhere(got != ref)[:4]
    assert not got[:, 4].any() and (got[:, 5] == 1).all()


# ---- hand-written programs: the status VGPR's value, the forms that refuse

ASM = """
  v_lshlrev_b32 v5, 4, v0
  global_load_dwordx4 v[1:4], v5, s[16:17]
  s_waitcnt vmcnt(0)
  v_mov_b32 v10, 0
  v_mov_b32 v11, 0
  v_mov_b32 v12, 0
  v_mov_b32 v13, v4
  {ins}
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v5, v[10:13], s[12:13]
  s_endpgm"""
SAMPLE = "image_sample_lz v[10:13], v[1:2], s[0:7], s[8:11] dmask:0x7 dim:SQ_RSRC_IMG_2D tfe"
LOAD = "image_load v[10:13], v[2:3], s[0:7] dmask:0x7 dim:SQ_RSRC_IMG_2D unorm tfe"


class _Buf:
    def __init__(self, address):
        self.address = address


def run_asm(ins, tex, a, mode="wave", null=False):
    r = Rig(ASM.format(ins=ins))
    pitch = -(-W * 8 // 256) * 256 // 8
    img = np.zeros((H, pitch, 4), np.float16)
    img[:, :W] = tex
    buf = r.buf(img.reshape(-1).view(np.uint8), "img")
    t = [0] * 8 if null else image_descriptor(Image(_Buf(buf), W, H, "rgba16f"), False)
    samp = radv_sampler(NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0)
    cb = r.buf(np.ascontiguousarray(a).view(np.uint32), "args")
    out = r.buf(np.full(N * 4, 0xDEAD, np.uint32), "out")
    cfg = r.config(user_sgprs=t + samp + list(ptr(out)) + [0, 0] + list(ptr(cb)), tgid=(False,) * 3)
    res = r.run(cfg, mode=mode)
    return res, r.read(out, np.uint32, N * 4).reshape(N, 4)


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("ins", [SAMPLE, LOAD], ids=["sample", "load"])
def test_status_vgpr_keeps_its_value(ins, mode):
    """The data as without tfe; the status VGPR (after dmask's three results) keeps what it
    held, non-zero values included (written only on a fail, which a resident texel never is)."""
    tex = texels(91)
    c = args(92)
    a = np.zeros((N, 4), np.uint32)
    if ins == LOAD:  # v[2:3]: the integer texel
        a[:, 1], a[:, 2] = c[:, 2].astype(np.uint32), c[:, 3].astype(np.uint32)
    else:  # v[1:2]: s, t
        a[:, :2] = c[:, :2].view(np.uint32)
    a[:, 3] = 0xABC00000 + np.arange(N, dtype=np.uint32)  # v4 -> v13: the status VGPR before
    res, got = run_asm(ins, tex, a, mode)
    assert res.landed, res.refusal
    plain, want = run_asm(ins.replace(" tfe", "").replace("0x7", "0xf"), tex, a, mode)  # 4 results
    assert plain.landed, plain.refusal
    assert (got[:, :3] == want[:, :3]).all()
    assert (got[:, 3] == a[:, 3]).all()
    ref = reference(tex, c, False)  # the texels the lookups read (row 0: sample, 1: load)
    assert (got[:, :3] == ref[:, 1 if ins == LOAD else 0, :3]).all()


def test_tfe_through_the_null_descriptor_refused():
    """Whether an access through the null T# counts as a fail is not established."""
    res, _ = run_asm(SAMPLE, texels(1), args(2), null=True)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor", res.refusal
    res, _ = run_asm(LOAD, texels(1), args(2), null=True)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor", res.refusal
    res, _ = run_asm(SAMPLE.replace(" tfe", "").replace("0x7", "0xf"), texels(1), args(2), null=True)
    assert res.landed, res.refusal  # (without tfe the null T# reads 0)


@pytest.mark.parametrize(
    "ins",
    [
        SAMPLE.replace("tfe", "tfe lwe"),
        LOAD.replace("tfe", "tfe lwe"),
        SAMPLE.replace("tfe", "lwe").replace("0x7", "0xf"),  # (llvm-mc sizes the data by tfe only)
        "image_gather4_lz v[10:13], v[1:2], s[0:7], s[8:11] dmask:0x1 dim:SQ_RSRC_IMG_2D lwe",
        "image_get_lod v[10:12], v[1:2], s[0:7], s[8:11] dmask:0x3 dim:SQ_RSRC_IMG_2D tfe",
        "image_get_resinfo v[10:13], v1, s[0:7] dmask:0x7 dim:SQ_RSRC_IMG_2D tfe",
        "image_atomic_add v[10:11], v[2:3], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc tfe",
        "image_store v[10:11], v[2:3], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm tfe",
    ],
)
def test_lwe_and_tfe_elsewhere_not_translated(ins):
    res, _ = run_asm(ins, texels(1), args(2))
    assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction", (
        ins,
        res.refusal,
    )
