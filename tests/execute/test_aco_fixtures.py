"""ACO shaders (tests/fixtures/<gfx>/aco/*.json + .bin, from tests/fixtures/glsl/*.comp) through
wavelift.Device.load_aco_shader, in wave and lane mode, against NumPy references written from
the GLSL sources (independent of the compiled code).  Shapes have several workgroups, and 2-D
launches cover a partial right/bottom edge (threads outside the image return)."""

import json
import pathlib
import zlib

import numpy as np
import pytest

import wavelift
from wavelift.driver.aco import Image

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
SHADERS = sorted(FIX.glob("gfx10*/aco/*.json"))
MODES = ("wave", "lane")


# known gaps (strict: the test reports when they start to pass)
GAPS = {}


# The native tiers' C++ builds of the image and scratch shaders take 20-45 s each: by default
# they run the gfx1030 wave32 build in wave mode; every build and mode under -m slow.
NATIVE_HEAVY = ("descriptor_types", "image_blur", "scratch_array")


def native_default(test_id: str) -> bool:
    return not any(h in test_id for h in NATIVE_HEAVY) or ("gfx1030-" in test_id and "-w32-wave" in test_id)


def _params():
    for p in SHADERS:
        for mode in MODES:
            key = p.stem.rsplit("-", 1)[0]
            gap = GAPS.get(key) or GAPS.get(f"{p.parent.parent.name}/{key}")
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            if key.startswith("int64_"):  # ~2,400 instructions: the native tiers' C++ builds take minutes
                marks.append(pytest.mark.slow)
            yield pytest.param(p, mode, marks=marks, id=f"{p.parent.parent.name}-{p.stem}-{mode}")


def _dev(path, mode):
    info = json.loads(path.read_text())
    target = path.parent.parent.name
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    return dev, dev.load_aco_shader(str(path)), info


def _landed(r):
    assert r.landed, f"refused {r.refusal.code}: {r.refusal.message}"


# ---- references (from the GLSL) -------------------------------------------------------------


def ref_lds_reduce(values):
    p = values.reshape(-1, 256).copy()
    s = 128
    while s:
        p[:, :s] = p[:, :s] + p[:, s : 2 * s]
        s >>= 1
    return p[:, 0]


def ref_scratch_array(seed, count, n_threads, N=128):
    out = np.zeros(n_threads, np.int64)
    for gid in range(n_threads):
        a = [(gid * 3 + i * seed) & 0xFFFFFFFF for i in range(N)]
        idx = (gid * 7 + seed) % N
        acc = 0
        for _ in range(count):
            acc = (acc + a[idx]) & 0xFFFFFFFF
            j = (idx + 5) % N
            a[j] ^= acc
            idx = (idx * 5 + 1) % N
        out[gid] = (acc + a[gid % N]) & 0xFFFFFFFF
    return out.astype(np.uint32)


def ref_scratch_game(seeds, steps):
    out = np.zeros(seeds.size, np.uint32)
    for i, s in enumerate(seeds.tolist()):
        cells = [((s >> (k & 31)) ^ (k * 2654435761)) & 0xFFFFFFFF for k in range(96)]
        pos, score = s % 96, 0
        for _ in range(steps):
            v = cells[pos]
            score = (score + (v & 0xFF)) & 0xFFFFFFFF
            cells[pos] = (v * 1664525 + 1013904223) & 0xFFFFFFFF
            cells[(pos + 47) % 96] ^= score
            pos = (pos + 1 + (v >> 27)) % 96
        out[i] = score ^ cells[(s >> 8) % 96]
    return out


def ref_subgroup(vals, wave):
    v = vals.reshape(-1, wave).astype(np.uint64)
    n = v.shape[0]
    out = np.zeros((n, wave, 4), np.uint32)
    odd = (v & 1) != 0
    ballot = np.zeros(n, np.uint64)
    for L in range(wave):
        ballot |= odd[:, L].astype(np.uint64) << np.uint64(L)
    out[:, :, 0] = (v.sum(axis=1) & 0xFFFFFFFF)[:, None]
    bits = odd.sum(axis=1).astype(np.uint64)
    out[:, :, 1] = ((bits + (ballot & np.uint64(0xFFFFFFFF))) & 0xFFFFFFFF)[:, None]
    out[:, :, 2] = np.roll(v, -1, axis=1)
    sub_id = np.arange(n) % (64 // wave)
    out[:, :, 3] = ((v[:, 0] + np.uint64(wave) * sub_id.astype(np.uint64)) & np.uint64(0xFFFFFFFF))[:, None]
    return out.reshape(-1, 4)


def unorm8(x):
    return np.floor(np.clip(x, 0.0, 1.0) * 255.0 + 0.5).astype(np.int64)


def ref_fullscreen(src, weight, w, h, gain, bias):
    c = np.stack([(src >> (8 * k)) & 0xFF for k in range(4)], -1).astype(np.float64) / 255.0
    rgb = np.clip(
        c[:, :3] * (np.float64(np.float32(gain)) * weight[:, None].astype(np.float64))
        + np.float64(np.float32(bias)),
        0.0,
        1.0,
    )
    out = np.stack([rgb[:, 2], rgb[:, 1], rgb[:, 0], c[:, 3]], -1)
    q = unorm8(out)
    return q  # [n, 4] channel values 0..255


def ref_blur(img, w, h):
    px = np.stack([(img >> (8 * k)) & 0xFF for k in range(4)], -1).astype(np.float64) / 255.0
    px = px.reshape(h, w, 4)
    s = np.zeros_like(px)
    ys, xs = np.arange(h), np.arange(w)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            yy = np.clip(ys + dy, 0, h - 1)
            xx = np.clip(xs + dx, 0, w - 1)
            s += px[yy][:, xx]
    return unorm8(s / 9.0).reshape(-1, 4)


def channels(u32):
    return np.stack([(u32 >> (8 * k)) & 0xFF for k in range(4)], -1).astype(np.int64)


# ---- the test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path,mode", list(_params()))
def test_aco_shader(path, mode):
    name = path.stem.rsplit("-", 1)[0]
    wave = int(path.stem.rsplit("-w", 1)[1])
    dev, sh, info = _dev(path, mode)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if name == "lds_reduce":
        g = 5
        vals = rng.standard_normal(256 * g).astype(np.float32)
        out = dev.upload(np.full(g + 3, -7.0, np.float32))
        r = sh.launch(groups=(g, 1, 1), buffers={(0, 0): dev.upload(vals), (0, 1): out})
        _landed(r)
        got = dev.download(out, np.float32)
        np.testing.assert_array_equal(got[:g], ref_lds_reduce(vals))
        assert (got[g:] == -7.0).all()
    elif name == "push_consts_ubo":
        g, count = 3, 90  # threads 96, count 90: a partial tail
        vals = rng.integers(0, 1 << 63, size=96 + 4, dtype=np.uint64)
        mul = rng.integers(0, 1 << 32, size=4, dtype=np.uint64).astype(np.uint32)
        offs = rng.integers(-1000, 1000, size=4).astype(np.int32)
        base, shift, bias = 0x123456789ABCDEF, 13, -77
        pc = np.zeros(6, np.uint32)
        pc[0:2] = [base & 0xFFFFFFFF, base >> 32]
        pc[2:5] = [count, shift, np.uint32(bias & 0xFFFFFFFF)]
        ubo = np.concatenate([mul, offs.view(np.uint32)])
        vb = dev.upload(vals)
        r = sh.launch(
            groups=(g, 1, 1), buffers={(0, 0): dev.upload(ubo), (1, 0): vb}, push_constants=pc.tobytes()
        )
        _landed(r)
        got = dev.download(vb, np.uint64)
        m = int(mul[0]) | (int(mul[1]) << 32)
        want = vals.copy()
        M = (1 << 64) - 1
        for gid in range(min(count, 96)):
            x = (int(vals[gid]) * m + base) & M
            x = ((x >> shift) ^ (x << (64 - shift))) & M
            want[gid] = (x + (bias + int(offs[gid & 3]))) & M
        np.testing.assert_array_equal(got, want)
    elif name == "subgroup_ops":
        g = 4
        vals = rng.integers(0, 1 << 32, size=64 * g, dtype=np.uint64).astype(np.uint32)
        out = dev.upload(np.zeros((64 * g, 4), np.uint32))
        r = sh.launch(groups=(g, 1, 1), buffers={(0, 0): dev.upload(vals), (0, 1): out})
        _landed(r)
        np.testing.assert_array_equal(dev.download(out, np.uint32).reshape(-1, 4), ref_subgroup(vals, wave))
    elif name == "scratch_array":
        g, seed, count = 2, 11, 40
        data = np.zeros(2 + 64 * g + 4, np.uint32)
        data[0], data[1] = seed, count
        buf = dev.upload(data)
        r = sh.launch(groups=(g, 1, 1), buffers={(0, 0): buf})
        _landed(r)
        got = dev.download(buf, np.uint32)
        np.testing.assert_array_equal(got[2 : 2 + 64 * g], ref_scratch_array(seed, count, 64 * g))
        assert (got[2 + 64 * g :] == 0).all() and got[0] == seed and got[1] == count
    elif name == "scratch_game":
        w, h, steps = 16, 16, 30
        seeds = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
        out = dev.upload(np.zeros(w * h, np.uint32))
        r = sh.launch(
            groups=(2, 2, 1),
            buffers={(0, 0): dev.upload(seeds), (0, 1): out},
            push_constants=np.array([w, steps], np.uint32).tobytes(),
        )
        _landed(r)
        np.testing.assert_array_equal(dev.download(out, np.uint32), ref_scratch_game(seeds, steps))
    elif name == "fullscreen":
        w, h, gain, bias = 37, 21, 1.25, -0.125  # partial groups on both edges
        src = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
        wt = rng.uniform(0.0, 2.0, w * h).astype(np.float32)
        dst = dev.upload(np.full(w * h + 8, 0xDEADBEEF, np.uint32))
        pc = np.array([w, h, np.float32(gain).view(np.uint32), np.float32(bias).view(np.uint32)], np.uint32)
        r = sh.launch(
            groups=(-(-w // 8), -(-h // 8), 1),
            buffers={(0, 0): dev.upload(src), (0, 1): dev.upload(wt), (0, 2): dst},
            push_constants=pc.tobytes(),
        )
        _landed(r)
        got = dev.download(dst, np.uint32)
        diff = np.abs(channels(got[: w * h]) - ref_fullscreen(src, wt, w, h, gain, bias))
        assert diff.max() <= 1, np.argwhere(diff > 1)[:4]
        assert (got[w * h :] == 0xDEADBEEF).all()
    elif name == "image_blur":
        w, h, pitch = 29, 19, 64  # linear rows are 256 bytes apart (Image.pitch)
        img = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
        rows = np.full((h, pitch), 0xA5A5A5A5, np.uint32)
        rows[:, :w] = img.reshape(h, w)
        src = Image(dev.upload(rows), w, h, "rgba8")
        dbuf = dev.upload(np.full((h, pitch), 0x5A5A5A5A, np.uint32))
        dst = Image(dbuf, w, h, "rgba8")
        assert src.pitch == dst.pitch == pitch
        r = sh.launch(groups=(-(-w // 8), -(-h // 8), 1), images={(0, 0): src, (0, 1): dst})
        _landed(r)
        got = dev.download(dbuf, np.uint32).reshape(h, pitch)
        assert (got[:, w:] == 0x5A5A5A5A).all()  # the padding of each row is not written
        got = got[:, :w].reshape(-1)
        diff = np.abs(channels(got) - ref_blur(img, w, h))
        assert diff.max() <= 1, np.argwhere(diff > 1)[:4]
    elif name == "descriptor_types":
        # images, samplers and texel buffers stay unbound (null descriptors: reads give 0,
        # writes and atomics are dropped); ubo + 2 ssbos + the set-3 buffer are bound
        g = 2
        u = np.array([0.5, -2.0, 3.25, 1.0], np.float32)
        s0 = dev.upload(np.full(64 * g, -1.0, np.float32))
        s1 = dev.upload(np.full(64 * g, -1.0, np.float32))
        d = dev.upload(np.zeros(64 * g, np.uint32))
        pc = np.array([5, 1000], np.uint32)
        # ssbo[1] stays unbound too (a null V#: its stores are dropped); the r32f storage image
        # (set 0 binding 3) is bound: imageStore(simg, (i, 0), v) writes v.x
        ibuf = dev.upload(np.full(64 * g + 64, 9.0, np.float32))
        simg = Image(ibuf, 64 * g, 1, "r32f")
        r = sh.launch(
            groups=(g, 1, 1),
            buffers={(1, 2): dev.upload(u), (2, 0): s0, (3, 0): d},
            images={(0, 3): simg},
            push_constants=pc.tobytes(),
        )
        _landed(r)
        got = dev.download(ibuf, np.float32)
        np.testing.assert_array_equal(got[: 64 * g], np.full(64 * g, u[0]))
        assert (got[64 * g :] == 9.0).all()
        np.testing.assert_array_equal(dev.download(s0, np.float32), np.full(64 * g, u[0]))
        np.testing.assert_array_equal(dev.download(s1, np.float32), np.full(64 * g, -1.0))
        np.testing.assert_array_equal(dev.download(d, np.uint32), 1000 + np.arange(64 * g))
    elif name.startswith("int64_"):
        from test_int64_shaders import check_aco_launch  # lavapipe's results for the captures' inputs

        check_aco_launch(dev, sh, name)
    else:
        pytest.fail(f"no reference for {name}")
