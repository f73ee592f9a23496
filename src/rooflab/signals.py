"""Ctrl-C, SIGTERM and SIGHUP end a run the same way: as an exception, so every `finally`
(temporary files, a report folder being built) runs, and with the shell's exit code 128 + signal.

Python turns SIGINT into KeyboardInterrupt; `handled()` makes SIGTERM and SIGHUP raise
`Interrupted`, a KeyboardInterrupt that remembers its signal. `deferred()` holds all three back
over a step that must finish once begun (renaming a built report into place, cleaning up).
"""

from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal other than Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(exc: BaseException) -> int:
    """128 + the signal: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


def name(exc: BaseException) -> str:
    return "interrupted" if getattr(exc, "signum", signal.SIGINT) == signal.SIGINT else \
        f"stopped by {signal.Signals(exc.signum).name}"


def _raise(signum, _frame):
    raise Interrupted(signum)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def handled():
    """SIGTERM and SIGHUP raise Interrupted while the block runs (the handlers are put back after)."""
    if not _main_thread():
        yield
        return
    saved = {}
    for sig in SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            saved[sig] = old = signal.getsignal(sig)  # SIGINT too: ignore_more() replaces it
            if sig != signal.SIGINT and old is not signal.SIG_IGN:  # under nohup SIGHUP stays ignored
                signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, old in saved.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(sig, signal.SIG_DFL if old is None else old)


def ignore_more() -> None:
    """After the first signal: a second one while the run cleans up and says why it stopped does not
    cut that short (it ends the same way, with the first one's exit code)."""
    if not _main_thread():
        return
    for sig in SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, lambda *_: None)


@contextlib.contextmanager
def deferred():
    """Hold SIGINT, SIGTERM and SIGHUP back until the block is done; the first that came meanwhile
    is acted on then, as it would have been. (The handlers are swapped rather than the signals
    masked: a mask is per thread, and another thread would take the signal.)"""
    if not _main_thread():
        yield
        return
    pending: list[int] = []
    saved = {}
    for sig in SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            old = signal.getsignal(sig)
            if old is not signal.SIG_IGN and old is not None:
                saved[sig] = old
                signal.signal(sig, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)
        if pending:
            first = saved[pending[0]]
            if callable(first):
                first(pending[0], None)  # Python's own raises KeyboardInterrupt, handled()'s Interrupted
            else:
                signal.raise_signal(pending[0])
