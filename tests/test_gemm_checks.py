"""The GEMM harness's checks on planted bugs that only a non-square shape or a componentwise
bound can see, run end to end against a fake CuPy (tests/fake_cupy.py): the kernels are Python
launchers computing in float32, so the harness's own code decides PASSED or FAILED."""

from __future__ import annotations

import numpy as np
import pytest

import fake_cupy
from rooflab.rungs.record import Rung


@pytest.fixture
def harness(monkeypatch):
    fake_cupy.install(monkeypatch)
    from rooflab.measure import gemm

    def run(launch, m, n, k, check_n=512, precision="fp32"):
        rung = Rung(name="mine", title="mine", stage="your kernel", explain="", loads_per_fma=None,
                    launcher=lambda M, N, K: (lambda a, b, c: launch(a, b, c, M, N, K)), precision=precision,
                    block=(0, 0, 0))
        cfg = gemm.GemmConfig(m=m, n=n, k=k, reps=2, check_n=check_n, kernels=["mine"], replicas=2, seed=7)
        return gemm.run(cfg, fake_cupy.device(), extra=[rung])["rungs"][0]

    return run


def fp32_gemm(a, b, c, M, N, K):
    c[...] = a.astype(np.float32) @ b.astype(np.float32)


def stride_k(a, b, c, M, N, K):
    """C indexed with row stride K instead of N: right at every square size."""
    value = (a.astype(np.float32) @ b.astype(np.float32)).ravel()
    rows, cols = np.divmod(np.arange(M * N), N)
    idx = rows * K + cols
    flat = c.reshape(-1)
    keep = idx < M * N
    flat[idx[keep]] = value[keep]


def one_element_off(a, b, c, M, N, K):
    fp32_gemm(a, b, c, M, N, K)
    c[M // 2, N // 3] *= np.float32(1 + 5e-4)


def failed(rec):
    return [ch for ch in rec["checks"] if not ch["passed"]]


@pytest.mark.parametrize("shape", [(1, 1, 1), (64, 64, 64), (600, 600, 600), (67, 45, 70)], ids=str)
def test_a_correct_fp32_kernel_passes_every_check(harness, shape):
    rec = harness(fp32_gemm, *shape)
    assert rec["passed"], failed(rec)
    assert rec["timing"] is not None
    names = {ch["name"] for ch in rec["checks"]}
    assert {"seed max-rel", "normwise", "componentwise", "guard zones", "deterministic"} <= names


def test_square_sizes_get_an_odd_non_square_check(harness):
    rec = harness(fp32_gemm, 256, 256, 256)
    shapes = {tuple(ch["shape"]) for ch in rec["checks"]}
    assert (509, 383, 257) in shapes and (256, 256, 256) in shapes
    # a non-square odd shape checked already needs no other
    rec = harness(fp32_gemm, 67, 45, 70)
    assert (509, 383, 257) not in {tuple(ch["shape"]) for ch in rec["checks"]}


@pytest.mark.parametrize("n", [64, 512, 1024])
def test_c_indexed_with_row_stride_k_is_failed_at_the_odd_shape(harness, n):
    rec = harness(stride_k, n, n, n)
    assert not rec["passed"] and rec["timing"] is None
    bad = failed(rec)
    assert tuple(bad[0]["shape"]) == (509, 383, 257), bad
    # every square-size check before it passed: only the odd shape sees the bug
    assert all(ch["passed"] for ch in rec["checks"] if tuple(ch["shape"]) == (min(n, 512),) * 3)


def test_one_element_5e4_off_is_failed_by_the_componentwise_bound(harness):
    rec = harness(one_element_off, 512, 512, 512)
    assert not rec["passed"] and rec["timing"] is None
    bad = failed(rec)
    assert [ch["name"] for ch in bad] == ["componentwise"], bad
    # the seed's max-relative check and the normwise check both let it through
    assert all(ch["passed"] for ch in rec["checks"] if ch["name"] in ("seed max-rel", "normwise"))


def test_a_nan_left_in_c_fails_componentwise_too():
    from rooflab.model.check import make_check

    a = np.ones((2, 3))
    b = np.ones((3, 2))
    ref, absprod = a @ b, np.abs(a) @ np.abs(b)
    got = ref.astype(np.float32)
    got[0, 0] = np.nan
    ch = make_check("componentwise", np, got, ref, shape=(2, 2, 3), inputs="", reference="", tol=1e-3,
                    absprod=absprod)
    assert not ch.passed and ch.unwritten == 1
    got = ref.astype(np.float32)
    ch = make_check("componentwise", np, got, ref, shape=(2, 2, 3), inputs="", reference="", tol=1e-3,
                    absprod=absprod)
    assert ch.passed and ch.value == 0 and "bound 1.0e-03" in ch.line()


def test_an_error_where_the_exact_result_is_zero_fails():
    from rooflab.model.check import make_check

    a, b = np.zeros((2, 3)), np.ones((3, 2))
    ref, absprod = a @ b, np.abs(a) @ np.abs(b)
    got = np.full((2, 2), 1e-30, np.float32)
    ch = make_check("componentwise", np, got, ref, shape=(2, 2, 3), inputs="", reference="", tol=1.0,
                    absprod=absprod)
    assert not ch.passed
