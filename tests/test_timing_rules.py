"""The timing rules without a GPU: the noise-based stop (sample until the median's relative spread
is below 0.5% or the budget ends, and say which), the CUDA-graph path for short kernels with its
fallback, and the flag on figures taken at a low SM clock or while NVML showed a throttle reason."""

from __future__ import annotations

import random
import types

import pytest

from rooflab.cuda import timing
from rooflab.cuda.timing import Timing, median_spread, stop_reason, time_until_stable


def test_median_spread():
    assert median_spread([1.0] * 4) is None  # too few to say
    assert median_spread([1.0] * 50) == 0.0
    rng = random.Random(0)
    noisy = [1.0 + rng.gauss(0, 0.05) for _ in range(100)]
    quiet = [1.0 + rng.gauss(0, 0.001) for _ in range(100)]
    assert median_spread(noisy) > 0.005 > median_spread(quiet)
    # more samples narrow the median's interval
    assert median_spread(noisy * 10) < median_spread(noisy)


def test_stop_reason():
    quiet = [1.0 + 1e-4 * (i % 3) for i in range(20)]
    assert stop_reason(quiet, 0.1, 5.0) == "converged"
    assert stop_reason(quiet[:5], 0.1, 5.0) is None  # below the minimum count: go on
    noisy = [1.0 + 0.1 * (i % 2) for i in range(20)]
    assert stop_reason(noisy, 0.1, 5.0) is None
    assert stop_reason(noisy, 5.0, 5.0) == "time budget"
    assert stop_reason(noisy * 200, 0.1, 5.0) == "max samples"


def _sampler(noise: float, seed: int = 1):
    rng = random.Random(seed)
    calls = {"n": 0}

    def sample(count: int) -> Timing:
        calls["n"] += 1
        return Timing([2.0 * (1 + rng.gauss(0, noise)) for _ in range(count)], warmup=0, l2_flushed=False)
    return sample, calls


def test_time_until_stable_converges_and_says_so():
    sample, calls = _sampler(0.002)
    clock = iter(range(1000))
    t = time_until_stable(sample, budget_s=100.0, chunk=10, clock=lambda: next(clock) * 0.01)
    assert t.stopped_by == "converged" and t.median_spread_pct < 0.5
    assert len(t.times_ms) == 10 * calls["n"] and t.to_dict()["stopped_by"] == "converged"


def test_time_until_stable_ends_at_the_budget():
    sample, calls = _sampler(0.2)
    clock = iter(range(1000))
    t = time_until_stable(sample, budget_s=0.05, chunk=10, clock=lambda: next(clock) * 0.01)
    assert t.stopped_by == "time budget" and t.median_spread_pct > 0.5
    assert calls["n"] >= 2


def test_short_kernels_replay_a_graph_and_fall_back(monkeypatch):
    """auto: a probe below 0.1 ms goes to a graph; a launch that cannot be captured to batched launches."""
    seen = []

    def fake_kernel(launch, *, label, reps=20, warmup=1, flush=None, pci_bus_id="", batch=1, before_last=None):
        seen.append(("events" if batch == 1 else "batched", batch))
        return Timing([0.005] * reps, warmup, False, method="events" if batch == 1 else "batched",
                      launches_per_sample=batch)

    def fake_graph(launch, *, label, reps, batch, warmup, pci_bus_id, before_last=None):
        seen.append(("graph", batch))
        return Timing([0.005] * reps, warmup, False, method="graph", launches_per_sample=batch)

    monkeypatch.setattr(timing, "time_kernel", fake_kernel)
    monkeypatch.setattr(timing, "time_graph", fake_graph)
    t = timing.time_launches(lambda: None, label="k", reps=5, method="auto")
    assert t.method == "graph" and seen[-1] == ("graph", 400)

    def no_capture(*a, **kw):
        raise timing.KernelError("k", "cudaStreamBeginCapture", "operation not permitted when stream is capturing")

    monkeypatch.setattr(timing, "time_graph", no_capture)
    assert timing.time_launches(lambda: None, label="k", reps=5, method="auto").method == "batched"
    with pytest.raises(timing.KernelError):
        timing.time_launches(lambda: None, label="k", reps=5, method="graph")


def test_graph_method_is_accepted_by_the_gemm_config():
    from rooflab.errors import UsageError
    from rooflab.measure.gemm import GemmConfig

    GemmConfig(timing="graph", kernels=["naive"]).validate()
    GemmConfig(budget_s=2.0, kernels=["naive"]).validate()
    with pytest.raises(UsageError):
        GemmConfig(budget_s=0.0, kernels=["naive"]).validate()


# ---------------------------------------------------------------- the clock flag


def _tel(median: float, reasons=(), throttled=False) -> dict:
    return {"samples": 10, "sm_mhz": {"min": median - 10, "median": median, "max": median + 10},
            "mem_mhz": {"median": 3201.0}, "power_w": {"max": 500.0}, "temp_c": {"max": 60.0},
            "reasons": list(reasons), "throttled": throttled}


def test_clock_flag():
    from rooflab.report.telemetry import clock_flag

    assert clock_flag(_tel(1980.0), 1980.0) is None
    assert clock_flag(_tel(1800.0, ["gpu_idle"]), 1980.0) is None  # 91%: fine
    low = clock_flag(_tel(1700.0), 1980.0)
    assert low.startswith("SM clock 1700 MHz (median), 86% of its 1980 MHz maximum")
    hot = clock_flag(_tel(1980.0, ["sw_thermal_slowdown"], True), 1980.0)
    assert "NVML throttle reasons: sw_thermal_slowdown" in hot
    assert clock_flag(None, 1980.0) is None


def test_flagged_figures_in_the_report():
    import copy
    import json
    from pathlib import Path

    from rooflab.report.gemm import gemm_table
    from rooflab.report.telemetry import warnings

    doc = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    assert not any("SM clock" in w for w in warnings(doc))
    d = copy.deepcopy(doc)
    rec = next(r for r in d["gemm"]["rungs"] if r["kernel"] == "tiled32")
    rec["timing"]["telemetry"] = _tel(1600.0)
    assert any(w.startswith("gemm tiled32: SM clock 1600 MHz (median), 81%") for w in warnings(d))
    t = gemm_table(d)
    row = next(r for r in t.rows if "TILE=32" in r[1] or "tiled" in r[1].lower() and "32" in r[1])
    assert "clock flagged" in row[-1]
