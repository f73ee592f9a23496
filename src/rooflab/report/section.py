"""A measurement section, as the report sees it: one record from which report.md, report.html, the
CSVs, the pictures, the results schema, `report --from` and the section's command (`--format`)
take what they show of that section.

    SECTION = register(Section(name="trace", heading="...", tables=..., paragraphs=..., pictures=...,
                               schema={...}))

`name` is the section's key in the results document; the record says how to render it and what
it may hold. What measures the section is the harness's (rooflab.measure) and the pipeline binds
it (`rooflab.lab.register_measurement`): renderers never import the harness, so `report --from`
renders on a machine with no GPU. The report is the registered sections in their `order`
(report.sections holds the built-in ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rooflab import results
from rooflab.model.roofline import Roofline
from rooflab.report.blocks import Block, Heading, Paragraphs, Picture, TableBlock, Text
from rooflab.report.table import Table


@dataclass(frozen=True)
class Drawing:
    """A picture of a section: `draw(doc, path)` writes it; `when(doc)` says whether there is one;
    `figure(doc)`, where given, is its interactive twin in report.html (a Plotly figure, or None
    where there is nothing to show), else report.html shows the file."""

    file: str
    alt: str
    draw: Callable[[dict, str], object]
    when: Callable[[dict], bool] = lambda doc: True
    figure: Callable[[dict], object] | None = None


@dataclass(frozen=True)
class View:
    """What a section's blocks are laid out from: the document, every table of the report by its
    key (a section may show another's, as the summary shows the ladder's) and the roofline."""

    doc: dict
    tables: dict[str, Table]
    roofline: Roofline


@dataclass(frozen=True)
class Section:
    name: str  # the results document's key
    heading: str  # report.md's and report.html's heading
    tables: Callable[[dict], list[Table]]  # its tables: the section's command shows them, each is a CSV
    paragraphs: Callable[[dict], list[tuple[str, str]]] = lambda doc: []
    pictures: tuple[Drawing, ...] = ()
    schema: dict | None = None  # JSON Schema of doc[name] (rooflab's own: in schema/results.schema.json)
    brief: tuple[str, ...] | None = None  # the table keys report.md shows (None: all); the rest: CSV and HTML
    notes: Callable[[dict], list[str]] = lambda doc: []  # lines after the tables in report.md and report.html
    order: int = 100  # place among the registered sections
    # shorter views of its tables that only the report adds (a CSV each; its command shows the tables)
    summaries: Callable[[dict], list[Table]] = lambda doc: []
    # its part of report.md and report.html where the plain one (heading, pictures, tables, paragraphs,
    # notes: `plain_blocks`) does not fit
    blocks: Callable[[View], list[Block]] | None = None
    # whether a document holds it (None: it has a non-empty doc[name])
    when: Callable[[dict], bool] | None = None

    def holds(self, doc: dict) -> bool:
        return self.when(doc) if self.when is not None else bool(doc.get(self.name))

    def all_tables(self, doc: dict) -> list[Table]:
        return [*self.tables(doc), *self.summaries(doc)]

    def report_blocks(self, view: View) -> list[Block]:
        return self.blocks(view) if self.blocks is not None else plain_blocks(self, view)


def plain_blocks(sec: Section, view: View) -> list[Block]:
    """A section's part of the report: its heading, pictures, tables (the brief ones in report.md,
    every one whole in report.html), paragraphs and notes."""
    doc = view.doc
    out: list[Block] = [Heading(2, sec.heading)]
    out += [Picture(d.file, d.alt, sec.name) for d in sec.pictures if d.when(doc)]
    for t in sec.all_tables(doc):
        t = view.tables.get(t.key, t)
        out.append(TableBlock(t) if sec.brief is None or t.key in sec.brief else TableBlock(None, full=t))
    paras = sec.paragraphs(doc)
    if paras:
        out.append(Paragraphs(paras))
    out += [Text(n) for n in sec.notes(doc)]
    return out


SECTIONS: dict[str, Section] = {}


def register(section: Section) -> Section:
    """Add a section (replacing one of the same name); its schema joins the results schema."""
    SECTIONS[section.name] = section
    if section.schema is not None:
        results.SECTION_SCHEMAS[section.name] = section.schema
    return section


def get(name: str) -> Section:
    return SECTIONS[name]


def present(doc: dict) -> list[Section]:
    """The registered sections this document holds, in their order."""
    return sorted((s for s in SECTIONS.values() if s.holds(doc)), key=lambda s: (s.order, s.name))


def tables(doc: dict) -> list[Table]:
    """Every table of the report, in its order."""
    return [t for s in present(doc) for t in s.all_tables(doc)]


def drawings(doc: dict) -> list[Drawing]:
    return [d for s in present(doc) for d in s.pictures if d.when(doc)]

