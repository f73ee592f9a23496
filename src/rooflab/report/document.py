"""report.md, results.json and the CSVs, rendered from a results document alone
(so `rooflab report --from results.json` needs no GPU)."""

from __future__ import annotations

from rooflab import results, rungs
from rooflab.model import placement
from rooflab.model.ridge import seed_ridges, trend_paragraph
from rooflab.model.roofline import Roofline
from rooflab.report import gemm as render_gemm
from rooflab.report.ceilings import (
    bandwidth_tables,
    bracket_table,
    flops_table,
    profile_table,
    tensor_peak_table,
)
from rooflab.report.explain_ceilings import bandwidth_paragraphs, flops_paragraphs
from rooflab.report.memory import hierarchy_table, memory_paragraphs, memory_tables
from rooflab.report.points import points_table
from rooflab.report.specs import (
    device_table,
    device_tensor_rows,
    ridge_tables,
    specs_for,
    specs_table,
    tensor_table,
)
from rooflab.report.table import Table
from rooflab.report.telemetry import telemetry_table, warnings

# Where each seed requirement lands in report.md (the closing note walks this list).
DELIVERABLES = [
    ("G1, G2", "SGEMM ladder → Checks", "float64 reference, seed max-rel and normwise checks, NaN poisoning"),
    ("G3", "SGEMM ladder table notes, Method", "events around the kernel, warm-up, reps; mean, median, min"),
    ("G4, G9", "SGEMM ladder table", "N, kernel, ms, GFLOP/s, % peak, speedup vs naive"),
    ("G5–G8", "SGEMM ladder, Ratios", "naive, coalesced, tiled 16/32, cuBLAS FP32; the seed's ratios"),
    ("G10", "SGEMM ladder → What changed at each step", "a paragraph per transition, this run's numbers"),
    ("G11", "Method", "every CUDA call checked; a failure names kernel, call, CUDA error"),
    ("P1, P2, P10", "Device, Peaks from the spec table", "FP32 peak formula, forgot-FMA, tensor arithmetic"),
    ("P3, P4", "Copy bandwidth", "copy GB/s, % of HBM peak, cudaMemcpy, launch sweep"),
    ("P5", "Ridge points", "seed's four sorted, this device, y = a·x classified, trend"),
    ("P6", "FP32 FMA peak", "accumulators × occupancy, % of P1's peak"),
    ("P7", "FP32 FMA peak, Copy bandwidth", "why below peak, with this run's numbers"),
    ("P8", "Nsight Compute", "DRAM% × SM% table, verdicts, measured AI"),
    ("P9", "Roofline", "picture and points table"),
]


def roofline_for(doc: dict) -> Roofline:
    return placement.roofline(doc)


def _md_tables(tables: list[Table]) -> str:
    return "\n".join(t.to_markdown() for t in tables)


def _md_paras(paras: list[tuple[str, str]]) -> str:
    return "\n".join(f"**{title}.** {text}\n" for title, text in paras)


def all_tables(doc: dict, rl: Roofline) -> list[Table]:
    dev = doc["device"]
    tables: list[Table] = []
    if not dev.get("spec_only"):
        tables.append(device_table(dev))
    specs = specs_for(dev.get("spec_key")) if dev.get("spec_only") else specs_for(None)
    tables += [specs_table(specs), tensor_table(specs)]
    if not dev.get("spec_only") and dev.get("tensor_peaks"):
        t = tensor_table([])
        t.title, t.key, t.rows = "Tensor-core arithmetic of this device (P2)", "tensor_device", device_tensor_rows(dev)
        tables.append(t)
    tables += ridge_tables(None if dev.get("spec_only") else dev)[0]
    if doc.get("flops"):
        tables.append(flops_table(doc))
        tensor = tensor_peak_table(doc)
        if tensor:
            tables.append(tensor)
    if doc.get("bandwidth"):
        tables += bandwidth_tables(doc)
    if doc.get("memory"):
        tables += memory_tables(doc)
    hier = hierarchy_table(doc)
    if hier:
        tables.append(hier)
    bracketed = bracket_table(doc)
    if bracketed:
        tables.append(bracketed)
    if doc.get("gemm"):
        tables += [render_gemm.gemm_table(doc), render_gemm.ratio_table(doc), render_gemm.check_table(doc)]
    if doc.get("profile"):
        tables.append(profile_table(doc))
    if rl.points:  # a theoretical roofline places nothing: no header-only table
        tables.append(points_table(rl))
    tel = telemetry_table(doc)
    if tel:
        tables.append(tel)
    return tables


def markdown(doc: dict, tables: list[Table]) -> str:
    dev = doc["device"]
    by_key = {t.key: t for t in tables}
    spec_only = bool(dev.get("spec_only"))
    md = [f"# rooflab report — {dev['name']}", ""]
    md.append(f"Created {doc['created']} by rooflab {doc['rooflab_version']} (`{doc['command']}`).")
    if spec_only:
        md += ["", ("> **Nothing was measured.** This is the spec-only report: peaks, tensor-core arithmetic, ridge "
                    f"points and the theoretical roofline of the {dev['name']} from the published spec table. Run "
                    "`rooflab report` on a machine with an NVIDIA GPU to measure.")]
    else:
        md.append(f"Device: {dev['name']}, {dev['sm_count']} SMs, SM clock max {dev['sm_clock_max_mhz']:.0f} MHz, "
                  f"memory {dev['mem_clock_max_mhz']:.0f} MHz × {dev['bus_width_bits']} bit; driver "
                  f"{dev.get('driver_version')}, CUDA runtime {dev.get('cuda_runtime_version')}, CuPy {dev.get('cupy_version')}.")
        for w in warnings(doc):
            md.append(f"\n> ⚠ {w}")
    md += ["", "![roofline](roofline.png)", ""]
    if not spec_only:
        md += ["## Seed deliverables", "", "| ID | where | what |", "|---|---|---|"]
        md += [f"| {i} | {w} | {what} |" for i, w, what in DELIVERABLES]
        md += [""]
        md += ["## Device (P1, P3)", "", by_key["device"].to_markdown()]
    md += ["## Peaks from the spec table (P1, P2, P10)", "", by_key["specs"].to_markdown(), by_key["tensor"].to_markdown()]
    if "tensor_device" in by_key:
        md.append(by_key["tensor_device"].to_markdown())
    trend = trend_paragraph(seed_ridges())
    md += ["## Ridge points (P5)", "", _md_tables([by_key["ridge_seed"], by_key["ridge_all"]]), trend, ""]
    if doc.get("flops"):
        md += ["## FP32 FMA peak (P6, P7)", "", by_key["flops"].to_markdown(), _md_paras(flops_paragraphs(doc))]
        if "tensor_peaks" in by_key:
            md += ["## Tensor-core roofs, measured (P2)", "", by_key["tensor_peaks"].to_markdown()]
    if doc.get("bandwidth"):
        md += ["## Copy bandwidth (P3, P4, P7)", "", by_key["bandwidth"].to_markdown(),
               by_key["bandwidth_sweep"].to_markdown(), _md_paras(bandwidth_paragraphs(doc))]
    if doc.get("memory"):
        md += ["## Memory hierarchy: L2, shared memory, FP64 and FP16 (issue 11)", "",
               *[t.to_markdown() for t in memory_tables(doc)],
               _md_paras([p for p in memory_paragraphs(doc) if not p[0].lower().startswith("which level")])]
    if doc.get("gemm"):
        md += ["## SGEMM ladder (G1–G11)", "", by_key["gemm"].to_markdown(), by_key["ratios"].to_markdown(),
               "### What changed at each step (G10)", "", _md_paras(render_gemm.paragraphs(doc)),
               "### The rungs", ""]
        for rec in doc["gemm"]["rungs"]:
            rung = rungs.get(rec["kernel"])
            explain = rec.get("explain") or (rung.explain if rung else "")
            if explain:
                md.append(f"- **{rec['title']}** ({rec.get('stage', '')}): {explain}")
        md += ["", "### Checks", "", by_key["checks"].to_markdown()]
    if doc.get("profile"):
        md += ["## Nsight Compute (P8)", "", f"`{doc['profile']['command']}` — {doc['profile']['ncu_version']}", "",
               by_key["profile"].to_markdown()]
    elif doc.get("report", {}).get("profile_skipped"):
        md += ["## Nsight Compute (P8)", "", f"Not run: {doc['report']['profile_skipped']}.", ""]
    if "brackets" in by_key:
        md += ["## Ceilings, bracketed", "", by_key["brackets"].to_markdown()]
    md += ["## Roofline (P9)", "", "![roofline](roofline.png)", ""]
    if "roofline" in by_key:
        md.append(by_key["roofline"].to_markdown())
    elif spec_only:
        md += [("_Theoretical: nothing was measured, so no kernel is placed on it. The diamond marks where y = a·x "
                "(AI 0.125) lands on the memory slope._"), ""]
    if doc.get("memory"):
        md += ["### The hierarchical roofline", "", "![roofline by level](roofline-levels.png)", ""]
        if "hierarchy" in by_key:
            md += [by_key["hierarchy"].to_markdown(),
                   _md_paras([p for p in memory_paragraphs(doc) if p[0].lower().startswith("which level")])]
    if "telemetry" in by_key:
        md += ["## Telemetry", "", by_key["telemetry"].to_markdown()]
    if not spec_only:
        md += ["## Method", "",
               ("- Every kernel is compiled at run time with NVRTC (CuPy RawModule) for this device; every CUDA call "
                "is checked, and a failure names the kernel, the call and the CUDA error string (G11)."),
               ("- Timing: CUDA events around each launch only (no host↔device copies), warm-up outside the "
                "measurement, medians reported with mean and min; NVML telemetry sampled during the reps."),
               ("- Correctness first: outputs are poisoned with NaN before every checked run; a kernel that fails a "
                "check is shown as FAILED and gets no throughput."), ""]
    return "\n".join(md) + "\n"


def files(doc: dict, rl: Roofline) -> dict[str, str]:
    """Every text output of a report, by file name."""
    tables = all_tables(doc, rl)
    out = {"report.md": markdown(doc, tables), "results.json": results.dumps(doc)}
    for t in tables:
        if t.key:
            out[f"{t.key}.csv"] = t.to_csv()
    return out
