import pytest

from rooflab.errors import UsageError
from rooflab.model.ridge import (
    SCALE_AI,
    all_ridges,
    classify,
    present_device_ridges,
    ridge_point,
    seed_ridges,
    trend_paragraph,
)
from rooflab.model.specs import SPECS


def test_ridge_point_units():
    assert ridge_point(989e12, 3.35e12) == pytest.approx(295.2, abs=0.1)
    assert ridge_point(1979e12, 3.35e12) == pytest.approx(590.7, abs=0.1)
    with pytest.raises(UsageError):
        ridge_point(1e12, 0)


def test_seed_ridges_sorted():
    rs = seed_ridges()
    assert [r.label for r in rs] == ["A100 BF16", "H100 BF16", "H100 FP8", "B200 FP4"]
    assert [r.ridge for r in rs] == sorted(r.ridge for r in rs)
    by = {r.label: r.ridge for r in rs}
    assert by["A100 BF16"] == pytest.approx(312 / 2.039, rel=1e-6)
    assert by["H100 BF16"] == pytest.approx(295, abs=0.5)
    assert by["H100 FP8"] == pytest.approx(591, abs=0.5)
    assert by["B200 FP4"] == pytest.approx(1125)
    assert "40GB" in rs[0].note and "201" in rs[0].note


def test_scale_kernel_is_memory_bound():
    assert SCALE_AI == 0.125
    for r in seed_ridges() + all_ridges():
        assert classify(SCALE_AI, r.ridge) == "memory-bound"
    assert classify(1000, 295) == "compute-bound"


def test_all_ridges_cover_table():
    rs = all_ridges()
    assert len(rs) == sum(1 + len(s.precisions) for s in SPECS)
    t4 = [r for r in rs if r.key == "t4"]
    assert [r.precision for r in t4] == ["fp32", "fp16"]


def test_trend_paragraph_has_numbers():
    text = trend_paragraph(seed_ridges())
    assert "153 < " in text and "295" in text and "591" in text and "1,125" in text
    assert "same 3.35 TB/s" in text
    assert "0.125" in text and "memory-bound" in text


def test_present_device_ridges():
    rs = present_device_ridges(66.9e12, 4.8e12, {"bf16": 989, "fp8": 1979}, name="H200")
    assert [r.precision for r in rs] == ["fp32", "bf16", "fp8"]
    assert rs[0].ridge == pytest.approx(66.9 / 4.8)
    assert rs[1].ridge == pytest.approx(989 / 4.8)
    assert present_device_ridges(8.14e12, 320e9, None)[0].ridge == pytest.approx(25.4, abs=0.05)
    assert rs[1].to_dict()["label"] == "H200 BF16 tensor"
