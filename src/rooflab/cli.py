"""The rooflab command line. The only module that prints or exits.

Exit codes: 0 done, 1 a failure that is not the user's input (a kernel, a write), 2 bad
input (every option is checked before a GPU is looked for), 3 no GPU, 4 a missing tool,
128 + the signal where one stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), 141 when the
reader of standard output went away (| head). A failing command's last line on stderr is its
only error line, `rooflab: error: …`; only warnings (`warning: …`) and, where stderr is not a terminal,
progress lines (`… step`) come before it (tests/test_cli_properties.py holds it to that).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from pathlib import Path

import click
from rich.text import Text

from rooflab import __version__, signals
from rooflab.cli_terminal import (
    ClosedPipe,
    PlainProgress,
    TerminalContext,
    closed_pipe,
    err,
    interactive,
    out,
    terminal_encoding,
)
from rooflab.errors import OutputError, RooflabError, UsageError
from rooflab.report.table import Table
from rooflab.rungs import LADDER

RUNG_NAMES = [r.name for r in LADDER]  # the --kernels help is computed from the ladder, never typed


class Stopped(Exception):  # noqa: N818
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the command; `interrupt` is its KeyboardInterrupt."""

    def __init__(self, interrupt: BaseException):
        super().__init__(signals.name(interrupt))
        self.interrupt = interrupt


FORMATS = ["table", "json", "csv", "md"]
# click >= 8.2 raises this for a bare `rooflab`; older versions print the help themselves
NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())


# ---------------------------------------------------------------- helpers

def show(table: Table) -> None:
    from rooflab.report.terminal import to_rich  # noqa: PLC0415

    out.print(to_rich(table, out.width))
    for n in table.notes:
        out.print(Text(f"  {n}", style="dim"))
    out.print()


def show_paragraphs(paras: list[tuple[str, str]]) -> None:
    for title, text in paras:
        out.print(Text.assemble((f"{title}.", "bold"), f" {text}\n"))


@contextlib.contextmanager
def progress_status(first: str):
    """A spinner on stderr whose text follows the library's progress callback."""
    if not interactive():
        yield PlainProgress().say
        return
    with err.status(first) as st:
        yield lambda msg: st.update(msg)


def emit(doc: dict, tables: list[Table], paras: list[tuple[str, str]], fmt: str, out_file: str | None) -> None:
    """Print or write a document in the chosen format."""
    from rooflab import results  # noqa: PLC0415

    if fmt == "json":
        text = results.dumps(doc)
    elif fmt == "csv":  # every table: one block each, a blank line between
        text = "\n".join(t.to_csv() for t in tables)
    elif fmt == "md":
        text = "\n".join(t.to_markdown() for t in tables) + "\n" + "\n".join(
            f"**{title}.** {p}\n" for title, p in paras)
    else:
        text = None
    if out_file is not None and out_file != results.STDOUT:
        if fmt == "table":
            raise UsageError("--out needs --format json, csv or md")
        results.save(out_file, text, doc)  # where that fails, the document is saved elsewhere and named
        err.print(f"wrote {out_file}", markup=False)
    elif text is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise ClosedPipe from None
        except OSError as exc:  # a full disk: the measurement is not lost either
            raise OutputError(results.cannot_write("standard output", exc, doc)) from None
    else:
        for t in tables:
            show(t)
        show_paragraphs(paras)


def detect_device():
    from rooflab.cuda.device import detect, document_entry  # noqa: PLC0415

    dev = detect()
    return dev, document_entry(dev)


def measure(title: str, **sections) -> dict:
    """Run sections through the pipeline (rooflab.lab) with a progress line; warn on throttling."""
    from rooflab import lab  # noqa: PLC0415
    from rooflab.report.telemetry import warnings  # noqa: PLC0415

    with progress_status(title) as say:
        doc = lab.measure(sections, progress=say)
    for w in warnings(doc):
        err.print(f"warning: {w}", markup=False, style="yellow")
    return doc


def new_doc(dev_entry: dict | None) -> dict:
    from rooflab import results  # noqa: PLC0415

    return results.new_document(results.command_line(), dev_entry)


INT_MAX = 2**31 - 1  # the kernels take their sizes as C int
MAX_FLOATS = 2**38  # floats per array: 1 TiB, beyond any GPU (and the largest copy grid stays a valid launch)


def parse_count(text: str, limit: int = MAX_FLOATS) -> int:
    """'256M' -> 268435456 (binary suffixes K, M, G), or a plain integer. Zero, negative,
    fractional, non-finite and absurdly large counts are refused."""
    t = str(text).strip().upper()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    hint = "(use e.g. 1048576, 256M or 1G)"
    try:
        value = float(t[:-1] if mult > 1 else t) * mult
    except ValueError:
        raise UsageError(f"not a count: {text!r} {hint}") from None
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise UsageError(f"not a count: {text!r}: a count is a whole number of at least 1 {hint}")
    if value > limit:
        raise UsageError(f"count {text!r} is too large (at most {limit:,})")
    return int(value)


class PositiveInt(click.ParamType):
    """A whole number from 1 (or `low`) to `high`; plain decimal digits only."""

    name = "integer"

    def __init__(self, high: int = INT_MAX, low: int = 1, why: str = "the kernels take 32-bit int sizes"):
        self.high, self.low, self.why = high, low, why

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            text = str(value).strip()
            if not re.fullmatch(r"[+-]?[0-9]+", text):
                self.fail(f"{value!r} is not a whole number", param, ctx)
            n = int(text)
        if n < self.low:
            self.fail(f"{n} is not a positive integer" if self.low == 1 else f"{n} is below {self.low}", param, ctx)
        if n > self.high:
            self.fail(f"{n} is too large (at most {self.high}: {self.why})", param, ctx)
        return n


class PositiveFloat(click.ParamType):
    """A finite number above 0 and at most `high`."""

    name = "number"

    def __init__(self, high: float, why: str):
        self.high, self.why = high, why

    def convert(self, value, param, ctx):
        try:
            x = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x) or x <= 0:
            self.fail(f"{value!r} is not a positive number", param, ctx)
        if x > self.high:
            self.fail(f"{value!r} is too large (at most {self.high:g}: {self.why})", param, ctx)
        return x


class Count(click.ParamType):
    """A count of floats with K/M/G suffixes (parse_count)."""

    name = "count"

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return parse_count(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


class IntList(click.ParamType):
    """Comma-separated whole numbers, e.g. 128,256."""

    name = "list"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        words = [w.strip() for w in str(value).split(",")]
        if not all(re.fullmatch(r"[0-9]+", w) for w in words):
            self.fail(f"must be comma-separated whole numbers, got {value!r}", param, ctx)
        return tuple(int(w) for w in words)


def tunable_names() -> list[str]:
    from rooflab import rungs  # noqa: PLC0415

    return [r.name for r in rungs.LADDER if r.variants]


class Kernels(click.ParamType):
    """Comma-separated rung names from the ladder (or only its tunable rungs), each named once."""

    name = "list"

    def __init__(self, tunable: bool = False):
        self.tunable = tunable

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        from rooflab import rungs  # noqa: PLC0415

        known = tunable_names() if self.tunable else rungs.names()
        words = [w.strip() for w in str(value).split(",") if w.strip()]
        if not words:
            self.fail(f"names no rung ({value!r}); choose from {', '.join(known)}", param, ctx)
        twice = sorted({w for w in words if words.count(w) > 1})
        if twice:
            self.fail(f"names {', '.join(twice)} more than once", param, ctx)
        unknown = [n for n in words if n not in known]
        if unknown:
            what = "not tunable (it has no launch variants)" if self.tunable and all(
                n in rungs.names() for n in unknown) else "unknown"
            self.fail(f"{', '.join(unknown)}: {what}; choose from {', '.join(known)}", param, ctx)
        return words


class Parts(click.ParamType):
    """Comma-separated parts of the memory hierarchy's measurement, each named once."""

    name = "list"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from rooflab.measure.memory import PARTS  # noqa: PLC0415

        words = [w.strip() for w in str(value).split(",") if w.strip()]
        if not words:
            self.fail(f"names no part ({value!r}); choose from {', '.join(PARTS)}", param, ctx)
        unknown = [w for w in words if w not in PARTS]
        if unknown:
            self.fail(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}", param, ctx)
        return tuple(dict.fromkeys(words))


class GpuName(click.ParamType):
    """A GPU of the spec table (find_spec): a bad name fails before anything runs."""

    name = "gpu"

    def convert(self, value, param, ctx):
        from rooflab.model.specs import find_spec  # noqa: PLC0415

        try:
            return find_spec(str(value)).key
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


def check_out(fmt: str, out_file: str | None) -> None:
    """Reject --out with --format table, and an --out path that can never be written, before anything runs."""
    if out_file is None:
        return
    if fmt == "table":
        raise UsageError("--out needs --format json, csv or md")
    from rooflab import results  # noqa: PLC0415

    results.check_writable(out_file, "--out")


def gpu_keys() -> list[str]:
    from rooflab.model.specs import SPECS  # noqa: PLC0415

    return [s.key for s in SPECS]


class LadderOption(click.Option):
    """An option whose help names what it takes as it is when help is shown: {ladder} the ladder's
    rungs, {tunable} its tunable rungs, {gpus} the spec table's GPUs."""

    def get_help_record(self, ctx):
        from rooflab import rungs  # noqa: PLC0415

        saved = self.help
        text = saved or ""
        for key, names in (("{ladder}", rungs.names), ("{tunable}", tunable_names), ("{gpus}", gpu_keys)):
            if key in text:
                text = text.replace(key, ", ".join(names()))
        self.help = text
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = saved


class CountType(click.ParamType):
    """An element count: 1048576, 256M or 1G (binary suffixes)."""

    name = "COUNT"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return parse_count(str(value))
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                             help="table for people; json (the full results document), csv or md for scripts.")
out_option = click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
                          help="Write the output to FILE (atomically; a device or FIFO is written through, a "
                               "symlink's target is written) instead of standard output; - is standard output.")


# ---------------------------------------------------------------- commands

class CommandList(click.Group):
    """The top-level help lists every registered command with its one-line summary (its short
    help), computed from the commands themselves: a command added later is listed too."""

    ORDER = ("report", "gemm", "bandwidth", "flops", "profile", "roofline", "trace", "compare", "specs", "ridge", "info")

    def list_commands(self, ctx):
        rank = {name: i for i, name in enumerate(self.ORDER)}
        return sorted(self.commands, key=lambda name: (rank.get(name, len(rank)), name))

    def invoke(self, ctx):
        # click turns Ctrl-C into Abort (after a blank line on stderr) and a closed pipe into exit 1:
        # both are taken before click sees them, so main() can end each with its own code
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise Stopped(exc) from None
        except BrokenPipeError:
            raise ClosedPipe from None

    def format_commands(self, ctx, formatter):
        rows = [(f"rooflab {name}", self.commands[name].get_short_help_str(limit=1000))
                for name in self.list_commands(ctx) if not self.commands[name].hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows, col_spacing=3)


@click.group(cls=CommandList, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rooflab")
def cli():
    """How close do your kernels get to the roofs of the GPU they run on?

    Every measurement is checked before it is timed; a kernel that fails its check
    shows as FAILED and gets no throughput. Run `rooflab COMMAND --help` for one
    command's options.
    """


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
@click.option("--reps", type=PositiveInt(), default=20, show_default=True, help="Timed launches per rung.")
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
def gemm(n, m, k, kernels, reps, check_n, flush_l2, seed, sanitize, fmt, out_file):
    """The SGEMM ladder (G1–G11): check, time and explain every rung.

    Every rung is checked at --check-n against a CPU float64 product (the seed's
    max-relative check on [0,1) inputs, a normwise check on [-1,1) inputs and the
    componentwise GEMM error bound on both, with tolerances from the precision's
    error model), at 509x383x257 where it takes any shape, then at the timed size
    against a GPU float64 product, and run repeatedly and concurrently to catch
    races. Only then is it timed: one warm-up, --reps launches between CUDA events.
    """
    from rooflab.measure import gemm as gemm_mod  # noqa: PLC0415
    from rooflab.report import gemm as render_gemm  # noqa: PLC0415

    cfg = gemm_mod.GemmConfig(m=n if m is None else m, n=n, k=n if k is None else k, reps=reps, check_n=check_n,
                              flush_l2=flush_l2, seed=seed)
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
    tables = [render_gemm.gemm_table(doc), render_gemm.ratio_table(doc), render_gemm.check_table(doc)]
    emit(doc, tables, render_gemm.paragraphs(doc), fmt, out_file)
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
    from rooflab.report.ceilings import bandwidth_tables  # noqa: PLC0415
    from rooflab.report.explain_ceilings import bandwidth_paragraphs  # noqa: PLC0415

    cfg = bw.BandwidthConfig(n=size, reps=reps, rounds=rounds, blocks=blocks, sweep=not no_sweep)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("copy bandwidth", bandwidth=lambda dev, say: bw.run(cfg, dev, say))
    emit(doc, bandwidth_tables(doc), bandwidth_paragraphs(doc), fmt, out_file)


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
    from rooflab.report.ceilings import flops_table, tensor_peak_table  # noqa: PLC0415
    from rooflab.report.explain_ceilings import flops_paragraphs  # noqa: PLC0415

    cfg = fl.FlopsConfig(reps=reps, target_ms=target_ms)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("FMA peak", flops=lambda dev, say: fl.run(cfg, dev, say))
    emit(doc, [t for t in (flops_table(doc), tensor_peak_table(doc)) if t], flops_paragraphs(doc), fmt, out_file)


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
    from rooflab.report.ceilings import profile_table  # noqa: PLC0415

    check_out(fmt, out_file)
    if raw_dir:
        from rooflab import results  # noqa: PLC0415

        results.check_writable(raw_dir, "--raw-dir", folder=True)
    doc = measure("ncu", profile=lambda dev, say: profiling.run(with_gemm=with_gemm, n=n, size=size,
                                                                progress=say, raw_dir=raw_dir))
    emit(doc, [profile_table(doc)], [], fmt, out_file)



def _rungs(names: list[str]) -> list:
    from rooflab import rungs  # noqa: PLC0415

    return [rungs.get(name) for name in names if rungs.get(name) is not None]


def sanitize_section(specs: list[dict]):
    """The compute-sanitizer section; compute-sanitizer is looked for now, before anything runs."""
    from rooflab.measure import sanitize as sanitizer  # noqa: PLC0415

    sanitizer.find_sanitizer()
    return lambda dev, say: sanitizer.run(specs, say)


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


@cli.command(short_help="search the tunable rungs' launch configurations, cache the winner (G12)")
@click.option("--n", type=click.IntRange(min=1), default=4096, show_default=True, help="Size the search times at.")
@click.option("--kernels", type=Kernels(tunable=True), default=None, cls=LadderOption,
              help="Tunable rungs to search, from {tunable} (default: all of them).")
@click.option("--reps", type=click.IntRange(min=1), default=10, show_default=True, help="Timed launches per variant.")
@format_option
def tune(n, kernels, reps, fmt):
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
    cfg = gemm_mod.GemmConfig(m=n, n=n, k=n, reps=reps, kernels=names)
    cfg.validate()
    doc = measure("tune", tune=lambda dev, say: gemm_mod.tune_rungs(cfg, dev, say))
    rows = []
    for r in doc["tune"]["rungs"]:
        for label, ms in r["times_ms"].items():
            rows.append([r["rung"], label, "FAILED" if ms is None else f"{ms:.3f}", "winner" if label == r["winner"] else ""])
    t = Table(f"Tuning at N={n}", ["rung", "configuration", "ms", ""], rows, [f"cache: {doc['tune']['cache']}"],
              key="tune")
    emit(doc, [t], [], fmt, None)



def _mib_list(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--footprints must be comma-separated MiB values, got {text!r}") from None
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
    from rooflab.report.memory import hierarchy_table, memory_paragraphs, memory_tables  # noqa: PLC0415

    cfg = mem.MemoryConfig(rounds=rounds, reps=reps, target_ms=launch_ms,
                           footprints=_mib_list(footprints) if footprints else (),
                           parts=parts)
    cfg.validate()
    check_out(fmt, out_file)
    doc = measure("memory hierarchy", memory=lambda dev, say: mem.run(cfg, dev, say))
    tables = memory_tables(doc)
    h = hierarchy_table(doc)
    emit(doc, tables + ([h] if h else []), memory_paragraphs(doc), fmt, out_file)


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
    doc = {"schema_version": results.SCHEMA_VERSION, "compare": {"a": a, "b": b}}
    tables = compare_tables(da, db)
    doc["tables"] = [t.to_dict() for t in tables]
    emit(doc, tables, [], fmt, None)


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
        from rooflab.cli_fleet import report_devices  # noqa: PLC0415

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
            with report_progress(len(rep.STEPS), current) as (on_step, say):
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


# ---------------------------------------------------------------- speed against problem size
# A command of its own rather than `gemm --sizes`: it writes a folder (a picture, its CSVs, the
# results) and sweeps the copy as well as the GEMM rungs.


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
    from rooflab.report.sweep import sweep_tables  # noqa: PLC0415

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
    tables = sweep_tables(doc)
    if fmt == "csv":  # the long table, every rung at every size, is the one scripts want
        tables = sorted(tables, key=lambda t: t.key != "sweep")
    emit(doc, tables, [], fmt, None)


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


def one_line(text: str) -> str:
    """Messages are shown on one line, whatever they quote."""
    return " ".join(str(text).split())


def fail(message: str, code: int) -> None:
    """The one way a command ends in error: `rooflab: error: …` on stderr, one line, and the exit code."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        closed_pipe()
    with contextlib.suppress(OSError):
        sys.stderr.write(f"rooflab: error: {one_line(message)}\n")
        sys.stderr.flush()
    sys.exit(code)


def _command_path(exc: click.UsageError, argv: list[str] | None) -> str:
    """'rooflab gemm' for an error in gemm's arguments ('rooflab' where no command was named).
    Some parser errors carry no context: then the command is the first word that names one."""
    if exc.ctx is not None:
        return exc.ctx.command_path
    words = sys.argv[1:] if argv is None else argv
    name = next((w for w in words if w in cli.commands), None)
    return f"rooflab {name}" if name else "rooflab"




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
    emit(doc, [render.ranked_table(doc)], render.paragraphs(doc), fmt, out_file)


def _register_extensions() -> None:
    from rooflab.cli_fleet import register as register_fleet  # noqa: PLC0415

    register_fleet(cli)
    cli.context_class = TerminalContext
    for command in cli.commands.values():
        command.context_class = TerminalContext


_register_extensions()


def main(argv: list[str] | None = None) -> None:
    terminal_encoding()
    with signals.handled():
        _main(argv)


def _main(argv: list[str] | None) -> None:
    try:
        cli.main(args=argv, prog_name="rooflab", standalone_mode=False)
    except NoArgsIsHelp as exc:  # bare `rooflab`: its help, as `rooflab --help` prints it
        sys.stdout.write(exc.ctx.get_help() + "\n")
        sys.exit(0)
    except click.UsageError as exc:
        fail(f"{exc.format_message()} (see {_command_path(exc, argv)} --help)", exc.exit_code)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except Stopped as exc:
        signals.ignore_more()
        fail(str(exc), signals.exit_code(exc.interrupt))
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        signals.ignore_more()
        cause = exc if isinstance(exc, KeyboardInterrupt) else exc.__cause__
        fail(signals.name(cause or KeyboardInterrupt()), signals.exit_code(cause or KeyboardInterrupt()))
    except (ClosedPipe, BrokenPipeError):
        closed_pipe()
    except RooflabError as exc:
        for line in getattr(exc, "log", "").strip().splitlines():  # a compiler's log, before the one error line
            err.print(line, markup=False, highlight=False)
        fail(str(exc), exc.exit_code)
    except OSError as exc:
        fail(f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc), 1)
    except ModuleNotFoundError as exc:  # a dependency missing from this Python: say which, not "a bug"
        if os.environ.get("ROOFLAB_DEBUG"):
            raise
        fail(f"the Python package {exc.name!r} is not installed here; install rooflab's dependencies "
             f"(pip install rooflab, or pip install {exc.name})", 4)
    except Exception as exc:
        if os.environ.get("ROOFLAB_DEBUG"):
            raise
        fail(f"internal error ({exc.__class__.__name__}: {exc}); this is a bug in rooflab, please report it "
             "with the command line (ROOFLAB_DEBUG=1 shows the traceback)", 1)
