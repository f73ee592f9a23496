"""The roofline's points as a table (P9)."""

from __future__ import annotations

from rooflab.model.roofline import Roofline
from rooflab.report.table import Table, fmt


def points_table(rl: Roofline) -> Table:
    rows = []
    for r in rl.rows():
        rows.append([r["label"], fmt(r["ai"], ".3g"), r["ai_source"],
                     fmt(r["achieved_tflops"], ".2f"), r["roof"], fmt(r["ridge_ai"], ".1f"),
                     fmt(r["attainable_tflops"], ".2f"), fmt(r["pct_of_attainable"], ".1f", "%"), r["bound"]])
    notes = [f"HBM slope {rl.bandwidth / 1e12:.2f} TB/s; "
             + "; ".join(f"{rf.name} {rf.flops / 1e12:,.1f} TFLOP/s (ridge {rl.ridge(rf):.1f} FLOP/B)"
                         for rf in rl.roofs) + ".",
             "AI source 'ncu' = FP32 FLOPs / DRAM bytes measured by Nsight Compute; 'model' = the rung's traffic "
             "model (no cache reuse counted). % of attainable = achieved / min(roof, AI × HBM bandwidth)."]
    notes += [f"{p.label}: {p.note}" for p in rl.points if p.note]
    return Table("Roofline points (P9)", ["kernel", "AI FLOP/B", "AI source", "TFLOP/s", "roof", "ridge",
                                          "attainable", "% of attainable", "bound"], rows, notes, key="roofline")
