"""The Triton rungs against their cuBLAS peers."""

from __future__ import annotations

from rooflab.report.climb.step import Paragraph, Step


def vs_cublas(what: str) -> Paragraph:
    """On a Triton record, after its cuBLAS peer: prev is cuBLAS, this is Triton."""
    def para(s: Step) -> str:
        lib, tri = s.prev, s.this
        return (f"{what}: Triton {tri['ms']:.3f} ms ({tri['gflops'] / 1e3:,.1f} TFLOP/s, {tri['pct_peak']:.0f}% of "
                f"its roof), cuBLAS {lib['ms']:.3f} ms ({lib['gflops'] / 1e3:,.1f} TFLOP/s, {lib['pct_peak']:.0f}%): "
                f"Triton runs at {s.ratio:.2f}× cuBLAS's speed.")
    return para


def sgemm_to_fp32(s: Step) -> str:
    return (f"Triton's FP32 GEMM (tl.dot with input_precision=\"ieee\", FMAs on the CUDA cores) ran at "
            f"{s.ratio:.2f}× cuBLAS SGEMM's speed ({s.this['ms']:.3f} ms vs {s.prev['ms']:.3f} ms, "
            f"{s.this['gflops'] / 1e3:,.1f} TFLOP/s, {s.this['pct_peak']:.0f}% of the FP32 roof): a dozen lines of "
            f"Python against NVIDIA's hand-tuned SASS.")


def sgemm_to_tf32x3(s: Step) -> str:
    sg, x3 = s.prev, s.this
    return (f"Triton's tf32x3 splits each FP32 operand into a TF32 high part (cvt.rna) and a residual and sums "
            f"three TF32 products per k-tile into a zeroed accumulator, added to the FP32 sum once per tile. It ran "
            f"at {s.ratio:.2f}× the speed of cuBLAS SGEMM ({sg['ms']:.3f} → {x3['ms']:.3f} ms, "
            f"{x3['gflops'] / 1e3:,.1f} TFLOP/s, {x3['pct_peak']:.0f}% of a third of the TF32 roof) with normwise "
            f"error {s.norm('this'):.1e} against SGEMM's {s.norm('prev'):.1e}.")


# (rung, the earlier rung it is compared with) -> (heading, paragraph)
PARAGRAPHS = {
    ("triton_fp32", "cublas"): ("cuBLAS SGEMM vs Triton FP32", sgemm_to_fp32),
    ("triton_tf32", "cublas_tf32"): ("cuBLAS TF32 vs Triton TF32", vs_cublas("TF32")),
    ("triton_tf32x3", "cublas"): ("cuBLAS SGEMM → Triton tf32x3", sgemm_to_tf32x3),
    ("triton_bf16", "cublas_bf16"): ("cuBLAS BF16 vs Triton BF16", vs_cublas("BF16")),
}
