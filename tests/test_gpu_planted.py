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
        assert [c["name"] for c in rec["checks"]][-1] == "deterministic"
        assert "concurrent" in rec["checks"][-1]["reference"]


def test_determinism_runs_when_timed_size_is_the_check_size(device):
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=300, n=200, k=100, reps=2, check_n=512, kernels=["tiled16"]), device)
    names = [c["name"] for c in sec["rungs"][0]["checks"]]
    assert names[-1] == "deterministic" and "guard zones" in names


def test_copy_kernels_guard_their_destination(device):
    from rooflab.measure.bandwidth import BandwidthConfig, run

    sec = run(BandwidthConfig(n=1_000_003, reps=50, rounds=1, sweep=False), device)
    runs = [r for row in sec["sweep"] for r in row["runs"]] + sec["memcpy"]
    assert runs and all(r["verified"] and r.get("guard_touched") == 0 for r in runs)
