"""The records every launch path shares (HSA kernels in device.py, ACO shaders in aco.py): the
guest memory ranges launches take (Buffer) and what one launch wrote (LaunchRecord)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .hsa import Grid


@dataclass(frozen=True)
class Buffer:
    """A range of guest memory: what Device.upload/alloc return and launches take."""

    address: int
    nbytes: int
    dtype: Any = None
    shape: tuple = ()
    name: str = ""

    def __int__(self) -> int:
        return self.address


@dataclass
class LaunchRecord:
    """Everything one launch put in guest memory and the stream (for reports and tests)."""

    index: int
    kernel: str
    kind: str  # "hsa" | "aco"
    grid: Grid
    registers: dict[str, int]  # SH registers written, by name
    initiator: int
    dims: tuple[int, int, int]  # DISPATCH_DIRECT x, y, z (workgroups)
    user_sgprs: list[int]
    pm4: list[int]
    program_address: int
    kernarg_address: int = 0
    kernargs: bytes = b""
    packet_address: int = 0
    packet: bytes = b""
    queue_address: int = 0
    scratch_address: int = 0
    scratch: Any = None
    lds_bytes: int = 0
    extra: dict = field(default_factory=dict)
    result: Any = None
