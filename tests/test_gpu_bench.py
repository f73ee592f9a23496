"""A user's kernel through `rooflab bench` and rooflab.bench() on a real GPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

DATA = Path(__file__).parent / "data" / "kernels"
SRC = Path(__file__).resolve().parents[1] / "src"


def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env,
                          timeout=600, cwd=cwd)


def test_bench_a_correct_kernel_checked_timed_profiled_and_placed(tmp_path):
    import json
    import shutil

    out, png = tmp_path / "run.json", tmp_path / "r.png"
    args = ["bench", str(DATA / "my_sgemm.cu"), "--kernel", "my_sgemm", "--n", "1000", "--vs", "tiled32,cublas",
            "--format", "json", "--out", str(out), "--roofline", str(png)]
    if shutil.which("ncu"):
        args.append("--profile")
    p = cli(*args)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(out.read_text())
    mine = doc["gemm"]["rungs"][0]
    assert mine["kernel"] == "my_sgemm" and mine["passed"] and mine["timing"]["median_ms"] > 0
    assert [r["kernel"] for r in doc["gemm"]["rungs"]] == ["my_sgemm", "tiled32", "cublas"]
    if shutil.which("ncu"):
        assert any(k["label"] == "my_sgemm" and k["dram_bytes"] > 0 for k in doc["profile"]["kernels"])
    assert png.stat().st_size > 10_000
    from rooflab.model import placement
    assert "my_sgemm" in [pt.label for pt in placement.roofline(doc).points]


def test_bench_a_buggy_kernel_is_failed():
    p = cli("bench", str(DATA / "my_sgemm.cu"), "--kernel", "my_sgemm_row_past", "--n", "1000", "--vs", "",
            "--format", "md")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED" in p.stdout and "outside C" in p.stdout and "GFLOP/s" in p.stdout


def test_bench_a_kernel_that_skips_its_work_once_timed_is_failed():
    """my_sgemm_skips passes every check, then skips its work on later launches: the last timed
    launch's output (poisoned before it) is wrong, and its time is below the roofline floor."""
    p = cli("bench", str(DATA / "my_sgemm.cu"), "--kernel", "my_sgemm_skips", "--n", "1000", "--vs", "",
            "--format", "md")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED" in p.stdout, p.stdout
    assert "faster than this GPU can run it" in p.stdout or "last timed launch" in p.stdout, p.stdout
    assert "my_sgemm_skips" in p.stdout


def test_bench_a_kernel_that_does_not_compile():
    p = cli("bench", str(DATA / "broken.cu"), "--kernel", "broken", "--n", "64")
    assert p.returncode == 2
    assert "undeclared_name" in p.stderr  # the compiler's line
    assert p.stderr.strip().splitlines()[-1].startswith("rooflab: error: ")
    assert "Traceback" not in p.stderr


def test_triton_gemm_through_callable():
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    import rooflab

    sys.path.insert(0, str(DATA))
    try:
        from triton_gemm import matmul
    finally:
        sys.path.remove(str(DATA))
    res = rooflab.bench(rooflab.Callable(matmul, framework="torch"), op="gemm", n=1024, vs=["cublas"], reps=5)
    recs = res.doc["gemm"]["rungs"]
    assert res.passed, [c for c in recs[0]["checks"] if not c["passed"]]
    assert recs[0]["kernel"] == "matmul" and recs[0]["timing"]["median_ms"] > 0


def test_stream_op_and_short_kernel_timing():
    p = cli("bench", str(DATA / "my_sgemm.cu"), "--kernel", "scale2", "--op", "stream", "--n", "1M",
            "--block", "256", "--expr", "2*x", "--flops-per-element", "1")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "graph" in p.stdout  # a 1M-element scale runs for microseconds: replayed as a CUDA graph


def test_both_timing_methods_agree_on_a_long_kernel():
    from rooflab.cuda.device import detect
    from rooflab.measure.gemm import GemmConfig, run

    dev = detect()
    ev = run(GemmConfig(m=2048, n=2048, k=2048, reps=10, kernels=["tiled32"], timing="events"), dev)
    ba = run(GemmConfig(m=2048, n=2048, k=2048, reps=10, kernels=["tiled32"], timing="batched"), dev)
    e, b = ev["rungs"][0]["timing"], ba["rungs"][0]["timing"]
    assert e["method"] == "events" and b["method"] == "batched" and b["launches_per_sample"] >= 2
    assert abs(e["median_ms"] / b["median_ms"] - 1) < 0.03, (e["median_ms"], b["median_ms"])


def test_subset_of_rungs_without_naive():
    p = cli("gemm", "--n", "1024", "--reps", "3", "--kernels", "coalesced,tiled16,tiled32,regtile,cublas")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "coalesced → tiled" in p.stdout and "naive → coalesced" not in p.stdout
