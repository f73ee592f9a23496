"""Runs a Python program under torch.profiler and writes its Chrome trace:
`python -m rooflab.measure.trace_runner --out TRACE.json -- script.py ARGS` (or `-- -m module ARGS`).

The program runs as __main__ with its own sys.argv, as `python script.py ARGS` would run it; its
exit status is this process's. Started by `rooflab trace`, not by people.
"""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str]) -> int:
    if "--out" not in argv or "--" not in argv:
        print("usage: python -m rooflab.measure.trace_runner --out TRACE.json -- script.py ARGS", file=sys.stderr)
        return 2
    out = argv[argv.index("--out") + 1]
    prog = argv[argv.index("--") + 1:]
    if not prog:
        print("trace_runner: no program after --", file=sys.stderr)
        return 2
    from rooflab.measure.trace import TorchCollector  # noqa: PLC0415

    module = prog[0] == "-m"
    target = prog[1] if module else prog[0]
    sys.argv = (prog[1:] if module else prog)
    code = 0
    with TorchCollector(chrome_trace_path=out):
        try:
            if module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                sys.path.insert(0, os.path.dirname(os.path.abspath(target)))  # as python script.py does
                runpy.run_path(target, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
