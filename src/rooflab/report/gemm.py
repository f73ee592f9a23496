"""The GEMM ladder's tables (G9), ratios and paragraphs (G10), from a results document."""

from __future__ import annotations

from rooflab import rungs
from rooflab.model.arch import peak_unknown
from rooflab.model.check import Check
from rooflab.model.metrics import by_kernel, median_ms, peak_for, rung_metrics
from rooflab.report import climb
from rooflab.report.table import Table, Value, fmt, missing
from rooflab.report.telemetry import clock_flag


def status(rec: dict) -> str:
    if rec.get("skipped"):
        return f"skipped: {rec['skipped']}"
    if rec.get("error"):
        return f"FAILED: {rec['error']}"
    if not rec.get("passed"):
        bad = [Check.from_dict(c) for c in rec.get("checks", []) if not c["passed"]]
        return "FAILED: " + (bad[0].line() if bad else "not checked")
    return "passed"


def _flagged(text: str, rec: dict, dev: dict) -> str:
    """A passed rung's status, with the clock flag where its figure was taken at a low or throttled clock."""
    flag = clock_flag((rec.get("timing") or {}).get("telemetry"), dev.get("sm_clock_max_mhz"))
    return f"{text} (clock flagged: {flag})" if flag and text == "passed" else text


def check_summary(rec: dict) -> str:
    checks = [Check.from_dict(c) for c in rec.get("checks", [])]
    seed = next((c for c in checks if c.name == "seed max-rel"), None)
    norm = [c for c in checks if c.name == "normwise"]
    parts = []
    if seed:
        parts.append(f"max-rel {seed.value:.1e}")
    if norm:
        parts.append(f"norm {norm[-1].value:.1e}")
    return ", ".join(parts)


# the unit whose roof judges a rung, by its precision
ROOF_LABEL = {"fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "3xtf32": "TF32÷3"}


def roof_cell(doc: dict, precision: str):
    """'FP32 66.9': the roof a rung's % peak is taken against, in TFLOP/s."""
    p = precision or "fp32"
    rate = peak_for(doc, p)
    label = ROOF_LABEL.get(p, p.upper())
    return f"{label} {rate / 1e12:,.1f}" if rate else f"{label} ?"


def gemm_table(doc: dict) -> Table:
    section = doc["gemm"]
    recs = by_kernel(section)
    naive_ms = median_ms(recs["naive"]) if "naive" in recs else None
    dev = doc.get("device") or {}
    peak = dev.get("fp32_peak_flops")
    unknown = None if peak else missing(peak_unknown(dev["cc"]) if dev.get("cc") else "peak unknown")
    rows = []
    for rec in section["rungs"]:
        mt = rung_metrics(doc, rec, naive_ms)
        shape = str(rec["n"]) if rec["m"] == rec["n"] == rec["k"] else Value(f"{rec['m']}×{rec['n']}×{rec['k']}",
                                                                          f"{rec['m']}x{rec['n']}x{rec['k']}")
        rows.append([shape, rec["title"], fmt(mt["ms"], ".3f"), fmt(mt["mean_ms"], ".3f"), fmt(mt["min_ms"], ".3f"),
                     fmt(mt["gflops"], ",.0f"), fmt(mt["pct_peak"], ".1f", "%") or (unknown if mt["gflops"] else None),
                     roof_cell(doc, rec.get("precision")), fmt(mt["speedup"], ".1f", "×"),
                     check_summary(rec), _flagged(status(rec), rec, dev)])
    cfg, method = section["config"], section["method"]
    rounds = method.get("rounds") or 1
    reps = f"{method['reps']} timed launches" if rounds == 1 else \
        f"{rounds} × {method['reps']} timed launches (rounds interleaved across the rungs)"
    notes = [
        f"ms = median of {reps} after {method['warmup']} warm-up (mean and min beside it); "
        f"CUDA events around the kernel only; L2 {'flushed' if method['l2_flushed'] else 'not flushed'} between reps.",
        f"% peak against the roof of the unit each rung uses (roof, TFLOP/s): the FP32 CUDA-core peak "
        f"{peak / 1e12:.1f} TFLOP/s (P1, from this device's attributes), the dense TF32 and BF16 tensor rates, a third of "
        f"TF32's for 3xTF32 (three products per FMA)."
        if peak else f"% peak: FP32 {unknown}, so none is given.",
        f"Checks: {method['checks']}. Seed {cfg['seed']}.",
    ]
    return Table("SGEMM ladder (G9)", ["N", "kernel", "ms", "mean ms", "min ms", "GFLOP/s", "% peak", "roof",
                                       "vs naive", "check", "status"], rows, notes, key="gemm")


def check_table(doc: dict) -> Table:
    rows = []
    for rec in doc["gemm"]["rungs"]:
        for c in rec.get("checks", []):
            ch = Check.from_dict(c)
            rows.append([rec["kernel"], ch.line(), "pass" if ch.passed else "FAIL"])
    return Table("Checks (G1, G2)", ["kernel", "check", "result"], rows, key="checks")


def ratio_specs() -> list[tuple[str, str, str]]:
    """(numerator rung, denominator rung, label) from the rung records, in ladder order."""
    return [(other, r.name, label) for r in rungs.LADDER for other, label in r.ratios]


def ratios(doc: dict) -> dict[str, float | None]:
    """'a/b' -> time_a / time_b for every pair whose rungs are in the run (None if one failed)."""
    recs = by_kernel(doc["gemm"])
    out = {}
    for a, b, _label in ratio_specs():
        if a in recs and b in recs:
            ma, mb = median_ms(recs[a]), median_ms(recs[b])
            out[f"{a}/{b}"] = ma / mb if ma and mb else None
    return out


def round_ratios(doc: dict) -> dict[str, list[float]]:
    """'a/b' -> time_a / time_b in each interleaved round (gemm --rounds), where both rungs ran every round."""
    recs = by_kernel(doc["gemm"])

    def rounds(name: str) -> list[float] | None:
        rec = recs.get(name)
        return (rec.get("timing") or {}).get("round_medians_ms") if rec and median_ms(rec) else None

    out = {}
    for a, b, _label in ratio_specs():
        ra, rb = rounds(a), rounds(b)
        if ra and rb and len(ra) == len(rb):
            out[f"{a}/{b}"] = [x / y for x, y in zip(ra, rb)]
    return out


def ratio_table(doc: dict) -> Table:
    r, per_round = ratios(doc), round_ratios(doc)
    keys = [(a, b, label) for a, b, label in ratio_specs() if f"{a}/{b}" in r]
    if not per_round:
        rows = [[label, fmt(r[f"{a}/{b}"], ".2f", "×")] for a, b, label in keys]
        return Table("Ratios the seed asks for", ["ratio", "this run"], rows, key="ratios")
    n = doc["gemm"]["method"].get("rounds")

    def spread(key: str):
        xs = per_round.get(key)
        return Value(f"{min(xs):.3f}–{max(xs):.3f}×", (round(min(xs), 4), round(max(xs), 4)), "×") if xs else None

    rows = [[label, fmt(r[f"{a}/{b}"], ".2f", "×"), spread(f"{a}/{b}")] for a, b, label in keys]
    return Table("Ratios the seed asks for", ["ratio", "this run", f"over {n} rounds"], rows,
                 [f"this run: the ratio of the medians of all {n} rounds' samples; over {n} rounds: the lowest and "
                  "highest ratio of one round's medians (the rungs timed in turn within each round)"], key="ratios")


def paragraphs(doc: dict) -> list[tuple[str, str]]:
    """G10: one paragraph per step of the climb, from this run's numbers."""
    return climb.transitions(doc)
