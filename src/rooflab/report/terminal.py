"""Tables for people: rich renderables for a terminal, HTML for Jupyter."""

from __future__ import annotations

import html

from rooflab.report.table import Table


def to_rich(table: Table):
    """Cells, notes and titles are text, never rich markup: they may quote a results file."""
    from rich.table import Table as RichTable  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    t = RichTable(title=Text(table.title), title_justify="left", title_style="bold")
    for c in table.columns:
        t.add_column(Text(c), overflow="fold")
    for row in table.rows:
        t.add_row(*[Text("—" if v is None else str(v)) for v in row])
    return t


def to_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{'—' if v is None else html.escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in table.rows)
    notes = "".join(f"<p><small>{html.escape(n)}</small></p>" for n in table.notes)
    return f"<h4>{html.escape(table.title)}</h4><table><tr>{head}</tr>{body}</table>{notes}"


class RichTables:
    """Several tables that print with rich in a terminal and show as HTML in Jupyter."""

    def __init__(self, tables: list[Table]):
        self.tables = tables

    def __rich_console__(self, console, options):
        from rich.text import Text  # noqa: PLC0415

        for t in self.tables:
            yield to_rich(t)
            for n in t.notes:
                yield Text(f"  {n}", style="dim")

    def _repr_html_(self) -> str:
        return "".join(to_html(t) for t in self.tables)

    def __repr__(self) -> str:
        return "\n".join(t.to_markdown() for t in self.tables)
