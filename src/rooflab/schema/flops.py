"""The FP32 FMA section with its tensor-core roofs (measure/flops.py run, measure/tensor_peaks.py)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import POSITIVE, Timing
from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class FmaRow(Record):
    RULES = {"dependentRequired": {"tflops": ["pct_peak"], "pct_peak": ["tflops"]}}

    accumulators: int = field(required=True, minimum=1)
    blocks_per_sm: int = field(minimum=1)
    grid: int = field(required=True, minimum=1)
    block: int = field(required=True, minimum=1)
    threads: int = field(required=True, minimum=1)
    iters: int = field(required=True, minimum=1)
    fma_per_iter: int = field(minimum=1)
    flops: float = field(required=True, **POSITIVE)
    warps_per_scheduler: float = field(required=True, minimum=0)
    verified: bool
    verify_rel_err: float | None = field()
    timing: Timing | None
    tflops: float = field(**POSITIVE)
    pct_peak: float = field(**POSITIVE)


@dataclass(kw_only=True)
class TensorRoof(Record):
    KEY = "tensor_roof"

    kernel: str
    unit: str
    precision: str
    skipped: str = field()
    error: str = field()
    blocks: int = field(minimum=1)
    block: int = field(minimum=1)
    iters: int = field(minimum=1)
    flops: float = field(**POSITIVE)
    verified: bool = field()
    timing: Timing | None = field()
    tflops: float = field(**POSITIVE)
    sm_mhz: float | None = field()
    flop_per_sm_cycle: float | None = field()


@dataclass(kw_only=True)
class Flops(Record):
    """measure/flops.py run."""

    config: dict = field()
    method: dict = field()
    started: str = field()
    finished: str = field()
    fp32_peak_flops: float | None = field(**POSITIVE)
    rows: list[FmaRow]
    tensor: list[TensorRoof] = field(
        description="measure/tensor_peaks.py: the tensor-core roofs as measured by MMA chains.")
