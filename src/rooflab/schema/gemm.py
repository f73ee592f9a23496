"""The GEMM ladder's section (measure/gemm.py run) and the tuning search's (gemm.tune_rungs)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import POSITIVE, Check, Timing
from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class TrafficModel(Record):
    KEY = "rung_model"

    ai_flop_per_byte: float = field(required=True, minimum=0)
    flop_per_load: float = field(required=True, minimum=0)
    bytes: float = field(required=True, minimum=0)
    global_loads: float = field(minimum=0)


@dataclass(kw_only=True)
class Rung(Record):
    """measure/gemm.py run_rung: one rung of the SGEMM ladder."""

    kernel: str
    title: str
    stage: str = field()
    precision: str = field()
    m: int = field(required=True, minimum=1)
    n: int = field(required=True, minimum=1)
    k: int = field(required=True, minimum=1)
    flops: float = field(required=True, **POSITIVE)
    model: TrafficModel
    launch: dict | None = field()
    checks: list[Check]
    passed: bool
    error: str | None = field()
    timing: Timing | None


@dataclass(kw_only=True)
class GemmConfig(Record):
    seed: int | None


@dataclass(kw_only=True)
class GemmMethod(Record):
    reps: int
    rounds: int = field(minimum=1)
    warmup: int
    l2_flushed: bool
    checks: str


@dataclass(kw_only=True)
class Gemm(Record):
    """measure/gemm.py run."""

    config: GemmConfig
    method: GemmMethod
    started: str = field()
    finished: str = field()
    rungs: list[Rung]


@dataclass(kw_only=True)
class TunedRung(Record):
    """measure/tune.py search: every variant's median time (null: failed its check or did not fit)."""

    rung: str
    winner: str | None
    tried: int = field(required=True, minimum=0)
    n: int = field(minimum=1)
    times_ms: dict[str, float | None]
    when: str = field()


@dataclass(kw_only=True)
class Tune(Record):
    """measure/gemm.py tune_rungs: the search over each tunable rung's variants, and the cache it wrote."""

    config: dict
    cache: str
    rungs: list[TunedRung]
