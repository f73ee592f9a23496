"""Shared pieces of the fleet tests: the recorded H200 document, scaled copies of it, fake
sections, and a fake Popen that stands in for the measuring processes."""

from __future__ import annotations

import copy
import json
import subprocess
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from rooflab import results
from rooflab.fleet import layout, merge, orchestrate, spawn
from rooflab.model.fleet import nccl_math

DATA = Path(__file__).parent / "data"
SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"


@pytest.fixture(scope="module")
def h200() -> dict:
    return json.loads((DATA / "h200_results.json").read_text())


def scaled(doc: dict, factor: float, *, uuid: str, host: str = "node-a", index: int = 0, **fleet_gpu) -> dict:
    """A copy of a results document whose copy, FMA and cuBLAS figures are `factor` times the original."""
    d = copy.deepcopy(doc)
    bw = d["bandwidth"]
    for run in bw["memcpy"] + [r for row in bw["sweep"] for r in row["runs"]]:
        if run.get("gbs"):
            run["gbs"] *= factor
    for row in d["flops"]["rows"]:
        if row.get("tflops"):
            row["tflops"] *= factor
    for rung in d["gemm"]["rungs"]:
        if rung.get("timing"):
            rung["timing"]["median_ms"] /= factor
    d["fleet_gpu"] = {"uuid": uuid, "host": host, "index": index, "serial": f"S{index}",
                      "pci_bus_id": f"0000:{index + 1:02x}:00.0", **fleet_gpu}
    return d


def gpus_of(docs: list[dict]) -> list[dict]:
    return [merge.gpu_entry(d) for d in docs]


@pytest.fixture(scope="module")
def four(h200):
    return [scaled(h200, 1.00, uuid="GPU-0", index=0), scaled(h200, 1.00, uuid="GPU-1", index=1),
            scaled(h200, 0.90, uuid="GPU-2", index=2), scaled(h200, 0.98, uuid="GPU-3", index=3)]


def links_section(n=2, gbs=393.0, bidir=764.0, failed=()):
    devices = [{"ordinal": d, "index": d, "uuid": f"GPU-{d}", "pci_bus_id": f"0000:{d + 7:02x}:00.0"} for d in range(n)]
    link = {"type": "NVLink (NVSwitch)", "label": "NV18", "links": 18, "gen": 4, "theoretical_gbs": 478.125,
            "basis": "through NVSwitch"}

    def res(g, key):
        return {"verified": key not in failed, "gbs": g if key not in failed else None}

    return {"config": {"nbytes": 256 * 2**20, "reps": 20}, "devices": devices,
            "pairs": [{"src": i, "dst": j, "link": link} for i in range(n) for j in range(n) if i != j],
            "ce_uni": [{"src": i, "dst": j, **res(gbs, (i, j))} for i in range(n) for j in range(n) if i != j],
            "ce_bidir": [{"a": i, "b": j, **res(bidir, (i, j, "bi"))} for i in range(n) for j in range(i + 1, n)],
            "sm_uni": [], "sm_bidir": [],
            "host": [{"device": d, "h2d": {"verified": True, "gbs": 55.0}, "d2h": {"verified": True, "gbs": 54.0},
                      "link": {"label": "PCIe gen5 x16", "theoretical_gbs": 63.0}} for d in range(n)]}


def allreduce_section():
    rows = [nccl_math.sizes(1024, 2**30, 4)]
    rows = []
    for s in nccl_math.sizes(1024, 2**30, 4):
        t = s / 330e9 if s == 2**30 else s / 220e9
        rows.append({"bytes": s, "verified": True, "verified_after": True, "time_us": t * 1e6,
                     "algbw_gbs": nccl_math.algbw_gbs(s, t), "busbw_gbs": nccl_math.busbw_gbs(s, t, 2)})
    return {"available": True, "backend": "cupy.cuda.nccl", "nccl_version": 22703, "ranks": 2,
            "env": {"NCCL_NVLS_ENABLE": "0"}, "rows": rows}


REAL_POPEN = subprocess.Popen


class FakePopen:
    """Stands in for a measuring process: records its command and environment and
    writes the file it would have written. Any other process (platform.platform() runs
    `uname -p` once) is a real one."""

    calls: ClassVar[list[tuple[list[str], dict]]] = []
    h200: ClassVar[dict] = {}
    lock = threading.Lock()

    def __new__(cls, cmd, **kw):
        if list(cmd)[1:3] != ["-m", spawn.WORKER_MODULE]:
            return REAL_POPEN(cmd, **kw)
        return super().__new__(cls)

    def __init__(self, cmd, *, env=None, **_kw):
        with FakePopen.lock:
            FakePopen.calls.append((list(cmd), dict(env or {})))
        self.pid, self.returncode = 999999, 0
        args = list(cmd)
        step = args[3]
        out = Path(args[args.index("--out") + 1])
        out.parent.mkdir(parents=True, exist_ok=True)
        if step == "worker":
            idx = int(args[args.index("--index") + 1])
            doc = scaled(FakePopen.h200, 0.9 if idx == 1 else 1.0, uuid=args[args.index("--uuid") + 1],
                         host=args[args.index("--host") + 1], index=idx)
            out.write_text(json.dumps(results.upgrade(doc)))  # a worker writes the current format
        elif step == "node-links":  # the GPUs the step was given
            out.write_text(json.dumps(links_section(n=len((env or {})["CUDA_VISIBLE_DEVICES"].split(",")))))
        elif step == "node-allreduce":
            out.write_text(json.dumps(allreduce_section()))
        else:
            out.write_text(json.dumps({"available": False, "reason": "fake"}))

    def poll(self):
        return 0

    def wait(self, timeout=None):
        return 0


FAKE_GPUS = [{"index": i, "uuid": f"GPU-fake-{i}", "name": "NVIDIA H200", "pci_bus_id": f"0000:{i + 7:02x}:00.0",
              "serial": f"S{i}"} for i in range(3)]


@pytest.fixture
def fake_node(monkeypatch, h200):
    FakePopen.calls = []
    FakePopen.h200 = h200
    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    monkeypatch.setattr(orchestrate, "inventory_here", lambda: (FAKE_GPUS, None))
    monkeypatch.setattr(layout, "hostname", lambda: "node-a")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return FakePopen


def shape_of(doc: dict) -> dict:
    f = doc["fleet"]
    return {"gpus": list(f["gpus"]), "sections": {u: sorted(g["document"]) for u, g in f["gpus"].items()},
            "keys": sorted(k for k in f if k != "launch"), "links": sorted(f["links"]),
            "allreduce": sorted(f["allreduce"]), "outliers": sorted((o["uuid"], o["figure"]) for o in f["outliers"])}
