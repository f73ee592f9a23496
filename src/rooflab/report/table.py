"""A plain table (title, columns, rows, notes) and its text formats.

Library code builds Tables; the CLI shows them with rich, reports write them as
Markdown and CSV.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    notes: list[str] = field(default_factory=list)
    key: str = ""  # file-name stem for CSV output, e.g. "gemm"

    def to_markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |",
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in self.rows]
        out += [""] + [f"_{n}_" for n in self.notes] if self.notes else []
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows([[_cell(v) for v in row] for row in self.rows])
        return buf.getvalue()

    def to_dict(self) -> dict:
        return {"title": self.title, "columns": self.columns,
                "rows": [[_cell(v) for v in r] for r in self.rows], "notes": self.notes}


def _cell(v) -> str:
    if v is None:
        return "—"
    return str(v)


def fmt(x: float | None, spec: str = ".1f", suffix: str = "") -> str | None:
    return None if x is None else f"{x:{spec}}{suffix}"
