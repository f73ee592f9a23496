"""GEMM ladder on a real GPU: every rung correct at awkward sizes; a planted race is caught."""

import dataclasses

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 7, 7), (33, 33, 33), (127, 127, 127), (512, 512, 512),
                                   (1000, 1000, 1000), (100, 37, 129)])
def test_every_rung_correct(device, shape):
    from rooflab.measure.gemm import GemmConfig, run

    m, n, k = shape
    sec = run(GemmConfig(m=m, n=n, k=k, reps=2, check_n=256), device)
    for rec in sec["rungs"]:
        assert rec["passed"], (rec["kernel"], rec["error"], rec["checks"])
        assert rec["timing"]["reps"] == 2
        assert all(c["passed"] for c in rec["checks"])


def test_cublas_is_deterministic_across_concurrent_streams(device):
    """At 1000x777x1234 cuBLAS picks kernels that use its workspace; with one handle shared by the 8
    concurrent replicas' streams, 0.8-3 M elements differed between runs (H200, 2026-11-30). One
    handle per stream gives every replica the bits of the sequential runs."""
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=1000, n=777, k=1234, reps=1, check_n=128,
                         kernels=["cublas", "cublas_tf32", "cublas_bf16"]), device)
    for rec in sec["rungs"]:
        det = [c for c in rec["checks"] if c["name"] == "deterministic"]
        assert det and det[0]["passed"], (rec["kernel"], det)


def test_timed_size_check_and_determinism(device):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=700, n=600, k=500, reps=2, check_n=128, kernels=["coalesced", "tiled16", "cublas"]),
              device)
    for rec in sec["rungs"]:
        names = [c["name"] for c in rec["checks"]]
        per_shape = ["seed max-rel", "componentwise", "guard zones", "normwise", "componentwise", "guard zones"]
        # the check size, 509x383x257 (700x600x500 has no odd size), the timed size, determinism
        assert names == [*per_shape, *per_shape, "normwise", "componentwise", "guard zones", "deterministic",
                         "last timed launch", "roofline floor"], names
        shapes = [tuple(c["shape"]) for c in rec["checks"]]
        assert shapes[:6] == [(128, 128, 128)] * 6 and shapes[6:12] == [(509, 383, 257)] * 6
        assert rec["passed"]


def test_missing_barrier_is_never_a_pass_with_a_speed(device):
    from rooflab.measure.gemm import GemmConfig, _Inputs, run_rung
    from rooflab.rungs.tiled import TILED32

    planted = dataclasses.replace(TILED32, name="tiled32-nobarrier", options=("-DPLANT_MISSING_BARRIER",))
    cfg = GemmConfig(m=4096, n=4096, k=4096, reps=3, check_n=256)
    rec = run_rung(planted, _Inputs(cfg, seed=1234), device)
    assert not rec["passed"]
    assert rec["timing"] is None


def test_cublas_is_pure_fp32(device):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=2048, n=2048, k=2048, reps=2, kernels=["cublas"]), device)
    rec = sec["rungs"][0]
    norm = [c["value"] for c in rec["checks"] if c["name"] == "normwise"][-1]
    assert norm < 1e-5  # TF32 would be ~1e-4


def test_launch_failure_names_kernel_and_call(device):
    from rooflab.cuda.compile import get_kernel
    from rooflab.errors import KernelError

    k = get_kernel("rungs/naive.cu", "mm_naive")
    with pytest.raises(KernelError) as exc:
        k.launch((1, 1, 1), (2048, 1, 1), ())  # too many threads per block, and no args
    assert "mm_naive" in str(exc.value) and "cuLaunchKernel" in str(exc.value)


def test_l2_flush_between_reps(device):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=1024, n=1024, k=1024, reps=3, flush_l2=True, kernels=["tiled32"]), device)
    rec = sec["rungs"][0]
    assert rec["passed"] and rec["timing"]["l2_flushed"] and sec["method"]["l2_flushed"]
    tel = rec["timing"]["telemetry"]  # NVML is on every GPU machine this runs on
    assert tel["samples"] >= 2 and tel["sm_mhz_start"] > 0 and tel["sm_mhz_end"] > 0
    # a flushed rep reads A and B from DRAM again: slower than the same kernel with a warm L2
    warm = run(GemmConfig(m=1024, n=1024, k=1024, reps=3, kernels=["tiled32"]), device)["rungs"][0]
    assert rec["timing"]["min_ms"] > 0.98 * warm["timing"]["min_ms"]


def test_interleaved_rounds_time_every_rung_each_round(device):
    """--rounds: every rung's samples from each round, a median per round, the section still a valid record."""
    from rooflab.measure.gemm import GemmConfig, run
    from rooflab.report.gemm import ratio_table
    from rooflab.schema.gemm import Gemm

    sec = run(GemmConfig(m=300, n=200, k=100, reps=4, rounds=3, check_n=64, kernels=["naive", "coalesced"]), device)
    Gemm.from_dict(sec)
    assert sec["method"]["rounds"] == 3
    for rec in sec["rungs"]:
        assert rec["passed"], (rec["kernel"], rec["error"])
        t = rec["timing"]
        assert t["reps"] == 12 and len(t["round_medians_ms"]) == 3 and min(t["round_medians_ms"]) > 0
        assert [c["name"] for c in rec["checks"]].count("last timed launch") == 3
    table = ratio_table({"gemm": sec})
    assert table.columns[-1] == "over 3 rounds" and table.rows[0][2]
