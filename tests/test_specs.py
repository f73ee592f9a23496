import pytest

from rooflab.errors import UsageError
from rooflab.model.arch import fp32_cores_per_sm
from rooflab.model.specs import PRECISIONS, SPECS, find_spec, match_device_name


@pytest.mark.parametrize(
    "name, key",
    [
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("Tesla T4", "t4"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA A100-PCIE-40GB", "a100-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA B200", "b200"),
        ("h100", "h100-sxm"),
        ("H100-SXM", "h100-sxm"),
        ("b200", "b200"),
    ],
)
def test_find_spec_device_names(name, key):
    assert find_spec(name).key == key


@pytest.mark.parametrize("name", ["NVIDIA L40S", "NVIDIA H100 NVL", "NVIDIA GeForce RTX 4090 D", "nope", ""])
def test_other_parts_do_not_match(name):
    assert match_device_name(name) is None


def test_find_spec_unknown_raises_usage_error_listing_keys():
    with pytest.raises(UsageError) as exc:
        find_spec("nope")
    msg = str(exc.value)
    assert "\n" not in msg and "h100-sxm" in msg and "t4" in msg


def test_table_is_consistent():
    assert len({s.key for s in SPECS}) == len(SPECS)
    for s in SPECS:
        assert s.fp32_cores_per_sm == fp32_cores_per_sm(s.cc), s.key
        assert set(s.tensor_tflops) <= set(PRECISIONS), s.key
        assert s.source, s.key
        assert find_spec(s.key) is s
        assert find_spec(s.name) is s, s.name
        assert hash(s)
        for alias in s.aliases:
            assert alias == alias.lower() and find_spec(alias) is s, alias


def test_fp32_peaks():
    assert find_spec("h100-sxm").fp32_peak_tflops == pytest.approx(66.9, abs=0.05)
    assert find_spec("t4").fp32_peak_flops == pytest.approx(40 * 64 * 2 * 1.59e9)
    assert find_spec("t4").fp32_peak_tflops == pytest.approx(8.14, abs=0.01)


def test_turing_has_no_bf16():
    t4 = find_spec("t4")
    assert "bf16" not in t4.tensor_tflops
    with pytest.raises(UsageError):
        t4.peak_flops("bf16")


def test_spec_ridge_and_dict():
    h100 = find_spec("h100-sxm")
    assert h100.ridge("bf16") == pytest.approx(295.2, abs=0.1)
    d = h100.to_dict()
    assert d["tensor_tflops"]["bf16"] == 989.0 and d["cc"] == [9, 0]
