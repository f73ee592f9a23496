"""The Nsight Compute section (measure/profiling.py run)."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class KernelProfile(Record):
    """model/ncu.py KernelProfile.to_dict: one label's metrics."""

    label: str
    kernels: list[str] = field()
    metrics: dict[str, float] = field()
    dram_pct: float | None = field()
    sm_pct: float | None = field()
    dram_bytes: float | None = field(minimum=0)
    fp32_flops: float | None = field(minimum=0)
    ai: float | None = field(minimum=0)
    verdict: str = field()


@dataclass(kw_only=True)
class Profile(Record):
    """measure/profiling.py run: Nsight Compute's metrics per label (model/ncu.py KernelProfile)."""

    command: str
    ncu_version: str
    metrics: list[str] = field()
    config: dict = field()
    created: str = field()
    kernels: list[KernelProfile]
    skipped: list[str] = field()
