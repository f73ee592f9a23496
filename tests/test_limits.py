"""Physical limits and the brackets around measured ceilings: no figure above its limit is a roof
(the recorded H200 document's 256 MiB "HBM" sweep ran at 1.03x the pin rate, its L2 read above
HBM; the L2 slope was the 1 MiB best case)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rooflab.model.hierarchy import hierarchy, levels
from rooflab.model.limits import Bracket, Limit, above_limit, compute_limit, hbm_limit, l2_limit, shared_limit
from rooflab.report.memory import hierarchy_table, l2_table, memory_paragraphs

DATA = Path(__file__).parent / "data"
MiB = 2**20


@pytest.fixture()
def doc() -> dict:
    return json.loads((DATA / "h200_report_levels.json").read_text())


def test_h200_limits(doc):
    dev = doc["device"]
    assert hbm_limit(dev).value == pytest.approx(2 * 3201e6 * 6016 / 8)
    assert "2 × 3201 MHz × 6,016 bit / 8" in hbm_limit(dev).basis
    assert compute_limit(dev, "fp32").value == pytest.approx(132 * 128 * 2 * 1980e6)
    assert compute_limit(dev, "fp64").value == pytest.approx(132 * 64 * 2 * 1980e6)
    # tensor: nominal dense FMA/SM/clk at the maximum clock (above the published rate's lower clock)
    assert compute_limit(dev, "bf16").value == pytest.approx(132 * 2048 * 2 * 1980e6)
    assert compute_limit(dev, "tf32").value == pytest.approx(132 * 1024 * 2 * 1980e6)
    assert compute_limit(dev, "3xtf32").value == pytest.approx(132 * 1024 * 2 * 1980e6 / 3)
    assert compute_limit(dev, "bf16").value > dev["tensor_peaks"]["bf16"]
    assert shared_limit(dev).value == pytest.approx(132 * 128 * 1980e6)
    assert l2_limit(dev).value is None and "no published limit" in l2_limit(dev).basis
    assert compute_limit({}, "fp32").value is None


def test_above_limit_names_the_contamination():
    pins = Limit(4.814e12, "pin rate")
    assert above_limit(4.80e12, pins, "DRAM") is None
    assert above_limit(4.85e12, pins, "DRAM") is None  # within noise
    err = above_limit(5.03e12, pins, "DRAM")
    assert err.startswith("faster than the pins: part of the footprint was served by the L2") and "1.045×" in err
    assert above_limit(70e12, Limit(66.9e12, "x"), "compute").startswith("faster than the units")
    assert above_limit(9e12, Limit(None, "none"), "L2") is None


def test_bracket_roof_and_witness():
    pins = Limit(4.814e12, "pin rate")
    b = Bracket("HBM read", "B/s", 4.335e12, "read_float4", 4.549e12, "CUB DeviceReduce::Sum", pins, "DRAM")
    assert b.error is None and "1.049×" in b.note and b.roof == 4.549e12
    b = Bracket("HBM read", "B/s", 5.03e12, "sweep", None, "", pins, "DRAM")
    assert b.error and b.roof is None
    assert json.dumps(b.to_dict())


def test_hbm_slope_within_the_pins(doc):
    lv = {x.key: x for x in levels(doc)}
    pins = hbm_limit(doc["device"]).value
    assert lv["DRAM"].bandwidth <= pins
    # the single read pass over 1 GiB (17x the L2), not the 256 MiB sweep that stayed partly in the L2
    assert lv["DRAM"].bandwidth == pytest.approx(doc["bandwidth"]["directions"]["read"]["gbs"] * 1e9)
    assert "one pass over 1 GiB" in lv["DRAM"].source
    assert len(lv["DRAM"].rejected) == 1 and "256 MiB" in lv["DRAM"].rejected[0]
    assert "faster than the pins" in lv["DRAM"].rejected[0]


def test_contaminated_hbm_never_a_roof(doc):
    """Even with nothing else measured, the sweep above the pins is refused: the pin rate is drawn."""
    d = copy.deepcopy(doc)
    del d["bandwidth"]
    d["memory"]["summary"]["beyond_l2_bytes_per_s"] = 5.03e12
    for r in d["memory"]["l2_sweep"]["rows"]:
        if r["footprint_bytes"] == 256 * MiB:
            r["rate"] = 5.03e12
    lv = {x.key: x for x in levels(d)}
    assert not lv["DRAM"].measured and lv["DRAM"].bandwidth == pytest.approx(hbm_limit(d["device"]).value)
    assert "5.03 TB/s" in lv["DRAM"].rejected[0]
    h = hierarchy(d)
    assert all(x.bandwidth <= 4.82e12 for x in h.levels if x.key == "DRAM")
    notes = " ".join(hierarchy_table(d).notes)
    assert "HBM, refused as a roof: 5.03 TB/s" in notes and "HBM 4.81 TB/s (theoretical" in notes


def test_l2_slope_is_the_whole_l2_figure(doc):
    lv = {x.key: x for x in levels(doc)}["L2"]
    assert lv.bandwidth == pytest.approx(9.0637e12, rel=1e-4)  # 48 MiB, not the 1 MiB 12.36 TB/s
    assert "48 MiB (whole L2)" in lv.source
    assert lv.beside["one partition (24 MiB)"] == pytest.approx(9.068e12, rel=1e-3)
    assert lv.beside["best case (1 MiB)"] == pytest.approx(12.357e12, rel=1e-3)


def test_l2_table_and_paragraph_flag_the_pins(doc):
    t = l2_table(doc)
    by_fp = {r[0]: r[4] for r in t.rows}
    assert by_fp["256"] == "1.03× (above the pins: L2 hits)"
    assert by_fp["1"] == "2.57×"  # inside the L2: no flag
    notes = " ".join(t.notes)
    assert "256 MiB: faster than the pins" in notes and "The L2 roof drawn: 9,064 GB/s at 48 MiB" in notes
    text = dict(memory_paragraphs(doc))["L2 bandwidth and the cliff to HBM"]
    assert "the data now streams from HBM" not in text
    assert "That cannot be HBM" in text and "faster than the pins" in text
    assert "meets 9.06 TB/s (at 48 MiB)" in text


# ---------------------------------------------------------------- the ceilings, bracketed


def _with_read_variants(doc: dict) -> dict:
    d = copy.deepcopy(doc)
    dirs = d["bandwidth"]["directions"]
    dirs["read_variants"] = [
        {"label": "read_float4_unroll<8, 0>", "kernel": "read_float4_unroll<8, 0>", "verified": True,
         "gbs": 4580.0, "grid": 2112, "waves": 2, "block": 256},
        {"label": "read_float4_unroll<16, 0>", "kernel": "read_float4_unroll<16, 0>", "verified": False,
         "timing": None},
    ]
    dirs["read_cub"] = {"label": "CUB DeviceReduce::Sum", "verified": True, "gbs": 4549.0}
    dirs["write_memset"] = {"label": "cudaMemsetAsync", "verified": True, "gbs": 3380.0}
    return d


def test_brackets_of_the_recorded_run(doc):
    from rooflab.model.brackets import brackets

    by = {b.name: b for b in brackets(doc)}
    copy_b = by["HBM copy (read + write)"]
    assert copy_b.witness_what == "cudaMemcpy device-to-device" and copy_b.error is None
    assert copy_b.witness <= copy_b.ceiling <= copy_b.limit.value
    swept = by["HBM read, swept beyond the L2"]
    assert swept.error and "faster than the pins" in swept.error and swept.roof is None
    assert by["L2 read, whole L2"].limit.value is None  # Hopper: no published L2 limit
    fp32 = by["FP32 CUDA cores"]
    assert fp32.witness_what.startswith("cublas GEMM") and fp32.witness < fp32.ceiling < fp32.limit.value


def test_read_bracket_names_the_best_read_and_its_witness(doc):
    from rooflab.model.brackets import brackets

    rd = {b.name: b for b in brackets(_with_read_variants(doc))}["HBM read"]
    assert rd.ceiling == pytest.approx(4580e9) and "read_float4_unroll<8, 0>, grid 2,112 (2 waves)" == rd.ceiling_what
    assert rd.witness == pytest.approx(4549e9) and rd.witness_what == "CUB DeviceReduce::Sum"
    assert rd.roof == pytest.approx(4580e9) and rd.error is None and rd.note is None
    # a witness above rooflab's kernel is noted, and becomes the roof
    d = _with_read_variants(doc)
    d["bandwidth"]["directions"]["read_cub"]["gbs"] = 4610.0
    rd = {b.name: b for b in brackets(d)}["HBM read"]
    assert rd.roof == pytest.approx(4610e9) and "the device can do more than rooflab's kernel" in rd.note


def test_bracket_table_in_the_report(doc):
    from rooflab.model.placement import roofline
    from rooflab.report.ceilings import bracket_table
    from rooflab.report.document import files

    t = bracket_table(_with_read_variants(doc))
    rows = {r[0]: r for r in t.rows}
    assert rows["HBM read"][1] == "GB/s" and rows["HBM read"][2] == "4,549"
    assert rows["HBM read"][3] == "CUB DeviceReduce::Sum"
    assert rows["HBM read"][6] == "4,814" and rows["HBM read"][10] == "ok"
    swept = rows["HBM read, swept beyond the L2"]
    assert swept[10].startswith("ERROR") and swept[9] is None
    assert rows["L2 read, whole L2"][6] == "no published limit"
    md = files(doc, roofline(doc))["report.md"]
    assert "**Ceilings, bracketed**" in md.split("\n## ")[1] and "ERROR: above the physical limit" in md  # in the summary


def test_p7_written_from_the_run(doc):
    from rooflab.report.explain_ceilings import bandwidth_paragraphs

    text = bandwidth_paragraphs(_with_read_variants(doc))[0][1]
    assert "is what this memory delivers" not in text
    assert "read at 4,580 GB/s (95.1%, read_float4_unroll<8, 0>" in text
    assert "lifted the read from 4,275 GB/s" in text
    assert "CUB's DeviceReduce::Sum, the vendor's read path, reached 4,549 GB/s (94.5%)" in text
    assert "cudaMemsetAsync 3,380 GB/s" in text and "Writes cost more" in text


# ---------------------------------------------------------------- Nsight Compute's evidence per level


def _levels_profile(hit=99.4, dram_l2=2e6, dram_read_share=0.995, l2_rate=9.10e12, hbm_rate=4.28e12):
    """Constructed ncu figures for the three level launches (bytes in, duration chosen for a rate)."""
    l2_bytes = 18.1e9
    return [
        {"level": "L2", "what": "one partition (24 MiB)", "footprint_bytes": 24 * MiB, "kernel_bytes": l2_bytes,
         "metrics": {"lts__t_sector_hit_rate.pct": hit, "dram__bytes_read.sum": dram_l2, "dram__bytes_write.sum": 0.0,
                     "lts__t_bytes.sum": l2_bytes, "gpu__time_duration.sum": l2_bytes / 9.07e12}},
        {"level": "L2", "what": "whole L2 (48 MiB)", "footprint_bytes": 48 * MiB, "kernel_bytes": l2_bytes,
         "metrics": {"lts__t_sector_hit_rate.pct": hit, "dram__bytes_read.sum": dram_l2, "dram__bytes_write.sum": 0.0,
                     "lts__t_bytes.sum": l2_bytes, "gpu__time_duration.sum": l2_bytes / l2_rate}},
        {"level": "DRAM", "what": "read_float4, one pass over 1 GiB", "footprint_bytes": 2**30,
         "kernel_bytes": 2**30 * 1.015625,
         "metrics": {"lts__t_sector_hit_rate.pct": 1.0, "dram__bytes_read.sum": dram_read_share * 2**30 * 1.015625,
                     "dram__bytes_write.sum": 0.0, "gpu__time_duration.sum": 2**30 / hbm_rate}},
    ]


def test_level_evidence_proves_the_levels(doc):
    from rooflab.model.level_evidence import cross_check, level_evidence

    d = copy.deepcopy(doc)
    d["profile"]["levels"] = _levels_profile()
    ev = level_evidence(d)
    assert [e.proven for e in ev] == [True, True, True]
    assert ev[1].ncu_rate == pytest.approx(9.10e12) and cross_check(9.0637e12, ev[1]) is None
    assert "L2 hit rate 99.4%" in ev[1].why
    notes = " ".join(hierarchy_table(d).notes)
    assert "Nsight Compute, L2 whole L2 (48 MiB): L2 hit rate 99.4%, DRAM bytes 0.01% of the bytes read: hits the L2" \
        in notes
    assert "against the measured 9.06 TB/s, within 3%" in notes
    assert "HBM read_float4, one pass over 1 GiB: DRAM bytes read 99.5% of the bytes read" in notes


def test_level_evidence_refuses_and_disagrees(doc):
    from rooflab.model.level_evidence import cross_check, level_evidence

    d = copy.deepcopy(doc)
    d["profile"]["levels"] = _levels_profile(hit=80.0, dram_l2=3e9, dram_read_share=0.6, l2_rate=10.0e12)
    ev = level_evidence(d)
    assert [e.proven for e in ev] == [False, False, False]
    assert "-9.4%" in cross_check(9.0637e12, ev[1])
    notes = " ".join(hierarchy_table(d).notes)
    assert "NOT shown to hit the L2" in notes and "NOT shown to come from DRAM" in notes and "DISAGREE" in notes


def test_level_targets():
    from rooflab.measure.profiling import level_targets

    t = level_targets(60 * MiB, 256 * 2**20)
    assert [(x["level"], x["footprint_bytes"] // MiB) for x in t] == [("L2", 24), ("L2", 48), ("DRAM", 1024)]
    assert t[0]["args"] == ["--size", str(24 * MiB)] and t[2]["label"] == "read_stream"


def test_the_picture_says_which_l2_figure_it_draws(doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    fig = plot_levels(doc, tmp_path / "levels.png")
    legend = " ".join(t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts())
    assert "L2: measured 9.06 TB/s, working sets spanning the L2 (read over 48 MiB)" in legend
    assert "HBM: measured 4.27 TB/s" in legend and "5.03" not in legend and "4.94" not in legend
