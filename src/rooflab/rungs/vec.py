from rooflab.rungs.record import Rung, cdiv


RUNG = Rung(
    name="vec",
    title="vectorised, conflict-free stores (G12)",
    stage="stage 5 (beyond the seed)",
    source="rungs/vec.cu",
    kernel="mm_vec",
    block=(256, 1, 1),
    grid=lambda m, n, k: (cdiv(n, 128), cdiv(m, 128), 1),
    loads_per_fma=(128 + 128) / (128 * 128),
    explain=(
        "The register-tiled kernel with 16-byte global loads (LDG.E.128) for A and B and float4 stores of C; "
        "A is stored transposed in a padded shared tile (As[8][132]) so the transposing stores are "
        "conflict-free. 128×128 block tile, 8×8 outputs per thread, two barriers per 8-wide slice."
    ),
    compare=("regtile",),
    ratios=(("regtile", "time_register-tiled / time_vectorised"),),
)
