"""Two results documents side by side: rung by rung and ceiling by ceiling."""

from __future__ import annotations

from rooflab.model.brackets import every
from rooflab.model.limits import nominal_peaks
from rooflab.model.metrics import median_ms
from rooflab.report.table import Table, Value, fmt

# a ceiling's unit as this table shows it: (divisor, unit)
_SHOWN = {"B/s": (1e9, "GB/s"), "FLOP/s": (1e12, "TFLOP/s")}


def _ceilings(doc: dict) -> dict[str, tuple[float, str]]:
    """{row name: (figure, unit shown)}: the device's nominal peaks, then every registered ceiling
    the document holds a figure of, in the registry's order."""
    figures = [(p.name, p.unit, p.limit.value) for p in nominal_peaks(doc.get("device") or {})]
    figures += [(c.name, c.unit, fig.value) for c in every(doc) if (fig := c.figure(doc))]
    return {name: (value / _SHOWN[unit][0], _SHOWN[unit][1]) for name, unit, value in figures if value}


def _in_order(a: list[str], b: list[str]) -> list[str]:
    """A's rows, with each of B's own rows after the row it follows in B (the registry's order in both)."""
    out = list(a)
    for i, k in enumerate(b):
        if k not in out:
            out.insert(out.index(b[i - 1]) + 1 if i else 0, k)
    return out


def compare_tables(a: dict, b: dict, name_a: str = "A", name_b: str = "B") -> list[Table]:
    da, db = (a.get("device") or {}).get("name", "?"), (b.get("device") or {}).get("name", "?")
    head = [f"{name_a}: {da}, {a.get('created', '?')}", f"{name_b}: {db}, {b.get('created', '?')}"]
    tables = []
    ra = {r["kernel"]: r for r in (a.get("gemm") or {}).get("rungs", [])}
    rb = {r["kernel"]: r for r in (b.get("gemm") or {}).get("rungs", [])}
    if ra or rb:
        rows = []
        for k in list(ra) + [k for k in rb if k not in ra]:
            ma, mb = (median_ms(ra[k]) if k in ra else None), (median_ms(rb[k]) if k in rb else None)
            sa = ra.get(k, {}).get("n"), rb.get(k, {}).get("n")
            rows.append([k, Value(f"{sa[0] or '—'} / {sa[1] or '—'}", sa), fmt(ma, ".3f"), fmt(mb, ".3f"),
                         fmt(ma / mb, ".2f", "×") if ma and mb else None])
        tables.append(Table("GEMM rungs, A vs B", ["kernel", "N (A / B)", f"{name_a} ms", f"{name_b} ms",
                                                   "speedup of B (A ms ÷ B ms)"], rows, head, key="compare_gemm",
                            csv_split={"N (A / B)": [f"N ({name_a})", f"N ({name_b})"]}))
    ca, cb = _ceilings(a), _ceilings(b)
    rows = []
    for k in _in_order(list(ca), list(cb)):
        va, vb = ca.get(k, (None, ""))[0], cb.get(k, (None, ""))[0]
        unit = (ca.get(k) or cb.get(k))[1]
        rows.append([k, unit, fmt(va, ",.1f"), fmt(vb, ",.1f"), fmt(vb / va, ".3f", "×") if va and vb else None])
    tables.append(Table("Ceilings, A vs B", ["ceiling", "unit", name_a, name_b, "B ÷ A"], rows, head,
                        key="compare_ceilings"))
    return tables
