"""`rooflab trace`: a whole program's kernels on this GPU's roofline."""

from __future__ import annotations

import click

from rooflab.cli.app import cli
from rooflab.cli.options import check_out, format_option, out_option
from rooflab.cli.output import emit, progress_status
from rooflab.cli_terminal import err
from rooflab.errors import RooflabError


@cli.command(short_help="every kernel of your program on this GPU's roofline, ranked by the time to win",
             context_settings={"allow_interspersed_args": False})
@click.option("--range", "window", default=None, metavar="NAME",
              help="Only the kernels launched inside the last range called NAME (torch.profiler.record_function).")
@click.option("--coverage", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Profile the fewest kernel groups that hold this share of the GPU time...")
@click.option("--cap", type=click.IntRange(min=1), default=12, show_default=True, help="...but at most this many.")
@click.option("--samples", type=click.IntRange(min=1), default=3, show_default=True,
              help="Launches of each group Nsight Compute profiles.")
@click.option("--max-launches", type=click.IntRange(min=1), default=200, show_default=True,
              help="Launches Nsight Compute profiles in all, at most.")
@click.option("--budget", type=click.FloatRange(0, min_open=True), default=600.0, show_default=True,
              help="Seconds for the whole trace, every run of the command included.")
@click.option("--ceilings", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A results.json of this GPU (rooflab report) to take the roofs from; else cached or measured once.")
@click.option("--no-baseline", is_flag=True, help="Skip the untraced run that measures the tracing overhead.")
@click.option("--no-profile", is_flag=True, help="Times only: no Nsight Compute, nothing placed.")
@click.option("--roofline", "picture", type=click.Path(dir_okay=False), default=None,
              help="Also draw the kernels on the roofline (PNG, SVG or PDF by the extension).")
@format_option
@out_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def trace(window, coverage, cap, samples, max_launches, budget, ceilings, no_baseline, no_profile, picture, fmt,
          out_file, command):
    """Every kernel COMMAND launches, grouped by kernel and launch shape, the groups that hold most
    of the GPU time profiled with Nsight Compute and placed on this GPU's measured hierarchical
    roofline, ranked by headroom: the time there is to win.

    \b
      rooflab trace -- python train.py --steps 1
      rooflab trace --range step --roofline trace.png -- python examples/transformer_step.py

    A Python COMMAND is traced with torch.profiler in its own process (torch needed); any other
    with Nsight Compute's timeline. The command runs up to three times: untraced (for the
    overhead), traced, and under Nsight Compute. Exit codes: 127 command not found, 6 it failed,
    7 it launched no kernel, 124 the budget ended (what was measured is kept and named).
    """
    from rooflab import results, tracing  # noqa: PLC0415
    from rooflab.report import trace as render  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    check_out(fmt, out_file)
    cfg = tracing.TraceConfig(command=list(command), coverage=coverage, cap=cap, per_group=samples,
                              max_launches=max_launches, budget_s=budget, window=window, ceilings=ceilings,
                              baseline=not no_baseline, profile=not no_profile)
    doc: dict = {}
    try:
        with progress_status("tracing") as say:
            tracing.run(cfg, progress=say, doc=doc)
    except RooflabError as exc:
        if doc.get("trace"):
            path, why = results.save_fallback(doc)
            exc.args = (f"{exc}; what was measured is in {path}" if path else f"{exc}; not saved: {why}",)
        raise
    if picture:
        render.plot(doc, picture)
        err.print(f"wrote {picture}", markup=False)
    emit(doc, *shown(doc, "trace"), fmt, out_file)
