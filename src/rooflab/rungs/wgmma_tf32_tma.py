"""The TF32 and 3xTF32 wgmma rungs fed by TMA (rungs/wgmma_tf32_tma.cu, sm_90a): the BF16 climb's
persistent, warp-specialised body with its TMA-store epilogue (include/tma_persistent.cuh), on the
K-major operands of the TF32 pre-pass (include/stage_tf32.cuh, timed with the GEMM: staging schemes
"tma_tf32t": B transposed only, both operands truncated by the tensor core; and "tma_3xtf32"), and
the TF32 and 3xTF32 rungs that need no pre-pass, computing C^T = B^T A^T (staging "tma_f32_store").
Their climb paragraphs are in rooflab/report/climb/tma.py."""

from rooflab.rungs.record import Rung, Variant, persistent_grid, persistent_smem_bytes, spread_store

_COMMON = dict(stage="tensor cores", source="rungs/wgmma_tf32_tma.cu", requires_cc=(9, 0), exact_cc=True,
               options=("-arch=sm_90a",))

_TF32_VARIANTS = (
    Variant("128x256x32 persistent, producer + 2 consumers stages 4, TMA-store epilogue", "mm_wgmma_tf32_tma",
            (384, 1, 1), persistent_grid(1), persistent_smem_bytes(4)),
    Variant("2x(128x256x32) clusters, B multicast, persistent stages 4, TMA-store epilogue",
            "mm_wgmma_tf32_tma_cluster", (384, 1, 1), persistent_grid(2), persistent_smem_bytes(4)),
    Variant("128x256x32 persistent stages 4, C stored from registers", "mm_wgmma_tf32_tma_direct", (384, 1, 1),
            persistent_grid(1), persistent_smem_bytes(4, tma_store=False)),
    Variant("128x256x32 persistent stages 4, A and B^T one TMA box each a stage, TMA-store epilogue",
            "mm_wgmma_tf32_tma_ab1", (384, 1, 1), persistent_grid(1), persistent_smem_bytes(4),
            staging="tma_tf32t_a128_b256"),
)
_F32 = "tma_f32_store"  # A and B as they lie, in a box a 128-byte chunk (rooflab.cuda.tma's "tma_f32")
_SWAP_VARIANTS = (
    # a stage's operands in one TMA issue each first: 3.8% / 3.7% faster than in eight at 4096 / 8192 by
    # `rooflab tune --rounds 3` (H100, 2026-12-07; NOTES.md, session 14)
    Variant("C^T 128x256x32 persistent stages 4, A and B one TMA box each a stage (B in 32-column chunks), "
            "TMA-store epilogue", "mm_wgmma_tf32_swap_ab1", (384, 1, 1), persistent_grid(1, swap_ab=True),
            persistent_smem_bytes(4), staging="tma_f32_ab256_store"),
    Variant("C^T 128x256x32 persistent, B^T from registers, stages 4, TMA-store epilogue", "mm_wgmma_tf32_swap",
            (384, 1, 1), persistent_grid(1, swap_ab=True), persistent_smem_bytes(4), staging=_F32),
    Variant("2x(C^T 128x256x32) clusters, A multicast, stages 4, TMA-store epilogue", "mm_wgmma_tf32_swap_cluster",
            (384, 1, 1), persistent_grid(2, swap_ab=True), persistent_smem_bytes(4), staging=_F32),
    Variant("C^T 128x256x32 persistent, B^T from registers, stages 4, C stored from registers",
            "mm_wgmma_tf32_swap_direct", (384, 1, 1), persistent_grid(1, swap_ab=True),
            persistent_smem_bytes(4, tma_store=False), staging=_F32),
    Variant("C^T 128x256x32 persistent stages 4, A one TMA box a stage, TMA-store epilogue", "mm_wgmma_tf32_swap_a1",
            (384, 1, 1), persistent_grid(1, swap_ab=True), persistent_smem_bytes(4), staging="tma_f32_a256_store"),
)
_X3_SMEM = persistent_smem_bytes(3, parts=2, bn=128)
_X3_VARIANTS = (
    # flushing every k-tile first: its slot goes back as soon as its own wait retires it (10.01 ms at 8192 on
    # the H200 against 10.41 flushing every 2, `rooflab tune`, 2026-12-02)
    Variant("128x128x32 persistent, producer + 2 consumers stages 3 flush 1, TMA-store epilogue",
            "mm_wgmma_3xtf32_tma_f1", (384, 1, 1), persistent_grid(1, bn=128), _X3_SMEM),
    Variant("128x128x32 persistent stages 3 flush 2, TMA-store epilogue", "mm_wgmma_3xtf32_tma", (384, 1, 1),
            persistent_grid(1, bn=128), _X3_SMEM),
    Variant("128x128x32 persistent stages 3 flush 4, TMA-store epilogue", "mm_wgmma_3xtf32_tma_f4", (384, 1, 1),
            persistent_grid(1, bn=128), _X3_SMEM),
    Variant("128x128x32 persistent stages 3 flush 2, TMA-store epilogue under the next tile's first MMAs",
            "mm_wgmma_3xtf32_tma_defer", (384, 1, 1), persistent_grid(1, bn=128), _X3_SMEM),
    # the sums of flush 1 and flush 2 (include/overlap.cuh: two partials, each added under the next group's
    # MMAs; flush 2's tail short of 8 k-tiles in groups of 1)
    Variant("128x128x32 persistent stages 3 flush 1 overlapped (2 partials), TMA-store epilogue",
            "mm_wgmma_3xtf32_tma_overlap", (384, 1, 1), persistent_grid(1, bn=128), _X3_SMEM),
    Variant("128x128x32 persistent stages 3 flush 2 overlapped (2 partials), TMA-store epilogue",
            "mm_wgmma_3xtf32_tma_overlap2", (384, 1, 1), persistent_grid(1, bn=128), _X3_SMEM),
    Variant("128x128x32 persistent stages 3 flush 1, C stored from registers", "mm_wgmma_3xtf32_tma_f1_direct",
            (384, 1, 1), persistent_grid(1, bn=128), persistent_smem_bytes(3, parts=2, bn=128, tma_store=False)),
    Variant(f"128x128x32 persistent stages 3 flush 1, {spread_store(8)}", "mm_wgmma_3xtf32_tma_f1_spread",
            (384, 1, 1), persistent_grid(1, bn=128), persistent_smem_bytes(3, parts=2, bn=128, tma_store=False)),
)
_X3_SWAP_SMEM = persistent_smem_bytes(4, bn=128, split_a=True)
_X3_SWAP_GRID = persistent_grid(1, bn=128, swap_ab=True)
_X3_SWAP_VARIANTS = (
    # flushing every 2 k-tiles, C stored from the registers, a stage's operands in one TMA issue each, first: the
    # one-issue form 4.7% faster at 4096 and tied at 8192 (H100, 2026-12-07), the flush and the store the fastest
    # at both sizes on the H200 (9.92 against 10.51 ms with TMA stores at 8192, 2026-12-02; NOTES.md)
    Variant("C^T 128x128x32 persistent stages 4 flush 2, A and B one TMA box each a stage (B in 32-column chunks), "
            "C stored from registers", "mm_wgmma_3xtf32_swap_f2_direct_ab1", (384, 1, 1), _X3_SWAP_GRID,
            persistent_smem_bytes(4, bn=128, split_a=True, tma_store=False), staging="tma_f32_ab128_store"),
    Variant("C^T 128x128x32 persistent, B^T split in registers, A by 2 producer warps, stages 4 flush 2, "
            "C stored from registers", "mm_wgmma_3xtf32_swap_f2_direct", (384, 1, 1), _X3_SWAP_GRID,
            persistent_smem_bytes(4, bn=128, split_a=True, tma_store=False), staging=_F32),
    Variant("C^T 128x128x32 persistent stages 4 flush 2, TMA-store epilogue", "mm_wgmma_3xtf32_swap_f2", (384, 1, 1),
            _X3_SWAP_GRID, _X3_SWAP_SMEM, staging=_F32),
    Variant("C^T 128x128x32 persistent stages 4 flush 1, TMA-store epilogue", "mm_wgmma_3xtf32_swap", (384, 1, 1),
            _X3_SWAP_GRID, _X3_SWAP_SMEM, staging=_F32),
    Variant("C^T 128x128x32 persistent stages 4 flush 1, A's high part rounded in place, TMA-store epilogue",
            "mm_wgmma_3xtf32_swap_rna", (384, 1, 1), _X3_SWAP_GRID, _X3_SWAP_SMEM, staging=_F32),
)

WGMMA_TF32_TMA = Rung(
    name="wgmma_tf32_tma", title="wgmma TF32, TMA + WS, persistent (Hopper)", precision="tf32",
    rounding="tf32_trunc", **_COMMON, staging="tma_tf32t", kernel=_TF32_VARIANTS[0].kernel, block=_TF32_VARIANTS[0].block,
    grid=_TF32_VARIANTS[0].grid, shared_mem=_TF32_VARIANTS[0].shared_mem, loads_per_fma=1 / 256 + 1 / 128,
    variants=_TF32_VARIANTS,
    explain="TF32 on the BF16 climb's last kernel: B is first transposed (timed with the GEMM; its bits as they "
            "are), so both operands are K-major as TF32 wgmma requires, and A is read where it lies; tensor maps of "
            "A, B^T and C (FP32, 32 k × 64 rows a box, 128-byte swizzle) feed a persistent block an SM, one producer "
            "warpgroup issuing TMA into a 4-stage mbarrier ring and two consumers issuing m64n256k8 on 128×256 "
            "tiles, C leaving through shared memory and TMA stores. The tensor core truncates the FP32 bits to "
            "TF32 as it reads them, so the rung is checked against the product of the truncated inputs; the "
            "accumulator stays in the wgmma chain, as cuBLAS TF32's does.",
    compare=("wgmma_tf32", "cublas_tf32"),
    ratios=(("wgmma_tf32", "time_wgmma TF32 / time_wgmma TF32 TMA"),
            ("cublas_tf32", "time_cuBLAS TF32 / time_wgmma TF32 TMA")),
)
WGMMA_TF32_SWAP = Rung(
    name="wgmma_tf32_swap", title="wgmma TF32, C^T = B^T A^T, no pre-pass (Hopper)", precision="tf32",
    rounding="tf32_trunc", **_COMMON, staging=_SWAP_VARIANTS[0].staging, kernel=_SWAP_VARIANTS[0].kernel,
    block=_SWAP_VARIANTS[0].block, grid=_SWAP_VARIANTS[0].grid, shared_mem=_SWAP_VARIANTS[0].shared_mem,
    loads_per_fma=1 / 256 + 1 / 128, variants=_SWAP_VARIANTS,
    explain="TF32 wgmma reads shared memory K-major only, and row-major B is N-major; but its first operand may "
            "come from registers, which any layout can fill. So the kernel computes C^T = B^T A^T: B arrives by "
            "TMA as it lies (32 k × 32 n boxes, 128-byte swizzle) and each consumer warpgroup loads its 64 rows of "
            "B^T into registers (two 8-byte loads a k8 step, ordered so that a warp's loads use both halves of "
            "the banks), while A, already K-major, is the shared-memory operand of m64n256k8. No pre-pass runs. "
            "Each 128 × 256 tile of C^T leaves transposed through shared memory and TMA stores; the tensor core "
            "truncates both operands to TF32, as in the transposing rung.",
    compare=("wgmma_tf32_tma", "cublas_tf32"),
    ratios=(("wgmma_tf32_tma", "time_wgmma TF32 TMA / time_wgmma TF32 C^T"),
            ("cublas_tf32", "time_cuBLAS TF32 / time_wgmma TF32 C^T")),
)
WGMMA_3XTF32_TMA = Rung(
    name="wgmma_3xtf32_tma", title="wgmma 3xTF32, TMA + WS, persistent (Hopper, FP32-accurate)", precision="3xtf32",
    **_COMMON, staging="tma_3xtf32", kernel=_X3_VARIANTS[0].kernel, block=_X3_VARIANTS[0].block,
    grid=_X3_VARIANTS[0].grid, shared_mem=_X3_VARIANTS[0].shared_mem, loads_per_fma=(1 / 128 + 1 / 128) * 2,
    variants=_X3_VARIANTS,
    explain="3xTF32 on the persistent TMA body: the pre-pass splits A and the transpose of B into TF32 high and "
            "residual parts, stacked in one tensor map each, and a stage carries both parts of both operands; "
            "two consumer warpgroups run three m64n128k8 products per k8 step (big·small, small·big, big·big) "
            "into a partial accumulator that starts from zero every k-tile and is then added to the FP32 "
            "accumulator with round-to-nearest adds, so the tensor core's truncating accumulation never acts on "
            "a long sum (variants flush every 2 or 4 k-tiles). Checked against FP32's tolerance on FP32 inputs.",
    compare=("wgmma_3xtf32", "cublas"),
    ratios=(("wgmma_3xtf32", "time_wgmma 3xTF32 / time_wgmma 3xTF32 TMA"),
            ("cublas", "time_cuBLAS SGEMM / time_wgmma 3xTF32 TMA")),
)
WGMMA_3XTF32_SWAP = Rung(
    name="wgmma_3xtf32_swap", title="wgmma 3xTF32, C^T = B^T A^T, no pre-pass (Hopper, FP32-accurate)",
    precision="3xtf32", **_COMMON, staging=_X3_SWAP_VARIANTS[0].staging, kernel=_X3_SWAP_VARIANTS[0].kernel,
    block=_X3_SWAP_VARIANTS[0].block, grid=_X3_SWAP_VARIANTS[0].grid, shared_mem=_X3_SWAP_VARIANTS[0].shared_mem,
    loads_per_fma=1 / 128 + 1 / 128, variants=_X3_SWAP_VARIANTS,
    explain="3xTF32 with no pre-pass: as in the swapped TF32 rung the kernel computes C^T = B^T A^T, B arriving "
            "by TMA as it lies and A K-major as it lies, each loaded once, and both are split into TF32 high and "
            "residual parts where they are read. Each consumer warpgroup splits its B^T fragments in registers "
            "(high part rounded to nearest, residual the rounded rest); two warps of the producer warpgroup, "
            "idle otherwise, write each stage's A residual beside its A at the same swizzled offsets, fence "
            "them for the tensor core's proxy and signal a third barrier of the stage, while the tensor core "
            "reads A's high part as staged, truncating it. Per k8 step three m64n128k8 with B^T from registers "
            "(big·small, small·big, big·big) go into a partial accumulator added to the FP32 one with "
            "round-to-nearest adds every 2 k-tiles (variants: every k-tile; that with A's high part rounded and "
            "rewritten in place). Checked against FP32's tolerance on FP32 inputs.",
    compare=("wgmma_3xtf32_tma", "cublas"),
    ratios=(("wgmma_3xtf32_tma", "time_wgmma 3xTF32 TMA / time_wgmma 3xTF32 C^T"),
            ("cublas", "time_cuBLAS SGEMM / time_wgmma 3xTF32 C^T")),
)
