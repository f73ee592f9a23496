"""The memory levels' section (measure/memory.py run): the L2 sweep and copy, shared memory, the
FP64 and FP16 peaks. A part that could not run is an error row (label, verified false, error)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import Telemetry
from rooflab.schema.typed import Record, field

_RATE = {"minimum": 0}


@dataclass(kw_only=True)
class LevelRound(Record):
    """One interleaved round of a configuration: its launches' times and the rate they give."""

    median_ms: float = field(exclusive_minimum=0)
    min_ms: float = field(exclusive_minimum=0)
    max_ms: float = field(exclusive_minimum=0)
    reps: int = field(minimum=1)
    rate: float = field(**_RATE)
    sm_mhz: float | None = field()
    throttled: bool = field()
    telemetry: Telemetry | None = field()


@dataclass(kw_only=True)
class LevelRun(Record):
    """One measured configuration of a level (rate: bytes/s or FLOP/s, the median over the rounds),
    or, with error, one that could not run."""

    label: str = field()
    verified: bool
    error: str = field()
    kernel: str = field()
    variant: str = field()
    precision: str = field()
    how: str = field()
    grid: int = field(minimum=1)
    block: int = field(minimum=1)
    footprint_bytes: int = field(minimum=0)
    n4: int = field(minimum=0)
    step: int = field(minimum=0)
    iters: int = field(minimum=0)
    accumulators: int = field(minimum=1)
    lane_stride_bytes: int = field(minimum=0)
    wavefronts_per_lds128: int = field(minimum=0)
    bytes: float = field(minimum=0)
    bytes_basis: str = field()
    flops: float = field(minimum=0)
    flops_basis: str = field()
    check: dict = field()
    rounds: list[LevelRound]
    rate: float = field(**_RATE)
    rate_min: float = field(**_RATE)
    rate_max: float = field(**_RATE)
    spread_pct: float | None = field()


@dataclass(kw_only=True)
class L2Sweep(Record):
    """The L2 read rate against the footprint (or, with error, why it could not run)."""

    kernel: str = field()
    grid: int = field(minimum=1)
    block: int = field(minimum=1)
    bytes: str = field()
    rows: list[LevelRun] = field()
    label: str = field()
    verified: bool = field()
    error: str = field()


@dataclass(kw_only=True)
class SharedSweep(Record):
    """Shared-memory reads, conflict-free and with bank conflicts (or, with error, why not)."""

    rows: list[LevelRun] = field()
    bytes: str = field()
    buffer_bytes: int = field(minimum=0)
    label: str = field()
    verified: bool = field()
    error: str = field()


@dataclass(kw_only=True)
class MemoryDevice(Record):
    name: str = field()
    cc: list[int] = field(min_items=2)
    sm_count: int = field(minimum=1)
    sm_clock_max_mhz: float | None = field()
    l2_bytes: int | None = field(minimum=0)


@dataclass(kw_only=True)
class Memory(Record):
    """measure/memory.py run: every memory level below HBM, and the FP64 and FP16 peaks."""

    config: dict = field()
    method: dict = field()
    device: MemoryDevice = field()
    theoretical: dict[str, float | str | None] = field()
    l2_sweep: L2Sweep = field()
    l2_copy: LevelRun = field()
    shared: SharedSweep = field()
    fp64: LevelRun = field()
    fp16: LevelRun = field()
    started: str = field()
    finished: str = field()
    elapsed_s: float = field(minimum=0)
    summary: dict[str, float | None] = field(description="model/hierarchy.py memory_summary: the headline figures")
