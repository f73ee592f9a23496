"""A report folder is replaced whole or not at all.

The new report is built in a hidden folder inside it (same file system, so every file can be
renamed into place), then moved in with every signal held back: an interruption before that
leaves the earlier report as it was, and the build folder is removed whatever happens. Files
the earlier report wrote (its manifest) and this one does not are removed; a file rooflab did
not write is never replaced or removed.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rooflab import results, signals
from rooflab.errors import OutputError

PARTIAL = "results.partial.json"  # what an interrupted or failed run had measured
BUILD_PREFIX = ".rooflab-build-"
# names every report writes: a file of the user's by one of them is found before anything runs
ALWAYS_WRITTEN = ("results.json", "report.md", "roofline.png", "roofline.svg")


def not_ours(folder: str | os.PathLike, names, earlier: list[str], stage: Path | None = None,
             source: str | os.PathLike | None = None) -> list[str]:
    """Of `names`, those that exist in `folder` but no earlier report of rooflab's wrote, and that
    replacing would change: a file byte for byte the one built in `stage`, or the document the report
    is rendered from (`source`, about to be written again as it is), loses nothing."""
    ours = set(earlier)
    mine = []
    for n in names:
        p = Path(folder) / n
        if n in ours or not os.path.lexists(p):
            continue
        with contextlib.suppress(OSError):
            if source is not None and p.samefile(source):
                continue
            if stage is not None and p.is_file() and filecmp.cmp(p, stage / n, shallow=False):
                continue
        mine.append(n)
    return mine


def refusal(folder: str | os.PathLike, names: list[str]) -> str:
    return (f"{Path(folder) / names[0]} was not written by rooflab (no earlier report's manifest names it"
            f"{'' if len(names) == 1 else f'; nor {len(names) - 1} more: ' + ', '.join(names[1:])}): "
            "rooflab does not replace it; move it away or choose another --out")


def check(folder: str | os.PathLike, source: str | os.PathLike | None = None) -> None:
    """Before anything runs: the report's fixed files would not replace one of the user's
    (`source`: the document it renders, which may be the folder's results.json)."""
    from rooflab.errors import UsageError  # noqa: PLC0415

    if not Path(folder).is_dir():
        return
    mine = not_ours(folder, ALWAYS_WRITTEN, results.read_manifest(folder), source=source)
    if mine:
        raise UsageError(refusal(folder, mine))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# a temporary file of write_atomic or of a picture (mkstemp: '.' + name + '.' + 8 random characters),
# left in a report folder by a run killed outright, or by a version that wrote the folder in place
_TEMPORARY = re.compile(r"\.([\w.-]+\.(?:json|md|csv|png|svg|pdf))\.[a-z0-9_]{8}\.(?:tmp|png|svg|pdf)")
STALE_S = 3600  # younger temporaries may be another run's, at work in this folder now


def remove_abandoned(folder: Path) -> None:
    """Build folders of a run that was killed outright (SIGKILL, a power cut), and temporary files
    an hour old of rooflab's own names (the report's files, per the manifest)."""
    ours = set(results.read_manifest(folder)) | set(ALWAYS_WRITTEN) | {PARTIAL, results.MANIFEST}
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            m = re.fullmatch(re.escape(BUILD_PREFIX) + r"(\d+)-\w+", p.name)
            if m and p.is_dir() and not p.is_symlink() and not _alive(int(m.group(1))):
                shutil.rmtree(p, ignore_errors=True)
                continue
            t = _TEMPORARY.fullmatch(p.name)
            if t and t.group(1) in ours and p.is_file() and not p.is_symlink() \
                    and time.time() - p.stat().st_mtime > STALE_S:
                p.unlink(missing_ok=True)


@contextlib.contextmanager
def building(folder: str | os.PathLike) -> Iterator[Path]:
    """A hidden, empty folder inside `folder` (made if needed) to build the report in; removed after."""
    top = Path(folder)
    top.mkdir(parents=True, exist_ok=True)
    remove_abandoned(top)
    stage = Path(tempfile.mkdtemp(dir=top, prefix=f"{BUILD_PREFIX}{os.getpid()}-"))
    try:
        yield stage
    finally:
        with signals.deferred():
            shutil.rmtree(stage, ignore_errors=True)


def move_in(folder: str | os.PathLike, stage: Path, names: list[str]) -> tuple[list[str], list[str], str]:
    """Move the built files `names` from `stage` into `folder`, remove the earlier report's files
    this one does not write, and record the new manifest. Returns (earlier names, removed names,
    why the manifest could not be written or ""). Raises OutputError, replacing nothing, where a
    name is one of the user's files."""
    top = Path(folder)
    earlier = results.read_manifest(top)
    mine = not_ours(top, names, earlier, stage=stage)
    if mine:
        raise OutputError(refusal(top, mine))
    moved = False
    try:
        with signals.deferred():  # from the first rename to the manifest: all of it, whatever arrives
            for n in names:
                os.replace(stage / n, top / n)  # a name in the folder itself: a link there is replaced, not followed
            removed = results.remove_stale(top, earlier, names)
            (top / PARTIAL).unlink(missing_ok=True)
            moved = True
            try:
                results.write_manifest(top, names)
                problem = ""
            except OSError as exc:
                problem = results.why(exc)
    except KeyboardInterrupt as exc:  # a signal held back while the report moved in is delivered here
        exc.report_in_place = moved
        raise
    return earlier, removed, problem


def save_partial(folder: str | os.PathLike, doc: dict) -> Path:
    """What a stopped run had, in FOLDER/results.partial.json (never half-written, whatever arrives)."""
    p = Path(folder) / PARTIAL
    with signals.deferred():
        results.write_atomic(p, results.dumps(doc))
    return p


def publish(doc: dict, folder: str | os.PathLike, write: Callable[[dict, str], list[str]]):
    """Build the report with `write(doc, stage)` beside the folder's files, then move it in.
    Returns (names written, earlier names, removed names, why the manifest is missing or "")."""
    with building(folder) as stage:
        names = write(doc, str(stage))
        return (names, *move_in(folder, stage, names))
