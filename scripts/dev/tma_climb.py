"""The tensor-core climbs of one run, from `rooflab gemm --format json` results (and, optionally, the
`profiling.run` section of Nsight Compute on the same rungs): per precision, rung -> ms -> TFLOP/s ->
ratio to the previous rung -> ratio to its cuBLAS peer, then the rungs' own paragraphs; rooflab tables,
shown as the commands show theirs. A precision none of whose rungs ran is left out.

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

# (precision, its rungs in climbing order, the peer they are measured against, the peer's name)
CLIMBS = (
    ("BF16", ("wgmma_bf16", "wgmma_bf16_tma", "wgmma_bf16_tma_ws", "wgmma_bf16_persistent", "wgmma_bf16_cluster",
              "wgmma_bf16_tma_store"), "cublas_bf16", "cuBLAS BF16"),
    ("TF32", ("wgmma_tf32", "wgmma_tf32_tma", "wgmma_tf32_swap"), "cublas_tf32", "cuBLAS TF32"),
    ("3xTF32", ("wgmma_3xtf32", "wgmma_3xtf32_tma", "wgmma_3xtf32_swap"), "cublas", "cuBLAS SGEMM"),
    ("FP8", ("wgmma_fp8", "wgmma_fp8_persistent"), "cublaslt_fp8", "cuBLASLt FP8"),
)
CLIMB, PEER = CLIMBS[0][1], CLIMBS[0][2]


def climb_table(doc: dict, precision: str = "BF16") -> Table | None:
    _, climb, peer, peer_name = next(c for c in CLIMBS if c[0] == precision)
    recs = by_kernel(doc["gemm"])
    if not any(name in recs for name in climb):
        return None
    ms = {name: rung_metrics(doc, rec, None)["ms"] if rec["passed"] else None for name, rec in recs.items()}
    rows, prev = [], None
    for name in (*climb, peer):
        if name not in recs:
            continue
        t = ms[name]
        rows.append([name, fmt(t, ".3f"), fmt(t and rung_metrics(doc, recs[name], None)["gflops"] / 1e3, ",.0f"),
                     fmt(prev / t if prev and t and name != peer else None, ".3f", "×"),
                     fmt(ms.get(peer) / t if ms.get(peer) and t else None, ".3f", "×"), status(recs[name])])
        if name != peer and t:
            prev = t
    n = doc["gemm"]["config"]["n"]
    flushed = doc["gemm"]["method"].get("l2_flushed")
    return Table(f"{precision} climb at N={n}, L2 {'flushed' if flushed else 'not flushed'} between reps",
                 ["rung", "ms", "TFLOP/s", "vs previous", f"vs {peer_name}", "status"], rows,
                 key=f"{precision.lower()}_climb")


def climb_paragraphs(doc: dict) -> list[tuple[str, str]]:
    words = ("TMA", "warp", "persistent", "cluster", "epilogue", "FP8", "B^T", "pre-pass")
    return [(h, p) for h, p in gemm_transitions(doc) if any(w in h for w in words)]


def main(argv: list[str]) -> int:
    with open(argv[0]) as f:
        doc = json.load(f)
    if len(argv) > 1:
        with open(argv[1]) as f:
            ncu = json.load(f)
        doc["profile"] = ncu.get("profile", ncu)
    for precision, *_ in CLIMBS:
        table = climb_table(doc, precision)
        if table is not None:
            show(table)
    show_paragraphs(climb_paragraphs(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
