"""What changed at each step of the GEMM climb: a paragraph per step whose two rungs both ran and
passed, from the run's numbers only. A rung's record names the earlier rungs it is compared with
(Rung.compare); the prose of a step is here, keyed by (rung, earlier rung); a step with none gets
the generic paragraph (rooflab.report.climb.step.generic)."""

from __future__ import annotations

from rooflab import rungs
from rooflab.model.metrics import by_kernel, median_ms, rung_metrics
from rooflab.model.ncu import warp_state
from rooflab.report.climb import fp8, simt, tensor, tma, triton
from rooflab.report.climb.step import Paragraph, Step, generic, generic_heading, known

PARAGRAPHS: dict[tuple[str, str], tuple[str, Paragraph]] = {**simt.PARAGRAPHS, **tensor.PARAGRAPHS,
                                                           **tma.PARAGRAPHS, **triton.PARAGRAPHS, **fp8.PARAGRAPHS}


def profiles(doc: dict) -> dict[str, dict]:
    """Nsight Compute's figures per rung label: DRAM GB, DRAM %, SM %, warp state."""
    out = {}
    for k in (doc.get("profile") or {}).get("kernels", []):
        if None in (k.get("dram_bytes"), k.get("dram_pct"), k.get("sm_pct")):
            continue  # a profile without DRAM figures: nothing to say from it
        out[k["label"]] = {"dram_gb": k["dram_bytes"] / 1e9, "dram_pct": k["dram_pct"], "sm_pct": k["sm_pct"],
                           **warp_state(k.get("metrics") or {})}
    return out


def steps(rung: rungs.Rung) -> list[tuple[str, str | None, Paragraph]]:
    """(earlier rung, heading or None for the generic one, paragraph) for each step into a rung."""
    out = []
    for earlier in rung.compare:
        heading, para = PARAGRAPHS.get((rung.name, earlier), (None, generic))
        out.append((earlier, heading, para))
    return out


def transitions(doc: dict) -> list[tuple[str, str]]:
    """(heading, paragraph) for every step whose two rungs both ran and passed, in ladder order."""
    recs = by_kernel(doc["gemm"])
    naive_ms = median_ms(recs["naive"]) if "naive" in recs else None
    metrics = {k: rung_metrics(doc, r, naive_ms) for k, r in recs.items()}
    prof = profiles(doc)
    out: list[tuple[str, str]] = []
    for rung in rungs.LADDER:
        if rung.name not in recs or not metrics[rung.name]["ms"]:
            continue
        for earlier, heading, para in steps(rung):
            if earlier in recs and metrics[earlier]["ms"]:
                step = Step(known(metrics[earlier]), known(metrics[rung.name]), recs[earlier], recs[rung.name], prof)
                out.append((heading or generic_heading(step), para(step)))
    return out
