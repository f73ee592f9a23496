"""`rooflab trace` on a real GPU: the transformer step of examples/, BF16 and FP32."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu


def trace(*args: str, prog: tuple[str, ...] = (), timeout: float = 600) -> tuple[dict, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rooflab", "trace", "--range", "step", "--format", "json", *args,
                           "--", sys.executable, str(ROOT / "examples" / "transformer_step.py"), *prog],
                          capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), time.perf_counter() - t0


@pytest.fixture(scope="module")
def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


def test_transformer_step_bf16(torch_cuda):
    trace(timeout=900)  # the first run measures and caches this GPU's ceilings
    doc, seconds = trace()
    sec = doc["trace"]
    assert seconds <= 180, f"trace took {seconds:.0f} s"
    assert 30 <= sec["launches"] <= 300
    lim = sec["limits"]
    assert lim["untraced_step_s"], "the example reports its step time"
    assert sec["gpu_time_s"] == pytest.approx(lim["untraced_step_s"], rel=0.05)
    gemms = [p for p in sec["groups"] if p["profiled"] and p["group"].get("op_flops")]
    assert gemms and all(p["flops"] == pytest.approx(p["group"]["op_flops"], rel=0.02) for p in gemms)
    tensor = [p for p in gemms if p["precision"] == "bf16"]
    assert tensor and all(p["binding"] == "compute" for p in tensor[:1])
    ewise = [p for p in sec["groups"] if p["profiled"] and p["flops_source"].startswith("ncu") and
             p["binding"] == "DRAM"]
    assert ewise, "the elementwise and normalisation kernels sit on the HBM slope"


def test_transformer_step_fp32_gemm_flops_from_the_counters(torch_cuda):
    doc, _ = trace("--no-baseline", prog=("--dtype", "fp32"))
    sgemm = [p for p in doc["trace"]["groups"] if p["profiled"] and p["group"].get("op_flops")
             and p["flops_source"].startswith("ncu FP32")]
    assert sgemm, "FP32 GEMMs counted by ncu's FFMA counters"
    for p in sgemm:
        assert p["flops"] == pytest.approx(p["group"]["op_flops"], rel=0.02)


def test_in_process_trace(torch_cuda):
    import rooflab

    a = torch_cuda.randn(2048, 2048, device="cuda")
    with rooflab.trace() as t:
        for _ in range(3):
            a @ a
    sec = t.doc["trace"]
    assert sec["launches"] >= 3 and sec["groups"][0]["group"]["launches"] >= 3
    assert t.to_pandas().shape[0] == sec["kernels"]
