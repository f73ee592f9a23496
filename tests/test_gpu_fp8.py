"""The FP8 rung and its cuBLASLt peer on a GPU: correct and deterministic at 1x1x1, 7x7x7, odd shapes
(TMA's zero fill plus the padded copy where K is not a multiple of 16; the peer's padded copies),
K = 4097 and N = 8190, every variant, the overlapped promotion bit for bit the flushed one, e4m3
rounding on the GPU as torch rounds, a stage that never lands failing the rung instead of hanging,
both rungs timed beside each other. Off Hopper the wgmma
rung is skipped saying why, and below sm_89 the peer too."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

NAMES = ["wgmma_fp8", "wgmma_fp8_persistent", "cublaslt_fp8"]


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


@pytest.fixture(scope="module")
def hopper(device):
    if tuple(device.cc) != (9, 0):
        pytest.skip(f"sm_90a code; this GPU is sm_{device.cc[0]}{device.cc[1]}")
    return device


@pytest.fixture(scope="module")
def torch_fp8():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has no float8_e4m3fn")
    return torch


def _run(device, m, n, k, check_n=256, kernels=NAMES, reps=2):
    from rooflab.measure.gemm import GemmConfig, run

    return run(GemmConfig(m=m, n=n, k=k, reps=reps, check_n=check_n, kernels=list(kernels)), device)["rungs"]


def _assert_passed(recs):
    for rec in recs:
        assert rec["passed"], (rec["kernel"], rec["skipped"], rec["error"], rec["checks"])
        names = {c["name"] for c in rec["checks"]}
        assert {"normwise", "error vs FP32 inputs", "guard zones", "deterministic"} <= names, names
        assert all(c["passed"] for c in rec["checks"]), rec["checks"]
        assert rec["timing"]["reps"] >= 1


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 7, 7), (33, 33, 33), (100, 37, 129), (512, 512, 512),
                                   (1000, 777, 1234), (257, 300, 4097), (192, 8190, 200), (1, 8190, 4097)])
def test_correct_at_awkward_shapes(hopper, torch_fp8, shape):
    recs = _run(hopper, *shape)
    _assert_passed(recs)
    for rec in recs:
        checked = [c for c in rec["checks"] if c["name"] == "normwise"]
        assert "e4m3-rounded inputs" in checked[0]["reference"], checked


def test_checked_at_the_timed_size(hopper, torch_fp8):
    """At 2048 the normwise check against the GPU float64 product of the rounded inputs runs beside
    the one at 256."""
    recs = _run(hopper, 2048, 2048, 2048)
    _assert_passed(recs)
    for rec in recs:
        shapes = {tuple(c["shape"]) for c in rec["checks"] if c["name"] == "normwise"}
        assert (2048, 2048, 2048) in shapes, shapes


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_is_correct(hopper, torch_fp8, name):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, _Inputs, run_rung

    rung = rungs.get(name)
    for shape in ((1000, 777, 1234), (256, 8190, 4097), (1, 1, 1)):
        inp = _Inputs(GemmConfig(m=shape[0], n=shape[1], k=shape[2], reps=1, check_n=128), seed=7)
        for v in rung.variants:
            # every problem under the check size is also checked at the odd shape 509 x 383 x 257, where the tensor
            # core's own accumulation misses the seed's max-rel on all-positive inputs, as cuBLASLt's fast
            # accumulation does (H200, 2026-12-04; rooflab.model.tolerance): never a default, and given no time there
            if shape == (1, 1, 1) and "fast accumulation" in v.label:
                continue
            rec = run_rung(rung.with_variant(v), inp, hopper)
            assert rec["passed"], (v.label, shape, rec["error"], rec["checks"])


def variant_outputs(name, kernels, shape, seed=7):
    """C of each of a rung's variants (named by kernel) on the same inputs, as float32 bit patterns."""
    import numpy as np

    from rooflab import rungs
    from rooflab.cuda.gpu import cupy
    from rooflab.measure.gemm import GemmConfig, _Inputs, prepare

    cp = cupy()
    rung = rungs.get(name)
    by_kernel = {v.kernel: v for v in rung.variants}
    m, n, k = shape
    var = _Inputs(GemmConfig(m=m, n=n, k=k, reps=1, check_n=128), seed=seed).variant(rung)
    outs = []
    for kernel in kernels:
        launch, _ = prepare(rung.with_variant(by_kernel[kernel]), m, n, k)
        c = cp.full((m, n), cp.nan, dtype=cp.float32)
        launch(var.a, var.b, c)
        outs.append(cp.asnumpy(c).view(np.uint32))
    return outs


@pytest.mark.parametrize("name,flushed,overlapped", [
    ("wgmma_fp8", "mm_wgmma_fp8", "mm_wgmma_fp8_overlap"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_overlap"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_cluster", "mm_wgmma_fp8_persistent_cluster_overlap")])
def test_the_overlapped_promotion_gives_the_flushed_bits(hopper, name, flushed, overlapped):
    """The overlapped kernels add the same k-tile partials in the same order as the flushed ones
    (include/overlap.cuh; replayed in tests/test_overlap_promotion.py): C is bit for bit the same, with
    K in passes only (8192), passes and a tail (1234, 4097) and a tail only (100)."""
    import numpy as np

    for shape in ((1000, 777, 1234), (256, 8190, 4097), (512, 640, 8192), (64, 64, 100)):
        a, b = variant_outputs(name, (flushed, overlapped), shape)
        assert not np.isnan(a.view(np.float32)).any(), shape
        assert np.array_equal(a, b), (shape, int((a != b).sum()))


def test_the_gpu_rounds_to_e4m3_as_torch_does(device, torch_fp8):
    """The harness rounds the timed inputs on the GPU (CuPy, no float8 type): the same bits as torch's
    float8_e4m3fn cast."""
    from rooflab.cuda.gpu import cupy
    from rooflab.model import e4m3

    cp = cupy()
    x = cp.random.RandomState(5).uniform(-463, 463, 1 << 20, dtype=cp.float32)
    x[: 1 << 18] *= cp.float32(2.0**-10)
    ours = cp.asnumpy(e4m3.to_bits(cp, x))
    theirs = torch_fp8.from_dlpack(x).to(torch_fp8.float8_e4m3fn).view(torch_fp8.uint8).cpu().numpy()
    assert (ours == theirs).all()


_PLANTED = """
import dataclasses, json, sys
from rooflab import rungs
from rooflab.cuda.device import detect
from rooflab.measure.gemm import GemmConfig, _Inputs, run_rung
dev = detect()
rung = rungs.get("wgmma_fp8")
rung = rung.with_variant(rung.variants[int(sys.argv[1])])
rung = dataclasses.replace(rung, options=(*rung.options, "-DPLANT_SHORT_TX", "-DMBAR_TIMEOUT_NS=200000000ull"))
inp = _Inputs(GemmConfig(m=256, n=256, k=512, reps=1, check_n=128), seed=3)
rec = run_rung(rung, inp, dev)
after = run_rung(rungs.get("cublas_bf16"), inp, dev)
print(json.dumps({"rec": rec, "after": after["passed"]}, default=str), flush=True)
"""


@pytest.mark.parametrize("variant", [0, 1, 2], ids=["accurate", "fast", "overlapped"])
def test_a_stage_that_never_lands_fails_the_rung_instead_of_hanging(hopper, variant):
    """Each barrier wait gives up after MBAR_TIMEOUT_NS: nothing is stored, the rung FAILS its first
    check with no time taken, and the next rung of the process still runs. In a process of its own."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _PLANTED, str(variant)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    rec = out["rec"]
    assert not rec["passed"] and rec["error"] is None and rec["timing"] is None, rec
    # the first value check fails (C left NaN-poisoned); the guard zones around C stay whole
    assert rec["checks"] and not rec["checks"][0]["passed"], rec["checks"]
    assert all(c["passed"] for c in rec["checks"] if c["name"] == "guard zones"), rec["checks"]
    assert out["after"], "cuBLAS after the planted rung did not pass: the context was left broken"


def test_beside_cublaslt_at_4096(hopper, torch_fp8):
    """Not a bar on speed: both rungs and the BF16 rung they follow run, pass and are timed in one
    process, and the FP8 paragraph reads from the run."""
    from rooflab.report.climb import transitions as gemm_transitions

    recs = _run(hopper, 4096, 4096, 4096, check_n=512, kernels=["wgmma_bf16_tma_ws", *NAMES], reps=5)
    _assert_passed(recs)
    doc = {"device": {"tensor_peaks": {"fp8": 1979e12, "bf16": 989e12}}, "gemm": {"rungs": recs}}
    headings = [h for h, _p in gemm_transitions(doc)]
    assert "wgmma FP8 vs cuBLASLt FP8" in headings, headings


def test_skipped_with_a_reason_elsewhere(device):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, skip_reason

    for cc in ((8, 0), (8, 9)):
        other = dataclasses.replace(device, cc=cc)
        assert "sm_90a for FP8 wgmma" in skip_reason(rungs.get("wgmma_fp8"), GemmConfig(), other)
    other = dataclasses.replace(device, cc=(8, 0))
    reason = skip_reason(rungs.get("cublaslt_fp8"), GemmConfig(), other)
    assert "FP8 tensor cores" in reason or "torch" in reason
