"""The size sweep on a real GPU: a small sweep through the real GEMM and bandwidth harnesses, every
timed cell checked first, its picture and tables rendered from the section; the full ladder sweep
over 256..16384 (the acceptance run, under three minutes on an H200) is a gpu-check step."""

import time

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


def test_small_sweep_through_the_real_harnesses(device, tmp_path):
    from rooflab import results
    from rooflab.cuda.device import document_entry
    from rooflab.measure import sweep
    from rooflab.report.collisions import collisions
    from rooflab.report.sweep import plot_sweep, sweep_tables

    cfg = sweep.SweepConfig(sizes=[128, 256, 512], kernels=["naive", "tiled32", "cublas"],
                            copy_sizes=sweep.parse_bytes("64K,1M,1G"), reps=3)
    t0 = time.perf_counter()
    sec = sweep.run(cfg, device)
    assert time.perf_counter() - t0 < 120
    rows = sec["gemm"]["rows"]
    assert len(rows) == 9
    for r in rows:
        assert r["passed"], r
        assert "normwise" in r["checks"] and "deterministic" in r["checks"]
        assert r["tflops"] > 0 and r["reps"] == 3
    cublas = {r["n"]: r["tflops"] for r in rows if r["kernel"] == "cublas"}
    assert cublas[512] > cublas[128]  # more work per launch, more of the GPU busy
    copy = {r["bytes_per_array"]: r for r in sec["copy"]["rows"]}
    assert all(r["verified"] and r["gbs"] > 0 for r in copy.values())
    if 2 * 2**20 <= device.l2_bytes:  # a pair of 1 MiB arrays stays in the L2; a pair of 1 GiB cannot
        assert copy[2**20]["gbs"] > 0 and copy[2**30]["gbs"] < 1.2 * device.hbm_peak_bytes_per_s / 1e9
    doc = results.new_document("test", document_entry(device))
    doc["sweep"] = sec
    fig = plot_sweep(doc, tmp_path / "sweep.png")
    assert not collisions(fig)
    assert [t.key for t in sweep_tables(doc)] == ["sweep_tflops", "sweep", "sweep_copy"]
