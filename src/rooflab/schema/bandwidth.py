"""The copy-bandwidth section (measure/bandwidth.py run)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import POSITIVE, CopyRun, Timing
from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class BandwidthConfig(Record):
    n: int = field(required=True, minimum=1)
    bytes_per_array: float = field(required=True, minimum=0)
    bytes_moved: float = field(required=True, minimum=0)
    reps: int = field(required=True, minimum=1)
    rounds: int = field(required=True, minimum=1)


@dataclass(kw_only=True)
class BandwidthMethod(Record):
    l2_note: str


@dataclass(kw_only=True)
class CopySweepRow(Record):
    kernel: str
    description: str = field()
    block: int = field(required=True, minimum=1)
    grid: int = field(required=True, minimum=1)
    grid_label: str
    runs: list[CopyRun]


@dataclass(kw_only=True)
class Scale(Record):
    RULES = {"dependentRequired": {"gbs": ["gflops"], "gflops": ["gbs"]}}

    verified: bool = field()
    gbs: float = field(**POSITIVE)
    gflops: float = field(**POSITIVE)
    flops: float = field(minimum=0)
    timing: Timing | None = field()


@dataclass(kw_only=True)
class Directions(Record):
    read: CopyRun | None = field()
    write: CopyRun | None = field()
    read_variants: list[CopyRun] = field(
        description="measure/read_stream.py read_variants: the unrolled read-only streams, each a "
                    "checked-then-timed run with its kernel, grid and waves.")
    read_cub: CopyRun | None = field(description="CUB DeviceReduce::Sum through CuPy: the read ceiling's vendor witness.")
    write_memset: CopyRun | None = field(description="cudaMemsetAsync: the write ceiling's vendor witness.")


@dataclass(kw_only=True)
class Bandwidth(Record):
    """measure/bandwidth.py run."""

    config: BandwidthConfig
    method: BandwidthMethod
    started: str = field()
    finished: str = field()
    hbm_peak_bytes_per_s: float | None = field(**POSITIVE)
    memcpy: list[CopyRun]
    sweep: list[CopySweepRow]
    scale: Scale | None = field()
    directions: Directions | None = field()
