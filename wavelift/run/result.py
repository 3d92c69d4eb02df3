"""DispatchResult: what happened to one dispatch — landed, or refused with a named reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..dispatch.config import DispatchConfig
from ..errors import Refusal


@dataclass(frozen=True)
class Window:
    """A guest range placed where the module can reach it, and why the tracer placed it."""

    address: int
    size: int
    name: str
    reason: str


@dataclass(frozen=True)
class Escape:
    """One access outside every window (or outside the wave's scratch)."""

    pc: int  # byte offset of the instruction from the program address (negative for
    # a callee placed below the entry, 0010)
    instruction: str  # its LLVM text
    wave: int  # global wave index within the dispatch
    lane: int
    address: int  # guest address (or scratch byte address for scratch escapes)
    kind: str  # "load" | "store" | "atomic" | "scratch"


@dataclass
class DispatchResult:
    index: int  # dispatch number within the replay
    config: DispatchConfig | None
    refusal: Refusal | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    write_spans: list[tuple[int, int]] = field(default_factory=list)  # (address, size) landed
    escapes: list[Escape] = field(default_factory=list)  # the first few

    @property
    def landed(self) -> bool:
        return self.refusal is None
