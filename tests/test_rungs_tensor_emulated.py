"""The tensor-core rungs' data paths replayed lane by lane in numpy (tests/tensor_emulator.py), no GPU:
mma_tf32.cu, mma_3xtf32.cu, mma_bf16.cu and the wgmma BF16 kernels give the matrix product of their
rounded inputs at shapes that take every edge predicate, store nothing outside C, read shared memory
without bank conflicts, visit every tile once under grouped rasterisation; the 3xTF32 split keeps
FP32 accuracy."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tensor_emulator as em

# one partial tile per dimension, several k-tiles, the scalar path, a 2x2 grid; (136, 264, 80): both
# 16-byte paths with partial tiles; 45x33x70 and 129x257x100: the per-element paths; 130x260x72: the
# TF32 16-byte path beside the BF16 per-element one (260 % 8 != 0)
SHAPES = [(16, 8, 8), (45, 33, 70), (136, 264, 80), (130, 260, 72), (129, 257, 100), (70, 130, 38),
          (200, 264, 136)]
# the wgmma replay is slow: one shape per loader path (16-byte chunks with edge tiles; per element)
WG_SHAPES = [(136, 264, 80), (45, 33, 70), (200, 264, 136)]
MMA = ["mma_tf32", "mma_3xtf32", "mma_bf16"]
WGMMA = {"mm_wgmma_bf16": (2, None), "mm_wgmma_bf16_wg3": (3, None), "mm_wgmma_bf16_ws": (2, 128)}
GUARD = 64
SENTINEL = -12345.0


@functools.cache
def _inputs(shape):
    m, n, k = shape
    rng = np.random.default_rng(shape)
    return rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)


def _reference(kernel, a, b):
    """The product the kernel forms from its rounded inputs, exactly (float64)."""
    if kernel == "mma_tf32":
        return em.tf32_rna(a).astype(np.float64) @ em.tf32_rna(b).astype(np.float64)
    if kernel == "mma_3xtf32":  # big x big + small x big + big x small
        ab, bb = em.tf32_rna(a).astype(np.float64), em.tf32_rna(b).astype(np.float64)
        as_ = em.tf32_rna(a - ab.astype(np.float32)).astype(np.float64)
        bs = em.tf32_rna(b - bb.astype(np.float32)).astype(np.float64)
        return as_ @ bb + ab @ bs + ab @ bb
    return em.bf16_value(em.f32_to_bf16_bits(a)) @ em.bf16_value(em.f32_to_bf16_bits(b))


@functools.cache
def _replay(kernel, shape):
    """C inside a sentinel band, NaN where nothing was stored, after one replay; and its reference."""
    m, n, k = shape
    a, b = _inputs(shape)
    buf = np.full(m * n + 2 * GUARD, np.nan)
    buf[:GUARD] = buf[-GUARD:] = SENTINEL
    c = buf[GUARD:-GUARD]
    if kernel in ("mma_tf32", "mma_3xtf32"):
        em.run_tf32_kernel(a.ravel(), b.ravel(), m, n, k, "tf32" if kernel == "mma_tf32" else "3x", c)
    elif kernel == "mma_bf16":
        em.run_bf16_kernel(em.f32_to_bf16_bits(a).ravel(), em.f32_to_bf16_bits(b).ravel(), m, n, k, c)
    else:
        wgs, loader_threads = WGMMA[kernel]
        em.run_wgmma_kernel(em.f32_to_bf16_bits(a).ravel(), em.f32_to_bf16_bits(b).ravel(), m, n, k, c, wgs, 4,
                            loader_threads)
    return buf, _reference(kernel, a, b)


def _assert_product(buf, ref):
    m, n = ref.shape
    assert np.all(buf[:GUARD] == SENTINEL) and np.all(buf[-GUARD:] == SENTINEL), "a store outside C"
    got = buf[GUARD:-GUARD].reshape(m, n)
    assert not np.isnan(got).any(), f"{int(np.isnan(got).sum())} elements of C never stored"
    assert np.abs(got - ref).max() <= 1e-12


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kernel", MMA)
def test_the_mma_sync_data_path_computes_the_product(kernel, shape):
    _assert_product(*_replay(kernel, shape))


@pytest.mark.parametrize("shape", WG_SHAPES)
@pytest.mark.parametrize("kernel", list(WGMMA))
def test_the_wgmma_data_path_computes_the_product(kernel, shape):
    _assert_product(*_replay(kernel, shape))


def test_a_wrong_product_is_caught():
    buf, ref = _replay("mma_bf16", SHAPES[1])
    off = buf.copy()
    off[GUARD + 7] += 2**-20
    with pytest.raises(AssertionError):
        _assert_product(off, ref)
    off = buf.copy()
    off[-1] = 0.0
    with pytest.raises(AssertionError, match="outside C"):
        _assert_product(off, ref)


def test_fragment_loads_are_free_of_bank_conflicts():
    for kernel in MMA:
        for shape in SHAPES:
            _replay(kernel, shape)
    assert set(em.CONFLICTS) == {f"{p} {op}" for p in ("tf32", "3x") for op in ("A ldmatrix", "B lds32")} | {
        "bf16 A ldmatrix", "bf16 B ldmatrix.trans"}
    assert em.CONFLICTS == dict.fromkeys(em.CONFLICTS, 0)


def test_the_bank_bookkeeping_sees_a_conflict():
    em.note_lds32("planted stride-32 lds32", np.arange(32) * 128)  # every lane in bank 0
    em.note_ldmatrix("planted ldmatrix", np.arange(32) * 128)  # 8 rows in one 16-byte bank group
    try:
        assert em.CONFLICTS["planted stride-32 lds32"] == 31
        assert em.CONFLICTS["planted ldmatrix"] == 7
    finally:
        del em.CONFLICTS["planted stride-32 lds32"], em.CONFLICTS["planted ldmatrix"]


@pytest.mark.parametrize(("gm", "gn"), [(1, 1), (3, 5), (17, 4), (64, 32)])
def test_grouped_rasterisation_covers_every_tile_once(gm, gn):
    seen = [em.raster(p, gm, gn) for p in range(gm * gn)]
    assert sorted(seen) == [(i, j) for i in range(gm) for j in range(gn)]


def test_the_3xtf32_split_keeps_fp32_accuracy():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 10**6).astype(np.float32)
    b = rng.uniform(-1, 1, 10**6).astype(np.float32)
    ab, as_ = em.split_bits(a.view(np.uint32))
    bb, bs = em.split_bits(b.view(np.uint32))

    def f(u):
        return u.view(np.float32).astype(np.float64)

    exact = a.astype(np.float64) * b.astype(np.float64)
    three = f(as_) * f(bb) + f(ab) * f(bs) + f(ab) * f(bb)
    assert (np.abs(three - exact) / np.abs(exact)).max() < 2.0**-20
    assert (np.abs(f(ab) * f(bb) - exact) / np.abs(exact)).max() > 2.0**-12  # one TF32 product alone does not
    # a K = 4096 dot product, the three terms accumulated in float64: the split's share of the normwise
    # error (the FP32 accumulation on the GPU adds about 1e-6 on top)
    a = rng.uniform(-1, 1, (64, 4096)).astype(np.float32)
    b = rng.uniform(-1, 1, (4096, 64)).astype(np.float32)
    abig, asmall = (f(x) for x in em.split_bits(a.view(np.uint32)))
    bbig, bsmall = (f(x) for x in em.split_bits(b.view(np.uint32)))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err3 = np.linalg.norm(asmall @ bbig + abig @ bsmall + abig @ bbig - ref) / np.linalg.norm(ref)
    err1 = np.linalg.norm(em.tf32_rna(a).astype(np.float64) @ em.tf32_rna(b).astype(np.float64) - ref) \
        / np.linalg.norm(ref)
    assert err3 < 1e-6 < err1
