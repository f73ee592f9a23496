"""Copy and FMA kernels on a real GPU: the copy copies, the FMA chain computes what it should."""

import shutil

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


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")), reason="needs nvcc and cuobjdump")
def test_fma_loop_is_ffma_with_no_memory_traffic(tmp_path):
    """P6: the FMA chains compile to FFMA on registers only; the sole memory access is the final store."""
    import re
    import subprocess
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "ceilings" / "fma.cu"
    cubin = tmp_path / "fma.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(cubin), str(src)], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    funcs = re.split(r"\n\s*Function : ", sass)[1:]
    seen = {}
    for f in funcs:
        name = f.split()[0]
        m = re.search(r"fma_chainILi(\d+)E", name)
        if m:
            seen[int(m.group(1))] = f
    assert sorted(seen) == [1, 2, 4, 8]
    for acc, body in seen.items():
        assert body.count("FFMA") >= 16 * acc, (acc, body.count("FFMA"))
        assert not re.search(r"\b(LDG|LDL|STL|LDS|STS)\b", body), acc
        assert len(re.findall(r"\bSTG\b", body)) == 1, acc
