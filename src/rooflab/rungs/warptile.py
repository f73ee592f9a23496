from rooflab.rungs.record import Rung, Step, cdiv


def _from_vec(s: Step) -> str:
    v, w = s.prev, s.this
    return (
        f"Warp tiling ran {s.ratio:.2f}× the vectorised kernel ({v['ms']:.2f} → {w['ms']:.2f} ms, "
        f"{w['pct_peak']:.1f}% of peak) with the same loads and barriers: only which outputs a lane owns "
        f"changed. Each warp now covers a 32×64 tile and each lane four 4×4 sub-tiles spread across it, so a "
        f"warp's 16-byte shared reads touch 4 (A) or 8 (B) consecutive float4s, one broadcast wavefront "
        f"instead of the vectorised kernel's four for B."
        + s.evidence("prev") + s.evidence()
    )


RUNG = Rung(
    name="warptile",
    title="warp-tiled (G12)",
    stage="stage 6 (beyond the seed)",
    source="rungs/warptile.cu",
    kernel="mm_warptile",
    block=(256, 1, 1),
    grid=lambda m, n, k: (cdiv(n, 128), cdiv(m, 128), 1),
    loads_per_fma=(128 + 128) / (128 * 128),
    explain=(
        "Block tile → warp tile → thread tile: 8 warps each own a 32×64 piece of the 128×128 block tile, and "
        "each lane holds 2×2 sub-tiles of 4×4 placed 16 rows and 32 columns apart, so every shared-memory read "
        "of a warp is a broadcast-friendly run of float4s and C is written in 128-byte rows."
    ),
    paragraphs=(("vec", "vectorised → warp-tiled", _from_vec),),
    ratios=(("vec", "time_vectorised / time_warp-tiled"),),
)
