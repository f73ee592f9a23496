"""One GPU's measurement inside a fleet run: the lab report (lab.run) on the one GPU
this process sees (the caller sets CUDA_VISIBLE_DEVICES to it), plus who the GPU is
(UUID, serial, PCI bus id from NVML) and where it sits (host, nvidia-smi index)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass

from rooflab import results
from rooflab.fleet import inventory


@dataclass
class WorkerConfig:
    out_json: str
    report_dir: str
    host: str
    index: int | None = None
    uuid: str | None = None
    quick: bool = False
    n: int = 4096
    profile: bool = False
    render: bool = True


def measure_one(cfg: WorkerConfig, progress: Callable[[str], None] | None = None) -> dict:
    """Run the lab on this process's GPU 0, write cfg.out_json, then (best effort) the
    GPU's own report in cfg.report_dir. Returns the document."""
    from rooflab import lab

    say = progress or (lambda _m: None)
    before = inventory.read_one(uuid=cfg.uuid) if cfg.uuid else None
    rcfg = lab.ReportConfig(out_dir=cfg.report_dir, n=cfg.n, quick=cfg.quick, profile=cfg.profile)
    doc = lab.run(rcfg, on_step=lambda s: say(f"step {s}"), progress=say)
    dev = doc.get("device") or {}
    after = inventory.read_one(uuid=cfg.uuid, pci_bus_id=dev.get("pci_bus_id"))
    inv = after or before or {}
    doc["fleet_gpu"] = {
        "uuid": cfg.uuid or inv.get("uuid"),
        "host": cfg.host,
        "index": cfg.index if cfg.index is not None else inv.get("index"),
        "serial": inv.get("serial"),
        "pci_bus_id": inv.get("pci_bus_id") or inventory.normalize_bus_id(dev.get("pci_bus_id")),
        "name": inv.get("name") or dev.get("name"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "nvml": inventory.nvml_status() or "ok",
        "inventory_before": before,
        "inventory_after": after,
        "config": asdict(cfg),
    }
    results.write_atomic(cfg.out_json, results.dumps(doc))
    if cfg.render:
        try:
            doc["fleet_gpu"]["report_files"] = lab.write_outputs(doc, cfg.report_dir)
        except Exception as exc:  # noqa: BLE001 (the report is a convenience; the document is the result)
            doc["fleet_gpu"]["render_error"] = f"{exc.__class__.__name__}: {exc}"
        results.write_atomic(cfg.out_json, results.dumps(doc))
    return doc
