"""report.md, results.json and the CSVs, rendered from a results document alone
(so `rooflab report --from results.json` needs no GPU)."""

from __future__ import annotations

from dataclasses import replace

from rooflab import results, rungs
from rooflab.model import placement
from rooflab.model.ridge import seed_ridges, trend_paragraph
from rooflab.model.roofline import Roofline
from rooflab.report import gemm as render_gemm
from rooflab.report import html
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
from rooflab.report import section
from rooflab.report import sweep as _sweep  # noqa: F401 (registers its section)
from rooflab.report import trace as _trace  # noqa: F401 (registers its section)
from rooflab.report.table import Table
from rooflab.report.blocks import Block, Bullets, Heading, Paragraphs, Picture, Text, TableBlock, to_markdown
from rooflab.report.summary import (
    check_summary_table,
    fma_by_launch,
    highlights,
    profile_verdicts,
    ratios_sentence,
    roofs_table,
    sweep_by_block,
    telemetry_sentence,
)
from rooflab.report.telemetry import telemetry_table, warnings

# Where each course requirement lands in report.md (its "from the course" section lists them).
DELIVERABLES = [
    ("G1, G2", "SGEMM ladder → Checks (every check: checks.csv)", "float64 reference, seed max-rel and normwise "
     "checks, NaN poisoning"),
    ("G3", "Summary → SGEMM ladder table notes, Method", "events around the kernel, warm-up, reps; mean, median, min"),
    ("G4, G9", "Summary → SGEMM ladder table", "N, kernel, ms, GFLOP/s, % peak, speedup vs naive"),
    ("G5–G8", "Summary → SGEMM ladder table, SGEMM ladder → ratios", "naive, coalesced, tiled 16/32, cuBLAS FP32; "
     "the seed's ratios"),
    ("G10", "SGEMM ladder → What changed at each step", "a paragraph per transition, this run's numbers"),
    ("G11", "Method", "every CUDA call checked; a failure names kernel, call, CUDA error"),
    ("P1, P2, P10", "Summary → Device, Peaks from the spec table", "FP32 peak formula, forgot-FMA, tensor arithmetic"),
    ("P3, P4", "Copy bandwidth", "copy GB/s, % of HBM peak, cudaMemcpy, launch sweep"),
    ("P5", "Ridge points", "seed's four sorted, this device, y = a·x classified, trend"),
    ("P6", "FP32 FMA peak", "accumulators × occupancy, % of P1's peak"),
    ("P7", "FP32 FMA peak, Copy bandwidth", "why below peak, with this run's numbers"),
    ("P8", "Nsight Compute", "DRAM% × SM% table, verdicts, measured AI"),
    ("P9", "Summary (picture), Roofline", "picture; each kernel's HBM placement: roofline.csv, report.html"),
]


def section_blocks(doc: dict, sec: section.Section, by_key: dict[str, Table]) -> list[Block]:
    """A registered section's part of the report: its heading, pictures, tables (the brief ones in
    report.md, every one whole in report.html), paragraphs and notes."""
    out: list[Block] = [Heading(2, sec.heading)]
    out += [Picture(d.file, d.alt, sec.name) for d in sec.pictures if d.when(doc)]
    for t in sec.tables(doc):
        t = by_key.get(t.key, t)
        out.append(TableBlock(t) if sec.brief is None or t.key in sec.brief else TableBlock(None, full=t))
    paras = sec.paragraphs(doc)
    if paras:
        out.append(Paragraphs(paras))
    out += [Text(n) for n in sec.notes(doc)]
    return out


def roofline_for(doc: dict) -> Roofline:
    return placement.roofline(doc)


def all_tables(doc: dict, rl: Roofline) -> list[Table]:
    dev = doc["device"]
    tables: list[Table] = []
    if not dev.get("spec_only"):
        tables.append(device_table(dev))
    roofs = roofs_table(doc)
    if roofs:
        tables.append(roofs)
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
        summary = check_summary_table(doc)
        if summary:
            tables.append(summary)
    tables += section.tables(doc)  # the registered sections (a size sweep, a traced program, ...)
    if doc.get("profile"):
        tables.append(profile_table(doc))
    sweep = sweep_by_block(doc)
    if sweep:
        tables.append(sweep)
    if rl.points:  # a theoretical roofline places nothing: no header-only table
        tables.append(points_table(rl))
    tel = telemetry_table(doc)
    if tel:
        tables.append(tel)
    return tables


COURSE = ("rooflab began as the answer to two chapters of a CUDA course: a tiled matrix-multiply project "
          "(requirements G1–G12) and a bandwidth and peak-rate exercise (P1–P10). The headings carry those IDs; "
          "\"the seed\" is the course's starting code and text, whose kernels, checks and ratios are the ladder's "
          "first rungs. Where each requirement lands:")


def _only(table: Table, keep, where: str) -> Table | None:
    """``table`` with only the rows ``keep`` accepts (None if none), saying where the rest are."""
    rows = [r for r in table.rows if keep(r)]
    if not rows:
        return None
    if len(rows) == len(table.rows):
        return table
    notes = [n for n in table.notes if not any(n.startswith(f"{str(r[0])}:") for r in table.rows if r not in rows)]
    return replace(table, rows=rows, notes=notes + [f"Every GPU of the spec table: {where}."])


def _this_device(dev: dict):
    """A row filter for the spec and ridge tables: this device's rows."""
    key, name = dev.get("spec_key"), dev["name"]

    def keep(row) -> bool:
        label = str(row[0])
        return label.startswith(f"{name} (this device)") or bool(key) and (label == key or
                                                                            label.startswith(f"{key} "))
    return keep


def blocks(doc: dict, tables: list[Table], rl: Roofline | None = None) -> list[Block]:
    """The report, in reading order: a summary, then each measurement with its explanation."""
    rl = rl if rl is not None else roofline_for(doc)
    dev = doc["device"]
    by_key = {t.key: t for t in tables}
    spec_only = bool(dev.get("spec_only"))
    created = f"Created {doc['created']} by rooflab {doc['rooflab_version']} (`{doc['command']}`)."
    out: list[Block] = [Heading(1, f"rooflab report — {dev['name']}")]
    roofline_picture = Picture("roofline.png", "roofline", "roofline")
    if spec_only:
        out.append(Text(created))
        out.append(Text(f"**Nothing was measured.** This is the spec-only report: peaks, tensor-core arithmetic, "
                        f"ridge points and the theoretical roofline of the {dev['name']} from the published spec "
                        "table. Run `rooflab report` on a machine with an NVIDIA GPU to measure.", quote=True))
    else:
        out.append(Text(f"{created} Device: {dev['name']}, {dev['sm_count']} SMs, SM clock max {dev['sm_clock_max_mhz']:.0f} MHz, "
                        f"memory {dev['mem_clock_max_mhz']:.0f} MHz × {dev['bus_width_bits']} bit; driver "
                        f"{dev.get('driver_version')}, CUDA runtime {dev.get('cuda_runtime_version')}, "
                        f"CuPy {dev.get('cupy_version')}."))
        out += [Text(f"⚠ {w}", quote=True) for w in warnings(doc)]
        out += [Heading(2, "Summary: device (P1, P3), roofs, the ladder"), TableBlock(by_key["device"])]
        if "brackets" in by_key:  # each roof between its witness and its physical limit; the plainer
            # measured-against-published table stays whole in roofs.csv and report.html
            out.append(TableBlock(by_key["brackets"]))
            if "roofs" in by_key:
                out.append(TableBlock(None, full=by_key["roofs"]))
        elif "roofs" in by_key:
            out.append(TableBlock(by_key["roofs"]))
        if "gemm" in by_key:
            out.append(TableBlock(by_key["gemm"]))
        out += [Bullets(highlights(doc, rl)), roofline_picture]
    this = _this_device(dev)
    out.append(Heading(2, "Peaks from the spec table (P1, P2, P10)"))
    for key in ("specs", "tensor"):
        # a measured device's own tensor arithmetic follows; the spec table's row would repeat it
        short = None if key == "tensor" and "tensor_device" in by_key else \
            _only(by_key[key], this, f"{key}.csv, report.html, `rooflab specs`")
        out.append(TableBlock(short, full=by_key[key]))
    if "tensor_device" in by_key:
        out.append(TableBlock(by_key["tensor_device"]))
    ridge_all = by_key["ridge_all"]
    measured_rows = (lambda r: str(r[0]).startswith(f"{dev['name']} (this device)")) if not spec_only else this
    short = _only(ridge_all, measured_rows, "ridge_all.csv, report.html, `rooflab ridge`")
    out += [Heading(2, "Ridge points (P5)"), TableBlock(by_key["ridge_seed"]), TableBlock(short, full=ridge_all),
            Text(trend_paragraph(seed_ridges()))]
    if doc.get("flops"):
        out += [Heading(2, "FP32 FMA peak (P6, P7)"), TableBlock(fma_by_launch(by_key["flops"]), full=by_key["flops"]),
                Paragraphs(flops_paragraphs(doc))]
        if "tensor_peaks" in by_key:
            out += [Heading(2, "Tensor-core roofs, measured (P2)"), TableBlock(by_key["tensor_peaks"])]
    if doc.get("bandwidth"):
        out += [Heading(2, "Copy bandwidth (P3, P4, P7)"), TableBlock(by_key["bandwidth"]),
                TableBlock(sweep_by_block(doc), full=by_key["bandwidth_sweep"]),
                Paragraphs(bandwidth_paragraphs(doc))]
    if doc.get("memory"):
        paras = memory_paragraphs(doc)
        out += [Heading(2, "Memory hierarchy: L2, shared memory, FP64 and FP16"),
                # the FP64/FP16 rates are in the summary's roofs table, beside their theoretical peaks
                *[TableBlock(None if t.key == "memory_peaks" and "roofs" in by_key else t, full=t)
                  for t in memory_tables(doc)],
                Paragraphs([p for p in paras if not p[0].lower().startswith("which level")])]
    if doc.get("gemm"):
        out += [Heading(2, "SGEMM ladder (G1–G11)"),
                Text("The ladder's table (G9) is in the summary above; what each rung changes and why, in "
                     "report.html. " + ratios_sentence(by_key["ratios"]), where="md"),
                TableBlock(None, full=by_key["ratios"]),
                Heading(3, "What changed at each step (G10)"), Paragraphs(render_gemm.paragraphs(doc)),
                Heading(3, "The rungs", where="html")]
        explained = []
        for rec in doc["gemm"]["rungs"]:
            rung = rungs.get(rec["kernel"])
            explain = rec.get("explain") or (rung.explain if rung else "")
            if explain:
                explained.append(f"**{rec['title']}** ({rec.get('stage', '')}): {explain}")
        out += [Bullets(explained, where="html"), Heading(3, "Checks", where="html"),
                TableBlock(check_summary_table(doc), full=by_key["checks"])]
    for sec in section.present(doc):
        out += section_blocks(doc, sec, by_key)
    if doc.get("profile"):
        out += [Heading(2, "Nsight Compute (P8)"),
                Text(f"`{doc['profile']['command']}` — {doc['profile']['ncu_version']}. Every kernel's DRAM bytes, "
                     "FP32 FLOPs and AI: profile.csv and report.html; the verdicts: "
                     + by_key["profile"].notes[0]),
                Bullets(profile_verdicts(by_key["profile"]), where="md"),
                TableBlock(None, full=by_key["profile"])]
    elif doc.get("report", {}).get("profile_skipped"):
        out += [Heading(2, "Nsight Compute (P8)"), Text(f"Not run: {doc['report']['profile_skipped']}.")]
    out.append(Heading(2, "Roofline (P9)"))
    if spec_only:
        out += [roofline_picture,
                Text("_Theoretical: nothing was measured, so no kernel is placed on it. The diamond marks where "
                     "y = a·x (AI 0.125) lands on the memory slope._")]
    if "roofline" in by_key:
        if "hierarchy" in by_key:  # the hierarchy table holds each kernel's HBM placement too
            out.append(TableBlock(None, full=by_key["roofline"]))
        else:
            out.append(TableBlock(by_key["roofline"]))
    if doc.get("memory"):
        out += [Heading(3, "The hierarchical roofline", where="html"), Picture("roofline-levels.png", "roofline by level", "levels")]
        if "hierarchy" in by_key:
            out += [TableBlock(by_key["hierarchy"]),
                    Paragraphs([p for p in memory_paragraphs(doc) if p[0].lower().startswith("which level")])]
    if not spec_only:
        out += [Heading(2, "Method and telemetry"), Bullets([
            *([telemetry_sentence(by_key["telemetry"])] if "telemetry" in by_key else []),
            ("Every kernel is compiled at run time with NVRTC (CuPy RawModule) for this device; every CUDA call "
             "is checked, and a failure names the kernel, the call and the CUDA error string (G11)."),
            ("Timing: CUDA events around each launch only (no host↔device copies), warm-up outside the "
             "measurement, medians reported with mean and min; NVML telemetry sampled during the reps."),
            ("Correctness first: outputs are poisoned with NaN before every checked run; a kernel that fails a "
             "check is shown as FAILED and gets no throughput.")])]
        if "telemetry" in by_key:  # report.md names the throttled measurements only
            tel = by_key["telemetry"]
            out.append(TableBlock(_only(tel, lambda r: r[6] != "ok", "telemetry.csv, report.html"), full=tel))
        out += [Heading(2, "From the course"), Text(COURSE), TableBlock(deliverables_table())]
    else:
        out += [Heading(2, "From the course"), Text(COURSE.removesuffix(" Where each requirement lands:"))]
    return out


def deliverables_table() -> Table:
    return Table("Where each course requirement lands", ["ID", "where", "what"],
                 [list(row) for row in DELIVERABLES])


def markdown(doc: dict, tables: list[Table], rl: Roofline | None = None) -> str:
    return to_markdown(blocks(doc, tables, rl))


def files(doc: dict, rl: Roofline) -> dict[str, str]:
    """Every text output of a report, by file name."""
    tables = all_tables(doc, rl)
    parts = blocks(doc, tables, rl)
    out = {"report.md": to_markdown(parts), "results.json": results.dumps(doc)}
    if html.unavailable() is None:  # without Plotly the CLI says report.html was left out
        out["report.html"] = html.render(doc, parts, rl)
    for t in tables:
        if t.key:
            out[f"{t.key}.csv"] = t.to_csv()
    return out
