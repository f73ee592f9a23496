"""The measuring commands: info, gemm, bandwidth, flops, profile, tune, memory."""

from __future__ import annotations

import json
import math
import sys

import click

from rooflab.cli.app import cli, fail
from rooflab.cli.options import (
    Count,
    IntList,
    Kernels,
    LadderOption,
    Parts,
    PositiveFloat,
    PositiveInt,
    check_out,
    format_option,
    out_option,
    tunable_names,
)
from rooflab.cli.output import detect_device, emit, measure, new_doc
from rooflab.errors import UsageError


@cli.command(short_help="the GPU found here and its roofs (P1, P3)")
@format_option
def info(fmt):
    """The GPU found here: attributes, FP32 peak (P1) and HBM peak (P3)."""
    dev, entry = detect_device()
    if fmt == "json":
        sys.stdout.write(json.dumps(entry, indent=2) + "\n")
        return
    from rooflab.report.specs import device_table  # noqa: PLC0415

    emit(new_doc(entry), [device_table(entry)], [], fmt, None)


@cli.command(short_help="the SGEMM ladder (G1–G11): checked, timed, explained")
@click.option("--n", "n", type=PositiveInt(), default=4096, show_default=True, help="Square size N (M = N = K).")
@click.option("--m", "m", type=PositiveInt(), default=None, help="Rows of A and C (default N).")
@click.option("--k", "k", type=PositiveInt(), default=None, help="Columns of A / rows of B (default N).")
@click.option("--kernels", type=Kernels(), default=None, cls=LadderOption,
              help="Comma-separated rungs of the SGEMM ladder, any subset in any order: {ladder} "
                   "(default: all, in ladder order).")
@click.option("--reps", type=PositiveInt(), default=20, show_default=True,
              help="Timed launches per rung (per round, with --rounds).")
@click.option("--rounds", type=PositiveInt(), default=1, show_default=True,
              help="Interleaved timing rounds: every rung is checked first, then each rung's --reps are taken in "
                   "turn, round after round, so peers share the clock and power states of the run; the ratios "
                   "show their spread over the rounds. Each rung's checked output stays on the GPU until the end.")
@click.option("--check-n", type=PositiveInt(), default=512, show_default=True,
              help="Size of the check against a CPU float64 reference.")
@click.option("--flush-l2/--no-flush-l2", default=False, show_default=True, help="Flush the L2 before every rep.")
@click.option("--seed", type=PositiveInt(high=2**32 - 2, low=0, why="seeds are 32-bit"), default=None,
              help="Random seed (default: fresh each run).")
@click.option("--sanitize", is_flag=True,
              help="Also run compute-sanitizer (memcheck with the memory pool off, racecheck, synccheck) on each "
                   "rung at a small odd shape; a reported error FAILS the rung.")
@format_option
@out_option
def gemm(n, m, k, kernels, reps, rounds, check_n, flush_l2, seed, sanitize, fmt, out_file):
    """The SGEMM ladder (G1–G11): check, time and explain every rung.

    Every rung is checked at --check-n against a CPU float64 product (the seed's
    max-relative check on [0,1) inputs, a normwise check on [-1,1) inputs and the
    componentwise GEMM error bound on both, with tolerances from the precision's
    error model), at 509x383x257 where it takes any shape, then at the timed size
    against a GPU float64 product, and run repeatedly and concurrently to catch
    races. Only then is it timed: one warm-up, --reps launches between CUDA events
    (with --rounds R, R such turns interleaved across the rungs).

    \b
    Examples:
      rooflab gemm --n 8192 --kernels wgmma_bf16_tma_store,cublas_bf16 --rounds 5
      rooflab gemm --n 4096 --flush-l2 --format json --out gemm.json
    """
    from rooflab.measure import gemm as gemm_mod  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    cfg = gemm_mod.GemmConfig(m=n if m is None else m, n=n, k=n if k is None else k, reps=reps, rounds=rounds,
                              check_n=check_n, flush_l2=flush_l2, seed=seed)
    if kernels:
        cfg.kernels = kernels
    cfg.validate()
    check_out(fmt, out_file)
    secs = {"gemm": lambda dev, say: gemm_mod.run(cfg, dev, say)}
    if sanitize:
        from rooflab.measure import sanitize as sanitizer  # noqa: PLC0415

        secs["sanitize"] = sanitize_section([sanitizer.rung_spec(r.name, r.aligned) for r in _rungs(cfg.kernels)])
    doc = measure("SGEMM ladder", **secs)
    if sanitize:
        sanitizer.apply(doc)
    emit(doc, *shown(doc, "gemm"), fmt, out_file)
    if any(not r["passed"] and not r.get("skipped") for r in doc["gemm"]["rungs"]):
        fail("one or more rungs FAILED their check: no throughput is reported for them", 1)


@cli.command(short_help="copy bandwidth and its launch sweep (P3, P4)")
@click.option("--size", type=Count(), default="256M", show_default=True,
              help="Floats per array (K/M/G binary suffixes): 256M = 1 GiB per array.")
@click.option("--reps", type=PositiveInt(), default=50, show_default=True,
              help="Timed launches per configuration (≥ 50).")
@click.option("--rounds", type=PositiveInt(), default=2, show_default=True,
              help="Interleaved repeats of the whole sweep.")
@click.option("--blocks", type=IntList(), default="128,256,512,1024", show_default=True,
              help="Block sizes to sweep (multiples of 32, at most 1024).")
@click.option("--no-sweep", is_flag=True, help="Only the seed's copy and the float4 copy.")
@format_option
@out_option
def bandwidth(size, reps, rounds, blocks, no_sweep, fmt, out_file):
    """Copy bandwidth (P3) and its sensitivity to the launch configuration (P4)."""
    from rooflab.measure import bandwidth as bw  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    cfg = bw.BandwidthConfig(n=size, reps=reps, rounds=rounds, blocks=blocks, sweep=not no_sweep)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("copy bandwidth", bandwidth=lambda dev, say: bw.run(cfg, dev, say))
    emit(doc, *shown(doc, "bandwidth"), fmt, out_file)


@cli.command(short_help="FP32 FMA peak (P6, P7) and the tensor-core roofs (P2), measured")
@click.option("--reps", type=PositiveInt(), default=20, show_default=True, help="Timed launches per configuration.")
@click.option("--target-ms", type=PositiveFloat(10_000, "a launch of at most 10 s keeps the loop count a 32-bit int"),
              default=10.0, show_default=True, help="Length of one launch.")
@format_option
@out_option
def flops(reps, target_ms, fmt, out_file):
    """FP32 FMA peak (P6): register-only FMA chains, 1/2/4/8 accumulators; then the tensor-core roofs,
    measured by MMA chains (mma.sync on sm_80+, wgmma on sm_90a), beside the published dense rates."""
    from rooflab.measure import flops as fl  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    cfg = fl.FlopsConfig(reps=reps, target_ms=target_ms)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("FMA peak", flops=lambda dev, say: fl.run(cfg, dev, say))
    emit(doc, *shown(doc, "flops", "tensor_peaks"), fmt, out_file)


@cli.command(short_help="Nsight Compute's DRAM% / SM% verdict per kernel (P8)")
@click.option("--gemm", "with_gemm", is_flag=True, help="Also profile every GEMM rung at --n.")
@click.option("--n", type=PositiveInt(), default=4096, show_default=True,
              help="SGEMM size N of the rungs profiled with --gemm.")
@click.option("--size", type=Count(), default="256M", show_default=True, help="Floats per array for the copy kernels.")
@click.option("--raw-dir", type=click.Path(file_okay=False), default=None, help="Keep ncu's raw CSV output here.")
@format_option
@out_option
def profile(with_gemm, n, size, raw_dir, fmt, out_file):
    """Nsight Compute (P8): DRAM% and SM% per kernel, and which roof it is against."""
    from rooflab.measure import profiling  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    check_out(fmt, out_file)
    if raw_dir:
        from rooflab import results  # noqa: PLC0415

        results.check_writable(raw_dir, "--raw-dir", folder=True)
    doc = measure("ncu", profile=lambda dev, say: profiling.run(with_gemm=with_gemm, n=n, size=size,
                                                                progress=say, raw_dir=raw_dir))
    emit(doc, *shown(doc, "profile"), fmt, out_file)


def _rungs(names: list[str]) -> list:
    from rooflab import rungs  # noqa: PLC0415

    return [rungs.get(name) for name in names if rungs.get(name) is not None]


def sanitize_section(specs: list[dict]):
    """The compute-sanitizer section; compute-sanitizer is looked for now, before anything runs."""
    from rooflab.measure import sanitize as sanitizer  # noqa: PLC0415

    sanitizer.find_sanitizer()
    return lambda dev, say: sanitizer.run(specs, say)


@cli.command(short_help="search the tunable rungs' launch configurations, cache the winner (G12)")
@click.option("--n", type=click.IntRange(min=1), default=4096, show_default=True, help="Size the search times at.")
@click.option("--kernels", type=Kernels(tunable=True), default=None, cls=LadderOption,
              help="Tunable rungs to search, from {tunable} (default: all of them).")
@click.option("--reps", type=click.IntRange(min=1), default=10, show_default=True,
              help="Timed launches per variant (per round, with --rounds).")
@click.option("--rounds", type=PositiveInt(), default=1, show_default=True,
              help="Interleaved timing rounds: a rung's variants are all checked, then timed in turn, round after "
                   "round, so a drifting clock (a power cap) does not pick the winner; each variant's checked "
                   "output stays on the GPU until its rung is done.")
@format_option
@out_option
def tune(n, kernels, reps, rounds, fmt, out_file):
    """Search the launch configurations of the tunable rungs (G12) on this GPU and cache the
    fastest that passes its checks; `gemm` and `report` then run the cached winner.

    The cache is keyed by GPU name, compute capability, driver and rooflab version, in
    ~/.cache/rooflab/tune.json (ROOFLAB_CACHE moves it).
    """
    from rooflab.measure import gemm as gemm_mod  # noqa: PLC0415
    from rooflab.report.table import Table  # noqa: PLC0415

    names = kernels or tunable_names()
    if not names:
        raise UsageError("no tunable rungs in the ladder")
    cfg = gemm_mod.GemmConfig(m=n, n=n, k=n, reps=reps, rounds=rounds, kernels=names)
    cfg.validate()
    doc = measure("tune", tune=lambda dev, say: gemm_mod.tune_rungs(cfg, dev, say))
    rows = []
    for r in doc["tune"]["rungs"]:
        for label, ms in r["times_ms"].items():
            rows.append([r["rung"], label, "FAILED" if ms is None else f"{ms:.3f}", "winner" if label == r["winner"] else ""])
    t = Table(f"Tuning at N={n}", ["rung", "configuration", "ms", ""], rows, [f"cache: {doc['tune']['cache']}"],
              key="tune")
    emit(doc, [t], [], fmt, out_file)


MAX_FOOTPRINT_MIB = 1 << 20  # 1 TiB: beyond any GPU's memory, short of what a float turns into nonsense


def _mib_list(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--footprints must be comma-separated MiB values, got {text!r}") from None
    bad = [v for v in vals if not math.isfinite(v) or v * 2**20 < 1 or v > MAX_FOOTPRINT_MIB]
    if bad:
        raise UsageError(f"--footprints must be MiB values from 1 byte to {MAX_FOOTPRINT_MIB:,} MiB, got {bad[0]:g}")
    return tuple(round(v * 2**20) for v in vals)


@cli.command(short_help="L2 and shared-memory bandwidth, FP64 and FP16 peaks: every memory level")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Interleaved repeats of every configuration.")
@click.option("--reps", type=click.IntRange(min=1), default=10, show_default=True, help="Timed launches per configuration and round.")
@click.option("--launch-ms", type=click.FloatRange(min=0.05, max=200), default=2.0, show_default=True,
              help="Length each launch is sized to, 0.05 to 200 ms (a probe launch is timed first).")
@click.option("--footprints", default=None,
              help="L2 sweep footprints in MiB, comma-separated (default: 1 MiB to 4x the L2, finer around it).")
@click.option("--parts", type=Parts(), default="l2,l2_copy,shared,fp64,fp16", show_default=True,
              help="What to measure, comma-separated.")
@format_option
@out_option
def memory(rounds, reps, launch_ms, footprints, parts, fmt, out_file):
    """The memory hierarchy's roofs: L2 bandwidth by footprint (the cliff to HBM), shared-memory
    bandwidth with and without bank conflicts, and the FP64 and FP16 CUDA-core peaks.

    Every configuration is checked on the launch that is then timed; a failed check gets no rate.
    About 10-20 s on an H200.
    """
    from rooflab.measure import memory as mem  # noqa: PLC0415
    from rooflab.report.sections import shown  # noqa: PLC0415

    cfg = mem.MemoryConfig(rounds=rounds, reps=reps, target_ms=launch_ms,
                           footprints=_mib_list(footprints) if footprints else (),
                           parts=parts)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("memory hierarchy", memory=lambda dev, say: mem.run(cfg, dev, say))
    emit(doc, *shown(doc, "memory"), fmt, out_file)
