"""What a reader of a report wants first: the roofs as measured against the published ones, one
line of checks per rung, and the few figures that matter. Built from a results document and the
model's own summaries (nothing re-derived here)."""

from __future__ import annotations

from collections import Counter

from rooflab.model.brackets import every
from rooflab.model.ceilings import summarize
from rooflab.model.check import Check
from rooflab.model.limits import above_limit
from rooflab.model.roofline import Roofline
from rooflab.report.table import Table, Value, fmt, missing, words

# checks that report an error against a tolerance (the others say yes or no)
_ERROR_CHECKS = ("seed max-rel", "normwise")

# the roofs table's units: both columns are in tera-
_UNIT = {"B/s": "TB/s", "FLOP/s": "TFLOP/s"}


def roofs_table(doc: dict) -> Table | None:
    """Each roof this run measured, one row per registered ceiling (rooflab.model.ceiling) with its
    figure, beside the rate published for it. A figure above its physical limit is no roof: it is
    named in a note (the bracketed table says why)."""
    if (doc.get("device") or {}).get("spec_only"):
        return None
    rows: list[list] = []
    refused = []
    for c in every(doc):
        fig = c.figure(doc)
        if fig is None:
            continue
        if above_limit(fig.value, c.limit(doc), c.level):
            refused.append(c.name)
            continue
        published = c.published_rate(doc)
        rows.append([c.name, fmt(fig.value / 1e12, ",.2f"),
                     fmt(published / 1e12, ",.2f") if published else missing("none published"), _UNIT[c.unit],
                     fmt(100 * fig.value / published, ".1f", "%") if published else missing("none published"),
                     words(fig.what)])
    if not rows:
        return None
    notes = ["Published: the spec table's dense rate for the tensor cores, else the physical limit of the bracketed "
             "table (the device's clocks × units per clock, P1; the HBM pin rate, P3); the L2 has no published "
             "bandwidth on most parts."]
    if refused:
        notes.append(f"Above its physical limit, so no roof: {', '.join(refused)} (the bracketed table says why).")
    return Table("Roofs: measured against published", ["roof", "measured", "published", "unit", "% of published",
                                                        "how"], rows, notes, key="roofs")


def _worst(checks: list[Check]) -> Check | None:
    errs = [c for c in checks if c.name in _ERROR_CHECKS and c.tol > 0]
    return max(errs, key=lambda c: c.value / c.tol) if errs else None


def check_summary_table(doc: dict) -> Table | None:
    """One line per rung: which checks ran, the worst error against its tolerance, the verdict.
    The full list is the checks table (checks.csv, report.html)."""
    recs = (doc.get("gemm") or {}).get("rungs") or []
    if not recs:
        return None
    rows = []
    for rec in recs:
        checks = [Check.from_dict(c) for c in rec.get("checks", [])]
        counts = Counter(c.name for c in checks)
        ran = Value(", ".join(f"{name} ×{n}" if n > 1 else name for name, n in counts.items()) or "none",
                    "; ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items()) or "none")
        worst = _worst(checks)
        worst_cell = _worst_cell(worst) if worst else None
        bad = [c for c in checks if not c.passed]
        if rec.get("skipped"):
            verdict = f"skipped: {rec['skipped']}"
        elif rec.get("error"):
            verdict = f"FAILED: {rec['error']}"
        elif bad or not rec.get("passed"):
            verdict = "FAILED: " + (bad[0].line() if bad else "not checked")
        else:
            verdict = f"pass ({len(checks)}/{len(checks)})"
        rows.append([rec["kernel"], ran, worst_cell, verdict])
    return Table("Checks, one line per rung (G1, G2)", ["kernel", "checks run", "worst error / tolerance", "verdict"],
                 rows, ["Worst error: the error check (seed max-rel or normwise) closest to its tolerance. Every "
                        "check with its size, inputs and reference: checks.csv and report.html."],
                 key="check_summary")


def _worst_cell(c: Check):
    m, n, k = c.shape
    size = f"{m}" if m == n == k else f"{m}x{n}x{k}"
    return Value(f"{c.name} {c.value:.1e} / {c.tol:.0e} @ {size}", c.value / c.tol)


def highlights(doc: dict, rl: Roofline) -> list[str]:
    """The few figures that matter, one sentence each."""
    out = []
    recs = (doc.get("gemm") or {}).get("rungs") or []
    if recs:
        failed = [r["kernel"] for r in recs if not r.get("passed") and not r.get("skipped")]
        skipped = [r["kernel"] for r in recs if r.get("skipped")]
        text = f"{len(recs) - len(failed) - len(skipped)} of {len(recs)} rungs passed every check"
        if failed:
            text += f"; FAILED (no speed reported): {', '.join(failed)}"
        if skipped:
            text += f"; skipped: {', '.join(skipped)}"
        out.append(text + ".")
    best: dict[str, dict] = {}
    for r in rl.rows():
        if r["achieved_tflops"] and (r["roof"] not in best or r["achieved_tflops"] > best[r["roof"]]["achieved_tflops"]):
            best[r["roof"]] = r
    fastest = []
    for roof, r in best.items():
        pct = f", {r['pct_of_attainable']:.1f}% of attainable" if r["pct_of_attainable"] is not None else ""
        fastest.append(f"on {roof}, {r['label']} at {r['achieved_tflops']:,.2f} TFLOP/s ({r['bound']}{pct})")
    if fastest:
        out.append("Fastest " + "; ".join(fastest) + ".")
    return out


def sweep_by_block(doc: dict) -> Table | None:
    """The copy's launch sweep with the block sizes side by side: one row per kernel and grid sizing
    (the full sweep, with ranges and verification, is bandwidth_sweep.csv)."""
    bw = doc.get("bandwidth")
    if not bw:
        return None
    entries = summarize(bw)["table"]
    blocks = sorted({e["block"] for e in entries})
    rows: dict[tuple[str, str], dict[int, float | None]] = {}
    for e in entries:
        rows.setdefault((e["kernel"], e["grid_label"]), {})[e["block"]] = e["gbs"]
    out = [[k, g, *[fmt(by.get(b), ",.0f") or (missing("not verified") if b in by else None) for b in blocks]]
           for (k, g), by in rows.items()]
    return Table("Copy bandwidth launch sweep, GB/s by block size (P4)",
                 ["kernel", "grid", *[f"block {b}" for b in blocks]], out,
                 ["Every configuration with its grid, range and verification: bandwidth_sweep.csv and report.html."],
                 key="bandwidth_sweep_by_block")


def telemetry_sentence(tel: Table | None) -> str:
    """The telemetry table in one sentence, for the measurements that ran at full clocks; the
    throttled ones are named."""
    if tel is None or not tel.rows:
        return ""
    sm = [r[1].value for r in tel.rows if isinstance(r[1], Value)]
    watts = [r[3].value for r in tel.rows if isinstance(r[3], Value)]
    temps = [r[4].value for r in tel.rows if isinstance(r[4], Value)]
    throttled = [str(r[0]) for r in tel.rows if r[6] != "ok"]
    text = (f"{len(tel.rows)} measurements sampled by NVML: SM clock {min(s[0] for s in sm):.0f}–"
            f"{max(s[2] for s in sm):.0f} MHz, at most {max(watts):.0f} W and {max(temps):.0f} °C; ")
    text += (f"clocks throttled during {', '.join(throttled)}." if throttled
             else "no clock throttling in any of them.")
    return text + " Every measurement's samples: telemetry.csv and report.html."


def profile_verdicts(profile: Table | None) -> list[str]:
    """The Nsight Compute table as one line per verdict: each kernel with its DRAM and SM throughput."""
    if profile is None:
        return []
    by: dict[str, list[str]] = {}
    for r in profile.rows:
        by.setdefault(str(r[3]), []).append(f"{r[0]} (DRAM {r[1]}, SM {r[2]})")
    return [f"**{verdict}**: {', '.join(kernels)}." for verdict, kernels in by.items()]


def ratios_sentence(ratios: Table | None) -> str:
    if ratios is None or not ratios.rows:
        return ""
    return f"**{ratios.title}:** " + "; ".join(f"{r[0]} = {r[1]}" for r in ratios.rows) + "."


def fma_by_launch(flops: Table | None) -> Table | None:
    """The FMA table with the launch shapes side by side: one row per accumulator count, TFLOP/s and
    % of peak in each cell (every column, iterations and times: flops.csv and report.html)."""
    if flops is None or not flops.rows:
        return None
    launches: list[str] = []
    cells: dict[object, dict[str, str]] = {}
    for acc, launch, warps, _iters, _ms, tflops, pct, verified in flops.rows:
        col = f"{launch} ({warps} warps/scheduler)"
        if col not in launches:
            launches.append(col)
        text = "NOT VERIFIED" if verified != "yes" else (f"{tflops} ({pct})" if pct else str(tflops or "—"))
        cells.setdefault(acc, {})[col] = text
    rows = [[acc, *[by.get(c) for c in launches]] for acc, by in cells.items()]
    return Table(f"{flops.title}: TFLOP/s (% peak) by launch", ["accumulators", *launches], rows,
                 flops.notes[:1] + ["Every launch with its iterations and times: flops.csv and report.html."],
                 key="flops_by_launch")
