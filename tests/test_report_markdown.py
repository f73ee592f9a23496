"""report.md as a person reads it: a summary first, at most 300 lines for the full H200 report, checks
one line per rung, the all-GPU tables left to their CSVs, the course's IDs explained once, each
picture once; and nothing lost: every table still in a CSV (and in report.html, tested beside it)."""

import csv
import io
import re
from pathlib import Path

import pytest

from rooflab import lab, results
from rooflab.report import blocks as B
from rooflab.report import document

DATA = Path(__file__).parent / "data"
FULL = DATA / "h200_report_levels.json"  # the full H200 report: every section, 17 rungs, the hierarchy


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    doc = results.load(FULL)
    written = lab.write_outputs(doc, str(out))
    return doc, out, written, (out / "report.md").read_text(encoding="utf-8")


def test_full_h200_report_is_at_most_300_lines(full):
    _doc, _out, _written, md = full
    assert len(md.splitlines()) <= 300


def test_summary_comes_first(full):
    _doc, _out, _written, md = full
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings[0].startswith("Summary")
    summary = md.split("\n## ")[1]
    for what in ("**Device**", "**Ceilings, bracketed**", "**SGEMM ladder (G9)**",
                 "![roofline](roofline.png)", "17 of 17 rungs passed every check", "Fastest on FP32 CUDA cores"):
        assert what in summary, what
    # each roof between its witness and its physical limit (the published figure or the pins)
    fp32 = next(ln for ln in summary.splitlines() if ln.startswith("| FP32 CUDA cores |"))
    assert "| 65.3 |" in fp32 and "| 66.9 |" in fp32 and "| 97.7% |" in fp32
    l2 = next(ln for ln in summary.splitlines() if ln.startswith("| L2 read, whole L2 |"))
    assert "no published limit" in l2
    assert "ERROR: above the physical limit" in summary  # the swept HBM figure, refused as a roof


def test_checks_are_one_line_per_rung_with_the_full_list_in_the_csv(full):
    doc, out, _written, md = full
    rungs = [r["kernel"] for r in doc["gemm"]["rungs"]]
    n_checks = sum(len(r["checks"]) for r in doc["gemm"]["rungs"])
    summary = [line for line in md.splitlines() if line.startswith("| ") and "pass (" in line]
    assert [line.split(" | ")[0].strip("| ") for line in summary] == rungs
    assert "| mma_tf32 | seed max-rel, normwise ×3, error vs FP32 inputs ×3, guard zones ×3, deterministic | " \
           "normwise 9.6e-06 / 1e-05 @ 4096 | pass (11/11) |" in md
    assert "nothing written outside C" not in md  # the per-check lines are not in report.md
    rows = list(csv.DictReader(io.StringIO((out / "checks.csv").read_text(encoding="utf-8"))))
    assert len(rows) == n_checks > 8 * len(rungs)


def test_a_failed_rung_says_so_on_its_line():
    doc = results.load(FULL)
    rec = next(r for r in doc["gemm"]["rungs"] if r["kernel"] == "vec")
    rec["passed"] = False
    rec["checks"][1]["passed"] = False
    md = document.markdown(doc, document.all_tables(doc))
    line = next(ln for ln in md.splitlines() if ln.startswith("| vec | seed max-rel"))
    assert "FAILED: normwise @ 512x512x512" in line
    assert "16 of 17 rungs passed every check; FAILED (no speed reported): vec." in md


def test_the_all_gpu_tables_are_left_to_their_csvs(full, tmp_path):
    _doc, out, _written, md = full
    assert "b200 FP4 tensor" not in md and "| a100-40gb |" not in md and "| rtx-4090 " not in md
    assert "| NVIDIA H200 (this device) FP32 (CUDA cores) | 66.9 | 4.814 | 13.9 |" in md
    assert "`rooflab ridge`" in md
    ridge = (out / "ridge_all.csv").read_text(encoding="utf-8")
    assert "b200 FP4 tensor" in ridge and "rtx-4090 FP32 (CUDA cores)" in ridge
    # the spec-only report of one GPU: that GPU's rows only
    spec = tmp_path / "spec"
    lab.write_outputs(results.new_document("rooflab report --gpu h200", lab.spec_device_entry("h200")), str(spec))
    smd = (spec / "report.md").read_text(encoding="utf-8")
    assert "| h200 FP32 (CUDA cores) | 66.9 | 4.800 | 13.9 |" in smd and "b200 FP4 tensor" not in smd
    assert "b200 FP4 tensor" in (spec / "ridge_all.csv").read_text(encoding="utf-8")
    # a table report.md shows whole says nothing about rows elsewhere
    assert "specs.csv, report.html" not in smd and "ridge_all.csv, report.html" in smd
    assert "## From the course" in smd and "P1–P10" in smd


def test_the_course_ids_are_explained_once(full):
    _doc, _out, _written, md = full
    assert md.count("## From the course") == 1 and "Seed deliverables" not in md
    course = md.split("## From the course")[1]
    for what in ("G1–G12", "P1–P10", '"the seed"', "| G10 |", "| P9 |"):
        assert what in course, what
    assert "issue 11" not in md


def test_each_picture_once(full):
    _doc, _out, _written, md = full
    assert md.count("![roofline](roofline.png)") == 1
    assert md.count("(roofline-levels.png)") == 1


def test_nothing_is_lost(full):
    """Every table report.md shortens or leaves out is written whole as a CSV."""
    doc, out, written, _md = full
    tables = document.all_tables(doc)
    for t in tables:
        assert f"{t.key}.csv" in written, t.key
    for b in document.blocks(doc, tables):
        if isinstance(b, B.TableBlock):
            whole = b.full or b.table
            if whole.title == "Where each course requirement lands":  # fixed text, not a measurement
                continue
            assert whole.key and (out / f"{whole.key}.csv").exists(), whole.title
            body = list(csv.reader(io.StringIO((out / f"{whole.key}.csv").read_text(encoding="utf-8"))))[1:]
            assert len(body) == (1 if whole.record else len(whole.rows)), whole.key


def test_markdown_tables_are_gfm(full):
    """A table's title line sits right above it and its notes after a blank line: no note line is
    taken for a row."""
    _doc, _out, _written, md = full
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if re.fullmatch(r"\|(---\|)+", line):
            assert lines[i - 1].startswith("| ") and lines[i - 2].startswith("**"), (i, line)
            j = i + 1
            while j < len(lines) and lines[j].startswith("| "):
                j += 1
            assert j == len(lines) or lines[j] == "", (j, lines[j])
