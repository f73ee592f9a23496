"""model.ncu's memory levels: the L1 and L2 byte metrics asked for, parsed from ncu's CSV (the constructed
level fixtures, tests/data/*_constructed.*: see tests/data/README.md), the three intensities, profiles
that predate the level metrics, the dict round trip and the sum over a library's kernels."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.model import ncu
from rooflab.model.ncu import KernelProfile, combine, parse_csv


from memory_fixtures import DATA, LABELS, _profile


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
