"""report.html: the report's blocks as one self-contained page (Plotly's runtime inlined, no network
fetch), with the rooflines interactive and every table whole and sortable."""

from __future__ import annotations

import html
import math
import re

from rooflab.report import blocks as B
from rooflab.report import section
from rooflab.report.table import Table, Value

# Sorting a table by a click on its header: no library does only this, so a few lines here.
_SORT_JS = r"""
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], i = th.cellIndex;
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    function key(row) {  // data-v where the text does not start with the number, else the text's number
      var c = row.cells[i], v = c.getAttribute("data-v");
      if (v === null) v = c.textContent.replace(/,/g, "");
      return /^[-+]?(\d|\.\d)/.test(v) ? parseFloat(v) : c.textContent;
    }
    function cmp(a, b) {
      var x = key(a), y = key(b);
      if (typeof x === "number" && typeof y === "number") return x - y;
      if (typeof x === "number") return -1;
      if (typeof y === "number") return 1;
      return String(x).localeCompare(String(y), undefined, {numeric: true});
    }
    Array.prototype.slice.call(body.rows).sort(function (a, b) { return asc ? cmp(a, b) : cmp(b, a); })
      .forEach(function (r) { body.appendChild(r); });
  });
});
"""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px;color:#1a1a1a}
h1{font-size:24px}h2{font-size:20px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{font-size:16px}nav{columns:3;font-size:13px}nav a{display:block}
table{border-collapse:collapse;margin:12px 0;font-size:12.5px}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
.note{color:#555;font-size:12.5px;margin:2px 0}
blockquote{border-left:4px solid #e0a800;margin:12px 0;padding:4px 12px;background:#fff8e1}
code{background:#f4f4f4;padding:0 3px;font-size:12.5px;word-break:break-all}
.figure{margin:12px 0}
"""


def unavailable() -> str | None:
    """Why report.html cannot be written here (Plotly missing), or None."""
    try:
        import plotly  # noqa: F401, PLC0415
    except ImportError:
        return "plotly is not installed (pip install plotly)"
    return None


def _inline(text: str) -> str:
    """Markdown's **bold**, _italic_ and `code` as HTML; everything else escaped."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"(?<![\w/])_(.+?)_(?![\w/])", r"<em>\1</em>", out)


_LEADING_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _shown_number(text: str) -> float | None:
    """The number a cell's text starts with, read as the page's sort reads it (thousands separators
    dropped), or None."""
    m = _LEADING_NUMBER.match(text.replace(",", ""))
    return float(m.group(0)) if m else None


def _sort_value(cell, text: str) -> str | None:
    """The number a cell sorts by where its text does not start with it (a cell's text sorts itself
    otherwise: the page stays small)."""
    v = cell.value if isinstance(cell, Value) else cell
    if isinstance(v, tuple):
        v = v[0] if v else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return None if _shown_number(text) is not None else f"{float(v):.6g}"


def table_html(t: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in t.columns)
    rows = []
    numeric = [0] * len(t.columns)
    for r in t.rows:
        cells = []
        for i, c in enumerate(r):
            text = "—" if c is None else str(c)
            v = _sort_value(c, text)
            if i < len(numeric) and (v is not None or _shown_number(text) is not None):
                numeric[i] += 1
            cells.append(f'<td data-v="{v}">{html.escape(text)}</td>' if v is not None else f"<td>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    notes = "".join(f'<p class="note">{_inline(n)}</p>' for n in t.notes)
    key = f' id="table-{t.key}"' if t.key else ""
    # numbers right-aligned, one rule per table: a column most of whose cells are numbers
    cols = [i + 1 for i, n in enumerate(numeric) if t.rows and n > len(t.rows) / 2]
    style = ("<style>" + ",".join(f"#table-{t.key} td:nth-child({i})" for i in cols) + "{text-align:right}</style>"
             if cols and t.key else "")
    return (f'{style}<table class="sortable"{key}><caption>{_inline(t.title)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{notes}")


def _slug(text: str, seen: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, n = base, 1
    while slug in seen:
        n += 1
        slug = f"{base}-{n}"
    seen.add(slug)
    return slug


def render(doc: dict, blocks: list[B.Block]) -> str:
    """The page. Plotly's runtime is inlined once, in the head."""
    from plotly.offline import get_plotlyjs  # noqa: PLC0415

    twins = {d.file: d.figure for d in section.drawings(doc) if d.figure is not None}  # Plotly's, by picture
    interactive = set(twins)
    seen: set[str] = set()
    body: list[str] = []
    nav: list[str] = []
    title = next((b.text for b in blocks if isinstance(b, B.Heading) and b.level == 1), "rooflab report")
    for b in blocks:
        if isinstance(b, B.Heading):
            slug = _slug(b.text, seen)
            body.append(f'<h{b.level} id="{slug}">{_inline(b.text)}</h{b.level}>')
            if b.level == 2:
                nav.append(f'<a href="#{slug}">{_inline(b.text)}</a>')
        elif isinstance(b, B.Text):
            if b.text and b.where != "md":
                body.append(f"<blockquote>{_inline(b.text)}</blockquote>" if b.quote else f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, B.Paragraphs):
            body += [f"<p><strong>{_inline(t)}.</strong> {_inline(x)}</p>" for t, x in b.items]
        elif isinstance(b, B.Bullets):
            if b.items and b.where != "md":
                body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, B.TableBlock):
            # a summary of its own (one line per rung) stays above the whole table; a subset does not
            if b.table is not None and b.full is not None and b.table.key and b.table.key != b.full.key:
                body.append(table_html(b.table))
            whole = b.full or b.table
            if whole is not None:
                body.append(table_html(whole))
        elif isinstance(b, B.Picture):
            if b.file in twins:
                fig = twins.pop(b.file)(doc)  # each figure once
                if fig is not None:
                    div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{b.kind}",
                                      config={"displaylogo": False, "responsive": True})
                    body.append(f'<div class="figure" data-kind="{b.kind}">{div}</div>')
            elif b.file not in interactive:
                # a picture with no interactive twin: the PNG beside the page (inlined it would take the
                # room the 5 MB page has left after Plotly's runtime)
                body.append(f'<div class="figure" data-kind="{b.kind}"><img src="{html.escape(b.file)}" '
                            f'alt="{html.escape(b.alt)}" style="max-width:100%"></div>')
    toc = f"<nav>{''.join(nav)}</nav>" if nav else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><link rel=\"icon\" href=\"data:,\">"
            f"<style>{_CSS}</style><script>{get_plotlyjs()}</script></head><body>"
            f"{body[0] if body else ''}{toc}{''.join(body[1:])}<script>{_SORT_JS}</script></body></html>\n")
