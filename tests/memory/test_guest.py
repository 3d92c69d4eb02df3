import numpy as np
import pytest

from wavelift.memory.guest import GuestMemory, GuestMemoryError, canonical


def test_canonical_sign_extends_bit_47():
    assert canonical(0x8000_0000_0000) == 0xFFFF_8000_0000_0000
    assert canonical(0xFFFF_8000_0000_1234) == 0xFFFF_8000_0000_1234
    assert canonical(0x7FFF_FFFF_FFFF) == 0x7FFF_FFFF_FFFF
    assert canonical(0x1234) == 0x1234
    assert canonical(0x0000_8001_0000_0000) == 0xFFFF_8001_0000_0000


def test_alloc_places_aligned_without_overlap_and_reads_back():
    m = GuestMemory()
    a = m.alloc(100, name="a", data=b"hello")
    b = m.alloc(5000, name="b", align=4096)
    assert a % 256 == 0 and b % 4096 == 0 and b >= a + 100
    assert m.read(a, 5) == b"hello" and m.read(a + 5, 3) == b"\0\0\0"
    m.write_u32(b + 8, 0xDEADBEEF)
    assert m.read_u32(b + 8) == 0xDEADBEEF
    m.write_u64(b + 16, 0x1122334455667788)
    assert m.read_u64(b + 16) == 0x1122334455667788
    assert [x.name for x in m.allocations] == ["a", "b"]


def test_upper_half_addresses_accept_48_bit_forms():
    m = GuestMemory()
    base = m.alloc(4096, name="hi", address=0xFFFF_8000_0001_8000)
    assert base == 0xFFFF_8000_0001_8000
    m.write(0x8000_0001_8010, b"\x07")  # 48-bit form of the same address
    assert m.read(base + 0x10, 1) == b"\x07"
    assert m.find(0x8000_0001_8000).name == "hi"


def test_view_is_writable_and_not_a_copy():
    m = GuestMemory()
    a = m.alloc(1 << 20, name="big")
    v = m.view(a + 4096, 16)
    v[:] = 9
    assert m.read(a + 4096, 16) == b"\x09" * 16
    assert np.shares_memory(v, m.find(a).data)


def test_add_adopts_array_without_copy():
    m = GuestMemory()
    arr = np.zeros(8192, np.uint8)
    m.add(0x2000_0000, arr, "mine")
    m.write(0x2000_0010, b"\x05")
    assert arr[0x10] == 5
    with pytest.raises(GuestMemoryError):
        m.add(0x2000_1000, np.zeros(16, np.uint8), "overlap")
    with pytest.raises(GuestMemoryError):
        m.add(0x3000_0000, np.zeros(16, np.uint32), "wrong dtype")


def test_overlaps_and_bad_allocations_refused():
    m = GuestMemory()
    m.alloc(0x1000, name="x", address=0x10_0000)
    with pytest.raises(GuestMemoryError, match="overlaps 'x'"):
        m.alloc(0x100, name="y", address=0x10_0F00)
    with pytest.raises(GuestMemoryError, match="overlaps"):
        m.alloc(0x2000, name="z", address=0xF_F000)
    with pytest.raises(GuestMemoryError, match="aligned"):
        m.alloc(16, address=0x20_0010)
    with pytest.raises(GuestMemoryError, match="canonical hole|leaves"):
        m.alloc(0x2000, name="hole", address=0x7FFF_FFFF_F000, align=4096)
    with pytest.raises(GuestMemoryError, match="positive"):
        m.alloc(0, name="empty", address=0x30_0000)
    m.alloc(0x1000, name="adjacent", address=0x10_1000)  # touching is fine


def test_access_leaving_an_allocation_raises_clear_error():
    m = GuestMemory()
    a = m.alloc(64, name="small")
    with pytest.raises(GuestMemoryError, match=r"runs past the end of allocation 'small'"):
        m.read(a + 60, 8)
    with pytest.raises(GuestMemoryError, match="no allocation holds"):
        m.read(0x5, 1)
    with pytest.raises(GuestMemoryError):
        m.write(a + 63, b"ab")
    assert m.read(a, 64) == bytes(64)  # nothing was written
    assert m.find(a + 60, 8) is None and m.find(a + 60, 4).name == "small"


def test_auto_placement_skips_fixed_allocations():
    m = GuestMemory()
    first = m.alloc(16)
    m.alloc(0x10000, name="fixed", address=first + 0x2000)
    nxt = m.alloc(0x4000, name="after")
    f = m.find(first + 0x2000)
    assert nxt >= f.end or nxt + 0x4000 <= f.base
    assert len({(a.base, a.end) for a in m.allocations}) == 3


def test_placement_is_first_fit_with_the_resume_cache():
    """alloc() without an address places first fit from DEFAULT_BASE (guards kept); the cache that
    resumes a request where the last one of its size and alignment went must not change where
    anything goes, through allocations at given addresses and frees."""
    import random

    from wavelift.memory import guest as G

    def first_fit(mem, size, align):  # the plain scan over every allocation
        cand = G.DEFAULT_BASE
        for a in mem.allocations:
            if a.base >= G.LOW_HALF_END:
                break
            if a.end + G.GUARD <= cand:
                continue
            if a.base >= cand + size + G.GUARD:
                break
            cand = -(-(a.end + G.GUARD) // align) * align
        return cand

    rng = random.Random(5)
    mem = GuestMemory()
    live = []
    for step in range(1500):
        r = rng.random()
        if r < 0.15 and live:
            mem.free(live.pop(rng.randrange(len(live))))
        elif r < 0.2:
            addr = G.DEFAULT_BASE + rng.randrange(0, 1 << 22) * 256
            try:
                live.append(mem.alloc(rng.choice((64, 4096)), "fixed", address=addr))
            except GuestMemoryError:
                pass  # (overlaps: refused, nothing placed)
        else:
            size, align = rng.choice(((64, 256), (64, 16), (4096, 4096), (100, 256), (1 << 16, 256)))
            want = first_fit(mem, size, align)
            got = mem.alloc(size, "auto", align=align)
            assert got == want, (step, size, align, hex(got), hex(want))
            live.append(got)
