"""The pipelined, autotuned SIMT rung (G12's last step): warp tiling plus double buffering
(register prefetch, STAGES=2) or a cp.async ring (STAGES 2-4, sm_80+), over the tile shapes
`rooflab tune` searches. mm_pipe<BM, BN, BK, WM, WN, TM, TN, STAGES, V, GM> in pipelined.cu."""

from rooflab.rungs.record import Rung, Variant, cdiv

# (BM, BN, BK, WM, WN, TM, TN, STAGES[, V, GM]): instances pipelined.cu compiles; the first is the
# default until `rooflab tune` has searched this GPU (the first that fits the device's shared memory).
# V = 0: the first pipeline (static shared memory; STAGES 2 = register prefetch); V = 1: the cp.async
# ring with unchecked interior copies and the barrier before the last k-step; V = 2: the V = 0 schedule
# with its ring in dynamic shared memory (so BK = 16 and 4 stages fit). GM > 1 groups the block order
# in bands of GM block-rows.
CONFIGS = (
    (128, 256, 16, 64, 64, 8, 16, 4, 2, 8),  # the H200's winner: the default
    (128, 256, 16, 64, 64, 8, 16, 3, 2, 8),
    (128, 256, 16, 64, 64, 8, 16, 4, 2, 2),
    (128, 256, 8, 64, 64, 8, 16, 3),  # the winner before; the default where 97 KB of shared memory do not fit
    (128, 256, 16, 64, 64, 8, 16, 4, 1, 8),
    (128, 128, 16, 64, 64, 8, 16, 3, 2, 8),
    (128, 256, 8, 64, 64, 8, 16, 2),
    (128, 128, 8, 64, 64, 8, 16, 3),
    (128, 128, 8, 64, 64, 8, 16, 2),
)


def threads(c) -> int:
    bm, bn, _, wm, wn = c[:5]
    return (bm // wm) * (bn // wn) * 32


def dynamic_smem(c) -> int:
    """Dynamic shared memory an instance needs at launch, bytes: PipeV1<...>::SMEM_BYTES in
    pipelined.cu for V = 1 (STAGES x BK x (BM + 32/TPK + BN) floats, TPK = clamp(2 NT / BM, 1, BK)),
    PipeV0<...>::SMEM_BYTES for V = 2, 3, 4 (STAGES x BK x (BM + 4 + BN) floats); 0 for V = 0, whose
    shared memory is static."""
    bm, bn, bk, _, _, _, _, stages, v = (*c, 0, 1)[:9]
    if not v:
        return 0
    if v >= 2:
        return stages * bk * (bm + 4 + bn) * 4
    tpk = max(1, min(2 * threads(c) // bm, bk))
    return stages * bk * (bm + 32 // tpk + bn) * 4


def kernel_name(c) -> str:
    bm, bn, bk, wm, wn, tm, tn, stages, v, gm = (*c, 0, 1)[:10]
    tail = f", {v}, {gm}" if (v, gm) != (0, 1) else ""
    return f"mm_pipe<{bm}, {bn}, {bk}, {wm}, {wn}, {tm}, {tn}, {stages}{tail}>"


def _variant(c) -> Variant:
    bm, bn, bk, wm, wn, tm, tn, stages, v, gm = (*c, 0, 1)[:10]
    label = f"{bm}x{bn}x{bk} warp {wm}x{wn} thread {tm}x{tn} stages {stages}"
    if v:
        label += f" v{v}"
    if gm > 1:
        label += f" group {gm}"
    return Variant(label=label, kernel=kernel_name(c), block=(threads(c), 1, 1),
                   grid=lambda m, n, k, bm=bm, bn=bn: (cdiv(n, bn), cdiv(m, bm), 1), shared_mem=dynamic_smem(c))


VARIANTS = tuple(_variant(c) for c in CONFIGS)


RUNG = Rung(
    name="pipelined",
    title="pipelined, autotuned (G12)",
    stage="stage 7 (beyond the seed)",
    source="rungs/pipelined.cu",
    kernel=VARIANTS[0].kernel,
    block=VARIANTS[0].block,
    grid=VARIANTS[0].grid,
    shared_mem=VARIANTS[0].shared_mem,
    loads_per_fma=(CONFIGS[0][0] + CONFIGS[0][1]) / (CONFIGS[0][0] * CONFIGS[0][1]),
    variants=VARIANTS,
    explain=(
        "Warp tiling plus software pipelining: while the FMAs of slice k run, slice k+1 is already on its way, "
        "parked in registers (two shared buffers) or copied straight into a shared-memory ring with cp.async; "
        "one barrier per slice, and the shared reads of the next k-step are issued before the FMAs of the "
        "current one. Slices of 16 k-steps in a 4-stage ring (dynamic shared memory) halve the barriers per "
        "FFMA. The tile shape is searched per GPU by `rooflab tune`."
    ),
    compare=("warptile",),
    ratios=(("warptile", "time_warp-tiled / time_pipelined"),),
)
