"""The commands that need no GPU: specs, ridge, roofline (from a document or the spec table), compare."""

from __future__ import annotations

import click

from rooflab.cli.app import cli
from rooflab.cli.bench import given
from rooflab.cli.options import GpuName, LadderOption, PositiveInt, check_out, format_option, out_option
from rooflab.cli.output import detect_device, emit, measure, new_doc
from rooflab.cli_terminal import err
from rooflab.errors import OutputError, UsageError


def _maybe_device() -> dict | None:
    """The present device, or None where there is no GPU (spec-only commands work anyway)."""
    from rooflab.errors import NoGPUError  # noqa: PLC0415

    try:
        return detect_device()[1]
    except NoGPUError:
        return None


@cli.command(short_help="published peaks and their arithmetic (P1, P2, P10)")
@click.option("--gpu", type=GpuName(), default=None, cls=LadderOption,
              help="One GPU from the table (default: all): {gpus}.")
@click.option("--no-detect", is_flag=True, help="Do not look for a GPU here.")
@format_option
@out_option
def specs(gpu, no_detect, fmt, out_file):
    """Published peaks and the arithmetic behind them (P1, P2, P10). No GPU needed.

    FP32 peak = SMs × FP32 cores/SM × 2 (an FMA is 2 FLOP) × clock, with the
    "forgot FMA = 2" figure beside it; the published dense BF16 rate worked back to
    FLOP/cycle, FLOP/SM/cycle and FMA/SM/cycle. With a GPU present, its own
    attributes are added.
    """
    from rooflab.report.specs import (  # noqa: PLC0415
        device_table,
        device_tensor_rows,
        specs_for,
        specs_table,
        tensor_table,
    )

    check_out(fmt, out_file)
    chosen = specs_for(gpu)
    tables = [specs_table(chosen), tensor_table(chosen)]
    entry = None if no_detect else _maybe_device()
    if entry:
        tables.insert(0, device_table(entry))
        if entry.get("tensor_peaks"):
            tables[-1].rows += device_tensor_rows(entry)
    doc = new_doc(entry)
    doc["specs"] = [s.to_dict() for s in chosen]
    emit(doc, tables, [], fmt, out_file)


@cli.command(short_help="ridge points per GPU and precision (P5)")
@click.option("--no-detect", is_flag=True, help="Do not look for a GPU here.")
@format_option
@out_option
def ridge(no_detect, fmt, out_file):
    """Ridge points, peak FLOP/s ÷ bandwidth in FLOP/byte (P5). No GPU needed.

    The seed's four (A100 BF16, H100 BF16, H100 FP8, B200 FP4) sorted, every GPU and
    precision in the spec table, the present device if there is one, and where the
    scalar×vector kernel y = a·x (0.125 FLOP/byte) falls.
    """
    from rooflab.report.specs import ridge_tables  # noqa: PLC0415

    check_out(fmt, out_file)
    entry = None if no_detect else _maybe_device()
    tables, trend = ridge_tables(entry)
    doc = new_doc(entry)
    doc["ridge"] = [t.to_dict() for t in tables]
    emit(doc, tables, [("Trend", trend)], fmt, out_file)


@cli.command(short_help="the roofline picture with every kernel placed on it (P9)")
@click.option("--from", "from_file", type=click.Path(dir_okay=False), default=None,
              help="Render from a saved results.json (no GPU needed).")
@click.option("--gpu", type=GpuName(), default=None, cls=LadderOption,
              help="Theoretical roofline of a GPU from the spec table (no GPU needed): {gpus}.")
@click.option("--n", type=PositiveInt(), default=4096, show_default=True, help="GEMM size when measuring.")
@click.option("--out", "out_png", type=click.Path(dir_okay=False), default="roofline.png", show_default=True,
              help="The picture file. Its extension picks the format: .png (150 dpi), .svg or .pdf; "
                   "only that file is written.")
@click.option("--levels", is_flag=True,
              help="Also the hierarchical roofline (L1/shared, L2 and HBM slopes; each kernel placed once per "
                   "level from Nsight Compute's bytes), written beside it as NAME-levels.png.")
@format_option
def roofline(from_file, gpu, n, out_png, fmt, levels):
    """The roofline (P9): FP32 roof, HBM slope, tensor roofs dashed, every kernel placed.

    Without --from or --gpu it measures first (FMA peak, copy, the SGEMM ladder at --n).
    It writes one file, --out, as PNG, SVG or PDF by its extension. Points use the AI
    Nsight Compute measured when the results hold a profile, else the rung's traffic model.
    """
    from rooflab import results  # noqa: PLC0415
    from rooflab.lab import spec_device_entry  # noqa: PLC0415
    from rooflab.model import placement  # noqa: PLC0415
    from rooflab.report.picture import image_format, save  # noqa: PLC0415
    from rooflab.report.points import points_table  # noqa: PLC0415

    image_format(out_png)  # a name that says no format fails here, before anything is loaded or measured
    results.check_writable(out_png, "--out")
    if from_file and gpu:
        raise UsageError("--from draws a saved document and --gpu a GPU of the spec table: give one of them")
    unused = given(click.get_current_context(), "n") if from_file or gpu else []
    if unused:
        raise UsageError(f"{'--from' if from_file else '--gpu'} measures nothing: {', '.join(unused)} would have "
                         "no effect")
    if from_file:
        doc = results.load(from_file)
        if not doc.get("device"):
            raise UsageError(f"{from_file}: has no device section to draw a roofline for")
    elif gpu:
        doc = new_doc(spec_device_entry(gpu))
    else:
        from rooflab import lab  # noqa: PLC0415

        doc = measure("measuring", **lab.roofline_sections(n))
    rl = placement.roofline(doc)
    try:
        err.print(f"wrote {save(rl, out_png)}", markup=False)
        if levels:
            from pathlib import Path  # noqa: PLC0415

            from rooflab.report.hierarchy_picture import plot_levels  # noqa: PLC0415

            lv = Path(out_png).with_name(Path(out_png).stem + "-levels.png")
            plot_levels(doc, lv)
            err.print(f"wrote {lv}", markup=False)
    except OSError as exc:  # only a measured document is worth keeping elsewhere
        raise OutputError(results.cannot_write(exc.filename or out_png, exc, None if from_file or gpu else doc)) from None
    emit(doc, [points_table(rl)] if rl.points else [], [], fmt, None)


@cli.command(short_help="two results files side by side, with ratios")
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
@format_option
def compare(a, b, fmt):
    """Two results files side by side: rung-by-rung and ceiling-by-ceiling ratios.

    A and B are results.json files from `rooflab report` (or any rooflab command's
    --format json): two GPUs, two dates, two versions.
    """
    from rooflab import results  # noqa: PLC0415
    from rooflab.report.compare import compare_tables  # noqa: PLC0415

    da, db = results.load(a), results.load(b)
    doc = {"format": results.FORMAT, "compare": {"a": a, "b": b}}
    tables = compare_tables(da, db)
    doc["tables"] = [t.to_dict() for t in tables]
    emit(doc, tables, [], fmt, None)
