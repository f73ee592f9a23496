"""The tensor-core rungs (issue 10): TF32, 3xTF32 and BF16 on mma.sync (sm_80+), BF16 on wgmma
(sm_90a), and cuBLAS's TF32 and BF16 beside them. Each is judged against the roof of the unit
it uses, and checked against the float64 product of its inputs rounded the way it reads them.
Kernels: 256 threads, a 128×256 tile per block, a 1-D grid with grouped rasterisation."""

from rooflab.rungs.record import Rung, Step, cdiv

# loads per FMA for a 128×256 block tile: (BM·BK + BK·BN) / (BM·BN·BK)
_TILE_LOADS = 1 / 256 + 1 / 128


def _grid(m, n, k):
    return (cdiv(m, 128) * cdiv(n, 256), 1, 1)


def _vs_library(what: str):
    def para(s: Step) -> str:
        ours, lib = s.prev, s.this
        return (f"{what}: our kernel {ours['ms']:.3f} ms ({ours['gflops'] / 1e3:,.0f} TFLOP/s, "
                f"{ours['pct_peak']:.0f}% of its roof), cuBLAS {lib['ms']:.3f} ms ({lib['gflops'] / 1e3:,.0f} TFLOP/s, "
                f"{lib['pct_peak']:.0f}%): cuBLAS is {s.ratio:.2f}× as fast.")
    return para


def _sgemm_to_3xtf32(s: Step) -> str:
    sg, x3 = s.prev, s.this
    return (f"3xTF32 runs FP32-accurate GEMM on the tensor cores: each FP32 operand is split into a TF32 high "
            f"part and a TF32 residual, and three products (big·big, big·small, small·big) accumulate in FP32. "
            f"It ran {1 / s.ratio:.2f}× the speed of cuBLAS SGEMM ({sg['ms']:.3f} → {x3['ms']:.3f} ms, "
            f"{x3['gflops'] / 1e3:,.0f} TFLOP/s, {x3['pct_peak']:.0f}% of a third of the TF32 roof), with normwise "
            f"error {s.norm('this'):.1e} against {s.norm('prev'):.1e} for SGEMM: the FP32 CUDA-core roof no longer "
            f"bounds an FP32-accurate GEMM.")


MMA_TF32 = Rung(
    name="mma_tf32", title="mma.sync TF32", stage="tensor cores", precision="tf32", rounding="tf32",
    source="rungs/mma_tf32.cu", kernel="mm_tf32", block=(256, 1, 1), grid=_grid, shared_mem=156672,
    loads_per_fma=_TILE_LOADS, requires_cc=(8, 0),
    explain="TF32 tensor cores through mma.sync m16n8k8: FP32 inputs rounded to TF32 (10 mantissa bits, cvt.rna), "
            "FP32 accumulation; a 3-stage cp.async ring feeds ldmatrix/LDS fragments from padded shared memory.",
)
MMA_3XTF32 = Rung(
    name="mma_3xtf32", title="mma.sync 3xTF32 (FP32-accurate)", stage="tensor cores", precision="3xtf32",
    source="rungs/mma_3xtf32.cu", kernel="mm_3xtf32", block=(256, 1, 1), grid=_grid, shared_mem=156672,
    loads_per_fma=_TILE_LOADS, requires_cc=(8, 0),
    explain="FP32-accurate GEMM on TF32 tensor cores: each operand split into a TF32 high part and a TF32 residual "
            "in registers after the fragment load; three mma.sync products per FMA, FP32 accumulation. Checked "
            "against FP32's tolerance on FP32 inputs.",
    paragraphs=(("cublas", "cuBLAS SGEMM → 3xTF32", _sgemm_to_3xtf32),),
    ratios=(("cublas", "time_cuBLAS SGEMM / time_3xTF32"),),
)
CUBLAS_TF32 = Rung(
    name="cublas_tf32", title="cuBLAS TF32", stage="tensor cores (ceiling)", precision="tf32", rounding="tf32",
    launcher="rooflab.cuda.cublas:gemm_tf32", loads_per_fma=None, block=(0, 0, 0), requires_cc=(8, 0),
    # cuBLAS does not document how it rounds FP32 to TF32; against the round-to-nearest reference
    # a truncating library lands near 1e-4, so its tolerance is the TF32 one, not FP32's
    normwise_tol=1e-3,
    explain="cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: NVIDIA's TF32 tensor-core GEMM, the TF32 rungs' peer.",
    paragraphs=(("mma_tf32", "mma.sync TF32 vs cuBLAS TF32", _vs_library("TF32")),),
    ratios=(("mma_tf32", "time_mma TF32 / time_cuBLAS TF32"),),
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
    rounding="bf16", source="rungs/wgmma_bf16.cu", kernel="mm_wgmma_bf16", block=(256, 1, 1), grid=_grid,
    shared_mem=197632, loads_per_fma=_TILE_LOADS, requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",),
    explain="Hopper's warpgroup MMA: two warpgroups each issue wgmma m64n256k16 on operands in 128-byte-swizzled "
            "shared memory (a 4-stage cp.async ring), so a whole 64×256 tile's products run asynchronously "
            "while the next slices load.",
    paragraphs=(("mma_bf16", "mma.sync → wgmma (BF16)", lambda s: (
        f"wgmma ran {s.ratio:.2f}× as fast as mma.sync on the same BF16 problem ({s.prev['ms']:.3f} → "
        f"{s.this['ms']:.3f} ms, {s.this['gflops'] / 1e3:,.0f} TFLOP/s, {s.this['pct_peak']:.0f}% of the BF16 "
        f"roof): a warpgroup's asynchronous 64×256×16 products read B straight from shared memory, where "
        f"mma.sync needs every fragment staged through registers by ldmatrix.")),),
    ratios=(("mma_bf16", "time_mma BF16 / time_wgmma BF16"),),
)
CUBLAS_BF16 = Rung(
    name="cublas_bf16", title="cuBLAS BF16", stage="tensor cores (ceiling)", precision="bf16", inputs="bf16",
    rounding="bf16", launcher="rooflab.cuda.cublas:gemm_bf16", loads_per_fma=None, block=(0, 0, 0),
    requires_cc=(8, 0),
    explain="cublasGemmEx on BF16 inputs with FP32 accumulation (CUBLAS_COMPUTE_32F): the BF16 rungs' peer.",
    paragraphs=(("wgmma_bf16", "wgmma BF16 vs cuBLAS BF16", _vs_library("BF16")),),
    ratios=(("wgmma_bf16", "time_wgmma BF16 / time_cuBLAS BF16"),
            ("mma_bf16", "time_mma BF16 / time_cuBLAS BF16")),
)

TENSOR_RUNGS = (MMA_TF32, MMA_3XTF32, CUBLAS_TF32, MMA_BF16, WGMMA_BF16, CUBLAS_BF16)
