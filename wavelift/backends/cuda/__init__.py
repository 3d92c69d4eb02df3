"""The CUDA backend: the same IR lowered to CUDA C++ (one thread per lane), NVRTC, CuPy.

    available() -> True | str         True, or why this machine cannot run CUDA modules
    build_module(key, program, config, mode, arch=None) -> Module   (NVRTC only: no GPU needed)
    Runtime(module, config, windows, mode, budget).run()             (needs a GPU)

See docs/decisions/0009-cuda.md.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

from ...ir.program import Program
from ..base import run_backend
from .codegen import (
    COUNT_SLOTS,
    PROVED_DEFINE,
    CudaUnsupported,
    baked_params,
    count_slots,
    generate,
    groups_per_block,
    lowered,
    map_bits,
    map_fill_store,
    mark_form,
    proved_lean,
    source_count_slots,
    source_groups,
    source_map_bits,
    source_straight,
    stats_setting,
)
from .compile import DEFAULT_ARCH, background_compile, nvrtc_problem, tiered_compile

# the checked build's define (Module.variant: a preload the host did not resolve)
_PLAIN = "#define WL_PRELOADED 0\n"


def _gpu_problem() -> str | None:
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means: not here
        return (
            f"CuPy is not installed or does not load ({type(e).__name__}: {e}); pip install 'wavelift[cuda]'"
        )
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return f"the CUDA driver reports no usable device ({type(e).__name__}: {e})"
    if n <= 0:
        return "the CUDA driver reports 0 devices"
    return None


@functools.lru_cache(maxsize=1)
def _problem() -> str | None:
    return _gpu_problem() or nvrtc_problem()


def available():
    """True when a CUDA device, CuPy and NVRTC are all here; else a sentence saying what is
    missing (wavelift.commands.common.cuda_problem and execute_dispatch print it)."""
    p = _problem()
    return True if p is None else p


def device_arch() -> str:
    """'sm_XY' of the current device, or DEFAULT_ARCH without one."""
    try:
        import cupy

        cc = cupy.cuda.Device().compute_capability
        return f"sm_{cc}"
    except Exception:  # noqa: BLE001
        return DEFAULT_ARCH


@dataclass
class Module:
    key: tuple
    program: Program
    source: str
    arch: str
    cubin: bytes
    compile_s: float
    compiled_by: str  # "nvrtc" | "disk" | "nvrtc-fast" (the first tier: compile.tiered_compile)
    slots: tuple = ()  # per global access slot: (size, uniform load) (codegen.guesses)
    hints: object = None  # WL_HINT read back after the last dispatch (None: none yet)
    preloads: tuple = ((), ())  # preload.find(program): (loads, plan) (runtime._preloads)
    # the program its kernel lowers (codegen.lowered: generate's), kept for globalrange's proof
    # (runtime._proof_input); None for a module read from the disk until the proof lowers it once
    lowered: Program | None = field(default=None, repr=False)
    # runtime._proof_input's (lowered program, its preload.find, its slots are the module's)
    proof_input: Any = field(default=None, repr=False)
    use_disk: bool = True
    _plain: Module | None = field(default=None, repr=False)
    _fn: Any = field(default=None, repr=False)  # a cupy Function, a cupy Module (CuPy has no types)
    _mod: Any = field(default=None, repr=False)
    _shared: int = 48 * 1024
    # name -> (the array, its bytes) put_constant last copied there (the same again: no copy,
    # and the same array object -- kept unchanged by the runtime's memos -- not even compared;
    # 0026, 0029)
    _consts: dict = field(default_factory=dict, repr=False)
    # a new number whenever put_constant records an array or the module loads again: unchanged,
    # its constant memory holds what it held (runtime.Again's check)
    _puts: int = field(default=0, repr=False)
    # the optimising build running in the background while this module is the fast first tier
    # (compile.Upgrade; None: this is the build kept)
    upgrade: Any = field(default=None, repr=False)
    _groups: int = field(default=0, repr=False)
    _map_bits: bool | None = field(default=None, repr=False)
    _count_slots: int = field(default=0, repr=False)  # (0: not read yet; count_slots)
    # (0: not read yet; straight)
    _straight: int | None = field(default=0, repr=False)
    # the builds with WL_BUDGET_CHECKS 1 (variant), by the defines in front of the source
    _siblings: dict = field(default_factory=dict, repr=False)
    # the lean builds started in the background (lean_ready), by their defines, until taken
    # into _siblings: compile.Upgrade, running or failed (then kept: its .error says why)
    _leans: dict = field(default_factory=dict, repr=False)
    # a new object each time a lean build finishes in the background (set by its thread): a kept
    # plan armed before stops holding (runtime._Kept._holds), so the full path asks lean_ready
    # again and launches it (decision 0049's amendment h163)
    lean_news: Any = field(default=None, repr=False)

    @property
    def groups(self) -> int:
        """Workgroups per CUDA block this module's kernel runs (its source's WL_GPB: decision
        0046; the runtime launches what the source says, never the setting)."""
        if not self._groups:
            self._groups = source_groups(self.source)
        return self._groups

    def take_upgrade(self) -> bool:
        """Put the optimising build in place of the fast one when it is ready (called between
        launches: Module.variant, at the start of each Runtime): the CUDA module is loaded again
        on its next use and its constants copied again (its own constant memory, a fresh WL_HINT:
        hints are never trusted, 0009).  True when it did."""
        up = self.upgrade
        if up is None:
            return False
        cubin = up.result()
        if cubin is None:
            if up.done.is_set():  # failed: the fast build stays, for good
                self.upgrade = None
            return False
        self.cubin, self.compiled_by, self.upgrade = cubin, "nvrtc", None
        self.compile_s += up.seconds
        self._fn = self._mod = None
        self._consts = {}
        self._puts += 1
        self._shared = 48 * 1024
        return True

    @property
    def map_bits(self) -> bool:
        """Whether this module's kernel marks its written map as bits (its source's WL_MAP_BITS:
        decision 0049's amendment h111; the runtime follows the source, never the setting)."""
        if self._map_bits is None:
            self._map_bits = source_map_bits(self.source)
        return self._map_bits

    @property
    def count_slots(self) -> int:
        """The slots this module's kernel adds its counts to (its source's WL_WIDE_SLOTS, else
        the report's 256: decision 0009's amendment h152; the runtime follows the source)."""
        if not self._count_slots:
            self._count_slots = source_count_slots(self.source)
        return self._count_slots

    @property
    def straight(self) -> int | None:
        """A straight kernel's longest path (codegen.source_straight: WAVELIFT_CUDA_BUDGET=straight),
        None for a kernel whose every build checks the budget."""
        if self._straight == 0:
            self._straight = source_straight(self.source)
        return self._straight

    def _defines(self, preloaded: bool, budget: int | None, proved: bool) -> str:
        """The defines in front of the source of the build ``variant`` launches ("": this one)."""
        checks = budget is not None and self.straight is not None and budget < self.straight
        plain = not preloaded and bool(self.preloads[0])
        return (
            (_PLAIN if plain else "")
            + ("#define WL_BUDGET_CHECKS 1\n" if checks else "")
            + (PROVED_DEFINE if proved else "")
        )

    def variant(self, preloaded: bool, budget: int | None = None, proved: bool = False) -> Module:
        """The module to launch: this one, whose preloads are constants (the host resolved every
        one), or its sibling built with WL_PRELOADED 0 on first use (each preload checked,
        the kernel's own load where it is unresolved; codegen.Lowering.load); and, for a
        straight kernel and a wave ``budget`` below its longest path, the sibling built with
        WL_BUDGET_CHECKS 1 (each block's budget check); ``proved``: the lean build (PROVED_DEFINE,
        for a dispatch in place on a proof: Runtime._prove), which the runtime asks for only once
        ``lean_ready`` said it is there (a tool asking first waits for its build here).  Each has
        its own constant memory: the runtime fills the one it launches."""
        self.take_upgrade()
        defs = self._defines(preloaded, budget, proved)
        if not defs:
            return self
        if defs == _PLAIN:
            if self._plain is None:
                self._plain = self._sibling(defs)
            sib = self._plain
        else:
            if defs not in self._siblings:
                self._siblings[defs] = self._sibling(defs)
            sib = self._siblings[defs]
        sib.take_upgrade()
        return sib

    def lean_ready(self, preloaded: bool, budget: int | None = None) -> bool:
        """Whether the lean build ``variant(preloaded, budget, proved=True)`` launches is there,
        never waiting for it (decision 0049's amendment h163): one on the disk is read at once;
        else its build starts in the background at the first ask (compile.background_compile)
        and it is there once that finished -- one that failed never is (the module's own build
        stays, for good).  A build finishing makes ``lean_news`` a new object."""
        defs = self._defines(preloaded, budget, True)
        if defs in self._siblings:
            return True
        up = self._leans.get(defs)
        if up is None:
            got = _lean_compile(self.key, defs + self.source, self.arch, self.use_disk, self._lean_done)
            if isinstance(got, tuple):  # (on the disk)
                cubin, secs, how = got
                self._siblings[defs] = self._built(defs, cubin, secs, how, None)
                return True
            up = self._leans[defs] = got
        cubin = up.result()
        if cubin is None:  # (building, or failed)
            return False
        self._siblings[defs] = self._built(defs, cubin, up.seconds, "nvrtc", None)
        del self._leans[defs]
        return True

    def _lean_done(self) -> None:
        """A lean build's thread, once its cubin is there (compile.Upgrade's ``then``): one store."""
        self.lean_news = object()

    def _sibling(self, defs: str) -> Module:
        """This module's source built with ``defs`` in front (variant)."""
        return self._built(defs, *_compile(self.key, defs + self.source, self.arch, self.use_disk))

    def _built(self, defs: str, cubin: bytes, secs: float, how: str, up) -> Module:
        """The sibling of this module whose source has ``defs`` in front, with its build."""
        src = defs + self.source
        return Module(
            self.key,
            self.program,
            src,
            self.arch,
            cubin,
            secs,
            how,
            self.slots,
            preloads=self.preloads,
            use_disk=self.use_disk,
            upgrade=up,
            lowered=self.lowered,
        )

    def function(self):
        if self._fn is None:
            import cupy

            self._mod = cupy.cuda.function.Module()
            self._mod.load(self.cubin)
            self._fn = self._mod.get_function("wl_main")
        return self._fn

    def _global(self, name: str) -> tuple[int, int]:
        """(device address, size) of the module's global or constant variable ``name``."""
        self.function()
        try:
            mp = self._mod.get_global_var(name)
            return int(mp.ptr), int(mp.mem.size)
        except AttributeError:  # older CuPy: the driver API
            from cuda.bindings import driver as drv

            err, ptr, size = drv.cuModuleGetGlobal(drv.CUmodule(self._mod.ptr), name.encode())
            if int(err) != 0:
                raise RuntimeError(f"cuModuleGetGlobal({name}): {err}") from None
            return int(ptr), int(size)

    def put_constant(self, name: str, host) -> None:
        """Copy a host array into the module's __constant__ variable ``name`` -- unless the
        same bytes are there from the last copy (constant memory changes only here: a
        dispatch like the last one copies only what differs)."""
        import cupy

        last = self._consts.get(name)
        if last is not None and last[0] is host:  # (an array kept unchanged: memo.py, runtime)
            return
        b = host.tobytes()
        self._puts += 1
        if last is not None and last[1] == b:
            self._consts[name] = (host, b)
            return
        ptr, size = self._global(name)
        if host.nbytes > size:
            raise ValueError(f"{name}: {host.nbytes} bytes for a {size}-byte constant")
        cupy.cuda.runtime.memcpy(ptr, host.ctypes.data, host.nbytes, cupy.cuda.runtime.memcpyHostToDevice)
        self._consts[name] = (host, b)

    def global_address(self, name: str) -> tuple[int, int]:
        """(device address, size) of the module's variable ``name`` (the runtime copies WL_HINT
        into the dispatch's report from there: 0029)."""
        return self._global(name)

    def get_global(self, name: str, host) -> None:
        """Copy the module's variable ``name`` into the host array ``host`` (its first bytes)."""
        import cupy

        ptr, size = self._global(name)
        cupy.cuda.runtime.memcpy(
            host.ctypes.data, ptr, min(host.nbytes, size), cupy.cuda.runtime.memcpyDeviceToHost
        )

    def set_shared(self, fn, nbytes: int) -> None:
        if nbytes <= self._shared:
            return
        try:
            from cuda.bindings import driver as drv

            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            drv.cuFuncSetAttribute(fn.ptr, attr, nbytes)
        except Exception:  # noqa: BLE001 - older stacks: go through CuPy's runtime
            import cupy

            cupy.cuda.runtime.funcSetAttribute(
                fn.ptr, 8, nbytes
            )  # cudaFuncAttributeMaxDynamicSharedMemorySize
        self._shared = nbytes


def build_module(
    key,
    program: Program,
    config,
    mode: str,
    arch: str | None = None,
    use_disk: bool = True,
    base_address: int | None = None,
) -> Module:
    """Generate and compile the module (raises Refused for what this backend cannot lower)."""
    from ... import settings
    from ...errors import Refused

    if mode not in ("wave", "lane"):
        raise Refused("backend.unavailable", f"mode {mode!r} is not 'wave' or 'lane'")
    arch = arch or device_arch()
    base = config.program_address if base_address is None else base_address
    hit = _stored_build(key, program, arch, base) if use_disk else None
    if hit is not None:
        return hit
    from .compile import warm_split_pool

    warm_split_pool(sum(len(b.ops) for b in program.blocks))
    try:
        src, slots, preloads, low = module_source(program, config, mode, base)
    except CudaUnsupported as e:
        raise Refused(
            "backend.unavailable", f"the CUDA backend does not lower this program ({e}); use backend='numpy'"
        ) from None
    cubin, secs, how, up = _compile(key, src, arch, use_disk)
    if use_disk:
        from . import stored
        from .compile import cache_dir

        stored.write(cache_dir(), key, arch, base, src, slots, preloads)
    return Module(
        key,
        program,
        src,
        arch,
        cubin,
        secs,
        how,
        slots,
        preloads=preloads,
        use_disk=use_disk,
        upgrade=up,
        # (kept where the first dispatch's proof will read it: a second IR beside the program)
        lowered=low if settings.get("WAVELIFT_CUDA_PROVE") == "on" else None,
    )


def _stored_build(key, program: Program, arch: str, base: int) -> Module | None:
    """The module from the disk alone: its generation (stored.py, found by the key) and the
    cubin that generation's source names, both checked (0016); None: generate."""
    import time

    from .. import disk_cache
    from . import stored
    from .compile import cache_dir, disk_name

    t0 = time.perf_counter()
    d = cache_dir()
    got = stored.read(d, key, arch, base)
    if got is None or d is None:
        return None
    src, digest, slots, preloads = got
    cubin = disk_cache.read(d, disk_name(key, arch, src, digest), ".cubin")
    if not cubin:
        return None
    return Module(key, program, src, arch, cubin, time.perf_counter() - t0, "disk", slots, preloads=preloads)


def _compile(key, src: str, arch: str, use_disk: bool):
    from ...errors import Refused
    from .compile import CompileError

    try:
        return tiered_compile(key, src, arch, use_disk)
    except CompileError as e:
        raise Refused("backend.unavailable", f"NVRTC could not compile the module: {str(e)[:2000]}") from None


# the lean builds started in the background and not yet waited for (wait_lean)
_LEAN_BUILDS: list = []


def _lean_compile(key, src: str, arch: str, use_disk: bool, then):
    """A lean build without waiting (Module.lean_ready): compile.background_compile's."""
    got = background_compile(key, src, arch, use_disk, then)
    if not isinstance(got, tuple):
        _LEAN_BUILDS[:] = [u for u in _LEAN_BUILDS if not u.done.is_set()] + [got]
    return got


def wait_lean(timeout: float | None = None) -> bool:
    """Wait for every lean build started in the background so far (benchmarks timing the steady
    state, GPU tests: a dispatch never waits for one) -> whether all finished (built or failed)."""
    t_end = None if timeout is None else time.monotonic() + timeout
    for up in list(_LEAN_BUILDS):
        up.done.wait(None if t_end is None else max(0.0, t_end - time.monotonic()))
    _LEAN_BUILDS[:] = [u for u in _LEAN_BUILDS if not u.done.is_set()]
    return not _LEAN_BUILDS


# ---- the backend's declaration (backends/base.py) ---------------------------------------------

# ops this backend declares it does not lower, with why (none today: tests/ir/test_ops.py checks
# that each one listed here is refused by name, and that every other op lowers)
UNSUPPORTED: dict[str, str] = {}


def _lower(program: Program) -> None:
    """CUDA C++ of every block of ``program`` (the dispatch of codegen.Lowering.block_source: an
    op it does not lower raises CudaUnsupported naming it)."""
    from .codegen import Lowering

    low = Lowering(program, 32, "lane", 0, 0)
    for blk in program.blocks:
        low.block_source(blk)


@functools.cache
def _lowers() -> frozenset:
    from ..base import probe

    return probe(_lower, CudaUnsupported)


class CudaBackend:
    """NVRTC-compiled modules run on an NVIDIA GPU through CuPy (docs/decisions/0009-cuda.md)."""

    name = "cuda"
    missing = "no CUDA device"
    tiers = ()
    refused = CudaUnsupported

    def lower(self, program: Program) -> None:
        _lower(program)

    def available(self):
        return available()

    def lowers(self) -> frozenset:
        return _lowers()

    def unsupported(self) -> dict[str, str]:
        return UNSUPPORTED

    def key_extra(self, config) -> tuple:
        # the dispatch shape its modules fold in (0009), the workgroups per block (0046) and the
        # written map's form (0049's amendment h111: bits or bytes)
        # (and, with bits, how a unit-stride store marks it: 0049's amendment h139); the
        # occupancy settings pick the build's register bound, not the source: a module cached in
        # memory under one is not another's build (0047's amendment h143)
        # (and, where a proved in-place dispatch never launches the lean build -- 0049's
        # amendments h148, h163 --, "proved=own": the default, lean, adds nothing, so its keys and
        # stored entries are those made before it was the default)
        # (and the count slots other than the report's: 0009's amendment h152 -- the runtime
        # follows a module's source, so this only makes a changed setting take effect; and the
        # counts' form other than auto, 0009's session-53 amendment, likewise)
        from .compile import occupancy_settings

        slots, stats = count_slots(), stats_setting()
        return (
            (
                _baked(config),
                _groups(config),
                occupancy_settings(),
                (
                    "bits"
                    + ("" if mark_form() == "group" else f"+{mark_form()}")
                    + ("" if map_fill_store() else "+atomic")
                    if map_bits()
                    else "bytes"
                ),
            )
            + (() if proved_lean() else ("proved=own",))
            + ((f"slots={slots}",) if slots != COUNT_SLOTS else ())
            + ((f"stats={stats}",) if stats != "auto" else ())
        )

    def build_module(self, key, program, config, mode, base_address):
        return build_module(key, program, config, mode, base_address=base_address)

    def window_plan(self, module) -> dict:
        # (the windows' bytes come from the device copies and the arena lives on the device:
        # the host makes the layout only -- 0026, 0029)
        return {"host_arena": False}

    def run(self, module, config, windows, mode, budget, deadline=None, counts=None):
        return run_backend(__package__, module, config, windows, mode, budget, deadline, counts)


def module_source(program, config, mode: str = "lane", base_address: int | None = None) -> tuple:
    """codegen.generate of ``program`` for ``config`` as build_module makes a module's, with the
    settings as they are now (the baked words, the workgroups per block) -> (source, slots,
    preloads, the lowered program it was made from); ``base_address``: where the code was read
    from (default the config's program address).  The tools and tests that inspect a module's
    source take it from here."""
    baked = _baked(config)
    low = lowered(program, config.wave_size, baked)
    base = config.program_address if base_address is None else base_address
    src, slots, preloads = generate(
        program, config.wave_size, mode, config.scratch_wave_bytes, base, baked, _groups(config), low
    )
    return src, slots, preloads, low


def _baked(config) -> tuple:
    """codegen.baked_params for the settings as they are now (kept per config and setting)."""
    from ... import settings
    from .memo import by_config

    return by_config("baked", config, baked_params, str(settings.get("WAVELIFT_CUDA_GRIDDIM")))


def _groups(config) -> int:
    """codegen.groups_per_block for the setting as it is now (kept per config and setting)."""
    from ... import settings
    from .memo import by_config

    want = str(settings.get("WAVELIFT_CUDA_GROUPS_PER_BLOCK"))
    return by_config("groups", config, groups_per_block, want)


BACKEND = CudaBackend()


def __getattr__(name):
    if name == "Runtime":
        from .runtime import Runtime

        return Runtime
    raise AttributeError(name)
