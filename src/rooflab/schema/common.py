"""Records more than one section holds: NVML telemetry, CUDA-event timing, a check, a timed copy."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.typed import Record, field

POSITIVE = {"exclusive_minimum": 0}


@dataclass(kw_only=True)
class SmClock(Record):
    """The SM clock's minimum, median and maximum over the samples."""

    KEY = "sm_clock_stat"

    min: float
    median: float
    max: float


@dataclass(kw_only=True)
class MedianStat(Record):
    min: float = field()
    median: float
    max: float = field()


@dataclass(kw_only=True)
class MaxStat(Record):
    min: float = field()
    median: float = field()
    max: float


@dataclass(kw_only=True)
class Telemetry(Record):
    """NVML samples while the reps ran (cuda/telemetry.py summarize); null without NVML."""

    samples: int = field(required=True, minimum=0)
    sm_mhz: SmClock
    mem_mhz: MedianStat
    power_w: MaxStat
    temp_c: MaxStat
    reasons: list[str]
    throttled: bool = field()


@dataclass(kw_only=True)
class Timing(Record):
    """cuda/timing.py Timing.to_dict: CUDA-event times of the timed launches; null when nothing was
    timed (a failed check)."""

    times_ms: list[float] = field()
    median_ms: float = field(required=True, **POSITIVE)
    mean_ms: float = field(required=True, **POSITIVE)
    min_ms: float = field(required=True, **POSITIVE)
    max_ms: float = field(**POSITIVE)
    reps: int = field(minimum=1)
    warmup: int = field(minimum=0)
    l2_flushed: bool = field()
    telemetry: Telemetry | None = field()
    method: str = field(description="events: a pair around each launch; batched: around many; graph: around "
                                    "one replay of a CUDA graph of many launches")
    launches_per_sample: int = field(minimum=1)
    stopped_by: str = field()
    median_spread_pct: float | None = field()
    round_medians_ms: list[float] | None = field(description="each interleaved round's median (gemm --rounds); "
                                                             "times_ms holds every round's samples", min_items=2)


@dataclass(kw_only=True)
class Check(Record):
    """model/check.py Check.to_dict."""

    name: str
    shape: list[int] = field(required=True, min_items=3, max_items=3)
    inputs: str
    reference: str
    value: float | None
    tol: float
    passed: bool
    unwritten: int = field(minimum=0)


@dataclass(kw_only=True)
class CopyRun(Record):
    """measure/bandwidth.py _measure: one timed configuration; gbs only when verified."""

    RULES = {"if": {"properties": {"verified": {"const": True}}}, "then": {"required": ["gbs"]}}

    label: str = field()
    verified: bool
    timing: Timing | None = field()
    gbs: float = field(**POSITIVE)
    gbs_best: float = field(**POSITIVE)
    bytes: float = field(minimum=0)
