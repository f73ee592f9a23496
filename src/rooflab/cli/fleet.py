"""`rooflab fleet ...`: many GPUs, one node or many.

    fleet report      every GPU measured by its own process, links, all-reduce, one merged document
    fleet merge DIR   merge the per-GPU documents a run left in DIR (again, or with a baseline)
    fleet links       GPU-to-GPU and host<->GPU copy bandwidth on this node
    fleet allreduce   NCCL all-reduce bus bandwidth on this node

The work is in rooflab.fleet (the processes a run starts are `python -m rooflab.fleet.worker ...`,
never a command-line module); here are the options and what is shown.
"""

from __future__ import annotations

import os

import click

from rooflab.cli.app import cli, fail
from rooflab.cli.options import Count, PositiveInt, check_out, format_option, out_option
from rooflab.cli.output import emit, progress_status
from rooflab.cli_terminal import PlainProgress, err, out
from rooflab.cuda.safe_env import apply_safe_env
from rooflab.errors import UsageError

apply_safe_env()  # NVLink multicast off before anything in this process can load NCCL, and in every child


@cli.group("fleet", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def fleet():
    """Many GPUs: per-GPU reports side by side, links, all-reduce, outliers.

    \b
    rooflab fleet report --devices all --out DIR      one node, every GPU
    torchrun --nproc-per-node 8 -m rooflab fleet report --shared-dir DIR
    srun --ntasks-per-node 8 python -m rooflab fleet report --shared-dir DIR
    mpirun -n 16 python -m rooflab fleet report --shared-dir DIR
    rooflab fleet merge DIR [--baseline old/fleet.json]

    NVLink multicast (NVLS) is kept off: NCCL_NVLS_ENABLE=0,
    TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 are forced in
    rooflab and in every process it starts.
    """
    apply_safe_env()


def _show_fleet(doc: dict, fmt: str) -> None:
    from rooflab.report import fleet as render  # noqa: PLC0415

    emit(doc, render.tables(doc), render.paragraphs(doc), fmt, None)


def _fail_on_outliers(doc: dict) -> None:
    flagged = {o.get("uuid") for o in doc["fleet"].get("outliers") or []}
    if flagged:
        fail(f"{len(flagged)} GPU(s) flagged as outliers (--fail-on-outlier)", 1)


@fleet.command("report")
@click.option("--devices", default=None, help="GPUs to measure from one process: 'all' (default) or CUDA "
              "ordinals / UUIDs, e.g. 0,2,5. Not under a launcher (each rank measures its own GPU).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for everything (default rooflab-fleet).")
@click.option("--shared-dir", type=click.Path(file_okay=False), default=None,
              help="Under torchrun/srun/mpirun: a folder every rank can write (shared between nodes).")
@click.option("--quick", is_flag=True, help="Shorter: the lab's quick settings, no sweep, fewer reps, "
              "all-reduce sizes in steps of 4x.")
@click.option("--n", type=PositiveInt(), default=4096, show_default=True, help="SGEMM size per GPU.")
@click.option("--profile/--no-profile", default=False, show_default=True, help="Nsight Compute per GPU (slow).")
@click.option("--no-render", is_flag=True, help="No per-GPU report.md/roofline (the documents only).")
@click.option("--no-links", is_flag=True, help="Skip the GPU-to-GPU and host copies.")
@click.option("--no-allreduce", is_flag=True, help="Skip the NCCL all-reduce.")
@click.option("--no-torch-peer", is_flag=True, help="Skip PyTorch's peer copy (measured where torch imports).")
@click.option("--link-size", type=Count(), default="256M", show_default=True,
              help="Bytes per link copy (K/M/G binary).")
@click.option("--ar-min", type=Count(), default="1K", show_default=True, help="Smallest all-reduce message, bytes.")
@click.option("--ar-max", type=Count(), default="1G", show_default=True, help="Largest all-reduce message, bytes.")
@click.option("--ar-factor", type=PositiveInt(), default=None,
              help="Step between all-reduce sizes (default 2; 4 with --quick).")
@click.option("--outlier-pct", type=float, default=5.0, show_default=True,
              help="Flag a GPU this many percent below the fleet median (or the baseline).")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="An earlier fleet.json (matched by UUID) or single-GPU results.json to compare against.")
@click.option("--fail-on-outlier", is_flag=True, help="Exit 1 when any GPU is an outlier (for CI / regression checks).")
@click.option("--timeout", "timeout_s", type=float, default=1800.0, show_default=True,
              help="Seconds one GPU's measurement may take.")
@click.option("--step-timeout", type=float, default=600.0, show_default=True,
              help="Seconds each node step (links, all-reduce, torch peer copy) may take.")
@click.option("--wait-timeout", type=float, default=3600.0, show_default=True,
              help="Launcher runs: seconds to wait for the other ranks.")
def report(devices, out_dir, shared_dir, quick, n, profile, no_render, no_links, no_allreduce, no_torch_peer,
           link_size, ar_min, ar_max, ar_factor, outlier_pct, baseline, fail_on_outlier, timeout_s, step_timeout,
           wait_timeout):
    """Measure every GPU (each in its own process, in parallel), then each node's links
    and all-reduce (alone), and merge everything into DIR/fleet.json and DIR/fleet.md.

    Under torchrun, srun or mpirun each rank measures its own GPU (local rank →
    GPU) and writes it to --shared-dir; local rank 0 of each node measures the node's
    links once every rank is done, and rank 0 merges.
    """
    from rooflab.fleet import layout, orchestrate  # noqa: PLC0415

    if out_dir and shared_dir and os.path.abspath(out_dir) != os.path.abspath(shared_dir):
        raise UsageError("--out and --shared-dir name the same folder: give one of them")
    root = shared_dir or out_dir or orchestrate.FleetConfig.out_dir
    cfg = orchestrate.FleetConfig(out_dir=root, devices=devices or "all", quick=quick, n=n, profile=profile,
                                  render_gpu_reports=not no_render, links=not no_links, allreduce=not no_allreduce,
                                  torch_peer=not no_torch_peer, link_bytes=link_size, ar_min=ar_min, ar_max=ar_max,
                                  ar_factor=ar_factor, outlier_pct=outlier_pct, baseline=baseline,
                                  worker_timeout_s=timeout_s, step_timeout_s=step_timeout,
                                  wait_timeout_s=wait_timeout)
    doc, info = orchestrate.run(cfg, PlainProgress().say, devices_given=bool(devices))
    if doc is None:
        err.print(f"rank {info.rank}/{info.world_size}: done; rank 0 merges into {root}/{layout.MERGED_JSON}",
                  markup=False)
        return
    _show_fleet(doc, "table")
    out.print(f"wrote {root}/: {layout.MERGED_JSON}, {layout.MERGED_MD}, {layout.MERGED_CSV}, "
              f"{layout.GPUS}/, {layout.NODES}/, {layout.LOGS}/", markup=False)
    problems = doc["fleet"].get("errors") or []
    if problems:
        fail(f"{len(problems)} problem(s); see {root}/{layout.MERGED_MD}", 1)
    if fail_on_outlier:
        _fail_on_outliers(doc)


@fleet.command("merge")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("--outlier-pct", type=float, default=5.0, show_default=True)
@click.option("--baseline", type=click.Path(dir_okay=False, exists=True), default=None)
@click.option("--fail-on-outlier", is_flag=True, help="Exit 1 when any GPU is an outlier.")
@format_option
def merge_cmd(directory, outlier_pct, baseline, fail_on_outlier, fmt):
    """Merge DIR/gpus/*.json and DIR/nodes/*.json into DIR/fleet.json and fleet.md (after a
    launcher run whose rank 0 did not finish, or again with another threshold or baseline)."""
    from rooflab.fleet import merge  # noqa: PLC0415

    doc, written = merge.merge_dir(directory, outlier_pct=outlier_pct, baseline=baseline)
    _show_fleet(doc, fmt)
    err.print(f"wrote {directory}/: {', '.join(written)}", markup=False)
    if fail_on_outlier:
        _fail_on_outliers(doc)


@fleet.command("links")
@click.option("--devices", default=None, help="GPUs: all (default) or ordinals / UUIDs.")
@click.option("--size", type=Count(), default="256M", show_default=True, help="Bytes per copy (K/M/G binary).")
@click.option("--reps", type=PositiveInt(), default=20, show_default=True)
@click.option("--no-host", is_flag=True, help="Skip pinned host <-> GPU copies.")
@click.option("--no-sm", is_flag=True, help="Skip the SM (kernel) copies.")
@click.option("--torch", "with_torch", is_flag=True, help="Also PyTorch's tensor.copy_ between GPUs.")
@format_option
@out_option
def links_cmd(devices, size, reps, no_host, no_sm, with_torch, fmt, out_file):
    """GPU-to-GPU bandwidth matrices (copy engine and SM copy, one and both directions)
    and pinned host <-> GPU, every copy checked before it is timed; NVLink/PCIe kind
    and theoretical rate from NVML."""
    from rooflab.fleet import local  # noqa: PLC0415
    from rooflab.measure import links  # noqa: PLC0415
    from rooflab.model.fleet.checks import links_failed  # noqa: PLC0415
    from rooflab.report import fleet as render  # noqa: PLC0415

    check_out(fmt, out_file)
    cfg = links.LinksConfig(nbytes=size, reps=reps, host=not no_host, sm_copy=not no_sm)
    cfg.validate()
    local.choose_devices(devices)
    with progress_status("links") as say:
        doc = local.measure_links(cfg, say, with_torch=with_torch)
    emit(doc, render.link_tables(doc), [], fmt, out_file)
    if any(links_failed(sec) for sec in doc["fleet"]["links"].values()):
        fail("one or more copies FAILED their check or could not run", 1)


@fleet.command("allreduce")
@click.option("--devices", default=None, help="GPUs: all (default) or ordinals / UUIDs.")
@click.option("--min", "min_size", type=Count(), default="1K", show_default=True, help="Smallest message, bytes.")
@click.option("--max", "max_size", type=Count(), default="1G", show_default=True, help="Largest message, bytes.")
@click.option("--factor", type=PositiveInt(), default=2, show_default=True, help="Step between sizes.")
@click.option("--reps", type=PositiveInt(), default=20, show_default=True)
@format_option
@out_option
def allreduce_cmd(devices, min_size, max_size, factor, reps, fmt, out_file):
    """NCCL all-reduce bus bandwidth against message size (nccl-tests' algbw/busbw),
    every size checked for the right sum on every GPU before it is timed."""
    from rooflab.fleet import local  # noqa: PLC0415
    from rooflab.measure import collectives  # noqa: PLC0415
    from rooflab.model.fleet.checks import allreduce_problem  # noqa: PLC0415
    from rooflab.report import fleet as render  # noqa: PLC0415

    check_out(fmt, out_file)
    cfg = collectives.AllreduceConfig(min_bytes=min_size, max_bytes=max_size, factor=factor, reps=reps)
    cfg.validate()
    local.choose_devices(devices)
    with progress_status("all-reduce") as say:
        doc = local.measure_allreduce(cfg, say)
    emit(doc, render.allreduce_tables(doc), [], fmt, out_file)
    problem = next(filter(None, map(allreduce_problem, doc["fleet"]["allreduce"].values())), None)
    if problem:
        fail(problem, 1)


def report_devices(ctx: click.Context, **kwargs) -> None:
    """For `rooflab report --devices ...`: run `fleet report` with the given options
    (e.g. devices=..., out_dir=..., quick=..., n=..., profile=...); the rest default."""
    ctx.invoke(report, **kwargs)
