from rooflab.rungs.record import Rung, cdiv


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
    compare=("coalesced", "tiled16"),
    ratios=(("coalesced", "time_coalesced / time_tiled(TILE=32)"),
            ("tiled16", "time_tiled(16) / time_tiled(32) (G7)")),
)
