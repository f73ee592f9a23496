"""The command group, its help, and `main`: every error becomes one line and an exit code."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from rooflab import __version__, signals
from rooflab.cli_terminal import ClosedPipe, TerminalContext, closed_pipe, err, terminal_encoding
from rooflab.errors import RooflabError


class Stopped(Exception):  # noqa: N818
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the command; `interrupt` is its KeyboardInterrupt."""

    def __init__(self, interrupt: BaseException):
        super().__init__(signals.name(interrupt))
        self.interrupt = interrupt


# click >= 8.2 raises this for a bare `rooflab`; older versions print the help themselves
NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())


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


def _commands(group: click.Group):
    for command in group.commands.values():
        yield command
        if isinstance(command, click.Group):  # the fleet group's commands too
            yield from _commands(command)


def finish() -> None:
    """After every command module registered its commands: the terminal's context (its encoding)
    for every command."""
    cli.context_class = TerminalContext
    for command in _commands(cli):
        command.context_class = TerminalContext


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
