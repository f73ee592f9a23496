from rooflab.rungs.record import Rung, Step, cdiv


def _from_coalesced(s: Step) -> str:
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


def _tile16_vs_32(s: Step) -> str:
    t16, t32 = s.prev["ms"], s.this["ms"]
    faster = "TILE=32" if t32 < t16 else "TILE=16"
    return (
        f"TILE=16 took {t16:.2f} ms and TILE=32 {t32:.2f} ms: {faster} was {max(t16, t32) / min(t16, t32):.2f}× "
        f"faster. TILE=32 halves global loads per FMA (32 instead of 16 FLOP per load) but uses 1024-thread "
        f"blocks, so at most two blocks fit on an SM and each barrier waits for 32 warps; TILE=16's 256-thread "
        f"blocks synchronise 8 warps at a time but fetch twice the global data. Both still need two "
        f"shared-memory loads per FMA, which is why neither gets far from the other."
    )


def tiled(tile: int, **extra) -> Rung:
    return Rung(
        name=f"tiled{tile}",
        title=f"tiled (TILE={tile})",
        stage="stage 2",
        source="rungs/tiled.cu",
        kernel=f"mm_tiled<{tile}>",
        block=(tile, tile, 1),
        grid=lambda m, n, k: (cdiv(n, tile), cdiv(m, tile), 1),
        loads_per_fma=2.0 / tile,
        explain=(
            f"A {tile}×{tile} block stages a tile of A and a tile of B in shared memory, waits at a "
            f"barrier, and computes {tile} FMAs per thread from shared memory before a second barrier "
            f"lets the next tile overwrite it. Each element loaded from global memory serves {tile} "
            f"FMAs: about {tile} FLOP per global load instead of 1."
        ),
        **extra,
    )


TILED16 = tiled(16)
TILED32 = tiled(
    32,
    paragraphs=(("coalesced", "coalesced → tiled", _from_coalesced),
                ("tiled16", "TILE=16 vs TILE=32", _tile16_vs_32)),
    ratios=(("coalesced", "time_coalesced / time_tiled(TILE=32)"),
            ("tiled16", "time_tiled(16) / time_tiled(32) (G7)")),
)
