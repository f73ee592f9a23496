"""`rooflab bench` and rooflab.bench(): a user's kernel beside the rungs it was compared with."""

from __future__ import annotations

from rooflab.model.check import Check
from rooflab.report import gemm as render_gemm
from rooflab.report.gemm import status
from rooflab.report.table import Table, fmt
from rooflab.report.terminal import RichTables

__all__ = ["RichTables", "tables", "stream_table"]


def stream_table(doc: dict) -> Table:
    sec = doc["bench"]
    peak = sec.get("hbm_peak_bytes_per_s")
    rows = []
    for r in sec["rows"]:
        t = r.get("timing") if r.get("passed") else None
        ms = t["median_ms"] if t else None
        gbs = r.get("gbs") if t else None
        rows.append([r["title"], ", ".join(str(x) for x in r["n"]), fmt(ms, ".4f"), fmt(t["min_ms"], ".4f") if t else None,
                     fmt(gbs, ",.0f"), fmt(100 * gbs * 1e9 / peak, ".1f", "%") if gbs and peak else None,
                     fmt(r.get("gflops"), ",.1f") if t else None, t["method"] if t else None, status(r)])
    notes = [f"op: {sec.get('describe') or sec['op']}. Checks: {sec['method']['checks']}.",
             "ms = median per launch; 'graph' = a CUDA graph of many launches replayed between one pair of CUDA "
             "events, 'batched' = many launches between one pair (short kernels)."]
    return Table(f"{sec['op']} benchmark", ["kernel", "n", "ms", "min ms", "GB/s", "% HBM peak", "GFLOP/s",
                                            "timing", "status"], rows, notes, key="bench")


def check_table(doc: dict) -> Table:
    rows = []
    for rec in doc["bench"]["rows"]:
        for c in rec.get("checks", []):
            ch = Check.from_dict(c)
            rows.append([rec["kernel"], ch.line(), "pass" if ch.passed else "FAIL"])
    return Table("Checks", ["kernel", "check", "result"], rows, key="bench_checks")


def tables(doc: dict) -> list[Table]:
    out = []
    if doc.get("gemm"):
        out += [render_gemm.gemm_table(doc), render_gemm.check_table(doc)]
    if doc.get("bench"):
        out += [stream_table(doc), check_table(doc)]
    if doc.get("profile"):
        from rooflab.report.ceilings import profile_table  # noqa: PLC0415

        out.append(profile_table(doc))
    return out
