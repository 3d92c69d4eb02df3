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

    def __getattr__(self, name: str):
        # (a field not in the record's dict: a record made from a kept launch's -- driver/
        # device.py `_launch_fast` -- has its mutable fields copied from it at their first read,
        # ``_kept``: (the kept fields, the stream's dwords); never shared, made only if read)
        d = self.__dict__
        kept = d.get("_kept")
        if kept is None or name not in _MUTABLE:
            raise AttributeError(name)
        fields, dwords = kept
        made = record_fields(fields)
        for k in _MUTABLE[:-1]:
            d.setdefault(k, made[k])
        d.setdefault("pm4", list(dwords))
        del d["_kept"]
        return d[name]


# a launch record's fields that are mutable objects (record_fields copies them; pm4 last)
_MUTABLE = ("registers", "user_sgprs", "extra", "pm4")


def record_fields(d: dict) -> dict:
    """A launch record's fields ``d`` (its ``__dict__``) as a new dict, its mutable ones
    (registers, user SGPRs, extra) copied: a kept launch's record (`Device._keep_fast`) and
    each record made from it (`_launch_fast`) share none of them."""
    t = dict(d)
    t["registers"], t["user_sgprs"] = dict(d["registers"]), list(d["user_sgprs"])
    x = d["extra"]
    t["extra"] = {"kernarg_fill": list(x["kernarg_fill"]), "dynamic_lds": x["dynamic_lds"]}
    return t
