"""A plain table (title, columns, rows, notes) and its text formats.

Library code builds Tables; the CLI shows them with rich, reports write them as
Markdown and CSV.

A cell is None (missing), a plain value (str, int, float) or a :class:`Value`: the text a person
reads (``"1,979"``, ``"14.8×"``, ``"1829 MHz"``) together with the value a machine gets
(``1979.4``, ``14.8``, ``1829.3``) and its unit. Markdown, rich and ``to_dict`` show the text;
``to_csv`` writes the value, with the unit moved into the column's header and an empty cell for
a missing value. ``fmt()`` makes Values.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any, Self


class Value(str):
    """A cell: a str (the text people read) that also carries ``value`` (what a CSV gets: a number,
    a plain string, a tuple of them split over several CSV columns, or None for missing) and
    ``unit`` (moved into the CSV header, e.g. "MHz", "×", "%")."""

    value: Any
    unit: str

    def __new__(cls, text: str, value: Any = None, unit: str = "") -> Self:
        obj = super().__new__(cls, text)
        obj.value = value
        obj.unit = unit
        return obj


def fmt(x: float | None, spec: str = ".1f", suffix: str = "") -> Value | None:
    """``x`` formatted for people (``spec``, then ``suffix``), keeping ``x`` itself for machines;
    None stays None. The suffix, stripped, is the unit."""
    return None if x is None else Value(f"{x:{spec}}{suffix}", x, suffix.strip())


def words(text: str) -> Value:
    """Text for people (a kernel's launch, a limit's arithmetic); its CSV cell without thousands
    separators, the × sign or the space before MHz."""
    return Value(text, text.replace(",", "").replace("×", "x").replace(" MHz", "MHz"))


def missing(text: str) -> Value:
    """A cell that says why a value is missing (e.g. "peak unknown for sm_130"); empty in a CSV."""
    return Value(text, None)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    notes: list[str] = field(default_factory=list)
    key: str = ""  # file-name stem for CSV output, e.g. "gemm"
    # CSV only: a column whose Values hold tuples is written as these columns, one per element
    csv_split: dict[str, list[str]] = field(default_factory=dict)
    # CSV only: a key/value table (first column the names) is written as one record: a header of
    # names and one row of values
    record: bool = False

    def to_markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |",
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in self.rows]
        out += [""] + [f"_{n}_" for n in self.notes] if self.notes else []
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """Machine-readable: plain numbers (no thousands separators, units or suffixes), units in
        the header, an empty cell where a value is missing."""
        if self.record:
            names, cells = [str(r[0]).strip() for r in self.rows], [r[1] if len(r) > 1 else None for r in self.rows]
            head, row = self._csv_columns(names, [[c] for c in cells])
            body = [row]
        else:
            columns = [[r[i] for r in self.rows] for i in range(len(self.columns))]
            head, flat = self._csv_columns(self.columns, columns)
            body = [flat[i::len(self.rows)] for i in range(len(self.rows))] if self.rows else []
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(head)
        w.writerows(body)
        return buf.getvalue()

    def _csv_columns(self, names: list[str], columns: list[list]) -> tuple[list[str], list[str]]:
        """Header and cells, column by column: (header names, cells flattened column-major)."""
        head: list[str] = []
        flat: list[str] = []
        for name, cells in zip(names, columns, strict=True):
            split = self.csv_split.get(name)
            if split:
                head += split
                parts = [_parts(c, len(split)) for c in cells]
                for j in range(len(split)):
                    flat += [_csv_cell(p[j]) for p in parts]
                continue
            unit = next((c.unit for c in cells if isinstance(c, Value) and c.unit), "")
            head.append(f"{name} ({unit})" if unit and unit not in name else name)
            flat += [_csv_cell(c) for c in cells]
        return head, flat

    def to_dict(self) -> dict:
        """For JSON: numbers as numbers (a Value's value, not its text), each column's unit beside it."""
        units = [next((r[i].unit for r in self.rows if i < len(r) and isinstance(r[i], Value) and r[i].unit), "")
                 for i in range(len(self.columns))]
        return {"title": self.title, "columns": self.columns, "units": units,
                "rows": [[_json_cell(v) for v in r] for r in self.rows], "notes": self.notes}


def _parts(cell: Any, n: int) -> list[Any]:
    value = cell.value if isinstance(cell, Value) else cell
    if isinstance(value, tuple):
        return list(value) + [None] * (n - len(value))
    return [value] + [None] * (n - 1)


def _csv_cell(v: Any) -> str:
    if isinstance(v, Value):
        v = v.value
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(float(v))  # numpy floats too
    return str(v)


def _json_cell(v: Any) -> Any:
    if isinstance(v, Value):
        v = v.value
        if isinstance(v, tuple):
            return [_json_cell(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v if v is None or isinstance(v, (bool, int, float)) else str(v)


def _cell(v) -> str:
    if v is None:
        return "—"
    return str(v)
