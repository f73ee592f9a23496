from rooflab.rungs.record import Rung, Step, cdiv


def _from_naive(s: Step) -> str:
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


RUNG = Rung(
    name="coalesced",
    title="coalesced (x→col)",
    stage="stage 1",
    source="rungs/coalesced.cu",
    kernel="mm_coalesced",
    block=(16, 16, 1),
    grid=lambda m, n, k: (cdiv(n, 16), cdiv(m, 16), 1),
    loads_per_fma=2.0,
    explain=(
        "The same arithmetic with threadIdx.x mapped to the column: for each k a warp reads one "
        "broadcast element of A and 32 contiguous elements of B, and writes 32 contiguous "
        "elements of C. Every sector fetched is fully used; the kernel still issues two global "
        "loads per FMA (about 1 FLOP per load), so it stays bound by the memory system."
    ),
    paragraphs=(("naive", "naive → coalesced", _from_naive),),
    ratios=(("naive", "time_naive / time_coalesced (G6)"),),
)
