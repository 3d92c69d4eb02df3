"""GFX11's addrlib (Mesa 22.3.6's gfx11addrlib, family GFX1100, chip revision 0x01: Navi31) lays
linear surfaces out as GFX10.3's does (family NV, Navi21) -- surface info (pitch, heights, slice
and surface sizes, every level's offset and pitch) and texel addresses alike, 1-D/2-D/3-D, every
texel size, mip chains, several GB_ADDR_CONFIGs -- so frontend/image.py's linear addressing
(held to GFX10.3's addrlib by test_layout.py) is GFX11's too.  Its tiled modes are not: the
same surfaces give other addresses in modes both accept, which is why memory/layout.py lays
GFX11's tiled modes out with GFX11's own patterns (Chip.gfx11, decision 0039;
test_gfx11_layout.py).  The oracle: tools/addrlib_oracle (its third argument
picks the family); skipped when it cannot be built."""

from __future__ import annotations

import random
import subprocess

import pytest

from tests.memory.test_layout import oracle  # noqa: F401  (the built addr_oracle, or a skip)

GFX103 = ["0x444", "0x28"]  # navi21: GB_ADDR_CONFIG, chip revision (family NV)
GFX11 = ["0x01", "145"]  # gfx1100 (Navi31) revision, AMDGPU_FAMILY_GFX1100


def _ask(path, args, queries):
    r = subprocess.run(
        [path, *args], input="\n".join(queries) + "\n", capture_output=True, text=True, check=True
    )
    return r.stdout.splitlines()


def _surfaces(sw, n, seed):
    rnd = random.Random(seed)
    info, addr = [], []
    for _ in range(n):
        rsrc = rnd.randrange(3)
        bpp = rnd.choice([8, 16, 32, 64, 128])
        w = rnd.randrange(1, 700)
        h = 1 if rsrc == 0 else rnd.randrange(1, 400)
        d = rnd.randrange(1, 12)
        most = max(w, h, d if rsrc == 2 else 1).bit_length()
        mips = rnd.randrange(1, most + 1)
        info.append(f"I {sw} {rsrc} {bpp} {w} {h} {d} {mips}")
        for _ in range(4):
            m = rnd.randrange(mips)
            x, y = rnd.randrange(max(w >> m, 1)), rnd.randrange(max(h >> m, 1))
            z = rnd.randrange(max(d >> m, 1) if rsrc == 2 else d)
            addr.append((len(info) - 1, f"A {sw} {rsrc} {bpp} {w} {h} {d} {mips} 0 {x} {y} {z} {m}"))
    return info, addr


@pytest.mark.parametrize("gb", ["0x444", "0x343", "0x0"])
def test_gfx11_linear_is_gfx103_linear(oracle, gb):  # noqa: F811
    info, addr = _surfaces(0, 300, int(gb, 16) + 1)
    a = _ask(oracle, GFX103, info)
    g = _ask(oracle, [gb, *GFX11], info)
    assert not any(x.startswith("E") for x in a + g)
    assert a == g
    qs = [q for _, q in addr]
    assert _ask(oracle, GFX103, qs) == _ask(oracle, [gb, *GFX11], qs)


def test_gfx11_tiled_modes_differ(oracle):  # noqa: F811
    """4KB_S, 4KB_D, 64KB_S, 64KB_D: surfaces both addrlibs accept, with other addresses on GFX11."""
    for sw in (5, 6, 9, 10):
        info, addr = _surfaces(sw, 200, sw)
        a = _ask(oracle, GFX103, info)
        g = _ask(oracle, ["0x444", *GFX11], info)
        qs = [q for i, q in addr if not a[i].startswith("E") and not g[i].startswith("E")]
        assert qs, sw
        assert _ask(oracle, GFX103, qs) != _ask(oracle, ["0x444", *GFX11], qs), sw


def test_gfx11_image_table_regenerates(tmp_path):
    """wavelift/memory/tables/gfx11_image.json (GFX11's T# fields and GFX11_FORMAT enum) is what
    tools/gen_image_tables.py writes from Mesa 22.3.6's gfx11-rsrc.json, byte for byte; the
    GFX11 format of each GFX10 name keeps its channel layout."""
    import importlib.util
    import os
    import pathlib

    from testpaths import ROOT

    from wavelift.memory import tsharp

    spec = importlib.util.spec_from_file_location("gen_image_tables", ROOT / "tools" / "gen_image_tables.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    src = pathlib.Path(os.environ.get("MESA_SRC", gen.DEFAULT_SRC))
    if not (src / gen.RSRC11_JSON).is_file() or not (src / gen.RSRC_JSON).is_file():
        pytest.skip(f"Mesa {gen.MESA_VERSION} source not at {src}")
    gen.OUT_DIR = tmp_path
    assert gen.main(["gen_image_tables.py", str(src)]) == 0
    committed = ROOT / "wavelift" / "memory" / "tables" / gen.NAME11
    assert (tmp_path / gen.NAME11).read_text() == committed.read_text()
    f10, f11 = tsharp.formats(), tsharp.tables11()["formats"]
    m = tsharp.format10_of11()
    assert len(m) > 100
    for v11, v10 in m.items():
        assert f11[str(v11)]["bits"] == list(f10[v10].bits) and f11[str(v11)]["numeric"] == f10[v10].numeric
