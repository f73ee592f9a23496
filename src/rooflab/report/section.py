"""A measurement section, as the report sees it: one record from which report.md, report.html, the
CSVs, the results schema and `report --from` take what they show of that section.

    SECTION = register(Section(name="trace", heading="...", tables=..., paragraphs=..., pictures=...,
                               schema={...}))

`name` is the section's key in the results document; the record says how to render it and what
it may hold. What measures the section is the harness's (rooflab.measure) and the pipeline binds
it (`rooflab.lab.register_measurement`): renderers never import the harness, so `report --from`
renders on a machine with no GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rooflab import results
from rooflab.report.table import Table


@dataclass(frozen=True)
class Drawing:
    """A picture of a section: `draw(doc, path)` writes it; `when(doc)` says whether there is one."""

    file: str
    alt: str
    draw: Callable[[dict, str], object]
    when: Callable[[dict], bool] = lambda doc: True


@dataclass(frozen=True)
class Section:
    name: str  # the results document's key
    heading: str  # report.md's and report.html's heading
    tables: Callable[[dict], list[Table]]
    paragraphs: Callable[[dict], list[tuple[str, str]]] = lambda doc: []
    pictures: tuple[Drawing, ...] = ()
    schema: dict | None = None  # JSON Schema of doc[name] (rooflab's own: in schema/results.schema.json)
    brief: tuple[str, ...] | None = None  # the table keys report.md shows (None: all); the rest: CSV and HTML
    notes: Callable[[dict], list[str]] = lambda doc: []  # lines after the tables in report.md and report.html
    order: int = 100  # place among the registered sections


SECTIONS: dict[str, Section] = {}


def register(section: Section) -> Section:
    """Add a section (replacing one of the same name); its schema joins the results schema."""
    SECTIONS[section.name] = section
    if section.schema is not None:
        results.SECTION_SCHEMAS[section.name] = section.schema
    return section


def present(doc: dict) -> list[Section]:
    """The registered sections this document holds, in their order."""
    return sorted((s for s in SECTIONS.values() if doc.get(s.name)), key=lambda s: (s.order, s.name))


def tables(doc: dict) -> list[Table]:
    return [t for s in present(doc) for t in s.tables(doc)]


def drawings(doc: dict) -> list[Drawing]:
    return [d for s in present(doc) for d in s.pictures if d.when(doc)]
