"""The roofline's points as a table (P9)."""

from __future__ import annotations

from rooflab.model.roofline import Roofline
from rooflab.report.table import Table, fmt, missing


def points_table(rl: Roofline) -> Table:
    rows = []
    for r in rl.rows():
        unknown = missing(r["peak_note"]) if r["peak_note"] else None  # the roof's peak is unknown
        rows.append([r["label"], fmt(r["ai"], ".3g"), r["ai_source"],
                     fmt(r["achieved_tflops"], ".2f"), r["roof"], fmt(r["ridge_ai"], ".1f") or unknown,
                     fmt(r["attainable_tflops"], ".2f") or unknown,
                     fmt(r["pct_of_attainable"], ".1f", "%") or unknown, r["bound"]])
    ceilings = [f"{rf.name} {rf.flops / 1e12:,.1f} TFLOP/s (ridge {rl.ridge(rf):.1f} FLOP/B)" for rf in rl.roofs]
    ceilings += [f"{name}: {why}" for name, why in rl.unknown_peaks.items()]
    if rl.measured_flops:
        ceilings.append(f"measured FMA rate {rl.measured_flops / 1e12:,.1f} TFLOP/s")
    notes = [f"Memory slope: {rl.bandwidth_label}; " + "; ".join(ceilings) + ".",
             ("AI source 'ncu' = the kernel's FLOPs (2·M·N·K for a GEMM rung) / DRAM bytes measured by Nsight Compute; "
              "'model' = the rung's traffic "
              "model (no cache reuse counted). % of attainable = achieved / min(roof, AI × memory bandwidth).")]
    notes += [f"{p.label}: {p.note}" for p in rl.points if p.note]
    return Table("Roofline points (P9)", ["kernel", "AI FLOP/B", "AI source", "TFLOP/s", "roof", "ridge FLOP/B",
                                          "attainable TFLOP/s", "% of attainable", "bound"], rows, notes,
                 key="roofline")
