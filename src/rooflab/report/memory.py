"""Tables and paragraphs for the memory hierarchy, from a results document only:
the L2 sweep, shared memory with and without bank conflicts, the FP64/FP16 peaks, and the
hierarchical roofline's binding level per profiled kernel. Every number comes from the run."""

from __future__ import annotations

import math

from rooflab.model.hierarchy import (
    COMPUTE,
    LEVEL_NAMES,
    Hierarchy,
    hierarchy,
    memory_summary,
)
from rooflab.model.level_evidence import cross_check, level_errors, level_evidence
from rooflab.model.limits import above_limit, hbm_limit
from rooflab.report.table import Table, fmt

MiB = 2**20
CEILING_LABELS = ("copy", "copy_scalar", "fma")  # profiled ceilings; every other label is a GEMM rung
_L1_NOTE = ("L1/shared bytes are Nsight Compute's l1tex__t_bytes (global and local accesses through the L1) "
            "plus shared-memory reads counted as 128 bytes per shared-load wavefront "
            "(l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld), an upper bound that is exact for conflict-free "
            "16-byte loads; where a profile lacks the wavefronts, shared memory is left out and a kernel fed "
            "from it (the tiled rungs) looks lighter at L1/shared than it is.")


def _sec(doc: dict) -> dict | None:
    return doc.get("memory") or None


def _summary(sec: dict) -> dict:
    return {**(sec.get("summary") or {}), **memory_summary(sec)}


def _x_hbm(rate: float | None, hbm: float | None, beyond_l2: bool) -> str | None:
    """× the pin rate; beyond the L2 a figure above the pins is flagged: the L2 served part of it."""
    if not (rate and hbm):
        return None
    text = f"{rate / hbm:.2f}×"
    if beyond_l2 and above_limit(rate, _pins({}, hbm), "DRAM"):
        text += " (above the pins: L2 hits)"
    return text


def _tb(v: float | None, spec: str = ".2f") -> str | None:
    return fmt(v / 1e12 if v else None, spec)


def _gb(v: float | None) -> str | None:
    return fmt(v / 1e9 if v else None, ",.0f")


def _pct(a: float | None, b: float | None, spec: str = ".1f") -> str | None:
    return fmt(100.0 * a / b, spec, "%") if a and b else None


def _range(row: dict, scale: float, spec: str) -> str | None:
    lo, hi = row.get("rate_min"), row.get("rate_max")
    if lo is None or hi is None:
        return None
    return f"{lo / scale:{spec}}–{hi / scale:{spec}}"


def _spread(row: dict) -> str | None:
    return fmt(row.get("spread_pct"), ".2f", "%")


def _ok(row: dict) -> str:
    if row.get("error"):
        return "ERROR"
    return "yes" if row.get("verified") else "NO"


def _clock_note(rows: list[dict], max_mhz: float | None) -> str | None:
    clocks = [r.get("sm_mhz") for row in rows for r in row.get("rounds", []) if r.get("sm_mhz")]
    if not clocks or not max_mhz:
        return None
    lo, hi = min(clocks), max(clocks)
    throttled = any(r.get("throttled") for row in rows for r in row.get("rounds", []))
    text = f"SM clock during the timed reps (NVML medians): {lo:.0f}–{hi:.0f} MHz; theory uses {max_mhz:.0f} MHz."
    return text + (" NVML reported throttling." if throttled else "")


# ----------------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------------


def l2_table(doc: dict) -> Table | None:
    sec = _sec(doc)
    if not sec or not sec.get("l2_sweep"):
        return None
    sweep, s, theo = sec["l2_sweep"], _summary(sec), sec.get("theoretical") or {}
    l2 = (sec.get("device") or {}).get("l2_bytes") or 0
    best, hbm = s.get("l2_bytes_per_s"), theo.get("hbm_bytes_per_s")
    rows = []
    for r in sorted(sweep.get("rows", []), key=lambda r: r.get("footprint_bytes", 0)):
        rate = r.get("rate") if r.get("verified") else None
        rows.append([f"{r['footprint_bytes'] / MiB:g}", fmt(r["footprint_bytes"] / l2, ".2f") if l2 else None,
                     _gb(rate), _pct(rate, best, ".0f"), _x_hbm(rate, hbm, bool(l2) and r["footprint_bytes"] > l2),
                     _range(r, 1e9, ",.0f"), _spread(r), _ok(r)])
    copy = sec.get("l2_copy")
    if copy and copy.get("footprint_bytes"):
        rate = copy.get("rate") if copy.get("verified") else None
        half = copy["footprint_bytes"] / 2 / MiB
        rows.append([f"copy {copy['footprint_bytes'] / MiB:g} ({half:g} read + {half:g} written)",
                     fmt(copy["footprint_bytes"] / l2, ".2f") if l2 else None, _gb(rate), _pct(rate, best, ".0f"),
                     fmt(rate / hbm, ".2f", "×") if rate and hbm else None, _range(copy, 1e9, ",.0f"),
                     _spread(copy), _ok(copy)])
    m = sec.get("method") or {}
    grid = f"{m['grid']:,}" if m.get("grid") else "?"
    notes = [(f"float4 reads cached in L2 only (ld.global.cg), 4 loads in flight per thread, grid {grid} "
             f"× {m.get('block', '?')} (one full-occupancy wave), each launch ~{m.get('launch_ms', '?')} ms; bytes = "
             f"bytes read (the copy: read + written). GB/s: median over {m.get('rounds', '?')} interleaved round(s) of "
             f"the median of {m.get('reps', '?')} launches; min–max and spread are between rounds."),
             (f"L2 = {l2 / MiB:g} MiB. % of L2 best: against the best footprint up to half the L2; "
             f"× HBM peak: against {_gb(hbm) or '?'} GB/s (2 × memory clock × bus width). "
             f"L2 theoretical: {theo.get('l2_basis', 'unknown')}.")]
    if s.get("l2_whole_bytes_per_s"):
        notes.append(f"The L2 roof drawn: {_gb(s['l2_whole_bytes_per_s'])} GB/s at "
                     f"{s['l2_whole_footprint_bytes'] / MiB:g} MiB, what a kernel whose working set spans the L2 meets "
                     "(the largest footprint up to 80% of the L2)"
                     + (f"; within one partition ({s['l2_partition_footprint_bytes'] / MiB:g} MiB) "
                        f"{_gb(s['l2_partition_bytes_per_s'])} GB/s" if s.get("l2_partition_bytes_per_s") else "")
                     + (f"; the best case, {_gb(best)} GB/s at {s['l2_footprint_bytes'] / MiB:g} MiB, is no roof."
                        if best else "."))
    beyond_err = _beyond_error(doc.get("device") or {}, s, hbm)
    if beyond_err:
        notes.append(f"{s['beyond_l2_footprint_bytes'] / MiB:g} MiB: {beyond_err}.")
    for r in [sweep, *sweep.get("rows", [])]:
        if r.get("error"):
            notes.append(f"{r['label']}: {r['error']}")
    return Table("L2 bandwidth by footprint", ["footprint MiB", "× L2", "GB/s", "% of L2 best",
                                                         "× HBM peak", "rounds GB/s", "spread", "verified"],
                 rows, notes, key="memory_l2")


def shared_table(doc: dict) -> Table | None:
    sec = _sec(doc)
    if not sec or not sec.get("shared"):
        return None
    sh, theo = sec["shared"], sec.get("theoretical") or {}
    peak = theo.get("shared_bytes_per_s")
    rows = []
    for r in sh.get("rows", []):
        rate = r.get("rate") if r.get("verified") else None
        rows.append([f"{r.get('variant', r.get('label'))}: {r.get('how', '')}", _tb(rate), _pct(rate, peak),
                     r.get("wavefronts_per_lds128"), _range(r, 1e12, ".2f"), _spread(r), _ok(r)])
    rows.append(["theoretical", _tb(peak), "100.0%" if peak else None, 4, None, None, None])
    notes = [(f"LDS.128 stream, 4 loads in flight per thread, {sh.get('buffer_bytes', 8192) // 1024} KB per block, "
             "full occupancy; every word loaded is summed (32-bit integer) and the sums are checked bit for bit."),
             (f"Theoretical: {theo.get('shared_basis', 'SMs × 128 B/clk × SM clock')}. A warp's LDS.128 moves 512 bytes: "
             "4 wavefronts of 128 B when conflict-free, 32 when every lane hits the same 4 banks.")]
    clock = _clock_note(sh.get("rows", []), (sec.get("device") or {}).get("sm_clock_max_mhz"))
    if clock:
        notes.append(clock)
    notes += [f"{r['label']}: {r['error']}" for r in [sh, *sh.get("rows", [])] if r.get("error")]
    return Table("Shared-memory bandwidth", ["access", "TB/s", "% of theoretical",
                                                        "wavefronts per LDS.128", "rounds TB/s", "spread",
                                                        "verified"], rows, notes, key="memory_shared")


def peaks_table(doc: dict) -> Table | None:
    sec = _sec(doc)
    if not sec or not (sec.get("fp64") or sec.get("fp16")):
        return None
    theo = sec.get("theoretical") or {}
    rows, notes = [], []
    for p, what in (("fp64", "DFMA chains"), ("fp16", "HFMA2 chains (half2)")):
        r = sec.get(p)
        if not r:
            continue
        rate = r.get("rate") if r.get("verified") else None
        peak = theo.get(f"{p}_flops")
        rows.append([p.upper(), f"{what}, {r.get('accumulators', '?')} accumulators", _tb(rate), _tb(peak),
                     _pct(rate, peak), _range(r, 1e12, ".2f"), _spread(r), _ok(r)])
        notes.append(f"{p.upper()} theoretical: {theo.get(f'{p}_basis', '?')}.")
        if r.get("error"):
            notes.append(f"{p.upper()}: {r['error']}")
    fp32 = theo.get("fp32_flops")
    if fp32:
        rows.append(["FP32", "for comparison (theoretical)", None, _tb(fp32), None, None, None, None])
    notes.append("Each chain checked first: one block, bit for bit against an emulation of the same FMA "
                 "recurrence (products exact, one rounding per FMA). FLOPs: FMA = 2, HFMA2 = 4.")
    clock = _clock_note([sec[p] for p in ("fp64", "fp16") if sec.get(p)],
                        (sec.get("device") or {}).get("sm_clock_max_mhz"))
    if clock:
        notes.append(clock)
    return Table("FP64 and FP16 CUDA-core peaks", ["precision", "kernel", "TFLOP/s", "theoretical",
                                                             "% of theoretical", "rounds TFLOP/s", "spread",
                                                             "verified"], rows, notes, key="memory_peaks")


def memory_tables(doc: dict) -> list[Table]:
    """The memory section's tables (empty where the document has no memory section)."""
    return [t for t in (l2_table(doc), shared_table(doc), peaks_table(doc)) if t is not None]


def _ai(v: float | None) -> str | None:
    if v is None:
        return None
    if math.isinf(v) or v >= 1e5:
        return "≫1e4" if v >= 1e5 else "∞"
    return f"{v:.3g}"


def evidence_notes(doc: dict) -> list[str]:
    """What Nsight Compute showed of each level's launches: where the traffic was served, and
    whether the level's rate agrees with ncu's bytes / time (within 3%)."""
    s = _summary(doc["memory"]) if doc.get("memory") else {}
    h = hierarchy(doc)
    dram = h.level("DRAM") if h else None
    out = []
    for ev in level_evidence(doc):
        measured = None
        if ev.level == "L2":
            for key in ("l2_whole", "l2_partition"):
                if s.get(f"{key}_footprint_bytes") == ev.footprint_bytes:
                    measured = s.get(f"{key}_bytes_per_s")
        elif dram is not None and dram.source.startswith("measured: read_float4 read-only"):
            measured = dram.bandwidth  # the profiled launch is the same kernel
        verdict = ("hits the L2" if ev.level == "L2" else "comes from DRAM") if ev.proven else (
            "NOT shown to hit the L2" if ev.level == "L2" else "NOT shown to come from DRAM")
        line = f"{LEVEL_NAMES[ev.level]} {ev.what}: {ev.why}: {verdict}"
        if measured and ev.ncu_rate:
            off = cross_check(measured, ev)
            line += (f"; ncu's bytes ÷ time {ev.ncu_rate / 1e12:.2f} TB/s against the measured "
                     f"{measured / 1e12:.2f} TB/s" + (f", DISAGREE: {off}" if off else ", within 3%"))
        out.append(line + ".")
    return out + [f"{line}." for line in level_errors(doc)]


def hierarchy_table(doc: dict) -> Table | None:
    """One row per profiled kernel that has L1 and L2 byte counts: the AI and attainable rate at each
    level and the binding level. None where there are no such kernels (no profile, or an old one)."""
    h = hierarchy(doc)
    if h is None or not h.kernels:
        return None
    keys = [lv.key for lv in h.levels]
    rows = []
    for k in h.kernels:
        row = [k.label, _tb(k.achieved, ".3g") if k.achieved else "0 (no FLOPs)"]
        for key in ("L1", "L2", "DRAM"):
            p = k.point(key) if key in keys else None
            row.append(_ai(p.ai) if p else None)
        for key in ("L1", "L2", "DRAM"):
            p = k.point(key) if key in keys else None
            row.append(_tb(p.attainable, ".3g") if p and k.flops > 0 else (
                fmt(p.pct_of_level, ".0f", "% busy") if p and p.pct_of_level is not None else None))
        row.append(k.binding_name)
        if k.flops > 0:
            row.append(fmt(k.pct_of_attainable, ".0f", "%"))
        else:
            b = k.point(k.binding)
            row.append(fmt(b.pct_of_level, ".0f", f"% of {LEVEL_NAMES.get(k.binding, '')} bandwidth") if b else None)
        rows.append(row)
    notes = ["Slopes: " + "; ".join(f"{lv.name} {lv.bandwidth / 1e12:.2f} TB/s ({lv.source})" for lv in h.levels)
             + f"; FP32 roof {h.fp32_peak / 1e12:.1f} TFLOP/s." if h.fp32_peak else "",
             *(f"{lv.name}, beside the slope drawn: " + "; ".join(f"{what} {v / 1e12:.2f} TB/s"
                                                                 for what, v in lv.beside.items()) + "."
               for lv in h.levels if lv.beside),
             *(f"{lv.name}, refused as a roof: {why}." for lv in h.levels for why in lv.rejected),
             *(f"Nsight Compute, {line}" for line in evidence_notes(doc)),
             ("AI at a level = FP32 FLOPs (ncu) / bytes through that level (ncu: l1tex__t_bytes, lts__t_bytes, "
             "dram__bytes read + write). Attainable = min(FP32 peak, AI × level bandwidth); the binding level is the "
             "one with the lowest attainable rate (Nsight Compute's rule: the slope nearest above the kernel's "
             "points). A kernel with no FLOPs is judged by how busy each level was."),
             _L1_NOTE]
    if len(keys) < 3:
        missing = [LEVEL_NAMES[k] for k in ("L1", "L2", "DRAM") if k not in keys]
        notes.append(f"No bandwidth for {', '.join(missing)} (neither measured nor published): not judged there.")
    return Table("Hierarchical roofline: the level that binds each kernel",
                 ["kernel", "achieved TFLOP/s", "AI L1/shared", "AI L2", "AI HBM", "attainable L1/shared",
                  "attainable L2", "attainable HBM", "binding", "% of attainable"], rows, [n for n in notes if n],
                 key="hierarchy")


# ----------------------------------------------------------------------------------------------
# paragraphs
# ----------------------------------------------------------------------------------------------


def _pins(dev: dict, hbm: float | None):
    return hbm_limit({"hbm_peak_bytes_per_s": hbm, **dev})


def _beyond_error(dev: dict, s: dict, hbm: float | None) -> str | None:
    """Why the largest footprint's rate is no HBM figure, where it is above the pin rate."""
    if not (s.get("beyond_l2_bytes_per_s") and hbm):
        return None
    return above_limit(s["beyond_l2_bytes_per_s"], _pins(dev, hbm), "DRAM")


def _l2_paragraph(sec: dict, full_dev: dict | None = None) -> tuple[str, str] | None:
    s, theo = _summary(sec), sec.get("theoretical") or {}
    dev = sec.get("device") or {}
    best = s.get("l2_bytes_per_s")
    if not best:
        return None
    l2 = dev.get("l2_bytes") or 0
    hbm = theo.get("hbm_bytes_per_s")
    rows = sorted((r for r in (sec.get("l2_sweep") or {}).get("rows", []) if r.get("verified") and r.get("rate")),
                  key=lambda r: r["footprint_bytes"])
    text = (f"Reading a footprint that fits in the L2 (best at {s['l2_footprint_bytes'] / MiB:g} MiB), the SMs pulled "
            f"{best / 1e12:.2f} TB/s from the L2")
    if hbm:
        text += f", {best / hbm:.2f}× the HBM peak of {hbm / 1e12:.2f} TB/s"
    if theo.get("l2_bytes_per_s"):
        text += f" and {100 * best / theo['l2_bytes_per_s']:.0f}% of the published {theo['l2_bytes_per_s'] / 1e12:.2f} TB/s"
    else:
        text += " (NVIDIA publishes no L2 bandwidth for this architecture: no physical limit brackets the L2 roof)"
    text += "."
    if s.get("l2_whole_bytes_per_s"):
        text += (f" That is the best case; a kernel whose working set spans the L2 meets "
                 f"{s['l2_whole_bytes_per_s'] / 1e12:.2f} TB/s (at {s['l2_whole_footprint_bytes'] / MiB:g} MiB), "
                 "the slope the hierarchical roofline draws")
        if s.get("l2_partition_bytes_per_s"):
            text += (f"; within one partition ({s['l2_partition_footprint_bytes'] / MiB:g} MiB) "
                     f"{s['l2_partition_bytes_per_s'] / 1e12:.2f} TB/s")
        text += "."
    cliff = s.get("cliff_footprint_bytes")
    before = [r for r in rows if cliff and r["footprint_bytes"] < cliff]
    if cliff and l2 and before:
        text += (f" The rate stays within 10% of that up to {before[-1]['footprint_bytes'] / MiB:g} MiB and first "
                 f"drops below it at {cliff / MiB:g} MiB ({cliff / l2:.2f}× the {l2 / MiB:g} MiB L2).")
    beyond = s.get("beyond_l2_bytes_per_s")
    if beyond and l2:
        text += (f" At {s['beyond_l2_footprint_bytes'] / MiB:g} MiB ({s['beyond_l2_footprint_bytes'] / l2:.1f}× the L2) "
                 f"the same reads run at {beyond / 1e12:.2f} TB/s")
        text += f", {100 * beyond / hbm:.0f}% of the HBM peak" if hbm else ""
        err = _beyond_error(full_dev or {}, s, hbm)
        if err:
            text += (f". That cannot be HBM: it is {err}. The hierarchical roofline does not draw it as the HBM "
                     "slope.")
        else:
            text += f": the data now streams from HBM, and the L2 was {s['l2_over_beyond']:.2f}× faster."
    half = [r for r in rows if l2 and r["footprint_bytes"] <= l2 / 2]
    full = [r for r in rows if l2 and l2 / 2 < r["footprint_bytes"] <= l2]
    if tuple(dev.get("cc") or ()) in ((8, 0), (9, 0)) and l2:
        text += (f" This L2 is built as two partitions of {l2 / 2 / MiB:g} MiB; an SM reaches data held in the far "
                 "partition across the interconnect between them, and data that SMs on both sides read can be kept "
                 "in both, so a footprint above about half the L2 may already slow before it exceeds the whole")
        if half and full:
            text += (f": here {half[-1]['rate'] / 1e12:.2f} TB/s at {half[-1]['footprint_bytes'] / MiB:g} MiB "
                     f"against {full[-1]['rate'] / 1e12:.2f} TB/s at {full[-1]['footprint_bytes'] / MiB:g} MiB")
        text += "."
    copy = sec.get("l2_copy") or {}
    if copy.get("verified") and copy.get("rate"):
        text += (f" Copying {copy['footprint_bytes'] / 2 / MiB:g} MiB to another {copy['footprint_bytes'] / 2 / MiB:g} MiB "
                 f"inside the L2 moved {copy['rate'] / 1e12:.2f} TB/s counting reads and writes "
                 f"({100 * copy['rate'] / best:.0f}% of the read-only rate).")
    return ("L2 bandwidth and the cliff to HBM", text)


def _shared_paragraph(sec: dict) -> tuple[str, str] | None:
    s, theo = _summary(sec), sec.get("theoretical") or {}
    cf, peak = s.get("shared_bytes_per_s"), theo.get("shared_bytes_per_s")
    if not cf:
        return None
    dev = sec.get("device") or {}
    text = (f"A conflict-free stream of 16-byte shared loads reached {cf / 1e12:.2f} TB/s")
    if peak:
        text += (f", {100 * cf / peak:.1f}% of the theoretical {peak / 1e12:.2f} TB/s ({dev.get('sm_count')} SMs × "
                 f"32 banks × 4 bytes per clock at {dev.get('sm_clock_max_mhz', 0):.0f} MHz)")
    text += "."
    rows = [r for r in (sec.get("shared") or {}).get("rows", []) if r.get("variant") == "conflict-free"]
    clocks = [r.get("sm_mhz") for row in rows for r in row.get("rounds", []) if r.get("sm_mhz")]
    if clocks and peak and dev.get("sm_clock_max_mhz") and min(clocks) < 0.99 * dev["sm_clock_max_mhz"]:
        at = peak * min(clocks) / dev["sm_clock_max_mhz"]
        text += (f" The SM clock ran as low as {min(clocks):.0f} MHz; at that clock the banks deliver "
                 f"{at / 1e12:.2f} TB/s, of which the stream reached {100 * cf / at:.1f}%.")
    conf = s.get("shared_conflict_bytes_per_s")
    if conf:
        ratio = cf / conf
        text += (f" Putting the 32 lanes of a warp 128 bytes apart, so that every lane's 16 bytes fall in the same four "
                 f"banks, cut it to {conf / 1e12:.2f} TB/s, {ratio:.1f}× slower: each LDS.128 then needs 32 "
                 "wavefronts instead of 4, an 8× cost in bank cycles")
        if 6.5 <= ratio <= 9.5:
            text += ", which the measurement reproduces."
        else:
            text += (f"; the measured {ratio:.1f}× differs from 8× by how far each stream is from keeping the banks "
                     "busy every cycle.")
    return ("Shared-memory bandwidth and bank conflicts", text)


def _peaks_paragraph(sec: dict) -> tuple[str, str] | None:
    s, theo = _summary(sec), sec.get("theoretical") or {}
    parts = []
    fp32 = theo.get("fp32_flops")
    for p, instr in (("fp64", "DFMA"), ("fp16", "HFMA2")):
        v, peak = s.get(f"{p}_flops"), theo.get(f"{p}_flops")
        if not v:
            continue
        t = f"{instr} chains reached {v / 1e12:.1f} TFLOP/s"
        if peak:
            t += f", {100 * v / peak:.1f}% of the {p.upper()} CUDA-core peak of {peak / 1e12:.1f} TFLOP/s"
            if fp32:
                t += f" ({peak / fp32:.2g}× the FP32 rate on this GPU)"
        parts.append(t)
    if not parts:
        return None
    text = "; ".join(parts) + (". The chains are register-only, 8 independent accumulators per thread at full "
                               "occupancy, like the FP32 FMA kernel.")
    if s.get("fp16_flops"):
        text += (" Each HFMA2 does two half-precision FMAs, so it counts 4 FLOP; on the A100 and H100/H200 the "
                 "compiler issues half of them to the tensor-core pipe (HFMA2.MMA), which is how the FP16 CUDA-core "
                 "rate reaches twice the FP32 rate.")
    text += " These are CUDA-core rates; tensor cores run FP16 and FP64 matrix products far faster."
    return ("FP64 and FP16 peaks", text)


def _hbm_only(h: Hierarchy, k) -> str:
    """What the one-slope roofline (HBM only) would say, for contrast."""
    p = k.point("DRAM")
    if k.binding == "DRAM" or not p or not k.achieved or not p.attainable:
        return ""
    return (f", where the HBM slope alone would allow {p.attainable / 1e12:.3g} TFLOP/s and put it at "
            f"{100 * k.achieved / p.attainable:.1f}%")


def _kernel_sentence(h: Hierarchy, k) -> str:
    if k.binding == "unknown":
        return f"{k.label}: no level could be judged."
    if k.flops <= 0:
        b = k.point(k.binding)
        return (f"{k.label} does no FLOPs; its busiest level is {LEVEL_NAMES.get(k.binding, k.binding)}, at "
                f"{b.pct_of_level:.0f}% of that level's {h.level(k.binding).bandwidth / 1e12:.2f} TB/s."
                if b and b.pct_of_level is not None else f"{k.label} does no FLOPs.")
    ach = f"{k.achieved / 1e12:.3g}" if k.achieved else "?"
    pct = f" ({k.pct_of_attainable:.0f}%)" if k.pct_of_attainable is not None else ""
    if k.binding == COMPUTE:
        low = min(k.points, key=lambda p: p.ai * h.level(p.level).bandwidth)
        lv = h.level(low.level)
        return (f"{k.label} is bound by no memory level: even its lowest memory roof, {lv.name} "
                f"({_ai(low.ai)} FLOP/B × {lv.bandwidth / 1e12:.2f} TB/s), is above the {k.roof} peak of "
                f"{k.peak / 1e12:.1f} TFLOP/s, which binds it; it achieved {ach} TFLOP/s{pct}.")
    p, lv = k.point(k.binding), h.level(k.binding)
    return (f"{k.label} is bound by {lv.name} traffic: its {lv.name} AI {_ai(p.ai)} FLOP/B × "
            f"{lv.bandwidth / 1e12:.2f} TB/s = {p.attainable / 1e12:.3g} TFLOP/s attainable; it achieved {ach}"
            f"{pct}{_hbm_only(h, k)}.")


def hierarchy_paragraph(doc: dict) -> tuple[str, str] | None:
    h = hierarchy(doc)
    if h is None or not h.kernels:
        return None
    rungs = [k for k in h.kernels if k.label not in CEILING_LABELS]
    others = [k for k in h.kernels if k.label in CEILING_LABELS]
    sentences = [_kernel_sentence(h, k) for k in rungs + others]
    return ("Which level binds each kernel", " ".join(sentences) + " " + _L1_NOTE)


def level_paragraphs(doc: dict) -> list[tuple[str, str]]:
    """A paragraph per measured part, each from this run's numbers."""
    sec = _sec(doc)
    if not sec:
        return []
    return [p for p in (_l2_paragraph(sec, doc.get("device")), _shared_paragraph(sec), _peaks_paragraph(sec)) if p]


def memory_paragraphs(doc: dict) -> list[tuple[str, str]]:
    """A paragraph per measured part and one on the binding levels, each from this run's numbers."""
    hp = hierarchy_paragraph(doc)
    return level_paragraphs(doc) + ([hp] if hp else [])
