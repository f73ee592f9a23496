"""FP8 e4m3 (the OCP / NVIDIA "e4m3fn" format) on any array module: FP32 values rounded to it, its bit
patterns, and the values of those bits. Neither numpy nor CuPy has an 8-bit float type, so the
rounding is done here with ordinary float32 arithmetic, the same on the host and on the GPU.

e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; S.1111.111 is NaN, so the
largest finite value is 1.75 x 2^8 = 448; normals from 2^-6, subnormals in steps of 2^-9.
Conversion is round to nearest, ties to even, saturating (cvt.rn.satfinite.e4m3x2.f32, CUDA's
__NV_SATFINITE): a finite value past 448 and an infinity become +-448, NaN stays NaN (bits 0x7F).
"""

from __future__ import annotations

import numpy as np

MAX = 448.0
MIN_NORMAL_EXP = -6  # smallest normal: 2^-6
MANTISSA_BITS = 3
BIAS = 7
NAN_BITS = 0x7F


def _quantum(xp, x):
    """The spacing of e4m3 values at |x|: 2^(e - 3) for x in [2^e, 2^(e+1)), e clamped at the subnormal
    floor -6 (spacing 2^-9), as float32 powers of two built from their bits."""
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    e = ((bits >> xp.uint32(23)) & xp.uint32(0xFF)).astype(xp.int32) - 127
    e = xp.clip(e, MIN_NORMAL_EXP, 127)
    return ((e - MANTISSA_BITS + 127).astype(xp.uint32) << xp.uint32(23)).view(xp.float32)


def round_e4m3(xp, x):
    """FP32 values rounded to the nearest e4m3 value (ties to even, saturating), still as float32."""
    x = xp.ascontiguousarray(x, dtype=xp.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        q = _quantum(xp, x)
        # x / q and back are exact (q a power of two); rint rounds half to even. A carry to the next
        # binade (15.5 -> 16 steps) lands on its first value, which is representable.
        r = xp.rint(x / q) * q
        r = xp.where(xp.isnan(x), x, xp.clip(r, -MAX, MAX))  # an infinity's r is NaN: clip the input's sign
        r = xp.where(xp.isinf(x), xp.copysign(xp.float32(MAX), x), r)
    return r.astype(xp.float32)


def to_bits(xp, x):
    """FP32 values as e4m3 bit patterns (uint8), rounded as round_e4m3."""
    r = round_e4m3(xp, x)
    bits = r.view(xp.uint32)
    sign = ((bits >> xp.uint32(31)) << xp.uint32(7)).astype(xp.uint32)
    mag = xp.abs(r)
    e = ((mag.view(xp.uint32) >> xp.uint32(23)) & xp.uint32(0xFF)).astype(xp.int32) - 127
    normal = mag >= xp.float32(2.0**MIN_NORMAL_EXP)
    # normals: exponent field e + 7 (1..15) and the top 3 mantissa bits; subnormals: |r| / 2^-9 (0..7)
    exp_field = xp.clip(e + BIAS, 0, 15).astype(xp.uint32)
    mant = (mag.view(xp.uint32) >> xp.uint32(20)) & xp.uint32(7)
    with np.errstate(invalid="ignore"):
        sub = xp.nan_to_num(mag * xp.float32(2.0**9)).astype(xp.uint32)
    code = xp.where(normal, (exp_field << xp.uint32(3)) | mant, sub)
    code = xp.where(xp.isnan(r), xp.uint32(NAN_BITS), code | sign)
    return code.astype(xp.uint8)


def values() -> np.ndarray:
    """The float32 value of each of the 256 bit patterns (index = bits), NaN for 0x7F and 0xFF."""
    codes = np.arange(256, dtype=np.uint32)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp_field, mant = (codes >> 3) & 0xF, codes & 7
    mag = np.where(exp_field == 0, mant * 2.0**-9, (1 + mant / 8.0) * 2.0 ** (exp_field.astype(np.int64) - BIAS))
    out = (sign * mag).astype(np.float32)
    out[(codes & 0x7F) == NAN_BITS] = np.nan
    return out


def from_bits(xp, bits):
    """e4m3 bit patterns (uint8) as float32 values."""
    table = xp.asarray(values())
    return table[xp.asarray(bits).astype(xp.int32)]
