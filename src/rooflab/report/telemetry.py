"""What the card did while each figure was measured (NVML samples), and warnings."""

from __future__ import annotations

from rooflab.model.ceilings import summarize
from rooflab.report.table import Table, Value, fmt

# A figure is flagged when the SM clock sat below this share of its maximum while it was taken.
LOW_CLOCK = 0.9


def clock_flag(tel: dict | None, max_mhz: float | None) -> str | None:
    """Why a figure's clocks are suspect (the SM clock's median below 90% of the maximum, or a throttle
    reason NVML reported while the reps ran), or None."""
    if not tel:
        return None
    parts = []
    med = (tel.get("sm_mhz") or {}).get("median")
    if med and max_mhz and med < LOW_CLOCK * max_mhz:
        parts.append(f"SM clock {med:.0f} MHz (median), {100 * med / max_mhz:.0f}% of its {max_mhz:.0f} MHz maximum")
    if tel.get("throttled"):
        parts.append("NVML throttle reasons: " + ", ".join(r for r in tel.get("reasons", []) if r != "gpu_idle"))
    return "; ".join(parts) or None


def _entries(doc: dict) -> list[tuple[str, dict]]:
    out = []
    for rec in (doc.get("gemm") or {}).get("rungs", []):
        if rec.get("timing"):
            out.append((f"gemm {rec['kernel']}", rec["timing"].get("telemetry")))
    bw = doc.get("bandwidth")
    if bw:
        for r in bw["memcpy"][:1]:
            if r.get("timing"):
                out.append(("cudaMemcpy D2D", r["timing"].get("telemetry")))
        best = summarize(bw)["best"]
        if best:
            row = next(x for x in bw["sweep"] if (x["kernel"], x["block"], x["grid"]) ==
                       (best["kernel"], best["block"], best["grid"]))
            if row["runs"][0].get("timing"):
                out.append((f"best copy ({best['kernel']})", row["runs"][0]["timing"].get("telemetry")))
    fl = doc.get("flops")
    if fl:
        for r in fl["rows"]:
            if r.get("timing") and r["accumulators"] in (1, 8):
                what = f"fma {r['accumulators']} acc, {r['grid']}"
                out.append((Value(f"{what}×{r['block']}", f"{what}x{r['block']}"), r["timing"].get("telemetry")))
    return [(k, v) for k, v in out if v]


def telemetry_table(doc: dict) -> Table | None:
    entries = _entries(doc)
    if not entries:
        return None
    max_mhz = (doc.get("device") or {}).get("sm_clock_max_mhz")
    rows = []
    for label, t in entries:
        sm = t["sm_mhz"]
        rows.append([label, Value(f"{sm['min']:.0f} / {sm['median']:.0f} / {sm['max']:.0f}",
                                  (sm["min"], sm["median"], sm["max"])),
                     fmt(t["mem_mhz"]["median"], ".0f"), fmt(t["power_w"]["max"], ".0f"), fmt(t["temp_c"]["max"], ".0f"),
                     ", ".join(r for r in t["reasons"] if r != "gpu_idle") or "none",
                     "THROTTLED" if t.get("throttled") else ("LOW" if clock_flag(t, max_mhz) else "ok"),
                     t["samples"]])
    return Table("Telemetry during each measurement (NVML)", ["measurement", "SM MHz min/med/max", "mem MHz",
                                                              "max W", "max °C", "clock reasons", "clocks", "samples"],
                 rows, ["Sampled every 20 ms while the timed reps ran, plus one sample before and after. LOW: the SM "
                        "clock's median below 90% of its maximum; such figures are flagged in the report."],
                 key="telemetry",
                 csv_split={"SM MHz min/med/max": ["SM MHz min", "SM MHz median", "SM MHz max"]})


def warnings(doc: dict) -> list[str]:
    """One line per measurement whose clocks were throttled or low."""
    max_mhz = (doc.get("device") or {}).get("sm_clock_max_mhz")
    out = []
    for label, t in _entries(doc):
        flag = clock_flag(t, max_mhz)
        if flag:
            out.append(f"{label}: {flag}")
    return out
