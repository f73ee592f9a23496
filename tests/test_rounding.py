"""Input rounding as tensor cores read FP32 data: the references the TF32 and BF16 rungs are checked against."""

import numpy as np
import pytest

from rooflab.model.check import bf16_bits, round_inputs
from rooflab.model.metrics import peak_for


def test_tf32_keeps_ten_mantissa_bits_rounding_ties_away():
    x = np.array([1.0, 1.0 + 2**-10, 1.0 + 2**-11, 1.0 + 2**-11 + 2**-20, -1.0 - 2**-11, 3.14159265], np.float32)
    r = round_inputs(np, x, "tf32")
    assert r[0] == 1.0 and r[1] == 1.0 + 2**-10
    assert r[2] == 1.0 + 2**-10  # a tie rounds away from zero (cvt.rna)
    assert r[4] == -1.0 - 2**-10
    assert np.all((r.view(np.uint32) & 0x1FFF) == 0)
    assert abs(r[5] - 3.14159265) < 2**-9


def test_bf16_rounds_to_nearest_even():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-7 + 2**-9], np.float32)
    r = round_inputs(np, x, "bf16")
    assert r[0] == 1.0
    assert r[1] == 1.0  # tie, to even
    assert r[2] == 1.0 + 2**-6  # tie, to even (up)
    assert r[3] == 1.0 + 2**-7
    bits = bf16_bits(np, x)
    assert bits.dtype == np.uint16 and np.array_equal((bits.astype(np.uint32) << 16).view(np.float32), r)


def test_rounded_reference_error_matches_the_precision():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (64, 256)).astype(np.float32), rng.uniform(-1, 1, (256, 64)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for to, lo, hi in (("tf32", 1e-4, 1e-3), ("bf16", 1e-3, 1e-2)):
        r = round_inputs(np, a, to).astype(np.float64) @ round_inputs(np, b, to).astype(np.float64)
        err = np.linalg.norm(r - ref) / np.linalg.norm(ref)
        assert lo < err < hi, (to, err)


def test_three_tf32_roof_is_a_third_of_tf32():
    doc = {"device": {"fp32_peak_flops": 66.9e12, "tensor_peaks": {"tf32": 494.7e12}}}
    assert peak_for(doc, "3xtf32") == pytest.approx(494.7e12 / 3)
    assert peak_for(doc, "bf16") is None


def test_tf32_trunc_drops_the_low_thirteen_bits():
    x = np.array([1.0 + 2**-11, 1.0 + 2**-10 + 2**-11 + 2**-12, -1.0 - 2**-11 - 2**-20, 3.14159265], np.float32)
    t = round_inputs(np, x, "tf32_trunc")
    assert t[0] == 1.0  # where round-to-nearest (ties away) gives 1 + 2**-10
    assert round_inputs(np, x, "tf32")[0] == 1.0 + 2**-10
    assert t[1] == 1.0 + 2**-10
    assert t[2] == -1.0  # towards zero for negatives too
    assert np.all(np.abs(t) <= np.abs(x)) and np.all((t.view(np.uint32) & 0x1FFF) == 0)


def test_truncation_biases_a_product_where_rounding_does_not():
    """Why the truncated reference matters: against the FP32 inputs, truncated TF32 inputs shrink every
    product (normwise error ~2x round-to-nearest's), so a truncating kernel fails a round-to-nearest check
    at a tolerance the truncated reference meets with room."""
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-1, 1, (64, 512)).astype(np.float32), rng.uniform(-1, 1, (512, 64)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)

    def err(to):
        r = round_inputs(np, a, to).astype(np.float64) @ round_inputs(np, b, to).astype(np.float64)
        return np.linalg.norm(r - ref) / np.linalg.norm(ref)

    rn, tr = err("tf32"), err("tf32_trunc")
    assert 1e-4 < rn < 5e-4 and tr > 1.5 * rn
