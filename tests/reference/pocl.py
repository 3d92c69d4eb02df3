"""Run the fixture OpenCL sources (tests/fixtures/opencl/*.cl) on PoCL: the independent oracle.

The fixture code objects are built by clang-19 for amdgcn with `-include wl_builtins.h`, which
maps get_global_id() & co. onto amdgcn intrinsics and the HSA dispatch packet. On PoCL the same
kernel bodies are compiled with POCL_SHIM (below) prepended instead: PoCL provides the OpenCL
work-item functions, barrier() and the OpenCL 1.1 atomic_*() functions natively, so the shim only

  * defines WL_POCL;
  * drops the AMDGPU-only attribute `amdgpu_num_vgpr(N)` (stack.cl);
  * turns the cross-lane builtins (__builtin_amdgcn_mov_dpp/update_dpp/permlane16/permlanex16,
    lane_ops in math.cl) into 0: a CPU OpenCL 1.2 device has no equivalent, so those outputs are
    expected from the NumPy reference only (tests/reference/cases.py says which);
  * carries `half`/`half2` as float/float2, because this PoCL has no cl_khr_fp16. The one source
    rewrite this needs is done in program_source(): half literals `1.0h` become `1.0f`. The host
    converts float16 arguments to float32 before the run and rounds them back after it, so PoCL's
    f16 results are f32 results rounded to f16 (within 1 f16 ulp of the exact f16 result; the
    exact value comes from the NumPy reference).

PoCL (this Debian build) does not support non-uniform work-groups, so a launch whose global size
is not a multiple of the work-group size runs on PoCL with a local size that divides it; the
cases only take grouping-free results from PoCL (cases.py: `pocl_local`).

Everything is built once per session (functools.lru_cache); PoCL also keeps its own on-disk
kernel cache.
"""

from __future__ import annotations

import functools
import pathlib
import re
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPENCL_DIR = ROOT / "tests" / "fixtures" / "opencl"

POCL_SHIM = r"""/* wavelift PoCL shim: replaces wl_builtins.h when the fixture sources run on PoCL. */
#define WL_POCL 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define amdgpu_num_vgpr(n)
#define __builtin_amdgcn_mov_dpp(v, ctrl, row_mask, bank_mask, bound_ctrl) (0)
#define __builtin_amdgcn_update_dpp(old, v, ctrl, row_mask, bank_mask, bound_ctrl) (0)
#define __builtin_amdgcn_permlane16(old, v, sel_lo, sel_hi, fi, bound_ctrl) (0u)
#define __builtin_amdgcn_permlanex16(old, v, sel_lo, sel_hi, fi, bound_ctrl) (0u)
#define half float
#define half2 float2
"""

_HALF_LITERAL = re.compile(r"\b(\d+\.\d*|\.\d+)h\b")


class PoclUnavailable(RuntimeError):
    """pyopencl or a PoCL device is missing (or the source does not build on it)."""


@functools.cache
def _device():
    try:
        import pyopencl as cl
    except Exception as e:  # ImportError, or a broken ICD loader
        raise PoclUnavailable(f"pyopencl is not importable: {e}") from None
    try:
        platforms = cl.get_platforms()
    except Exception as e:
        raise PoclUnavailable(f"no OpenCL platform (install pocl-opencl-icd): {e}") from None
    for p in platforms:
        if "portable computing language" in p.name.lower() or "pocl" in p.name.lower():
            devs = p.get_devices()
            if devs:
                ctx = cl.Context(devs[:1])
                queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
                return cl, ctx, queue, devs[0]
    raise PoclUnavailable(
        f"no PoCL platform among the OpenCL platforms {[p.name for p in platforms]} (install pocl-opencl-icd)"
    )


def unavailable_reason() -> str | None:
    """None when PoCL can run kernels here; otherwise why not (for pytest.skip)."""
    try:
        _device()
    except PoclUnavailable as e:
        return str(e)
    return None


def device_name() -> str:
    cl, ctx, queue, dev = _device()
    return f"{dev.platform.name} {dev.platform.version} / {dev.name}"


def program_source(cl_file: str) -> str:
    """The text PoCL compiles: POCL_SHIM + the fixture source (half literals as float)."""
    path = pathlib.Path(cl_file)
    if not path.is_absolute():
        path = OPENCL_DIR / path
    body = path.read_text()
    body = _HALF_LITERAL.sub(lambda m: m.group(1) + "f", body)
    return POCL_SHIM + f'#line 1 "{path.name}"\n' + body


@functools.cache
def program(cl_file: str, options: tuple[str, ...] = ()):
    """Build `cl_file` (a name in tests/fixtures/opencl, or a path) for PoCL once per session."""
    cl, ctx, queue, dev = _device()
    try:
        return cl.Program(ctx, program_source(cl_file)).build(options=list(options))
    except Exception as e:
        raise PoclUnavailable(f"{cl_file} does not build on PoCL: {e}") from None


@functools.cache
def _kernel(cl_file: str, kernel: str, options: tuple[str, ...]):
    cl, ctx, queue, dev = _device()
    return cl.Kernel(program(cl_file, options), kernel)


def run(
    cl_file: str,
    kernel: str,
    args,
    global_size,
    local_size=None,
    *,
    options: tuple[str, ...] = (),
    timing: dict | None = None,
) -> list:
    """Run `kernel` once. `args`: NumPy arrays (passed as read/write buffers) or NumPy scalars.
    Returns, per argument, a copy of the array after the run (None for scalars). float16 arrays
    travel as float32 (see the module docstring) and come back rounded to float16.
    With `timing` (a dict) fills in 'kernel_s' (profiled device time), 'enqueue_to_finish_s'
    (host wall time of enqueue + finish) and 'total_s' (including buffer copies)."""
    cl, ctx, queue, dev = _device()
    knl = _kernel(cl_file, kernel, tuple(options))
    t0 = time.perf_counter()
    mf = cl.mem_flags
    bufs, host = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            h = np.ascontiguousarray(a.astype(np.float32) if a.dtype == np.float16 else a)
            if h.nbytes == 0:
                h = np.zeros(1, h.dtype)
            bufs.append(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=h))
            host.append(h)
        else:
            bufs.append(a)
            host.append(None)
    gsz = tuple(int(x) for x in np.atleast_1d(global_size))
    lsz = None if local_size is None else tuple(int(x) for x in np.atleast_1d(local_size))
    t1 = time.perf_counter()
    ev = knl(queue, gsz, lsz, *bufs)
    ev.wait()
    queue.finish()
    t2 = time.perf_counter()
    out = []
    for a, b, h in zip(args, bufs, host):
        if h is None:
            out.append(None)
            continue
        res = np.empty_like(h)
        cl.enqueue_copy(queue, res, b)
        if isinstance(a, np.ndarray) and a.dtype == np.float16:
            with np.errstate(over="ignore"):
                res = res.astype(np.float16)
        out.append(res.reshape(a.shape) if res.size == a.size else res)
    queue.finish()
    t3 = time.perf_counter()
    if timing is not None:
        timing["kernel_s"] = (ev.profile.end - ev.profile.start) * 1e-9
        timing["enqueue_to_finish_s"] = t2 - t1
        timing["total_s"] = t3 - t0
    return out


def max_work_group_size() -> int:
    cl, ctx, queue, dev = _device()
    return int(dev.max_work_group_size)


__all__ = [
    "POCL_SHIM",
    "PoclUnavailable",
    "unavailable_reason",
    "device_name",
    "program_source",
    "program",
    "run",
    "max_work_group_size",
]
