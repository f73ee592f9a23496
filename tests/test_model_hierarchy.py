"""model.hierarchy without a GPU: the binding level per kernel (constructed level profiles and a recorded
H200 one), the levels measured, fallen back to and published, the memory section's summary and
spread."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from rooflab.model.hierarchy import COMPUTE, Level, analyse, hierarchy, levels, memory_summary, rate_spread


from memory_fixtures import DATA, LABELS, MiB, doc, memory_section  # noqa: F401 (pytest fixtures)


def test_binding_levels_of_the_ladder(doc):
    h = hierarchy(doc)
    by = {k.label: k for k in h.kernels}
    assert set(by) == set(LABELS)  # the other recorded profiles predate the level metrics
    # naive: 16 sectors per warp-wide load of A: L1 traffic binds, far below the HBM slope's promise
    assert by["naive"].binding == "L1"
    assert by["naive"].attainable == pytest.approx(0.1176 * 31.2e12, rel=2e-3)
    assert by["naive"].pct_of_attainable == pytest.approx(100 * 0.9737 / 3.669, rel=5e-3)
    assert by["naive"].point("DRAM").attainable > 10 * by["naive"].attainable
    # coalesced: 4 sectors per step; against the whole-L2 slope (the constructed curve falls past half
    # the L2 to 5.22 TB/s at 48 MiB) its L2 roof is lower than its L1 roof
    assert by["coalesced"].binding == "L2"
    assert by["coalesced"].point("L2").attainable < by["coalesced"].point("L1").attainable
    # tiled: global traffic cut 32-fold; only the whole-L2 slope holds it near ~40 TFLOP/s, far above
    # what it achieves
    assert by["tiled32"].binding in ("L2", COMPUTE)
    assert by["tiled32"].attainable > 40e12 > 4 * by["tiled32"].achieved
    # copy: no FLOPs, judged by how busy each level was
    assert by["copy"].binding == "DRAM"
    assert by["copy"].attainable is None
    assert by["copy"].point("DRAM").pct_of_level > 90


def test_achieved_from_the_timed_rung(doc):
    k = next(k for k in hierarchy(doc).kernels if k.label == "naive")
    timed = next(r for r in doc["gemm"]["rungs"] if r["kernel"] == "naive")
    assert k.achieved_source.startswith("timed")
    assert k.achieved == pytest.approx(timed["flops"] / (timed["timing"]["median_ms"] * 1e-3))


def _levels(l1=30e12, l2=8e12, hbm=4e12) -> list[Level]:
    return [Level("L1", "L1/shared", l1, True, "t"), Level("L2", "L2", l2, True, "t"),
            Level("DRAM", "HBM", hbm, True, "t")]


def test_l2_bound_and_compute_bound_synthetic():
    F, peak = 1e12, 60e12
    # plenty of reuse in L1, little in L2: the L2 slope is nearest
    k = analyse("l2ish", F, {"L1": F / 50, "L2": F / 2, "DRAM": F / 20}, _levels(), peak, duration_s=0.2)
    assert k.binding == "L2"
    assert k.attainable == pytest.approx(2 * 8e12)
    # register-only FMA: bytes negligible everywhere
    k = analyse("fma", F, {"L1": 4096, "L2": 8192, "DRAM": 5120}, _levels(), peak, duration_s=F / 55e12)
    assert k.binding == COMPUTE
    assert k.attainable == pytest.approx(peak)
    assert k.pct_of_attainable == pytest.approx(100 * 55 / 60)
    # nothing moved through a level: infinite intensity there, never binding
    k = analyse("reg", F, {"L1": 0.0, "L2": 0.0, "DRAM": 0.0}, _levels(), peak, duration_s=1.0)
    assert k.binding == COMPUTE and math.isinf(k.point("L1").ai)
    assert json.dumps(k.to_dict())  # inf written as a string


def test_nsight_rule_is_lowest_attainable():
    """Binding = the level with the lowest min(peak, AI x BW), for random kernels."""
    rng = np.random.default_rng(3)
    peak = 60e12
    for _ in range(300):
        b = {key: float(10 ** rng.uniform(8, 13)) for key in ("L1", "L2", "DRAM")}
        F = float(10 ** rng.uniform(10, 13))
        k = analyse("r", F, b, _levels(), peak, duration_s=1.0)
        att = {p.level: p.attainable for p in k.points}
        low = min(att, key=att.get)
        if att[low] < peak:
            assert k.binding == low
            assert k.attainable == pytest.approx(att[low])
        else:
            assert k.binding == COMPUTE


def test_missing_level_is_not_judged():
    lv = [Level("L1", "L1/shared", 30e12, False, "t"), Level("DRAM", "HBM", 4e12, False, "t")]
    k = analyse("x", 1e12, {"L1": 1e12, "L2": 1e13, "DRAM": 1e11}, lv, 60e12, duration_s=1.0)
    assert [p.level for p in k.points] == ["L1", "DRAM"]
    assert k.binding == "L1"


def test_levels_measured(doc):
    lv = {x.key: x for x in levels(doc)}
    assert [x.key for x in levels(doc)] == ["L1", "L2", "DRAM"]
    assert all(x.measured for x in lv.values())
    assert lv["L1"].bandwidth == pytest.approx(31.2e12)
    assert lv["L2"].bandwidth == pytest.approx(5.22e12)  # the largest footprint up to 80% of the L2
    assert "48 MiB (whole L2)" in lv["L2"].source
    assert lv["L2"].beside == {"one partition (24 MiB)": 7.35e12, "best case (16 MiB)": 7.61e12}
    assert lv["DRAM"].bandwidth == pytest.approx(4.33e12)  # the 256 MiB row
    assert lv["L1"].theoretical == pytest.approx(132 * 128 * 1980e6)


def test_levels_fall_back(doc):
    d = copy.deepcopy(doc)
    del d["memory"]
    lv = {x.key: x for x in levels(d)}
    assert not lv["L1"].measured and lv["L1"].bandwidth == pytest.approx(132 * 128 * 1980e6)
    assert "L2" not in lv  # Hopper publishes no L2 bandwidth
    assert lv["DRAM"].measured and "copy" in lv["DRAM"].source  # the bandwidth section's best copy
    del d["bandwidth"]
    lv = {x.key: x for x in levels(d)}
    assert not lv["DRAM"].measured and lv["DRAM"].bandwidth == d["device"]["hbm_peak_bytes_per_s"]


def test_a100_has_a_published_l2(doc):
    d = {"device": {**doc["device"], "cc": [8, 0], "sm_count": 108, "sm_clock_max_mhz": 1410.0}}
    lv = {x.key: x for x in levels(d)}
    assert lv["L2"].bandwidth == pytest.approx(5120 * 1410e6)
    assert not lv["L2"].measured


def test_memory_summary(memory_section):
    s = memory_summary(memory_section)
    assert s["l2_footprint_bytes"] == 16 * MiB and s["l2_bytes_per_s"] == pytest.approx(7.61e12)
    assert s["cliff_footprint_bytes"] == 32 * MiB
    assert s["beyond_l2_footprint_bytes"] == 256 * MiB
    assert s["l2_over_beyond"] == pytest.approx(7.61 / 4.33)
    assert s["shared_conflict_slowdown"] == pytest.approx(31.2 / 3.95)
    assert s["shared_pct_of_theoretical"] == pytest.approx(100 * 31.2e12 / (132 * 128 * 1980e6))
    assert s["fp64_pct_of_theoretical"] == pytest.approx(100 * 32.6 / 33.454, rel=1e-3)
    assert s == memory_section["summary"]


def test_failed_rows_get_no_figure(memory_section):
    sec = copy.deepcopy(memory_section)
    for r in sec["l2_sweep"]["rows"]:
        if r["footprint_bytes"] == 16 * MiB:
            r["verified"] = False
    sec["shared"]["rows"][0]["verified"] = False
    s = memory_summary(sec)
    assert s["l2_footprint_bytes"] == 8 * MiB
    assert "shared_bytes_per_s" not in s and "shared_conflict_slowdown" not in s


def test_rate_spread():
    r = rate_spread([99.0, 100.0, 101.0])
    assert r["rate"] == 100.0 and r["spread_pct"] == pytest.approx(2.0)
    assert rate_spread([])["rate"] is None


def test_binding_levels_from_a_recorded_h200_profile():
    """Recorded on the H200 (rooflab report, 2026-11-30 15:16 UTC): ncu's L1, L2 and DRAM bytes with the
    shared-load wavefronts. The seed's kernels are bound by L1/shared (naive and coalesced by their
    uncached global traffic, the tiled ones by two shared loads per FMA), the pipelined rung and cuBLAS
    by the FP32 roof, the copy by HBM; a tensor-core rung is placed with its 2·M·N·K FLOPs (ncu counts only
    FP32 instructions) against its own tensor roof."""
    from rooflab.model.hierarchy import hierarchy

    doc = json.loads((DATA / "h200_report_levels.json").read_text())
    h = hierarchy(doc)
    binding = {k.label: k.binding for k in h.kernels}
    for label in ("naive", "coalesced", "tiled16", "tiled32"):
        assert binding[label] == "L1", (label, binding[label])
    assert binding["pipelined"] == binding["cublas"] == binding["fma"] == "compute"
    assert binding["copy"] == "DRAM"
    kl = {k.label: k for k in h.kernels}
    assert kl["cublas_bf16"].binding == "compute" and kl["cublas_bf16"].binding_name == "BF16 tensor compute"
    assert kl["cublas_bf16"].peak == doc["device"]["tensor_peaks"]["bf16"]
    assert kl["wgmma_3xtf32"].peak == pytest.approx(doc["device"]["tensor_peaks"]["tf32"] / 3)
    tiled = next(k for k in h.kernels if k.label == "tiled32")
    assert 0.7 < tiled.achieved / tiled.attainable < 0.9  # 82%: shared-memory bandwidth is its limit
