"""The report's built-in sections, each one record (rooflab.report.section.Section), registered in
reading order: the summary, the spec table's peaks and ridge points, each measured ceiling, the
memory levels, the SGEMM ladder, the size sweep and a traced program (in their own modules), then
the sections registered from outside, Nsight Compute, the roofline (it places every kernel measured
above), the method and the course's map.

report.md, report.html, the CSVs, the pictures and the commands' `--format` take each section's
part from its record; report.document only adds the title and the device line above them.
"""

from __future__ import annotations

from dataclasses import replace

from rooflab import rungs
from rooflab.model import placement
from rooflab.model.ridge import seed_ridges, trend_paragraph
from rooflab.report import gemm as render_gemm
from rooflab.report import sweep as _sweep  # noqa: F401 (registers its section)
from rooflab.report import trace as _trace  # noqa: F401 (registers its section)
from rooflab.report.blocks import Block, Bullets, Heading, Paragraphs, Picture, TableBlock, Text
from rooflab.report.ceilings import bandwidth_tables, bracket_table, flops_table, profile_table, tensor_peak_table
from rooflab.report.explain_ceilings import bandwidth_paragraphs, flops_paragraphs
from rooflab.report.memory import hierarchy_paragraph, hierarchy_table, level_paragraphs, memory_tables
from rooflab.report.points import points_table
from rooflab.report.section import SECTIONS, Drawing, Section, View, register
from rooflab.report.specs import device_table, device_tensor_rows, ridge_tables, specs_for, specs_table, tensor_table
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
from rooflab.report.table import Table
from rooflab.report.telemetry import telemetry_table

ROOFLINE_PICTURE = Picture("roofline.png", "roofline", "roofline")


def shown(doc: dict, *names: str) -> tuple[list[Table], list[tuple[str, str]]]:
    """What a command shows of these sections (those the document holds): their tables, then their
    paragraphs."""
    secs = [SECTIONS[n] for n in names if SECTIONS[n].holds(doc)]
    return [t for s in secs for t in s.tables(doc)], [p for s in secs for p in s.paragraphs(doc)]


def _always(doc: dict) -> bool:
    return True


def _measured(doc: dict) -> bool:
    return not doc["device"].get("spec_only")


def _some(*tables: Table | None) -> list[Table]:
    return [t for t in tables if t is not None]


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


# ---------------------------------------------------------------- the summary

def _summary_tables(doc: dict) -> list[Table]:
    dev = doc["device"]
    return _some(None if dev.get("spec_only") else device_table(dev), roofs_table(doc), bracket_table(doc))


def _summary_blocks(v: View) -> list[Block]:
    if not _measured(v.doc):
        return []
    t = v.tables
    out: list[Block] = [Heading(2, SUMMARY.heading), TableBlock(t["device"])]
    if "brackets" in t:  # each roof between its witness and its physical limit; the plainer
        # measured-against-published table stays whole in roofs.csv and report.html
        out.append(TableBlock(t["brackets"]))
        if "roofs" in t:
            out.append(TableBlock(None, full=t["roofs"]))
    elif "roofs" in t:
        out.append(TableBlock(t["roofs"]))
    if "gemm" in t:
        out.append(TableBlock(t["gemm"]))
    return out + [Bullets(highlights(v.doc, v.roofline)), ROOFLINE_PICTURE]


SUMMARY = register(Section(name="summary", heading="Summary: device (P1, P3), roofs, the ladder",
                           tables=_summary_tables, blocks=_summary_blocks, when=_always, order=1))


# ---------------------------------------------------------------- the spec table

def _spec_rows(doc: dict):
    dev = doc["device"]
    return specs_for(dev.get("spec_key")) if dev.get("spec_only") else specs_for(None)


def _specs_tables(doc: dict) -> list[Table]:
    dev = doc["device"]
    specs = _spec_rows(doc)
    out = [specs_table(specs), tensor_table(specs)]
    if _measured(doc) and dev.get("tensor_peaks"):
        t = tensor_table([])
        t.title, t.key, t.rows = "Tensor-core arithmetic of this device (P2)", "tensor_device", device_tensor_rows(dev)
        out.append(t)
    return out


def _specs_blocks(v: View) -> list[Block]:
    this = _this_device(v.doc["device"])
    out: list[Block] = [Heading(2, SPECS.heading)]
    for key in ("specs", "tensor"):
        # a measured device's own tensor arithmetic follows; the spec table's row would repeat it
        short = None if key == "tensor" and "tensor_device" in v.tables else \
            _only(v.tables[key], this, f"{key}.csv, report.html, `rooflab specs`")
        out.append(TableBlock(short, full=v.tables[key]))
    if "tensor_device" in v.tables:
        out.append(TableBlock(v.tables["tensor_device"]))
    return out


SPECS = register(Section(name="specs", heading="Peaks from the spec table (P1, P2, P10)", tables=_specs_tables,
                         blocks=_specs_blocks, when=_always, order=2))


def _ridge_tables(doc: dict) -> list[Table]:
    return ridge_tables(doc["device"] if _measured(doc) else None)[0]


def _ridge_blocks(v: View) -> list[Block]:
    dev = v.doc["device"]
    ridge_all = v.tables["ridge_all"]
    measured_rows = (lambda r: str(r[0]).startswith(f"{dev['name']} (this device)")) if _measured(v.doc) \
        else _this_device(dev)
    short = _only(ridge_all, measured_rows, "ridge_all.csv, report.html, `rooflab ridge`")
    return [Heading(2, RIDGE.heading), TableBlock(v.tables["ridge_seed"]), TableBlock(short, full=ridge_all),
            Text(trend_paragraph(seed_ridges()))]


RIDGE = register(Section(name="ridge", heading="Ridge points (P5)", tables=_ridge_tables, blocks=_ridge_blocks,
                         when=_always, order=3))


# ---------------------------------------------------------------- the measured ceilings

def _flops_blocks(v: View) -> list[Block]:
    t = v.tables["flops"]
    return [Heading(2, FLOPS.heading), TableBlock(fma_by_launch(t), full=t), Paragraphs(flops_paragraphs(v.doc))]


FLOPS = register(Section(name="flops", heading="FP32 FMA peak (P6, P7)", tables=lambda doc: [flops_table(doc)],
                         paragraphs=flops_paragraphs, blocks=_flops_blocks, order=4))

TENSOR_PEAKS = register(Section(
    name="tensor_peaks", heading="Tensor-core roofs, measured (P2)", tables=lambda doc: _some(tensor_peak_table(doc)),
    when=lambda doc: bool(doc.get("flops")) and tensor_peak_table(doc) is not None, order=5))


def _bandwidth_blocks(v: View) -> list[Block]:
    t = v.tables
    return [Heading(2, BANDWIDTH.heading), TableBlock(t["bandwidth"]),
            TableBlock(t.get("bandwidth_sweep_by_block"), full=t.get("bandwidth_sweep")),
            Paragraphs(bandwidth_paragraphs(v.doc))]


BANDWIDTH = register(Section(name="bandwidth", heading="Copy bandwidth (P3, P4, P7)", tables=bandwidth_tables,
                             paragraphs=bandwidth_paragraphs, summaries=lambda doc: _some(sweep_by_block(doc)),
                             blocks=_bandwidth_blocks, order=6))


def _memory_tables(doc: dict) -> list[Table]:
    return [*memory_tables(doc), *_some(hierarchy_table(doc))]


def _memory_blocks(v: View) -> list[Block]:
    # the FP64/FP16 rates are in the summary's roofs table, beside their theoretical peaks; the
    # hierarchy table and its paragraph are the roofline's
    return [Heading(2, MEMORY.heading),
            *[TableBlock(None if t.key == "memory_peaks" and "roofs" in v.tables else t, full=t)
              for t in (v.tables.get(m.key, m) for m in memory_tables(v.doc))],
            Paragraphs(level_paragraphs(v.doc))]


MEMORY = register(Section(name="memory", heading="Memory hierarchy: L2, shared memory, FP64 and FP16",
                          tables=_memory_tables, paragraphs=lambda doc: level_paragraphs(doc) +
                          _some(hierarchy_paragraph(doc)), blocks=_memory_blocks, order=7))


# ---------------------------------------------------------------- the ladder

def _explained(doc: dict) -> list[str]:
    out = []
    for rec in doc["gemm"]["rungs"]:
        rung = rungs.get(rec["kernel"])
        explain = rec.get("explain") or (rung.explain if rung else "")
        if explain:
            out.append(f"**{rec['title']}** ({rec.get('stage', '')}): {explain}")
    return out


def _gemm_blocks(v: View) -> list[Block]:
    t = v.tables
    return [Heading(2, GEMM.heading),
            Text("The ladder's table (G9) is in the summary above; what each rung changes and why, in "
                 "report.html. " + ratios_sentence(t["ratios"]), where="md"),
            TableBlock(None, full=t["ratios"]),
            Heading(3, "What changed at each step (G10)"), Paragraphs(render_gemm.paragraphs(v.doc)),
            Heading(3, "The rungs", where="html"), Bullets(_explained(v.doc), where="html"),
            Heading(3, "Checks", where="html"), TableBlock(t.get("check_summary"), full=t["checks"])]


GEMM = register(Section(
    name="gemm", heading="SGEMM ladder (G1–G11)",
    tables=lambda doc: [render_gemm.gemm_table(doc), render_gemm.ratio_table(doc), render_gemm.check_table(doc)],
    paragraphs=render_gemm.paragraphs, summaries=lambda doc: _some(check_summary_table(doc)), blocks=_gemm_blocks,
    order=8))



# ---------------------------------------------------------------- what places every kernel

def _profile_blocks(v: View) -> list[Block]:
    doc = v.doc
    if not doc.get("profile"):
        return [Heading(2, PROFILE.heading), Text(f"Not run: {doc['report']['profile_skipped']}.")]
    t = v.tables["profile"]
    return [Heading(2, PROFILE.heading),
            Text(f"`{doc['profile']['command']}` — {doc['profile']['ncu_version']}. Every kernel's DRAM bytes, "
                 "FP32 FLOPs and AI: profile.csv and report.html; the verdicts: " + t.notes[0]),
            Bullets(profile_verdicts(t), where="md"), TableBlock(None, full=t)]


PROFILE = register(Section(
    name="profile", heading="Nsight Compute (P8)", tables=lambda doc: [profile_table(doc)] if doc.get("profile") else [],
    blocks=_profile_blocks, when=lambda doc: bool(doc.get("profile") or (doc.get("report") or {}).get("profile_skipped")),
    order=200))


def _points(doc: dict) -> list[Table]:
    rl = placement.roofline(doc)
    return [points_table(rl)] if rl.points else []  # a theoretical roofline places nothing: no header-only table


def _roofline_blocks(v: View) -> list[Block]:
    doc, t = v.doc, v.tables
    out: list[Block] = [Heading(2, ROOFLINE.heading)]
    if not _measured(doc):
        out += [ROOFLINE_PICTURE,
                Text("_Theoretical: nothing was measured, so no kernel is placed on it. The diamond marks where "
                     "y = a·x (AI 0.125) lands on the memory slope._")]
    if "roofline" in t:  # the hierarchy table holds each kernel's HBM placement too
        out.append(TableBlock(None, full=t["roofline"]) if "hierarchy" in t else TableBlock(t["roofline"]))
    if doc.get("memory"):
        out += [Heading(3, "The hierarchical roofline", where="html"),
                Picture("roofline-levels.png", "roofline by level", "levels")]
        if "hierarchy" in t:
            out += [TableBlock(t["hierarchy"]), Paragraphs(_some(hierarchy_paragraph(doc)))]
    return out


def _draw_roofline(suffix: str):
    def draw(doc: dict, path: str) -> None:
        from rooflab.report.picture import plot  # noqa: PLC0415

        plot(placement.roofline(doc), **{f"{suffix}_path": path})
    return draw


def _draw_levels(doc: dict, path: str) -> None:
    from rooflab.report.hierarchy_picture import plot_levels  # noqa: PLC0415

    plot_levels(doc, path)


def _roofline_figure(doc: dict):
    from rooflab.model import hierarchy as hier  # noqa: PLC0415
    from rooflab.report import interactive  # noqa: PLC0415

    return interactive.roofline_figure(doc, placement.roofline(doc), hier.hierarchy(doc) if doc.get("memory") else None)


def _levels_figure(doc: dict):
    from rooflab.report import interactive  # noqa: PLC0415

    h = placement.hierarchical_roofline(doc)
    return interactive.levels_figure(doc, h) if h is not None and h.kernels else None


ROOFLINE = register(Section(
    name="roofline", heading="Roofline (P9)", tables=_points, blocks=_roofline_blocks, when=_always, order=210,
    # the hierarchical roofline (L1/shared, L2, HBM) from ncu's bytes per level, with a memory section
    pictures=(Drawing("roofline.png", "roofline", _draw_roofline("png"), figure=_roofline_figure),
              Drawing("roofline.svg", "roofline", _draw_roofline("svg")),
              Drawing("roofline-levels.png", "roofline by level", _draw_levels, when=lambda doc: bool(doc.get("memory")),
                      figure=_levels_figure))))


# ---------------------------------------------------------------- how it was measured, the course

def _method_blocks(v: View) -> list[Block]:
    if not _measured(v.doc):
        return []
    tel = v.tables.get("telemetry")
    out: list[Block] = [Heading(2, METHOD.heading), Bullets([
        *([telemetry_sentence(tel)] if tel else []),
        ("Every kernel is compiled at run time with NVRTC (CuPy RawModule) for this device; every CUDA call "
         "is checked, and a failure names the kernel, the call and the CUDA error string (G11)."),
        ("Timing: CUDA events around each launch only (no host↔device copies), warm-up outside the "
         "measurement, medians reported with mean and min; NVML telemetry sampled during the reps."),
        ("Correctness first: outputs are poisoned with NaN before every checked run; a kernel that fails a "
         "check is shown as FAILED and gets no throughput.")])]
    if tel:  # report.md names the throttled measurements only
        out.append(TableBlock(_only(tel, lambda r: r[6] != "ok", "telemetry.csv, report.html"), full=tel))
    return out


METHOD = register(Section(name="method", heading="Method and telemetry", tables=lambda doc: _some(telemetry_table(doc)),
                          blocks=_method_blocks, when=_always, order=220))

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

COURSE_TEXT = ("rooflab began as the answer to two chapters of a CUDA course: a tiled matrix-multiply project "
               "(requirements G1–G12) and a bandwidth and peak-rate exercise (P1–P10). The headings carry those IDs; "
               "\"the seed\" is the course's starting code and text, whose kernels, checks and ratios are the "
               "ladder's first rungs. Where each requirement lands:")


def deliverables_table() -> Table:
    return Table("Where each course requirement lands", ["ID", "where", "what"],
                 [list(row) for row in DELIVERABLES])


def _course_blocks(v: View) -> list[Block]:
    if not _measured(v.doc):
        return [Heading(2, COURSE.heading), Text(COURSE_TEXT.removesuffix(" Where each requirement lands:"))]
    return [Heading(2, COURSE.heading), Text(COURSE_TEXT), TableBlock(deliverables_table())]


COURSE = register(Section(name="course", heading="From the course", tables=lambda doc: [], blocks=_course_blocks,
                          when=_always, order=230))
