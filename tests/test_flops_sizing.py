"""measure/flops.py on a GPU whose architecture rooflab's table lacks, with the GPU faked: the
FMA launches are still sized to about --target-ms, and no % of a made-up peak is recorded. CPU only."""

from __future__ import annotations

import numpy as np
import pytest

from rooflab.cuda.device import DeviceInfo
from rooflab.measure import flops


class _FakeCupy:
    float32 = np.float32

    @staticmethod
    def empty(n, dtype=None):
        return np.empty(n, dtype=dtype)


class _Timing:
    median_ms = 10.0

    def to_dict(self):
        return {"median_ms": self.median_ms}


def _device(cc, cores):
    return DeviceInfo(index=0, name="NVIDIA test part", cc=cc, arch="sm_130", sm_count=132, fp32_cores_per_sm=cores,
                      sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=60 << 20,
                      memory_bytes=141 << 30)


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(flops, "cupy", lambda: _FakeCupy)
    monkeypatch.setattr(flops, "verify", lambda acc, **_k: 0.0)
    monkeypatch.setattr(flops, "get_kernel", lambda *_a: None)
    monkeypatch.setattr(flops, "time_kernel", lambda *_a, **_k: _Timing())


def test_unknown_architecture_sizes_launches_without_a_made_up_peak(fake_gpu):
    cfg = flops.FlopsConfig(accumulators=(8,), occupancies=((4, 256),), tensor=False)
    known = flops.run(cfg, _device((9, 0), 128))
    unknown = flops.run(cfg, _device((13, 0), None))
    k, u = known["rows"][0], unknown["rows"][0]
    assert k["pct_peak"] == pytest.approx(100 * k["tflops"] * 1e12 / known["fp32_peak_flops"])
    assert unknown["fp32_peak_flops"] is None
    assert u["pct_peak"] is None  # not a percentage of 1 FLOP/s
    assert u["tflops"] == pytest.approx(k["tflops"])
    # sized from a generous guess (128 lanes per SM): as long as on a 128-lane part, not the 256-iteration floor
    assert u["iters"] == k["iters"] > 256


def test_the_fma_records_constant_reaches_the_kernel_and_the_flop_count(monkeypatch):
    """FMA_PER_CHAIN_PER_ITER is the record's: changed there, the chains are built with it (-D) and
    the FLOPs, the FMA per iteration, the emulation and the method's basis all follow."""
    from rooflab import ceilings

    builds = []
    monkeypatch.setattr(flops, "cupy", lambda: _FakeCupy)
    monkeypatch.setattr(flops, "verify", lambda acc, **_k: 0.0)
    monkeypatch.setattr(flops, "get_kernel", lambda *a: builds.append(a))
    monkeypatch.setattr(flops, "time_kernel", lambda *_a, **_k: _Timing())
    cfg = flops.FlopsConfig(accumulators=(2,), occupancies=((4, 256),), tensor=False)
    default = flops.run(cfg, _device((9, 0), 128))["rows"][0]
    assert builds[-1] == ("ceilings/fma.cu", "fma_chain<2>", ("-DFMA_PER_CHAIN_PER_ITER=16",))
    ref = flops.emulate(8, 2, 4)
    monkeypatch.setattr(ceilings, "FMA", ceilings.FMA.with_defines(FMA_PER_CHAIN_PER_ITER=32))
    sec = flops.run(cfg, _device((9, 0), 128))
    row = sec["rows"][0]
    assert builds[-1] == ("ceilings/fma.cu", "fma_chain<2>", ("-DFMA_PER_CHAIN_PER_ITER=32",))
    assert row["fma_per_iter"] == 64 and default["fma_per_iter"] == 32
    assert row["flops"] == float(row["threads"]) * row["iters"] * 32 * 2 * 2
    assert sec["method"]["flops"] == "threads x iters x (32 x accumulators) FMA x 2 FLOP"
    np.testing.assert_array_equal(flops.emulate(8, 2, 2), ref)  # 2 iterations of 32 = 4 of 16
