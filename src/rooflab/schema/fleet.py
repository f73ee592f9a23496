"""The fleet section (fleet/merge.py merge): every GPU's document and summary, the medians and
outliers, and each host's links and all-reduce sections (measure/links.py, measure/collectives.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rooflab.schema.typed import Record, field


@dataclass(kw_only=True)
class FleetGpu(Record):
    """One GPU: who it is, its summary figures (model/fleet/summary.py) and its whole results document."""

    uuid: str
    host: str
    index: int | None
    name: str | None = field()
    pci_bus_id: str | None = field()
    serial: str | None = field()
    file: str | None = field()
    summary: dict[str, Any]
    inventory: dict | None = field()
    document: dict = field(schema={"$ref": "#/$defs/document"})


@dataclass(kw_only=True)
class Outlier(Record):
    """model/fleet/outliers.py find: a GPU whose figure is below the reference by more than the threshold."""

    uuid: str
    host: str = field()
    index: int | None = field()
    figure: str
    title: str = field()
    unit: str = field()
    value: float | None
    reference: float | None
    against: str
    pct_of_reference: float | None = field()
    below_pct: float | None = field()
    threshold_pct: float | None = field()
    explanations: list[str] = field()


@dataclass(kw_only=True)
class PeerRate(Record):
    """A timed transfer between two GPUs (src/dst one way, a/b both ways) or a host link; gbs only when verified."""

    src: int = field()
    dst: int = field()
    a: int = field()
    b: int = field()
    verified: bool = field()
    gbs: float | None = field(minimum=0)
    error: str = field()


@dataclass(kw_only=True)
class PeerPair(Record):
    src: int
    dst: int
    link: dict


@dataclass(kw_only=True)
class HostLink(Record):
    device: int
    h2d: PeerRate | None = field()
    d2h: PeerRate | None = field()
    link: dict | None = field()


@dataclass(kw_only=True)
class Links(Record):
    """measure/links.py: every GPU pair's copy rates (copy engine and SM, one and both ways) and each GPU's host link."""

    config: dict = field()
    devices: list[dict] = field()
    pairs: list[PeerPair] = field()
    ce_uni: list[PeerRate] = field()
    ce_bidir: list[PeerRate] = field()
    sm_uni: list[PeerRate] = field()
    sm_bidir: list[PeerRate] = field()
    host: list[HostLink] = field()
    error: str = field()


@dataclass(kw_only=True)
class AllreduceRow(Record):
    bytes: int = field(required=True, minimum=0)
    verified: bool = field()
    verified_after: bool = field()
    time_us: float | None = field(minimum=0)
    algbw_gbs: float | None = field(minimum=0)
    busbw_gbs: float | None = field(minimum=0)


@dataclass(kw_only=True)
class Allreduce(Record):
    """measure/collectives.py: NCCL all-reduce across the host's GPUs, bus bandwidth by message size."""

    available: bool = field()
    backend: str | None = field()
    nccl_version: int | None = field()
    ranks: int = field(minimum=0)
    env: dict[str, str] = field()
    rows: list[AllreduceRow] = field()
    error: str = field()


@dataclass(kw_only=True)
class FleetNode(Record):
    gpus: list = field()
    steps: list = field()
    errors: list[str] = field()
    inventory: list = field()


@dataclass(kw_only=True)
class Fleet(Record):
    """fleet/merge.py merge: many GPUs' documents, compared."""

    config: dict = field()
    gpus: dict[str, FleetGpu]
    medians: dict[str, float | None] = field()
    outliers: list[Outlier] = field()
    links: dict[str, Links] = field()
    allreduce: dict[str, Allreduce] = field()
    torch_peer: dict[str, dict] = field()
    nodes: dict[str, FleetNode] = field()
    launch: dict = field()
    errors: list[str] = field()
    figures: list[list[str]] = field(items={"minItems": 3, "maxItems": 3})
    references: dict[str, dict] = field()


@dataclass(kw_only=True)
class FleetGpuTag(Record):
    """A fleet rank's own GPU (fleet/worker.py): how merge tells the documents apart."""

    KEY = "fleet_rank_gpu"

    uuid: str | None = field()
    host: str = field()
    index: int | None = field()
    name: str | None = field()
    pci_bus_id: str | None = field()
    serial: str | None = field()
    inventory_before: dict | None = field()
    inventory_after: dict | None = field()
    cuda_visible_devices: str | None = field()
    nvml: str = field()
    config: dict = field()
    report_files: list[str] = field()
    render_error: str = field()
