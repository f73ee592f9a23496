"""`rooflab report`: the whole lab in one folder, built beside it and moved in whole."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from rooflab import signals
from rooflab.cli.app import cli, fail
from rooflab.cli.bench import given, parse_target
from rooflab.cli.options import GpuName, LadderOption, PositiveInt
from rooflab.cli_terminal import PlainProgress, err, interactive, out
from rooflab.errors import RooflabError, UsageError


@cli.command(short_help="the whole lab in one folder, roofline included")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="rooflab-report", show_default=True,
              help="Folder for report.md, report.html, results.json, the CSVs and roofline.png/.svg.")
@click.option("--n", type=PositiveInt(), default=4096, show_default=True, help="SGEMM size.")
@click.option("--quick", is_flag=True, help="Shorter: no launch sweep, N ≤ 2048, fewer reps.")
@click.option("--no-profile", is_flag=True, help="Skip Nsight Compute (the slowest step).")
@click.option("--gpu", type=GpuName(), default=None, cls=LadderOption,
              help="Spec-only report for a GPU from the table; measures nothing: {gpus}.")
@click.option("--from", "from_file", type=click.Path(dir_okay=False), default=None,
              help="Re-render a saved results.json (no GPU needed).")
@click.option("--devices", default=None, metavar="all|0,2,5",
              help="Every GPU of this node (or those listed), each measured by its own process; one merged "
                   "document, a node table with outliers, GPU-to-GPU links and all-reduce (see rooflab fleet).")
@click.option("--with", "with_kernels", multiple=True, metavar="FILE.cu:KERNEL",
              help="Your GEMM kernel in the ladder (repeatable): FILE.cu:KERNEL (16×16 blocks, one thread per "
                   "element of C) or module:function (a Python callable on CuPy arrays). For other launch "
                   "geometry use `rooflab bench` or the Python API.")
def report(out_dir, n, quick, no_profile, gpu, from_file, with_kernels, devices):
    """The whole lab in one command: device, specs, FMA peak, bandwidth, the SGEMM
    ladder, Nsight Compute, the roofline — written to --out as report.md,
    report.html (interactive, self-contained), results.json, CSV tables and
    roofline.png/.svg.

    With no GPU (or with --gpu NAME) it writes the spec-only report and says that
    nothing was measured. The report is built beside the folder's files and moved in
    whole: interrupted (Ctrl-C, SIGTERM, SIGHUP), it leaves the earlier report as it
    was and keeps what this run had in DIR/results.partial.json. Files in DIR that
    rooflab did not write are never replaced or removed.
    """
    import time  # noqa: PLC0415

    from rooflab import lab as rep  # noqa: PLC0415
    from rooflab import report_folder, results  # noqa: PLC0415
    from rooflab.report.telemetry import warnings  # noqa: PLC0415

    ctx = click.get_current_context()
    results.check_writable(out_dir, "--out", folder=True)
    if from_file and gpu:
        raise UsageError("--from renders a saved document and --gpu a GPU of the spec table: give one of them")
    if from_file or gpu:
        unused = given(ctx, "n", "quick", "no_profile", "with_kernels", "devices")
        if unused:
            raise UsageError(f"{'--from' if from_file else '--gpu'} measures nothing: "
                             f"{', '.join(unused)} would have no effect")
    if devices:
        if with_kernels:
            raise UsageError("--devices measures this node's GPUs: it takes no --with")
        from rooflab.cli.fleet import report_devices  # noqa: PLC0415

        report_devices(ctx, devices=devices, out_dir=out_dir, quick=quick, n=n, profile=not no_profile)
        return
    report_folder.check(out_dir, source=from_file)
    t0 = time.perf_counter()
    doc: dict = {}
    current = {"step": None}
    try:
        if from_file:
            doc.update(results.load(from_file))
            if not doc.get("device"):
                raise UsageError(f"{from_file}: has no device section to report on")
        else:
            extra = [_with_kernel(spec) for spec in with_kernels]
            cfg = rep.ReportConfig(out_dir=out_dir, n=n, quick=quick, profile=not no_profile, gpu=gpu, extra=extra)
            with report_progress(len(rep.steps(cfg)), current) as (on_step, say):
                rep.run(cfg, on_step=on_step, progress=say, doc=doc)
            if (doc.get("report") or {}).get("no_gpu"):
                err.print(f"warning: no GPU here ({doc['report']['no_gpu']}); writing the spec-only report for "
                          f"{doc['device']['name']} (choose another with --gpu)", markup=False, style="yellow")
                for spec in with_kernels:
                    err.print(f"warning: --with {spec}: not run (no GPU here to run it)", markup=False,
                              style="yellow")
        current["step"] = "writing the report"
        written, earlier, removed, no_manifest = report_folder.publish(doc, out_dir, rep.write_outputs)
    except UsageError:
        raise
    except (KeyboardInterrupt, RooflabError, OSError) as exc:
        _report_stopped(exc, {} if from_file else doc, out_dir, current["step"])  # --from's is in its file
    if no_manifest:
        err.print(f"warning: could not record the files of this report in {out_dir}/{results.MANIFEST} "
                  f"({no_manifest}); a later report here will not remove them", markup=False, style="yellow")
    for w in warnings(doc):
        err.print(f"warning: {w}", markup=False, style="yellow")
    if "report.html" not in written:
        from rooflab.report.html import unavailable  # noqa: PLC0415

        err.print(f"warning: report.html not written: {unavailable()}", markup=False, style="yellow")
    out.print(f"wrote {out_dir}/: {', '.join(written)}", markup=False, soft_wrap=True)
    if earlier:
        again = len(set(earlier) & set(written))
        out.print(f"replaced the earlier report in {out_dir}/ ({again} of its files written again"
                  + (f"; removed {', '.join(removed)}: this run does not write them)" if removed else ")"),
                  markup=False, soft_wrap=True)
    if doc["device"].get("spec_only"):
        out.print("[bold]spec-only report: nothing was measured[/bold]")
    out.print(f"done in {time.perf_counter() - t0:.1f} s")


def _with_kernel(spec: str):
    """A --with FILE.cu:KERNEL or module:function, as a rung record for the ladder."""
    path, _, name = spec.rpartition(":")
    common = {"block": "16,16", "grid": None, "options": (), "shared_mem": 0, "framework": "cupy",
              "precision": "fp32"}
    t = parse_target(path, name, **common) if path.endswith((".cu", ".cuh")) else parse_target(spec, None, **common)
    return t.rung("gemm")


@contextlib.contextmanager
def report_progress(total: int, current: dict):
    """(on_step, say) for the report: a bar on a terminal, `… step` lines elsewhere."""
    if not interactive():
        plain = PlainProgress()

        def on_plain_step(name):
            current["step"] = name
            plain.step(name)

        yield on_plain_step, plain.say  # the last step's line is dropped: what it did is said next
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    columns = [TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TimeElapsedColumn(), TextColumn("[dim]{task.fields[detail]}")]
    with Progress(*columns, console=err) as prog:
        task = prog.add_task("report", total=total, detail="")

        def on_step(name):
            if current["step"]:
                prog.advance(task)
            current["step"] = name
            prog.update(task, description=name, detail="")

        yield on_step, lambda msg: prog.update(task, detail=msg)


def _report_stopped(exc: BaseException, doc: dict, out_dir: str, step: str | None) -> None:
    """A report that a signal, an error or a failed write stopped: the folder keeps the earlier
    report; what this run had is saved in DIR/results.partial.json; one error line, its exit code."""
    from rooflab import report_folder, results  # noqa: PLC0415

    interrupted = isinstance(exc, KeyboardInterrupt)
    if interrupted:
        signals.ignore_more()
        if getattr(exc, "report_in_place", False):  # it came while the report moved in: that finished
            fail(f"report {signals.name(exc)} after it was written: {out_dir}/ holds the new report",
                 signals.exit_code(exc))
    finished = (doc.get("report") or {}).get("finished_steps", [])
    partial = None
    note = ""
    if doc.get("device"):
        try:
            partial = report_folder.save_partial(out_dir, doc)
        except OSError as write_exc:  # not in the folder either: anywhere it can go
            note = "; " + results.cannot_write(Path(out_dir) / report_folder.PARTIAL, write_exc, doc)
    what = signals.name(exc) if interrupted else f"stopped: {exc}"
    code = signals.exit_code(exc) if interrupted else getattr(exc, "exit_code", 1)
    if isinstance(exc, OSError):
        what = f"stopped: cannot write {exc.filename or out_dir} ({results.why(exc, exc.filename)})"
    fail(f"report {what} during '{step or 'start'}'; finished: {', '.join(finished) or 'nothing'}"
         + (f"; results so far in {partial} (render with rooflab report --from {partial})" if partial else "")
         + note + f"; the report in {out_dir}/ was not changed", code)
