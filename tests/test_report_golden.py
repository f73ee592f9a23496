"""The report's content does not move when its code does: every output of the recorded documents
(report.md, report.html's text and tables, the CSV files, each command's --format csv/md/json)
is the same, byte for byte, as tests/data/golden/ holds it (tests/golden.py wrote it)."""

from __future__ import annotations

import pytest
from golden import DOCS, GOLDEN, render

from rooflab.report.html import unavailable


def _recorded(name: str) -> dict[str, str]:
    root = GOLDEN / name
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_output_is_as_recorded(name):
    want = _recorded(name)
    got = render(DOCS[name])
    if unavailable() is not None:  # no Plotly: no report.html to compare
        want.pop("report.html.txt", None)
    assert sorted(got) == sorted(want)
    for rel in sorted(want):
        assert got[rel] == want[rel], f"{name}/{rel} differs from the recorded rendering"


def test_the_recording_holds_every_section():
    """The frozen document shows every section the report has, so the comparison covers them all."""
    from rooflab.report import document  # noqa: F401  (registers the built-in sections)

    files = (GOLDEN / "everything" / "files.txt").read_text(encoding="utf-8").split()
    for csv in ("flops.csv", "bandwidth.csv", "memory_l2.csv", "hierarchy.csv", "gemm.csv", "profile.csv",
                "sweep.csv", "trace.csv", "roofline.csv", "telemetry.csv", "tensor_peaks.csv", "brackets.csv"):
        assert csv in files
    assert "report.html.txt" in _recorded("everything")
