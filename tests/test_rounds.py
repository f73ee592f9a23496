"""Interleaved timing rounds (gemm --rounds): samples merged, rungs timed in turn, a failing round
ends its rung, ratios spread over the rounds."""

import pytest

from rooflab.cuda.timing import Timing, merge_rounds
from rooflab.cuda.telemetry import merge_summaries
from rooflab.errors import UsageError
from rooflab.measure import gemm
from rooflab.measure.proven import Proven
from rooflab.model.check import Check


def _tel(lo, med, hi, reasons, samples=5):
    stat = {"min": lo, "median": med, "max": hi}
    return {"samples": samples, "sm_mhz": stat, "mem_mhz": stat, "power_w": stat, "temp_c": stat,
            "sm_mhz_start": lo, "sm_mhz_end": hi, "reasons": reasons, "throttled": False}


def test_merge_rounds_keeps_every_sample_and_each_rounds_median():
    a = Timing(times_ms=[1.0, 2.0, 3.0], warmup=1, l2_flushed=True, telemetry=_tel(1500, 1700, 1800, ["idle"]))
    b = Timing(times_ms=[5.0, 6.0, 7.0], warmup=1, l2_flushed=True,
               telemetry=_tel(1200, 1400, 1980, ["sw_power_cap"], samples=3))
    m = merge_rounds([a, b])
    assert m.times_ms == [1.0, 2.0, 3.0, 5.0, 6.0, 7.0]
    assert m.round_medians_ms == [2.0, 6.0]
    assert m.median_ms == 4.0 and m.l2_flushed
    tel = m.telemetry
    assert tel["samples"] == 8 and tel["sm_mhz"] == {"min": 1200, "median": 1550, "max": 1980}
    assert tel["reasons"] == ["idle", "sw_power_cap"]
    assert tel["sm_mhz_start"] == 1500 and tel["sm_mhz_end"] == 1980
    d = m.to_dict()
    assert d["reps"] == 6 and d["round_medians_ms"] == [2.0, 6.0]


def test_one_round_is_the_timing_itself_and_none_is_an_error():
    a = Timing(times_ms=[1.0], warmup=1, l2_flushed=False)
    assert merge_rounds([a]) is a and a.round_medians_ms is None
    with pytest.raises(ValueError):
        merge_rounds([])


def test_merged_telemetry_without_nvml_is_none_and_a_throttle_is_kept():
    assert merge_summaries([None, None]) is None
    t = merge_summaries([_tel(1, 2, 3, []), None, _tel(1, 2, 3, ["hw_slowdown"])])
    assert t["throttled"] is True and t["samples"] == 10


@pytest.mark.parametrize("rounds", [0, -1])
def test_rounds_below_one_are_refused(rounds):
    with pytest.raises(UsageError, match="--rounds"):
        gemm.GemmConfig(n=64, m=64, k=64, kernels=["cublas"], rounds=rounds).validate()


class _Inp:
    def __init__(self, rounds):
        self.cfg = gemm.GemmConfig(n=64, m=64, k=64, rounds=rounds)


def test_rounds_time_the_rungs_in_turn_and_a_failed_round_ends_its_rung(monkeypatch):
    order = []
    fail_b_at = 2  # b's second timing does not stand

    def ready(rung, inp, device, progress=None):
        rec = {"kernel": rung, "checks": [], "passed": rung != "c", "error": None, "timing": None}
        if rung == "c":  # failed its check: never timed
            return rec, None
        calls = {"n": 0}

        def timer():
            calls["n"] += 1
            order.append(rung)
            t = Timing(times_ms=[float(len(order))] * 3, warmup=1, l2_flushed=False)
            bad = rung == "b" and calls["n"] == fail_b_at
            return Proven(t, [Check("last timed launch", (64, 64, 64), "", "", float(bad), 0.0, not bad)],
                          "the last timed launch's output is wrong" if bad else None)

        return rec, timer

    monkeypatch.setattr(gemm, "ready_rung", ready)
    recs = gemm._run_all(["a", "b", "c"], _Inp(3), device=None, progress=None)
    assert order == ["a", "b", "a", "b", "a"]
    a, b, c = recs
    assert a["passed"] and a["timing"]["round_medians_ms"] == [1.0, 3.0, 5.0] and a["timing"]["reps"] == 9
    assert not b["passed"] and b["timing"] is None and "wrong" in b["error"]
    assert not c["passed"] and c["timing"] is None
    assert [ch["name"] for ch in a["checks"]] == ["last timed launch"] * 3


def _doc(rounds_a, rounds_b):
    def rec(name, rounds):
        times = [t for r in rounds for t in [r] * 3]
        return {"kernel": name, "passed": True, "timing": {"median_ms": sorted(times)[len(times) // 2],
                                                            "round_medians_ms": rounds}}
    return {"gemm": {"method": {"rounds": len(rounds_a)},
                     "rungs": [rec("naive", rounds_a), rec("coalesced", rounds_b)]}}


def test_ratio_table_shows_the_spread_over_rounds():
    from rooflab.report.gemm import ratio_table, round_ratios

    doc = _doc([10.0, 12.0, 11.0], [2.0, 2.0, 2.0])
    assert round_ratios(doc)["naive/coalesced"] == [5.0, 6.0, 5.5]
    t = ratio_table(doc)
    assert t.columns[-1] == "over 3 rounds"
    row = t.rows[0]
    assert str(row[2]).startswith("5.000–6.000×")
    assert "3 rounds" in t.notes[0]


def test_ratio_table_without_rounds_has_one_column():
    from rooflab.report.gemm import ratio_table

    doc = _doc([10.0], [2.0])
    doc["gemm"]["method"]["rounds"] = 1
    for r in doc["gemm"]["rungs"]:
        r["timing"]["round_medians_ms"] = None
    t = ratio_table(doc)
    assert t.columns == ["ratio", "this run"]
