"""Which GPUs fall behind: each figure against the fleet median, and against a
baseline run (a saved fleet.json or a single-GPU results.json) when one is given.

A GPU more than `pct` percent below the reference is an outlier. Each outlier carries
the telemetry that may explain it: throttle reasons, an SM clock under load below the
card's maximum, a hot card, ECC errors, rows pending remap, power at its limit. Pure.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from rooflab.model.fleet.summary import FIGURES, summarize_gpu

DEFAULT_PCT = 5.0
HOT_C = 85
CLOCK_SLACK = 0.97  # a load clock under 97% of the maximum is worth naming


def medians(gpus: Sequence[dict]) -> dict[str, float | None]:
    """{figure: median over the GPUs that have it} (gpus: entries with a "summary")."""
    out = {}
    for key, _title, _unit in FIGURES:
        vals = [g["summary"][key] for g in gpus if g["summary"].get(key)]
        out[key] = statistics.median(vals) if vals else None
    return out


def explain(summary: dict, fleet_temp_median: float | None = None) -> list[str]:
    """Telemetry that may explain a slow GPU (empty where nothing stands out)."""
    t, e = summary.get("telemetry") or {}, summary.get("ecc") or {}
    out = []
    if t.get("reasons"):
        out.append(f"clock reasons during the runs: {', '.join(t['reasons'])}")
    load, top = t.get("sm_mhz_load"), t.get("sm_mhz_max_clock")
    if load and top and load < CLOCK_SLACK * top:
        out.append(f"SM clock under load {load:.0f} MHz, {100 * load / top:.0f}% of its {top:.0f} MHz maximum")
    temp = t.get("temp_c_max")
    if temp is not None and (temp >= HOT_C or (fleet_temp_median is not None and temp >= fleet_temp_median + 10)):
        out.append(f"hot: {temp:.0f} °C" + (f" (fleet median {fleet_temp_median:.0f} °C)"
                                           if fleet_temp_median is not None else ""))
    if e.get("uncorrected_volatile"):
        out.append(f"{e['uncorrected_volatile']} uncorrected ECC errors since the driver loaded")
    if e.get("corrected_volatile"):
        out.append(f"{e['corrected_volatile']} corrected ECC errors since the driver loaded")
    rr = e.get("remapped_rows") or {}
    if rr.get("pending") or rr.get("failure"):
        out.append("row remapping " + ("failed" if rr.get("failure") else "pending (needs a GPU reset)"))
    pw, lim = t.get("power_w_max"), t.get("power_limit_w")
    if pw and lim and pw >= 0.95 * lim:
        out.append(f"power at its limit: {pw:.0f} W of {lim:.0f} W")
    return out


def _baseline_figures(baseline: dict | None) -> tuple[dict[str, dict], dict | None]:
    """(figures per UUID from a fleet document, figures of a single-GPU document)."""
    if not baseline:
        return {}, None
    fleet = baseline.get("fleet")
    if fleet:
        per = {}
        for uuid, g in (fleet.get("gpus") or {}).items():
            per[uuid] = g.get("summary") or summarize_gpu(g.get("document") or {})
        return per, None
    return {}, summarize_gpu(baseline)


def find(gpus: Sequence[dict], *, pct: float = DEFAULT_PCT, baseline: dict | None = None) -> list[dict]:
    """Outliers among `gpus` (entries with uuid, host, index, summary)."""
    if pct < 0:
        raise ValueError("the outlier threshold must be a positive percentage")
    med = medians(gpus)
    temps = [g["summary"]["telemetry"]["temp_c_max"] for g in gpus
             if (g["summary"].get("telemetry") or {}).get("temp_c_max") is not None]
    temp_med = statistics.median(temps) if temps else None
    per_uuid, single = _baseline_figures(baseline)
    out = []
    for g in gpus:
        s = g["summary"]
        refs = []
        if len(gpus) > 1:
            refs.append(("fleet median", med))
        base = per_uuid.get(g["uuid"]) or single
        if base:
            refs.append(("baseline", base))
        for against, ref in refs:
            for key, title, unit in FIGURES:
                v, r = s.get(key), ref.get(key)
                if not v or not r:
                    continue
                ratio = 100.0 * v / r
                if ratio < 100.0 - pct:
                    out.append({"uuid": g["uuid"], "host": g.get("host"), "index": g.get("index"),
                                "figure": key, "title": title, "unit": unit, "value": v, "reference": r,
                                "against": against, "pct_of_reference": ratio, "below_pct": 100.0 - ratio,
                                "threshold_pct": pct, "explanations": explain(s, temp_med)})
    return out
