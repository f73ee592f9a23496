"""The rooflab command line. The only module that prints or exits."""

from __future__ import annotations

import contextlib
import json
import sys

import click
from rich.console import Console
from rich.table import Table as RichTable

from rooflab import __version__
from rooflab.errors import RooflabError, UsageError
from rooflab.table import Table

out = Console(highlight=False, soft_wrap=False, width=200 if not sys.stdout.isatty() else None)
err = Console(stderr=True, highlight=False, soft_wrap=True)

FORMATS = ["table", "json", "csv", "md"]


# ---------------------------------------------------------------- helpers

def show(table: Table) -> None:
    t = RichTable(title=table.title, title_justify="left", title_style="bold")
    for c in table.columns:
        t.add_column(c, overflow="fold")
    for row in table.rows:
        t.add_row(*["—" if v is None else str(v) for v in row])
    out.print(t)
    for n in table.notes:
        out.print(f"  [dim]{n}[/dim]")
    out.print()


def show_paragraphs(paras: list[tuple[str, str]]) -> None:
    for title, text in paras:
        out.print(f"[bold]{title}.[/bold] {text}\n")


@contextlib.contextmanager
def progress_status(first: str):
    """A spinner on stderr whose text follows the library's progress callback."""
    if not err.is_terminal:
        yield lambda msg: err.print(f"[dim]… {msg}[/dim]")
        return
    with err.status(first) as st:
        yield lambda msg: st.update(msg)


def emit(doc: dict, tables: list[Table], paras: list[tuple[str, str]], fmt: str, out_file: str | None) -> None:
    """Print or write a document in the chosen format."""
    from rooflab import results  # noqa: PLC0415

    if fmt == "json":
        text = results.dumps(doc)
    elif fmt == "csv":
        text = "\n".join(t.to_csv() for t in tables[:1])
    elif fmt == "md":
        text = "\n".join(t.to_markdown() for t in tables) + "\n" + "\n".join(
            f"**{title}.** {p}\n" for title, p in paras)
    else:
        text = None
    if out_file:
        if fmt == "table":
            raise UsageError("--out needs --format json, csv or md")
        results.write_atomic(out_file, text)
        err.print(f"wrote {out_file}")
    elif text is not None:
        sys.stdout.write(text)
    else:
        for t in tables:
            show(t)
        show_paragraphs(paras)


def detect_device():
    from rooflab.device import detect, document_entry  # noqa: PLC0415

    dev = detect()
    return dev, document_entry(dev)


def new_doc(dev_entry: dict | None) -> dict:
    from rooflab import results  # noqa: PLC0415

    return results.new_document(results.command_line(), dev_entry)


def parse_count(text: str) -> int:
    """'256M' -> 268435456 (binary suffixes K, M, G), or a plain integer."""
    t = text.strip().upper()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if mult > 1 else t) * mult)
    except ValueError:
        raise UsageError(f"not a count: {text!r} (use e.g. 1048576, 256M or 1G)") from None


format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                             help="table for people; json (the full results document), csv or md for scripts.")
out_option = click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
                          help="Write the output to FILE (atomically) instead of standard output.")


# ---------------------------------------------------------------- commands

@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rooflab")
def cli():
    """How close do your kernels get to the roofs of the GPU they run on?

    \b
    rooflab report      the whole lab: peaks, FMA peak, bandwidth, SGEMM ladder, ncu, roofline
    rooflab gemm        the SGEMM ladder: naive → coalesced → tiled → cuBLAS, checked and timed
    rooflab bandwidth   device-to-device copy bandwidth and its launch sweep
    rooflab flops       FP32 FMA peak, and why independent accumulators matter
    rooflab profile     Nsight Compute's DRAM% / SM% verdict per kernel
    rooflab roofline    the roofline picture (PNG/SVG) with every kernel placed on it
    rooflab specs       published peaks and the arithmetic behind them (no GPU needed)
    rooflab ridge       ridge points per GPU and precision (no GPU needed)
    rooflab info        the GPU found here and its roofs

    Every measurement is checked before it is timed; a kernel that fails its check
    shows as FAILED and gets no throughput.
    """


@cli.command()
@format_option
def info(fmt):
    """The GPU found here: attributes, FP32 peak (P1) and HBM peak (P3)."""
    dev, entry = detect_device()
    if fmt == "json":
        sys.stdout.write(json.dumps(entry, indent=2) + "\n")
        return
    from rooflab.render_specs import device_table  # noqa: PLC0415

    emit(new_doc(entry), [device_table(entry)], [], fmt, None)


@cli.command()
@click.option("--n", "n", type=int, default=4096, show_default=True, help="Square size N (M = N = K).")
@click.option("--m", "m", type=int, default=None, help="Rows of A and C (default N).")
@click.option("--k", "k", type=int, default=None, help="Columns of A / rows of B (default N).")
@click.option("--kernels", default=None, help="Comma-separated rungs: naive,coalesced,tiled16,tiled32,cublas "
              "(default: all).")
@click.option("--reps", type=int, default=20, show_default=True, help="Timed launches per rung.")
@click.option("--check-n", type=int, default=512, show_default=True,
              help="Size of the check against a CPU float64 reference.")
@click.option("--flush-l2/--no-flush-l2", default=False, show_default=True, help="Flush the L2 before every rep.")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh each run).")
@format_option
@out_option
def gemm(n, m, k, kernels, reps, check_n, flush_l2, seed, fmt, out_file):
    """The SGEMM ladder (G1–G11): check, time and explain every rung.

    Every rung is checked at --check-n against a CPU float64 product (the seed's
    max-relative check on [0,1) inputs and a normwise check on [-1,1) inputs),
    then at the timed size against a GPU float64 product, and run twice to catch
    races. Only then is it timed: one warm-up, --reps launches between CUDA events.
    """
    from rooflab import gemm as gemm_mod  # noqa: PLC0415
    from rooflab import render_gemm  # noqa: PLC0415

    cfg = gemm_mod.GemmConfig(m=m or n, n=n, k=k or n, reps=reps, check_n=check_n, flush_l2=flush_l2, seed=seed)
    if kernels:
        cfg.kernels = [x.strip() for x in kernels.split(",") if x.strip()]
    cfg.validate()
    dev, entry = detect_device()
    doc = new_doc(entry)
    with progress_status("SGEMM ladder") as say:
        doc["gemm"] = gemm_mod.run(cfg, dev, say)
    tables = [render_gemm.gemm_table(doc), render_gemm.ratio_table(doc), render_gemm.check_table(doc)]
    emit(doc, tables, render_gemm.paragraphs(doc), fmt, out_file)
    if any(not r["passed"] for r in doc["gemm"]["rungs"]):
        err.print("[red]one or more rungs FAILED their check: no throughput is reported for them[/red]")
        sys.exit(1)


@cli.command()
@click.option("--size", default="256M", show_default=True,
              help="Floats per array (K/M/G binary suffixes): 256M = 1 GiB per array.")
@click.option("--reps", type=int, default=50, show_default=True, help="Timed launches per configuration (≥ 50).")
@click.option("--rounds", type=int, default=2, show_default=True, help="Interleaved repeats of the whole sweep.")
@click.option("--blocks", default="128,256,512,1024", show_default=True, help="Block sizes to sweep.")
@click.option("--no-sweep", is_flag=True, help="Only the seed's copy and the float4 copy.")
@format_option
@out_option
def bandwidth(size, reps, rounds, blocks, no_sweep, fmt, out_file):
    """Copy bandwidth (P3) and its sensitivity to the launch configuration (P4)."""
    from rooflab import bandwidth as bw  # noqa: PLC0415
    from rooflab.explain_ceilings import bandwidth_paragraphs  # noqa: PLC0415
    from rooflab.render_ceilings import bandwidth_tables  # noqa: PLC0415

    try:
        block_list = tuple(int(b) for b in blocks.split(","))
    except ValueError:
        raise UsageError(f"--blocks must be comma-separated integers, got {blocks!r}") from None
    cfg = bw.BandwidthConfig(n=parse_count(size), reps=reps, rounds=max(1, rounds), blocks=block_list,
                             sweep=not no_sweep)
    cfg.validate()
    dev, entry = detect_device()
    doc = new_doc(entry)
    with progress_status("copy bandwidth") as say:
        doc["bandwidth"] = bw.run(cfg, dev, say)
    emit(doc, bandwidth_tables(doc), bandwidth_paragraphs(doc), fmt, out_file)


@cli.command()
@click.option("--reps", type=int, default=20, show_default=True)
@click.option("--target-ms", type=float, default=10.0, show_default=True, help="Length of one launch.")
@format_option
@out_option
def flops(reps, target_ms, fmt, out_file):
    """FP32 FMA peak (P6): register-only FMA chains, 1/2/4/8 accumulators."""
    from rooflab import flops as fl  # noqa: PLC0415
    from rooflab.explain_ceilings import flops_paragraphs  # noqa: PLC0415
    from rooflab.render_ceilings import flops_table  # noqa: PLC0415

    cfg = fl.FlopsConfig(reps=reps, target_ms=target_ms)
    cfg.validate()
    dev, entry = detect_device()
    doc = new_doc(entry)
    with progress_status("FMA peak") as say:
        doc["flops"] = fl.run(cfg, dev, say)
    emit(doc, [flops_table(doc)], flops_paragraphs(doc), fmt, out_file)


@cli.command()
@click.option("--gemm", "with_gemm", is_flag=True, help="Also profile every GEMM rung at --n.")
@click.option("--n", type=int, default=4096, show_default=True)
@click.option("--size", default="256M", show_default=True, help="Floats per array for the copy kernels.")
@click.option("--raw-dir", type=click.Path(file_okay=False), default=None, help="Keep ncu's raw CSV output here.")
@format_option
@out_option
def profile(with_gemm, n, size, raw_dir, fmt, out_file):
    """Nsight Compute (P8): DRAM% and SM% per kernel, and which roof it is against."""
    from rooflab import profiling  # noqa: PLC0415
    from rooflab.render_ceilings import profile_table  # noqa: PLC0415

    dev, entry = detect_device()
    doc = new_doc(entry)
    with progress_status("ncu") as say:
        doc["profile"] = profiling.run(with_gemm=with_gemm, n=n, size=parse_count(size), progress=say,
                                       raw_dir=raw_dir)
    emit(doc, [profile_table(doc)], [], fmt, out_file)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        err.print("rooflab: interrupted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except RooflabError as exc:
        err.print(f"rooflab: error: {exc}", markup=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("rooflab: interrupted")
        sys.exit(130)
