"""The tensor-core steps: mma.sync to wgmma, 3xTF32 against SGEMM, our kernels against cuBLAS's."""

from __future__ import annotations

from rooflab.report.climb.step import Paragraph, Step


def vs_library(what: str) -> Paragraph:
    """On a cuBLAS record, after one of our kernels: prev is ours, this is cuBLAS."""
    def para(s: Step) -> str:
        ours, lib = s.prev, s.this
        return (f"{what}: our kernel {ours['ms']:.3f} ms ({ours['gflops'] / 1e3:,.0f} TFLOP/s, "
                f"{ours['pct_peak']:.0f}% of its roof), cuBLAS {lib['ms']:.3f} ms ({lib['gflops'] / 1e3:,.0f} TFLOP/s, "
                f"{lib['pct_peak']:.0f}%): cuBLAS is {s.ratio:.2f}× as fast.")
    return para


def sgemm_to_3xtf32(s: Step) -> str:
    sg, x3 = s.prev, s.this
    return (f"3xTF32 runs FP32-accurate GEMM on the tensor cores: each FP32 operand is split into a TF32 high "
            f"part and a TF32 residual, and three products (big·big, big·small, small·big) accumulate in FP32. "
            f"It ran {s.ratio:.2f}× the speed of cuBLAS SGEMM ({sg['ms']:.3f} → {x3['ms']:.3f} ms, "
            f"{x3['gflops'] / 1e3:,.0f} TFLOP/s, {x3['pct_peak']:.0f}% of a third of the TF32 roof), with normwise "
            f"error {s.norm('this'):.1e} against {s.norm('prev'):.1e} for SGEMM: the FP32 CUDA-core roof no longer "
            f"bounds an FP32-accurate GEMM.")


def mma_to_wgmma_3xtf32(s: Step) -> str:
    return (f"wgmma ran {s.ratio:.2f}× as fast as mma.sync on the same FP32-accurate problem "
            f"({s.prev['ms']:.3f} → {s.this['ms']:.3f} ms, {s.this['gflops'] / 1e3:,.0f} TFLOP/s): the "
            f"warpgroup MMA runs at the tensor core's full TF32 rate, where mma.sync reaches about two "
            f"thirds of it, and reads both operands straight from shared memory, where mma.sync stages "
            f"every fragment through registers.")


def mma_to_wgmma_bf16(s: Step) -> str:
    return (f"wgmma ran {s.ratio:.2f}× as fast as mma.sync on the same BF16 problem ({s.prev['ms']:.3f} → "
            f"{s.this['ms']:.3f} ms, {s.this['gflops'] / 1e3:,.0f} TFLOP/s, {s.this['pct_peak']:.0f}% of the BF16 "
            f"roof): a warpgroup's asynchronous 64×256×16 products read B straight from shared memory, where "
            f"mma.sync needs every fragment staged through registers by ldmatrix.")


# (rung, the earlier rung it is compared with) -> (heading, paragraph)
PARAGRAPHS = {
    ("mma_3xtf32", "cublas"): ("cuBLAS SGEMM → 3xTF32", sgemm_to_3xtf32),
    ("wgmma_3xtf32", "cublas"): ("cuBLAS SGEMM → wgmma 3xTF32", sgemm_to_3xtf32),
    ("wgmma_3xtf32", "mma_3xtf32"): ("mma.sync → wgmma (3xTF32)", mma_to_wgmma_3xtf32),
    ("cublas_tf32", "mma_tf32"): ("mma.sync TF32 vs cuBLAS TF32", vs_library("TF32")),
    ("cublas_tf32", "wgmma_tf32"): ("wgmma TF32 vs cuBLAS TF32", vs_library("TF32 (wgmma)")),
    ("wgmma_bf16", "mma_bf16"): ("mma.sync → wgmma (BF16)", mma_to_wgmma_bf16),
    ("cublas_bf16", "wgmma_bf16"): ("wgmma BF16 vs cuBLAS BF16", vs_library("BF16")),
}
