"""The roofs, proven, on a real GPU: the read-only variants and their witnesses check out and stay
below the pins, graph and event timing agree, no built-in rung trips the impossible-result guard,
and the profile counts the timed problem (FFMA within the tile padding, tensor FLOPs = 2·M·N·K)."""

import shutil

import pytest

pytestmark = pytest.mark.gpu
needs_ncu = pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute (ncu) not on PATH")


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


def test_read_variants_and_witnesses_verified_at_an_odd_size(device):
    from rooflab.measure.bandwidth import BandwidthConfig, run

    sec = run(BandwidthConfig(n=(1 << 22) + 3, reps=50, rounds=1, blocks=(256,), sweep=False), device)
    d = sec["directions"]
    assert d["read_variants"] and all(r["verified"] for r in d["read_variants"]), d["read_variants"]
    assert d["read_cub"]["verified"] and d["write_memset"]["verified"]
    assert all(c["passed"] for r in d["read_variants"] for c in r["proof"])


def test_read_ceiling_brackets_at_1gib(device):
    """rooflab's best read >= 0.99x CUB's DeviceReduce::Sum, and below the pin rate."""
    from rooflab.measure.bandwidth import BandwidthConfig, run
    from rooflab.model.brackets import brackets

    sec = run(BandwidthConfig(reps=50, rounds=1, blocks=(256,), sweep=False), device)
    doc = {"device": {"mem_clock_max_mhz": device.mem_clock_max_mhz, "bus_width_bits": device.bus_width_bits,
                      "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s}, "bandwidth": sec}
    rd = {b.name: b for b in brackets(doc)}["HBM read"]
    assert rd.error is None, rd.error
    assert rd.ceiling >= 0.99 * rd.witness, (rd.ceiling_what, rd.ceiling / 1e9, rd.witness / 1e9)
    print(f"read ceiling {rd.ceiling / 1e9:,.0f} GB/s ({rd.ceiling_what}), CUB {rd.witness / 1e9:,.0f}, "
          f"pins {rd.limit.value / 1e9:,.0f}")


def test_graph_and_event_timing_agree_on_a_long_kernel(device):
    import numpy as np

    from rooflab.cuda.compile import get_kernel
    from rooflab.cuda.gpu import cupy
    from rooflab.cuda.timing import time_graph, time_kernel

    cp = cupy()
    n = 128 * 2**20  # 512 MiB per array: about 0.25 ms a copy on an H200, 1 ms and more elsewhere
    src, out = cp.ones(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
    k = get_kernel("ceilings/copy.cu", "copy_float4")
    grid = (n // 4 + 255) // 256

    def launch():
        k.launch((grid, 1, 1), (256, 1, 1), (src, out, np.uint64(n)))

    reps = max(1, int(4 / max(time_kernel(launch, label="probe", reps=3).median_ms, 1e-3)))  # >= ~1 ms a sample
    ev = time_kernel(launch, label="copy", reps=20, batch=reps)
    gr = time_graph(launch, label="copy", reps=20, batch=reps)
    assert gr.method == "graph" and ev.median_ms * reps >= 1.0
    assert abs(gr.median_ms / ev.median_ms - 1) < 0.02, (gr.median_ms, ev.median_ms)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1000, 777, 1234), (4096, 4096, 4096)], ids=str)
def test_no_builtin_rung_trips_the_guard(device, shape):
    from rooflab import rungs
    from rooflab.measure.gemm import GemmConfig, run

    m, n, k = shape
    sec = run(GemmConfig(m=m, n=n, k=k, reps=5, check_n=min(512, max(m, n, k)), kernels=rungs.names()), device)
    for rec in sec["rungs"]:
        if rec.get("skipped"):
            continue
        floor = [c for c in rec["checks"] if c["name"] in ("roofline floor", "last timed launch")]
        assert rec["passed"], (rec["kernel"], rec.get("error"))
        assert floor and all(c["passed"] for c in floor), (rec["kernel"], floor)


@needs_ncu
def test_profile_counts_the_timed_odd_shape():
    """bench --m 1000 --n 777 --k 1234 --profile: FFMA = M·N·K within the 16-wide tile padding."""
    from pathlib import Path

    import rooflab

    kern = rooflab.CudaKernel(str(Path(__file__).parent / "data" / "kernels" / "my_sgemm.cu"), "my_sgemm",
                              block=(16, 16), grid="cdiv(n, 16), cdiv(m, 16)")
    res = rooflab.bench(kern, m=1000, n=777, k=1234, vs=[], profile=True)
    prof = next(p for p in res.doc["profile"]["kernels"] if p["label"] == "my_sgemm")
    ffma = prof["metrics"]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    pad = lambda x: -(-x // 16) * 16  # noqa: E731
    assert 1000 * 777 * 1234 <= ffma <= pad(1000) * pad(777) * pad(1234), ffma
    cfg = res.doc["profile"]["config"]
    assert (cfg["m"], cfg["n"], cfg["k"]) == (1000, 777, 1234)


@needs_ncu
def test_tensor_flops_from_the_profile_match_2mnk():
    from rooflab.measure import profiling

    sec = profiling.run(with_gemm=False, n=4096, size=0, labels=["cublas_bf16", "cublas_tf32"])
    for p in sec["kernels"]:
        assert not p.get("tensor_error"), p.get("tensor_error")
        assert abs(p["tensor_flops"] / (2 * 4096**3) - 1) < 0.02, (p["label"], p["tensor_flops"])
