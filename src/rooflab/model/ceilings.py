"""Figures derived from saved ceiling sections (pure: reads a results document only)."""

from __future__ import annotations

import statistics


def summarize(section: dict) -> dict:
    """Best configuration, memcpy reference and spreads, from a saved section."""
    def med(runs):
        vals = [r["gbs"] for r in runs if r.get("verified")]
        return (statistics.median(vals) if vals else None), vals

    memcpy_gbs, _ = med(section["memcpy"])
    best = None
    table = []
    for row in section["sweep"]:
        g, vals = med(row["runs"])
        verified = all(r.get("verified") for r in row["runs"])
        entry = {**{k: row[k] for k in ("kernel", "block", "grid", "grid_label")}, "gbs": g if verified else None,
                 "gbs_min": min(vals) if vals and verified else None,
                 "gbs_max": max(vals) if vals and verified else None,
                 "verified": verified}
        table.append(entry)
        if verified and g and (best is None or g > best["gbs"]):
            best = entry
    peak = section.get("hbm_peak_bytes_per_s")
    return {"memcpy_gbs": memcpy_gbs, "best": best, "table": table,
            "peak_gbs": peak / 1e9 if peak else None}
