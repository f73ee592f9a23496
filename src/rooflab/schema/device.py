"""The document's head: the GPU, the host and the run's own bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass

from rooflab.schema.common import POSITIVE
from rooflab.schema.typed import Record, field

_MEASURED = ["cc", "arch", "sm_count", "fp32_cores_per_sm", "sm_clock_max_mhz", "mem_clock_max_mhz", "bus_width_bits",
             "l2_bytes", "memory_bytes", "sources", "fp32_peak_flops", "hbm_peak_bytes_per_s"]


@dataclass(kw_only=True)
class Device(Record):
    """The GPU (cuda/device.py document_entry) or, with spec_only, a spec-table entry
    (lab.spec_device_entry). null: no GPU was found (specs, ridge)."""

    RULES = {"if": {"required": ["spec_only"], "properties": {"spec_only": {"const": True}}},
             "then": {"required": ["fp32_peak_flops", "hbm_peak_bytes_per_s"]},
             "else": {"required": _MEASURED}}

    name: str
    spec_only: bool = field()
    spec_key: str | None = field()
    index: int = field()
    cc: list[int] = field(min_items=2)
    arch: str = field()
    sm_count: int = field(minimum=1)
    fp32_cores_per_sm: int | None = field(minimum=1)
    sm_clock_max_mhz: float = field(**POSITIVE)
    mem_clock_max_mhz: float = field(minimum=0)
    bus_width_bits: int = field(minimum=0)
    l2_bytes: float = field(minimum=0)
    memory_bytes: float = field(minimum=0)
    pci_bus_id: str = field()
    driver_version: str = field()
    cuda_runtime_version: int = field(minimum=0)
    cupy_version: str = field()
    sources: dict = field()
    fp32_peak_flops: float | None = field(**POSITIVE)
    hbm_peak_bytes_per_s: float | None = field(**POSITIVE)
    tensor_peaks: dict[str, float] = field(items={"exclusiveMinimum": 0})
    tensor_peaks_source: str = field()


@dataclass(kw_only=True)
class Host(Record):
    """Where it ran: Python's version and the platform (results.new_document); a fleet rank adds its host name."""

    python: str = field()
    platform: str = field()
    hostname: str = field()


@dataclass(kw_only=True)
class RunInfo(Record):
    """lab.run and lab.measure: the steps that finished, the report's settings, what was left out and why."""

    KEY = "report"

    finished_steps: list[str] = field()
    profile_skipped: str = field()
    n: int = field(minimum=1)
    quick: bool = field()
    profile: bool = field()
    spec_only: bool = field()
    no_gpu: str = field()
