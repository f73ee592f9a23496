"""The rooflab command line. The only package that prints or exits.

Exit codes: 0 done, 1 a failure that is not the user's input (a kernel, a write), 2 bad
input (every option is checked before a GPU is looked for), 3 no GPU, 4 a missing tool,
128 + the signal where one stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), 141 when the
reader of standard output went away (| head). A failing command's last line on stderr is its
only error line, `rooflab: error: …`; only warnings (`warning: …`) and, where stderr is not a terminal,
progress lines (`… step`) come before it (tests/test_cli_properties.py holds it to that).

One module per group of commands (measuring, bench, spec, report, sweep, trace, fleet), their shared
options and output, and the group with `main` in app.
"""

from rooflab.cli import bench, fleet, measuring, report, spec, sweep, trace  # noqa: F401  (each registers its commands)
from rooflab.cli.app import cli, finish, main
from rooflab.cli.output import emit, show

finish()

__all__ = ["cli", "emit", "main", "show"]
