"""A traced program's section (measure/trace.py, model/trace.py trace_section)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.typed import Record, field

_DIM3 = {"min_items": 3, "max_items": 3, "items": {"minimum": 1}}


@dataclass(kw_only=True)
class TraceLevel(Record):
    key: str
    bandwidth: float | None


@dataclass(kw_only=True)
class TraceRoof(Record):
    precision: str
    flops: float


@dataclass(kw_only=True)
class KernelGroup(Record):
    name: str
    grid: list[int] = field(required=True, **_DIM3)
    block: list[int] = field(required=True, **_DIM3)
    launches: int = field(required=True, minimum=1)
    total_s: float = field(required=True, minimum=0)


@dataclass(kw_only=True)
class PlacedGroup(Record):
    group: KernelGroup
    profiled: bool
    flops: float = field(minimum=0)
    headroom_s: float | None
    pct_of_attainable: float | None = field()
    binding: str


@dataclass(kw_only=True)
class TraceLimits(Record):
    unprofiled_groups: int = field(required=True, minimum=0)
    unprofiled_share: float = field(required=True, minimum=0, maximum=1)
    tracing_overhead: float | None = field()


@dataclass(kw_only=True)
class Trace(Record):
    """A whole program's kernels: every group (kernel name, grid, block) with its traced time, the
    profiled ones placed on the hierarchical roofline and ranked by headroom, and the limits of what
    was measured."""

    command: list[str] | None = field()
    collector: str
    gpu_time_s: float = field(required=True, minimum=0)
    launches: int = field(required=True, minimum=0)
    kernels: int = field(required=True, minimum=0)
    ceilings_source: str
    levels: list[TraceLevel]
    roofs: list[TraceRoof]
    groups: list[PlacedGroup]
    limits: TraceLimits
