"""Profiles describe the timed run: a GEMM is profiled at the M, N, K it was timed at (a
1000x777x1234 bench was profiled as 777x777x777), stream ops are profiled too, and a profile of
another shape is never divided into a rung's FLOPs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rooflab.model.hierarchy import profiled_at_timed_shape
from rooflab.model.ncu import KernelProfile

DATA = Path(__file__).parent / "data"
KERNELS = DATA / "kernels"


@pytest.fixture
def captured(monkeypatch):
    from rooflab.measure import profiling

    calls = []

    def fake_profile(label, args, timeout=300, metrics=profiling.METRICS):
        spec = None
        if "--spec" in args:
            spec = json.loads(Path(args[args.index("--spec") + 1]).read_text())
        calls.append((label, list(args), spec) if metrics == profiling.METRICS else (label, "tensor", metrics))
        if metrics != profiling.METRICS:
            if label == "mma_bf16":
                raise profiling.ToolError("ncu on mma_bf16 failed (exit 1): unknown metric")
            return KernelProfile(label, ["k"], {"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 5.0,
                                                "gpu__time_duration.sum": 9.0}), ""
        return KernelProfile(label, ["k"], {"dram__bytes_read.sum": 1.0, "gpu__time_duration.sum": 1.0}), ""

    monkeypatch.setattr(profiling, "find_ncu", lambda: "/usr/bin/ncu")
    monkeypatch.setattr(profiling, "ncu_version", lambda: "fake")
    monkeypatch.setattr(profiling, "profile", fake_profile)
    return calls


def test_user_gemm_profiled_at_its_timed_shape(captured):
    import rooflab
    from rooflab.measure import profiling

    k = rooflab.CudaKernel(str(KERNELS / "my_sgemm.cu"), "my_sgemm", block=(16, 16),
                           grid="cdiv(n, 16), cdiv(m, 16)")
    rung = k.rung("gemm")
    sec = profiling.run(with_gemm=False, m=1000, n=777, k=1234, size=0, extra=[rung], labels=["my_sgemm", "tiled32"])
    (label, args, spec), (label2, args2, _) = captured
    assert label == "my_sgemm" and args[:6] == ["--m", "1000", "--n", "777", "--k", "1234"]
    assert spec["grid"] == [49, 63, 1]  # cdiv(777, 16), cdiv(1000, 16): the timed launch's grid
    assert label2 == "tiled32" and args2 == ["--m", "1000", "--n", "777", "--k", "1234"]
    assert sec["config"]["m"] == 1000 and sec["config"]["n"] == 777 and sec["config"]["k"] == 1234


def test_stream_op_is_profiled(captured):
    import rooflab
    from rooflab.measure import profiling

    t = rooflab.CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2", block=(256,))
    spec = profiling.op_spec(t, "stream", "2*x", 1.0, (1 << 20,))
    sec = profiling.run_op(t, spec)
    (label, _args, got), = captured
    assert label == "scale2" and got["op"] == "stream" and got["expr"] == "2*x" and got["n"] == [1 << 20]
    assert got["grid"] == [4096, 1, 1] and got["kernel"] == "scale2"
    assert sec["kernels"][0]["label"] == "scale2" and sec["config"]["n"] == [1 << 20]
    # a custom op object cannot be rebuilt in ncu's process: skipped, with why
    assert profiling.op_spec(t, "my_op", "x", 0.0, (10,)) is None
    sec = profiling.run_op(t, None)
    assert sec["kernels"] == [] and "only stream ops" in sec["skipped"][0]


def test_api_profiles_the_timed_gemm_and_stream_ops(monkeypatch):
    import rooflab
    from rooflab import api, lab

    got = {}
    monkeypatch.setattr(lab, "gemm_then_profile", lambda gemm, **kw: (gemm, got.setdefault("gemm", kw)))
    monkeypatch.setattr(lab, "op_profile_section", lambda *a: got.setdefault("op", a))
    k = rooflab.CudaKernel(str(KERNELS / "my_sgemm.cu"), "my_sgemm", block=(16, 16))
    api.sections(k, m=1000, n=777, k=1234, vs=[], profile=True)
    assert (got["gemm"]["m"], got["gemm"]["n"], got["gemm"]["k"]) == (1000, 777, 1234)
    s = rooflab.CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2", block=(256,))
    secs = api.sections(s, op="stream", n=1 << 20, expr="2*x", profile=True)
    assert "profile" in secs and got["op"][1:] == ("stream", "2*x", 0.0, (1 << 20,))


def test_profile_of_another_shape_is_not_used():
    from rooflab.model.placement import points

    doc = json.loads((DATA / "h200_results.json").read_text())
    rec = next(r for r in doc["gemm"]["rungs"] if r["kernel"] == "tiled32")
    assert profiled_at_timed_shape(rec, doc["profile"]["config"])  # old config: n only, N x N x N
    d = copy.deepcopy(doc)
    for r in d["gemm"]["rungs"]:
        r["m"], r["k"] = 1000, 1234  # timed 1000 x 4096 x 1234, profiled 4096^3
    pt = {p.label: p for p in points(d)}["tiled32"]
    assert pt.ai_source == "model"
    d["profile"]["config"].update(m=1000, k=1234)
    assert {p.label: p for p in points(d)}["tiled32"].ai_source == "ncu"


def test_tensor_rungs_get_a_tensor_pipe_pass(captured):
    from rooflab.measure import profiling
    from rooflab.model.ncu import TENSOR_METRICS

    sec = profiling.run(with_gemm=False, n=256, size=0, labels=["tiled32", "cublas_bf16", "mma_bf16"])
    assert [(c[0], c[1]) for c in captured if c[1] == "tensor"] == [("cublas_bf16", "tensor"), ("mma_bf16", "tensor")]
    assert all(c[2] == TENSOR_METRICS for c in captured if c[1] == "tensor")
    by = {k["label"]: k for k in sec["kernels"]}
    assert by["cublas_bf16"]["tensor_flops"] == 5.0
    assert by["cublas_bf16"]["metrics"]["gpu__time_duration.sum"] == 1.0  # the first pass's duration kept
    assert by["tiled32"]["tensor_flops"] is None and "tensor_error" not in by["tiled32"]
    assert "unknown metric" in by["mma_bf16"]["tensor_error"] and by["mma_bf16"]["dram_bytes"] == 1.0


def test_level_launches_profiled_with_the_hit_rate(monkeypatch):
    from rooflab.measure import profiling
    from rooflab.model.level_evidence import L2_HIT

    seen = []

    def fake_profile(label, args, timeout=300, metrics=profiling.METRICS):
        seen.append((label, args, metrics))
        if label == "read_stream":
            raise profiling.ToolError("ncu on read_stream failed (exit 1): out of memory")
        return KernelProfile(label, ["l2_read"], {L2_HIT: 99.0}), "==PROF== x\nbytes=123456\n"

    monkeypatch.setattr(profiling, "profile", fake_profile)
    out = profiling.run_levels(60 * 2**20, 1 << 28)
    assert [s[0] for s in seen] == ["l2_read", "l2_read", "read_stream"] and all(L2_HIT in s[2] for s in seen)
    assert out[0]["kernel_bytes"] == 123456.0 and out[0]["metrics"][L2_HIT] == 99.0
    assert out[2]["level"] == "DRAM" and "out of memory" in out[2]["error"]
