"""What the commands show: tables and paragraphs on the terminal, documents in a format, progress lines."""

from __future__ import annotations

import contextlib
import sys

from rich.text import Text

from rooflab.cli_terminal import ClosedPipe, PlainProgress, err, interactive, out
from rooflab.errors import OutputError, UsageError
from rooflab.report.table import Table


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
