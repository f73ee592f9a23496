"""The BF16 climb of one run, from `rooflab gemm --format json` results (and, optionally, the
`profiling.run` section of Nsight Compute on the same rungs): rung -> ms -> TFLOP/s -> ratio to the
previous rung -> ratio to cuBLAS BF16, then the rungs' own paragraphs; a rooflab table, shown as the
commands show theirs.

Usage: PYTHONPATH=src python3 scripts/dev/tma_climb.py GEMM.json [NCU.json]
"""

from __future__ import annotations

import json
import sys

from rooflab.cli.output import show, show_paragraphs
from rooflab.model.metrics import by_kernel, rung_metrics
from rooflab.report.climb import transitions as gemm_transitions
from rooflab.report.gemm import status
from rooflab.report.table import Table, fmt

CLIMB = ("wgmma_bf16", "wgmma_bf16_tma", "wgmma_bf16_tma_ws", "wgmma_bf16_persistent", "wgmma_bf16_cluster",
         "wgmma_bf16_tma_store")
PEER = "cublas_bf16"


def climb_table(doc: dict) -> Table:
    recs = by_kernel(doc["gemm"])
    ms = {name: rung_metrics(doc, rec, None)["ms"] if rec["passed"] else None for name, rec in recs.items()}
    rows, prev = [], None
    for name in (*CLIMB, PEER):
        if name not in recs:
            continue
        t = ms[name]
        rows.append([name, fmt(t, ".3f"), fmt(t and rung_metrics(doc, recs[name], None)["gflops"] / 1e3, ",.0f"),
                     fmt(prev / t if prev and t and name != PEER else None, ".3f", "×"),
                     fmt(ms.get(PEER) / t if ms.get(PEER) and t else None, ".3f", "×"), status(recs[name])])
        if name != PEER and t:
            prev = t
    n = doc["gemm"]["config"]["n"]
    flushed = doc["gemm"]["method"].get("l2_flushed")
    return Table(f"BF16 climb at N={n}, L2 {'flushed' if flushed else 'not flushed'} between reps",
                 ["rung", "ms", "TFLOP/s", "vs previous", "vs cuBLAS BF16", "status"], rows, key="tma_climb")


def climb_paragraphs(doc: dict) -> list[tuple[str, str]]:
    words = ("TMA", "warp", "persistent", "cluster", "epilogue")
    return [(h, p) for h, p in gemm_transitions(doc) if any(w in h for w in words)]


def main(argv: list[str]) -> int:
    with open(argv[0]) as f:
        doc = json.load(f)
    if len(argv) > 1:
        with open(argv[1]) as f:
            ncu = json.load(f)
        doc["profile"] = ncu.get("profile", ncu)
    show(climb_table(doc))
    show_paragraphs(climb_paragraphs(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
