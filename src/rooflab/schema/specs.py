"""`rooflab specs` and `rooflab ridge`: the spec table's entries and the ridge tables (no GPU needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class GpuSpecEntry(Record):
    """model/specs.py GpuSpec.to_dict: one GPU of the spec table."""

    KEY = "gpu_spec"

    key: str
    name: str = field()
    arch: str = field()
    cc: list[int] = field(min_items=2)
    sms: int = field(minimum=1)
    fp32_cores_per_sm: int | None = field()
    boost_clock_mhz: float = field(exclusive_minimum=0)
    mem_bandwidth_gbs: float = field(exclusive_minimum=0)
    memory_gb: float = field(minimum=0)
    fp32_peak_tflops: float = field(exclusive_minimum=0)
    tensor_tflops: dict[str, float] = field()
    source: str = field()
    aliases: list[str] = field()
    memory_type: str | None = field()


@dataclass(kw_only=True)
class TableData(Record):
    """report/table.py Table.to_dict: a table as data (numbers as numbers, each column's unit)."""

    KEY = "table"

    title: str
    columns: list[str]
    units: list[str] = field()
    rows: list[list[Any]]
    notes: list[str] = field()
