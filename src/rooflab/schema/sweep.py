"""The size sweep's section (measure/sweep.py run: rooflab sweep; the report at a few sizes)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import POSITIVE
from rooflab.schema.typed import Record, field

_SIZES = {"items": {"minimum": 1}}


@dataclass(kw_only=True)
class SweepConfig(Record):
    sizes: list[int] = field(required=True, **_SIZES)
    kernels: list[str]
    copy_sizes: list[int] = field(**_SIZES)


@dataclass(kw_only=True)
class SweepGemmRow(Record):
    RULES = {"if": {"properties": {"passed": {"const": False}}},
             "then": {"properties": {"tflops": {"type": "null"}, "median_ms": {"type": "null"}}}}

    kernel: str
    n: int = field(required=True, minimum=1)
    precision: str = field()
    passed: bool
    skipped: str | None = field()
    error: str | None = field()
    failed_checks: list[str] = field()
    worst_error: float | None = field()
    reps: int | None = field(minimum=1)
    median_ms: float | None = field(required=True, **POSITIVE)
    min_ms: float | None = field(**POSITIVE)
    tflops: float | None = field(required=True, **POSITIVE)


@dataclass(kw_only=True)
class SweepGemm(Record):
    sizes: list[int] = field(required=True, **_SIZES)
    kernels: list[str] = field()
    max_launch_s: float = field(**POSITIVE)
    rows: list[SweepGemmRow]


@dataclass(kw_only=True)
class SweepCopyRow(Record):
    RULES = {"if": {"properties": {"verified": {"const": False}}}, "then": {"properties": {"gbs": {"type": "null"}}}}

    bytes_per_array: int = field(required=True, minimum=1)
    verified: bool
    gbs: float | None = field(required=True, **POSITIVE)
    gbs_best: float | None = field(**POSITIVE)
    memcpy_gbs: float | None = field(**POSITIVE)
    skipped: str | None = field()


@dataclass(kw_only=True)
class SweepCopy(Record):
    l2_bytes: int | None = field(minimum=0)
    hbm_peak_bytes_per_s: float | None = field(**POSITIVE)
    rows: list[SweepCopyRow]


@dataclass(kw_only=True)
class Sweep(Record):
    """measure/sweep.py run: speed against problem size (rooflab sweep; the report at a few sizes)."""

    config: SweepConfig
    gemm: SweepGemm = field()
    copy: SweepCopy = field()
    started: str = field()
    finished: str = field()
