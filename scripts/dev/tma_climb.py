"""The BF16 climb of one run, from `rooflab gemm --format json` results (and, optionally, the
`profiling.run` section of Nsight Compute on the same rungs): rung -> ms -> TFLOP/s -> ratio to the
previous rung -> ratio to cuBLAS BF16, then the rungs' own paragraphs (rooflab.rungs records).

Usage: PYTHONPATH=src python3 scripts/dev/tma_climb.py GEMM.json [NCU.json]
"""

from __future__ import annotations

import json
import sys

from rooflab.model.metrics import by_kernel, rung_metrics
from rooflab.report.climb import transitions as gemm_transitions

CLIMB = ("wgmma_bf16", "wgmma_bf16_tma", "wgmma_bf16_tma_ws", "wgmma_bf16_persistent", "wgmma_bf16_cluster",
         "wgmma_bf16_tma_store")
PEER = "cublas_bf16"


def main(argv: list[str]) -> int:
    doc = json.load(open(argv[0]))
    if len(argv) > 1:
        ncu = json.load(open(argv[1]))
        doc["profile"] = ncu.get("profile", ncu)
    recs = by_kernel(doc["gemm"])
    n = doc["gemm"]["config"]["n"]
    flushed = doc["gemm"]["method"].get("l2_flushed")
    print(f"BF16 climb at N={n}, L2 {'flushed' if flushed else 'not flushed'} between reps")
    print(f"{'rung':<22} {'ms':>8} {'TFLOP/s':>8} {'vs prev':>8} {'vs cuBLAS':>9}  status")
    peer = rung_metrics(doc, recs[PEER], None)["ms"] if PEER in recs and recs[PEER]["passed"] else None
    prev = None
    for name in (*CLIMB, PEER):
        rec = recs.get(name)
        if rec is None:
            continue
        if not rec["passed"]:
            why = rec.get("skipped") or rec.get("error") or "FAILED a check"
            print(f"{name:<22} {'-':>8} {'-':>8} {'-':>8} {'-':>9}  {why}")
            continue
        m = rung_metrics(doc, rec, None)
        vs_prev = f"{prev / m['ms']:.3f}" if prev and name != PEER else ""
        vs_peer = f"{peer / m['ms']:.3f}" if peer else ""
        print(f"{name:<22} {m['ms']:>8.3f} {m['gflops'] / 1e3:>8.0f} {vs_prev:>8} {vs_peer:>9}  passed")
        if name != PEER:
            prev = m["ms"]
    print()
    for heading, para in gemm_transitions(doc):
        if any(r in heading for r in ("TMA", "warp", "persistent", "cluster", "epilogue")):
            print(f"## {heading}\n{para}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
