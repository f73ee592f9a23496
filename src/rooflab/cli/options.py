"""Option types and the shared options of the commands: sizes, lists, rung and GPU names, --format and --out."""

from __future__ import annotations

import math
import re

import click

from rooflab.errors import UsageError
from rooflab.rungs import LADDER


RUNG_NAMES = [r.name for r in LADDER]  # the --kernels help is computed from the ladder, never typed


FORMATS = ["table", "json", "csv", "md"]


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
