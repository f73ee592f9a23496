"""The planted bugs the issue names are FAILED by the harness itself, with no sanitizer:
a store one row past C (guard zones) and the register-tiled kernel without its second
barrier at N=1000 (determinism: repeated and concurrent runs). Both at N=1000, where their
values still pass."""

import dataclasses

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


def _run(device, rung, n=1000):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=n, n=n, k=n, reps=2, kernels=[rung.name]), device, extra=[rung])
    return sec["rungs"][0]


def test_store_one_row_past_c_is_failed(device):
    from rooflab import rungs

    planted = dataclasses.replace(rungs.get("tiled32"), name="tiled32-row-past", options=("-DPLANT_ROW_PAST",))
    rec = _run(device, planted)
    assert not rec["passed"] and rec["timing"] is None
    bad = [c for c in rec["checks"] if not c["passed"]]
    assert bad[0]["name"] == "guard zones" and bad[0]["value"] >= 1, rec["checks"]
    # the values themselves were right: only the guard zones saw it
    assert all(c["passed"] for c in rec["checks"] if c["name"] in ("normwise", "seed max-rel"))


def test_regtile_without_second_barrier_is_failed_at_1000(device):
    from rooflab import rungs

    planted = dataclasses.replace(rungs.get("regtile"), name="regtile-nobarrier",
                                  options=("-DPLANT_MISSING_BARRIER",))
    rec = _run(device, planted)
    assert not rec["passed"] and rec["timing"] is None, rec["checks"]


def test_the_unplanted_kernels_pass_the_same_checks(device):
    from rooflab import rungs

    for name in ("tiled32", "regtile"):
        rec = _run(device, rungs.get(name))
        assert rec["passed"], rec["checks"]
        names = [c["name"] for c in rec["checks"]]  # the checks, then the timed launches' own
        assert names[names.index("deterministic"):] == ["deterministic", "last timed launch", "roofline floor"], names
        assert "concurrent" in rec["checks"][names.index("deterministic")]["reference"]


def test_determinism_runs_when_timed_size_is_the_check_size(device):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=300, n=200, k=100, reps=2, check_n=512, kernels=["tiled16"]), device)
    names = [c["name"] for c in sec["rungs"][0]["checks"]]
    assert names[names.index("deterministic"):] == ["deterministic", "last timed launch", "roofline floor"], names
    assert "guard zones" in names


def test_copy_kernels_guard_their_destination(device):
    from rooflab.measure.bandwidth import BandwidthConfig, run

    sec = run(BandwidthConfig(n=1_000_003, reps=50, rounds=1, sweep=False), device)
    runs = [r for row in sec["sweep"] for r in row["runs"]] + sec["memcpy"]
    assert runs and all(r["verified"] and r.get("guard_touched") == 0 for r in runs)


# ---------------------------------------------------------------- what only some checks see

PLANTED = __import__("pathlib").Path(__file__).parent / "data" / "kernels" / "planted.cu"


def _user(device, kernel, n=1000):
    from rooflab.targets import CudaKernel

    return _run(device, CudaKernel(str(PLANTED), kernel, block=(16, 16)).rung("gemm"), n=n)


def test_the_planted_kernels_twin_passes(device):
    rec = _user(device, "sgemm_ok")
    assert rec["passed"], rec["checks"]


@pytest.mark.parametrize("n", [1000, 1024, 4096])
def test_c_indexed_with_row_stride_k_is_failed_at_the_odd_shape(device, n):
    rec = _user(device, "sgemm_stride_k", n)
    assert not rec["passed"] and rec["timing"] is None
    bad = [c for c in rec["checks"] if not c["passed"]]
    assert tuple(bad[0]["shape"]) == (509, 383, 257), rec["checks"]


def test_one_element_5e4_off_is_failed_by_the_componentwise_bound(device):
    rec = _user(device, "sgemm_one_off")
    assert not rec["passed"] and rec["timing"] is None
    bad = [c for c in rec["checks"] if not c["passed"]]
    assert bad[0]["name"] == "componentwise", rec["checks"]
    assert all(c["passed"] for c in rec["checks"] if c["name"] == "seed max-rel")


def _pipelined_kernel(*options):
    from rooflab import rungs
    from rooflab.targets import CudaKernel

    r = rungs.get("pipelined")
    v = r.variants[0]
    bm, bn = 128, 256  # the first variant's tile (pipelined.CONFIGS[0])
    return CudaKernel(str(r.source_path()), v.kernel, block=v.block, grid=f"cdiv(n,{bn}),cdiv(m,{bm})",
                      options=(*r.options, *options), shared_mem=v.shared_mem, label="pipelined-user")


def test_a_cp_async_wait_one_stage_short_is_failed_under_sanitize():
    import shutil

    from rooflab.measure import sanitize

    if not (shutil.which("compute-sanitizer") or __import__("os").path.exists("/usr/local/cuda/bin/compute-sanitizer")):
        pytest.skip("compute-sanitizer not installed")
    planted = sanitize.target_spec(_pipelined_kernel("-DPLANT_WAIT_SHORT"), "gemm")
    clean = sanitize.target_spec(_pipelined_kernel(), "gemm")
    planted["name"] = "pipelined-wait-short"
    sec = sanitize.run([planted, clean])
    bad, good = sec["kernels"]
    assert not bad["passed"] and any(c["name"] == "racecheck" and not c["passed"] for c in bad["checks"]), bad
    assert good["passed"], good


def test_bench_sanitize_fails_the_planted_pipeline_through_the_cli():
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from rooflab import rungs

    if not shutil.which("compute-sanitizer") and not os.path.exists("/usr/local/cuda/bin/compute-sanitizer"):
        pytest.skip("compute-sanitizer not installed")
    r = rungs.get("pipelined")
    v = r.variants[0]
    src = Path(__file__).resolve().parents[1] / "src"
    args = [sys.executable, "-m", "rooflab", "bench", str(r.source_path()), "--kernel", v.kernel,
            "--block", ",".join(map(str, v.block)), "--grid", "cdiv(n,256),cdiv(m,128)",
            "--shared-mem", str(v.shared_mem), "--option", "-DPLANT_WAIT_SHORT", "--n", "1000", "--vs", "",
            "--reps", "2", "--sanitize"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(src)})
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert "racecheck" in p.stdout and "FAILED" in p.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("shape", [(1, 1, 1), (509, 383, 257), (4096, 4096, 4096)], ids=str)
def test_no_built_in_rung_is_falsely_failed(device, shape):
    from rooflab.measure.gemm import GemmConfig, run

    m, n, k = shape
    sec = run(GemmConfig(m=m, n=n, k=k, reps=2, check_n=512), device)
    bad = {r["kernel"]: [c for c in r["checks"] if not c["passed"]] or r["error"]
           for r in sec["rungs"] if not r["passed"] and not r.get("skipped")}
    assert not bad, bad


def test_no_built_in_rung_is_falsely_failed_at_8192(device):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, run

    # naive and coalesced take minutes each at 8192, with the same arithmetic as tiled
    names = [x for x in rungs.names() if x not in ("naive", "coalesced")]
    sec = run(GemmConfig(m=8192, n=8192, k=8192, reps=2, kernels=names), device)
    bad = {r["kernel"]: [c for c in r["checks"] if not c["passed"]] or r["error"]
           for r in sec["rungs"] if not r["passed"] and not r.get("skipped")}
    assert not bad, bad
