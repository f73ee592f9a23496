"""What the card did while each figure was measured (NVML samples), and warnings."""

from __future__ import annotations

from rooflab.model.ceilings import summarize
from rooflab.report.table import Table, Value, fmt


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
    rows = []
    for label, t in entries:
        sm = t["sm_mhz"]
        rows.append([label, Value(f"{sm['min']:.0f} / {sm['median']:.0f} / {sm['max']:.0f}",
                                  (sm["min"], sm["median"], sm["max"])),
                     fmt(t["mem_mhz"]["median"], ".0f"), fmt(t["power_w"]["max"], ".0f"), fmt(t["temp_c"]["max"], ".0f"),
                     ", ".join(r for r in t["reasons"] if r != "gpu_idle") or "none",
                     "THROTTLED" if t.get("throttled") else "ok", t["samples"]])
    return Table("Telemetry during each measurement (NVML)", ["measurement", "SM MHz min/med/max", "mem MHz",
                                                              "max W", "max °C", "clock reasons", "clocks", "samples"],
                 rows, ["Sampled every 20 ms while the timed reps ran, plus one sample before and after."],
                 key="telemetry",
                 csv_split={"SM MHz min/med/max": ["SM MHz min", "SM MHz median", "SM MHz max"]})


def warnings(doc: dict) -> list[str]:
    return [f"clocks throttled during {label}: {', '.join(t['reasons'])}"
            for label, t in _entries(doc) if t.get("throttled")]
