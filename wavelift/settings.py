"""Every environment variable wavelift reads, in one table; no other module reads the environment.

Each setting has one name (prefix WAVELIFT_), a default, a type and a one-line doc; docs/settings.md
is generated from SETTINGS (`python3 -m wavelift.settings --markdown > docs/settings.md`). A module
reads a setting where it always did (at import, or each time it is used) with `get(name)`, so that
a test or tool that sets the environment or patches a module attribute sees the same effect.

Names of the old WL_ prefix are still read, with a DeprecationWarning naming the new one, so that
a script that sets them does not silently change behaviour; the new name wins when both are set.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass

PREFIX = "WAVELIFT_"


@dataclass(frozen=True)
class Setting:
    name: str
    type: type  # int, float or str: what get() returns when the variable is set
    default: int | float | str | None  # what get() returns when it is unset or empty
    doc: str
    group: str = "wavelift"  # "wavelift", "tests" (the test suite's knobs) or "external"
    alias: str | None = None  # the deprecated old name


_ALL = [
    # execution
    Setting(
        "WAVELIFT_TIME_LIMIT",
        float,
        None,
        "wall-clock seconds per dispatch, past which it is refused `dispatch.time_exceeded` "
        "(unset, empty or 0: no limit)",
    ),
    Setting(
        "WAVELIFT_BATCH_WAVES",
        int,
        1024,
        "waves per NumPy batch (0: only the 256 MiB register-state bound)",
        alias="WL_BATCH_WAVES",
    ),
    # the native tier (docs/decisions/0012-native-tier.md, 0013-native-driver.md)
    Setting(
        "WAVELIFT_NATIVE",
        str,
        "auto",
        "native tier: `auto` (dispatches of at least WAVELIFT_NATIVE_MIN_WAVES waves, once "
        "compiled in the background), `on` (every dispatch, compiled first) or `off`",
        alias="WL_NATIVE",
    ),
    Setting(
        "WAVELIFT_NATIVE_MIN_WAVES",
        int,
        512,
        "under `auto`, the smallest dispatch (in waves) the native tier runs",
        alias="WL_NATIVE_MIN_WAVES",
    ),
    Setting(
        "WAVELIFT_NATIVE_AFTER_MS",
        int,
        20,
        "under `auto`, a smaller dispatch runs native when its library is ready without making "
        "its source (loaded, or named by the native index), and asks for it (compiled in the "
        "background) once its module's NumPy runs have taken this many ms of CPU, or at its second "
        "NumPy run when its source is expected to cost less than that (0: never)",
    ),
    Setting(
        "WAVELIFT_NATIVE_DRIVER",
        str,
        "on",
        "`off` keeps native blocks under the Python scheduler instead of the native driver",
        alias="WL_NATIVE_DRIVER",
    ),
    Setting(
        "WAVELIFT_THREADS",
        int,
        0,
        "the native driver's threads (0: the cores this process may use)",
        alias="WL_THREADS",
    ),
    Setting(
        "WAVELIFT_NATIVE_OPT",
        str,
        "-O3",
        "optimisation flags for the native tier's C++ compile (space-separated)",
        alias="WL_NATIVE_OPT",
    ),
    Setting(
        "WAVELIFT_NATIVE_BLENDS",
        str,
        None,
        "`eager`: the native tier blends VGPR writes with EXEC at every write (A/B runs)",
        alias="WL_NATIVE_BLENDS",
    ),
    Setting(
        "WAVELIFT_CXX",
        str,
        None,
        "the host C++ compiler (default: clang++-19, clang++, g++ or c++, the first found)",
        alias="WL_CXX",
    ),
    Setting(
        "WAVELIFT_NATIVE_CACHE",
        str,
        None,
        "directory of compiled native libraries (default: $XDG_CACHE_HOME or ~/.cache, then "
        "wavelift/native; must be private to you, docs/decisions/0016-trusted-caches.md)",
    ),
    # the CUDA backend (docs/decisions/0009-cuda.md)
    Setting(
        "WAVELIFT_CUDA_CACHE",
        str,
        None,
        "directory of compiled CUDA modules (default: $XDG_CACHE_HOME or ~/.cache, then "
        "wavelift/cuda; must be private to you)",
    ),
    Setting(
        "WAVELIFT_PIECE_CACHE",
        str,
        None,
        "directory of the NumPy backend's compiled pieces of one-wave blocks (the tinygrad hook; "
        "default: $XDG_CACHE_HOME or ~/.cache, then wavelift/pieces; `off`: none; must be private to you)",
    ),
    Setting(
        "WAVELIFT_CUDA_BLENDS",
        str,
        "atomics",
        "`atomics` (the default since session 47's H100 gpu_check): a block's VGPR blends with EXEC "
        "are deferred to its end, also across an atomic under their mask (decision 0047's amendment "
        "h115); `blocks`: deferred except across atomics (the form before); `eager`: blended at "
        "every write (A/B runs)",
        alias="WL_CUDA_BLENDS",
    ),
    Setting(
        "WAVELIFT_CUDA_BARRIERS",
        str,
        None,
        "`phase`: CUDA kernels run s_barrier as phases (each wave parks, one block-wide barrier, "
        "re-entry through a switch) instead of a barrier at the s_barrier itself (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_AGAIN",
        str,
        None,
        "`on` (the default): a repeated CUDA dispatch runs from the plan its last landing kept "
        "(runtime.Again: only the GPU operations and the report read-back) and a written map that "
        "landed is not cleared again (its landing, wl_land, clears it; decision 0029's 2026-12-06 amendment); "
        "`off`: every dispatch takes the full path and every map is cleared before its kernel (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_GRAPH",
        str,
        None,
        "`on` (the default; with the kept plans, WAVELIFT_CUDA_AGAIN): a kept CUDA dispatch plan "
        "captures its GPU operations (memset, kernel, wl_runs, hints and report copies) once as a "
        "CUDA graph and replays it, one launch and one wait; its device_time_s is then the graph's "
        "(decision 0029's helper-90 amendment); `off`: the operations one by one (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_DEFER",
        str,
        None,
        "`on` (the default since it ran on an H100, session 43): a kept CUDA dispatch plan's "
        "repeated launch does not wait for the GPU: its written "
        "runs land in the device copies gated on the device by its own report (resident.wl_gate; "
        "an escape, a flag, a run outside the windows it wrote last or any earlier failure in the "
        "queue: nothing lands), and the report is read when the host needs memory, a result or "
        "the queue is full (Resident.flush; decision 0029's helper-96 amendment); `off`: each "
        "launch waits for its report (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_LDS",
        str,
        "lanes",
        "`lanes` (the default since session 43's H100 run): CUDA kernels access LDS in the direct "
        "forms with addresses also proved from the values in the lanes EXEC leaves active (0047's "
        'amendment "values in the active lanes"); `direct`: the direct forms decision 0047\'s '
        "amendment proves from whole-wave values (no bounds test where the address is proved inside "
        "the LDS, whole aligned words); `checked`: every access tested and read in the shifted "
        "two-word form (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_BUDGET",
        str,
        "straight",
        "`straight` (the default since session 43's H100 run): a CUDA kernel of a program without "
        "loops (no back edge, no s_setpc, no s_barrier) also holds its blocks without the per-block "
        "budget checks, entered when the wave's budget covers the program's longest path (decision "
        "0009's amendment on budget checks); `checked`: a check after every block (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_RETEST",
        str,
        None,
        "`off`: a CUDA global load or store whose direct access fails goes to the window hint and "
        "search without testing its window guess again (decision 0009's amendment h97); unset or "
        "`on`: as before, the default until run on a GPU",
    ),
    Setting(
        "WAVELIFT_CUDA_WAVESYNC",
        str,
        None,
        "`spaces`: a CUDA kernel's wave sync between a wave's memory accesses is placed only "
        "between accesses of the same memory (the LDS, or global and scratch), none between an LDS "
        "access and a global one, and none from an s_barrier's bar.red where the wave stands "
        "(decision 0047's amendment h101); `commute`: that, and none between two atomic adds or "
        "subs whose values nobody reads (they commute; a racing wave may see a sum no in-order run "
        "gives); unset: every access waits for every pending one, the default until run on a GPU",
    ),
    Setting(
        "WAVELIFT_CUDA_EXEC",
        str,
        "known",
        "`known` (the default since session 46's H100 gpu_check): where the LDS analysis "
        "(WAVELIFT_CUDA_LDS=lanes) proves EXEC holds every lane of the wave, a CUDA kernel's EXEC "
        "bit is the constant 1 and its lane count 32 a warp, not tested and counted from EXEC "
        "(decision 0047's amendment h106); `every`: every EXEC bit tested and lane count counted "
        "(A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_NAN",
        str,
        "chain",
        "`chain` (the default since session 46's H100 gpu_check; or `chainN`): a CUDA kernel's f32 "
        "fmas whose result only feeds another fma of the block (matmul16's multiply-adds through "
        "the accumulator) are bare __fmaf_rn, in chains of at most 4 (N) fmas whose last one is "
        "tested for NaN, the chain done again with each fma's NaN choice where it is NaN (decision "
        "0047's amendment h106); `every`: every fma tested (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_HOIST",
        str,
        "induction",
        "`induction` (the default since session 52's H100 run): `loops`, and a global load of a "
        "one-block wave32 loop at base + stride * r (r a register the loop's exit bounds) tested "
        "once where the loop is entered for every address it can reach, the loop's copy reading it "
        "directly when that holds, else tested each iteration as before (0047's amendment h127); "
        "`loops`: a CUDA kernel makes the window bases of the global loads and stores in loops (at "
        "most 8) once in its prologue, not at every access (decision 0047's amendment h115); "
        "`access`: at the access (the form before)",
    ),
    Setting(
        "WAVELIFT_CUDA_LDSBASE",
        str,
        None,
        "`kept`: a CUDA kernel makes the LDS window's shared address once in its prologue and "
        "reaches each direct LDS access from it (decision 0047's amendment h118); unset: from "
        "wl_smem at the access (NVVM may make the address again inside a predicated access in a "
        "loop), the default until run on a GPU",
    ),
    Setting(
        "WAVELIFT_CUDA_PROVE",
        str,
        None,
        "`on`: a CUDA module's first dispatch (no window hints learned yet) takes the window "
        "guesses of the global accesses globalrange proves inside one window on this dispatch's "
        "values (decision 0049's amendment h110; guesses are checked in the kernel); unset or "
        "`off`: no guesses on a first dispatch, the default until measured on a GPU",
    ),
    Setting(
        "WAVELIFT_CUDA_MAP",
        str,
        "bits",
        "`bits` (the default since session 49: the CUDA tests and a partial gpu_check equal on an "
        "H100): a CUDA kernel marks one written-map bit per arena byte it stores (warp-aggregated "
        "atomicOr on 32-bit words), wl_runs scans words and wl_land lands 32-byte pieces (decision "
        "0049's amendment h111; part of the module key); `bytes`: one map byte per stored byte",
    ),
    Setting(
        "WAVELIFT_CUDA_MAPFILL",
        str,
        "store",
        "`store` (the default since session 52): with WAVELIFT_CUDA_MAP=bits, a written-map word "
        "whose 32 bits one warp store sets all is set by a plain store of all ones, not an "
        "atomicOr (decision 0049's session-52 amendment: exact, and no DRAM read of the map's "
        "line where the data's stream evicted it from L2); `atomic`: every word by atomicOr (the "
        "kernels before, A/B runs); part of the module key",
    ),
    Setting(
        "WAVELIFT_CUDA_MAPMARK",
        str,
        "group",
        "How a CUDA kernel's store marks the bit map (WAVELIFT_CUDA_MAP=bits; part of the module "
        "key). `group` (the default since h160: exact by construction, host-tested): a store of "
        "nb = 1, 2, 4, 8 or 16 bytes a lane whose aligned group of 32 / nb lanes stores one "
        "32-byte-aligned piece in lane order sets that map word by its first lane, without "
        "__match_any_sync (decision 0049's amendment h160: shade's rows of 8 lanes, vadd's warp); "
        "`span`: a store whose 32 lanes write consecutive places (lane l at ix0 + l nb, nb <= 16) "
        "marks the one range they cover, a word per lane (amendment h139); `general`: the "
        "warp-aggregated form alone (__match_any_sync, __reduce_or_sync), which takes every other "
        "store under the first two",
    ),
    Setting(
        "WAVELIFT_CUDA_F2I",
        str,
        "cvt",
        "`cvt` (the default since session 51: on an H100 the every-f32 check passed and "
        "test_cuda_backend's GPU comparisons with NumPy hold with it): a CUDA kernel's f32 -> "
        "u32 / i32 conversion (truncating, NaN 0, saturating) is one cvt.rzi (__float2uint_rz / "
        "__float2int_rz: PTX clamps float-to-integer results to the destination range and makes "
        "NaN 0), not wl_f2i's compares and selects (decision 0009's amendments h146, session 51; "
        "part of the module key); `wl`: wl_f2i (the form before session 51)",
    ),
    Setting(
        "WAVELIFT_CUDA_STATS",
        str,
        "auto",
        "how a CUDA kernel adds its waves' exact instruction and lane counts to the report: `auto` "
        "(the default since session 53's H100 run): `block` for a wave32 kernel without s_barrier "
        "or LDS, else `pair`; `block`: once per CUDA block (the warps' counts summed through "
        "shared memory after one __syncthreads; a kernel with s_barrier or LDS: `pair`); `pair`: "
        "per wave as one atomic instruction of two lanes; `wave`: per wave, two 64-bit atomics "
        "(the form before session 53; decision 0009's amendments h146, h162; part of the module "
        "key)",
    ),
    Setting(
        "WAVELIFT_CUDA_COUNT_SLOTS",
        int,
        256,
        "the slots a CUDA kernel's waves add their instruction and lane counts to, wave (or, "
        "where WAVELIFT_CUDA_STATS adds them once a CUDA block, the block) mod N: a power of two from 256 to 65536; "
        "more than 256 lie in a device buffer of their own that a small kernel after each "
        "launch (resident.py's wl_fold) sums into the report's 256 and zeroes, so fewer waves add "
        "to one address and the host reads the same report (decision 0009's amendment h152; "
        "part of the module key); 256 (the default until timed on a GPU): the report's own",
    ),
    Setting(
        "WAVELIFT_CUDA_HEAP",
        str,
        "one",
        "`one` (the default since session 50: gpu_check with it and in place on an H100 -- 670 of "
        "710 fixture dispatches and all 253 scratch-test dispatches equal, none different): a "
        "Resident's device copies are ranges of one growing device buffer (each placed "
        "≡ its guest address mod 256 -- resident.HEAP_ALIGN, amendment h159 --, so mod 8 as WindowSet places "
        "windows, 8 spare bytes after it; "
        "decision 0049's step 2, amendment h119), gathered from and landed into there -- the kernel "
        "runs on the arena, unless WAVELIFT_CUDA_INPLACE=proved runs it on the heap; `off`: a device "
        "array per allocation (the default before session 50)",
    ),
    Setting(
        "WAVELIFT_CUDA_INPLACE",
        str,
        "proved",
        "`proved` (the default since session 50, with WAVELIFT_CUDA_HEAP's): with WAVELIFT_CUDA_HEAP=one, a CUDA dispatch that globalrange.unrefusable proves "
        "cannot be refused runs on the device heap itself -- no gather, no landing copy; its "
        "written runs in the heap's map are its write spans (decision 0049's step 4, amendment "
        "h125), its repeated launches deferred without a gate (amendments h134, h137); a flag, an "
        "escape, a store into a preloaded word or outside its windows in such a dispatch is "
        "refused `backend.proof` and its device copies are unusable after; `off`: every dispatch "
        "runs on the arena (the default before session 50)",
    ),
    Setting(
        "WAVELIFT_CUDA_PROVED",
        str,
        "lean",
        "`lean` (the default since decision 0049's amendment h163): a CUDA dispatch run in place on "
        "a proof (WAVELIFT_CUDA_INPLACE=proved), every global access's slot with a proved window, "
        "launches its module's lean build (WL_PROVED: each access's guess its proved window; one "
        "outside it only sets the proof flag -- the run is refused `backend.proof` -- with no "
        "search, hint or escape record; amendment h148) once that is built: it is built in the "
        "background from the module's first such dispatch (read at once from the disk cache), and "
        "until then -- or for good, where its build fails -- the module's own build runs; `own`: "
        "the module's own build always (part of the module key)",
    ),
    Setting(
        "WAVELIFT_CUDA_GRIDDIM",
        str,
        "baked",
        "`baked` (the default since session 43's H100 run): a CUDA module holds the number of grid "
        "dimensions its dispatch uses (1, 2, 3) as a number, so a 1-D grid's group ids need no "
        "division and a 2-D grid's one (decision 0009's amendment h97; part of the module key), "
        "and whether every group index its launches take fits 32 bits: then the kernel makes it "
        "in 32 (0009's amendment h149); `off`: the dimensions read from the parameters (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_SPANS",
        str,
        None,
        "`block` (the default): CUDA kernels test a block's global loads and stores at known offsets "
        "from one base once, against one guessed window (decision 0047's amendment on global accesses "
        "at known offsets); `access`: a test per access (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_PASSES",
        str,
        None,
        "`off`: CUDA kernels lower the IR as the frontends built it, without the IR's passes (A/B runs)",
    ),
    Setting(
        "WAVELIFT_CUDA_TIER",
        str,
        None,
        "CUDA builds: `auto` (default: a big module is first built fast, -Ofast-compile, and "
        "replaced by its optimising build from a background thread), `off` (the optimising build "
        "only), `fast` (the fast build only: A/B runs and GPU checks)",
    ),
    Setting(
        "WAVELIFT_CUDA_SPLIT",
        str,
        None,
        "the fast CUDA build of a big module: `auto` (default: split into parts compiled in "
        "parallel and linked, on a machine with at least 8 cores), `off` (one unit), `on` (every "
        "fast build split, into parts of a few blocks, wherever a linker is there: tests and GPU "
        "checks)",
    ),
    Setting(
        "WAVELIFT_CUDA_OCCUPANCY",
        int,
        None,
        "threads per SM that CUDA kernels' registers are bounded for (default: the "
        "backend's OCCUPANCY_THREADS)",
    ),
    Setting(
        "WAVELIFT_CUDA_OCCUPANCY_FULL",
        str,
        "on",
        "`on` (the default since session 52's H100 run): a CUDA kernel is first built for a full SM (the arch's most resident threads, 2048 "
        "on sm_90), kept when it spills at most as much as the occupancy bound's build may; else "
        "the usual rule (decision 0047's amendment h136: lds.cl's histogram, 1024 blocks of 256, "
        "resident at once at 8 blocks an SM, in two rounds at 6); `auto`: the same try, kept only "
        "when ptxas reports no spill at all (amendment h143: a spill's place is not in ptxas's "
        "report, and stencil5's lands in its loop); `off`: no such try",
    ),
    Setting(
        "WAVELIFT_CUDA_OCCUPANCY_STEP",
        int,
        None,
        "bytes of spill a CUDA kernel may have when, its build for the occupancy bound spilling, it "
        "is built again for one block fewer per SM (unset: no second try; the build is unbounded)",
    ),
    Setting(
        "WAVELIFT_CUDA_GROUPS_PER_BLOCK",
        str,
        "auto",
        "guest workgroups per CUDA block for modules without LDS or s_barrier: `auto` (default: "
        "about 256 threads a block), `1` (one workgroup a block: the kernels before decision "
        "0046, A/B runs) or a number (at most 1024 threads and, wave64, 15 waves a block)",
    ),
    Setting(
        "WAVELIFT_CUDA_TIMING_REPEAT",
        int,
        0,
        "time this many back-to-back launches of each CUDA kernel on copies of its state "
        "before the launch that gives the results (benchmarks)",
    ),
    # the test suite and its tools
    Setting(
        "WAVELIFT_ALU_EXAMPLES",
        int,
        100,
        "Hypothesis examples per opcode of the slow ALU test (tests/execute/test_alu_ops.py)",
        group="tests",
    ),
    Setting(
        "WAVELIFT_ASM_CACHE",
        str,
        None,
        "JSON file of assembled test snippets: recorded where llvm-mc-19 exists, read where "
        "it does not (tests/execute/asm.py)",
        group="tests",
        alias="WL_ASM_CACHE",
    ),
    Setting(
        "WAVELIFT_FUZZ_CUDA",
        str,
        None,
        "`1`: the programs fuzz target also replays each case on the CUDA backend",
        group="tests",
        alias="WL_FUZZ_CUDA",
    ),
    # not wavelift's, read where a default depends on them
    Setting(
        "XDG_CACHE_HOME",
        str,
        None,
        "the base of the default cache directories (else ~/.cache)",
        group="external",
    ),
]

SETTINGS: dict[str, Setting] = {s.name: s for s in _ALL}
_warned: set[str] = set()


# An unset name, read without the two KeyErrors that os.environ.get raises and catches for it
# (~0.7 us at no load, ~2.3 at load 5; a repeated launch reads two), and a set one's last answer
# kept (_kept): both read os.environ's own dict (``_data``) where it is known to be all that
# os.environ reads (_direct: found so at import, on a private instance of its class, never
# assumed), and only while os.environ and that dict are the ones found then.  Elsewhere -- another
# Python, another mapping put in os.environ's place -- every read takes os.environ.get.
def _direct(env) -> dict | None:
    """``env``'s dict of encoded names to encoded values where reading ``env`` is reading that
    dict as it is now and nothing else, else None.  Found on a private instance of ``env``'s
    class over a dict of its own (nothing written to the environment): a name put in that dict,
    replaced or taken out is seen by the instance's ``get``, ``[]`` and ``in`` at once; ``env``
    is exactly os._Environ (no subclass) whose ``get`` is its class's (none put on the instance;
    looked at without ``vars``, which would make CPython keep the instance's attributes in a
    dict of their own: each ``_data`` read ~27 -> ~45 ns); its values are immutable (bytes or
    str: a value the same object as or equal to a kept one is that value)."""
    try:
        if (
            type(env) is not os._Environ
            or getattr(env.get, "__func__", None) is not os._Environ.get
            or type(env._data) is not dict  # type: ignore[attr-defined]
        ):
            return None
        mine: dict = {}
        probe = os._Environ(mine, env.encodekey, env.decodekey, env.encodevalue, env.decodevalue)
        name = "WAVELIFT_SETTINGS_PROBE"
        key = env.encodekey(name)
        if probe.get(name) is not None or name in probe:
            return None
        for text in ("1", "2", ""):
            value = env.encodevalue(text)
            if type(value) not in (bytes, str):
                return None
            mine[key] = value
            if probe.get(name) != text or probe[name] != text or name not in probe:
                return None
        del mine[key]
        if probe.get(name) is not None or name in probe:
            return None
    except Exception:  # noqa: BLE001 - (internals other than these: read through os.environ)
        return None
    return env._data  # type: ignore[attr-defined]


_ENV = os.environ
_DATA = _direct(_ENV)
_KEYS: dict[str, tuple] = (
    {}
    if _DATA is None
    else {s.name: tuple(_ENV.encodekey(n) for n in (s.name, s.alias) if n is not None) for s in _ALL}  # type: ignore[attr-defined]
)


def _unset(name: str) -> bool:
    """True: neither ``name`` nor its old name is in the environment now (see _direct); False:
    set, or not known this way."""
    data = _DATA
    if data is None or os.environ is not _ENV or _ENV._data is not data:  # type: ignore[attr-defined]
        return False
    for key in _KEYS[name]:
        if key in data:
            return False
    return True


def raw(name: str) -> str | None:
    """The variable's text as the environment has it (None: unset), read now; through its old
    WL_ name, with a DeprecationWarning, when only that is set.  (Kept as get's answers are:
    ``_kept``.)"""
    return _kept(_RAW, name, _raw)


def _raw(name: str) -> str | None:
    s = SETTINGS[name]
    if _unset(name):
        return None
    value = os.environ.get(name)
    if value is None and s.alias is not None:
        value = os.environ.get(s.alias)
        if value is not None and s.alias not in _warned:
            _warned.add(s.alias)
            warnings.warn(
                f"{s.alias} is deprecated: set {name} instead (same values)", DeprecationWarning, stacklevel=5
            )
    return value


# get()'s (and raw()'s) last answer per name, with os.environ's dict and the values it held under
# the name and its old name then (None: absent): while that dict holds the same values (the same
# objects, or equal ones: an answer is a function of those two values alone), so is the answer
# (~0.3 us in place of ~1.8 for a set name: in place's check of every launch; raw: execute_dispatch's
# WAVELIFT_TIME_LIMIT, every dispatch).  Only where _direct found that dict to be what os.environ
# reads, and while os.environ and its dict are the ones found; a value read through the old name
# (its DeprecationWarning) or a bad one (its ValueError) is never kept.
_GOT: dict[str, tuple] = {}
_RAW: dict[str, tuple] = {}


def _kept(table: dict, name: str, read):
    """``table``'s answer for ``name`` while os.environ's dict holds the values it was read from,
    else ``read(name)`` kept anew (``_keep``)."""
    got = table.get(name)
    if got is not None:
        data, k, v, old, w, value = got
        # (each value the same object: no write since; else an equal one: the same text written again)
        if (
            os.environ is _ENV
            and _ENV._data is data  # type: ignore[attr-defined]
            and (data.get(k) is v or data.get(k) == v)
            and (old is None or data.get(old) is w or data.get(old) == w)
        ):
            return value
    return _keep(table, name, read)


def _keep(table: dict, name: str, read):
    """``read(name)``, kept in ``table`` as (os.environ's dict, the name's key there, the value
    under it, the old name's key or None, the value under that, the answer) where that can be
    known (see _direct) and it was not read through the old name.  The answer stands while
    that dict holds those values (``_kept``)."""
    data = _DATA
    if data is None or os.environ is not _ENV or _ENV._data is not data:  # type: ignore[attr-defined]
        return read(name)
    keys = _KEYS[name]
    # (the values first: a write while the answer is read leaves them older than it, not newer)
    k, old = keys[0], keys[1] if len(keys) > 1 else None
    v, w = data.get(k), None if old is None else data.get(old)
    value = read(name)
    if v is not None or w is None:  # (not read through the old name)
        table[name] = (data, k, v, old, w, value)
    return value


def get(name: str):
    """The setting's value, read now: its type when set, its default when unset or empty."""
    return _kept(_GOT, name, _get)


def _get(name: str):
    s = SETTINGS[name]
    if _unset(name):
        return s.default
    value = _raw(name)
    if value is None or not value.strip():
        return s.default
    if s.type is str:
        return value
    try:
        return s.type(value.strip())
    except ValueError:
        raise ValueError(f"{name}={value!r} is not {'an integer' if s.type is int else 'a number'}") from None


def environment() -> dict[str, str]:
    """A copy of this process's environment, for a child process of wavelift's own."""
    return dict(os.environ)


_GROUPS = {
    "wavelift": "Knobs",
    "tests": "The test suite and its tools",
    "external": "Read, not owned, by wavelift",
}


def disable_cuda_compute_cache() -> None:
    """For a process about to load NVRTC (backends/cuda/compile.py's report process): CUDA 13's
    NVRTC keeps ptxas results in the CUDA compute cache (~/.nv/ComputeCache) and a build served
    from it has no ptxas -v report.  Not a wavelift setting: the variable is CUDA's own, read
    once when NVRTC loads, and written (never read) here, the one module that touches the
    environment."""
    os.environ["CUDA_CACHE_DISABLE"] = "1"


def markdown() -> str:
    """docs/settings.md."""
    out = [
        "# Settings (environment variables)",
        "",
        "Generated from `wavelift/settings.py` (`python3 -m wavelift.settings --markdown`); "
        "an old `WL_` name still works, with a DeprecationWarning.",
        "",
    ]
    for group, title in _GROUPS.items():
        out += [
            f"## {title}",
            "",
            "| variable | type | default | meaning | formerly |",
            "|---|---|---|---|---|",
        ]
        for s in _ALL:
            if s.group == group:
                default = "" if s.default is None else f"`{s.default}`"
                alias = f"`{s.alias}`" if s.alias else ""
                out.append(f"| `{s.name}` | {s.type.__name__} | {default} | {s.doc} | {alias} |")
        out.append("")
    return "\n".join(out)


def _main(argv: list[str]) -> int:
    if argv != ["--markdown"]:
        print("usage: python3 -m wavelift.settings --markdown", file=sys.stderr)
        return 2
    print(markdown(), end="")
    return 0


if __name__ == "__main__":
    from wavelift.terminal import quiet_broken_pipe  # `| head`: no BrokenPipeError traceback

    sys.exit(quiet_broken_pipe(lambda: _main(sys.argv[1:])))
