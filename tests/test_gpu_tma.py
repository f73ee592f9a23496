"""The TMA-fed wgmma rungs (BF16; TF32 and 3xTF32 on the persistent body) on a Hopper GPU (sm_90): correct and deterministic at 1x1x1, odd
shapes (TMA's zero fill plus the padded copy where a row pitch is not 16 bytes), K = 4097 and
N = 8190, every variant, the overlapped 3xTF32 promotion bit for bit the flushed one, both tensor-map
encoders. Elsewhere they are skipped, saying why."""

import dataclasses
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

NAMES = ["wgmma_bf16_tma", "wgmma_bf16_tma_ws", "wgmma_bf16_persistent", "wgmma_bf16_cluster", "wgmma_bf16_tma_store",
         "wgmma_tf32_tma", "wgmma_tf32_swap", "wgmma_3xtf32_tma", "wgmma_3xtf32_swap"]


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


@pytest.fixture(scope="module")
def hopper(device):
    if tuple(device.cc) != (9, 0):
        pytest.skip(f"sm_90a code; this GPU is sm_{device.cc[0]}{device.cc[1]}")
    return device


def _run(device, m, n, k, check_n=256, kernels=NAMES, reps=2):
    from rooflab.measure.gemm import GemmConfig, run

    return run(GemmConfig(m=m, n=n, k=k, reps=reps, check_n=check_n, kernels=list(kernels)), device)["rungs"]


def _assert_passed(recs):
    for rec in recs:
        assert rec["passed"], (rec["kernel"], rec["error"], rec["checks"])
        names = {c["name"] for c in rec["checks"]}
        assert {"normwise", "guard zones"} <= names, names
        assert rec["timing"]["reps"] >= 1


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 7, 7), (33, 33, 33), (100, 37, 129), (127, 129, 64),
                                   (512, 512, 512), (1000, 777, 1234), (257, 300, 4097), (192, 8190, 200),
                                   (1, 8190, 4097)])
def test_correct_at_awkward_shapes(hopper, shape):
    recs = _run(hopper, *shape)
    _assert_passed(recs)
    for rec in recs:
        det = [c for c in rec["checks"] if c["name"] == "deterministic"]
        assert det and det[0]["passed"], (rec["kernel"], det)


def test_checked_at_the_timed_size(hopper):
    """At 2048 the normwise check against the GPU float64 product runs beside the one at 256."""
    recs = _run(hopper, 2048, 2048, 2048)
    _assert_passed(recs)
    for rec in recs:
        shapes = {tuple(c["shape"]) for c in rec["checks"] if c["name"] == "normwise"}
        assert (2048, 2048, 2048) in shapes, shapes


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_is_correct(hopper, name):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, _Inputs, run_rung

    rung = rungs.get(name)
    # N = 776 and 2048: C's rows are 16-byte multiples, so the TMA-store rung stores through TMA (the
    # partial last box clipped at N = 776, rows clipped at M = 1000); 777 and 8190: it stores directly
    for shape in ((1000, 777, 1234), (256, 8190, 4097), (1000, 776, 1234), (2100, 2048, 333), (1, 1, 1)):
        inp = _Inputs(GemmConfig(m=shape[0], n=shape[1], k=shape[2], reps=1, check_n=128), seed=7)
        for v in rung.variants:
            rec = run_rung(rung.with_variant(v), inp, hopper)
            assert rec["passed"], (v.label, shape, rec["error"], rec["checks"])


@pytest.mark.parametrize("flushed,overlapped,shapes", [
    ("mm_wgmma_3xtf32_tma_f1", "mm_wgmma_3xtf32_tma_overlap", ((1000, 777, 1234), (256, 8190, 4097), (64, 64, 100))),
    # flush 2's sums only where no k-tile is left short of a pass (the tail runs in groups of 1)
    ("mm_wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma_overlap2", ((1000, 777, 2048), (256, 520, 4096)))])
def test_the_overlapped_3xtf32_gives_the_flushed_bits(hopper, flushed, overlapped, shapes):
    """The overlapped promotion adds the same partials in the same order as the flushed kernel it
    mirrors (include/overlap.cuh): C bit for bit the same."""
    import numpy as np
    from test_gpu_fp8 import variant_outputs

    for shape in shapes:
        a, b = variant_outputs("wgmma_3xtf32_tma", (flushed, overlapped), shape)
        assert not np.isnan(a.view(np.float32)).any(), shape
        assert np.array_equal(a, b), (shape, int((a != b).sum()))


@pytest.mark.parametrize("name,plain,other", [
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_defer"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_c4"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_direct"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_direct_defer"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_cluster", "mm_wgmma_fp8_persistent_cluster_direct"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_direct_s7"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_spread8"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_spread32"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_cluster", "mm_wgmma_fp8_persistent_cluster_spread8"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_direct", "mm_wgmma_fp8_persistent_n192"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192", "mm_wgmma_fp8_persistent_n224"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192", "mm_wgmma_fp8_persistent_n192_b192"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224", "mm_wgmma_fp8_persistent_n224_b32"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224", "mm_wgmma_fp8_persistent_n224_a128"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224_a128", "mm_wgmma_fp8_persistent_n224_a128_g8"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224_a128", "mm_wgmma_fp8_persistent_n144"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_cluster"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_overlap"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_cluster_overlap"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_cluster_relay"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_cluster_overlap_relay"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144", "mm_wgmma_fp8_persistent_n144_cluster_b72"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224_a128", "mm_wgmma_fp8_persistent_n224_cluster"),
    ("wgmma_tf32_tma", "mm_wgmma_tf32_tma", "mm_wgmma_tf32_tma_cluster"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_cluster_relay"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192", "mm_wgmma_fp8_persistent_n192_cluster"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192", "mm_wgmma_fp8_persistent_n192_cluster_ownb"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192", "mm_wgmma_fp8_persistent_n192_pair"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_cluster_ownb"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_pair"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_a128"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_slot"),
    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n224_a128", "mm_wgmma_fp8_persistent_m192"),
    ("wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma_defer"),
    ("wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma_f1", "mm_wgmma_3xtf32_tma_f1_direct"),
    ("wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma_f1", "mm_wgmma_3xtf32_tma_f1_spread"),
    ("wgmma_3xtf32_swap", "mm_wgmma_3xtf32_swap_f2", "mm_wgmma_3xtf32_swap_f2_direct"),
    ("wgmma_tf32_tma", "mm_wgmma_tf32_tma", "mm_wgmma_tf32_tma_direct"),
    ("wgmma_tf32_swap", "mm_wgmma_tf32_swap", "mm_wgmma_tf32_swap_direct"),
    # a stage's operands in one TMA box each (B as it lies in a rank-3 map of 32-column chunks, its pitch padded
    # to whole chunks at N = 776 and 777): the same bytes in the same places, so the same C
    ("wgmma_tf32_tma", "mm_wgmma_tf32_tma", "mm_wgmma_tf32_tma_ab1"),
    ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_ab1"),
    ("wgmma_tf32_swap", "mm_wgmma_tf32_swap", "mm_wgmma_tf32_swap_a1"),
    ("wgmma_tf32_swap", "mm_wgmma_tf32_swap", "mm_wgmma_tf32_swap_ab1"),
    ("wgmma_3xtf32_swap", "mm_wgmma_3xtf32_swap_f2_direct", "mm_wgmma_3xtf32_swap_f2_direct_ab1")])
def test_the_epilogue_variants_store_the_same_c(hopper, name, plain, other):
    """A store deferred under the next tile's first MMAs (its flush sets the accumulator that the plain
    kernel adds to zero) or spread in parts over them, C staged whole for TMA stores, written from the registers,
    or tiles 192 or 224 columns wide (B in 32-row boxes), alone or in clusters: the same values of C, where a block walks many tiles
    (2100 x 2048, 1500 x 2048) and one (64 x 64), through TMA stores (N = 2048, 776) and directly (777), with K short of a flush group (100), short of the spread
    store's parts (333) and past them (4200: 33 FP8 k-tiles, more than 32 parts)."""
    import numpy as np
    from test_gpu_fp8 import variant_outputs

    for shape in ((2100, 2048, 333), (1500, 2048, 4200), (1000, 776, 1234), (1000, 777, 1234), (64, 64, 100)):
        a, b = (x.view(np.float32) for x in variant_outputs(name, (plain, other), shape))
        assert not np.isnan(a).any() and not np.isnan(b).any(), shape
        assert np.array_equal(a, b), (shape, int((a != b).sum()))


@pytest.mark.parametrize("via", ["ctypes", "cuda.bindings"])
def test_both_encoders_give_maps_the_kernel_reads(hopper, monkeypatch, via):
    """The same maps from cuda-python's bindings and from ctypes over libcuda, and a run on each."""
    from rooflab.cuda import tma
    from rooflab.cuda.gpu import cupy

    if via == "cuda.bindings":
        pytest.importorskip("cuda.bindings.driver")
    cp = cupy()
    a = cp.zeros((300, 4096), dtype=cp.uint16)
    for spec, ptr in zip(tma.operand_specs(300, 512, 4096), (a.data.ptr, a.data.ptr)):
        assert tma.encode(spec, ptr, via=via) == tma.encode(spec, ptr, via="ctypes")
    monkeypatch.setattr(tma, "encoder_name", lambda: via)
    monkeypatch.setattr(tma, "_cache", type(tma._cache)())
    _assert_passed(_run(hopper, 300, 512, 4096))


def test_the_tma_step_reaches_cublas_territory_at_4096(hopper):
    """Not a pass/fail bar on speed: every rung of the climb runs, passes, and is timed in one process."""
    recs = _run(hopper, 4096, 4096, 4096, check_n=512, kernels=["wgmma_bf16", *NAMES, "cublas_bf16"], reps=5)
    _assert_passed(recs)
    assert all(r["timing"]["median_ms"] > 0 for r in recs)


def test_skipped_with_a_reason_off_hopper(device):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, skip_reason

    other = dataclasses.replace(device, cc=(8, 0) if tuple(device.cc) == (9, 0) else tuple(device.cc))
    for name in NAMES:
        reason = skip_reason(rungs.get(name), GemmConfig(), other)
        if tuple(other.cc) != (9, 0):
            assert "sm_90a" in reason


_PLANTED = """
import dataclasses, json, sys
from rooflab import rungs
from rooflab.cuda.device import detect
from rooflab.measure.gemm import GemmConfig, _Inputs, run_rung
dev = detect()
rung = rungs.get(sys.argv[1])
rung = dataclasses.replace(rung, options=(*rung.options, "-DPLANT_SHORT_TX", "-DMBAR_TIMEOUT_NS=200000000ull"))
inp = _Inputs(GemmConfig(m=256, n=256, k=256, reps=1, check_n=128), seed=3)
rec = run_rung(rung, inp, dev)
after = run_rung(rungs.get("cublas_bf16"), inp, dev)
print(json.dumps({"rec": rec, "after": after["passed"]}, default=str), flush=True)
"""


@pytest.mark.parametrize("name", NAMES)
def test_a_stage_that_never_lands_fails_the_rung_instead_of_hanging(hopper, name):
    """A barrier waiting for bytes that never come gives up after the timeout: the kernel stores
    nothing, the rung FAILS its first check with no time taken, and the next rung of the same
    process still runs (no sticky CUDA error). In a process of its own, in case it hangs after all."""
    import json
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _PLANTED, name], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    rec = out["rec"]
    assert not rec["passed"] and rec["error"] is None and rec["timing"] is None, rec
    # the first value check fails (C left NaN-poisoned); the guard zones around C stay whole
    assert rec["checks"] and not rec["checks"][0]["passed"], rec["checks"]
    assert all(c["passed"] for c in rec["checks"] if c["name"] == "guard zones"), rec["checks"]
    assert out["after"], "cuBLAS after the planted rung did not pass: the context was left broken"
