"""P7: why the copy and FMA kernels stay below their peaks, with this run's numbers."""

from __future__ import annotations

from rooflab.model.arch import peak_unknown
from rooflab.model.brackets import best_read
from rooflab.model.ceilings import summarize


def _directions_text(sec: dict, copy: float, peak: float, memcpy: float) -> str:
    """Read vs write vs copy against the pin rate, each beside its vendor witness, from this run."""
    dirs = sec.get("directions") or {}

    def gbs(key):
        r = dirs.get(key) or {}
        return r["gbs"] if r.get("verified") and r.get("gbs") else None

    found = best_read(dirs)
    rd, rd_what = (found[0] / 1e9, found[1]) if found else (None, "")
    wr, cub, mset = gbs("write"), gbs("read_cub"), gbs("write_memset")
    if not rd or not wr:
        return ""
    text = (f" Against the {peak:,.0f} GB/s pin rate, this run read at {rd:,.0f} GB/s ({100 * rd / peak:.1f}%, "
            f"{rd_what}), copied at {copy:,.0f} GB/s ({100 * copy / peak:.1f}%, cudaMemcpy {memcpy:,.0f}) and wrote "
            f"at {wr:,.0f} GB/s ({100 * wr / peak:.1f}%).")
    plain = gbs("read")
    if plain and rd > 1.005 * plain:
        text += (f" Keeping more 16-byte loads in flight per thread lifted the read from {plain:,.0f} GB/s (one load "
                 f"per thread per step) to {rd:,.0f}: Little's law, not the DRAM, held the plain stream back.")
    if cub:
        rel = "above" if cub > rd else "at or below"
        text += (f" CUB's DeviceReduce::Sum, the vendor's read path, reached {cub:,.0f} GB/s "
                 f"({100 * cub / peak:.1f}%), {rel} rooflab's read ceiling"
                 + (": the read ceiling is rooflab's, not the device's." if cub > 1.01 * rd else "."))
    if rd > 1.01 * copy:
        text += (f" Reading alone beats the copy by {100 * (rd / copy - 1):.1f}%: the copy pays for turning the bus "
                 "around between reads and writes.")
    else:
        text += " Reading alone is no faster than the copy: bus turnaround is not what holds the copy back."
    if wr < 0.97 * rd:
        text += (f" Writes cost more: a pure write stream reached {100 * wr / rd:.0f}% of the read rate")
        if mset:
            text += (f", and cudaMemsetAsync {mset:,.0f} GB/s ({100 * mset / peak:.1f}%), so the vendor's write "
                     f"path {'is no faster' if mset <= 1.02 * wr else 'is faster'}")
        text += (". This run measures the gap, not its cause; likely parts are DRAM write timing (write recovery "
                 "before a row can close, write-to-read turnaround) and the L2 evicting dirty lines to HBM in its "
                 "own order rather than as one stream. In a copy the writes are half the traffic, "
                 f"{copy / 2:,.0f} GB/s, well below the pure write rate, so writes alone do not set the copy's pace.")
    return text


def bandwidth_paragraphs(doc: dict) -> list[tuple[str, str]]:
    sec = doc.get("bandwidth")
    if not sec:
        return []
    s = summarize(sec)
    best, peak, memcpy = s["best"], s["peak_gbs"], s["memcpy_gbs"]
    if not best or not peak or not memcpy:
        return []
    table = s["table"]
    scalar = [e for e in table if e["kernel"] == "copy_scalar" and e["gbs"]]
    vec = [e for e in table if e["kernel"] == "copy_float4" and e["gbs"]]
    span = ""
    if table:
        vals = [e["gbs"] for e in table if e["gbs"]]
        span = (f"Across the {len(vals)} launch configurations bandwidth ranged from {min(vals):,.0f} to "
                f"{max(vals):,.0f} GB/s, ")
    if scalar and vec:
        span += (f"the best scalar loop reached {max(e['gbs'] for e in scalar):,.0f} GB/s and the best float4 loop "
                 f"{max(e['gbs'] for e in vec):,.0f} GB/s: 16-byte accesses need a quarter of the load and store "
                 f"instructions, and more bytes in flight per thread hide DRAM latency with fewer warps. "
                 f"By Little's law the GPU must keep bandwidth × latency in flight (≈{peak * 1e9 * 600e-9 / 1e6:.1f} MB "
                 f"at ~600 ns): a warp's scalar load has 128 bytes in flight, a float4 load 512, so float4 gets there with a "
                 f"quarter of the warps and instructions.")
    span += _directions_text(sec, best["gbs"], peak, memcpy)
    text = (
        f"The best copy ({best['kernel']}, block {best['block']}, grid {best['grid']:,}) moved {best['gbs']:,.0f} GB/s, "
        f"{100 * best['gbs'] / peak:.1f}% of the {peak:,.0f} GB/s HBM peak and "
        f"{best['gbs'] / memcpy:.3f}× cudaMemcpy ({memcpy:,.0f} GB/s). The copy is memory-bound: it performs no "
        f"arithmetic, so its compute roof is irrelevant and its SM throughput stays low; only the memory roof can "
        f"stop it. It cannot reach 100% because the theoretical peak assumes the DRAM never pauses: HBM must "
        f"refresh every row periodically, switching between reads and writes costs bus turnaround cycles, "
        f"opening a new DRAM row (a row switch) costs activate/precharge time, and the kernel's start (ramping up "
        f"until every SM has loads in flight) and end (the last partial wave) run below full speed. {span}"
    )
    return [("Why the copy stays below the HBM peak (P7)", text)]


def flops_paragraphs(doc: dict) -> list[tuple[str, str]]:
    sec = doc.get("flops")
    if not sec:
        return []
    rows = [r for r in sec["rows"] if r.get("tflops")]
    if not rows:
        return []
    best = max(rows, key=lambda r: r["tflops"])
    cc = (doc.get("device") or {}).get("cc")
    unknown = peak_unknown(cc) if cc else "peak unknown"

    def pct(r: dict) -> str:  # "97.7%", or the rate where the peak (and so the percentage) is unknown
        return f"{r['pct_peak']:.1f}%" if r.get("pct_peak") is not None else f"{r['tflops']:.2f} TFLOP/s"

    one_low = [r for r in rows if r["accumulators"] == 1 and r["warps_per_scheduler"] <= 1]
    eight_low = [r for r in rows if r["accumulators"] == 8 and r["warps_per_scheduler"] <= 1]
    clock = ""
    tel = (best.get("timing") or {}).get("telemetry")
    dev = doc.get("device") or {}
    if tel and dev.get("sm_clock_max_mhz"):
        med = tel["sm_mhz"]["median"]
        clock = (f" During that run the SM clock was {med:.0f} MHz (median; the peak assumes "
                 f"{dev['sm_clock_max_mhz']:.0f} MHz){', and NVML reported throttling: ' + ', '.join(tel['reasons']) if tel.get('throttled') else ''}.")
    text = (
        f"With {best['accumulators']} independent accumulators and {best['warps_per_scheduler']:g} warps per scheduler "
        f"the FMA kernel reached {best['tflops']:.2f} TFLOP/s, "
        + (f"{best['pct_peak']:.1f}% of the FP32 peak" if best.get("pct_peak") is not None
           else f"a floor under the FP32 peak ({unknown})") + f".{clock} "
    )
    if one_low and eight_low:
        a, b = one_low[0], eight_low[0]
        text += (
            f"At one warp per scheduler a single dependent chain reached only {pct(a)} while 8 chains "
            f"reached {pct(b)}: each FMA must wait for the previous result (about 4 cycles), so without "
            f"independent work (ILP) or other warps (TLP) the pipe idles. "
        )
    text += (
        "The kernel is compute-bound: it touches memory only to store one float per thread, so DRAM throughput "
        "is near zero. What keeps it under 100%: the loop counter and branch issue between FMAs, the launch "
        "ramp-up and the last partial wave, and any clock below the maximum. In real kernels the other "
        "two suspects bite: register pressure (more accumulators or tiles per thread use more registers, "
        "which lowers occupancy or spills to local memory) and barriers (__syncthreads stalls every warp of a "
        "block until the slowest arrives, as in the tiled GEMM's two barriers per tile); memory bandwidth caps "
        "every kernel whose intensity is left of the ridge."
    )
    return [("Why the FMA kernel stays below the FP32 peak (P7)", text)]
