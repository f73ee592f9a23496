"""The one place in the fleet code that starts processes.

Every child gets `safety.child_env` (NVLS off, explicitly), its own process group
(so a timeout ends it and whatever it started, by its id), stdin closed, and
stdout+stderr in a log file. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rooflab.cuda.safe_env import child_env

WORKER_MODULE = "rooflab.fleet.worker"


def worker_cmd(*args: str) -> list[str]:
    """`python -m rooflab.fleet.worker ARGS`: one step of a fleet run in its own process."""
    return [sys.executable, "-m", WORKER_MODULE, *args]


@dataclass
class Child:
    name: str
    cmd: list[str]
    log: str
    proc: subprocess.Popen
    started: float = field(default_factory=time.perf_counter)
    rc: int | None = None
    timed_out: bool = False
    seconds: float | None = None

    def record(self) -> dict:
        return {"name": self.name, "rc": self.rc, "timed_out": self.timed_out, "seconds": self.seconds,
                "log": self.log, "cmd": self.cmd}


def start(name: str, cmd: Sequence[str], *, log: str | os.PathLike, env_extra: Mapping[str, str] | None = None,
          cwd: str | None = None) -> Child:
    """Start `cmd` with the safe environment; output goes to `log`."""
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    env = child_env(env_extra)
    with open(log, "ab") as fh:
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True)
    return Child(name=name, cmd=list(cmd), log=str(log), proc=proc)


def _kill(child: Child) -> None:
    """End the child's own process group (the child and what it started), then the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(child.proc.pid, signal.SIGTERM)
    try:
        child.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(child.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            child.proc.wait(timeout=10)


def wait_all(children: Sequence[Child], timeout_s: float, poll_s: float = 0.2) -> list[Child]:
    """Wait for every child; those still running after `timeout_s` are ended and marked timed out."""
    deadline = time.perf_counter() + timeout_s
    pending = list(children)
    try:
        _poll(pending, deadline, poll_s)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM from a launcher): leave no child behind
        for c in pending:
            _kill(c)
        raise
    return list(children)


def _poll(pending: list[Child], deadline: float, poll_s: float) -> None:
    while pending:
        for c in list(pending):
            rc = c.proc.poll()
            if rc is not None:
                c.rc, c.seconds = rc, time.perf_counter() - c.started
                pending.remove(c)
        if not pending:
            break
        if time.perf_counter() > deadline:
            for c in pending:
                _kill(c)
                c.rc, c.timed_out, c.seconds = c.proc.returncode, True, time.perf_counter() - c.started
            pending.clear()
            break
        time.sleep(poll_s)


def run(name: str, cmd: Sequence[str], *, log: str | os.PathLike, timeout_s: float,
        env_extra: Mapping[str, str] | None = None) -> Child:
    """Start one child and wait for it."""
    return wait_all([start(name, cmd, log=log, env_extra=env_extra)], timeout_s)[0]


def log_tail(path: str | os.PathLike, lines: int = 6) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])
