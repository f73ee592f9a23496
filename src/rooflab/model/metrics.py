"""Per-rung figures from a results document: median time, GFLOP/s, % of the roof that applies."""

from __future__ import annotations


def median_ms(rec: dict) -> float | None:
    return rec["timing"]["median_ms"] if rec.get("timing") and rec.get("passed") else None


# roofs that are a fraction of another: 3xTF32 issues three TF32 products per FMA
DERIVED_ROOFS = {"3xtf32": ("tf32", 1 / 3)}


def peak_for(doc: dict, precision: str) -> float | None:
    dev = doc.get("device") or {}
    if precision == "fp32":
        return dev.get("fp32_peak_flops")
    if precision in DERIVED_ROOFS:
        base, share = DERIVED_ROOFS[precision]
        rate = (dev.get("tensor_peaks") or {}).get(base)
        return rate * share if rate else None
    return (dev.get("tensor_peaks") or {}).get(precision)


def rung_metrics(doc: dict, rec: dict, naive_ms: float | None) -> dict:
    ms = median_ms(rec)
    gflops = rec["flops"] / (ms * 1e-3) / 1e9 if ms else None
    peak = peak_for(doc, rec.get("precision", "fp32"))
    return {
        "ms": ms,
        "mean_ms": rec["timing"]["mean_ms"] if ms else None,
        "min_ms": rec["timing"]["min_ms"] if ms else None,
        "gflops": gflops,
        "pct_peak": 100.0 * gflops * 1e9 / peak if gflops and peak else None,
        "speedup": naive_ms / ms if ms and naive_ms else None,
    }


def by_kernel(section: dict) -> dict[str, dict]:
    return {r["kernel"]: r for r in section["rungs"]}
