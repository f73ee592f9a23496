"""GEMM check tolerances from each precision's rounding-error model, as functions of K.

Two checks, two models (u is a unit roundoff; fl(x) = x(1 + d), |d| <= u):

- componentwise, every element against the standard GEMM bound
  |C - C64| <= c (K + 4) u (|A|·|B|), C64 the float64 product of the FP32 inputs,
  u of the precision the kernel computes in. For FP32 on the CUDA cores the bound
  gamma_K = K u / (1 - K u) holds for any summation order, so c = 2 can never fail a
  correct kernel, yet one element 5e-4 off fails it up to K ~ 4000. The + 4 covers
  inputs rounded (or truncated, up to 2u each) on the way in, which dominate at K = 1.
  3xTF32 adds the dropped small·small product and a tensor core's truncating adds (a
  bias that grows with K on all-positive inputs; c = 4 leaves over 20x the margin a
  numpy model of that accumulator needs at K = 512 and K = 8192).
- normwise, ||C - ref||_F / ||ref||_F on inputs uniform in [-1, 1): rounding errors of
  mixed sign add like a random walk, so FP32 accumulation grows as sqrt(K) u (H200:
  cuBLAS SGEMM 1.1e-6 = 0.29 sqrt(K) u at K = 4096, the 3xTF32 rungs 0.06 to 0.13);
  the tolerance 1.25 sqrt(K + 32) u keeps 4x above that and fails a 3xTF32 kernel that
  drops a correction product (1.07e-5, a TF32 kernel's error) by 2x or more. Where the
  sum stays in the tensor core's truncating accumulator the bias grows linearly (TF32
  and BF16: 0.035 to 0.045 K u at K = 1234 to 8192 on mixed signs, up to 0.13 K u on
  the all-positive inputs at K = 512), allowed 0.5 K u. Where the reference does
  not round the inputs as the kernel reads them (a user's TF32/BF16 callable), the
  input rounding itself adds a K-independent 2 u of that precision.

FP8 (e4m3 inputs, u = 2^-4, FP32 accumulate) on Hopper's tensor cores: the FP8 MMA's accumulator
keeps 13 mantissa bits, truncating (e8m13), so where the sum stays in it (cuBLASLt's "fast
accumulation", the rung's tensor-core variant) the error grows with ceil(K / 32) truncations of up
to 2^-13 of the running sum. Two numpy models of it, on [-1, 1) inputs: the sum truncated after each
k32 step gives 3.7e-4 normwise at K = 512 and 3.2e-3 at K = 4097; every addend also aligned to the
largest and truncated gives 2.9e-4 and 1.2e-3. The tolerance allows ceil(K / 32) 2^-13 (1.6e-2 at
K = 4097), 4.9x the larger, while a kernel that drops one k32 step of K = 4096 is off by ~9e-2. (On
all-positive inputs the second model's truncations add up: 6.8e-3 max-relative at K = 512, past
the seed check's 1e-3; summing each 128-k tile from zero and adding it in FP32, as the rung's
default and cuBLASLt's default do, keeps it at 7.5e-4.) The componentwise bound against the
FP32 inputs is (K + 4) u with u = 2^-4, but never below 1.125: an input under e4m3's smallest
normal (2^-6) keeps only an absolute precision of 2^-10, so a product of one (2^-10 + e rounds
to 2^-9) may be off by up to (1 + 1)(1 + 2^-4) - 1 of itself; at K >= 14 the (K + 4) u term is
the larger.
"""

from __future__ import annotations

import math

U_FP32 = 2.0**-24
UNIT_ROUNDOFF = {"fp32": U_FP32, "3xtf32": U_FP32, "tf32": 2.0**-11, "bf16": 2.0**-8, "fp16": 2.0**-11,
                 "fp8": 2.0**-4}
FP32_ACCURATE = ("fp32", "3xtf32")

COMPONENTWISE_C = {"fp32": 2.0, "3xtf32": 4.0}  # others: 1, with u of their input precision
INPUT_ALLOWANCE = 4  # roundings on the way in, in units of u (two inputs, truncated at worst)

NORMWISE_SQRT_C = 1.25
NORMWISE_SMALL_K = 32  # at small K a few products' roundings, not a random walk (3xTF32: 3.3 u at K = 8)
TRUNCATING_ACCUMULATOR_C = 0.5
INPUT_ROUNDING_C = 2.0

# FP8 tensor-core accumulation: 13 mantissa bits kept (truncated) once per k32 MMA step
FP8_ACCUMULATOR_U = 2.0**-13
FP8_MMA_K = 32
FP8_SUBNORMAL_FLOOR = 1.125  # (1 + 1)(1 + 2^-4) - 1: a product of an input below 2^-6, rounded
SEED_RTOL = 1e-3  # the seed's max-relative check on [0, 1) inputs
# FP8's seed check: the k32 steps of a 128-k tile before its sum is added in FP32, each allowed 2^-11
# of it (4x the accumulator's 2^-13 truncation). On the H200 both FP8 rungs, ours and cuBLASLt's, gave
# 1.017e-3 at 509 x 383 x 257 where the model above predicted 7.5e-4: the seed's 1e-3 fails cuBLASLt
# itself; a dropped k32 step at K = 257 is off by ~1e-1.
FP8_SEED_STEP = 2.0**-11
FP8_PROMOTED_K = 128


def unit_roundoff(precision: str) -> float:
    return UNIT_ROUNDOFF.get(precision, U_FP32)


def seed_max_rel(precision: str, k: int) -> float:
    """The seed check's max-relative tolerance on [0, 1) inputs at inner size k: the seed's 1e-3,
    but for FP8, whose tensor-core accumulation alone reaches it (see FP8_SEED_STEP)."""
    if precision != "fp8":
        return SEED_RTOL
    return max(SEED_RTOL, math.ceil(min(k, FP8_PROMOTED_K) / FP8_MMA_K) * FP8_SEED_STEP)


def componentwise(precision: str, k: int) -> float:
    """The bound's factor on |A|·|B| at inner size k: max |C - C64| / (|A|·|B|) may not exceed it."""
    c = COMPONENTWISE_C.get(precision, 1.0)
    bound = c * (k + INPUT_ALLOWANCE) * unit_roundoff(precision)
    return max(bound, FP8_SUBNORMAL_FLOOR) if precision == "fp8" else bound


def normwise(precision: str, k: int, *, rounded_reference: bool) -> float:
    """The normwise tolerance at inner size k. `rounded_reference`: the reference is the float64
    product of the inputs rounded as the kernel reads them (a TF32/BF16 rung's own check)."""
    tol = NORMWISE_SQRT_C * math.sqrt(k + NORMWISE_SMALL_K) * U_FP32
    if precision in FP32_ACCURATE:
        return tol
    if precision == "fp8":
        tol += math.ceil(k / FP8_MMA_K) * FP8_ACCUMULATOR_U
    else:
        tol += TRUNCATING_ACCUMULATOR_C * k * U_FP32
    if not rounded_reference:
        tol += INPUT_ROUNDING_C * unit_roundoff(precision)
    return tol
