"""Results as data: one JSON document per run, with its format version.

Every command fills sections of the same document ("gemm", "bandwidth", "flops",
"profile", ...), so a saved file renders the same tables and paragraphs on a
machine with no GPU (`rooflab report --from results.json`). Each section is a typed
record (rooflab.schema); a file of an older format is upgraded when it is loaded.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import os
import platform
import re
import stat
import sys
import tempfile
from pathlib import Path

from rooflab import __version__
from rooflab.errors import OutputError, UsageError
from rooflab.schema.document import FORMAT, Document, format_of, upgrade
from rooflab.schema.typed import BOUND_WORDS, DocumentError, not_of_type, required_message, short

SCHEMA_FILE = Path(__file__).parent / "schema" / "results.schema.json"
MANIFEST = ".rooflab-manifest.json"  # in a report folder: the files rooflab wrote there


def new_document(command: str, device: dict | None) -> dict:
    return {
        "format": FORMAT,
        "rooflab_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "host": {"python": platform.python_version(), "platform": platform.platform()},
        "device": device,
    }


def _clean(obj):
    """JSON has no NaN/inf: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def dumps(doc: dict) -> str:
    return json.dumps(_clean(doc), indent=2, allow_nan=False) + "\n"


@functools.cache
def current_umask() -> int:
    """The process umask, read once. Linux shows it in /proc/self/status; elsewhere it can only be
    read by setting it, so it is set and put back at once (and only once: the answer is cached)."""
    try:
        m = re.search(r"^Umask:\s*([0-7]+)", Path("/proc/self/status").read_text(encoding="utf-8"), re.MULTILINE)
        if m:
            return int(m.group(1), 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def resolved(path: str | os.PathLike) -> Path:
    """Where a write to `path` lands: a symlink (a chain of them, a dangling one) is followed to its
    target, so the link itself is never replaced by a regular file."""
    return Path(os.path.realpath(path)) if Path(path).is_symlink() else Path(path)


def is_special(path: str | os.PathLike) -> bool:
    """An existing path that is neither a regular file nor a folder (a device, a FIFO, a socket):
    it is written through, never replaced, so `--out /dev/null` leaves /dev/null a device."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


def _write_through(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)


def publish(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """Put a finished temporary file at `path`. A regular file (or none) is replaced atomically,
    with the permissions the umask asks for (mkstemp makes it 0600); a symlink's target is
    replaced, not the link; a device or FIFO is written through."""
    target = resolved(path)
    if is_special(target):
        try:
            _write_through(target, Path(tmp).read_bytes())
        finally:
            Path(tmp).unlink(missing_ok=True)
        return
    if Path(tmp).parent.resolve() != target.parent.resolve():  # a link to another folder: rename stays within one
        data = Path(tmp).read_bytes()
        Path(tmp).unlink(missing_ok=True)
        write_atomic(target, data)
        return
    os.chmod(tmp, 0o666 & ~current_umask())
    os.replace(tmp, target)


def write_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, then rename: never a half-written file. Text is
    UTF-8 whatever the locale. A device or FIFO is written through; a symlink's target is written."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    target = resolved(path)
    if is_special(target):
        _write_through(target, data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        publish(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def why(exc: OSError, path: str | os.PathLike | None = None) -> str:
    """A short reason for a failed write: 'Permission denied', or 'x.txt is not a folder'."""
    if path is not None:
        blocker = _file_in_the_way(Path(path))
        if blocker is not None:
            return f"{blocker} is not a folder"
    return exc.strerror or exc.__class__.__name__


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest existing ancestor of `path`, where that is not a folder (so nothing can be made under it)."""
    for parent in path.parents:
        try:
            if parent.exists():
                return None if parent.is_dir() else parent
        except OSError:
            return None
    return None


def fallback_folders() -> list[Path]:
    """Where a document goes when its own path cannot be written: $TMPDIR (the system's temporary
    folder where TMPDIR is not set), then the current folder."""
    tmp = Path(os.environ.get("TMPDIR") or tempfile.gettempdir())
    return list(dict.fromkeys([tmp, Path.cwd()]))


def save_fallback(doc: dict) -> tuple[Path | None, str]:
    """Write `doc` to rooflab-results-<UTC time>.json in the first fallback folder that takes it.
    Returns (path, "") or (None, the last reason)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    text = dumps(doc)
    reason = "no folder to write to"
    for folder in fallback_folders():
        for i in range(100):
            p = folder / (f"rooflab-results-{stamp}.json" if i == 0 else f"rooflab-results-{stamp}-{i}.json")
            if p.exists():
                continue
            try:
                write_atomic(p, text)
            except OSError as exc:
                reason = why(exc, p)
                break
            return p, ""
    return None, reason


def save(path: str | os.PathLike, text: str | bytes, doc: dict | None) -> None:
    """Write an output file; where that fails, save `doc` (the results) to a fallback file and
    raise OutputError naming both. The one place every user-chosen path is written through."""
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise OutputError(cannot_write(path, exc, doc)) from None


def save_document(path: str | os.PathLike, doc: dict) -> None:
    """Write a results document as JSON, with the fallback of `save`."""
    save(path, dumps(doc), doc)


def cannot_write(path: str | os.PathLike, exc: OSError, doc: dict | None) -> str:
    """'cannot write P (reason); the results were saved to F', saving `doc` to F first."""
    msg = f"cannot write {path} ({why(exc, path)})"
    if doc is None:
        return msg
    saved, reason = save_fallback(doc)
    if saved is None:
        return f"{msg}; the results could not be saved anywhere else either ({reason})"
    return f"{msg}; the results were saved to {saved}"


STDOUT = "-"  # as a file --out: standard output


def check_writable(path: str | os.PathLike, option: str, *, folder: bool = False) -> None:
    """Refuse, before anything runs, an output path that can never be written: an empty name, one
    under a regular file, or in a folder where no file can be made (no permission, or a folder like
    /proc that takes no new files: a file is made there and removed again to know)."""
    text = os.fspath(path)
    if not text.strip():
        raise UsageError(f"{option} '{text}': give a {'folder' if folder else 'file'} name")
    if text == STDOUT:
        if folder:
            raise UsageError(f"{option} -: a report is a folder of files and cannot go to standard output")
        return
    p = Path(path)
    blocker = _file_in_the_way(p)
    if blocker is not None:
        raise UsageError(f"{option} {path}: cannot write there ({blocker} is a file, not a folder)")
    target = resolved(p)
    if folder and target.exists() and not target.is_dir():
        raise UsageError(f"{option} {path}: cannot write there (it is a file, not a folder)")
    if not folder and target.is_dir():
        raise UsageError(f"{option} {path}: cannot write there (it is a folder, not a file)")
    if not folder and is_special(target):
        if not os.access(target, os.W_OK):
            raise UsageError(f"{option} {path}: cannot write there (no permission to write to it)")
        return  # written through: nothing is made beside it
    where = target if folder and target.is_dir() else next((a for a in target.parents if a.exists()), None)
    if where is None:
        return
    if not os.access(where, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: cannot write there (no permission to write in {where})")
    try:
        fd, probe = tempfile.mkstemp(dir=where, prefix=".rooflab-probe-")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there (no new file can be made in {where}: "
                         f"{why(exc)})") from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


# ---------------------------------------------------------------- report folders


def read_manifest(folder: str | os.PathLike) -> list[str]:
    """The file names an earlier report wrote into `folder` (its manifest), plain names only."""
    try:
        data = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return []
    return [f for f in files if isinstance(f, str) and _plain_name(f)]


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..", MANIFEST) and "/" not in name and "\\" not in name \
        and "\0" not in name


def write_manifest(folder: str | os.PathLike, names: list[str]) -> None:
    write_atomic(Path(folder) / MANIFEST, json.dumps({"written_by": f"rooflab {__version__}",
                                                      "files": sorted(set(names))}, indent=2) + "\n")


def remove_stale(folder: str | os.PathLike, earlier: list[str], now: list[str]) -> list[str]:
    """Remove the files an earlier report wrote (per its manifest) that this one did not write
    again. Only regular files directly in `folder`; returns the names removed."""
    removed = []
    keep = set(now)
    for name in sorted(set(earlier) - keep):
        p = Path(folder) / name
        if not _plain_name(name) or p.is_symlink() or not p.is_file():
            continue
        try:
            p.unlink()
        except OSError:
            continue
        removed.append(name)
    return removed


MAX_DEPTH = 64  # a results document is about 8 levels deep; the schema check recurses once per level


def nesting_depth(obj) -> int:
    """How deeply lists and objects nest in `obj`, counted without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number (rooflab writes null for a missing value)")


def load(path: str | os.PathLike) -> dict:
    """Read a results document, upgrade it to the current format and check it against the schema
    that ships with rooflab (schema/results.schema.json): a wrong field is one UsageError that
    names it."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{p}: is a folder, not a results file") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"{p}: not a rooflab results file ({exc.__class__.__name__}: "
                         f"{_one_line(str(exc))})") from None
    depth = nesting_depth(doc)
    if depth > MAX_DEPTH:
        raise UsageError(f"{p}: not a rooflab results file (nested {depth} levels deep; "
                         f"a results file is at most {MAX_DEPTH})")
    version = format_of(doc)
    if version is None:
        raise UsageError(f"{p}: not a rooflab results file (no format version)")
    if version > FORMAT:
        raise UsageError(f"{p}: format {version} is newer than this rooflab ({FORMAT}); upgrade rooflab")
    doc = upgrade(doc)
    problem = schema_problem(doc)
    if problem:
        raise UsageError(f"{p}: {problem}")
    return doc


def load_document(path: str | os.PathLike) -> Document:
    """`load`, as the typed record."""
    return Document.from_dict(load(path))


SECTION_SCHEMAS: dict[str, dict] = {}  # sections registered beyond the schema file's (rooflab.report.section)


def schema() -> dict:
    """The results schema: the file's, with each registered section's part under its name."""
    s = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    for name, part in SECTION_SCHEMAS.items():
        s["properties"][name] = part
    return s


@functools.cache
def _validator_for(sections: str):
    import jsonschema  # noqa: PLC0415  only where a file is loaded: importing rooflab does not need it

    return jsonschema.Draft202012Validator(schema())


def _validator():
    return _validator_for(json.dumps(SECTION_SCHEMAS, sort_keys=True))  # anew when a section registers


def schema_problem(doc: dict) -> str | None:
    """The first thing wrong with `doc` by the schema, as 'gemm.rungs[0].timing.median_ms: 'fast'
    is not of type 'number'', or None when it is valid. A document of an older format is upgraded
    first. Without jsonschema (some GPU images) the records check it: types, required fields and
    bounds, not the schema's conditional rules."""
    doc = upgrade(doc)
    try:
        import jsonschema  # noqa: PLC0415
    except ImportError:
        return record_problem(doc)
    error = jsonschema.exceptions.best_match(_validator().iter_errors(doc))
    if error is None:
        return None
    where = field_path(error.absolute_path)
    return f"{where + ': ' if where else ''}{_describe(error)}"


def record_problem(doc: dict) -> str | None:
    """The first thing wrong with `doc` by the typed records, or None."""
    try:
        Document.from_dict(doc)
    except DocumentError as exc:
        return _one_line(str(exc))[:300]
    return None


def field_path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error) -> str:
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return not_of_type(error.instance, types)
    if error.validator in BOUND_WORDS:
        return f"{short(error.instance)} is not {BOUND_WORDS[error.validator]} {error.validator_value}"
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        if len(missing) > 1:
            return _one_line(required_message(missing))[:200]
    return _one_line(error.message)[:200]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def command_line() -> str:
    return "rooflab " + " ".join(sys.argv[1:])
