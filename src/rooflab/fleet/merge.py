"""Many results documents -> one fleet document.

    {"format": 2, ..., "device": null,
     "fleet": {"gpus": {UUID: {host, index, name, pci_bus_id, serial, summary, inventory,
                               file, document}},
               "medians": {figure: value}, "outliers": [...],
               "links": {HOST: links section}, "allreduce": {HOST: section},
               "torch_peer": {HOST: section}, "nodes": {HOST: {gpus, steps, errors}},
               "config": {outlier_pct, baseline}, "launch": {...}, "errors": [...],
               "figures": [[key, title, unit]], "references": {...}}}

The same function serves `fleet report --devices`, the launcher path (rank 0, after
every rank has written its document) and `fleet merge DIR` afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rooflab import results
from rooflab.errors import UsageError
from rooflab.fleet import layout
from rooflab.model.fleet import outliers, reference
from rooflab.model.fleet.summary import FIGURES, summarize_gpu

NODE_KIND = "rooflab-fleet-node"


def gpu_entry(doc: dict, file: str | None = None) -> dict:
    fg = doc.get("fleet_gpu") or {}
    dev = doc.get("device") or {}
    host = fg.get("host") or (doc.get("host") or {}).get("hostname") or "unknown"
    index = fg.get("index", dev.get("index"))
    uuid = fg.get("uuid") or dev.get("uuid") or f"unknown:{host}:{dev.get('pci_bus_id') or index}"
    inv = fg.get("inventory_after") or fg.get("inventory_before")
    return {"uuid": uuid, "host": host, "index": index, "name": fg.get("name") or dev.get("name"),
            "pci_bus_id": fg.get("pci_bus_id") or dev.get("pci_bus_id"), "serial": fg.get("serial"),
            "file": file, "summary": summarize_gpu(doc), "inventory": inv, "document": doc}


def _sort_key(g: dict):
    idx = g.get("index")
    return (str(g.get("host")), idx if isinstance(idx, int) else 1 << 30, str(g.get("uuid")))


def merge(gpu_docs: Sequence[tuple[dict, str | None]], node_docs: Sequence[dict] = (), *,
          outlier_pct: float = outliers.DEFAULT_PCT, baseline: dict | None = None,
          baseline_path: str | None = None, launch: dict | None = None, errors: Sequence[str] = (),
          command: str | None = None) -> dict:
    errs = list(errors)
    entries: list[dict] = []
    seen: dict[str, dict] = {}
    for doc, file in gpu_docs:
        e = gpu_entry(doc, file)
        if e["uuid"] in seen:
            errs.append(f"two documents for GPU {e['uuid']} ({seen[e['uuid']]['file']} and {file}): "
                        "did two ranks measure the same GPU? keeping the first")
            continue
        seen[e["uuid"]] = e
        entries.append(e)
    entries.sort(key=_sort_key)
    fleet: dict = {
        "config": {"outlier_pct": outlier_pct, "baseline": baseline_path},
        "gpus": {e["uuid"]: e for e in entries},
        "medians": outliers.medians(entries),
        "outliers": outliers.find(entries, pct=outlier_pct, baseline=baseline),
        "links": {}, "allreduce": {}, "torch_peer": {}, "nodes": {},
        "launch": launch or {"mode": "merge"},
        "figures": [list(f) for f in FIGURES],  # [key, column title, unit], in the table's order
        "references": dict(reference.REFERENCES),
    }
    for nd in sorted(node_docs, key=lambda d: str(d.get("host"))):
        host = str(nd.get("host"))
        for key in ("links", "allreduce", "torch_peer"):
            if nd.get(key) is not None:
                fleet[key][host] = nd[key]
        fleet["nodes"][host] = {"gpus": nd.get("gpus") or [], "steps": nd.get("steps") or [],
                                "errors": nd.get("errors") or [], "inventory": nd.get("inventory") or []}
        errs += [f"{host}: {x}" for x in nd.get("errors") or []]
    fleet["errors"] = errs
    doc = results.new_document(command or results.command_line(), None)
    doc["fleet"] = fleet
    return doc


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_dir(root: str | Path) -> tuple[list[tuple[dict, str]], list[dict], list[str]]:
    """Every per-GPU document and node document under DIR (for `fleet merge DIR`)."""
    root = Path(root)
    gpu_docs, node_docs, errs = [], [], []
    for p in sorted((root / layout.GPUS).glob("*.json")):
        try:
            d = read_json(p)
        except (OSError, ValueError) as exc:
            errs.append(f"{p}: unreadable ({exc})")
            continue
        if results.format_of(d) is not None:
            gpu_docs.append((d, str(p.relative_to(root))))
    for p in sorted((root / layout.NODES).glob("*.json")):
        try:
            d = read_json(p)
        except (OSError, ValueError) as exc:
            errs.append(f"{p}: unreadable ({exc})")
            continue
        if isinstance(d, dict) and d.get("kind") == NODE_KIND:
            node_docs.append(d)
    return gpu_docs, node_docs, errs


def write(doc: dict, root: str | Path) -> list[str]:
    """DIR/fleet.json (first), then fleet.md and fleet_gpus.csv. Returns the names written."""
    from rooflab.report import fleet as render

    root = Path(root)
    results.write_atomic(root / layout.MERGED_JSON, results.dumps(doc))
    written = [layout.MERGED_JSON]
    results.write_atomic(root / layout.MERGED_MD, render.markdown(doc))
    written.append(layout.MERGED_MD)
    results.write_atomic(root / layout.MERGED_CSV, render.node_table(doc["fleet"]).to_csv())
    written.append(layout.MERGED_CSV)
    return written


def merge_dir(directory: str, *, outlier_pct: float = outliers.DEFAULT_PCT,
              baseline: str | None = None) -> tuple[dict, list[str]]:
    """`fleet merge DIR`: the documents a run left in DIR merged (again) and written beside them;
    returns the merged document and the names written."""
    if outlier_pct < 0:
        raise UsageError("--outlier-pct must be positive")
    gpu_docs, node_docs, errs = load_dir(directory)
    if not gpu_docs:
        raise UsageError(f"{directory}: no per-GPU documents in {directory}/{layout.GPUS}/")
    doc = merge(gpu_docs, node_docs, outlier_pct=outlier_pct,
                baseline=results.load(baseline) if baseline else None, baseline_path=baseline, errors=errs,
                launch={"mode": "merge", "directory": directory})
    return doc, write(doc, directory)
