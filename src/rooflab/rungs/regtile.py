from rooflab.rungs.record import Rung, cdiv


RUNG = Rung(
    name="regtile",
    title="register-tiled 8×8 (G12)",
    stage="stage 4 (beyond the seed)",
    source="rungs/regtile.cu",
    kernel="mm_regtile",
    block=(256, 1, 1),
    grid=lambda m, n, k: (cdiv(n, 128), cdiv(m, 128), 1),
    # per BK slice: (128 + 128) x 8 global loads for 128 x 128 x 8 FMAs
    loads_per_fma=(128 + 128) / (128 * 128),
    explain=(
        "The first step of the course's project 9.3: a 256-thread block computes a 128×128 tile of C and "
        "each thread keeps an 8×8 block of outputs in registers. Per k-step a thread reads 8 values of A "
        "and 8 of B from shared memory (as 16-byte vectors) and performs 64 FMAs with them, a quarter of a "
        "shared load per FMA instead of two; each global load now serves 128 FLOP."
    ),
    compare=("tiled32",),
    ratios=(("tiled32", "time_tiled(32) / time_register-tiled (G12)"),),
)
