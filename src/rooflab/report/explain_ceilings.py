"""P7: why the copy and FMA kernels stay below their peaks, with this run's numbers."""

from __future__ import annotations

from rooflab.model.arch import peak_unknown
from rooflab.model.ceilings import summarize


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
    dirs = sec.get("directions") or {}
    rd, wr = (dirs.get("read") or {}).get("gbs"), (dirs.get("write") or {}).get("gbs")
    if rd and wr:
        g = best["gbs"]
        span += f" Each direction alone, on the same arrays: reading only {rd:,.0f} GB/s ({100 * rd / peak:.1f}%), "
        span += f"writing only {wr:,.0f} GB/s ({100 * wr / peak:.1f}%). "
        if rd <= 1.01 * g:
            span += (f"Reading alone is no faster than the copy ({g:,.0f} GB/s), so switching between reads and writes "
                     f"is not what holds the copy back: about {100 * rd / peak:.0f}% is what this memory delivers to a "
                     f"streaming pattern, the rest going to refresh, row switches and the launch's ramp-up and tail.")
        else:
            span += (f"Reading alone beats the copy ({g:,.0f} GB/s): turning the bus around between reads and writes "
                     f"costs the copy part of the gap.")
        if wr < 0.95 * g:
            span += (f" Writing alone is slower still, yet the copy's writes (half its traffic, {g / 2:,.0f} GB/s) stay "
                     f"well below that rate, so the write path is not the copy's limit either.")
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
