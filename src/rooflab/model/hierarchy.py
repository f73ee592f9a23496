"""The hierarchical roofline, pure: one memory slope per level of the hierarchy
(L1/shared, L2, HBM), and each profiled kernel placed once per level.

A kernel that moves ``bytes_l`` through level ``l`` at bandwidth ``BW_l`` and does ``F`` FP32
FLOPs has an intensity ``AI_l = F / bytes_l`` at that level and can reach at most
``min(peak, AI_l x BW_l)`` there. Nsight Compute's rule picks the binding level: the one whose
attainable rate is lowest, i.e. the slope nearest above the kernel's points. Equivalently, the
level whose traffic needs the most time (``bytes_l / BW_l``); that form also judges kernels that
do no FLOPs (a copy), by how busy each level was.

Bandwidths come from the document where they were measured: a conflict-free shared-memory stream
for L1; for L2 the in-L2 read at the largest footprint a kernel spanning the whole L2 meets (the
one-partition and best-case figures kept beside it); for HBM a single read pass over a footprint
far beyond the L2, else the memory section's sweep beyond the L2, else the best copy. A figure
above its physical limit (model/limits.py) is refused and kept with the reason; then theory (SMs x
128 B/clk x clock for shared memory, a whitepaper figure for L2 where one is published, the pin
rate). A level with no figure is left out. No plotting here.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field

from rooflab.model import arch
from rooflab.model.ceilings import summarize
from rooflab.model.limits import above_limit, hbm_limit, l2_limit
from rooflab.model.metrics import peak_for
from rooflab.model.ncu import KernelProfile
from rooflab.model.roofline import AddedCeiling

SHARED_BYTES_PER_CLK = 128  # 32 banks x 4 bytes per SM clock, every SM since Maxwell
LEVEL_KEYS = ("L1", "L2", "DRAM")
LEVEL_NAMES = {"L1": "L1/shared", "L2": "L2", "DRAM": "HBM"}
COMPUTE = "compute"
# The whole-L2 figure: the largest footprint up to this share of the L2; the last fifth is left to
# set conflicts and the lines both partitions keep, which make a footprint the size of the L2 miss.
WHOLE_L2_SHARE = 0.8
# HBM from traffic that provably misses the L2: one pass over a footprint at least this many L2s.
SINGLE_PASS_L2S = 4


# ----------------------------------------------------------------------------------------------
# the measured section, summarised
# ----------------------------------------------------------------------------------------------


def rate_spread(values: list[float]) -> dict:
    """Median, min and max of per-round rates, and the spread (max - min) / median in %."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return {"rate": None, "rate_min": None, "rate_max": None, "spread_pct": None}
    med = statistics.median(vals)
    return {"rate": med, "rate_min": min(vals), "rate_max": max(vals),
            "spread_pct": 100.0 * (max(vals) - min(vals)) / med if med else None}


def _rated(row: dict | None) -> bool:
    return bool(row) and bool(row.get("verified")) and row.get("rate") is not None


def memory_summary(sec: dict) -> dict:
    """The headline figures of a "memory" section, each with its theoretical value and ratio."""
    theo = sec.get("theoretical") or {}
    l2 = (sec.get("device") or {}).get("l2_bytes") or 0
    out: dict = {}
    rows = sorted((r for r in (sec.get("l2_sweep") or {}).get("rows", []) if _rated(r)),
                  key=lambda r: r["footprint_bytes"])
    # the L2 figure: the best footprint up to half the L2 (the smallest one where the size is unknown)
    in_l2 = [r for r in rows if r["footprint_bytes"] <= l2 / 2] if l2 else rows[:1]
    if in_l2:
        best = max(in_l2, key=lambda r: r["rate"])
        largest = rows[-1]
        beyond = largest if l2 and largest["footprint_bytes"] >= 2 * l2 else None
        cliff = next((r for r in rows if r["footprint_bytes"] > best["footprint_bytes"]
                      and r["rate"] < 0.9 * best["rate"]), None)
        out.update(l2_bytes_per_s=best["rate"], l2_footprint_bytes=best["footprint_bytes"],
                   l2_spread_pct=best.get("spread_pct"),
                   cliff_footprint_bytes=cliff["footprint_bytes"] if cliff else None,
                   beyond_l2_bytes_per_s=beyond["rate"] if beyond else None,
                   beyond_l2_footprint_bytes=beyond["footprint_bytes"] if beyond else None,
                   l2_over_beyond=best["rate"] / beyond["rate"] if beyond else None)
    if l2:
        # what a kernel whose working set spans one partition, or the whole L2, meets (not the best case)
        part = [r for r in rows if r["footprint_bytes"] <= l2 / 2]
        whole = [r for r in rows if r["footprint_bytes"] <= WHOLE_L2_SHARE * l2]
        if part:
            out.update(l2_partition_bytes_per_s=part[-1]["rate"], l2_partition_footprint_bytes=part[-1]["footprint_bytes"])
        if whole:
            out.update(l2_whole_bytes_per_s=whole[-1]["rate"], l2_whole_footprint_bytes=whole[-1]["footprint_bytes"])
    copy = sec.get("l2_copy")
    if _rated(copy):
        out["l2_copy_bytes_per_s"] = copy["rate"]
    shared = {r.get("variant"): r for r in (sec.get("shared") or {}).get("rows", []) if _rated(r)}
    cf, conf = shared.get("conflict-free"), shared.get("32-way conflict")
    if cf:
        out["shared_bytes_per_s"] = cf["rate"]
    if conf:
        out["shared_conflict_bytes_per_s"] = conf["rate"]
    if cf and conf:
        out["shared_conflict_slowdown"] = cf["rate"] / conf["rate"]
    for p in ("fp64", "fp16"):
        if _rated(sec.get(p)):
            out[f"{p}_flops"] = sec[p]["rate"]
    for key, theo_key in (("shared_bytes_per_s", "shared_bytes_per_s"), ("l2_bytes_per_s", "l2_bytes_per_s"),
                          ("beyond_l2_bytes_per_s", "hbm_bytes_per_s"), ("fp64_flops", "fp64_flops"),
                          ("fp16_flops", "fp16_flops")):
        if out.get(key) and theo.get(theo_key):
            out[key.replace("_bytes_per_s", "").replace("_flops", "") + "_pct_of_theoretical"] = \
                100.0 * out[key] / theo[theo_key]
    return out


# ----------------------------------------------------------------------------------------------
# levels and roofs
# ----------------------------------------------------------------------------------------------


@dataclass
class Level:
    """One memory level's slope."""

    key: str  # "L1", "L2", "DRAM"
    name: str  # "L1/shared", "L2", "HBM"
    bandwidth: float  # bytes/s
    measured: bool
    source: str
    theoretical: float | None = None
    # figures measured for this level and refused as its roof: above the physical limit, with why
    rejected: list[str] = field(default_factory=list)
    # other figures of the same level, not drawn: {what: bytes/s}
    beside: dict[str, float] = field(default_factory=dict)
    applies_to: str = ""  # the kernels this slope applies to (by footprint), for the picture's legend

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ComputeRoof:
    name: str  # "FP32", "FP64 (measured)"
    precision: str
    flops: float
    measured: bool
    dashed: bool = False
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def shared_theoretical(dev: dict) -> float | None:
    sms, mhz, cc = dev.get("sm_count"), dev.get("sm_clock_max_mhz"), dev.get("cc") or [0, 0]
    if not (sms and mhz) or tuple(cc) < (5, 0):
        return None
    return sms * SHARED_BYTES_PER_CLK * mhz * 1e6


def l2_theoretical(dev: dict) -> float | None:
    per_clk = arch.l2_bytes_per_clk(tuple(dev.get("cc") or (0, 0)))
    mhz = dev.get("sm_clock_max_mhz")
    return per_clk * mhz * 1e6 if per_clk and mhz else None


def _best_copy(doc: dict) -> float | None:
    bw = doc.get("bandwidth")
    if not bw:
        return None
    try:
        best = summarize(bw)["best"]
    except (KeyError, TypeError):
        return None
    return best["gbs"] * 1e9 if best and best.get("gbs") else None


def memory_figures(doc: dict) -> dict:
    """The memory section's headline figures, recomputed so older documents gain the new ones."""
    mem = doc.get("memory")
    if not mem:
        return {}
    return {**(mem.get("summary") or {}), **memory_summary(mem)}


def _single_pass_read(doc: dict) -> tuple[float, str] | None:
    """The bandwidth section's best read-only pass (the plain stream or an unrolled variant): every
    launch reads the whole array once."""
    bw = doc.get("bandwidth") or {}
    dirs = bw.get("directions") or {}
    runs = [r for r in [dirs.get("read"), *(dirs.get("read_variants") or [])]
            if r and r.get("verified") and r.get("gbs")]
    nbytes = (bw.get("config") or {}).get("bytes_per_array")
    l2 = (doc.get("device") or {}).get("l2_bytes") or 0
    if not (runs and nbytes) or (l2 and nbytes < SINGLE_PASS_L2S * l2):
        return None
    best = max(runs, key=lambda r: r["gbs"])
    times = f" ({nbytes / l2:.0f}× the L2)" if l2 else ""
    return best["gbs"] * 1e9, (f"measured: {best.get('kernel') or best.get('label', 'read_float4')} read-only "
                               f"stream, one pass over {nbytes / 2**30:g} GiB{times}")


def _hbm_level(doc: dict, s: dict) -> Level | None:
    """The first HBM figure within the pin rate: a single pass far beyond the L2, the memory section's
    sweep beyond the L2, the best copy; else the pin rate itself. Refused figures are kept, with why."""
    dev = doc.get("device") or {}
    limit = hbm_limit(dev)
    cands = []
    single = _single_pass_read(doc)
    if single:
        cands.append(single)
    if s.get("beyond_l2_bytes_per_s"):
        fp = s.get("beyond_l2_footprint_bytes") or 0
        cands.append((s["beyond_l2_bytes_per_s"], f"measured: float4 reads over {fp / 2**20:g} MiB (beyond the L2)"))
    copy = _best_copy(doc)
    if copy:
        cands.append((copy, "measured: best device-to-device copy"))
    rejected, held = [], []
    for rate, source in cands:
        err = above_limit(rate, limit, "DRAM")
        if err:
            rejected.append(f"{rate / 1e12:.2f} TB/s from {source.removeprefix('measured: ')}: {err}")
        else:
            held.append((rate, source))
    if held:
        return Level("DRAM", LEVEL_NAMES["DRAM"], held[0][0], True, held[0][1], limit.value, rejected)
    if limit.value:
        return Level("DRAM", LEVEL_NAMES["DRAM"], limit.value, False, f"theoretical: {limit.basis}", limit.value,
                     rejected)
    return None


def _l2_level(dev: dict, s: dict) -> Level | None:
    """The whole-L2 figure (what a kernel whose working set spans the L2 meets), with the one-partition
    figure and the best case beside it."""
    limit = l2_limit(dev)
    l2_t = limit.value
    cands = []
    if s.get("l2_whole_bytes_per_s"):
        cands.append((s["l2_whole_bytes_per_s"], s["l2_whole_footprint_bytes"], "whole L2"))
    if s.get("l2_bytes_per_s"):  # documents without the L2 size: the best footprint only
        cands.append((s["l2_bytes_per_s"], s.get("l2_footprint_bytes") or 0, "best case"))
    beside = {}
    if s.get("l2_partition_bytes_per_s"):
        beside[f"one partition ({s['l2_partition_footprint_bytes'] / 2**20:g} MiB)"] = s["l2_partition_bytes_per_s"]
    if s.get("l2_bytes_per_s") and s.get("l2_whole_bytes_per_s"):
        beside[f"best case ({(s.get('l2_footprint_bytes') or 0) / 2**20:g} MiB)"] = s["l2_bytes_per_s"]
    rejected, held = [], []
    for rate, fp, what in cands:
        err = above_limit(rate, limit, "L2")
        if err:
            rejected.append(f"{rate / 1e12:.2f} TB/s at {fp / 2**20:g} MiB: {err}")
        else:
            held.append((rate, fp, what))
    if held:
        rate, fp, what = held[0]
        applies = (f"working sets spanning the L2 (read over {fp / 2**20:g} MiB)" if what == "whole L2"
                   else f"read over {fp / 2**20:g} MiB")
        return Level("L2", LEVEL_NAMES["L2"], rate, True,
                     f"measured: L2-only float4 reads over {fp / 2**20:g} MiB ({what})", l2_t, rejected, beside,
                     applies)
    if l2_t:
        return Level("L2", LEVEL_NAMES["L2"], l2_t, False, f"theoretical: {limit.basis}", l2_t, rejected)
    return None


def levels(doc: dict) -> list[Level]:
    """The slopes to draw and judge by: measured where the document has them, else theory."""
    dev = doc.get("device") or {}
    s = memory_figures(doc)
    out: list[Level] = []
    shared_t = shared_theoretical(dev)
    if s.get("shared_bytes_per_s"):
        out.append(Level("L1", LEVEL_NAMES["L1"], s["shared_bytes_per_s"], True,
                         "measured: conflict-free LDS.128 stream", shared_t))
    elif shared_t:
        out.append(Level("L1", LEVEL_NAMES["L1"], shared_t, False, "theoretical: SMs x 128 B/clk x SM clock", shared_t))
    out += [lv for lv in (_l2_level(dev, s), _hbm_level(doc, s)) if lv is not None]
    return out


def compute_roofs(doc: dict) -> list[ComputeRoof]:
    """The FP32 CUDA-core peak (what the profiled FP32 kernels are judged against), and the
    FP64 and FP16 CUDA-core rates where the memory section measured them (drawn dashed)."""
    dev = doc.get("device") or {}
    out = []
    if dev.get("fp32_peak_flops"):
        out.append(ComputeRoof("FP32", "fp32", dev["fp32_peak_flops"], False, False,
                               "SMs x FP32 lanes x 2 x SM clock"))
    used = {r.get("precision") for r in (doc.get("gemm") or {}).get("rungs", []) if r.get("passed")}
    for prec in sorted(used - {"fp32", None}):  # the tensor roofs the run's rungs are judged against
        rate = peak_for(doc, prec)
        if rate:
            what = "TF32 tensor rate ÷ 3 (three products per FMA)" if prec == "3xtf32" else "published dense rate"
            out.append(ComputeRoof(f"{prec.upper().replace('3XTF32', '3xTF32')} tensor", prec, rate, False, True,
                                   what))
    s = memory_figures(doc)
    for p, what in (("fp16", "HFMA2 chains"), ("fp64", "DFMA chains")):
        if s.get(f"{p}_flops"):
            out.append(ComputeRoof(f"{p.upper()} measured", p, s[f"{p}_flops"], True, True, f"measured: {what}"))
    return out


# ----------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------


@dataclass
class LevelPoint:
    level: str  # "L1", "L2", "DRAM"
    bytes: float
    ai: float  # FLOP/byte (inf when nothing moved)
    attainable: float  # FLOP/s: min(peak, ai x bandwidth)
    time_needed_s: float  # bytes / bandwidth
    bandwidth_used: float | None  # bytes/s over the kernel's run
    pct_of_level: float | None  # bandwidth_used / level bandwidth, %

    def to_dict(self) -> dict:
        d = asdict(self)
        if math.isinf(d["ai"]):
            d["ai"] = "inf"
        return d


@dataclass
class KernelLevels:
    label: str
    flops: float  # FP32 FLOPs of the profiled launch
    achieved: float | None  # FLOP/s
    achieved_source: str  # "timed" (CUDA events) or "ncu duration"
    peak: float  # the roof of the unit it runs on (FP32 CUDA cores, or a tensor rate)
    points: list[LevelPoint] = field(default_factory=list)
    binding: str = "unknown"  # a level key, "compute" or "unknown"
    attainable: float | None = None  # FLOP/s at the binding level (min over levels and the peak)
    pct_of_attainable: float | None = None
    run_s: float | None = None
    roof: str = "FP32"  # the compute roof's name

    @property
    def binding_name(self) -> str:
        return LEVEL_NAMES.get(self.binding, f"{self.roof} compute" if self.binding == COMPUTE else self.binding)

    def point(self, key: str) -> LevelPoint | None:
        return next((p for p in self.points if p.level == key), None)

    def to_dict(self) -> dict:
        return {"label": self.label, "flops": self.flops, "achieved": self.achieved,
                "achieved_source": self.achieved_source, "peak": self.peak,
                "points": [p.to_dict() for p in self.points], "binding": self.binding,
                "binding_name": self.binding_name, "attainable": self.attainable,
                "pct_of_attainable": self.pct_of_attainable, "run_s": self.run_s}


def analyse(label: str, flops: float, level_bytes: dict[str, float | None], lvls: list[Level], peak: float,
            achieved: float | None = None, duration_s: float | None = None,
            achieved_source: str = "") -> KernelLevels:
    """Place one kernel at each level and name the level that binds it (Nsight Compute's rule)."""
    if achieved is None and flops > 0 and duration_s:
        achieved, achieved_source = flops / duration_s, achieved_source or "ncu duration"
    run_s = flops / achieved if flops > 0 and achieved else duration_s
    k = KernelLevels(label, flops, achieved, achieved_source, peak, run_s=run_s)
    for lv in lvls:
        b = level_bytes.get(lv.key)
        if b is None:
            continue
        ai = flops / b if b > 0 else math.inf
        used = b / run_s if run_s else None
        k.points.append(LevelPoint(lv.key, b, ai, min(peak, ai * lv.bandwidth), b / lv.bandwidth, used,
                                   100.0 * used / lv.bandwidth if used is not None else None))
    if not k.points:
        return k
    need = [(p.time_needed_s, p.level) for p in k.points] + [(flops / peak if peak else 0.0, COMPUTE)]
    t_max, k.binding = max(need, key=lambda x: x[0])
    if t_max <= 0:
        k.binding = "unknown"
        return k
    if flops > 0:
        k.attainable = flops / t_max
        if achieved:
            k.pct_of_attainable = 100.0 * achieved / k.attainable
    return k


def _achieved(doc: dict, p: KernelProfile) -> tuple[float | None, str]:
    """FLOP/s of a profiled kernel: its timed median where the GEMM section timed the same
    problem, else the profiled launch's own duration."""
    for rec in (doc.get("gemm") or {}).get("rungs", []):
        t = rec.get("timing")
        same = p.fp32_flops and abs(p.fp32_flops - rec.get("flops", 0)) <= 0.05 * rec.get("flops", 0)
        if rec.get("kernel") == p.label and rec.get("passed") and t and t.get("median_ms") and same:
            return rec["flops"] / (t["median_ms"] * 1e-3), "timed (CUDA events, median)"
    d = p.duration_s
    if d and p.fp32_flops:
        return p.fp32_flops / d, "ncu duration"
    return None, ""


def profiled_at_timed_shape(rec: dict, config: dict) -> bool:
    """The profile was taken at the rung's timed M, N, K (profiles before M and K were recorded ran
    N x N x N)."""
    n = config.get("n", rec.get("n"))
    return (rec.get("m"), rec.get("n"), rec.get("k")) == (config.get("m", n), n, config.get("k", n))


@dataclass
class Hierarchy:
    device: str
    levels: list[Level]
    roofs: list[ComputeRoof]
    kernels: list[KernelLevels]
    title: str = ""
    # the ceilings registered beyond rooflab's own, as the pictures draw them (rooflab.model.placement
    # fills them in: the registry reads this module)
    added_ceilings: list[AddedCeiling] = field(default_factory=list)

    def level(self, key: str) -> Level | None:
        return next((lv for lv in self.levels if lv.key == key), None)

    @property
    def fp32_peak(self) -> float | None:
        return next((r.flops for r in self.roofs if r.precision == "fp32"), None)

    def to_dict(self) -> dict:
        return {"device": self.device, "title": self.title, "levels": [lv.to_dict() for lv in self.levels],
                "roofs": [r.to_dict() for r in self.roofs], "kernels": [k.to_dict() for k in self.kernels],
                "added_ceilings": [asdict(c) for c in self.added_ceilings]}


def hierarchy(doc: dict) -> Hierarchy | None:
    """The hierarchical roofline of a results document, or None without a device FP32 peak.

    Kernels are the profiled ones whose profile has the L1 and L2 byte counts (profiles recorded
    from before the per-level metrics have only DRAM bytes and are left out); with no profile the roofs alone."""
    dev = doc.get("device") or {}
    peak = dev.get("fp32_peak_flops")
    if not peak:
        return None
    lvls = levels(doc)
    kernels = []
    roofs = compute_roofs(doc)
    # a GEMM rung's FLOPs are 2·M·N·K whatever unit does them (ncu counts only FP32 instructions, which
    # a tensor-core rung hardly issues), timed by the run, against the roof of its own precision
    rungs = {r["kernel"]: r for r in (doc.get("gemm") or {}).get("rungs", []) if r.get("passed") and r.get("timing")}
    for d in (doc.get("profile") or {}).get("kernels", []):
        p = KernelProfile.from_dict(d)
        if p.l1_bytes is None and p.l2_bytes is None:
            continue
        level_bytes = {"L1": p.l1_shared_bytes, "L2": p.l2_bytes, "DRAM": p.dram_bytes}
        rec = rungs.get(p.label)
        if rec is not None and profiled_at_timed_shape(rec, (doc.get("profile") or {}).get("config") or {}):
            prec = rec.get("precision", "fp32")
            roof = next((r for r in roofs if r.precision == prec), None)
            if roof is None:
                continue
            k = analyse(p.label, rec["flops"], level_bytes, lvls, roof.flops,
                        achieved=rec["flops"] / (rec["timing"]["median_ms"] * 1e-3),
                        achieved_source="timed (CUDA events, median)")
            k.roof = roof.name.removesuffix(" tensor") + (" tensor" if prec != "fp32" else "")
            kernels.append(k)
            continue
        achieved, source = _achieved(doc, p)
        kernels.append(analyse(p.label, p.fp32_flops, level_bytes, lvls, peak, achieved=achieved,
                               duration_s=p.duration_s, achieved_source=source))
    return Hierarchy(dev.get("name", "?"), lvls, roofs, kernels,
                     title=f"{dev.get('name', '?')} — memory hierarchy, rooflab {str(doc.get('created', ''))[:10]}")
