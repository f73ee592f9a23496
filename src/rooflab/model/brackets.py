"""Every measured ceiling of a results document, bracketed: witness <= ceiling <= physical limit
(pure: reads the document only). rooflab's own ceilings are records (rooflab.model.ceiling),
registered here in the table's order; one added elsewhere joins them. The witness is the best
other kernel seen on the device in the same run: the vendor's path (cudaMemcpy, CUB's reduction,
cudaMemset, cuBLAS) or a GEMM rung."""

from __future__ import annotations

from functools import partial

from rooflab import ceilings
from rooflab.model.ceiling import CEILINGS, Ceiling, Family, Figure, register, registered
from rooflab.model.ceilings import summarize
from rooflab.model.hierarchy import memory_figures
from rooflab.model.limits import Bracket, Limit, compute_limit, hbm_limit, l2_limit, shared_limit

GB = 1e9


def _device(doc: dict) -> dict:
    return doc.get("device") or {}


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


# ---------------------------------------------------------------- HBM, from the bandwidth section

def _pins(doc: dict) -> Limit:
    dev = _device(doc)
    return hbm_limit({**dev, "hbm_peak_bytes_per_s": dev.get("hbm_peak_bytes_per_s")
                      or doc["bandwidth"].get("hbm_peak_bytes_per_s")})


def _copy_summary(doc: dict) -> dict:
    try:
        return summarize(doc["bandwidth"]) if doc.get("bandwidth") else {}
    except (KeyError, TypeError):  # a section cut short still brackets its directions
        return {}


def _best_copy(doc: dict) -> Figure | None:
    best = _copy_summary(doc).get("best")
    return Figure(best["gbs"] * GB, f"{best['kernel']}, block {best['block']}, grid {best['grid']:,}") if best else None


def _memcpy(doc: dict) -> Figure | None:
    gbs = _copy_summary(doc).get("memcpy_gbs")
    return Figure(gbs * GB, "cudaMemcpy device-to-device") if gbs else None


def _directions(doc: dict) -> dict:
    return (doc.get("bandwidth") or {}).get("directions") or {}


def _direction(key: str, what: str, doc: dict) -> Figure | None:
    rate = _run_gbs(_directions(doc).get(key))
    return Figure(rate, what) if rate else None


def _read(doc: dict) -> Figure | None:
    found = best_read(_directions(doc))
    return Figure(*found) if found else None


register(Ceiling("HBM copy (read + write)", "B/s", "DRAM", "bandwidth", _best_copy, _pins, witness=_memcpy,
                 kernel=ceilings.COPY, order=1))
register(Ceiling("HBM read", "B/s", "DRAM", "bandwidth", _read, _pins,
                 witness=partial(_direction, "read_cub", "CUB DeviceReduce::Sum"), no_witness="none measured",
                 kernel=ceilings.COPY, order=2))
register(Ceiling("HBM write", "B/s", "DRAM", "bandwidth", partial(_direction, "write", "write_float4"), _pins,
                 witness=partial(_direction, "write_memset", "cudaMemsetAsync"), no_witness="none measured",
                 kernel=ceilings.COPY, order=3))


# ---------------------------------------------------------------- the memory section's levels

def _level_device(doc: dict) -> dict:
    return {**((doc.get("memory") or {}).get("device") or {}), **_device(doc)}


def _level(key: str, what: str, doc: dict) -> Figure | None:
    s = memory_figures(doc)
    return Figure(s[key], what) if s.get(key) else None


def _swept(key: str, footprint: str, doc: dict) -> Figure | None:
    s = memory_figures(doc)
    return Figure(s[key], f"ld.global.cg reads over {s[footprint] / 2**20:g} MiB") if s.get(key) else None


def _pins_beyond_l2(doc: dict) -> Limit:
    theoretical = (doc["memory"].get("theoretical") or {}).get("hbm_bytes_per_s")
    return hbm_limit({**_level_device(doc), "hbm_peak_bytes_per_s": theoretical})


def _l2(doc: dict) -> Limit:
    return l2_limit(_level_device(doc))


def _shared(doc: dict) -> Limit:
    return shared_limit(_level_device(doc))


def _level_compute(precision: str, doc: dict) -> Limit:
    return compute_limit(_level_device(doc), precision)


register(Ceiling("L2 read, whole L2", "B/s", "L2", "memory",
                 partial(_swept, "l2_whole_bytes_per_s", "l2_whole_footprint_bytes"), _l2, kernel=ceilings.L2, order=4))
register(Ceiling("L2 read, one partition", "B/s", "L2", "memory",
                 partial(_swept, "l2_partition_bytes_per_s", "l2_partition_footprint_bytes"), _l2, kernel=ceilings.L2,
                 order=5))
register(Ceiling("HBM read, swept beyond the L2", "B/s", "DRAM", "memory",
                 partial(_swept, "beyond_l2_bytes_per_s", "beyond_l2_footprint_bytes"), _pins_beyond_l2,
                 kernel=ceilings.L2, order=6))
register(Ceiling("shared memory", "B/s", "L1", "memory", partial(_level, "shared_bytes_per_s",
                                                               "conflict-free LDS.128 stream"),
                 _shared, kernel=ceilings.SHARED, order=7))
register(Ceiling("FP64 CUDA cores", "FLOP/s", "compute", "memory", partial(_level, "fp64_flops", "DFMA chains"),
                 partial(_level_compute, "fp64"), kernel=ceilings.FMA64, order=8))
register(Ceiling("FP16 CUDA cores", "FLOP/s", "compute", "memory", partial(_level, "fp16_flops", "HFMA2 chains"),
                 partial(_level_compute, "fp16"), kernel=ceilings.FMA16, order=9))


# ---------------------------------------------------------------- compute, from the flops section

def _gemm_best(precision: str, doc: dict) -> Figure | None:
    """The fastest passed GEMM rung of one precision: a lower witness of that precision's roof."""
    best = None
    for r in (doc.get("gemm") or {}).get("rungs", []):
        t = r.get("timing") or {}
        if r.get("passed") and r.get("precision", "fp32") == precision and t.get("median_ms"):
            rate = r["flops"] / (t["median_ms"] * 1e-3)
            if best is None or rate > best.value:
                best = Figure(rate, f"{r['kernel']} GEMM, {r['m']}×{r['n']}×{r['k']}")
    return best


def _compute(precision: str, doc: dict) -> Limit:
    return compute_limit(_device(doc), precision)


def _fma(doc: dict) -> Figure | None:
    rows = [r for r in (doc.get("flops") or {}).get("rows", []) if r.get("verified") and r.get("tflops")]
    if not rows:
        return None
    best = max(rows, key=lambda r: r["tflops"])
    return Figure(best["tflops"] * 1e12, f"FMA chains, {best['accumulators']} accumulators, grid {best['grid']:,}")


def _tensor_rows(doc: dict) -> list[dict]:
    return [r for r in (doc.get("flops") or {}).get("tensor") or [] if r.get("verified") and r.get("tflops")]


def _tensor(precision: str, doc: dict) -> Figure | None:
    best = max((r for r in _tensor_rows(doc) if r["precision"] == precision), key=lambda r: r["tflops"])
    return Figure(best["tflops"] * 1e12, best["kernel"])


def _dense_rate(precision: str, doc: dict) -> float | None:
    """The spec table's dense rate, which assumes a clock below the maximum (P2)."""
    return (_device(doc).get("tensor_peaks") or {}).get(precision)


def _tensor_cores(doc: dict) -> list[Ceiling]:
    """A roof per precision the document timed on the tensor cores."""
    return [Ceiling(f"{p.upper()} tensor cores", "FLOP/s", "compute", "flops", partial(_tensor, p),
                    partial(_compute, p), witness=partial(_gemm_best, p), kernel=ceilings.TENSOR,
                    published=partial(_dense_rate, p))
            for p in sorted({r["precision"] for r in _tensor_rows(doc)})]


register(Ceiling("FP32 CUDA cores", "FLOP/s", "compute", "flops", _fma, partial(_compute, "fp32"),
                 witness=partial(_gemm_best, "fp32"), kernel=ceilings.FMA, order=10))
register(Family("tensor cores", _tensor_cores, order=11))


def brackets(doc: dict) -> list[Bracket]:
    """Every registered ceiling the document measured, each with its witness and physical limit."""
    return [b for c in registered() for b in c.brackets(doc)]


def every(doc: dict) -> list[Ceiling]:
    """Every registered ceiling, rooflab's own and those added, in their order, a family as the
    members the document measured (the rows of the roofs table and of `rooflab compare`)."""
    return [c for e in registered() for c in e.ceilings(doc)]


# rooflab's own, as registered above: the roofline pictures draw these as their own roofs and slopes
# (from the spec table, the hierarchy's levels and the copy sweep); another ceiling's line there comes
# from its record.
_OWN = dict(CEILINGS)


def added(doc: dict) -> list[Ceiling]:
    """The registered ceilings other than rooflab's own, in their order, a family as the members the
    document measured; one registered over a ceiling of rooflab's name counts as added."""
    return [c for e in registered() if _OWN.get(e.key) is not e for c in e.ceilings(doc)]
