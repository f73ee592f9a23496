"""`rooflab sweep`: speed against problem size."""

from __future__ import annotations

import click

from rooflab.cli.app import cli
from rooflab.cli.options import FORMATS, Kernels, LadderOption, PositiveFloat, PositiveInt
from rooflab.cli.output import emit, measure
from rooflab.cli_terminal import err
from rooflab.errors import OutputError, UsageError


@cli.command(short_help="speed against problem size: GEMM TFLOP/s by N, copy GB/s by array size")
@click.option("--sizes", default="256..16384", show_default=True,
              help="GEMM sizes N (M = N = K): A..B doubles from A up to B; or a comma list (256,1000,4096); "
                   "or both (256..4096,6000). K suffixes allowed (16K).")
@click.option("--kernels", type=Kernels(), default=None, cls=LadderOption,
              help="Comma-separated rungs: {ladder} (default: the ladder's SIMT and tensor rungs, no Triton).")
@click.option("--copy-sizes", default="256K..4G", show_default=True,
              help="Bytes per array for the copy sweep, the same forms (K/M/G binary): where two arrays "
                   "stop fitting in the L2, the copy falls to HBM speed.")
@click.option("--no-copy", is_flag=True, help="Sweep the GEMM rungs only.")
@click.option("--no-gemm", is_flag=True, help="Sweep the copy only.")
@click.option("--reps", type=PositiveInt(), default=20, show_default=True,
              help="The most timed reps at any size; fewer at large N (20 up to 1024, 10 to 4096, 5 to 8192, "
                   "then 3) and where a launch is long.")
@click.option("--max-launch-s", type=PositiveFloat(600, "a sweep should finish"), default=0.5, show_default=True,
              help="A rung whose launch would take longer (predicted from its time at the previous size, "
                   "times the N³ ratio) is not run at that size or above; its rows say why.")
@click.option("--seed", type=PositiveInt(high=2**32 - 2, low=0, why="seeds are 32-bit"), default=None,
              help="Random seed (default: fresh each run).")
@click.option("--from", "from_file", type=click.Path(dir_okay=False), default=None,
              help="Render from a saved results.json with a sweep section (no GPU needed).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="rooflab-sweep", show_default=True,
              help="Folder for sweep.png, sweep.csv (every rung at every size), sweep_tflops.csv, "
                   "sweep_copy.csv and results.json.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="What is printed: table for people; json, csv or md for scripts.")
def sweep(sizes, kernels, copy_sizes, no_copy, no_gemm, reps, max_launch_s, seed, from_file, out_dir, fmt):
    """Speed against problem size: each selected rung checked (float64 reference, guard zones,
    determinism) and timed at each N, drawn as TFLOP/s against N with the roofs as horizontal
    lines; and the copy's bandwidth against array size (the L2-to-HBM cliff).

    Slow rungs stop where a launch would pass --max-launch-s (the naive kernel from about
    N = 8192 on an H200), and large sizes get few reps, so that the default sweep of the
    ladder's SIMT and tensor rungs over 256..16384 stays within a few minutes.

    It is a command of its own rather than `gemm --sizes`: it sweeps the copy too and writes a
    folder (sweep.png, its CSVs, results.json); `rooflab report` carries a shorter sweep.
    """
    from rooflab import lab, results  # noqa: PLC0415
    from rooflab.measure import sweep as sweep_mod  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    if no_copy and no_gemm:
        raise UsageError("--no-copy and --no-gemm leave nothing to sweep")
    results.check_writable(out_dir, "--out", folder=True)
    if from_file:
        doc = results.load(from_file)
        if not doc.get("sweep"):
            raise UsageError(f"{from_file}: has no sweep section (run rooflab sweep on a GPU first)")
    else:
        cfg = sweep_mod.SweepConfig(sizes=sweep_mod.parse_sizes(sizes), reps=reps, max_launch_s=max_launch_s,
                                    copy_sizes=sweep_mod.parse_bytes(copy_sizes), copy=not no_copy,
                                    gemm=not no_gemm, seed=seed)
        if kernels:
            cfg.kernels = kernels
        doc = measure("size sweep", sweep=lab.sweep_section(**vars(cfg)))
    try:
        written = lab.write_sweep_outputs(doc, out_dir)
    except OSError as exc:
        raise OutputError(results.cannot_write(exc.filename or out_dir, exc, None if from_file else doc)) from None
    err.print(f"wrote {out_dir}/: {', '.join(written)}", markup=False, soft_wrap=True)
    tables, _ = shown(doc, "sweep")
    if fmt == "csv":  # the long table, every rung at every size, is the one scripts want
        tables = sorted(tables, key=lambda t: t.key != "sweep")
    emit(doc, tables, [], fmt, None)
