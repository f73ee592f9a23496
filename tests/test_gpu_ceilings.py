"""Copy and FMA kernels on a real GPU: the copy copies, the FMA chain computes what it should."""


import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


def test_device_roofs(device):
    assert device.sm_count > 0
    assert device.fp32_peak_flops and device.fp32_peak_flops > 1e12
    assert device.hbm_peak_bytes_per_s and device.hbm_peak_bytes_per_s > 1e11


def test_copy_variants_verified_with_tail(device):
    from rooflab.measure.bandwidth import BandwidthConfig, run
    from rooflab.model.ceilings import summarize

    sec = run(BandwidthConfig(n=(1 << 20) + 3, reps=50, rounds=1, blocks=(128, 1024)), device)
    s = summarize(sec)
    assert all(e["verified"] for e in s["table"])
    assert all(r["verified"] for r in sec["memcpy"])
    assert sec["scale"]["verified"]


@pytest.mark.parametrize("acc", [1, 2, 4, 8])
def test_fma_chain_matches_emulation(device, acc):
    from rooflab.measure.flops import verify

    assert verify(acc) <= 1e-5
