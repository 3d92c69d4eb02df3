"""CUDA backend: code generation and NVRTC compilation of every fixture program (no GPU needed),
the refusal without a GPU, the disk cache, and — on a machine with an NVIDIA GPU — execution
compared bit for bit with NumPy lane mode (bench/gpu_check.py does the full matrix).

NVRTC comes from `pip install 'wavelift[cuda]'` (cuda-bindings + nvidia-cuda-nvrtc-cu12); the
compile tests skip, saying so, where it is not installed.
"""

from __future__ import annotations

import copy
import functools
import pathlib
import re
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import fixture_dispatches as F  # noqa: E402


def _nvrtc_problem():
    from wavelift.backends.cuda.compile import nvrtc_problem

    return nvrtc_problem()


def _needs_nvrtc():
    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC: {why}")


def _gpu_problem():
    from wavelift.backends import cuda

    ok = cuda.available()
    return None if ok is True else ok


def translate_dispatch(memory, config):
    """The program execute_dispatch runs for this dispatch and the guest address its code was
    read from: execute.program_for's own translation (a fresh one: callers may change it).  A
    module key takes the translation's inputs (GB_ADDR_CONFIG, the border colour base, the
    scratch ABI) from the config, so a program translated with fewer of them would be compiled
    and stored under the key of another program -- gpu_check's workers precompile from this
    (decision 0049's amendment h128)."""
    from wavelift.run.execute import program_for

    return program_for(memory, config, cache={})


def lds_kernel_source(name, monkeypatch, settings: dict) -> str:
    """The CUDA source of gpu_check's LDS dispatch ``name`` (small) under ``settings`` (env name
    -> value, None: unset)."""
    import gpu_check as G

    from wavelift.backends.cuda.codegen import baked_params, generate

    for k, v in settings.items():
        if v is None:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    mem, cfg, *_ = G.lds_dispatch(name, small=True)
    prog, base = translate_dispatch(mem, cfg)
    return generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]


@functools.lru_cache(maxsize=1)
def _dispatches():
    return [d for d in F.all_dispatches() if d[1] is not None]


@functools.lru_cache(maxsize=1)
def _programs():
    """Unique (name, program, config, base, modes) over all fixture dispatches; translation
    failures (decoder/frontend gaps, the NumPy backend refuses them too) are kept as strings."""
    from wavelift.run.execute import module_key

    out, seen = [], set()
    for name, mem, cfg in _dispatches():
        entry = _translated(name, mem, cfg)
        if entry[1] is not None:
            k = module_key(entry[1], cfg, "lane", "cuda")
            if k in seen:
                continue
            seen.add(k)
        out.append(entry)
    return out


def _translated(name, mem, cfg) -> tuple:
    """One entry of _programs(): (name, program, config, base, modes), or (name, None, config,
    0, the refusal) where translation refuses."""
    from wavelift.errors import Refused

    try:
        prog, base = translate_dispatch(mem, cfg)
    except Refused as e:
        return (name, None, cfg, 0, str(e))
    return (name, prog, cfg, base, ("lane", "wave") if prog.uses_scratch else ("lane",))


@functools.cache
def _named(name) -> tuple:
    """_programs()'s entry ``name``, translating only that fixture dispatch: what every default
    test takes (_programs() translates all ~235, 45-50 s on the 2-core CI, paid again by every
    xdist worker that runs such a test; only -m slow's sweeps take it)."""
    hit = next(((m, c) for n, m, c in _dispatches() if n == name), None)
    if hit is None:
        pytest.fail(f"no fixture dispatch named {name}")
    entry = _translated(name, *hit)
    if entry[1] is None:
        pytest.fail(f"translation refused: {entry[4]}")
    return entry


# a program of fewer than 200 instructions, for tests of what a build does with any program
SMALL = "gfx1010/basic-O2-w32-flat:divergent_loop:small"


def _small() -> tuple:
    entry = _named(SMALL)
    assert len(entry[1].instructions) < 200, (SMALL, len(entry[1].instructions))
    return entry


@functools.lru_cache(maxsize=1)
def _untranslated_names() -> tuple:
    """_programs()'s names without translating (collection time: each xdist worker collects
    every file, and translating the ~240 dispatches took it a minute or more): the dispatches
    deduplicated by module_key's parts with the code bytes for the translation's code hash
    (the same bytes translate the same).  test_program_names_are_the_programs checks that the
    names are _programs()'s."""
    from wavelift.run import execute as X

    extra = X._backend("cuda").key_extra
    out, seen = [], set()
    for name, mem, cfg in _dispatches():
        r = X._program_bytes(mem, cfg)
        code, base, entry = r if isinstance(r, tuple) else (r, cfg.program_address, 0)
        k = (bytes(code), base, entry, X.translation_inputs(cfg), cfg.program_address)
        k += (cfg.scratch_wave_bytes, cfg.float_mode, extra(cfg))
        if k not in seen:
            seen.add(k)
            out.append(name)
    return tuple(out)


def _program_names():
    try:
        return list(_untranslated_names())
    except Exception as e:  # noqa: BLE001 - reported by test_fixture_programs_translate
        return [f"<collection failed: {type(e).__name__}: {e}>"]


# ---- without a GPU ------------------------------------------------------------------------


def test_default_backend_is_numpy():
    import inspect

    import wavelift
    from wavelift.run.execute import execute_dispatch

    assert inspect.signature(execute_dispatch).parameters["backend"].default == "numpy"
    assert wavelift.Device("gfx1030").backend == "numpy"


def test_cuda_without_gpu_is_a_clear_refusal():
    why = _gpu_problem()
    if why is None:
        pytest.skip("a CUDA device is present: the refusal path is not taken here")
    from wavelift.run.execute import execute_dispatch

    name, mem, cfg = _dispatches()[0]
    before = copy.deepcopy(mem)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache={})
    assert r.refusal is not None and r.refusal.code == "backend.unavailable"
    assert r.refusal.message.startswith("no CUDA device: "), r.refusal.message
    assert why in r.refusal.message
    for a, b in zip(before, mem):  # a refused dispatch changes no memory
        assert bytes(a.data) == bytes(b.data)


def test_available_names_what_is_missing():
    from wavelift.backends import cuda

    ok = cuda.available()
    assert ok is True or (isinstance(ok, str) and ok), ok
    if ok is not True:
        assert any(w in ok for w in ("CuPy", "CUDA", "cuda", "NVRTC", "device")), ok


# -m slow: translating every fixture program takes 35-50 s of one xdist worker on the 2-core
# CI.  By default test_codegen translates its sample (every axis value of the names, by
# _named) and the NumPy execution tests translate the dispatches they run.
@pytest.mark.slow
def test_fixture_programs_translate():
    progs = _programs()
    assert len(progs) >= 40, len(progs)
    refused = [(p[0], p[4]) for p in progs if p[1] is None]
    assert not refused, refused[:5]  # every fixture runs on NumPy; CUDA gets them all


@pytest.mark.slow
def test_program_names_are_the_programs():
    """The names test_codegen is parametrized with (found without translating) are exactly the
    translated programs' (deduplicated by module_key), in the same order (-m slow: it translates
    every program)."""
    assert list(_untranslated_names()) == [p[0] for p in _programs()]


COMPILE_SAMPLE_MAX = 15
# _compile_sample()'s choice, recorded: choosing translates every program (35-50 s), so the
# default run compiles these by name and checks that they still hold every feature
# (test_compile_sample_is_representative); test_compile_sample_is_the_rules_choice (-m slow)
# checks that the rule still picks exactly these
COMPILE_SAMPLE = (
    "captures/radv-fullscreen-indirect-w32.wlcap#0",
    "captures/radv-push_consts_ubo-w32.wlcap#0",
    "captures/radv-scratch_game-chained-w64.wlcap#0",
    "gfx1010/aco/lds_reduce-w64.bin",
    "gfx1010/aco/push_consts_ubo-w64.bin",
    "gfx1010/aco/scratch_game-w64.bin",
    "gfx1030/aco/subgroup_ops-w32.bin",
    "gfx1030/basic-O2-w32-flat:atomics:small",
    "gfx1030/basic-O2-w32-flat:divergent_loop:small",
    "gfx1030/basic-O2-w32-flat:vadd:small",
    "gfx1030/math-O2-w32-flat:double_math:small",
    "gfx1030/math-O2-w32-flat:lane_ops:small",
    "gfx1030/stack-O2-w32-flat:call:small",
    "gfx1100/captures/radv-push_consts_ubo-gfx1100-w32.wlcap#0",
    "gfx1100/captures/radv-scratch_game-chained-gfx1100-w64.wlcap#0",
)
# programs larger than this are compiled under -m slow only (test_codegen_compiles): ACO's
# descriptor_types (~19,000 IR ops, the smallest with refuse_if) takes NVRTC 45-130 s; every op,
# refuse_if included, is NVRTC-compiled in the default run by test_cuda_ops.
COMPILE_SAMPLE_OPS = 8000
_FEATURES = ("wave64", "scratch", "barrier", "setpc", "atomic", "lds", "f64", "refuse_if")


def _kernel_of(name: str) -> str:
    """The fixture kernel a dispatch name belongs to: 'target/binary:kernel:case' -> kernel,
    'target/aco/shader-w64.bin' -> shader, 'captures/radv-x-w32.wlcap#3' -> radv-x."""
    if ":" in name:
        return name.split(":")[1]
    stem = pathlib.PurePosixPath(name.split("#")[0]).stem
    return stem.removesuffix("-w32").removesuffix("-w64")


def _features(prog, cfg) -> set:
    f = set()
    if cfg.wave_size == 64:
        f.add("wave64")
    if prog.uses_scratch:
        f.add("scratch")
    for b in prog.blocks:
        if b.term[0] in ("barrier", "setpc"):
            f.add(b.term[0])
        for op in b.ops:
            if op.name in ("atomic", "refuse_if"):
                f.add(op.name)
            elif op.name in ("load", "store") and op.attrs["space"] == "lds":
                f.add("lds")
            elif op.type == "f64":
                f.add("f64")
    return f


@functools.lru_cache(maxsize=1)
def _compile_sample() -> tuple:
    """A deterministic representative subset for the default run: the smallest program of each
    distinct fixture kernel, then at most COMPILE_SAMPLE_MAX of those — first the smallest one
    with each feature (wave64, scratch in both modes, barriers, setpc, atomics, LDS, f64,
    refuse_if) among those of at most COMPILE_SAMPLE_OPS ops, then the smallest of the rest."""
    best = {}
    for name, prog, cfg, _base, _modes in _programs():
        if prog is None:
            continue
        size = sum(len(b.ops) for b in prog.blocks)
        if size > COMPILE_SAMPLE_OPS:
            continue
        k = _kernel_of(name)
        if k not in best or (size, name) < best[k][0]:
            best[k] = ((size, name), prog, cfg)
    cands = sorted(best.values(), key=lambda x: x[0])
    chosen = []
    for feat in _FEATURES:
        hit = next((c for c in cands if feat in _features(c[1], c[2])), None)
        if hit is not None and hit[0][1] not in chosen:
            chosen.append(hit[0][1])
    for c in cands:
        if len(chosen) >= COMPILE_SAMPLE_MAX:
            break
        if c[0][1] not in chosen:
            chosen.append(c[0][1])
    return tuple(sorted(chosen[:COMPILE_SAMPLE_MAX]))


def _axes(name: str) -> set:
    """What a fixture dispatch's name says of its program: its kernel, folders (target, aco,
    captures, radv-llvm), wave size and, for clang's binaries, suite, -O level and addressing."""
    path = name.split("#")[0].split(":")[0]
    *dirs, leaf = path.split("/")
    kernel = _kernel_of(name).removeprefix("radv-")  # a capture's: its ACO shader's
    for target in ("navi10", "gfx1100"):
        if kernel.endswith("-" + target):
            kernel = kernel.removesuffix("-" + target)
            dirs.append(target)  # (the target a capture names)
    out = {("kernel", kernel), ("wave", "64" if "-w64" in leaf else "32")}
    out |= {("dir", d) for d in dirs}
    if ":" in name:  # 'basic-O2-w32-flat'
        out |= {("binary", p) for p in leaf.split("-")}
    return out


def _codegen_sample() -> list:
    """test_codegen's programs in the default run: in _program_names()' order, each one that holds
    an axis value (_axes) that none before it held (31 of 235 in session 50).  Lowering every
    program took 120-270 s of one xdist worker on the 2-core CI (int64_div's alone 5-15 s);
    test_codegen_every_program does all of them under -m slow."""
    seen, out = set(), []
    for name in _program_names():
        if not _axes(name) <= seen:
            seen |= _axes(name)
            out.append(name)
    return out


def test_codegen_sample_holds_every_axis():
    """The default run's sample holds every axis value of the fixture programs' names (each of
    these read by _axes, so the check is not vacuous)."""
    names, sample = _program_names(), _codegen_sample()
    held = set().union(*map(_axes, sample))
    assert held == set().union(*map(_axes, names))
    want = {
        ("binary", "O2"),
        ("binary", "mubuf"),
        ("wave", "64"),
        ("dir", "gfx1100"),
        ("kernel", "int64_div"),
    }
    assert want <= held, want - held
    assert set(sample) < set(names) and len(sample) <= len(names) // 3, (len(sample), len(names))


@pytest.mark.parametrize("name", _codegen_sample())
def test_codegen(name):
    """Fixture programs lower to CUDA C++ (and, using scratch, in both modes); the text holds no
    instruction text of the guest program.  The default run's sample (_codegen_sample)."""
    _lowers(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", _program_names())
def test_codegen_every_program(name):
    """test_codegen over every fixture program (-m slow: ~235, 2-4 min on 2 cores)."""
    _lowers(name)


def _lowers(name):
    from wavelift.backends.cuda.codegen import kernel_source

    _, prog, cfg, base, modes = _named(name)
    texts = {ins.text for ins in prog.instructions if len(ins.text) >= 8}
    for m in modes:
        src = kernel_source(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base)
        assert src.isascii()
        leaked = [t for t in texts if t in src]
        assert not leaked, f"guest text in generated code: {leaked[:3]}"


def _compiles(name, tmp_path, monkeypatch):
    _, prog, cfg, base, modes = _named(name)
    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import module_key

    for m in modes:
        mod = build_module(module_key(prog, cfg, m, "cuda"), prog, cfg, m, arch="sm_90", base_address=base)
        assert mod.compiled_by in ("nvrtc", "nvrtc-fast") and mod.cubin[:4] == b"\x7fELF"
        if mod.upgrade is not None:  # a big module's first tier: its optimising build compiles too
            full = mod.upgrade.wait()
            assert full is not None and full[:4] == b"\x7fELF", mod.upgrade.error


@pytest.mark.parametrize("name", COMPILE_SAMPLE)
def test_codegen_compiles_sample(name, tmp_path, monkeypatch):
    """NVRTC compiles a representative subset in the default run (COMPILE_SAMPLE)."""
    _compiles(name, tmp_path, monkeypatch)


def test_compile_sample_is_representative():
    """The recorded sample holds every codegen feature, one program per kernel, each small
    enough for the default run."""
    names = COMPILE_SAMPLE
    assert len(names) == COMPILE_SAMPLE_MAX, names
    assert len({_kernel_of(n) for n in names}) == len(names)  # one per kernel
    progs = [_named(n) for n in names]
    big = [p[0] for p in progs if sum(len(b.ops) for b in p[1].blocks) > COMPILE_SAMPLE_OPS]
    assert not big, big
    feats = set().union(*(_features(p[1], p[2]) for p in progs))
    assert feats == set(_FEATURES), sorted(set(_FEATURES) - feats)


@pytest.mark.slow
def test_compile_sample_is_the_rules_choice():
    """_compile_sample() over every program still picks the recorded COMPILE_SAMPLE, and no
    feature of the programs it may pick from is missing from it."""
    assert _compile_sample() == COMPILE_SAMPLE
    have = set().union(
        *(
            _features(p[1], p[2])
            for p in _programs()
            if p[1] is not None and sum(len(b.ops) for b in p[1].blocks) <= COMPILE_SAMPLE_OPS
        )
    )
    feats = set().union(*(_features(_named(n)[1], _named(n)[2]) for n in COMPILE_SAMPLE))
    assert feats == have & set(_FEATURES), sorted((have & set(_FEATURES)) - feats)


def _check_source(src):
    from wavelift.backends.cuda.compile import CompileError, check_source

    try:
        check_source(src, "sm_90")
        return None
    except CompileError as e:
        return str(e)[:2000]


@pytest.mark.slow
def test_every_fixture_module_compiles_to_ptx():
    """Every fixture program's module (both modes where it uses scratch; the checked build of
    one with preloads too) goes through NVRTC to PTX (compile.check_source: unoptimised, about a
    second each, two processes): ~340 sources in ~3 minutes on 2 cores, where optimised cubins
    take up to minutes each.  -m slow: the default run compiles the representative sample above
    (test_compile_sample_is_representative keeps it covering every codegen feature)."""
    import concurrent.futures as cf

    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    from wavelift.backends.cuda.codegen import generate

    names, srcs = [], []
    for name, prog, cfg, base, modes in _programs():
        if prog is None:
            continue
        for m in modes:
            src, _, pre = generate(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base)
            names.append((name, m))
            srcs.append(src)
            if pre[0] and m == "lane":
                names.append((name, "checked"))
                srcs.append("#define WL_PRELOADED 0\n" + src)
    assert len(srcs) >= 300
    assert _check_source(srcs[0].replace("wl_main(", "wl_main(,", 1))  # (a broken one fails)
    with cf.ProcessPoolExecutor(2) as ex:
        errors = list(ex.map(_check_source, srcs))
    bad = [(n, e) for n, e in zip(names, errors) if e]
    assert not bad, bad[:3]


@pytest.mark.slow
@pytest.mark.parametrize("name", _program_names())
def test_codegen_compiles(name, tmp_path, monkeypatch):
    """Every fixture program compiles with NVRTC for sm_90 (both modes where it uses scratch):
    ~190 modules, minutes on 2 cores, so only with -m slow (CI's default run compiles
    test_codegen_compiles_sample)."""
    _compiles(name, tmp_path, monkeypatch)


def test_disk_cache_hit(tmp_path, monkeypatch):
    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import module_key

    name, prog, cfg, base, modes = _small()
    key = module_key(prog, cfg, "lane", "cuda")
    a = build_module(key, prog, cfg, "lane", arch="sm_90", base_address=base)
    b = build_module(key, prog, cfg, "lane", arch="sm_90", base_address=base)
    assert (a.compiled_by, b.compiled_by) == ("nvrtc", "disk")
    assert a.cubin == b.cubin
    assert len(list(tmp_path.glob("*.cubin"))) == 1
    c = build_module(key, prog, cfg, "lane", arch="sm_80", base_address=base)  # arch is in the name
    assert c.compiled_by == "nvrtc" and len(list(tmp_path.glob("*.cubin"))) == 2


def test_checked_build_compiles_on_first_need(tmp_path, monkeypatch):
    """Module.variant: vadd's preloads are constants in the module's own build (no WL_PO read);
    the checked build (WL_PRELOADED 0: each preload tested, the load itself where unresolved)
    is compiled once, on first need, into the disk cache; a program without preloads has one."""
    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import module_key

    mem, cfg, _, _ = _vadd_dispatch(64)
    prog, base = translate_dispatch(mem, cfg)
    m = build_module(
        module_key(prog, cfg, "lane", "cuda"), prog, cfg, "lane", arch="sm_90", base_address=base
    )
    assert m.variant(True) is m and len(list(tmp_path.glob("*.cubin"))) == 1
    plain = m.variant(False)
    assert plain is not m and plain is m.variant(False) and plain.cubin[:4] == b"\x7fELF"
    assert plain.source == "#define WL_PRELOADED 0\n" + m.source and plain.cubin != m.cubin
    assert len(list(tmp_path.glob("*.cubin"))) == 2
    body = m.source[m.source.index("wl_main(") :]
    assert body.count("#if WL_PRELOADED") == 4 and "WL_PO[" in body  # (only under #else)
    m.preloads = ((), ())
    assert m.variant(False) is m


def test_dispatch_shape_is_folded_and_keyed():
    """The shape words (codegen.BAKED) are numbers in the source and part of the module key; the
    per-dispatch words (user SGPRs, group counts, budget) stay reads of P[]."""
    import dataclasses
    import re

    from wavelift.backends.cuda import codegen as G
    from wavelift.run.execute import module_key

    name, prog, cfg, base, modes = _small()
    src = G.kernel_source(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, G.baked_params(cfg))
    read = {int(k) for k in re.findall(r"(?<!u32 )\bP\[(\d+)\]", src)}
    assert not read & set(G.BAKED), sorted(read & set(G.BAKED))
    assert {G.P_NGROUPS, G.P_BUDGET, G.P_NWIN} <= read
    bx, by, bz = cfg.block
    other = dataclasses.replace(cfg, block=(bx * 2, by, bz))
    assert module_key(prog, cfg, "lane", "cuda") != module_key(prog, other, "lane", "cuda")
    moved = dataclasses.replace(cfg, user_sgprs=tuple(v ^ 0x1000 for v in cfg.user_sgprs))
    assert module_key(prog, cfg, "lane", "cuda") == module_key(prog, moved, "lane", "cuda")
    assert module_key(prog, cfg, "lane", "numpy") == module_key(prog, other, "lane", "numpy")


def test_guesses_name_only_windows_that_fit():
    """codegen.guesses: a slot's guess is the window its hint names in this dispatch's table,
    limited to the addresses where the whole access fits; no guess (limit 0) for a hint past the
    table, a window smaller than the access, or one holding non-canonical addresses."""
    from wavelift.backends.cuda.codegen import MAX_GUESSES, guesses

    starts = [0x1000, 0x2000, 0x7FFF_FFFF_F000, 0xFFFF_8000_0000_0000]
    ends = [0x1100, 0x2004, 0x8000_0000_1000, 0xFFFF_8000_0000_0100]
    offs = [8, 0x108, 0x120, 0x2128]
    nbytes = (4, 16, 8, 4, 4, 4)
    hints = [0, 1, 2, 3, 9, -1]
    base, lim, off = guesses(nbytes, hints, starts, ends, offs)
    assert base.dtype == np.uint64 and lim.dtype == np.uint64 and off.dtype == np.int64
    assert (int(base[0]), int(lim[0]), int(off[0])) == (0x1000, 0x100 - 4 + 1, 8)
    assert int(lim[1]) == 0  # 4-byte window, 16-byte access
    assert int(lim[2]) == 0  # crosses the canonical hole
    assert (int(base[3]), int(lim[3]), int(off[3])) == (0xFFFF_8000_0000_0000, 0x100 - 4 + 1, 0x2128)
    assert int(lim[4]) == int(lim[5]) == 0  # past the table / never resolved
    # an access at base + lim - 1 ends exactly at the window's end; base + lim does not fit
    a = int(base[0]) + int(lim[0]) - 1
    assert a + 4 == ends[0]
    b, l, _ = guesses((4,) * (MAX_GUESSES + 5), [0] * (MAX_GUESSES + 5), starts, ends, offs)
    assert len(b) == len(l) == MAX_GUESSES
    b, l, _ = guesses((), [], starts, ends, offs)
    assert len(b) == 1 and int(l[0]) == 0


def test_mirrors_copy_guessed_windows_of_uniform_loads():
    """codegen.mirrors: the guessed window of each mirrorable slot is copied once, at an offset
    congruent to its address mod 8, while it fits; other slots get -1; disabled: no copies."""
    from wavelift.backends.cuda.codegen import MIRROR_BYTES, mirrors

    arena = np.arange(64 + MIRROR_BYTES, dtype=np.uint32).astype(np.uint8)
    starts = [0x1004, 0x2000, 0x9000]
    ends = [0x1044, 0x2010, 0x9000 + MIRROR_BYTES]
    offs = [4, 0x48, 0x60]
    slots = [(4, True), (8, True), (4, False), (16, True), (4, True), (4, True)]
    hints = [0, 1, 0, 0, 2, 0]
    lim = [1, 1, 1, 1, 1, 0]
    gm, words, copied = mirrors(slots, hints, lim, starts, ends, offs, arena)
    b = words.view(np.uint8)
    assert gm[2] == -1 and gm[5] == -1  # not a uniform load / no guess
    assert gm[4] == -1  # window 2 does not fit after the others
    assert gm[0] == gm[3] and gm[0] % 8 == 0x1004 % 8 and gm[1] % 8 == 0
    assert bytes(b[gm[0] : gm[0] + 0x40]) == bytes(arena[4 : 4 + 0x40])
    assert bytes(b[gm[1] : gm[1] + 0x10]) == bytes(arena[0x48:0x58])
    assert sorted(copied) == [(4, 0x40), (0x48, 0x10)]
    gm, _, copied = mirrors(slots, hints, lim, starts, ends, offs, arena, enabled=False)
    assert (gm == -1).all() and copied == []


def test_carry_masks_are_not_exchanged():
    """The VCC written by v_add_co_u32 and read by the next v_add_co_ci_u32 (vadd's 64-bit
    address arithmetic) is that lane's own carry: no ballot (in wave64 no shared-memory round
    with named barriers) is lowered for it, and a mask nobody reads is not made at all."""
    from wavelift.backends.cuda.codegen import kernel_source

    name, prog, cfg, base, _ = _named("gfx1010/basic-O2-w32-flat:vadd:small")
    src = kernel_source(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base)
    maskbits = sum(op.name == "maskbit" for b in prog.blocks for op in b.ops)
    ballots = sum(op.name == "ballot" for b in prog.blocks for op in b.ops)
    assert maskbits >= 2 and ballots >= 4, name  # the carry chain is in the program
    lowered = src.count("__ballot_sync(")
    assert lowered <= ballots - 3, (name, lowered, ballots)


def test_constants_are_bit_exact():
    from wavelift.backends.cfamily.lowering import const_literal

    assert const_literal("f32", -0.0) == "__uint_as_float(0x80000000u)"
    assert const_literal("f32", float("inf")) == "__uint_as_float(0x7f800000u)"
    assert const_literal("u32", -1) == "((u32)0xffffffffull)"
    assert const_literal("f16", 1.0) == "f16{(u16)0x3c00u}"


# ---- with a GPU ---------------------------------------------------------------------------


def _needs_gpu():
    why = _gpu_problem()
    if why:
        pytest.skip(f"no CUDA device: {why}")


def _compare(mem_a, mem_b):
    diffs = []
    for x, y in zip(mem_a, mem_b):
        if bytes(x.data) != bytes(y.data):
            d = np.flatnonzero(
                np.frombuffer(bytes(x.data), np.uint8) != np.frombuffer(bytes(y.data), np.uint8)
            )
            diffs.append((x.name, x.base, int(d[0]), d.size))
    return diffs


GPU_SAMPLE = (
    "basic-O2-w32-flat:vadd",
    "basic-O2-w64-mubuf:lds_reduce",
    "stack-O2-w64-flat",
    "fullscreen-w32",
    "scratch_game-w64",
    "subgroup_ops-w64",
    "lane_ops",
)


@pytest.mark.cuda
@pytest.mark.parametrize("pattern", GPU_SAMPLE)
def test_gpu_matches_numpy_lane(pattern):
    gpu_matches_numpy_lane(pattern)


def gpu_matches_numpy_lane(pattern):
    """The first two fixture dispatches named like ``pattern``: CUDA lane mode's refusal, escapes,
    write spans, instruction count and every byte of memory those of NumPy lane mode."""
    _needs_gpu()
    from wavelift.run.execute import execute_dispatch

    hits = [d for d in _dispatches() if pattern in d[0]][:2]
    if not hits:
        pytest.skip(f"no fixture named like {pattern}")
    for name, mem, cfg in hits:
        m1, m2 = copy.deepcopy(mem), copy.deepcopy(mem)
        r1 = execute_dispatch(m1, cfg, backend="numpy", mode="lane", cache={})
        r2 = execute_dispatch(m2, cfg, backend="cuda", mode="lane", cache={})
        c1 = r1.refusal.code if r1.refusal else None
        c2 = r2.refusal.code if r2.refusal else None
        assert c1 == c2, (name, r1.refusal, r2.refusal)
        assert r1.stats["escapes"] == r2.stats["escapes"], name
        if c1 is None:
            assert r1.write_spans == r2.write_spans, name
            assert r1.stats["instructions"] == r2.stats["instructions"], name
            assert not _compare(m1, m2), (name, _compare(m1, m2)[:3])


# An endless loop (built like MIRROR_SRC below; the GPU machine has no llvm-mc, so the bytes
# are here and test_embedded_program_bytes checks them where llvm-mc-19 exists).
LOOP_SRC = "loop:\n  s_add_u32 s0, s0, 1\n  s_branch loop\n  s_endpgm\n"
LOOP_HEX = "00810080feff82bf000081bf"


def _rig(code_hex, wave64):
    """A tests/execute harness Rig over program bytes (no assembler needed)."""
    sys.path.insert(0, str(HERE.parent / "execute"))
    from harness import Rig

    from wavelift.memory.guest import GuestMemory

    rig = Rig.__new__(Rig)
    rig.mem, rig.code, rig.target = GuestMemory(), bytes.fromhex(code_hex), "gfx1030"
    rig.prog = rig.mem.alloc(len(rig.code) + 256, name="code", data=rig.code + b"\0" * 256)
    rig.wave_size = 64 if wave64 else 32
    return rig


@pytest.mark.cuda
@pytest.mark.parametrize("wave64", [False, True])
def test_gpu_budget_stops_an_endless_loop(wave64):
    _needs_gpu()
    rig = _rig(LOOP_HEX, wave64)
    cfg = rig.config(groups=(64, 1, 1), block=(64, 1, 1))
    r = rig.run(cfg, backend="cuda", mode="lane", budget=200_000)
    assert r.refusal is not None and r.refusal.code == "dispatch.budget_exceeded", r.refusal


@pytest.mark.cuda
@pytest.mark.parametrize("wave", [32, 64])
def test_gpu_stale_window_guesses_are_checked(wave):
    """A module's window guesses come from its previous dispatch (codegen.guesses): with new
    buffers each time they name the wrong windows and the accesses must search; results stay
    a + b.  Then an escape through accesses whose guesses were right: refused, memory unchanged."""
    _needs_gpu()
    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane")
    k = dev.load_code_object(
        str(HERE.parent / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco")
    ).kernel("vadd")
    rng = np.random.default_rng(wave)
    n = 4096
    for rnd in range(3):
        dev.alloc(4096 * (rnd + 1))  # moves every later buffer
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        ba, bb, bo = dev.upload(a), dev.upload(b), dev.alloc(4 * n)
        r = k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
        assert r.refusal is None, r.refusal
        assert np.array_equal(dev.download(bo, np.float32), a + b), rnd
    before = dev.download(bo, np.uint32).copy()
    r = k.launch(groups=(16 * n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(16 * n)])
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    assert np.array_equal(dev.download(bo, np.uint32), before)


# A wave that writes the word its uniform loads read: the first s_load's window is copied into
# constant memory (codegen.mirrors) once the module has learned it, so the second s_load would
# read the stale copy; the host sees the copied window written and runs the dispatch again
# without copies.  Built with llvm-mc-19 (tests/execute/asm.py, gfx1030; the same bytes for
# wave32 and wave64); test_embedded_program_bytes checks the bytes where llvm-mc-19 exists.
MIRROR_SRC = """
  s_load_dword s4, s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, 0
  v_mov_b32 v2, s4
  v_add_nc_u32 v2, 1, v2
  global_store_dword v1, v2, s[0:1]
  s_waitcnt vmcnt(0)
  s_load_dword s5, s[0:1], 0x0 glc
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v3, s5
  global_store_dword v1, v3, s[0:1] offset:4
  s_endpgm
"""
MIRROR_HEX = (
    "000100f4000000fa7fc08cbf8002027e0402047e8104044a008070dc01020000703f8cbf400101f4"
    "000000fa7fc08cbf0502067e048070dc01030000000081bf"
)


def test_embedded_program_bytes():
    sys.path.insert(0, str(HERE.parent / "execute"))
    from asm import HAVE_MC, assemble

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    for src, code in ((MIRROR_SRC, MIRROR_HEX), (LOOP_SRC, LOOP_HEX)):
        for w64 in (False, True):
            assert assemble(src, w64) == bytes.fromhex(code)


@pytest.mark.cuda
@pytest.mark.parametrize("wave64", [False, True])
def test_gpu_written_mirror_runs_again(wave64):
    _needs_gpu()
    rig = _rig(MIRROR_HEX, wave64)
    from harness import ptr

    x = rig.buf(np.array([7, 0], np.uint32))
    cfg = rig.config(user_sgprs=ptr(x), block=(rig.wave_size, 1, 1))
    cache = {}
    for rnd in range(3):
        ref = copy.deepcopy(rig.mem)
        rn = execute_dispatch_numpy(ref, cfg)
        r = rig.run(cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and rn.refusal is None, (r.refusal, rn.refusal)
        assert r.write_spans == rn.write_spans
        got = rig.read(x, np.uint32, 2)
        assert not _compare(ref, rig.mem), rnd
        assert got[0] == got[1] == 8 + rnd, (rnd, got)
        # the load from s[0:1] is preloaded from the first dispatch (preload.py) and the
        # store writes those bytes: every round runs again without copies
        assert r.stats.get("mirror_rerun"), rnd


def execute_dispatch_numpy(mem, cfg):
    from wavelift.run.execute import execute_dispatch

    return execute_dispatch(mem, cfg, backend="numpy", mode="lane", cache={})


def _vadd_dispatch(wave):
    """vadd (basic.cl, clang -O2) launched through Device, caught before running: (memory,
    config, buffer addresses, n)."""
    import wavelift
    from wavelift.errors import Refusal
    from wavelift.run.result import DispatchResult

    got = []

    def catch(memory, config, index):
        got.append((copy.deepcopy(memory), config))
        return DispatchResult(index, config, Refusal("backend.unavailable", "caught"))

    n = 1000
    dev = wavelift.Device("gfx1030", execute=catch)
    k = dev.load_code_object(
        str(HERE.parent / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco")
    ).kernel("vadd")
    bufs = [dev.upload(np.arange(n, dtype=np.float32)) for _ in range(2)] + [dev.alloc(4 * n)]
    k.launch(groups=(4,), block=(256,), args=bufs + [np.uint32(n)])
    return got[0] + ([b.address for b in bufs], n)


@pytest.mark.parametrize("wave", [32, 64])
def test_preloads_read_the_kernel_arguments(wave):
    """preload: vadd's four scalar loads (workgroup size from the dispatch packet, n, the a/b
    pointers, the c pointer) have dispatch-constant addresses; evaluated on the host they give
    exactly what the launch passed, read from the windows (and say where, for the written
    check); with the pointer SGPRs taken as per-group values nothing resolves."""
    from wavelift.backends.cuda import preload
    from wavelift.trace.tracer import trace
    from wavelift.trace.windows import WindowSet

    mem, cfg, (a, b, c), n = _vadd_dispatch(wave)
    prog, _ = translate_dispatch(mem, cfg)
    loads, plan = preload.find(prog)
    assert [op.attrs["nbytes"] for op in loads] == [4, 4, 16, 8]
    win = WindowSet(trace(mem, cfg), mem)
    words, ranges = preload.evaluate(
        loads, plan, prog, wave, cfg.user_sgprs, set(cfg.system_sgprs.values()), win
    )
    lohi = lambda p: [p & 0xFFFFFFFF, p >> 32]  # noqa: E731
    assert [list(map(int, w)) for w in words] == [[256 | (1 << 16)], [n], lohi(a) + lohi(b), lohi(c)]
    assert len(ranges) == 4
    for (at, nb), w in zip(ranges, words):
        assert bytes(win.arena[at : at + nb]) == np.asarray(w, "<u4").tobytes()
    none, _ = preload.evaluate(loads, plan, prog, wave, cfg.user_sgprs, set(range(16)), win)
    assert none == [None] * 4


def test_preloads_need_the_dispatch_value_on_every_path():
    """preload.find: a load from s[0:1] qualifies in the entry block before s0 is written, not
    in a block reached after the write, nor in one a loop brings back to after it."""
    from wavelift.backends.cuda import preload
    from wavelift.ir.program import Block, Op, Program, Value

    ids = iter(range(1000))

    def v(t):
        return Value(next(ids), t, True)

    def load_from_s01(ops):
        lo, hi, addr, one, t = v("u32"), v("u32"), v("u64"), v("u32"), v("b1")
        out = v("u32")
        ops += [
            Op("sget", "u32", (), {"reg": 0}, lo, 0),
            Op("sget", "u32", (), {"reg": 1}, hi, 0),
            Op("pack64", "u64", (lo, hi), {}, addr, 0),
            Op("const", "u32", (), {"value": 1}, one, 0),
            Op("cmp", "u32", (one, one), {"cond": "eq"}, t, 0),
            Op("load", "u32", (addr, t), {"space": "global", "nbytes": 4, "words": 1}, out, 0),
        ]
        return ops[-1], out

    b0, b1, b2, b3 = [], [], [], []
    first, got = load_from_s01(b0)
    b1.append(Op("sset", "u32", (got,), {"reg": 0}, None, 0))
    second, _ = load_from_s01(b2)
    third, _ = load_from_s01(b3)
    prog = Program(
        [
            Block(0, 0, ops=b0, term=("branch", None, 1, 2)),
            Block(1, 4, ops=b1, term=("jump", 3)),
            Block(2, 8, ops=b2, term=("jump", 3)),
            Block(3, 12, ops=b3, term=("end",)),
        ],
        [],
        {},
        0,
    )
    assert preload.find(prog)[0] == [first, second]  # B3 is reached through B1's write
    prog.blocks[3].term = ("branch", None, 0, 0)  # a loop back to the entry
    assert preload.find(prog)[0] == []
    prog.blocks[3].term = ("setpc", None)  # a jump we cannot follow: none at all
    prog.blocks[1].ops = []
    assert preload.find(prog)[0] == []


# 64 values live at once in a kernel bounded to 2 blocks of 1024 threads (32 registers)
SPILLER = r"""extern "C" __global__ void __launch_bounds__(1024, 2) wl_main(float* a, float* b) {
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = a[threadIdx.x * 64 + i];
  b[threadIdx.x] = 0.0f;                       /* may alias a: the loads cannot move below */
  for (int i = 0; i < 64; i++) a[threadIdx.x * 64 + i] = x[i] * x[63 - i];
}
"""


def test_occupancy_bounded_build_unless_it_spills(monkeypatch):
    """compile.nvrtc_compile: a small program's module names its block size; vadd then fits
    1536 threads per SM (≤ 40 registers, no spills) and that build is the one kept; a build
    that spills more than SPILL_OK_BYTES (64 live values in 32 registers) counts as spilling;
    without a block size there is one, unbounded, build."""
    import re

    # (the usual bound: WAVELIFT_CUDA_OCCUPANCY_FULL=on, the default, would keep vadd's 8-block build)
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "off")

    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    from wavelift.backends.cuda import compile as CC
    from wavelift.backends.cuda.codegen import baked_params, generate

    mem, cfg, _, _ = _vadd_dispatch(32)
    prog, base = translate_dispatch(mem, cfg)
    src = generate(prog, 32, "lane", 0, base, baked_params(cfg))[0]
    assert src.startswith("#define WL_BLOCK_THREADS 256\n")
    cubin, log = CC._reported_build(src, "sm_90", ("-DWL_MIN_BLOCKS=6", "--ptxas-options=-v"))
    used = re.search(r"Function properties for wl_main[\s\S]*?Used (\d+) registers", log)
    assert not CC._spills(log) and int(used.group(1)) <= 40
    assert CC.nvrtc_compile(src, "sm_90") == cubin
    _, log = CC._reported_build(SPILLER, "sm_90", ("--ptxas-options=-v",))
    assert "Function properties for" in log and CC._spills(log)
    plain = src.replace("#define WL_BLOCK_THREADS 256\n", "")
    assert CC._spills("ptxas info : Function properties for wl_escape_\n 0 bytes spill stores")
    # without generate()'s leading define (the prelude's #ifndef fallback does not count) the
    # build is the unbounded one
    cubin, _, bound = CC.nvrtc_build(plain, "sm_90")
    assert bound == 0 and cubin == CC._nvrtc_build(plain, "sm_90", ())[0]


# ptxas -v's report of a module as NVRTC 12.9 gives it (bench/results/
# occupancy-2026-12-07-s50-h143-ptxas.txt): wl_main's properties, then its helpers'
_PTXAS_HELPERS = "".join(
    f"ptxas info    : Function properties for _ZN48_INTERNAL_00000000_18_wavelift_module_cu_wl_main{f}\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    for f in ("10wl_escape_Eyjjyj", "8wl_flag_Ejjjj", "9wl_check_Ey")
)


def _ptxas_log(stack, stores, loads, regs):
    return (
        "ptxas info    : Compiling entry function 'wl_main' for 'sm_90'\n"
        "ptxas info    : Function properties for wl_main\n"
        f"ptxas         .     {stack} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads\n"
        f"ptxas info    : Used {regs} registers, used 1 barriers"
        + (f", {stack} bytes cumulative stack size" if stack else "")
        + "\nptxas info    : Compile time = 169.354 ms\n"
        + _PTXAS_HELPERS
    )


@pytest.mark.parametrize("step, spill, kept", [(None, 20, 0), ("32", 20, 5), ("32", 40, 0), ("16", 20, 0)])
def test_occupancy_step_one_block_fewer(monkeypatch, step, spill, kept):
    """WAVELIFT_CUDA_OCCUPANCY_STEP: a bound build (6 blocks of 256 threads) that spills is
    built again for 5 and kept if it spills at most the setting's bytes; else (or unset) the
    unbounded build.  ptxas's reports stand in (no NVRTC needed)."""
    from wavelift.backends.cuda import compile as CC

    tried = []

    def fake(source, arch, extra):
        minb = int(extra[0].split("=")[1])
        tried.append(minb)
        b = 48 if minb == 6 else spill
        return f"cubin{minb}".encode(), _ptxas_log(b, b, b, 40)

    monkeypatch.setattr(CC, "_reported_build", fake)
    monkeypatch.setattr(CC, "_nvrtc_build", lambda s, a, e: (b"unbounded", ""))
    if step is None:
        monkeypatch.delenv("WAVELIFT_CUDA_OCCUPANCY_STEP", raising=False)
    else:
        monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_STEP", step)
    monkeypatch.delenv("WAVELIFT_CUDA_OCCUPANCY", raising=False)
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "off")  # (the usual bound first)
    cubin, _, bound = CC.nvrtc_build("#define WL_BLOCK_THREADS 256\n", "sm_90")
    assert tried == ([6] if step is None else [6, 5])
    assert bound == kept and cubin == (b"cubin5" if kept else b"unbounded")


@pytest.mark.parametrize(
    "full, arch, spill, tried, kept",
    [
        ("off", "sm_90", 0, [6], 6),  # off: no try for a full SM
        (None, "sm_90", 16, [8], 8),  # unset: `on`, the default since session 52
        ("on", "sm_90", 16, [8], 8),  # a full SM's build spilling at most SPILL_OK_BYTES is kept
        ("on", "sm_90", 20, [8, 6], 6),  # more: the usual bound
        ("on", "sm_86", 0, [6], 6),  # 1536 threads fill an sm_86 SM already
        ("on", "sm_75", 0, [6], 6),  # (1024 there: fewer than the bound's; no try)
    ],
)
def test_occupancy_full_first(monkeypatch, full, arch, spill, tried, kept):
    """WAVELIFT_CUDA_OCCUPANCY_FULL=on (0047's amendment h136): a module of 256-thread blocks is
    first built for a full SM (8 blocks on sm_90) and kept when it spills at most SPILL_OK_BYTES;
    else the usual bound (6 blocks for 1536 threads).  ptxas's reports stand in."""
    from wavelift.backends.cuda import compile as CC

    seen = []

    def fake(source, arch, extra):
        minb = int(extra[0].split("=")[1])
        seen.append(minb)
        b = spill if minb == 8 else 0
        return f"cubin{minb}".encode(), _ptxas_log(b, b, b, 32 if minb == 8 else 40)

    monkeypatch.setattr(CC, "_reported_build", fake)
    monkeypatch.setattr(CC, "_nvrtc_build", lambda s, a, e: (b"unbounded", ""))
    for k in ("WAVELIFT_CUDA_OCCUPANCY", "WAVELIFT_CUDA_OCCUPANCY_STEP", "WAVELIFT_CUDA_OCCUPANCY_FULL"):
        monkeypatch.delenv(k, raising=False)
    if full:
        monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", full)
    cubin, _, bound = CC.nvrtc_build("#define WL_BLOCK_THREADS 256\n", arch)
    assert seen == tried and bound == kept and cubin == f"cubin{kept}".encode()


# wl_main's report for lds.cl's histogram with HOIST=induction bounded for a full SM (8 blocks of
# 256 on sm_90), verbatim from NVRTC 12.9 (bench/results/occupancy-2026-12-07-s50-h143-ptxas.txt)
HISTOGRAM_FULL_LOG = """\
ptxas info    : 18 bytes gmem
ptxas info    : Compiling entry function 'wl_main' for 'sm_90'
ptxas info    : Function properties for wl_main
ptxas         .     16 bytes stack frame, 16 bytes spill stores, 52 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 16 bytes cumulative stack size
ptxas info    : Compile time = 171.004 ms
ptxas info    : Function properties for _ZN48_INTERNAL_00000000_18_wavelift_module_cu_wl_main10wl_escape_Eyjjyj
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""


def test_ptxas_report_reads_wl_main_only():
    """compile.ptxas_report: wl_main's registers, stack and spill bytes from ptxas -v's log; a
    helper's lines are not wl_main's; no wl_main report: None (read as spilling)."""
    from wavelift.backends.cuda import compile as CC

    want = {"stack": 16, "stores": 16, "loads": 52, "registers": 32}
    assert CC.ptxas_report(HISTOGRAM_FULL_LOG) == want
    assert CC.ptxas_report(_ptxas_log(16, 16, 52, 32)) == want  # (the stand-in's format is ptxas's)
    helper_first = _PTXAS_HELPERS.replace(" 0 bytes spill stores", " 99 bytes spill stores") + _ptxas_log(
        0, 0, 0, 40
    )
    assert CC.ptxas_report(helper_first) == {"stack": 0, "stores": 0, "loads": 0, "registers": 40}
    assert CC.ptxas_report(_PTXAS_HELPERS) is None and CC._spills(_PTXAS_HELPERS)


# (stack, stores, loads, registers) of the full SM's build, HOIST=induction, NVRTC 12.9
# (bench/results/occupancy-2026-12-07-s50-h143-ptxas.txt): the histogram's spill sits outside its
# loops, stencil5's three reloads in its loop (nvdisasm); ptxas's totals cannot tell them apart
FULL_REPORTS = {
    "histogram": (16, 16, 52, 32),
    "stencil5": (16, 16, 24, 32),
    "matmul16": (40, 44, 76, 32),
    "reduce1024": (0, 0, 0, 30),
}


@pytest.mark.parametrize(
    "mode, module, kept",
    [
        ("on", "histogram", 8),  # at most SPILL_OK_BYTES: kept (h136)
        ("on", "stencil5", 8),  # the same 16 bytes: kept, and slower on the H100 (session 49)
        ("on", "matmul16", 6),
        ("on", "reduce1024", 8),
        ("auto", "histogram", 6),  # any spill: the usual bound
        ("auto", "stencil5", 6),
        ("auto", "matmul16", 6),
        ("auto", "reduce1024", 8),  # no spill: a full SM
        ("off", "reduce1024", 6),
    ],
)
def test_occupancy_full_auto_only_without_spill(monkeypatch, mode, module, kept):
    """WAVELIFT_CUDA_OCCUPANCY_FULL=auto (0047's amendment h143): the full SM's build is kept only
    when ptxas reports no spill stores or loads; `on` keeps up to SPILL_OK_BYTES; `off` tries no
    full SM.  The reports are real ones (FULL_REPORTS); the usual bound's build spills nothing."""
    from wavelift.backends.cuda import compile as CC

    def fake(source, arch, extra):
        minb = int(extra[0].split("=")[1])
        log = _ptxas_log(*FULL_REPORTS[module]) if minb == 8 else _ptxas_log(0, 0, 0, 40)
        return f"cubin{minb}".encode(), log

    monkeypatch.setattr(CC, "_reported_build", fake)
    monkeypatch.setattr(CC, "_nvrtc_build", lambda s, a, e: (b"unbounded", ""))
    for k in ("WAVELIFT_CUDA_OCCUPANCY", "WAVELIFT_CUDA_OCCUPANCY_STEP"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", mode)
    cubin, _, bound = CC.nvrtc_build("#define WL_BLOCK_THREADS 256\n", "sm_90")
    assert bound == kept and cubin == f"cubin{kept}".encode()


def test_occupancy_full_refuses_unknown_values(monkeypatch):
    """An OCCUPANCY_FULL value other than on, auto or off is refused, not read as off."""
    from wavelift.backends.cuda import compile as CC

    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "yes")
    with pytest.raises(ValueError, match="OCCUPANCY_FULL"):
        CC.nvrtc_build("#define WL_BLOCK_THREADS 256\n", "sm_90")


@pytest.mark.parametrize(
    "setting, values",
    [
        ("WAVELIFT_CUDA_OCCUPANCY_FULL", ("off", "auto")),  # (unset: `on`)
        ("WAVELIFT_CUDA_OCCUPANCY_STEP", ("32",)),
        ("WAVELIFT_CUDA_OCCUPANCY", ("2048",)),
    ],
)
def test_occupancy_settings_are_in_the_module_key(monkeypatch, setting, values):
    """The occupancy settings pick a build's register bound (not its source): the module key
    holds them (CudaBackend.key_extra), so a module cached in memory under one value is not
    reused under another (0047's amendment h143)."""
    from wavelift.backends.cuda import BACKEND

    mem, cfg, _, _ = _vadd_dispatch(32)
    for k in ("WAVELIFT_CUDA_OCCUPANCY", "WAVELIFT_CUDA_OCCUPANCY_STEP", "WAVELIFT_CUDA_OCCUPANCY_FULL"):
        monkeypatch.delenv(k, raising=False)
    keys = [BACKEND.key_extra(cfg)]
    for v in values:
        monkeypatch.setenv(setting, v)
        keys.append(BACKEND.key_extra(cfg))
    assert len(set(keys)) == len(keys)


def test_runtime_packs_preloads_and_guards_their_bytes():
    """runtime._preloads (no GPU needed): each resolved load's words go to WL_PRE in turn, its
    WL_PO entry says where; the bytes read join the written check (self.mirrored); all resolved
    -> the module's own (WL_PRELOADED) build is launched; a rerun (disabled) preloads nothing
    and needs the checked build."""
    from types import SimpleNamespace

    from wavelift.backends.cuda import preload
    from wavelift.backends.cuda.runtime import Runtime
    from wavelift.trace.tracer import trace
    from wavelift.trace.windows import WindowSet

    mem, cfg, (a, b, c), n = _vadd_dispatch(32)
    prog, _ = translate_dispatch(mem, cfg)
    win = WindowSet(trace(mem, cfg), mem)
    mod = SimpleNamespace(program=prog, preloads=preload.find(prog))
    rt = Runtime(mod, cfg, win, "lane", 1000)
    rt.mirrored = []
    ((po_name, po), (pre_name, pre)), complete = rt._preloads(True)
    assert complete
    assert (po_name, pre_name) == ("WL_PO", "WL_PRE")
    assert list(po) == [0, 1, 2, 6]  # 1 + 1 + 4 + 2 words
    assert list(pre[:8]) == [
        256 | (1 << 16),
        n,
        a & 0xFFFFFFFF,
        a >> 32,
        b & 0xFFFFFFFF,
        b >> 32,
        c & 0xFFFFFFFF,
        c >> 32,
    ]
    assert len(rt.mirrored) == 4
    rt.mirrored = []
    ((_, po), (_, pre)), complete = rt._preloads(False)
    assert list(po) == [-1] * 4 and not pre.any() and rt.mirrored == [] and not complete


def test_constants_guard_preloaded_and_mirrored_bytes():
    """runtime._set_constants (no GPU needed): the bytes checked after the launch (a rerun when
    written) are both the preloads' and the mirrored windows'; every preload resolved -> the
    module itself is launched, none (the rerun) -> its checked build (Module.variant)."""
    from types import SimpleNamespace

    from wavelift.backends.cuda.codegen import generate
    from wavelift.backends.cuda.runtime import Runtime
    from wavelift.trace.tracer import trace
    from wavelift.trace.windows import WindowSet

    mem, cfg, _, n = _vadd_dispatch(32)
    prog, base = translate_dispatch(mem, cfg)
    win = WindowSet(trace(mem, cfg), mem)
    _, slots, pre = generate(prog, 32, "lane", 0, base)
    kernarg = int(cfg.user_sgprs[2]) | (int(cfg.user_sgprs[3]) << 32)
    k = next(i for i, (s0, e0) in enumerate(zip(win.starts, win.ends)) if s0 <= kernarg < e0)
    put = {}
    plain = SimpleNamespace(put_constant=lambda name, host: put.__setitem__(("plain", name), host))
    mod = SimpleNamespace(
        program=prog,
        preloads=pre,
        slots=slots,
        hints=np.full(len(slots), k, np.int64),  # uniform loads: kernarg window
        put_constant=lambda name, host: put.__setitem__(("own", name), host),
    )
    mod.variant = lambda complete, budget=None, proved=False: mod if complete else plain
    rt = Runtime(mod, cfg, win, "lane", 1000)
    P = np.zeros(64, np.uint32)
    rt._set_constants(P, 0, True)
    assert rt.k is mod and ("own", "WL_PRE") in put
    window = (int(win.offs[k]), int(win.ends[k]) - int(win.starts[k]))
    assert window in rt.mirrored  # the mirrored window
    assert sum(r != window for r in rt.mirrored) == 4  # and the 4 preloads' bytes
    rt._set_constants(P, 0, False)
    assert rt.k is plain and rt.mirrored == [] and ("plain", "WL_PO") in put


def _syncs_before_first_access(src: str, block: int) -> int:
    """Wave syncs in block ``block`` of a wave64 module before its first global access."""
    body = src.split(f"\nB{block}: {{\n", 1)[1].split("\n}\n", 1)[0]
    # (wl_gload_b / wl_gstore_b: an access in a loop from its hoisted window base, HOIST=loops)
    first = re.search(r"\bwl_g(load|store)(_b)?\(", body).start()
    return body[:first].count("bar.sync")


def test_wave_syncs_carry_across_blocks():
    """Lowering.sync_entries: a block whose every predecessor ends with no access unordered by a
    wave sync needs none before its first load; a store pending on any path (a loop's back
    edge), a phase's entry (s_barrier) or an s_setpc target keeps it."""
    from wavelift.backends.cuda.codegen import kernel_source
    from wavelift.ir.program import Block, Op, Program, Value

    ids = iter(range(1000))

    def v(t, uniform=False):
        return Value(next(ids), t, uniform)

    def access(ops, store=False):
        lo, hi, addr, m = v("u32"), v("u32"), v("u64"), v("b1")
        ops += [
            Op("vget", "u32", (), {"reg": 0}, lo, 0),
            Op("vget", "u32", (), {"reg": 1}, hi, 0),
            Op("pack64", "u64", (lo, hi), {}, addr, 0),
            Op("exec", "b1", (), {}, m, 0),
        ]
        if store:
            ops.append(Op("store", "u32", (addr, m, lo), {"space": "global", "nbytes": 4}, None, 0))
        else:
            ops.append(
                Op("load", "u32", (addr, m), {"space": "global", "nbytes": 4, "words": 1}, v("u32"), 0)
            )
        return ops

    def src(terms, stores=()):
        blocks = []
        for i, t in enumerate(terms):
            ops = access([], i in stores)
            if t[0] in ("branch", "setpc"):  # a uniform condition / target
                c = v("b1" if t[0] == "branch" else "u64", True)
                ops.append(Op("const", c.type, (), {"value": 4}, c, 0))
                t = (t[0], c) + t[2:]
            blocks.append(Block(i, 4 * i, ops=ops, term=t))
        prog = Program(blocks, [], {4 * i: i for i in range(len(terms))}, 2)
        return kernel_source(prog, 64, "lane", 0, 0)

    s = src([("jump", 1), ("end",)])  # load; load
    assert [_syncs_before_first_access(s, b) for b in (0, 1)] == [0, 0]
    s = src([("jump", 1), ("end",)], stores={0})  # store; load: ordered
    assert _syncs_before_first_access(s, 1) == 1
    # load; loop { load; store } -- the back edge brings the store to the loop's load
    s = src([("jump", 1), ("jump", 2), ("branch", None, 1, 3), ("end",)], stores={2})
    assert [_syncs_before_first_access(s, b) for b in (1, 2)] == [1, 1]
    s = src([("barrier", 1), ("end",)])  # a phase's entry
    assert [_syncs_before_first_access(s, b) for b in (0, 1)] == [1, 1]
    s = src([("setpc", None), ("end",)])  # an s_setpc target (the program's every block)
    assert [_syncs_before_first_access(s, b) for b in (0, 1)] == [1, 1]


def test_vadd_wave64_loads_after_the_ballot_need_no_sync():
    """vadd w64: the entry block leaves no access unordered (its uniform loads are preloaded or
    broadcast after a barrier, and its execz test is a bar.red.or), so the block of the vector
    loads starts with none pending (one wave sync left in it: before the store, for the other
    warp's loads)."""
    from wavelift.backends.cuda.codegen import kernel_source

    name, prog, cfg, base, _ = _named("gfx1010/basic-O2-w64-flat:vadd:small")
    src = kernel_source(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base)
    blk = next(b.index for b in prog.blocks if any(op.name == "load" and not op.out.uniform for op in b.ops))
    body = src.split(f"\nB{blk}: {{\n", 1)[1].split("\n}\n", 1)[0]
    lines = body.split("\n")
    first = next(i for i, x in enumerate(lines) if x.endswith(", lane, true);"))
    assert "bar.sync" not in lines[first - 1], name  # (was: a sync before the load)
    # the uniform loads' exchanges (when not preloaded) and the store's sync
    assert body.count("bar.sync") == body.count("if (lane == 0u) { wl_gload(") + 1, name
