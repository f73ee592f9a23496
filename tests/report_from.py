"""`rooflab report --from` run in-process on a document, as the section and ceiling tests use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab import cli, results


def report_from(doc: dict, tmp_path: Path) -> str:
    """report.md of `rooflab report --from` on `doc`, after asserting the command exited 0."""
    src = tmp_path / "doc.json"
    src.write_text(results.dumps(doc), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--from", str(src), "--out", str(tmp_path / "rep")])
        raise SystemExit(0)
    assert (exc.value.code or 0) == 0
    return (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
