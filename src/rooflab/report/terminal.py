"""Tables for people: rich renderables for a terminal, HTML for Jupyter."""

from __future__ import annotations

import html

from rooflab.report.table import Table


def _texts(table: Table) -> list[list[str]]:
    return [["—" if v is None else str(v) for v in row] for row in table.rows]


def _longest_words(table: Table, cells: list[list[str]]) -> list[int]:
    """Per column, its longest word (header included): the width below which a number would break."""
    return [max([len(w) for w in c.split()] + [len(w) for row in cells if i < len(row) for w in row[i].split()]
                + [1]) for i, c in enumerate(table.columns)]


def fits(table: Table, width: int) -> bool:
    """Whether the table fits `width` columns with no word or number broken (3 per cell of border and
    padding, 1 for the last border)."""
    return sum(_longest_words(table, _texts(table))) + 3 * len(table.columns) + 1 <= width


def to_rich(table: Table, width: int | None = None):
    """Cells, notes and titles are text, never rich markup: they may quote a results file.

    A narrow terminal wraps text at spaces, never through a word or a number ("1,979", "h100-pcie");
    a table too wide for `width` even so is shown one row at a time, a name and a value a line."""
    from rich.table import Table as RichTable  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    if width is not None and not fits(table, width):
        return _stacked(table)
    t = RichTable(title=Text(table.title), title_justify="left", title_style="bold")
    cells = _texts(table)
    widths = _widths(table, cells, width)
    for c, w in zip(table.columns, widths, strict=True):
        t.add_column(Text(c), overflow="fold", width=w)
    for row in cells:
        t.add_row(*[Text(v) for v in row])
    return t


def _widths(table: Table, cells: list[list[str]], width: int | None) -> list[int | None]:
    """Column widths for `width` terminal columns: each its natural width where all fit; else each
    its longest word, and the room left shared out in proportion to what each still lacks."""
    if width is None:
        return [None] * len(table.columns)
    natural = [max([len(c)] + [len(row[i]) for row in cells if i < len(row)]) for i, c in enumerate(table.columns)]
    room = width - 3 * len(table.columns) - 1
    if sum(natural) <= room:
        return [None] * len(table.columns)
    least = _longest_words(table, cells)
    spare, lack = room - sum(least), [n - m for n, m in zip(natural, least, strict=True)]
    share = [m + spare * d // max(sum(lack), 1) for m, d in zip(least, lack, strict=True)]
    return share


def _stacked(table: Table):
    from rich.console import Group  # noqa: PLC0415
    from rich.table import Table as RichTable  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    parts = [Text(table.title, style="bold")]
    for row in _texts(table):
        t = RichTable(show_header=False, box=None, padding=(0, 1, 0, 2))
        t.add_column(style="dim", overflow="fold")
        t.add_column(overflow="fold")
        for name, v in zip(table.columns, row, strict=False):
            t.add_row(Text(name), Text(v))
        parts += [t, Text("")]
    return Group(*parts)


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
            yield to_rich(t, options.max_width)
            for n in t.notes:
                yield Text(f"  {n}", style="dim")

    def _repr_html_(self) -> str:
        return "".join(to_html(t) for t in self.tables)

    def __repr__(self) -> str:
        return "\n".join(t.to_markdown() for t in self.tables)
