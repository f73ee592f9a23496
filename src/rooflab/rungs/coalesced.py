from rooflab.rungs.record import Rung, cdiv


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
    compare=("naive",),
    ratios=(("naive", "time_naive / time_coalesced (G6)"),),
)
