"""`rooflab fleet ...`: many GPUs, one node or many. Only this module (and cli.py)
prints or exits.

`register(cli)` adds the `fleet` group to rooflab's command line; the processes a fleet run
starts are `python -m rooflab.fleet.worker ...`, never this module.

    fleet report      every GPU measured by its own process, links, all-reduce, one merged document
    fleet merge DIR   merge the per-GPU documents a run left in DIR (again, or with a baseline)
    fleet links       GPU-to-GPU and host<->GPU copy bandwidth on this node
    fleet allreduce   NCCL all-reduce bus bandwidth on this node
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from rooflab.cuda.safe_env import apply_safe_env

apply_safe_env()  # before anything here can load NCCL, and inherited by every child

FORMATS = ["table", "json", "md"]


# Self-contained on purpose: cli.py is edited by others; this module needs none of its helpers.
_out = Console(highlight=False, soft_wrap=False, width=200 if not sys.stdout.isatty() else None)
_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _say(msg: str) -> None:
    _err.print(f"… {msg}", markup=False, style="dim")


def _count(text: str) -> int:
    """'256M' -> 268435456 (binary suffixes K, M, G), or a plain integer."""
    from rooflab.errors import UsageError

    t = str(text).strip().upper()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if mult > 1 else t) * mult)
    except ValueError:
        raise UsageError(f"not a size: {text!r} (use e.g. 1048576, 256M or 1G)") from None


def _show(table) -> None:
    t = RichTable(title=table.title, title_justify="left", title_style="bold")
    for c in table.columns:
        t.add_column(c, overflow="fold")
    for row in table.rows:
        t.add_row(*["—" if v is None else str(v) for v in row])
    _out.print(t)
    for note in table.notes:
        _out.print(f"  [dim]{escape(note)}[/dim]")
    _out.print()


def _emit(doc: dict, tables: list, paras: list[tuple[str, str]], fmt: str, out_file: str | None) -> None:
    from rooflab import results

    if fmt == "json":
        text = results.dumps(doc)
    elif fmt == "md":
        text = "\n".join(t.to_markdown() for t in tables) + "\n" + "".join(f"**{a}.** {b}\n\n" for a, b in paras)
    else:
        for t in tables:
            _show(t)
        for title, text in paras:
            _out.print(f"[bold]{title}.[/bold] ", end="")
            _out.print(text, markup=False)
            _out.print()
        return
    if out_file:
        results.write_atomic(out_file, text)
        _err.print(f"wrote {out_file}")
    else:
        sys.stdout.write(text)


@contextlib.contextmanager
def _status(first: str):
    """A spinner on stderr following the library's progress callback (plain lines when not a terminal)."""
    if not _err.is_terminal:
        yield _say
        return
    with _err.status(first) as st:
        yield lambda msg: st.update(msg)


def _show_doc(doc: dict, fmt: str, out_file: str | None) -> None:
    from rooflab.report import fleet as render

    _emit(doc, render.tables(doc), render.paragraphs(doc), fmt, out_file)


def _references() -> dict:
    from rooflab.model.fleet import reference

    return {"torch_2xh200": reference.TORCH_2XH200}


def _check_fmt(fmt: str, out_file: str | None) -> None:
    from rooflab.errors import UsageError

    if out_file and fmt == "table":
        raise UsageError("--out needs --format json or md")


def _select_here(devices: str | None) -> None:
    """--devices for the in-process commands: set CUDA_VISIBLE_DEVICES before CUDA starts."""
    if not devices or devices.strip().lower() == "all":
        return
    from rooflab.errors import UsageError
    from rooflab.fleet import orchestrate
    from rooflab.cuda.inventory import select

    if "cupy" in sys.modules:
        raise UsageError("--devices must be chosen before CUDA is initialised in this process")
    inv, _note = orchestrate.inventory_here()
    os.environ.update(orchestrate.cuda_env(select(inv, devices)))


format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                             help="table for people; json (the full document) or md for files.")
out_option = click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
                          help="Write the output to FILE (atomically); needs --format json or md.")


@click.group("fleet", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
    if threading.current_thread() is threading.main_thread():
        # a launcher ends its ranks with SIGTERM: unwind, so the processes rooflab started end too
        signal.signal(signal.SIGTERM, _sigterm)


@fleet.command("report")
@click.option("--devices", default=None, help="GPUs to measure from one process: 'all' (default) or CUDA "
              "ordinals / UUIDs, e.g. 0,2,5. Not under a launcher (each rank measures its own GPU).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for everything (default rooflab-fleet).")
@click.option("--shared-dir", type=click.Path(file_okay=False), default=None,
              help="Under torchrun/srun/mpirun: a folder every rank can write (shared between nodes).")
@click.option("--quick", is_flag=True, help="Shorter: the lab's quick settings, no sweep, fewer reps, "
              "all-reduce sizes in steps of 4x.")
@click.option("--n", type=int, default=4096, show_default=True, help="SGEMM size per GPU.")
@click.option("--profile/--no-profile", default=False, show_default=True, help="Nsight Compute per GPU (slow).")
@click.option("--no-render", is_flag=True, help="No per-GPU report.md/roofline (the documents only).")
@click.option("--no-links", is_flag=True, help="Skip the GPU-to-GPU and host copies.")
@click.option("--no-allreduce", is_flag=True, help="Skip the NCCL all-reduce.")
@click.option("--no-torch-peer", is_flag=True, help="Skip PyTorch's peer copy (measured where torch imports).")
@click.option("--link-size", default="256M", show_default=True, help="Bytes per link copy (K/M/G binary).")
@click.option("--ar-min", default="1K", show_default=True, help="Smallest all-reduce message, bytes.")
@click.option("--ar-max", default="1G", show_default=True, help="Largest all-reduce message, bytes.")
@click.option("--ar-factor", type=int, default=None, help="Step between all-reduce sizes (default 2; 4 with --quick).")
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
    from rooflab.errors import UsageError
    from rooflab.fleet import launcher, layout, orchestrate

    if out_dir and shared_dir and os.path.abspath(out_dir) != os.path.abspath(shared_dir):
        raise UsageError("--out and --shared-dir name the same folder: give one of them")
    root = shared_dir or out_dir or "rooflab-fleet"
    cfg = orchestrate.FleetConfig(out_dir=root, devices=devices or "all", quick=quick, n=n, profile=profile,
                                  render_gpu_reports=not no_render, links=not no_links, allreduce=not no_allreduce,
                                  torch_peer=not no_torch_peer, link_bytes=_count(link_size), ar_min=_count(ar_min),
                                  ar_max=_count(ar_max), ar_factor=ar_factor, outlier_pct=outlier_pct,
                                  baseline=baseline, worker_timeout_s=timeout_s, step_timeout_s=step_timeout,
                                  wait_timeout_s=wait_timeout)
    cfg.validate()
    info = launcher.detect()
    if info.distributed:
        if devices:
            raise UsageError(f"--devices is for one process driving a node; under {info.launcher} each rank "
                             "measures its own GPU (drop --devices)")
        doc = orchestrate.run_rank(cfg, info, _say)
        if doc is None:
            _err.print(f"rank {info.rank}/{info.world_size}: done; rank 0 merges into {root}/{layout.MERGED_JSON}")
            return
    else:
        doc = orchestrate.run_devices(cfg, _say)
    _show_doc(doc, "table", None)
    f = doc["fleet"]
    _out.print(f"wrote {root}/: {layout.MERGED_JSON}, {layout.MERGED_MD}, {layout.MERGED_CSV}, "
                  f"{layout.GPUS}/, {layout.NODES}/, {layout.LOGS}/")
    if f.get("errors"):
        _err.print(f"[red]{len(f['errors'])} problem(s); see {root}/{layout.MERGED_MD}[/red]")
        sys.exit(1)
    if fail_on_outlier and f.get("outliers"):
        sys.exit(1)


@fleet.command("merge")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("--outlier-pct", type=float, default=5.0, show_default=True)
@click.option("--baseline", type=click.Path(dir_okay=False, exists=True), default=None)
@click.option("--fail-on-outlier", is_flag=True, help="Exit 1 when any GPU is an outlier.")
@format_option
def merge_cmd(directory, outlier_pct, baseline, fail_on_outlier, fmt):
    """Merge DIR/gpus/*.json and DIR/nodes/*.json into DIR/fleet.json and fleet.md (after a
    launcher run whose rank 0 did not finish, or again with another threshold or baseline)."""
    from rooflab import results
    from rooflab.errors import UsageError
    from rooflab.fleet import layout, merge

    if outlier_pct < 0:
        raise UsageError("--outlier-pct must be positive")
    gpu_docs, node_docs, errs = merge.load_dir(directory)
    if not gpu_docs:
        raise UsageError(f"{directory}: no per-GPU documents in {directory}/{layout.GPUS}/")
    doc = merge.merge(gpu_docs, node_docs, outlier_pct=outlier_pct,
                      baseline=results.load(baseline) if baseline else None, baseline_path=baseline, errors=errs,
                      launch={"mode": "merge", "directory": directory})
    written = merge.write(doc, directory)
    _show_doc(doc, fmt, None)
    _err.print(f"wrote {directory}/: {', '.join(written)}")
    if fail_on_outlier and doc["fleet"].get("outliers"):
        sys.exit(1)


@fleet.command("links")
@click.option("--devices", default=None, help="GPUs: all (default) or ordinals / UUIDs.")
@click.option("--size", default="256M", show_default=True, help="Bytes per copy (K/M/G binary).")
@click.option("--reps", type=int, default=20, show_default=True)
@click.option("--no-host", is_flag=True, help="Skip pinned host <-> GPU copies.")
@click.option("--no-sm", is_flag=True, help="Skip the SM (kernel) copies.")
@click.option("--torch", "with_torch", is_flag=True, help="Also PyTorch's tensor.copy_ between GPUs.")
@format_option
@out_option
def links_cmd(devices, size, reps, no_host, no_sm, with_torch, fmt, out_file):
    """GPU-to-GPU bandwidth matrices (copy engine and SM copy, one and both directions)
    and pinned host <-> GPU, every copy checked before it is timed; NVLink/PCIe kind
    and theoretical rate from NVML."""
    from rooflab import results
    from rooflab.fleet import layout
    from rooflab.measure import links

    _check_fmt(fmt, out_file)
    cfg = links.LinksConfig(nbytes=_count(size), reps=reps, host=not no_host, sm_copy=not no_sm)
    cfg.validate()
    _select_here(devices)
    host = layout.hostname()
    with _status("links") as say:
        sec = links.run(cfg, say)
        tp = links.torch_peer(cfg.nbytes, reps) if with_torch else None
    doc = results.new_document(results.command_line(), None)
    doc["fleet"] = {"gpus": {}, "links": {host: sec}, "torch_peer": {host: tp} if tp else {}, "allreduce": {},
                    "outliers": [], "medians": {}, "config": {}, "references": _references()}
    from rooflab.report import fleet as render

    _emit(doc, render.link_tables(doc), [], fmt, out_file)
    if any(not r.get("verified") for k in ("ce_uni", "ce_bidir", "sm_uni", "sm_bidir") for r in sec.get(k) or []):
        _err.print("[red]one or more copies FAILED their check or could not run[/red]")
        sys.exit(1)


@fleet.command("allreduce")
@click.option("--devices", default=None, help="GPUs: all (default) or ordinals / UUIDs.")
@click.option("--min", "min_size", default="1K", show_default=True, help="Smallest message, bytes.")
@click.option("--max", "max_size", default="1G", show_default=True, help="Largest message, bytes.")
@click.option("--factor", type=int, default=2, show_default=True, help="Step between sizes.")
@click.option("--reps", type=int, default=20, show_default=True)
@format_option
@out_option
def allreduce_cmd(devices, min_size, max_size, factor, reps, fmt, out_file):
    """NCCL all-reduce bus bandwidth against message size (nccl-tests' algbw/busbw),
    every size checked for the right sum on every GPU before it is timed."""
    from rooflab import results
    from rooflab.fleet import allreduce, layout
    from rooflab.measure import collectives

    _check_fmt(fmt, out_file)
    cfg = collectives.AllreduceConfig(min_bytes=_count(min_size), max_bytes=_count(max_size), factor=factor,
                                      reps=reps)
    cfg.validate()
    _select_here(devices)
    with _status("all-reduce") as say:
        sec = allreduce.measure_with_fallback(cfg, say, log_dir=".")
    doc = results.new_document(results.command_line(), None)
    doc["fleet"] = {"gpus": {}, "links": {}, "allreduce": {layout.hostname(): sec}, "outliers": [], "medians": {},
                    "config": {}, "references": _references()}
    from rooflab.report import fleet as render

    _emit(doc, render.allreduce_tables(doc), [], fmt, out_file)
    if not sec.get("available") or any(not r.get("verified") for r in sec.get("rows") or []):
        sys.exit(1)


# ---------------------------------------------------------------- wiring

def register(cli_group: click.Group) -> None:
    """Add `fleet` to rooflab's command line: in cli.py, `register(cli)` after the commands."""
    cli_group.add_command(fleet)


def report_devices(ctx: click.Context, **kwargs) -> None:
    """For `rooflab report --devices ...`: run `fleet report` with the given options
    (e.g. devices=..., out_dir=..., quick=..., n=..., profile=...); the rest default."""
    ctx.invoke(report, **kwargs)


def _sigterm(_signum, _frame):
    raise SystemExit(143)  # unwinds through spawn.wait_all, which ends the children


def main() -> None:
    from rooflab.errors import RooflabError

    try:
        fleet.main(standalone_mode=False, prog_name="rooflab fleet")
    except click.exceptions.Abort:
        _err.print("rooflab: interrupted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except RooflabError as exc:
        _err.print(f"rooflab: error: {exc}", markup=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _err.print("rooflab: interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
