"""The C-family prelude: header files shipped as package data, and the one generated part.

A module starts with its target's definitions (WL_DEVICE, WL_NOINLINE, WL_TABLE and, off CUDA,
CUDA's intrinsics: ``host.h``), then ``types.h`` and ``prelude.h``; ``trig_preop_source`` is
added only to modules that use V_TRIG_PREOP_F64.  Fixed text only (no guest bytes).
"""

from __future__ import annotations

import functools
from importlib import resources

from ...ir.numerics import two_over_pi_bits


@functools.cache
def header(name: str, package: str = __package__) -> str:
    """The text of header file ``name`` of ``package`` (package data: pyproject.toml)."""
    return resources.files(package).joinpath(name).read_text()


def types() -> str:
    """The IR's type names as C types (u32, f16, ...) and the status flags."""
    return header("types.h")


def semantics() -> str:
    """The value ops' semantics (every function WL_DEVICE)."""
    return header("prelude.h")


def host() -> str:
    """The host's definitions: WL_DEVICE and friends, CUDA's intrinsics as host C++."""
    return header("host.h")


@functools.cache
def trig_preop_source() -> str:
    """V_TRIG_PREOP_F64 (ir/numerics.py trig_preop), added to a module only when it uses the op: the
    first 1201 fraction bits of 2/pi as a table (numbers only), the 53-bit window at
    ``53*seg[4:0] + max(exponent(x) - 1077, 0)`` and its scaling by 2^(-53-shift) (+128 when
    exponent(x) >= 1968), rounded once as np.ldexp rounds (to nearest even; subnormals exact)."""
    t = two_over_pi_bits()
    nw = (1201 + 31) // 32
    words = ", ".join(f"{(t >> (32 * k)) & 0xFFFFFFFF:#x}u" for k in range(nw))
    return f"WL_TABLE const u32 WL_2OPI[{nw}] = {{{words}}};\n" + header("trig_preop.h")
