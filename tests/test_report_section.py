"""A measurement section added from outside, as one record (its renderer and schema) and one
measurement: report.md, report.html, its CSV, its picture, the schema and `report --from` take it
up with no other edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab import lab, results
from rooflab.report import section
from report_from import report_from

DATA = Path(__file__).parent / "data"


def answer_table(doc):
    from rooflab.report.table import Table, fmt

    return [Table("The answer, measured", ["what", "value"], [["answer", fmt(doc["answer"]["value"], ".1f")]],
                  key="answer")]


def draw(doc, path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 2))
    fig.add_subplot().bar([0], [doc["answer"]["value"]])
    fig.savefig(path, format="png")


ANSWER = section.Section(
    name="answer", heading="The answer", tables=answer_table,
    paragraphs=lambda doc: [("Why", f"it measured {doc['answer']['value']:.0f}")],
    pictures=(section.Drawing("answer.png", "the answer", draw),),
    schema={"type": "object", "required": ["value"], "properties": {"value": {"type": "number"}}})


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(section.SECTIONS, "answer", ANSWER)
    monkeypatch.setitem(results.SECTION_SCHEMAS, "answer", ANSWER.schema)
    monkeypatch.setitem(lab.MEASUREMENTS, "answer", lambda cfg: lambda dev, say: {"value": 42.0})
    doc = json.loads((DATA / "h200_report_levels.json").read_text(encoding="utf-8"))
    doc["answer"] = {"value": 42.0}
    return doc


def test_register_puts_its_schema_in_the_results_schema(monkeypatch):
    monkeypatch.setattr(section, "SECTIONS", {})
    monkeypatch.setattr(results, "SECTION_SCHEMAS", {})
    section.register(ANSWER)
    assert section.SECTIONS == {"answer": ANSWER}
    assert results.schema()["properties"]["answer"] == ANSWER.schema


def test_the_schema_validates_the_new_section(registered):
    assert results.schema_problem(registered) is None
    registered["answer"]["value"] = "forty-two"
    assert results.schema_problem(registered).startswith("answer.value:")


def test_every_output_carries_it(registered, tmp_path):
    written = lab.write_outputs(registered, str(tmp_path))
    assert "answer.png" in written and "answer.csv" in written
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## The answer" in md and "| answer | 42.0 |" in md and "it measured 42" in md
    assert "![the answer](answer.png)" in md
    assert (tmp_path / "answer.csv").read_text(encoding="utf-8").splitlines() == ["what,value", "answer,42.0"]
    if "report.html" in written:
        assert "The answer, measured" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_report_from_renders_it(registered, tmp_path):
    assert "## The answer" in report_from(registered, tmp_path)


def test_the_report_measures_it(registered):
    sections = lab.report_sections(lab.ReportConfig(profile=False))
    assert list(sections)[-1] == "answer" and sections["answer"](None, None) == {"value": 42.0}
