import pytest

from rooflab.model.peaks import (
    fp32_peak,
    implied_clock_hz,
    nominal_tensor_fma,
    spec_peaks,
    tensor_arithmetic,
)
from rooflab.model.specs import SPECS, find_spec


def test_fp32_peak_h100_sxm():
    p = fp32_peak(132, 128, 1.98e9)
    assert p.flops / 1e12 == pytest.approx(66.9, abs=0.05)
    assert p.flops_forgot_fma == pytest.approx(p.flops / 2)
    assert p.error_pct == pytest.approx(50.0)
    assert "132" in p.formula and "128" in p.formula and "66.91" in p.formula
    assert p.to_dict()["error_pct"] == pytest.approx(50.0)


def test_fp32_peak_t4():
    assert fp32_peak(40, 64, 1.59e9).flops / 1e12 == pytest.approx(8.14, abs=0.01)


def test_tensor_arithmetic_h100_bf16():
    t = tensor_arithmetic(989e12, 132, 1.98e9, 128, "bf16", cc=(9, 0))
    assert t.flop_per_cycle == pytest.approx(499_495, abs=1)
    assert t.flop_per_sm_per_cycle == pytest.approx(3784, abs=0.5)
    assert t.fma_per_sm_per_cycle == pytest.approx(1892, abs=0.5)
    assert t.cuda_core_fma_per_sm_per_cycle == 128
    assert t.ratio == pytest.approx(14.8, abs=0.05)
    # NVIDIA's 989 TFLOP/s is 2048 dense FMA/SM/cycle at ~1830 MHz, not at the 1980 MHz boost
    assert t.nominal_fma_per_sm_per_cycle == 2048
    assert t.implied_clock_hz / 1e6 == pytest.approx(1830, abs=2)


def test_implied_clock():
    assert implied_clock_hz(312e12, 108, 2048) / 1e6 == pytest.approx(1410.6, abs=0.5)


def test_nominal_table_scales_with_precision_and_unknown_is_none():
    assert nominal_tensor_fma((9, 0), "fp8")[0] == 4096
    assert nominal_tensor_fma((9, 0), "tf32")[0] == 1024
    assert nominal_tensor_fma((6, 1)) is None
    t = tensor_arithmetic(1e14, 10, 1e9, 64)
    assert t.implied_clock_hz is None and t.nominal_fma_per_sm_per_cycle is None


def test_every_published_rate_implies_a_clock_near_boost():
    # The per-arch table is right only if every published rate lands at a plausible clock.
    for s in SPECS:
        for p, t in spec_peaks(s).by_precision.items():
            assert t.implied_clock_hz is not None, (s.key, p)
            assert 0.8 * s.clock_hz < t.implied_clock_hz < 1.02 * s.clock_hz, (s.key, p)


def test_spec_peaks_t4_uses_fp16():
    sp = spec_peaks(find_spec("t4"))
    assert sp.tensor.precision == "fp16"
    assert sp.tensor.fma_per_sm_per_cycle == pytest.approx(511, abs=1)
    d = sp.to_dict()
    assert d["fp32"]["flops"] == pytest.approx(8.1408e12)
    assert set(d["by_precision"]) == {"fp16"}
