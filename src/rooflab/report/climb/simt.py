"""The CUDA-core climb, naive to cuBLAS SGEMM: what each step changed and what the run shows of it."""

from __future__ import annotations

from rooflab.report.climb.step import Step


def naive_to_coalesced(s: Step) -> str:
    a, b = s.prev, s.this
    model = s.prev_rec["model"]
    text = (
        f"Coalesced ran {s.ratio:.1f}× faster than naive ({a['ms']:.1f} → {b['ms']:.1f} ms, "
        f"{a['gflops']:,.0f} → {b['gflops']:,.0f} GFLOP/s) doing the same {s.prev_rec['flops'] / 1e9:.1f} GFLOP "
        f"at the same modelled intensity (about {model['flop_per_load']:.0f} FLOP per global load, "
        f"{model['ai_flop_per_byte']:.2f} FLOP/byte). Only the thread-to-data mapping changed: with threadIdx.x on "
        f"the row, the 32 threads of a warp read A from 32 different rows and write C 32 rows apart, so each "
        f"32-byte sector carries one useful float; with threadIdx.x on the column, B and C are read and written "
        f"as 128 contiguous bytes per warp and A is one broadcast address, so every sector is fully used. "
        f"Coalescing is the entry ticket, not an optimisation: at {b['pct_peak']:.1f}% of the FP32 peak the "
        f"coalesced kernel is still limited by its loads: every FMA still issues two global load instructions."
    )
    p = s.ncu()
    if p:
        text += (f" Nsight Compute puts that limit on chip, not in DRAM: DRAM {p['dram_pct']:.0f}% busy, SM "
                 f"{p['sm_pct']:.0f}% (the load/store path through L1); the caches turned "
                 f"{s.this_rec['model']['bytes'] / 1e9:,.0f} GB of modelled loads into {p['dram_gb']:.1f} GB of "
                 f"DRAM traffic.")
    return text


def coalesced_to_tiled(s: Step) -> str:
    b, c = s.prev, s.this
    ai_b, ai_c = s.prev_rec["model"], s.this_rec["model"]
    tile = s.this_rec.get("kernel", "tiled32").removeprefix("tiled")
    text = (
        f"Tiling with TILE={tile} ran {s.ratio:.2f}× faster than coalesced ({b['ms']:.1f} → {c['ms']:.1f} ms, "
        f"{c['pct_peak']:.1f}% of peak). Staging tiles in shared memory raised the modelled intensity from about "
        f"{ai_b['flop_per_load']:.0f} to about {ai_c['flop_per_load']:.0f} FLOP per global load "
        f"({ai_b['ai_flop_per_byte']:.2f} → {ai_c['ai_flop_per_byte']:.1f} FLOP/byte): each element is fetched "
        f"once per tile and reused {tile} times, so global traffic falls {tile}-fold."
    )
    if s.ratio < 8:
        text += (
            " The time fell far less than that because the coalesced kernel's repeated loads were already "
            "served mostly by the L1 and L2 caches, not DRAM, and because the bottleneck moved: the tiled "
            "kernel still computes one output per thread, so each FMA now needs two shared-memory loads, and "
            "every tile costs two barriers that stall all the warps of the block."
        )
        p = s.ncu()
        if p:
            text += (f" Nsight Compute: the tiled kernel moved {p['dram_gb']:.1f} GB from DRAM (DRAM "
                     f"{p['dram_pct']:.0f}%, SM {p['sm_pct']:.0f}%): it is limited by the SM, not by memory "
                     f"bandwidth.")
    return text


def tile16_vs_32(s: Step) -> str:
    t16, t32 = s.prev["ms"], s.this["ms"]
    faster = "TILE=32" if t32 < t16 else "TILE=16"
    return (
        f"TILE=16 took {t16:.2f} ms and TILE=32 {t32:.2f} ms: {faster} was {max(t16, t32) / min(t16, t32):.2f}× "
        f"faster. TILE=32 halves global loads per FMA (32 instead of 16 FLOP per load) but uses 1024-thread "
        f"blocks, so at most two blocks fit on an SM and each barrier waits for 32 warps; TILE=16's 256-thread "
        f"blocks synchronise 8 warps at a time but fetch twice the global data. Both still need two "
        f"shared-memory loads per FMA, which is why neither gets far from the other."
    )


def tiled_to_regtile(s: Step) -> str:
    c, r = s.prev, s.this
    model = s.this_rec["model"]
    return (
        f"Register tiling ran {s.ratio:.1f}× faster than the TILE=32 kernel ({c['ms']:.2f} → "
        f"{r['ms']:.2f} ms, {r['pct_peak']:.1f}% of peak). The seed's tiled kernel needs two shared-memory loads "
        f"for every FMA, so shared-memory bandwidth, not the FMA units, sets its pace. Giving each thread an "
        f"8×8 block of outputs turns 16 shared loads into 64 FMAs (a quarter load per FMA), and the 128×128 "
        f"block tile lifts the modelled intensity to {model['flop_per_load']:.0f} FLOP per "
        f"global load ({model['ai_flop_per_byte']:.0f} FLOP/byte)."
        + s.both_evidence()
    )


def regtile_to_vec(s: Step) -> str:
    r, v = s.prev, s.this
    return (
        f"Vectorising the loads ran {s.ratio:.2f}× the register-tiled kernel ({r['ms']:.2f} → {v['ms']:.2f} ms, "
        f"{v['pct_peak']:.1f}% of peak). The tiling is the same; each thread now fetches its slice of A and B "
        f"as one 16-byte load each instead of eight 4-byte ones, and the +4 padding of the transposed A tile "
        f"removes the 2-way bank conflict of its stores. Fewer load instructions free issue slots for FMAs, but "
        f"the two barriers per slice and the exposed global-load latency, which bound the register-tiled "
        f"kernel, are still there."
        + s.both_evidence()
    )


def vec_to_warptile(s: Step) -> str:
    v, w = s.prev, s.this
    return (
        f"Warp tiling ran {s.ratio:.2f}× the vectorised kernel ({v['ms']:.2f} → {w['ms']:.2f} ms, "
        f"{w['pct_peak']:.1f}% of peak) with the same loads and barriers: only which outputs a lane owns "
        f"changed. Each warp now covers a 32×64 tile and each lane four 4×4 sub-tiles spread across it, so a "
        f"warp's 16-byte shared reads touch 4 (A) or 8 (B) consecutive float4s, one broadcast wavefront "
        f"instead of the vectorised kernel's four for B."
        + s.both_evidence()
    )


def warptile_to_pipelined(s: Step) -> str:
    w, p = s.prev, s.this
    return (
        f"Pipelining ran {s.ratio:.2f}× the warp-tiled kernel ({w['ms']:.2f} → {p['ms']:.2f} ms, "
        f"{p['pct_peak']:.1f}% of peak, configuration {s.this_rec.get('tuning', {}).get('config', '?')}). The "
        f"next slice's loads are issued before the current slice's FMAs (into registers, or straight to shared "
        f"memory with cp.async), so global latency hides behind arithmetic and one barrier per slice replaces two."
        + s.both_evidence()
    )


def pipelined_to_cublas(s: Step) -> str:
    p, c = s.prev, s.this
    gap = p["ms"] / c["ms"]
    verdict = "matches" if gap <= 1.0 else f"is {gap:.2f}× slower than"
    ours, theirs = s.ncu("prev") or {}, s.ncu() or {}
    # the instruction counts and issue rates only where this run profiled both kernels
    count = issue = ""
    if "instructions" in ours and "instructions" in theirs:
        count = (f", and in this run's profile this rung executes {ours['instructions'] / 1e9:.2f} G warp "
                 f"instructions against cuBLAS's {theirs['instructions'] / 1e9:.2f} G")
    if "issue_pct" in ours and "issue_pct" in theirs:
        issue = (f" (in this run's Nsight Compute profile {ours['issue_pct']:.0f}% of cycles issue an instruction "
                 f"against cuBLAS's {theirs['issue_pct']:.0f}%)")
    return (
        f"The pipelined rung {verdict} cuBLAS SGEMM ({p['ms']:.3f} vs {c['ms']:.3f} ms; {p['pct_peak']:.1f}% vs "
        f"{c['pct_peak']:.1f}% of the FP32 peak). Both are FFMA loops of the same shape (cuBLAS's SIMT kernel "
        f"also gives each thread an 8×16 or 16×8 tile and refills a 3-stage ring){count}: what separates "
        f"them is how many cycles issue an instruction at all{issue}. The rest are stalls that hand-scheduled "
        f"SASS avoids and CUDA C does not control: register-port conflicts at dispatch, fixed waits the compiler "
        f"writes into the instruction stream, and instruction-cache misses in the long unrolled loop."
        + s.both_evidence()
    )


def tiled_to_cublas(s: Step) -> str:
    c, d = s.prev, s.this
    err = s.norm()
    return (
        f"cuBLAS SGEMM ran {s.ratio:.1f}× faster than the TILE=32 kernel ({c['ms']:.2f} → {d['ms']:.3f} ms) and "
        f"reached {d['pct_peak']:.1f}% of the FP32 CUDA-core peak ({d['gflops']:,.0f} GFLOP/s)"
        + (f", {d['speedup']:.0f}× the naive kernel" if d.get("speedup") else "")
        + ". The gap is the optimisations the seed's kernels lack: register "
        f"tiling (each thread keeps a block of outputs, e.g. 8×8, in registers, so 16 shared loads feed 64 FMAs "
        f"instead of 2 per FMA), 128-bit vector loads, and multistage copies that fetch the next tile while the "
        f"current one is computed. Its compulsory traffic gives {s.this_rec['model']['ai_flop_per_byte']:.0f} "
        f"FLOP/byte, far right of the ridge: it is compute-bound."
        + (f" Its normwise error {err:.1e} shows it stayed in FP32 (TF32 tensor cores would give about 1e-4)."
           if err is not None else "")
    )


# (rung, the earlier rung it is compared with) -> (heading, paragraph)
PARAGRAPHS = {
    ("coalesced", "naive"): ("naive → coalesced", naive_to_coalesced),
    ("tiled32", "coalesced"): ("coalesced → tiled", coalesced_to_tiled),
    ("tiled32", "tiled16"): ("TILE=16 vs TILE=32", tile16_vs_32),
    ("regtile", "tiled32"): ("tiled → register-tiled (G12)", tiled_to_regtile),
    ("vec", "regtile"): ("register-tiled → vectorised", regtile_to_vec),
    ("warptile", "vec"): ("vectorised → warp-tiled", vec_to_warptile),
    ("pipelined", "warptile"): ("warp-tiled → pipelined", warptile_to_pipelined),
    ("cublas", "pipelined"): ("pipelined → cuBLAS: the remaining gap", pipelined_to_cublas),
    ("cublas", "tiled32"): ("tiled → cuBLAS", tiled_to_cublas),
}
