"""Results as data: one JSON document per run, with a schema version.

Every command fills sections of the same document ("gemm", "bandwidth", "flops",
"profile", ...), so a saved file renders the same tables and paragraphs on a
machine with no GPU (`rooflab report --from results.json`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import sys
import tempfile
from pathlib import Path

from rooflab import __version__
from rooflab.errors import UsageError

SCHEMA_VERSION = 1


def new_document(command: str, device: dict | None) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
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


def write_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike) -> dict:
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{p}: not a rooflab results file ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema_version"), int):
        raise UsageError(f"{p}: not a rooflab results file (no schema_version)")
    if doc["schema_version"] > SCHEMA_VERSION:
        raise UsageError(f"{p}: schema version {doc['schema_version']} is newer than this rooflab "
                         f"({SCHEMA_VERSION}); upgrade rooflab")
    return doc


def command_line() -> str:
    return "rooflab " + " ".join(sys.argv[1:])
