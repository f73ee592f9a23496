from rooflab.rungs.record import Rung, cdiv

RUNG = Rung(
    name="naive",
    title="naive (x→row)",
    stage="stage 0",
    source="rungs/naive.cu",
    kernel="mm_naive",
    block=(16, 16, 1),
    # threadIdx.x walks rows, so grid.x covers M
    grid=lambda m, n, k: (cdiv(m, 16), cdiv(n, 16), 1),
    loads_per_fma=2.0,
    explain=(
        "One thread per output element, threadIdx.x mapped to the row. The 32 threads of a warp "
        "own 32 rows of one column: each load of A and each store of C strides by a whole row, "
        "so every 32-byte memory sector delivers 4 useful bytes, and every FMA needs two global "
        "loads (about 1 FLOP per load)."
    ),
)
