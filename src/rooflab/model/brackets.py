"""Every measured ceiling of a results document, bracketed: witness <= ceiling <= physical limit
(pure: reads the document only). The witness is the best other kernel seen on the device in the
same run: the vendor's path (cudaMemcpy, CUB's reduction, cudaMemset, cuBLAS) or a GEMM rung."""

from __future__ import annotations

from rooflab.model.ceilings import summarize
from rooflab.model.hierarchy import memory_figures
from rooflab.model.limits import Bracket, compute_limit, hbm_limit, l2_limit, shared_limit

GB = 1e9


def _run_gbs(r: dict | None) -> float | None:
    return r["gbs"] * GB if r and r.get("verified") and r.get("gbs") else None


def best_read(directions: dict) -> tuple[float, str] | None:
    """rooflab's best read-only stream: the plain one or the best unrolled variant."""
    runs = [r for r in [directions.get("read"), *(directions.get("read_variants") or [])] if _run_gbs(r)]
    if not runs:
        return None
    r = max(runs, key=_run_gbs)
    where = f", grid {r['grid']:,} ({r['waves']} wave{'s' if r['waves'] > 1 else ''})" if r.get("waves") else ""
    return _run_gbs(r), f"{r.get('kernel') or r.get('label', 'read_float4')}{where}"


def _hbm(doc: dict, dev: dict) -> list[Bracket]:
    bw = doc.get("bandwidth")
    if not bw:
        return []
    pins = hbm_limit({**dev, "hbm_peak_bytes_per_s": dev.get("hbm_peak_bytes_per_s") or bw.get("hbm_peak_bytes_per_s")})
    out = []
    try:
        s = summarize(bw)
    except (KeyError, TypeError):
        s = {}
    best = s.get("best")
    memcpy = s.get("memcpy_gbs")
    if best or memcpy:
        out.append(Bracket("HBM copy (read + write)", "B/s", best["gbs"] * GB if best else None,
                           f"{best['kernel']}, block {best['block']}, grid {best['grid']:,}" if best else "none",
                           memcpy * GB if memcpy else None, "cudaMemcpy device-to-device", pins, "DRAM"))
    dirs = bw.get("directions") or {}
    read = best_read(dirs)
    cub = _run_gbs(dirs.get("read_cub"))
    if read or cub:
        out.append(Bracket("HBM read", "B/s", read[0] if read else None, read[1] if read else "none",
                           cub, "CUB DeviceReduce::Sum" if cub else "none measured", pins, "DRAM"))
    write, memset = _run_gbs(dirs.get("write")), _run_gbs(dirs.get("write_memset"))
    if write or memset:
        out.append(Bracket("HBM write", "B/s", write, "write_float4" if write else "none", memset,
                           "cudaMemsetAsync" if memset else "none measured", pins, "DRAM"))
    return out


def _memory(doc: dict, dev: dict) -> list[Bracket]:
    sec = doc.get("memory")
    if not sec:
        return []
    s = memory_figures(doc)
    mdev = {**(sec.get("device") or {}), **dev}
    out = []
    if s.get("l2_whole_bytes_per_s"):
        out.append(Bracket("L2 read, whole L2", "B/s", s["l2_whole_bytes_per_s"],
                           f"ld.global.cg reads over {s['l2_whole_footprint_bytes'] / 2**20:g} MiB", None, "none",
                           l2_limit(mdev), "L2"))
    if s.get("l2_partition_bytes_per_s"):
        out.append(Bracket("L2 read, one partition", "B/s", s["l2_partition_bytes_per_s"],
                           f"ld.global.cg reads over {s['l2_partition_footprint_bytes'] / 2**20:g} MiB", None,
                           "none", l2_limit(mdev), "L2"))
    if s.get("beyond_l2_bytes_per_s"):
        out.append(Bracket("HBM read, swept beyond the L2", "B/s", s["beyond_l2_bytes_per_s"],
                           f"ld.global.cg reads over {s['beyond_l2_footprint_bytes'] / 2**20:g} MiB", None, "none",
                           hbm_limit({**mdev, "hbm_peak_bytes_per_s": (sec.get("theoretical") or {}).get(
                               "hbm_bytes_per_s")}), "DRAM"))
    if s.get("shared_bytes_per_s"):
        out.append(Bracket("shared memory", "B/s", s["shared_bytes_per_s"], "conflict-free LDS.128 stream", None,
                           "none", shared_limit(mdev), "L1"))
    for p, what in (("fp64", "DFMA chains"), ("fp16", "HFMA2 chains")):
        if s.get(f"{p}_flops"):
            out.append(Bracket(f"{p.upper()} CUDA cores", "FLOP/s", s[f"{p}_flops"], what, None, "none",
                               compute_limit(mdev, p), "compute"))
    return out


def _gemm_best(doc: dict, precision: str) -> tuple[float, str] | None:
    """The fastest passed GEMM rung of one precision: a lower witness of that precision's roof."""
    best = None
    for r in (doc.get("gemm") or {}).get("rungs", []):
        t = r.get("timing") or {}
        if r.get("passed") and r.get("precision", "fp32") == precision and t.get("median_ms"):
            rate = r["flops"] / (t["median_ms"] * 1e-3)
            if best is None or rate > best[0]:
                best = (rate, f"{r['kernel']} GEMM, {r['m']}×{r['n']}×{r['k']}")
    return best


def _compute(doc: dict, dev: dict) -> list[Bracket]:
    out = []
    rows = [r for r in (doc.get("flops") or {}).get("rows", []) if r.get("verified") and r.get("tflops")]
    gemm = _gemm_best(doc, "fp32")
    if rows or gemm:
        best = max(rows, key=lambda r: r["tflops"]) if rows else None
        out.append(Bracket("FP32 CUDA cores", "FLOP/s", best["tflops"] * 1e12 if best else None,
                           f"FMA chains, {best['accumulators']} accumulators, grid {best['grid']:,}" if best else "none",
                           gemm[0] if gemm else None, gemm[1] if gemm else "none", compute_limit(dev, "fp32"),
                           "compute"))
    tensor = [r for r in (doc.get("flops") or {}).get("tensor") or [] if r.get("verified") and r.get("tflops")]
    for prec in sorted({r["precision"] for r in tensor}):
        best = max((r for r in tensor if r["precision"] == prec), key=lambda r: r["tflops"])
        gemm = _gemm_best(doc, prec)
        out.append(Bracket(f"{prec.upper()} tensor cores", "FLOP/s", best["tflops"] * 1e12, best["kernel"],
                           gemm[0] if gemm else None, gemm[1] if gemm else "none", compute_limit(dev, prec),
                           "compute"))
    return out


def brackets(doc: dict) -> list[Bracket]:
    """All ceilings the document measured, each with its witness and physical limit."""
    dev = doc.get("device") or {}
    return _hbm(doc, dev) + _memory(doc, dev) + _compute(doc, dev)
