"""One GPU's headline figures and telemetry, read from its results document (pure).

Figures: best verified copy GB/s (the bandwidth sweep's best row, else cudaMemcpy),
best verified FMA TFLOP/s, cuBLAS SGEMM TFLOP/s (FP32 cuBLAS rungs), and BF16
TFLOP/s from any passed GEMM rung whose precision is "bf16" (read generically, so a
new rung needs no change here). Telemetry: the NVML samples taken during the timed
reps, over every measurement in the document.
"""

from __future__ import annotations

import statistics

# (key, column title, unit) in the order the fleet table shows them
FIGURES = (
    ("copy_gbs", "copy GB/s", "GB/s"),
    ("fma_tflops", "FMA TFLOP/s", "TFLOP/s"),
    ("sgemm_tflops", "cuBLAS SGEMM TFLOP/s", "TFLOP/s"),
    ("bf16_tflops", "BF16 TFLOP/s", "TFLOP/s"),
)
IDLE_REASONS = ("gpu_idle", "applications_clocks_setting", "sync_boost")


def _median_verified(runs: list[dict]) -> float | None:
    vals = [r["gbs"] for r in runs or [] if r.get("verified") and r.get("gbs")]
    return statistics.median(vals) if vals else None


def copy_gbs(doc: dict) -> tuple[float | None, str | None]:
    bw = doc.get("bandwidth") or {}
    best, label = None, None
    for row in bw.get("sweep") or []:
        runs = row.get("runs") or []
        if not runs or not all(r.get("verified") for r in runs):
            continue
        g = _median_verified(runs)
        if g and (best is None or g > best):
            best, label = g, f"{row.get('kernel')} block {row.get('block')} grid {row.get('grid')}"
    if best is None:
        g = _median_verified(bw.get("memcpy") or [])
        if g:
            best, label = g, "cudaMemcpy D2D"
    return best, label


def fma_tflops(doc: dict) -> float | None:
    vals = [r["tflops"] for r in (doc.get("flops") or {}).get("rows") or [] if r.get("verified") and r.get("tflops")]
    return max(vals) if vals else None


def _rung_tflops(rec: dict) -> float | None:
    t = rec.get("timing") or {}
    ms = t.get("median_ms")
    if not rec.get("passed") or not ms or not rec.get("flops"):
        return None
    return rec["flops"] / (ms * 1e-3) / 1e12


def gemm_tflops(doc: dict, precision: str, *, cublas_only: bool) -> float | None:
    vals = []
    for rec in (doc.get("gemm") or {}).get("rungs") or []:
        if (rec.get("precision") or "fp32") != precision:
            continue
        if cublas_only and "cublas" not in str(rec.get("kernel", "")).lower():
            continue
        v = _rung_tflops(rec)
        if v:
            vals.append(v)
    return max(vals) if vals else None


def _telemetry(doc: dict) -> tuple[list[dict], list[dict]]:
    """(all telemetry summaries, those of the compute-heavy runs: FMA rows and cuBLAS rungs)."""
    every, heavy = [], []

    def walk(o, heavy_ctx=False):
        if isinstance(o, dict):
            t = o.get("telemetry")
            if isinstance(t, dict) and isinstance(t.get("sm_mhz"), dict):
                every.append(t)
                if heavy_ctx:
                    heavy.append(t)
            for k, v in o.items():
                if k != "telemetry":
                    walk(v, heavy_ctx)
        elif isinstance(o, list):
            for v in o:
                walk(v, heavy_ctx)

    for key in ("bandwidth", "links"):
        walk(doc.get(key))
    for r in (doc.get("flops") or {}).get("rows") or []:
        walk(r, True)
    for r in (doc.get("gemm") or {}).get("rungs") or []:
        walk(r, "cublas" in str(r.get("kernel", "")).lower())
    return every, heavy


def telemetry(doc: dict) -> dict:
    every, heavy = _telemetry(doc)
    src = heavy or every
    reasons: list[str] = []
    for t in every:
        for r in t.get("reasons") or []:
            if r not in reasons:
                reasons.append(r)
    dev = doc.get("device") or {}
    inv = ((doc.get("fleet_gpu") or {}).get("inventory_after") or (doc.get("fleet_gpu") or {}).get("inventory_before")
           or {})
    sm_max = (inv.get("clocks_mhz") or {}).get("sm_max") or dev.get("sm_clock_max_mhz")

    def pick(key, stat, agg):
        vals = [t[key][stat] for t in src if isinstance(t.get(key), dict) and t[key].get(stat) is not None]
        return agg(vals) if vals else None

    return {
        "sm_mhz_load": pick("sm_mhz", "median", statistics.median),
        "sm_mhz_min": pick("sm_mhz", "min", min),
        "sm_mhz_max_clock": sm_max,
        "mem_mhz_load": pick("mem_mhz", "median", statistics.median),
        "power_w_max": pick("power_w", "max", max),
        "power_limit_w": inv.get("power_limit_w"),
        "temp_c_max": pick("temp_c", "max", max),
        "reasons": [r for r in reasons if r not in IDLE_REASONS],
        "throttled": any(t.get("throttled") for t in every),
        "samples": sum(int(t.get("samples") or 0) for t in every),
        "basis": "FMA and cuBLAS runs" if heavy else ("all runs" if every else "no NVML samples"),
    }


def ecc(doc: dict) -> dict:
    fg = doc.get("fleet_gpu") or {}
    inv = fg.get("inventory_after") or fg.get("inventory_before") or {}
    e = inv.get("ecc") or {}
    vol, agg = e.get("volatile") or {}, e.get("aggregate") or {}
    return {"enabled": e.get("enabled"), "corrected_volatile": vol.get("corrected"),
            "uncorrected_volatile": vol.get("uncorrected"), "corrected_aggregate": agg.get("corrected"),
            "uncorrected_aggregate": agg.get("uncorrected"), "remapped_rows": inv.get("remapped_rows")}


def summarize_gpu(doc: dict) -> dict:
    """The figures the fleet table and the outlier check use."""
    copy, copy_label = copy_gbs(doc)
    return {
        "copy_gbs": copy,
        "copy_basis": copy_label,
        "fma_tflops": fma_tflops(doc),
        "sgemm_tflops": gemm_tflops(doc, "fp32", cublas_only=True),
        "bf16_tflops": gemm_tflops(doc, "bf16", cublas_only=False),
        "telemetry": telemetry(doc),
        "ecc": ecc(doc),
    }
