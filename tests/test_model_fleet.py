"""The pure many-GPU model: outliers, nccl-tests arithmetic, link theoretical rates and pair classes."""

from __future__ import annotations

import pytest

from rooflab.fleet import merge
from rooflab.model.fleet import nccl_math, outliers, topology
from rooflab.report import fleet as render

from fleet_fixtures import four, gpus_of, h200, scaled  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- outliers

def test_ten_percent_low_is_flagged_two_percent_is_not(four):
    found = outliers.find(gpus_of(four), pct=5.0)
    assert {o["uuid"] for o in found} == {"GPU-2"}
    assert {o["figure"] for o in found} == {"copy_gbs", "fma_tflops", "sgemm_tflops"}
    o = next(x for x in found if x["figure"] == "fma_tflops")
    assert o["against"] == "fleet median" and o["pct_of_reference"] == pytest.approx(100 * 0.90 / 0.99, rel=1e-9)


def test_threshold_option_is_respected(four):
    assert {o["uuid"] for o in outliers.find(gpus_of(four), pct=0.5)} == {"GPU-2", "GPU-3"}
    assert outliers.find(gpus_of(four), pct=15.0) == []
    doc = merge.merge([(d, None) for d in four], outlier_pct=0.5)
    assert doc["fleet"]["config"]["outlier_pct"] == 0.5 and len({o["uuid"] for o in doc["fleet"]["outliers"]}) == 2


def test_outlier_carries_the_telemetry_that_may_explain_it(h200):
    slow = scaled(h200, 0.9, uuid="GPU-hot", index=2)
    for row in slow["flops"]["rows"]:
        t = row["timing"]["telemetry"]
        t["reasons"], t["throttled"] = ["sw_thermal_slowdown"], True
        t["sm_mhz"]["median"] = 1600
        t["temp_c"]["max"] = 91
    slow["fleet_gpu"]["inventory_after"] = {"ecc": {"volatile": {"corrected": 3, "uncorrected": 0}},
                                            "clocks_mhz": {"sm_max": 1980}, "power_limit_w": 700}
    docs = [scaled(h200, 1.0, uuid="GPU-0"), scaled(h200, 1.0, uuid="GPU-1", index=1), slow]
    o = next(x for x in outliers.find(gpus_of(docs)) if x["uuid"] == "GPU-hot")
    text = " ".join(o["explanations"])
    assert "sw_thermal_slowdown" in text and "91 °C" in text and "3 corrected ECC" in text and "MHz" in text
    table = render.outlier_table(merge.merge([(d, None) for d in docs]))
    assert any("sw_thermal_slowdown" in str(r[-1]) for r in table.rows)


def test_baseline_single_document_and_fleet_document(h200):
    alone = [scaled(h200, 0.9, uuid="GPU-x")]
    assert outliers.find(gpus_of(alone)) == []  # nothing to compare one GPU with
    found = outliers.find(gpus_of(alone), baseline=h200)
    assert {o["against"] for o in found} == {"baseline"} and len(found) == 3
    old = merge.merge([(scaled(h200, 1.2, uuid="GPU-x"), None)])
    found = outliers.find(gpus_of([scaled(h200, 1.0, uuid="GPU-x")]), baseline=old)
    assert {o["figure"] for o in found} == {"copy_gbs", "fma_tflops", "sgemm_tflops"}
    assert outliers.find(gpus_of([scaled(h200, 1.0, uuid="GPU-y")]), baseline=old) == []  # no UUID match


# ---------------------------------------------------------------- arithmetic

@pytest.mark.parametrize(("n", "factor"), [(2, 1.0), (4, 1.5), (8, 1.75)])
def test_allreduce_bus_bandwidth(n, factor):
    assert nccl_math.busbw_factor("allreduce", n) == pytest.approx(factor)
    # 1 GiB in 4 ms: algbw 268.4 GB/s; busbw = algbw x 2(n-1)/n
    assert nccl_math.algbw_gbs(2**30, 4e-3) == pytest.approx(268.435456)
    assert nccl_math.busbw_gbs(2**30, 4e-3, n) == pytest.approx(268.435456 * factor)


def test_other_collectives_and_sizes():
    assert nccl_math.busbw_factor("allgather", 8) == pytest.approx(7 / 8)
    assert nccl_math.busbw_factor("broadcast", 8) == 1.0
    sizes = nccl_math.sizes(1024, 2**30, 4)
    assert sizes[0] == 1024 and sizes[-1] == 2**30 and len(sizes) == 11 and 16 * 2**20 in sizes
    assert len(nccl_math.sizes(1024, 2**30, 2)) == 21
    with pytest.raises(ValueError):
        nccl_math.busbw_factor("allreduce", 0)


def test_link_theoretical_rates():
    assert topology.nvlink_gbs(18, 4) == pytest.approx(478.125)  # H100/H200 NV18
    assert topology.nvlink_gbs(12, 3) == pytest.approx(300.0)  # A100 NV12
    assert topology.pcie_gbs(5, 16) == pytest.approx(63.0, abs=0.01)
    assert topology.pcie_gbs(4, 16) == pytest.approx(31.5, abs=0.01)
    assert topology.nvlink_gen(cc_major=9) == 4 and topology.nvlink_gen(arch="Ampere") == 3
    assert topology.nvlink_gen(nvml_version=6) == 4  # nvmlNvlinkVersion_t 6 = NVLink 4.0


def _gpu(bus, links, remote_type=None, remote=None, pcie=(5, 16)):
    return {"pci_bus_id": bus, "pcie": {"gen_max": pcie[0], "width_max": pcie[1]},
            "nvlink": {"links": [{"link": i, "active": True, "version": 6, "remote_bus_id": remote,
                                  "remote_type": remote_type} for i in range(links)]}}


def test_classify_pairs():
    a, b = "0000:07:00.0", "0000:0a:00.0"
    direct = topology.classify_pair(_gpu(a, 18, 0, b), _gpu(b, 18, 0, a), cc_major=9)
    assert (direct["type"], direct["label"], direct["theoretical_gbs"]) == ("NVLink", "NV18", pytest.approx(478.125))
    switch = topology.classify_pair(_gpu(a, 18, 2, "ffff:00:00.0"), _gpu(b, 18, 2, "ffff:00:00.0"), cc_major=9)
    assert switch["type"] == "NVLink (NVSwitch)" and switch["theoretical_gbs"] == pytest.approx(478.125)
    pcie = topology.classify_pair(_gpu(a, 0, pcie=(5, 16)), _gpu(b, 0, pcie=(4, 16)), p2p={"common_ancestor": "x"})
    assert pcie["type"] == "PCIe" and pcie["label"] == "PCIe gen4 x16" and pcie["theoretical_gbs"] == \
        pytest.approx(31.5, abs=0.01)
    host = topology.host_link(_gpu(a, 0))
    assert host["label"] == "PCIe gen5 x16" and host["theoretical_gbs"] == pytest.approx(63.0, abs=0.01)


# ---------------------------------------------------------------- checks

def test_a_failed_or_missing_copy_fails_the_links():
    from fleet_fixtures import links_section

    from rooflab.model.fleet.checks import links_failed

    assert not links_failed(links_section())
    assert links_failed(links_section(failed=((0, 1),)))
    assert links_failed({**links_section(), "sm_uni": [{"src": 0, "dst": 1, "verified": None, "error": "no run"}]})
    assert not links_failed({"devices": []})  # one GPU: no pair to copy between


def test_an_unavailable_or_unchecked_allreduce_says_why():
    from fleet_fixtures import allreduce_section

    from rooflab.model.fleet.checks import allreduce_problem

    assert allreduce_problem(allreduce_section()) is None
    assert allreduce_problem({"available": False, "reason": "NCCL not available"}) == \
        "all-reduce not measured: NCCL not available"
    assert "not measured" in allreduce_problem({"available": False, "error": "RuntimeError: x"})
    bad = allreduce_section()
    bad["rows"][1]["verified"] = False
    assert "FAILED" in allreduce_problem(bad)
