"""`rooflab bench` and rooflab.bench(): a user's kernel timed beside others on one op (measure/bench.py run)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import Check, Timing
from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class BenchRow(Record):
    """measure/bench.py run_one: one kernel's checks and, when they passed, its timing."""

    kernel: str
    title: str
    op: str = field()
    n: list[int] = field(required=True, items={"minimum": 1})
    precision: str = field()
    flops: float | None = field(minimum=0)
    bytes: float | None = field(minimum=0)
    checks: list[Check]
    passed: bool
    error: str | None = field()
    timing: Timing | None = field()
    launch: dict | None = field()
    warnings: list[str] = field()
    gbs: float | None = field(minimum=0)
    gflops: float | None = field(minimum=0)


@dataclass(kw_only=True)
class BenchMethod(Record):
    checks: str
    reps: int = field(minimum=1)
    timing: str = field()


@dataclass(kw_only=True)
class Bench(Record):
    """measure/bench.py run: the op, its sizes and one row per kernel."""

    op: str
    describe: str | None = field()
    n: list[int] = field(items={"minimum": 1})
    seed: int | None = field()
    started: str = field()
    finished: str = field()
    hbm_peak_bytes_per_s: float | None = field(exclusive_minimum=0)
    method: BenchMethod
    rows: list[BenchRow]
