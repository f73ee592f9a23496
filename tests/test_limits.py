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
