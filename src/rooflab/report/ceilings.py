"""Tables for the ceilings (P3, P4, P6, P8) from a results document."""

from __future__ import annotations

from rooflab.model.arch import peak_unknown
from rooflab.model.brackets import brackets
from rooflab.model.ceilings import summarize
from rooflab.model.hierarchy import LEVEL_NAMES, profiled_at_timed_shape
from rooflab.model.ncu import KernelProfile
from rooflab.model.peaks import nominal_tensor_fma
from rooflab.report.table import Table, Value, fmt, missing, words


def bandwidth_tables(doc: dict) -> list[Table]:
    sec = doc["bandwidth"]
    s = summarize(sec)
    peak = s["peak_gbs"]
    memcpy = s["memcpy_gbs"]

    def pct(g):
        return fmt(100 * g / peak, ".1f", "%") if g and peak else None

    rows = []
    for e in sorted(s["table"], key=lambda e: (e["kernel"], e["block"], e["grid"])):
        spread = (Value(f"{e['gbs_min']:,.0f}–{e['gbs_max']:,.0f}", (e["gbs_min"], e["gbs_max"]))
                  if e["gbs_min"] else None)
        rows.append([e["kernel"], e["block"], Value(f"{e['grid']:,} ({e['grid_label']})", (e["grid"], e["grid_label"])),
                     fmt(e["gbs"], ",.0f"), spread, pct(e["gbs"]),
                     fmt(e["gbs"] / memcpy, ".3f") if e["gbs"] and memcpy else None,
                     "yes" if e["verified"] else "NO"])
    cfg = sec["config"]
    notes = [(f"{cfg['n']:,} floats per array ({cfg['bytes_per_array'] / 2**30:.2f} GiB); bytes = 2·n·4 = "
              f"{cfg['bytes_moved'] / 1e9:.2f} GB per copy; median of {cfg['reps']} timed launches per round, "
              f"{cfg['rounds']} interleaved rounds (the range column is the spread between rounds)."),
             f"HBM peak {peak:,.0f} GB/s = 2 × memory clock × bus width / 8, from this device's attributes."
             if peak else "HBM peak unknown for this device.",
             sec["method"]["l2_note"] + "."]
    sweep = Table("Copy bandwidth launch sweep (P4)", ["kernel", "block", "grid", "GB/s", "range", "% HBM peak",
                                                       "÷ memcpy", "verified"], rows, notes, key="bandwidth_sweep",
                  csv_split={"grid": ["grid", "grid sized as"],
                             "range": ["slowest round GB/s", "fastest round GB/s"]})
    best = s["best"]
    scale = sec.get("scale") or {}
    head_rows = [["cudaMemcpy device-to-device", fmt(memcpy, ",.0f"), pct(memcpy), fmt(1.0, ".3f") if memcpy else None]]
    if best:
        what, g = f"best kernel: {best['kernel']}, block {best['block']}, grid", best["grid"]
        head_rows.append([Value(f"{what} {g:,}", f"{what} {g}"),
                          fmt(best["gbs"], ",.0f"), pct(best["gbs"]), fmt(best["gbs"] / memcpy, ".3f") if memcpy else None])
    seed = next((e for e in s["table"] if e["kernel"] == "copy_scalar" and e["grid_label"] == "4 waves"
                 and e["block"] == 256), None)
    if seed:
        head_rows.append(["seed's scalar grid-stride, block 256, 4 waves", fmt(seed["gbs"], ",.0f"), pct(seed["gbs"]),
                          fmt(seed["gbs"] / memcpy, ".3f") if memcpy and seed["gbs"] else None])
    if scale.get("gbs"):
        what, gf = "y = a·x (scale_float4, AI 0.125):", scale["gflops"]
        head_rows.append([Value(f"{what} {gf:,.0f} GFLOP/s", f"{what} {gf:.0f} GFLOP/s"), fmt(scale["gbs"], ",.0f"),
                          pct(scale["gbs"]), fmt(scale["gbs"] / memcpy, ".3f") if memcpy else None])
    for key, what in (("read", "read only (float4 sum), bytes = n·4"), ("write", "write only (float4 fill), bytes = n·4")):
        d = (sec.get("directions") or {}).get(key)
        if d and d.get("gbs"):
            head_rows.append([what, fmt(d["gbs"], ",.0f"), pct(d["gbs"]), None])
    head = Table("Copy bandwidth (P3)", ["what", "GB/s", "% HBM peak", "÷ memcpy"], head_rows, key="bandwidth")
    return [head, sweep]


def flops_table(doc: dict) -> Table:
    sec = doc["flops"]
    peak = sec.get("fp32_peak_flops")
    cc = (doc.get("device") or {}).get("cc")
    unknown = peak_unknown(cc) if cc else "peak unknown"
    rows = []
    for r in sec["rows"]:
        t = r.get("timing")
        pct = fmt(r.get("pct_peak"), ".1f", "%") or (missing(unknown) if not peak and r.get("tflops") else None)
        rows.append([r["accumulators"], Value(f"{r['grid']:,} × {r['block']}", (r["grid"], r["block"])),
                     fmt(r["warps_per_scheduler"], "g"), fmt(r["iters"], ","),
                     fmt(t["median_ms"], ".3f") if t else None, fmt(r.get("tflops"), ".2f"),
                     pct, "yes" if r["verified"] else "NO"])
    notes = [f"FLOPs = threads × iters × (16 × accumulators) FMA × 2; % of the FP32 peak "
             f"{peak / 1e12:.1f} TFLOP/s (P1)." if peak
             else f"FLOPs = threads × iters × (16 × accumulators) FMA × 2; FP32 {unknown}, so no % of peak.",
             ("warps/scheduler: resident warps per SM sub-partition (4 per SM); an FMA result is ready about "
              "4 cycles after issue, so each scheduler needs ~4 independent FMAs in flight, from chains or warps.")]
    return Table("FP32 FMA peak (P6)", ["accumulators", "grid × block", "warps/scheduler", "iters", "ms",
                                        "TFLOP/s", "% peak", "verified"], rows, notes, key="flops",
                 csv_split={"grid × block": ["grid", "block"]})


def tensor_peak_table(doc: dict) -> Table | None:
    """The tensor-core roofs as measured, beside the published dense rate: the rate, and the work per
    SM per cycle at the clock the kernel ran at against the architecture's nominal figure (P2), which
    is what the published rate assumes at its implied clock."""
    rows_in = (doc.get("flops") or {}).get("tensor") or []
    if not rows_in:
        return None
    dev = doc.get("device") or {}
    spec = dev.get("tensor_peaks") or {}
    rows = []
    for r in rows_in:
        rate = spec.get(r["precision"])
        nominal = nominal_tensor_fma(tuple(dev["cc"]), r["precision"], dev.get("spec_key")) if dev.get("cc") else None
        nominal_flop = 2 * nominal[0] if nominal else None
        tflops, fpc = r.get("tflops"), r.get("flop_per_sm_cycle")
        rows.append([r["kernel"], r["unit"], r["precision"].upper(), fmt(tflops, ",.1f"),
                     fmt(rate / 1e12 if rate else None, ",.0f"),
                     fmt(100 * tflops * 1e12 / rate if tflops and rate else None, ".1f", "%"),
                     fmt(r.get("sm_mhz"), ".0f"), fmt(fpc, ",.0f"), fmt(nominal_flop, ",.0f"),
                     fmt(100 * fpc / nominal_flop if fpc and nominal_flop else None, ".1f", "%"),
                     r.get("skipped") or r.get("error") or ("yes" if r.get("verified") else "NO")])
    notes = ["Register- or shared-memory-only MMA chains (ceilings/tensor_peak.cu), no global traffic; "
             "FLOPs = blocks × iters × MMAs × FLOP per MMA; median of the timed launches.",
             "FLOP/SM/cycle at the SM clock the kernel ran at (NVML median) against the architecture's nominal "
             "dense figure: the published rate assumes that figure at a clock below the boost clock (P2's "
             "implied clock, ~1.83 GHz on Hopper), so a kernel at the boost clock can pass 100% of it."]
    return Table("Tensor-core roofs, measured (P2)",
                 ["kernel", "unit", "precision", "TFLOP/s", "published", "% of published", "SM MHz",
                  "FLOP/SM/cycle", "nominal", "% of nominal", "verified"], rows, notes, key="tensor_peaks")


def _binding(doc: dict) -> dict[str, str]:
    """The hierarchical roofline's binding level per profiled kernel (empty without level counters)."""
    from rooflab.model.hierarchy import hierarchy  # noqa: PLC0415

    h = hierarchy(doc) if doc.get("device") else None
    return {k.label: k.binding for k in h.kernels} if h else {}


def _agreement(verdict: str, binding: str | None) -> str | None:
    """Why the speed-of-light verdict and the hierarchical roofline name different limits, where they do."""
    if binding is None or binding == "unknown":
        return None
    if verdict == "compute-bound" and binding == "L1":
        return ("SM % is the busiest SM unit, and the L1/shared (LSU) pipe is one of them: 'compute-bound' here is "
                "that pipe, the L1/shared traffic the hierarchy names")
    if verdict == "compute-bound" and binding == "L2":
        return ("the speed-of-light verdict compares each unit with its own peak, the hierarchy compares attainable "
                "rates: the SM is busy, but its L2 traffic caps it below the compute roof first")
    if verdict == "memory-bound" and binding == "compute":
        return "DRAM % is high, yet no memory level's roof is below the compute roof: the DRAM is busy, not binding"
    if verdict == "compute-bound" and binding == "DRAM":
        return "HBM traffic binds by the hierarchy while SM % is higher: the SM waits on DRAM through a busy pipe"
    return None


def profile_table(doc: dict) -> Table:
    sec = doc["profile"]
    rungs = {r["kernel"]: r for r in (doc.get("gemm") or {}).get("rungs", [])}
    binding = _binding(doc)
    rows, notes = [], []
    for d in sec["kernels"]:
        p = KernelProfile.from_dict(d)
        rec = rungs.get(p.label)
        vs_model = (fmt(p.flops / rec["flops"], ".3f") if rec and rec.get("flops") and p.flops
                    and profiled_at_timed_shape(rec, sec.get("config") or {}) else None)
        b = binding.get(p.label)
        why = _agreement(p.verdict(), b)
        if why:
            notes.append(f"{p.label}: {why}.")
        if d.get("tensor_error"):
            notes.append(f"{p.label}: tensor-pipe counters not collected ({d['tensor_error']}).")
        rows.append([p.label, fmt(p.dram_pct, ".1f", "%"), fmt(p.sm_pct, ".1f", "%"), p.verdict(),
                     LEVEL_NAMES.get(b, "compute" if b == "compute" else None) if b else None,
                     fmt(p.dram_bytes / 1e9, ".3f"), fmt(p.fp32_flops / 1e9, ".2f"),
                     fmt(p.tensor_flops / 1e9, ".2f") if p.tensor_flops is not None else None, vs_model,
                     fmt(p.ai_all, ".3g"), ", ".join(p.kernels)[:60]])
    notes[:0] = [("ncu --clock-control none; DRAM% = gpu__dram_throughput, SM% = sm__throughput "
                  "(.avg.pct_of_peak_sustained_elapsed). Verdict: below 60% on both → latency-bound; else the higher "
                  "of the two names the roof (Nsight Compute's speed-of-light reading). Hierarchy: the level the "
                  "hierarchical roofline finds binding; where the two differ a note says why."),
                 ("FP32 GFLOP = fadd + fmul + 2·ffma thread instructions; tensor GFLOP = the tensor-pipe operation "
                  "counters (sm__ops_path_tensor_*, one per FLOP; HMMA/HGMMA are invisible to the FP32 counters); "
                  "÷ 2·M·N·K: all counted FLOPs over the rung's own, at the timed shape; AI = all counted FLOPs / "
                  "DRAM bytes read + written.")]
    return Table("Nsight Compute (P8)", ["kernel", "DRAM %", "SM %", "verdict", "hierarchy", "DRAM GB", "FP32 GFLOP",
                                        "tensor GFLOP", "÷ 2·M·N·K", "AI FLOP/B", "ncu kernel names"], rows, notes,
                 key="profile")


def _rate(v: float | None, unit: str) -> Value | None:
    if not v:
        return None
    return fmt(v / 1e9, ",.0f") if unit == "B/s" else fmt(v / 1e12, ",.1f")


def bracket_table(doc: dict) -> Table | None:
    """Every measured ceiling between its witness and its physical limit; a ceiling above its limit
    is shown as an error with the likely contamination, and gets no roof."""
    bs = brackets(doc)
    if not bs:
        return None
    rows, notes = [], []
    for b in bs:
        lim = b.limit.value
        if b.error:
            status = "ERROR: above the physical limit"
            notes.append(f"{b.name}: {b.error}.")
        elif b.note:
            status = "below the witness"
            notes.append(f"{b.name}: {b.note}.")
        else:
            status = "ok" if lim else "ok (no published limit)"
        rows.append([b.name, "GB/s" if b.unit == "B/s" else "TFLOP/s", _rate(b.witness, b.unit),
                     words(b.witness_what), _rate(b.ceiling, b.unit), words(b.ceiling_what),
                     _rate(lim, b.unit) or missing("no published limit"), words(b.limit.basis) if lim else None,
                     fmt(100 * b.ceiling / lim, ".1f", "%") if b.ceiling and lim else None,
                     _rate(b.roof, b.unit), status])
    notes.insert(0, ("witness ≤ ceiling ≤ physical limit. Witness: the best other path measured in this run (the vendor's "
                     "cudaMemcpy, CUB DeviceReduce::Sum, cudaMemsetAsync, or the fastest GEMM of that precision); "
                     "ceiling: rooflab's own kernel; limit: the pin rate for HBM, SMs × units × work per cycle × the "
                     "maximum SM clock for compute. Roof: the higher of witness and ceiling, none above the limit."))
    return Table("Ceilings, bracketed", ["ceiling", "unit", "witness", "witness is", "rooflab", "rooflab's kernel",
                                         "physical limit", "limit from", "% of limit", "roof", "status"],
                 rows, notes, key="brackets")
