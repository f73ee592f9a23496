"""A report as a list of blocks (headings, text, tables, pictures), so report.md and report.html say
the same thing: each renderer walks the same list."""

from __future__ import annotations

from dataclasses import dataclass, field

from rooflab.report.table import Table


@dataclass
class Heading:
    level: int
    text: str
    where: str = "both"


@dataclass
class Text:
    """A paragraph; Markdown's **bold**, _italic_ and `code` are the only markup."""

    text: str
    quote: bool = False  # a call-out (a warning, "nothing was measured")
    where: str = "both"  # "md": report.md only (a sentence standing for a table report.html shows whole)


@dataclass
class Paragraphs:
    """Titled paragraphs: (title, text)."""

    items: list[tuple[str, str]]


@dataclass
class Bullets:
    items: list[str]
    where: str = "both"  # "html": report.html only (report.md keeps to 300 lines)


@dataclass
class TableBlock:
    table: Table | None  # None: report.md leaves it out (nothing of it is short enough to show)
    # the whole table where report.md shows a shorter one (a summary, this device's rows only)
    full: Table | None = None


@dataclass
class Picture:
    file: str  # "roofline.png"
    alt: str
    kind: str = "roofline"  # which interactive figure replaces it in report.html: "roofline" or "levels"
    notes: list[str] = field(default_factory=list)


Block = Heading | Text | Paragraphs | Bullets | TableBlock | Picture


def to_markdown(blocks: list[Block]) -> str:
    md: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            if b.where != "html":  # a heading is a block of its own: no blank line needed after it
                md += ["#" * b.level + " " + b.text]
        elif isinstance(b, Text):
            if b.text and b.where != "html":
                md += [f"> {b.text}" if b.quote else b.text, ""]
        elif isinstance(b, Paragraphs):
            if b.items:  # a list, so that one paragraph is one line
                md += [f"- **{title}.** {text}" for title, text in b.items] + [""]
        elif isinstance(b, Bullets):
            if b.items and b.where != "html":
                md += [f"- {item}" for item in b.items] + [""]
        elif isinstance(b, TableBlock):
            if b.table is not None:
                md.append(_table_markdown(b.table))
        elif isinstance(b, Picture):
            md += [f"![{b.alt}]({b.file})", ""]
    while md and md[-1] == "":
        md.pop()
    return "\n".join(md) + "\n"


def _table_markdown(table: Table) -> str:
    """The table's Markdown, its title line right above it (a GFM table may follow a paragraph line)
    and its notes on one line (consecutive lines make one paragraph anyway)."""
    lines = table.to_markdown().rstrip("\n").split("\n")
    n = len(table.notes)
    body, notes = (lines[:-n], lines[-n:]) if n else (lines, [])
    if len(body) > 1 and body[1] == "":
        del body[1]
    return "\n".join(body + ([" ".join(notes)] if notes else [])) + "\n"
