"""The memory hierarchy without a GPU: ncu's L1/L2 byte counts, the three intensities,
the binding level per kernel, the tables, paragraphs and picture, spec-only mode, and the pure
helpers of the harness (footprints, emulations) against brute-force versions of the kernels' loops.

The level fixtures (tests/data/*_constructed.*) are CONSTRUCTED, not recorded: see tests/data/README.md.
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from rooflab.errors import UsageError
from rooflab.model import arch, ncu
from rooflab.model.hierarchy import (
    COMPUTE,
    Level,
    analyse,
    hierarchy,
    levels,
    memory_summary,
    rate_spread,
)
from rooflab.model.ncu import KernelProfile, combine, parse_csv

DATA = Path(__file__).parent / "data"
SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"
LABELS = ("naive", "coalesced", "tiled32", "copy")
MiB = 2**20


def _profile(label: str) -> KernelProfile:
    return combine(label, parse_csv((DATA / f"ncu_{label}_levels_constructed.csv").read_text()))


@pytest.fixture(scope="module")
def memory_section() -> dict:
    return json.loads((DATA / "h200_memory_constructed.json").read_text())


@pytest.fixture
def doc(memory_section) -> dict:
    """The recorded H200 results with the constructed level profiles and memory section."""
    d = json.loads((DATA / "h200_results.json").read_text())
    lv = {label: _profile(label).to_dict() for label in LABELS}
    d["profile"]["kernels"] = [lv.get(k["label"], k) for k in d["profile"]["kernels"]]
    d["memory"] = copy.deepcopy(memory_section)
    return d


@pytest.fixture
def spec_doc() -> dict:
    from rooflab import results
    from rooflab.lab import spec_device_entry

    return results.new_document("rooflab test", spec_device_entry("h200"))


# ---------------------------------------------------------------- ncu: three levels


def test_level_metrics_requested():
    assert ncu.L1_BYTES == "l1tex__t_bytes.sum" and ncu.L2_BYTES == "lts__t_bytes.sum"
    assert set(ncu.LEVEL_METRICS) <= set(ncu.METRICS)
    from rooflab.measure.profiling import command

    metrics = command("naive", ncu="ncu")[command("naive", ncu="ncu").index("--metrics") + 1].split(",")
    assert ncu.L1_BYTES in metrics and ncu.L2_BYTES in metrics


@pytest.mark.parametrize("label", LABELS)
def test_constructed_fixture_parses_every_metric(label):
    rows = parse_csv((DATA / f"ncu_{label}_levels_constructed.csv").read_text())
    assert len(rows) == 1
    missing = [m for m in ncu.METRICS if m not in rows[0]["metrics"] and m not in ncu.STATE_METRICS]  # STATE: later
    assert not missing
    assert all(isinstance(v, float) and math.isfinite(v) for v in rows[0]["metrics"].values())


def test_constructed_fixture_keeps_the_recorded_columns():
    """Same ncu format as the recorded copy profile: every recorded metric, same values."""
    rec = parse_csv((DATA / "ncu_copy.csv").read_text())[0]
    con = parse_csv((DATA / "ncu_copy_levels_constructed.csv").read_text())[0]
    assert rec["name"] == con["name"]
    assert {k: v for k, v in con["metrics"].items() if k in rec["metrics"]} == rec["metrics"]
    assert set(con["metrics"]) - set(rec["metrics"]) == {f"{m}.{s}" for m in ("l1tex__t_bytes", "lts__t_bytes")
                                                        for s in ("avg", "max", "min", "sum")}


def test_level_bytes_and_intensities():
    p = _profile("naive")
    assert p.l1_bytes == 1_168_499_539_968  # 2^31 warp-steps x 17 sectors x 32 B + C
    assert p.l2_bytes == 96_636_764_160
    assert p.fp32_flops == pytest.approx(2 * 4096**3)
    assert p.ai_l1 == pytest.approx(p.fp32_flops / p.l1_bytes)
    assert p.ai_l1 == pytest.approx(0.1176, rel=1e-3)
    assert p.ai_l2 == pytest.approx(1.4222, rel=1e-3)
    assert p.ai_dram == p.ai == pytest.approx(8.865, rel=1e-3)
    assert p.ai_l1 < p.ai_l2 < p.ai_dram  # each level filters traffic for the next
    assert p.duration_s == pytest.approx(0.1412, rel=1e-3)


def test_copy_level_bytes():
    p = _profile("copy")
    assert p.l1_bytes == 2 * 2**30
    assert p.ai_l1 == p.ai_l2 == 0.0


def test_old_profiles_have_no_levels():
    p = combine("copy", parse_csv((DATA / "ncu_copy.csv").read_text()))
    assert p.l1_bytes is None and p.l2_bytes is None and p.ai_l1 is None and p.ai_l2 is None
    d = p.to_dict()
    assert d["l1_bytes"] is None and d["ai_l2"] is None


def test_level_fields_round_trip():
    p = _profile("coalesced")
    d = json.loads(json.dumps(p.to_dict()))
    q = KernelProfile.from_dict(d)
    assert q.l1_bytes == p.l1_bytes == d["l1_bytes"]
    assert q.ai_l2 == pytest.approx(d["ai_l2"])
    assert d["ai_dram"] == pytest.approx(p.ai)


def test_combine_sums_level_bytes():
    rows = [{"name": "a", "metrics": {ncu.L1_BYTES: 10.0, ncu.DURATION: 1e-3}},
            {"name": "b", "metrics": {ncu.L1_BYTES: 5.0, ncu.DURATION: 1e-3}}]
    assert combine("lib", rows).l1_bytes == 15.0


# ---------------------------------------------------------------- binding levels


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


# ---------------------------------------------------------------- levels: measured, fallback, theory


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


def test_arch_fp64_fp16_rates():
    assert arch.fp64_lanes_per_sm((9, 0)) == 64 and arch.fp16_lanes_per_sm((9, 0)) == 256
    assert arch.fp64_lanes_per_sm((8, 0)) == 32 and arch.fp16_lanes_per_sm((8, 0)) == 256
    assert arch.fp64_lanes_per_sm((8, 9)) == 2 and arch.fp16_lanes_per_sm((8, 9)) == 128
    assert arch.fp64_lanes_per_sm((99, 0)) is None
    # H100/H200 at 1980 MHz: the whitepaper's 33.5 (FP64) and 133.8 (FP16 non-tensor) TFLOP/s
    assert 132 * 64 * 2 * 1980e6 == pytest.approx(33.45e12, rel=1e-3)
    assert 132 * 256 * 2 * 1980e6 == pytest.approx(133.8e12, rel=1e-3)
    assert arch.l2_bytes_per_clk((9, 0)) is None and arch.l2_bytes_per_clk((8, 0)) == 5120


# ---------------------------------------------------------------- rendering


def test_tables(doc):
    from rooflab.report.memory import hierarchy_table, memory_tables

    tables = memory_tables(doc)
    assert [t.key for t in tables] == ["memory_l2", "memory_shared", "memory_peaks"]
    l2 = tables[0]
    assert len(l2.rows) == 14 + 1  # the sweep and the copy
    assert l2.rows[4][:3] == ["16", "0.27", "7,610"] and l2.rows[4][3] == "100%"
    assert l2.rows[-2][0] == "256" and l2.rows[-2][4] == "0.90×"
    assert l2.rows[-1][0].startswith("copy 16")
    shared = tables[1]
    assert shared.rows[0][1:3] == ["31.20", "93.3%"] and shared.rows[1][1] == "3.95"
    assert shared.rows[-1][:2] == ["theoretical", "33.45"]
    peaks = tables[2]
    assert peaks.rows[0][2:5] == ["32.60", "33.45", "97.4%"]
    assert peaks.rows[1][2:5] == ["130.10", "133.82", "97.2%"]
    h = hierarchy_table(doc)
    by = {r[0]: r for r in h.rows}
    assert by["naive"][8] == "L1/shared" and by["naive"][2] == "0.118"
    assert by["copy"][8] == "HBM" and "busy" in by["copy"][7]
    for t in [*tables, h]:
        assert t.to_markdown() and t.to_csv()


def test_paragraphs_use_the_numbers(doc):
    from rooflab.report.memory import memory_paragraphs

    paras = dict(memory_paragraphs(doc))
    assert set(paras) == {"L2 bandwidth and the cliff to HBM", "Shared-memory bandwidth and bank conflicts",
                          "FP64 and FP16 peaks", "Which level binds each kernel"}
    l2 = paras["L2 bandwidth and the cliff to HBM"]
    assert "7.61 TB/s" in l2 and "1.58× the HBM peak" in l2 and "two partitions of 30 MiB" in l2
    assert "first drops below it at 32 MiB" in l2
    assert "93.3% of the theoretical 33.45 TB/s" in paras["Shared-memory bandwidth and bank conflicts"]
    assert "7.9× slower" in paras["Shared-memory bandwidth and bank conflicts"]
    binds = paras["Which level binds each kernel"]
    assert "naive is bound by L1/shared traffic: its L1/shared AI 0.118 FLOP/B × 31.20 TB/s = 3.67" in binds
    assert "copy does no FLOPs; its busiest level is HBM" in binds
    # not canned: change the run and the text follows
    d = copy.deepcopy(doc)
    for r in d["memory"]["shared"]["rows"]:
        if r["variant"] == "conflict-free":
            r["rate"] = 25.0e12
    d["memory"]["summary"] = memory_summary(d["memory"])
    text = dict(memory_paragraphs(d))["Shared-memory bandwidth and bank conflicts"]
    assert "25.00 TB/s" in text and "74.7%" in text
    assert "× 25.00 TB/s" in dict(memory_paragraphs(d))["Which level binds each kernel"]


def test_errors_are_shown_not_hidden(doc):
    from rooflab.report.memory import memory_tables

    d = copy.deepcopy(doc)
    d["memory"]["fp16"] = {"label": "fp16", "verified": False, "error": "hfma2_chain<8>: NVRTC compile failed: x",
                           "rounds": []}
    d["memory"]["summary"] = memory_summary(d["memory"])
    peaks = memory_tables(d)[2]
    assert peaks.rows[1][-1] == "ERROR" and peaks.rows[1][2] is None
    assert any("NVRTC compile failed" in n for n in peaks.notes)


def test_picture(doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    png = tmp_path / "levels.png"
    fig = plot_levels(doc, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "naive: L1/shared" in texts and "L2 5.22 TB/s" in texts and "FP64 measured" in texts
    svg = tmp_path / "levels.svg"
    plot_levels(doc, svg)
    assert "<svg" in svg.read_text()[:500]


def test_picture_clamps_far_points(doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    d = copy.deepcopy(doc)
    fma = KernelProfile("fma", ["fma_chain<8>"], {ncu.FFMA: 7e10, ncu.DURATION: 2.2e-3, ncu.L1_BYTES: 4096.0,
                                                 ncu.L2_BYTES: 0.0, ncu.DRAM_READ: 5120.0})
    d["profile"]["kernels"].append(fma.to_dict())
    fig = plot_levels(d, tmp_path / "x.png")
    assert "clamped" in " ".join(t.get_text() for ax in fig.axes for t in ax.texts)


# ---------------------------------------------------------------- spec-only


def test_spec_only(spec_doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels
    from rooflab.report.memory import hierarchy_table, memory_paragraphs, memory_tables

    assert memory_tables(spec_doc) == [] and memory_paragraphs(spec_doc) == []
    assert hierarchy_table(spec_doc) is None
    h = hierarchy(spec_doc)
    assert h.kernels == [] and [lv.key for lv in h.levels] == ["L1", "DRAM"]
    assert not any(lv.measured for lv in h.levels)
    assert [r.precision for r in h.roofs] == ["fp32"]
    png = tmp_path / "spec.png"
    plot_levels(spec_doc, png)
    assert png.stat().st_size > 10_000


def test_old_results_have_no_hierarchy_table():
    from rooflab.report.memory import hierarchy_table, memory_paragraphs

    d = json.loads((DATA / "h200_results.json").read_text())  # profiles without L1/L2 bytes
    assert hierarchy_table(d) is None and memory_paragraphs(d) == []
    assert hierarchy({"device": None}) is None


def test_no_device_peak_no_picture(tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    with pytest.raises(UsageError):
        plot_levels({"device": {"name": "x"}}, tmp_path / "x.png")


# ---------------------------------------------------------------- harness helpers (pure)


def test_footprints():
    from rooflab.measure.memory import copy_footprint, l2_footprints

    assert [f // MiB for f in l2_footprints(60 * MiB)] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256]
    assert max(l2_footprints(40 * MiB)) == 256 * MiB and 44 * MiB in l2_footprints(40 * MiB)
    assert l2_footprints(60 * MiB, max_bytes=100 * MiB)[-1] == 96 * MiB
    assert all(f % 1024 == 0 for f in l2_footprints(6 * MiB))
    assert copy_footprint(60 * MiB) == 16 * MiB and copy_footprint(40 * MiB) == 8 * MiB


def _l2_walk(threads: int, iters: int, n4: int) -> np.ndarray:
    """l2_read's index walk, literally: how often each float4 is read."""
    count = np.zeros(n4, dtype=np.int64)
    step = threads % n4
    for t in range(threads):
        i0 = t % n4
        for _ in range(iters):
            idx = [i0]
            for _u in range(3):
                nxt = idx[-1] + step
                idx.append(nxt - n4 if nxt >= n4 else nxt)
            for i in idx:
                count[i] += 1
            nxt = idx[-1] + step
            i0 = nxt - n4 if nxt >= n4 else nxt
    return count


@pytest.mark.parametrize(("threads", "iters", "n4"), [(64, 3, 32), (96, 5, 160), (256, 2, 64), (32, 7, 1024)])
def test_l2_expected_sum_matches_the_walk(threads, iters, n4):
    from rooflab.measure.memory import l2_visit_counts

    counts = _l2_walk(threads, iters, n4)
    q, r = l2_visit_counts(threads, iters, n4)
    want = np.full(n4, q)
    want[:r] += 1
    assert np.array_equal(counts, want)


def _smem_kernel(lane_stride: int, step: int, mask: int, iters: int) -> np.ndarray:
    """smem_read's loop for one block, literally, in 32-bit arithmetic."""
    from rooflab.measure.memory import SMEM_UNROLL, smem_words

    words = smem_words()
    u_stride = 32 if lane_stride == 1 else 1
    out = np.zeros(256, dtype=np.uint32)
    for t in range(256):
        acc0 = acc1 = 0
        b = 0
        for _ in range(iters):
            for u in range(SMEM_UNROLL):
                x, y, z, w = (int(v) for v in words[(t & 31) * lane_stride + b + u * u_stride])
                acc0 = (acc0 + x + y) & 0xFFFFFFFF
                acc1 = (acc1 + z + w) & 0xFFFFFFFF
            b = (b + step) & mask
        out[t] = (acc0 + acc1) & 0xFFFFFFFF
    return out


@pytest.mark.parametrize("variant", ["conflict-free", "32-way conflict"])
def test_smem_emulation_matches_the_loop(variant):
    from rooflab.measure.memory import SMEM_VARIANTS, smem_emulate

    stride, step, mask, _w, _how = SMEM_VARIANTS[variant]
    assert np.array_equal(smem_emulate(stride, step, mask, 7), _smem_kernel(stride, step, mask, 7))
    big = smem_emulate(stride, step, mask, 123_457)  # the timed counts are checked as cheaply
    assert big.dtype == np.uint32 and len(set(big.tolist())) > 1


def test_smem_banks():
    """Conflict-free: each quarter-warp's 8 lanes cover the 32 banks once; stride 8: one bank group."""
    from rooflab.measure.memory import SMEM_F4, SMEM_VARIANTS

    for name, (stride, step, mask, wavefronts, _how) in SMEM_VARIANTS.items():
        for b in range(0, mask + 1, step):
            for u in range(4):
                u_stride = 32 if stride == 1 else 1
                f4 = [lane * stride + b + u * u_stride for lane in range(32)]
                assert max(f4) < SMEM_F4
                banks = [(4 * i + c) % 32 for i in f4 for c in range(4)]
                rows = {}
                for i in f4:
                    for c in range(4):
                        rows.setdefault((4 * i + c) % 32, set()).add((4 * i + c) // 32)
                assert max(len(r) for r in rows.values()) * 1 == wavefronts, name
                assert len(set(banks)) == (32 if stride == 1 else 4)


def test_dfma_emulation_is_exact():
    """With x = 0.5 numpy's a*x + y is a correctly rounded fused multiply-add."""
    from rooflab.measure.memory import DFMA_X, DFMA_Y, dfma_emulate

    def fma(a, x, y):
        return float(Fraction(a) * Fraction(x) + Fraction(y))

    t = np.arange(8, dtype=np.float64)
    accs = [t * 0.0009765625 + j for j in range(8)]
    for _ in range(2 * 16):
        accs = [np.array([fma(a, DFMA_X, DFMA_Y) for a in acc]) for acc in accs]
    s = np.zeros(8)
    for a in accs:
        s = s + a
    assert np.array_equal(dfma_emulate(256, 2)[:8], s)
    with pytest.raises(ValueError):
        dfma_emulate(8, 1, x=0.75)


def test_hfma2_emulation_is_exact():
    """Each step: the float64 value of a*x + y is exact (halves have 11 significant bits), so one
    rounding to float16 is the fused result; check against exact rationals."""
    from rooflab.measure.memory import HFMA_X, HFMA_Y, hfma2_emulate

    x, y = Fraction(float(np.float16(HFMA_X))), Fraction(float(np.float16(HFMA_Y)))
    a = np.float16(0.4921875)
    for _ in range(40):
        exact = Fraction(float(a)) * x + y
        assert Fraction(float(np.float64(a) * float(x) + float(y))) == exact
        a = np.float16(float(exact))
    out = hfma2_emulate(256, 4)
    assert out.shape == (256, 2) and out.dtype == np.float16 and np.all(np.isfinite(out))
    assert len({tuple(r) for r in out.view(np.uint16).tolist()}) > 32  # threads differ


def test_memory_config_validate():
    from rooflab.measure.memory import MemoryConfig

    MemoryConfig().validate()
    for bad in (MemoryConfig(rounds=0), MemoryConfig(reps=1), MemoryConfig(target_ms=0.0),
                MemoryConfig(parts=("l3",)), MemoryConfig(footprints=(1000,))):
        with pytest.raises(UsageError):
            bad.validate()


# ---------------------------------------------------------------- the kernels' machine code


def _sass(tmp_path, name: str) -> dict[str, str]:
    cubin = tmp_path / f"{name}.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-cubin", "-o", str(cubin), str(SRC / "ceilings" / name)],
                   check=True, capture_output=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    return {f.split()[0]: f for f in re.split(r"\n\s*Function : ", sass)[1:]}


needs_cuda_tools = pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")),
                                      reason="needs nvcc and cuobjdump")


@needs_cuda_tools
def test_smem_loop_is_lds128(tmp_path):
    for name, body in _sass(tmp_path, "smem.cu").items():
        loop = body[body.index("BAR.SYNC"):]  # after the fill
        loads = re.findall(r"\bLDS(\.\w+)?\b", loop)
        assert loads and all(m == ".128" for m in loads), (name, loads)
        assert not re.search(r"\b(LDG|LDL|STL)\b", body), name
        # the loop: LDS.128 and the adds that consume them, little else
        ops = [ln.split()[1] for ln in loop.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/\s+\w", ln)]
        ops = [o for o in ops if not o.startswith("@")]
        assert ops.count("LDS.128") >= 8 and ops.count("IADD3") >= 2 * ops.count("LDS.128"), name


@needs_cuda_tools
def test_l2_loads_bypass_l1(tmp_path):
    for name, body in _sass(tmp_path, "l2.cu").items():
        loads = re.findall(r"\bLDG\.E\.128(\.\w+)*", body)
        assert len(re.findall(r"LDG\.E\.128\.STRONG\.GPU", body)) >= 4, name  # ld.global.cg
        assert len(loads) == len(re.findall(r"LDG\.E\.128\.STRONG\.GPU", body)), name


@needs_cuda_tools
def test_fma_chains_are_dfma_and_hfma2(tmp_path):
    (body,) = _sass(tmp_path, "fma64.cu").values()
    assert body.count("DFMA") >= 128 and not re.search(r"\b(LDG|LDS|LDL|STL)\b", body)
    (body,) = _sass(tmp_path, "fma16.cu").values()
    assert not re.search(r"\b(LDG|LDS|LDL|STL)\b", body)
    # half the chains on the tensor-core pipe (HFMA2.MMA): without it sm_90 runs FP16 at the FP32 rate
    plain, mma = len(re.findall(r"HFMA2 ", body)), len(re.findall(r"HFMA2\.MMA ", body))
    assert plain >= 128 and mma >= 128 and 0.8 < mma / plain < 1.25, (plain, mma)


def test_half2_bits():
    from rooflab.measure.memory import HFMA_X, half2_bits

    b = int(half2_bits(HFMA_X))
    assert b & 0xFFFF == b >> 16 == int(np.float16(HFMA_X).view(np.uint16)) == 0x3BFE  # 1 - 2^-10, exact


def test_a_part_that_failed_whole_is_noted(doc):
    from rooflab.report.memory import memory_tables

    d = copy.deepcopy(doc)
    d["memory"]["l2_sweep"] = {"label": "l2", "verified": False, "error": "l2_read: NVRTC compile failed: y",
                               "rounds": []}
    d["memory"]["summary"] = memory_summary(d["memory"])
    l2 = memory_tables(d)[0]
    assert l2.rows[-1][0].startswith("copy") and any("NVRTC compile failed: y" in n for n in l2.notes)


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
