"""model.arch: the FP64 and FP16 lanes per SM and the published L2 rate, by compute capability."""

from __future__ import annotations

import pytest

from rooflab.model import arch


def test_arch_fp64_fp16_rates():
    assert arch.fp64_lanes_per_sm((9, 0)) == 64 and arch.fp16_lanes_per_sm((9, 0)) == 256
    assert arch.fp64_lanes_per_sm((8, 0)) == 32 and arch.fp16_lanes_per_sm((8, 0)) == 256
    assert arch.fp64_lanes_per_sm((8, 9)) == 2 and arch.fp16_lanes_per_sm((8, 9)) == 128
    assert arch.fp64_lanes_per_sm((99, 0)) is None
    # H100/H200 at 1980 MHz: the whitepaper's 33.5 (FP64) and 133.8 (FP16 non-tensor) TFLOP/s
    assert 132 * 64 * 2 * 1980e6 == pytest.approx(33.45e12, rel=1e-3)
    assert 132 * 256 * 2 * 1980e6 == pytest.approx(133.8e12, rel=1e-3)
    assert arch.l2_bytes_per_clk((9, 0)) is None and arch.l2_bytes_per_clk((8, 0)) == 5120
