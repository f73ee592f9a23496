"""`rooflab bench`: your own kernel through the harness, and the options it refuses."""

from __future__ import annotations

import click

from rooflab.cli.app import cli, fail
from rooflab.cli.measuring import _rungs, sanitize_section
from rooflab.cli.options import CountType, LadderOption, PositiveInt, check_out, format_option, out_option
from rooflab.cli.output import emit, measure
from rooflab.cli_terminal import err
from rooflab.errors import UsageError


def parse_target(target: str, kernel: str | None, *, block: str | None, grid: str | None, options: tuple[str, ...],
                 shared_mem: int, framework: str, precision: str):
    """A .cu file (with --kernel) or a Python callable (module:function or file.py:function)."""
    from rooflab.targets import Callable, CudaKernel, load_callable  # noqa: PLC0415

    if target.endswith((".cu", ".cuh")) or (kernel and ":" not in target):
        if not kernel:
            raise UsageError(f"{target}: name the kernel to run with --kernel")
        blk = None
        if block is not None:
            try:
                blk = tuple(int(x) for x in block.split(","))
            except ValueError:
                raise UsageError(f"--block must be comma-separated integers, got {block!r}") from None
        return CudaKernel(target, kernel, block=blk, grid=grid, options=options, shared_mem=shared_mem)
    fn = load_callable(target)
    return Callable(fn, name=getattr(fn, "__name__", None), framework=framework, precision=precision,
                    import_path=target)


def given(ctx: click.Context, *names: str) -> list[str]:
    """The options among `names` that the user set (on the command line or in the environment)."""
    from click.core import ParameterSource  # noqa: PLC0415

    set_by_user = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    flags = {p.name: max(p.opts, key=len) for p in ctx.command.params}
    return [flags[n] for n in names if ctx.get_parameter_source(n) in set_by_user]


def refuse_unused(ctx: click.Context, names: tuple[str, ...], context: str, one: str, many: str) -> None:
    """Refuse options given where they would be ignored: `one`/`many` say what they are for."""
    unused = given(ctx, *names)
    if unused:
        single = len(unused) == 1
        raise UsageError(f"{', '.join(unused)} {'has' if single else 'have'} no effect {context}: "
                         f"{one if single else many}")


CU_ONLY = ("kernel", "block", "grid", "options", "shared_mem")


CALLABLE_ONLY = ("framework", "precision")


GEMM_ONLY = ("m", "k", "vs", "check_n")


STREAM_ONLY = ("expr", "flops_per_element")


def check_bench_options(ctx: click.Context, target: str, op: str) -> None:
    """Every option `bench` is given must do something for this target and op: refuse the rest."""
    cu = target.endswith((".cu", ".cuh")) or (ctx.params["kernel"] and ":" not in target)
    if cu:
        refuse_unused(ctx, CALLABLE_ONLY, f"for a .cu kernel ({target})", "it describes a Python callable",
                      "they describe a Python callable")
    else:
        refuse_unused(ctx, CU_ONLY, f"for a Python callable ({target})", "it describes a .cu kernel",
                      "they describe a .cu kernel")
    for option_op, names in (("gemm", GEMM_ONLY), ("stream", STREAM_ONLY), ("custom", ("op_module",))):
        if op != option_op:
            refuse_unused(ctx, names, f"with --op {op}", f"it applies to --op {option_op}",
                          f"they apply to --op {option_op}")


@cli.command(short_help="your own kernel (a .cu file or a Python callable) checked, timed, placed")
@click.argument("target")
@click.option("--kernel", default=None, help="The kernel's name in the .cu file (extern \"C\" or a template instance).")
@click.option("--op", type=click.Choice(["gemm", "stream", "custom"]), default="gemm", show_default=True,
              help="What it computes: gemm (C = A·B, row-major, kernel(A, B, C, M, N, K)); stream (y = f(x) over "
                   "n floats, kernel(x, y, n)); custom (your rooflab.Op in --op-module).")
@click.option("--op-module", default=None, help="For --op custom: file.py (or module) that defines OP = rooflab.Op(...).")
@click.option("--n", type=CountType(), default="4096", show_default=True,
              help="GEMM: N (M and K default to it); stream/custom: the element count (K/M/G suffixes).")
@click.option("--m", type=CountType(), default=None, help="GEMM rows of A and C (default N; K/M/G suffixes).")
@click.option("--k", type=CountType(), default=None, help="GEMM inner size (default N; K/M/G suffixes).")
@click.option("--block", default=None,
              help="Threads per block, x,y,z (default 16,16 for gemm; 256 for stream and custom).")
@click.option("--grid", default=None,
              help="Blocks per grid as an expression in cdiv and, for gemm, m, n, k, e.g. 'cdiv(n,128),cdiv(m,128)'; "
                   "for stream and custom in n, the element count, e.g. 'cdiv(n,256)' "
                   "(default: one thread per output element).")
@click.option("--option", "options", multiple=True, help="An NVRTC option for the kernel (repeatable), e.g. -DTILE=32.")
@click.option("--shared-mem", type=click.IntRange(min=0), default=0, show_default=True,
              help="Dynamic shared memory per block, bytes.")
@click.option("--vs", default=None, cls=LadderOption,
              help="GEMM rungs to run beside it, from: {ladder} (default: cublas; '' for none).")
@click.option("--reps", type=click.IntRange(min=1), default=20, show_default=True, help="Timed repetitions.")
@click.option("--check-n", type=click.IntRange(min=1), default=None,
              help="GEMM: size of the check against a CPU float64 reference (default 512).")
@click.option("--timing", type=click.Choice(["auto", "events", "batched", "graph"]), default="auto", show_default=True,
              help="events: a pair of CUDA events per launch; batched: many launches per pair (for microsecond "
                   "kernels, where an event pair also counts launch gaps); graph: a CUDA graph of many launches "
                   "replayed per sample; auto: a graph below 0.1 ms (batched where the launch cannot be "
                   "captured).")
@click.option("--seed", type=PositiveInt(high=2**32 - 2, low=0, why="seeds are 32-bit"), default=None,
              help="Random seed for the inputs (default: fresh each run).")
@click.option("--expr", default="x", show_default=True, help="For --op stream: f(x) in numpy syntax, e.g. '2*x'.")
@click.option("--flops-per-element", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="For --op stream: FLOPs f costs per element.")
@click.option("--framework", type=click.Choice(["cupy", "torch"]), default="cupy", show_default=True,
              help="For a Python callable: the arrays it is given.")
@click.option("--precision", type=click.Choice(["fp32", "tf32", "bf16", "fp16"]), default="fp32", show_default=True,
              help="For a Python callable: the roof that judges it and the check's tolerance.")
@click.option("--profile", is_flag=True, help="Also run Nsight Compute at the timed size: on the GEMM kernels that "
                                               "passed their checks, or a stream op's kernel (DRAM% / SM%, measured AI).")
@click.option("--sanitize", is_flag=True,
              help="Also run compute-sanitizer (memcheck with the memory pool off, racecheck, synccheck) on each "
                   "kernel at a small odd shape; a hazard FAILS the kernel.")
@click.option("--roofline", "roofline_png", type=click.Path(dir_okay=False), default=None,
              help="Write the roofline with your kernel on it (.png, .svg or .pdf).")
@format_option
@out_option
@click.pass_context
def bench(ctx, target, kernel, op, op_module, n, m, k, block, grid, options, shared_mem, vs, reps, check_n, timing,
          seed, expr, flops_per_element, framework, precision, profile, sanitize, roofline_png, fmt, out_file):
    """Your own kernel through rooflab's harness: checked against a float64 reference
    (NaN-poisoned output inside guard zones, repeated runs bitwise identical), timed with
    CUDA events and telemetry, optionally profiled, placed on the roofline.

    \b
    rooflab bench my_sgemm.cu --kernel my_sgemm --n 4096 --vs cublas,tiled32
    rooflab bench my_triton.py:matmul --framework torch --n 4096
    rooflab bench scale.cu --kernel scale --op stream --n 256M --expr '2*x' --flops-per-element 1
    """
    from rooflab import api  # noqa: PLC0415
    from rooflab.report.bench import tables  # noqa: PLC0415

    check_bench_options(ctx, target, op)
    t = parse_target(target, kernel, block=block, grid=grid, options=options, shared_mem=shared_mem,
                     framework=framework, precision=precision)
    the_op = op
    if op == "custom":
        if not op_module:
            raise UsageError("--op custom needs --op-module FILE.py defining OP = rooflab.Op(...)")
        from rooflab.ops.record import Op  # noqa: PLC0415
        from rooflab.targets import load_callable  # noqa: PLC0415

        the_op = load_callable(f"{op_module}:OP")
        if not isinstance(the_op, Op):
            raise UsageError(f"{op_module}: OP is not a rooflab.Op")
    vs_list = [x.strip() for x in vs.split(",") if x.strip()] if vs is not None else None
    check_out(fmt, out_file)
    if roofline_png and not roofline_png.lower().endswith((".png", ".svg", ".pdf")):
        raise UsageError(f"--roofline {roofline_png}: give a .png, .svg or .pdf file")
    if roofline_png:
        from rooflab import results  # noqa: PLC0415

        results.check_writable(roofline_png, "--roofline")
    secs = api.sections(t, op=the_op, m=m, n=n, k=k, vs=vs_list, reps=reps, check_n=check_n,
                        profile=profile or None, timing=timing, seed=seed, expr=expr,
                        flops_per_element=flops_per_element)
    if sanitize:
        from rooflab.measure import sanitize as sanitizer  # noqa: PLC0415

        specs = [sanitizer.target_spec(t, op, expr=expr, flops_per_element=flops_per_element, op_module=op_module)]
        if op == "gemm":
            specs += [sanitizer.rung_spec(v.name, v.aligned) for v in _rungs(vs_list or []) if v.name != t.name]
        secs["sanitize"] = sanitize_section(specs)
    doc = measure("bench", **secs)
    if sanitize:
        sanitizer.apply(doc)
    emit(doc, tables(doc), [], fmt, out_file)
    res = api.Result(doc)
    for w in res.warnings:
        err.print(f"warning: {w}", markup=False, style="yellow")
    if roofline_png:
        from rooflab.model import placement  # noqa: PLC0415
        from rooflab.report.picture import plot  # noqa: PLC0415

        suffix = roofline_png.lower().rsplit(".", 1)[-1]
        plot(placement.roofline(doc), **{f"{suffix}_path": roofline_png})
        err.print(f"wrote {roofline_png}", markup=False)
    for line in (doc.get("profile") or {}).get("skipped", []):
        err.print(f"warning: {line}", markup=False, style="yellow")
    if not res.passed:
        fail(f"{', '.join(res.failed)} FAILED: no throughput is reported for "
             f"{'it' if len(res.failed) == 1 else 'them'} (see the checks above)", 1)
