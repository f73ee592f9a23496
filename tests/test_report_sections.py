"""The report's built-in sections are records (rooflab.report.sections): report.md, the CSVs, the
commands' --format and the report's steps follow the records, not a list kept elsewhere."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflab import lab
from rooflab.cli import cli
from rooflab.report import document, section, sections
from rooflab.report.table import Table

DATA = Path(__file__).parent / "data"


@pytest.fixture
def doc() -> dict:
    return json.loads((DATA / "h200_report_levels.json").read_text(encoding="utf-8"))


def headings(md: str) -> list[str]:
    return re.findall(r"^## (.+)$", md, flags=re.M)


def part(md: str, heading: str) -> str:
    """report.md from ``heading`` to the next second-level heading."""
    start = md.index(f"## {heading}\n")
    nxt = md.find("\n## ", start + 1)
    return md[start:] if nxt < 0 else md[start:nxt]


def test_the_report_is_its_sections_in_their_order(doc):
    md = document.markdown(doc, document.all_tables(doc))
    held = section.present(doc)
    assert [s.name for s in held] == ["summary", "specs", "ridge", "flops", "bandwidth", "memory",
                                      "gemm", "profile", "roofline", "method", "course"]
    assert headings(md) == [s.heading for s in held]
    assert [t.key for t in document.all_tables(doc)] == [t.key for s in held for t in s.all_tables(doc)]


def test_a_section_moved_in_the_list_moves_in_the_report(doc, monkeypatch):
    monkeypatch.setitem(section.SECTIONS, "memory", replace(sections.MEMORY, order=sections.RIDGE.order - 0.5))
    md = document.markdown(doc, document.all_tables(doc))
    hs = headings(md)
    assert hs.index(sections.MEMORY.heading) == hs.index(sections.RIDGE.heading) - 1


def test_a_section_taken_out_takes_its_tables_and_heading(doc, monkeypatch):
    monkeypatch.delitem(section.SECTIONS, "bandwidth")
    files = document.files(doc)
    assert sections.BANDWIDTH.heading not in headings(files["report.md"])
    assert not {"bandwidth.csv", "bandwidth_sweep.csv", "bandwidth_sweep_by_block.csv"} & set(files)
    assert "memory_l2.csv" in files


def test_the_binding_level_paragraph_is_the_rooflines_whatever_its_title(doc, monkeypatch):
    """Placed by its record, not found by the words of its title."""
    real = sections.hierarchy_paragraph
    monkeypatch.setattr(sections, "hierarchy_paragraph", lambda d: ("Binding levels", real(d)[1]))
    md = document.markdown(doc, document.all_tables(doc))
    assert "**Binding levels.**" in part(md, sections.ROOFLINE.heading)
    assert "**Binding levels.**" not in part(md, sections.MEMORY.heading)
    assert "L2 bandwidth and the cliff to HBM" in part(md, sections.MEMORY.heading)


def test_the_memory_command_shows_its_record(doc, monkeypatch):
    """`rooflab memory --format` shows what the memory record holds (here, a record replaced)."""
    one = Table("Only this", ["what"], [["it"]], key="only")
    monkeypatch.setitem(section.SECTIONS, "memory", replace(sections.MEMORY, tables=lambda d: [one],
                                                              paragraphs=lambda d: [("Why", "a test")]))
    monkeypatch.setattr(lab, "measure", lambda secs, **kw: doc)
    r = CliRunner().invoke(cli, ["memory", "--format", "md"])
    assert r.exit_code == 0, r.output
    assert "**Only this**" in r.stdout and "**Why.** a test" in r.stdout
    assert "L2 bandwidth by footprint" not in r.stdout


def test_shown_is_every_table_then_every_paragraph_of_the_sections_held(doc):
    both = json.loads((DATA / "golden" / "everything.json").read_text(encoding="utf-8"))  # tensor roofs, a trace
    tables, paras = sections.shown(both, "flops", "tensor_peaks", "trace")
    assert [t.key for t in tables] == ["flops", "tensor_peaks", "trace"]
    assert paras == sections.FLOPS.paragraphs(both) + section.get("trace").paragraphs(both)
    tables, _ = sections.shown(doc, "flops", "tensor_peaks", "trace")  # neither measured in this one
    assert [t.key for t in tables] == ["flops"]


def test_the_steps_follow_the_section_order(monkeypatch):
    early = section.Section(name="early", heading="Early", tables=lambda d: [], order=sections.GEMM.order - 0.5)
    monkeypatch.setitem(section.SECTIONS, "early", early)
    monkeypatch.setitem(lab.MEASUREMENTS, "early", lambda cfg: lambda dev, say: {})
    steps = lab.steps(lab.ReportConfig())
    assert steps == ["device", "flops", "bandwidth", "memory", "early", "gemm", "sweep", "profile"]
    assert lab.steps(lab.ReportConfig(profile=False))[-1] == "sweep"


def test_the_pictures_are_the_records(doc, tmp_path, monkeypatch):
    drawn = []
    fake = section.Drawing("roofline.png", "roofline", lambda d, path: drawn.append(path) or Path(path).write_bytes(b""))
    monkeypatch.setitem(section.SECTIONS, "roofline", replace(sections.ROOFLINE, pictures=(fake,)))
    written = lab.write_outputs(doc, str(tmp_path))
    assert len(drawn) == 1 and "roofline.png" in written
    assert "roofline.svg" not in written and "roofline-levels.png" not in written
