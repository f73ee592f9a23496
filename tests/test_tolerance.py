"""The GEMM tolerances' error model (rooflab.model.tolerance), held against numpy models of the
arithmetic: FP32 sums, a tensor core's truncating accumulator, 3xTF32. None of the correct
models may fail (no false alarm from K = 1 to K = 8192); the planted errors must."""

from __future__ import annotations

import numpy as np
import pytest

from rooflab.model import tolerance
from rooflab.model.check import round_inputs
from rooflab.rungs import LADDER


def _rz32(x):
    """float64 -> float32 rounded toward zero (the tensor core's adds)."""
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f.astype(np.float64)


def fp32_sum(a, b):
    """One FMA per k, in order: the naive kernel's arithmetic."""
    s = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        s = (s + np.outer(a[:, k].astype(np.float64), b[k].astype(np.float64))).astype(np.float32).astype(np.float64)
    return s


def tensor_core(terms, chunk):
    """One MMA per term and `chunk` k-steps: its products and the accumulator aligned to the largest
    exponent and truncated to 24 bits, then added and truncated (a pessimistic model of an MMA chain)."""
    m, n = terms[0][0].shape[0], terms[0][1].shape[1]
    s = np.zeros((m, n))
    for k0 in range(0, terms[0][0].shape[1], chunk):
        for x, y in terms:
            p = x[:, k0:k0 + chunk].astype(np.float64)[:, :, None] * y[k0:k0 + chunk].astype(np.float64)[None]
            allv = np.concatenate([p, s[:, None, :]], axis=1)
            e = np.floor(np.log2(np.maximum(np.abs(allv).max(axis=1), 1e-300)))
            q = (2.0 ** (e - 23))[:, None, :]
            s = _rz32((np.trunc(allv / q) * q).sum(axis=1))
    return s


def split(x):
    big = round_inputs(np, x, "tf32")
    return big, round_inputs(np, (x.astype(np.float64) - big).astype(np.float32), "tf32")


def inputs(k, lo, seed=0, m=8, n=8):
    rng = np.random.default_rng([seed, k])
    return (rng.uniform(lo, 1, (m, k)).astype(np.float32), rng.uniform(lo, 1, (k, n)).astype(np.float32))


def errors(got, a, b, ref=None):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64 if ref is None else ref
    comp = np.max(np.abs(got - a64 @ b64) / (np.abs(a64) @ np.abs(b64)))
    return comp, np.linalg.norm(got - ref) / np.linalg.norm(ref)


KS = [1, 2, 8, 257, 512, 2048, 8192]


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("lo", [0.0, -1.0], ids=["[0,1)", "[-1,1)"])
def test_fp32_accumulation_never_fails(k, lo):
    a, b = inputs(k, lo)
    comp, norm = errors(fp32_sum(a, b), a, b)
    assert comp <= tolerance.componentwise("fp32", k) / 4  # a quarter of the bound, at most
    if lo < 0:  # the normwise check runs on mixed signs
        assert norm <= tolerance.normwise("fp32", k, rounded_reference=False) / 2


def flushed(terms, chunk, every):
    """The 3xTF32 rungs' arithmetic: products of `every` k-steps summed from zero in the tensor core,
    each such partial sum added to the FP32 total with a round-to-nearest add."""
    s = np.zeros((terms[0][0].shape[0], terms[0][1].shape[1]))
    for k0 in range(0, terms[0][0].shape[1], every):
        part = tensor_core([(x[:, k0:k0 + every], y[k0:k0 + every]) for x, y in terms], chunk)
        s = (s + part).astype(np.float32).astype(np.float64)
    return s


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("lo", [0.0, -1.0], ids=["[0,1)", "[-1,1)"])
def test_3xtf32_never_fails(k, lo):
    a, b = inputs(k, lo)
    (ab, as_), (bb, bs) = split(a), split(b)
    terms = [(ab, bb), (ab, bs), (as_, bb)]
    # the componentwise bound holds even with no flush at all: the whole sum truncated
    comp, _ = errors(tensor_core(terms, 8), a, b)
    assert comp <= tolerance.componentwise("3xtf32", k) / 2
    comp, norm = errors(flushed(terms, 8, 16), a, b)
    assert comp <= tolerance.componentwise("3xtf32", k) / 2
    if lo < 0:  # the normwise check runs on mixed signs only
        assert norm <= tolerance.normwise("3xtf32", k, rounded_reference=False) / 2


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize(("precision", "chunk"), [("tf32", 8), ("bf16", 16)])
@pytest.mark.parametrize("lo", [0.0, -1.0], ids=["[0,1)", "[-1,1)"])
def test_tensor_core_rungs_never_fail(k, precision, chunk, lo):
    a, b = inputs(k, lo)
    ra, rb = round_inputs(np, a, precision), round_inputs(np, b, precision)
    got = tensor_core([(ra, rb)], chunk)
    own_ref = ra.astype(np.float64) @ rb.astype(np.float64)
    comp, norm = errors(got, a, b, ref=own_ref)
    assert comp <= tolerance.componentwise(precision, k) / 1.4
    assert norm <= tolerance.normwise(precision, k, rounded_reference=True) / 1.5
    # a callable's check has no rounded reference: its tolerance carries the input rounding
    _, norm32 = errors(got, a, b)
    assert norm32 <= tolerance.normwise(precision, k, rounded_reference=False) / 1.5


@pytest.mark.parametrize("k", [257, 512, 2048])
def test_one_element_5e4_off_fails_the_fp32_bound(k):
    a, b = inputs(k, 0.0, m=16, n=16)
    got = fp32_sum(a, b)
    got[3, 5] *= 1 + 5e-4
    comp, _ = errors(got, a, b)
    assert comp > 2 * tolerance.componentwise("fp32", k)
    if k <= 512:  # the 3xTF32 bound, wider, still sees it at the check size
        assert comp > tolerance.componentwise("3xtf32", k)


@pytest.mark.parametrize("k", [512, 4096])
def test_3xtf32_without_a_correction_product_fails_the_normwise_check(k):
    a, b = inputs(k, -1.0, m=16, n=16)
    (ab, as_), bb = split(a), split(b)[0]
    got = flushed([(ab, bb), (as_, bb)], 8, 16)  # big·small dropped
    _, norm = errors(got, a, b)
    assert norm > 2 * tolerance.normwise("3xtf32", k, rounded_reference=False)


def test_a_wrong_tf32_rounding_model_fails_the_tensor_core_tolerance():
    k = 4096
    a, b = inputs(k, -1.0, m=16, n=16)
    ta, tb = round_inputs(np, a, "tf32_trunc"), round_inputs(np, b, "tf32_trunc")  # truncates ...
    got = tensor_core([(ta, tb)], 8)
    ra, rb = round_inputs(np, a, "tf32"), round_inputs(np, b, "tf32")  # ... checked as round-to-nearest
    _, norm = errors(got, a, b, ref=ra.astype(np.float64) @ rb.astype(np.float64))
    assert norm > 2 * tolerance.normwise("tf32", k, rounded_reference=True)


def test_tolerances_follow_k_not_a_fixed_number():
    for precision in ("fp32", "3xtf32", "tf32", "bf16"):
        small = tolerance.normwise(precision, 512, rounded_reference=True)
        large = tolerance.normwise(precision, 8192, rounded_reference=True)
        assert small < large
        assert tolerance.componentwise(precision, 512) < tolerance.componentwise(precision, 8192)
    assert tolerance.normwise("fp32", 4096, rounded_reference=False) < 1e-5 / 2


def test_every_rung_takes_its_tolerance_from_the_model():
    for r in LADDER:
        rounded = r.rounding != "fp32" or r.inputs != "fp32"
        if r.normwise_tol is None:
            assert r.normwise_tolerance(4096) == tolerance.normwise(r.precision, 4096, rounded_reference=rounded)
        assert r.componentwise_tolerance(257) == tolerance.componentwise(r.precision, 257)
    fixed = [r.name for r in LADDER if r.normwise_tol is not None]
    assert fixed == ["cublas_tf32"]  # its rounding is undocumented: the model cannot hold it to one


def test_the_seed_check_allows_fp8_its_accumulation_and_nothing_more():
    """FP8's seed tolerance covers the 1.017e-3 both FP8 rungs (cuBLASLt's included) gave on the H200
    at 509 x 383 x 257, and stays far below a dropped k32 step (~1e-1 at K = 257); every other
    precision keeps the seed's 1e-3."""
    from rooflab.model.tolerance import SEED_RTOL, seed_max_rel

    assert all(seed_max_rel(p, k) == SEED_RTOL for p in ("fp32", "tf32", "bf16", "3xtf32") for k in (1, 257, 8192))
    assert seed_max_rel("fp8", 257) > 1.5 * 1.017e-3 and seed_max_rel("fp8", 257) < 32 / 257 / 10
    assert seed_max_rel("fp8", 8192) == seed_max_rel("fp8", 128)  # the sum is promoted every 128 k
    assert seed_max_rel("fp8", 1) == SEED_RTOL
