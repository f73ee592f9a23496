"""The tensor-core rungs: TF32, 3xTF32 and BF16 on mma.sync (sm_80+); 3xTF32, TF32
and BF16 on wgmma (sm_90a), BF16 also fed by TMA, and FP8 on the same TMA machinery; cuBLAS's TF32
and BF16 and cuBLASLt's FP8 beside them. Each is judged against the roof
of the unit it uses, and checked against the float64 product of its inputs rounded the way it
reads them. Kernels: a 1-D grid with grouped rasterisation; block tiles per record."""

from rooflab.rungs.record import Rung, Variant, cdiv
from rooflab.rungs.wgmma_bf16_tma import TMA_RUNGS
from rooflab.rungs.wgmma_fp8 import FP8_RUNGS
from rooflab.rungs.wgmma_tf32_tma import WGMMA_3XTF32_SWAP, WGMMA_3XTF32_TMA, WGMMA_TF32_SWAP, WGMMA_TF32_TMA


def _loads(bm: int, bn: int) -> float:
    """Global loads per FMA of a BM×BN block tile: (BM·BK + BK·BN) / (BM·BN·BK)."""
    return 1 / bn + 1 / bm


def _tiles(bm: int, bn: int):
    def grid(m, n, k, bm=bm, bn=bn):
        return (cdiv(m, bm) * cdiv(n, bn), 1, 1)
    return grid


# loads per FMA for a 128×256 block tile
_TILE_LOADS = _loads(128, 256)
_grid = _tiles(128, 256)

# mma_3xtf32.cu: 128×128 tiles, one kernel per cp.async ring depth (35840 bytes a stage)
_X3_VARIANTS = tuple(Variant(label=f"128x128x32 warp 64x32 stages {s}", kernel=k, block=(256, 1, 1),
                             grid=_tiles(128, 128), shared_mem=s * 35840)
                     for k, s in (("mm_3xtf32", 4), ("mm_3xtf32_s3", 3), ("mm_3xtf32_s5", 5)))
# wgmma_bf16.cu: 2 warpgroups (128×256) or 3 (192×256), ring depth
# the 3-warpgroup 192x256 ring first: 0.864x cuBLAS BF16 at 8192 in the run that chose it (2-warpgroup:
# 0.84x); in later runs the two tiles measured alike (0.78x at 8192), so `rooflab tune` decides per GPU
_WGB_VARIANTS = (
    Variant("192x256x64 3 warpgroups stages 4", "mm_wgmma_bf16_wg3", (384, 1, 1), _tiles(192, 256), 4 * 57344 + 1024),
    Variant("128x256x64 2 warpgroups stages 4", "mm_wgmma_bf16", (256, 1, 1), _tiles(128, 256), 4 * 49152 + 1024),
    Variant("192x256x64 3 warpgroups stages 3", "mm_wgmma_bf16_wg3_s3", (384, 1, 1), _tiles(192, 256),
            3 * 57344 + 1024),
    Variant("128x256x64 producer + 2 consumer warpgroups stages 4", "mm_wgmma_bf16_ws", (384, 1, 1),
            _tiles(128, 256), 4 * 49152 + 1024),
)
# wgmma_tf32.cu: operands staged K-major by a pre-pass (record field `staging`), then
# MM_WGMMA_TF32_SMEM(BM, BN, parts, stages) = stages · parts · (BM + BN) · 128 + 1024 bytes
def _nt_smem(bm: int, bn: int, parts: int, stages: int) -> int:
    return stages * parts * (bm + bn) * 128 + 1024


# TF32: 3 warpgroups (192×256) or 2 (128×256), ring depth, batches left in flight; or a producer
# warpgroup feeding 2 consumers (first: the fastest at 8192 on the H200, docs/nt-prediction.md)
_WGT_VARIANTS = (
    Variant("192x256x32 3 warpgroups stages 4", "mm_wgmma_tf32_wg3", (384, 1, 1), _tiles(192, 256),
            _nt_smem(192, 256, 1, 4)),
    Variant("128x256x32 2 warpgroups stages 4", "mm_wgmma_tf32", (256, 1, 1), _tiles(128, 256), _nt_smem(128, 256, 1, 4)),
    Variant("192x256x32 3 warpgroups stages 4 wait 0", "mm_wgmma_tf32_wg3_w0", (384, 1, 1), _tiles(192, 256),
            _nt_smem(192, 256, 1, 4)),
    Variant("192x256x32 3 warpgroups stages 3", "mm_wgmma_tf32_wg3_s3", (384, 1, 1), _tiles(192, 256),
            _nt_smem(192, 256, 1, 3)),
    Variant("128x256x32 producer + 2 consumer warpgroups stages 4", "mm_wgmma_tf32_ws", (384, 1, 1),
            _tiles(128, 256), _nt_smem(128, 256, 1, 4)),
)
# 3xTF32: 128×128 (a partial accumulator beside the FP32 one leaves no room for 256 columns): a
# producer warpgroup feeding 2 consumers (first: the fastest on the H200), or block-synchronous
# warpgroups; the partial flushed every 1, 2 or 4 k-tiles, the warpgroups' flushes staggered or not
_W3_SMEM = _nt_smem(128, 128, 2, 3)
_W3_VARIANTS = (
    Variant("128x128x32 producer + 2 consumer warpgroups stages 3 flush 2", "mm_wgmma_3xtf32_ws", (384, 1, 1),
            _tiles(128, 128), _W3_SMEM),
    Variant("128x128x32 producer + 2 consumer warpgroups stages 3 flush 4", "mm_wgmma_3xtf32_ws_f4", (384, 1, 1),
            _tiles(128, 128), _W3_SMEM),
    Variant("128x128x32 producer + 2 consumer warpgroups stages 3 flush 1", "mm_wgmma_3xtf32_ws_f1", (384, 1, 1),
            _tiles(128, 128), _W3_SMEM),
    Variant("128x128x32 2 warpgroups stages 3 flush 2 staggered", "mm_wgmma_3xtf32", (256, 1, 1), _tiles(128, 128),
            _W3_SMEM),
    Variant("128x128x32 2 warpgroups stages 3 flush 1", "mm_wgmma_3xtf32_f1", (256, 1, 1), _tiles(128, 128), _W3_SMEM),
    Variant("128x128x32 2 warpgroups stages 3 flush 4 staggered", "mm_wgmma_3xtf32_f4", (256, 1, 1), _tiles(128, 128),
            _W3_SMEM),
    Variant("128x128x32 2 warpgroups stages 3 flush 2", "mm_wgmma_3xtf32_f2_ns", (256, 1, 1), _tiles(128, 128),
            _W3_SMEM),
    Variant("192x128x32 3 warpgroups stages 2 flush 2", "mm_wgmma_3xtf32_wg3", (384, 1, 1), _tiles(192, 128),
            _nt_smem(192, 128, 2, 2)),
)


MMA_TF32 = Rung(
    name="mma_tf32", title="mma.sync TF32", stage="tensor cores", precision="tf32", rounding="tf32",
    source="rungs/mma_tf32.cu", kernel="mm_tf32", block=(256, 1, 1), grid=_grid, shared_mem=156672,
    loads_per_fma=_TILE_LOADS, requires_cc=(8, 0),
    explain="TF32 tensor cores through mma.sync m16n8k8: FP32 inputs rounded to TF32 (10 mantissa bits, cvt.rna), "
            "FP32 accumulation; a 3-stage cp.async ring feeds ldmatrix/LDS fragments from padded shared memory.",
)
MMA_3XTF32 = Rung(
    name="mma_3xtf32", title="mma.sync 3xTF32 (FP32-accurate)", stage="tensor cores", precision="3xtf32",
    source="rungs/mma_3xtf32.cu", kernel="mm_3xtf32", block=(256, 1, 1), grid=_X3_VARIANTS[0].grid,
    shared_mem=_X3_VARIANTS[0].shared_mem, loads_per_fma=_loads(128, 128), requires_cc=(8, 0),
    variants=_X3_VARIANTS,
    explain="FP32-accurate GEMM on TF32 tensor cores: each operand split into a TF32 high part and a TF32 residual "
            "in registers after the fragment load; three mma.sync products per FMA. Each k-tile's products are "
            "summed from zero by the tensor core and added to an FP32 accumulator with a round-to-nearest add, so "
            "the tensor core's truncating accumulation never acts on a long sum. Checked against FP32's "
            "tolerance on FP32 inputs.",
    compare=("cublas",),
    ratios=(("cublas", "time_cuBLAS SGEMM / time_3xTF32"),),
)
WGMMA_3XTF32 = Rung(
    name="wgmma_3xtf32", title="wgmma 3xTF32 (Hopper, FP32-accurate)", stage="tensor cores", precision="3xtf32",
    source="rungs/wgmma_tf32.cu", kernel=_W3_VARIANTS[0].kernel, block=_W3_VARIANTS[0].block,
    grid=_W3_VARIANTS[0].grid, shared_mem=_W3_VARIANTS[0].shared_mem, loads_per_fma=_loads(128, 128) * 2,  # big and small parts
    requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",), variants=_W3_VARIANTS, staging="3xtf32",
    explain="3xTF32 on Hopper's warpgroup MMA. TF32 wgmma reads both operands K-major, so a pre-pass (timed with "
            "the GEMM) splits A and the transpose of B into TF32 high and residual parts; in the main kernel a "
            "producer warpgroup copies the four parts with cp.async into a ring of 128-byte-swizzled shared memory, "
            "signalling each slot on an mbarrier, and two consumer warpgroups run three m64n128k8 products per k8 "
            "step straight from it. The products of every two k-tiles are summed from zero in a partial "
            "accumulator and added to the FP32 accumulator with round-to-nearest adds, so the tensor core's "
            "truncating accumulation never acts on a long sum.",
    compare=("cublas", "mma_3xtf32"),
    ratios=(("cublas", "time_cuBLAS SGEMM / time_wgmma 3xTF32"),
            ("mma_3xtf32", "time_mma 3xTF32 / time_wgmma 3xTF32")),
)
WGMMA_TF32 = Rung(
    name="wgmma_tf32", title="wgmma TF32 (Hopper)", stage="tensor cores", precision="tf32", rounding="tf32",
    source="rungs/wgmma_tf32.cu", kernel=_WGT_VARIANTS[0].kernel, block=_WGT_VARIANTS[0].block,
    grid=_WGT_VARIANTS[0].grid, shared_mem=_WGT_VARIANTS[0].shared_mem, loads_per_fma=_loads(192, 256),
    requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",), variants=_WGT_VARIANTS, staging="tf32",
    # tolerance from the TF32 error model (rooflab.model.tolerance): the accumulator stays in the wgmma chain,
    # whose FP32 accumulation truncates (9.6e-6 at K=4096, growing with K; cuBLAS TF32 1.4e-5)
    explain="TF32 on Hopper's warpgroup MMA with the BF16 rung's data path: a pre-pass (timed with the GEMM) "
            "rounds A to TF32 (cvt.rna) and writes B transposed and rounded, so both operands are K-major as "
            "TF32 wgmma requires; three warpgroups then issue m64n256k8 on 128-byte-swizzled shared memory "
            "(192×256 tiles) fed by a 4-stage cp.async ring, one batch left running across each barrier.",
)
CUBLAS_TF32 = Rung(
    name="cublas_tf32", title="cuBLAS TF32", stage="tensor cores (ceiling)", precision="tf32", rounding="tf32",
    library="cublas", loads_per_fma=None, block=(0, 0, 0), requires_cc=(8, 0),
    # cuBLAS does not document how it rounds FP32 to TF32; against the round-to-nearest reference
    # a truncating library lands near 1e-4, so its tolerance is the TF32 one, not FP32's
    normwise_tol=1e-3,
    explain="cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: NVIDIA's TF32 tensor-core GEMM, the TF32 rungs' peer.",
    compare=("mma_tf32", "wgmma_tf32"),
    ratios=(("mma_tf32", "time_mma TF32 / time_cuBLAS TF32"),
            ("wgmma_tf32", "time_wgmma TF32 / time_cuBLAS TF32")),
)
MMA_BF16 = Rung(
    name="mma_bf16", title="mma.sync BF16", stage="tensor cores", precision="bf16", inputs="bf16", rounding="bf16",
    source="rungs/mma_bf16.cu", kernel="mm_bf16", block=(256, 1, 1), grid=_grid, shared_mem=108544,
    loads_per_fma=_TILE_LOADS, requires_cc=(8, 0),
    explain="BF16 inputs, FP32 accumulation, mma.sync m16n8k16 with ldmatrix (.trans for B) from conflict-free "
            "padded shared memory and a 4-stage cp.async ring.",
)
WGMMA_BF16 = Rung(
    name="wgmma_bf16", title="wgmma BF16 (Hopper)", stage="tensor cores", precision="bf16", inputs="bf16",
    rounding="bf16", source="rungs/wgmma_bf16.cu", kernel=_WGB_VARIANTS[0].kernel, block=_WGB_VARIANTS[0].block,
    grid=_WGB_VARIANTS[0].grid, shared_mem=_WGB_VARIANTS[0].shared_mem, loads_per_fma=_loads(192, 256),
    requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",),
    variants=_WGB_VARIANTS,
    explain="Hopper's warpgroup MMA: three warpgroups (a 192×256 tile) each issue wgmma m64n256k16 on operands in "
            "128-byte-swizzled shared memory (a 3- or 4-stage cp.async ring), so a whole 64×256 tile's products "
            "run asynchronously while the next slices load.",
    compare=("mma_bf16",),
    ratios=(("mma_bf16", "time_mma BF16 / time_wgmma BF16"),),
)
CUBLAS_BF16 = Rung(
    name="cublas_bf16", title="cuBLAS BF16", stage="tensor cores (ceiling)", precision="bf16", inputs="bf16",
    rounding="bf16", library="cublas", loads_per_fma=None, block=(0, 0, 0),
    requires_cc=(8, 0),
    explain="cublasGemmEx on BF16 inputs with FP32 accumulation (CUBLAS_COMPUTE_32F): the BF16 rungs' peer.",
    compare=("wgmma_bf16",),
    ratios=(("wgmma_bf16", "time_wgmma BF16 / time_cuBLAS BF16"),
            ("mma_bf16", "time_mma BF16 / time_cuBLAS BF16")),
)

# the TMA rungs (rungs/wgmma_bf16_tma.py) climb from wgmma_bf16 towards cuBLAS BF16; TF32 and 3xTF32 on their
# persistent body (rungs/wgmma_tf32_tma.py) follow their cp.async rungs; FP8 on the same machinery and its
# cuBLASLt peer (rungs/wgmma_fp8.py) come last
TENSOR_RUNGS = (MMA_TF32, MMA_3XTF32, WGMMA_3XTF32, WGMMA_3XTF32_TMA, WGMMA_3XTF32_SWAP, WGMMA_TF32, WGMMA_TF32_TMA,
                WGMMA_TF32_SWAP, CUBLAS_TF32, MMA_BF16, WGMMA_BF16, *TMA_RUNGS, CUBLAS_BF16, *FP8_RUNGS)
