from rooflab.rungs.record import Rung, cdiv


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
    compare=("vec",),
    ratios=(("vec", "time_vectorised / time_warp-tiled"),),
)
