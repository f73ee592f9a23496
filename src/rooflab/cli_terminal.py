"""The command line's terminal: its two consoles, what a terminal that is not UTF-8 is given,
progress as plain lines where stderr is no terminal, and a closed standard output."""

from __future__ import annotations

import codecs
import contextlib
import os
import sys

import click
from rich.console import Console


class ClosedPipe(Exception):  # noqa: N818  the reader of standard output went away: not an error of ours
    """Raised where a write finds standard output closed."""


class _Console(Console):
    def on_broken_pipe(self) -> None:  # rich's own ends in exit 1; a closed pipe ends quietly (exit 141)
        raise ClosedPipe


def _stdout_width() -> int | None:
    """COLUMNS where it is set (a pipe too); else a terminal's own width, and 200 for a pipe."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    return None if sys.stdout.isatty() else 200


out = _Console(highlight=False, soft_wrap=False, width=_stdout_width())
err = _Console(stderr=True, highlight=False, soft_wrap=True)


def interactive() -> bool:
    """Whether stderr can take a spinner or a progress bar (a terminal, and not TERM=dumb)."""
    return err.is_terminal and not err.is_dumb_terminal


# what a terminal that cannot show a character gets instead (files are always UTF-8)
PLAIN = {"—": "-", "–": "-", "×": "x", "≤": "<=", "≥": ">=", "…": "...", "·": "*", "÷": "/", "→": "->",
         "µ": "u", "±": "+/-", "≈": "~", "²": "^2", "³": "^3", "‘": "'", "’": "'", "“": '"', "”": '"',
         "•": "*", "│": "|", "─": "-"}


def _plain(exc: UnicodeError):
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "".join(PLAIN.get(ch, "?") for ch in exc.object[exc.start:exc.end]), exc.end


codecs.register_error("rooflab-plain", _plain)


def terminal_encoding() -> None:
    """A terminal or pipe whose encoding is not UTF-8 (LANG=…ISO-8859-1, PYTHONIOENCODING=ascii)
    gets what it can encode: the rest as plain ASCII, or '?'."""
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if enc.startswith("utf") or not hasattr(stream, "reconfigure"):
            continue
        with contextlib.suppress(ValueError, OSError, AttributeError):
            stream.reconfigure(errors="rooflab-plain")


class PlainProgress:
    """Progress as lines (`… step`) where stderr is not a terminal. A step's line is printed once
    the step is under way (its first message, or the next step), so a run that stops at once says
    only why, with no progress line before it."""

    def __init__(self):
        self.pending: str | None = None

    def step(self, name: str) -> None:
        self.flush()
        self.pending = name

    def say(self, msg: str) -> None:
        self.flush()
        err.print(f"… {msg}", markup=False, style="dim")

    def flush(self) -> None:
        if self.pending is not None:
            err.print(f"… {self.pending}", markup=False, style="dim")
            self.pending = None


class TerminalContext(click.Context):
    """Help text as the terminal can show it (click writes UTF-8 even to an ASCII stream)."""

    def get_help(self) -> str:
        return for_terminal(super().get_help())


def for_terminal(text: str) -> str:
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        return text.encode(enc, "rooflab-plain").decode(enc)
    except LookupError:
        return text


def closed_pipe() -> None:
    """The reader of standard output went away (| head): end quietly, as a shell tool does."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's own flush finds no pipe
    sys.exit(141)
