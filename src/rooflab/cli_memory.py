"""`rooflab memory`: the memory hierarchy's ceilings (issue 11). Kept apart from rooflab.cli so that
it can be added without touching it: rooflab.cli calls ``register(cli)``."""

from __future__ import annotations

import click

from rooflab.cli import check_out, emit, format_option, measure, out_option
from rooflab.errors import UsageError


def _mib_list(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--footprints must be comma-separated MiB values, got {text!r}") from None
    return tuple(round(v * 2**20) for v in vals)


@click.command()
@click.option("--rounds", type=int, default=3, show_default=True, help="Interleaved repeats of every configuration.")
@click.option("--reps", type=int, default=10, show_default=True, help="Timed launches per configuration and round.")
@click.option("--launch-ms", type=float, default=2.0, show_default=True,
              help="Length each launch is sized to (a probe launch is timed first).")
@click.option("--footprints", default=None,
              help="L2 sweep footprints in MiB, comma-separated (default: 1 MiB to 4x the L2, finer around it).")
@click.option("--parts", default="l2,l2_copy,shared,fp64,fp16", show_default=True,
              help="What to measure.")
@format_option
@out_option
def memory(rounds, reps, launch_ms, footprints, parts, fmt, out_file):
    """The memory hierarchy's roofs: L2 bandwidth by footprint (the cliff to HBM), shared-memory
    bandwidth with and without bank conflicts, and the FP64 and FP16 CUDA-core peaks.

    Every configuration is checked on the launch that is then timed; a failed check gets no rate.
    About 10-20 s on an H200.
    """
    from rooflab.measure import memory as mem
    from rooflab.report.memory import hierarchy_table, memory_paragraphs, memory_tables

    cfg = mem.MemoryConfig(rounds=rounds, reps=reps, target_ms=launch_ms,
                           footprints=_mib_list(footprints) if footprints else (),
                           parts=tuple(p.strip() for p in parts.split(",") if p.strip()))
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("memory hierarchy", memory=lambda dev, say: mem.run(cfg, dev, say))
    tables = memory_tables(doc)
    h = hierarchy_table(doc)
    emit(doc, tables + ([h] if h else []), memory_paragraphs(doc), fmt, out_file)


def register(cli_group: click.Group) -> None:
    """Add the `memory` command to the rooflab command group."""
    cli_group.add_command(memory, name="memory")
