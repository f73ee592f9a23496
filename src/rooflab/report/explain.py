"""G10: a paragraph per transition of the ladder, from a run's numbers. The paragraphs
live in the rung records (rooflab/rungs/NAME.py); this module only finds the steps a run
holds. No canned figures: every number comes from the results document."""

from __future__ import annotations

from rooflab import rungs
from rooflab.model.metrics import by_kernel, median_ms, rung_metrics
from rooflab.model.ncu import warp_state
from rooflab.rungs.record import Step, known


def profiles(doc: dict) -> dict[str, dict]:
    """Nsight Compute's figures per rung label: DRAM GB, DRAM %, SM %."""
    out = {}
    for k in (doc.get("profile") or {}).get("kernels", []):
        if None in (k.get("dram_bytes"), k.get("dram_pct"), k.get("sm_pct")):
            continue  # a profile without DRAM figures: nothing to say from it
        out[k["label"]] = {"dram_gb": k["dram_bytes"] / 1e9, "dram_pct": k["dram_pct"], "sm_pct": k["sm_pct"],
                           **warp_state(k.get("metrics") or {})}
    return out


def gemm_transitions(doc: dict) -> list[tuple[str, str]]:
    """(heading, paragraph) for every step whose two rungs both ran and passed, in ladder order."""
    recs = by_kernel(doc["gemm"])
    naive_ms = median_ms(recs["naive"]) if "naive" in recs else None
    metrics = {k: rung_metrics(doc, r, naive_ms) for k, r in recs.items()}
    prof = profiles(doc)
    out: list[tuple[str, str]] = []
    for rung in rungs.LADDER:
        if rung.name not in recs:
            continue
        for after, heading, paragraph in rung.paragraphs:
            if after in recs and metrics[after]["ms"] and metrics[rung.name]["ms"]:
                step = Step(known(metrics[after]), known(metrics[rung.name]), recs[after], recs[rung.name], prof)
                out.append((heading, paragraph(step)))
    return out
