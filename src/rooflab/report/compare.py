"""Two results documents side by side: rung by rung and ceiling by ceiling."""

from __future__ import annotations

from rooflab.model.brackets import added
from rooflab.model.ceilings import summarize
from rooflab.model.metrics import median_ms
from rooflab.report.table import Table, Value, fmt

# a ceiling's unit as this table shows it: (divisor, unit), as rooflab's own rows are written
_SHOWN = {"B/s": (1e9, "GB/s"), "FLOP/s": (1e12, "TFLOP/s")}


def _ceilings(doc: dict) -> dict[str, tuple[float | None, str]]:
    dev = doc.get("device") or {}
    out: dict[str, tuple[float | None, str]] = {
        "FP32 peak (P1)": (dev.get("fp32_peak_flops") and dev["fp32_peak_flops"] / 1e12, "TFLOP/s"),
        "HBM peak (P3)": (dev.get("hbm_peak_bytes_per_s") and dev["hbm_peak_bytes_per_s"] / 1e9, "GB/s"),
    }
    if doc.get("bandwidth"):
        s = summarize(doc["bandwidth"])
        out["cudaMemcpy D2D"] = (s["memcpy_gbs"], "GB/s")
        out["best copy kernel"] = (s["best"]["gbs"] if s["best"] else None, "GB/s")
    if doc.get("flops"):
        vals = [r["tflops"] for r in doc["flops"]["rows"] if r.get("tflops")]
        out["FMA peak (best)"] = (max(vals) if vals else None, "TFLOP/s")
    for c in added(doc):
        fig = c.figure(doc)
        if fig:
            scale, unit = _SHOWN[c.unit]
            out[c.name] = (fig.value / scale, unit)
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
    for k in list(ca) + [k for k in cb if k not in ca]:
        va, vb = ca.get(k, (None, ""))[0], cb.get(k, (None, ""))[0]
        unit = (ca.get(k) or cb.get(k))[1]
        rows.append([k, unit, fmt(va, ",.1f"), fmt(vb, ",.1f"), fmt(vb / va, ".3f", "×") if va and vb else None])
    tables.append(Table("Ceilings, A vs B", ["ceiling", "unit", name_a, name_b, "B ÷ A"], rows, head,
                        key="compare_ceilings"))
    return tables
