"""The Python-native rungs: one Triton GEMM kernel (rooflab/cuda/triton_kernels.py) in four
precisions: FP32 on the CUDA cores (input_precision="ieee"), TF32, tf32x3 (FP32-accurate on the
tensor cores) and BF16 inputs, each with FP32 accumulation and judged against its own roof.

A launch configuration is a Variant whose config carries it ("<precision> <label>", run by
rooflab.cuda.triton_gemm.launcher through rooflab.measure.libraries), so rooflab's tune cache picks the
winner per GPU (`rooflab tune`) and Triton's own autotuner never searches at run time. Triton and
torch are imported only when such a rung is prepared; where either is missing the rung is skipped,
saying why. Records stay pure data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rooflab.rungs.record import Rung, Variant

NEEDS = ("triton", "torch")
# Triton's input_precision per rung precision (BF16 inputs ignore it: their dot is BF16)
INPUT_PRECISION = {"fp32": "ieee", "tf32": "tf32", "3xtf32": "tf32x3", "bf16": "tf32"}


@dataclass(frozen=True)
class Config:
    """One Triton launch configuration; its label is what the tune cache and the record show."""

    precision: str  # "fp32" | "tf32" | "3xtf32" | "bf16"
    bm: int
    bn: int
    bk: int
    warps: int
    stages: int
    group: int = 8  # block rows per band of the grouped (L2-friendly) block order
    tma: bool = False  # Hopper TMA tensor descriptors (falls back to pointer loads where rows are not 16-byte aligned)
    trans: bool = False  # compute C^T = B^T·A^T, so B's tile is the dot's first operand (TF32 wants K-major operands)
    bt: bool = False  # first copy B into a K-major B^T (per launch, timed with it), so both TF32 operands are K-major
    persist: bool = False  # with tma: one program per SM walking the tiles (a persistent kernel)

    @property
    def label(self) -> str:
        return (f"{self.bm}x{self.bn}x{self.bk} w{self.warps} s{self.stages} g{self.group}"
                + (" tma" if self.tma else "") + (" trans" if self.trans else "") + (" bt" if self.bt else "")
                + (" persist" if self.persist else ""))

    @property
    def spec(self) -> str:
        """What the rung's config holds and the launcher parses: '<precision> <label>'."""
        return f"{self.precision} {self.label}"

    @property
    def input_precision(self) -> str:
        return INPUT_PRECISION[self.precision]


_LABEL = re.compile(r"(fp32|tf32|3xtf32|bf16) (\d+)x(\d+)x(\d+) w(\d+) s(\d+) g(\d+)((?: tma| trans| bt| persist)*)$")


def parse(text: str) -> Config:
    """'<precision> <label>' (Config.spec) -> Config."""
    m = _LABEL.match(text.strip())
    if not m:
        raise ValueError(f"not a Triton GEMM configuration: {text!r}")
    prec, *nums, flags = m.groups()
    bm, bn, bk, warps, stages, group = map(int, nums)
    return Config(prec, bm, bn, bk, warps, stages, group, tma=" tma" in flags, trans=" trans" in flags,
                  bt=" bt" in flags, persist=" persist" in flags)


def _variants(precision: str, specs) -> tuple[Variant, ...]:
    """specs: (bm, bn, bk, warps, stages[, flags]); the first is the default until `rooflab tune` has run."""
    out = []
    for s in specs:
        bm, bn, bk, warps, stages = s[:5]
        flags = s[5] if len(s) > 5 else ""
        c = Config(precision, bm, bn, bk, warps, stages, tma="tma" in flags, trans="trans" in flags,
                   bt="bt" in flags.split(), persist="persist" in flags.split())
        out.append(Variant(label=c.label, kernel="triton", block=(0, 0, 0), grid=None, config=c.spec))
    return tuple(out)


# Ordered by `rooflab tune --n 8192` on the H200 (2026-11-30, median ms in brackets): the first is the
# default until the tune cache has a winner for this GPU.
FP32_VARIANTS = _variants("fp32", [
    (128, 64, 32, 4, 4),  # 23.40
    (64, 128, 32, 4, 4), (64, 64, 32, 4, 3), (128, 128, 32, 8, 3), (128, 256, 16, 8, 3),  # 23.59 24.33 25.09 27.29
    (128, 128, 16, 8, 4),  # 27.55
])
TF32_VARIANTS = _variants("tf32", [
    (128, 256, 32, 8, 3, "tma bt"),  # 2.99 (the B^T copy included)
    (128, 256, 32, 8, 4, "bt"), (128, 256, 32, 8, 3, "bt"), (256, 128, 32, 8, 3, "tma bt"),  # 3.55 3.56 3.64
    (128, 128, 32, 4, 4, "bt"), (256, 128, 32, 8, 3, "bt"), (128, 128, 64, 8, 3, "bt"),  # 3.80 4.06 4.47
    (128, 128, 32, 8, 4, "tma bt"), (128, 128, 32, 8, 4, "bt"),  # 4.54 4.88
    (256, 128, 32, 8, 3, "trans"), (128, 256, 32, 8, 3),  # 7.28, 12.32: without the K-major copy
    # persistent: 128x128 ran within the spread of the default in interleaved rounds (check_tf32_push);
    # 128x256 needs 279-328 KB of shared memory (the flattened loop keeps the next tile's buffers live)
    (128, 128, 32, 8, 4, "tma bt persist"),
])
TF32X3_VARIANTS = _variants("3xtf32", [
    (128, 128, 32, 8, 3, "tma bt"),  # 13.30
    (128, 128, 32, 8, 4, "bt"), (128, 128, 32, 8, 3, "bt"), (128, 64, 32, 4, 4, "bt"),  # 13.31 13.36 14.42
    (128, 128, 32, 8, 3, "tma trans"), (128, 128, 32, 8, 3, "trans"),  # 14.60 14.96
    (128, 256, 32, 8, 3, "bt"), (256, 128, 32, 8, 3, "bt"),  # 23.02 27.50: three accumulators' registers
    (128, 128, 32, 8, 3, "tma bt persist"),
])
BF16_VARIANTS = _variants("bf16", [
    (128, 256, 64, 8, 4, "tma"),  # 1.431
    (128, 256, 64, 8, 3, "tma"), (128, 256, 64, 8, 4), (128, 256, 64, 8, 3), (256, 128, 64, 8, 3, "tma"),
    (128, 128, 64, 4, 4, "tma"), (128, 128, 64, 4, 4), (256, 128, 64, 8, 3),  # 1.442 1.459 1.462 1.519 1.574 1.592 1.998
    (128, 128, 64, 4, 4, "tma persist"),  # persistent 128x256 needs 279-328 KB of shared memory
])


_COMMON = dict(stage="Python-native (Triton)", loads_per_fma=None, block=(0, 0, 0), needs=NEEDS, library="triton")

TRITON_FP32 = Rung(
    name="triton_fp32", title="Triton FP32 (ieee, CUDA cores)", precision="fp32", config=FP32_VARIANTS[0].config,
    variants=FP32_VARIANTS, **_COMMON,
    explain="The same blocked GEMM written in Triton: a grouped block order, K-slices of A and B loaded as "
            "tiles (pipelined by Triton's software pipeliner), tl.dot(input_precision=\"ieee\") lowered to FP32 "
            "FMAs on the CUDA cores. The tile, warp count and pipeline depth are variants rooflab tunes.",
    compare=("cublas",),
    ratios=(("cublas", "time_cuBLAS SGEMM / time_Triton FP32"),),
)
TRITON_TF32 = Rung(
    name="triton_tf32", title="Triton TF32", precision="tf32", rounding="tf32_trunc", config=TF32_VARIANTS[0].config,
    variants=TF32_VARIANTS, requires_cc=(8, 0), **_COMMON,
    compare=("cublas_tf32",),
    ratios=(("cublas_tf32", "time_cuBLAS TF32 / time_Triton TF32"),),
    explain="tl.dot on FP32 tiles with input_precision=\"tf32\": the tensor core reads the FP32 bits as TF32, "
            "dropping the low 13 mantissa bits (truncation, no cvt.rna), so the check's reference truncates "
            "the inputs the same way. Hopper's TF32 wgmma reads shared-memory operands K-major only and B is "
            "row-major (N-major), so the 'bt' variants first copy B into a K-major B^T (a transpose kernel in "
            "the same launch, timed with it); 'trans' computes C^T = B^T·A^T instead.",
)
TRITON_TF32X3 = Rung(
    name="triton_tf32x3", title="Triton tf32x3 (FP32-accurate)", precision="3xtf32",
    config=TF32X3_VARIANTS[0].config, variants=TF32X3_VARIANTS, requires_cc=(8, 0), **_COMMON,
    explain="tl.dot(input_precision=\"tf32x3\"): Triton splits each FP32 operand into a TF32 high part "
            "(cvt.rna) and the residual, and sums three TF32 products (small·big, big·small, big·big) "
            "per k-tile from zero before one FP32 add. Checked against FP32's tolerance on FP32 inputs.",
    compare=("cublas",),
    ratios=(("cublas", "time_cuBLAS SGEMM / time_Triton tf32x3"),),
)
TRITON_BF16 = Rung(
    name="triton_bf16", title="Triton BF16", precision="bf16", inputs="bf16", rounding="bf16",
    config=BF16_VARIANTS[0].config, variants=BF16_VARIANTS, requires_cc=(8, 0),
    **_COMMON,
    compare=("cublas_bf16",),
    ratios=(("cublas_bf16", "time_cuBLAS BF16 / time_Triton BF16"),),
    explain="BF16 inputs (the harness's bit patterns viewed as torch.bfloat16, no copy), FP32 accumulation: "
            "tl.dot lowers to Hopper's wgmma with operands staged in swizzled shared memory by Triton's "
            "pipeliner (cp.async or, in the 'tma' variants, TMA tensor descriptors).",
)

TRITON_RUNGS = (TRITON_FP32, TRITON_TF32, TRITON_TF32X3, TRITON_BF16)
