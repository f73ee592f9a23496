"""Speed against problem size (`rooflab sweep`): the sweep's logic run against fake GEMM and
bandwidth harnesses (records of the harnesses' shapes, times from a simple speed model), the
section it writes checked against the schema, and its tables and picture rendered from the
document alone. The real sweep on a GPU is tests/test_gpu_sweep.py. CPU only."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rooflab import results
from rooflab.cuda.device import DeviceInfo
from rooflab.errors import UsageError
from rooflab.measure import sweep
from rooflab.report.collisions import collisions
from rooflab.report.sweep import plot_sweep, sweep_tables

DATA = Path(__file__).parent / "data"
SRC = Path(__file__).resolve().parents[1] / "src"
GiB = 2**30

H200 = DeviceInfo(index=0, name="NVIDIA H200", cc=(9, 0), arch="Hopper", sm_count=132, fp32_cores_per_sm=128,
                  sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6144, l2_bytes=60 * 2**20,
                  memory_bytes=143 * GiB)

# TFLOP/s each fake rung saturates at, and the N where it reaches half of it
SPEED = {"naive": (1.0, 256), "coalesced": (5.4, 512), "tiled16": (8.1, 512), "tiled32": (8.7, 512),
         "regtile": (28, 1024), "vec": (34, 1024), "warptile": (39, 1024), "pipelined": (46, 1024),
         "cublas": (51, 768), "mma_tf32": (155, 2048), "mma_3xtf32": (62, 1536), "wgmma_3xtf32": (68, 2048),
         "wgmma_3xtf32_tma": (70, 2048), "wgmma_3xtf32_swap": (76, 2048), "wgmma_tf32": (80, 2048),
         "wgmma_tf32_tma": (380, 2048), "wgmma_tf32_swap": (400, 2048),
         "cublas_tf32": (404, 2048), "mma_bf16": (289, 2048),
         "wgmma_bf16": (578, 3072), "wgmma_bf16_tma": (650, 3072), "wgmma_bf16_tma_ws": (720, 3072),
         "wgmma_bf16_persistent": (730, 3072), "wgmma_bf16_cluster": (730, 3072),
         "wgmma_bf16_tma_store": (760, 3072), "cublas_bf16": (768, 2048),
         "wgmma_fp8": (1150, 3072), "wgmma_fp8_persistent": (1100, 3072), "cublaslt_fp8": (1450, 2048)}
PRECISION = {k: ("fp32" if k in list(SPEED)[:9] else "bf16" if "bf16" in k else
                 next(p for p in ("3xtf32", "tf32", "fp8") if p in k)) for k in SPEED}


class FakeGemm:
    """rooflab.measure.gemm.run's shape: one record per rung with checks and timing."""

    def __init__(self, fail: dict | None = None):
        self.calls: list = []
        self.fail = fail or {}  # kernel -> N where its check fails

    def __call__(self, cfg, device, progress=None):
        self.calls.append((cfg.n, list(cfg.kernels), cfg.reps, cfg.check_n))
        recs = []
        for k in cfg.kernels:
            flops = 2.0 * cfg.m * cfg.n * cfg.k
            peak, half = SPEED[k]
            tflops = peak * cfg.n**2 / (cfg.n**2 + half**2)
            ms = flops / (tflops * 1e12) * 1e3
            bad = self.fail.get(k) == cfg.n
            checks = [{"name": "seed max-rel", "value": 1e-6, "tol": 1e-3, "passed": True},
                      {"name": "normwise", "value": 3e-7 if not bad else 0.5, "tol": 1e-5, "passed": not bad}]
            recs.append({"kernel": k, "title": k, "precision": PRECISION[k], "m": cfg.m, "n": cfg.n, "k": cfg.k,
                         "flops": flops, "checks": checks, "passed": not bad, "error": None, "skipped": None,
                         "timing": None if bad else {"median_ms": ms, "min_ms": ms * 0.99, "reps": cfg.reps}})
        return {"rungs": recs}


def fake_bandwidth(cfg, device, progress=None):
    """rooflab.measure.bandwidth.run's shape at one array size: L2 speed while two arrays fit, HBM beyond."""
    nbytes = cfg.n * 4
    gbs = 9000.0 if 2 * nbytes <= device.l2_bytes else 4300.0
    gbs *= nbytes / (nbytes + 2**20)  # launch overhead at small sizes
    run = {"label": "copy_float4", "verified": True, "gbs": gbs, "gbs_best": gbs * 1.02}
    return {"memcpy": [{"label": "cudaMemcpy D2D", "verified": True, "gbs": gbs * 0.9, "gbs_best": gbs * 0.92}],
            "sweep": [{"kernel": "copy_scalar", "block": 256, "grid": 1056, "runs": [dict(run, gbs=gbs / 2)]},
                      {"kernel": "copy_float4", "block": 256, "grid": cfg.n // 1024 + 1, "runs": [run]}]}


def sweep_doc(**kw) -> dict:
    cfg = sweep.SweepConfig(**kw)
    doc = results.load(DATA / "h200_report.json")
    doc["sweep"] = sweep.run(cfg, H200, gemm_run=FakeGemm(), bandwidth_run=fake_bandwidth, fits=lambda c, d: None)
    return doc


# ---------------------------------------------------------------- sizes, reps


def test_parse_sizes():
    assert sweep.parse_sizes("256..16384") == [256, 512, 1024, 2048, 4096, 8192, 16384]
    assert sweep.parse_sizes("256..1000") == [256, 512, 1000]
    assert sweep.parse_sizes("256,1000, 4096,256") == [256, 1000, 4096]
    assert sweep.parse_sizes("1K..4K,6000") == [1024, 2048, 4096, 6000]
    assert sweep.parse_sizes("256K..1M", high=2**40, what="array size") == [2**18, 2**19, 2**20]
    for bad in ("", "abc", "4096..256", "0..16", "256..99999", "1.5K", "-5"):
        with pytest.raises(UsageError):
            sweep.parse_sizes(bad)


def test_reps_fall_with_size_and_predicted_time():
    assert sweep.reps_for(256, 20, None) == 20
    assert sweep.reps_for(16384, 20, None) == 3
    assert sweep.reps_for(2048, 20, 100.0) == 3  # 100 ms a launch: the minimum
    assert sweep.reps_for(2048, 20, 25.0) == 10
    assert sweep.reps_for(256, 5, None) == 5  # the user's --reps caps the schedule


# ---------------------------------------------------------------- the sweep's logic


def test_every_rung_checked_and_timed_at_every_size_through_the_harness():
    fake = FakeGemm()
    cfg = sweep.SweepConfig(sizes=[256, 1024, 4096], kernels=["tiled32", "cublas", "wgmma_bf16"], copy=False)
    sec = sweep.run(cfg, H200, gemm_run=fake, fits=lambda c, d: None)
    assert [c[0] for c in fake.calls] == [256, 1024, 4096]
    assert all(c[1] == ["tiled32", "cublas", "wgmma_bf16"] for c in fake.calls)
    assert [c[3] for c in fake.calls] == [256, 512, 512]  # the CPU-reference check size, at most N
    rows = sec["gemm"]["rows"]
    assert len(rows) == 9 and all(r["passed"] and r["tflops"] > 0 for r in rows)
    assert [r["checks"] for r in rows][0] == ["seed max-rel", "normwise"]
    big = next(r for r in rows if r["kernel"] == "wgmma_bf16" and r["n"] == 4096)
    assert big["tflops"] == pytest.approx(2 * 4096**3 / (big["median_ms"] * 1e-3) / 1e12)


def test_slow_rungs_stop_where_a_launch_would_take_too_long():
    fake = FakeGemm()
    cfg = sweep.SweepConfig(kernels=["naive", "cublas"], copy=False)
    sec = sweep.run(cfg, H200, gemm_run=fake, fits=lambda c, d: None)
    ran = {n: ks for n, ks, _r, _c in fake.calls}
    # naive at 1 TFLOP/s: 2·8192³ FLOPs take 1.1 s, over the 0.5 s per launch; 4096 took 0.14 s
    assert "naive" in ran[4096] and "naive" not in ran[8192] and "naive" not in ran[16384]
    assert "cublas" in ran[16384]
    skipped = [r for r in sec["gemm"]["rows"] if r["kernel"] == "naive" and r["skipped"]]
    assert [r["n"] for r in skipped] == [8192, 16384]
    assert "not run from N=8192" in skipped[0]["skipped"] and "0.5 s per launch" in skipped[0]["skipped"]
    assert all(r["tflops"] is None for r in skipped)
    assert dict((n, r) for n, _k, r, _c in fake.calls)[16384] == 3  # few reps at the largest size


def test_a_rung_that_fails_its_check_gets_no_speed_and_is_not_run_again():
    fake = FakeGemm(fail={"vec": 1024})
    cfg = sweep.SweepConfig(sizes=[512, 1024, 2048], kernels=["vec", "cublas"], copy=False)
    rows = sweep.run(cfg, H200, gemm_run=fake, fits=lambda c, d: None)["gemm"]["rows"]
    failed = next(r for r in rows if r["kernel"] == "vec" and r["n"] == 1024)
    assert not failed["passed"] and failed["tflops"] is None and failed["median_ms"] is None
    assert failed["failed_checks"] == ["normwise"] and failed["worst_error"] == 0.5
    later = next(r for r in rows if r["kernel"] == "vec" and r["n"] == 2048)
    assert "failed at N=1024" in later["skipped"]
    assert fake.calls[-1][1] == ["cublas"]


def test_a_size_too_large_for_the_gpu_is_skipped_with_the_reason():
    def fits(cfg, device):
        if cfg.n > 4096:
            raise UsageError(f"N={cfg.n} needs more memory than this GPU has")

    fake = FakeGemm()
    cfg = sweep.SweepConfig(sizes=[1024, 8192], kernels=["cublas"], copy=False)
    rows = sweep.run(cfg, H200, gemm_run=fake, fits=fits)["gemm"]["rows"]
    assert [c[0] for c in fake.calls] == [1024]
    assert "needs more memory" in rows[-1]["skipped"]


def test_copy_bandwidth_against_array_size_through_the_bandwidth_harness():
    seen = []

    def bw(cfg, device, progress=None):
        seen.append((cfg.n, cfg.reps, cfg.sweep, cfg.rounds))
        return fake_bandwidth(cfg, device)

    cfg = sweep.SweepConfig(gemm=False, copy_sizes=sweep.parse_sizes("1M..256M", high=2**40))
    sec = sweep.run(cfg, H200, bandwidth_run=bw)
    assert [s[0] * 4 for s in seen] == [2**20 * 2**i for i in range(9)]
    assert all(s[1:] == (50, False, 1) for s in seen)  # checked, 50 reps (the seed's minimum), no launch sweep
    rows = sec["copy"]["rows"]
    inside = [r["gbs"] for r in rows if 2 * r["bytes_per_array"] <= H200.l2_bytes]
    beyond = [r["gbs"] for r in rows if 2 * r["bytes_per_array"] > H200.l2_bytes]
    assert min(inside[-2:]) > 1.5 * max(beyond)  # the L2-to-HBM cliff
    assert sec["copy"]["l2_bytes"] == H200.l2_bytes


def test_unverified_copy_has_no_bandwidth():
    def broken(cfg, device, progress=None):
        out = fake_bandwidth(cfg, device)
        out["sweep"][1]["runs"][0]["verified"] = False
        return out

    cfg = sweep.SweepConfig(gemm=False, copy_sizes=[2**20])
    row = sweep.run(cfg, H200, bandwidth_run=broken)["copy"]["rows"][0]
    assert row["verified"] is False and row["gbs"] is None


def test_config_is_checked_before_anything_runs():
    for kw in ({"kernels": ["nope"]}, {"kernels": []}, {"reps": 0}, {"copy_sizes": [1000]}, {"max_launch_s": 0}):
        with pytest.raises(UsageError):
            sweep.run(sweep.SweepConfig(**kw), H200, gemm_run=FakeGemm(), bandwidth_run=fake_bandwidth)


def test_default_kernels_are_the_ladders_simt_and_tensor_rungs():
    names = sweep.default_kernels()
    assert "naive" in names and "cublas" in names and "wgmma_bf16" in names
    assert not any(n.startswith("triton") for n in names)


# ---------------------------------------------------------------- the document and its rendering


def test_the_section_validates_against_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SRC / "rooflab" / "schema" / "results.schema.json").read_text())
    doc = sweep_doc()
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(results.dumps(doc))))
    assert not errors, [e.message for e in errors[:3]]
    bad = copy.deepcopy(doc)
    row = next(r for r in bad["sweep"]["gemm"]["rows"] if r["tflops"])
    row["passed"] = False  # a speed for a rung that failed its check is refused
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(results.dumps(bad))))


def test_tables_from_the_document_alone():
    doc = json.loads(results.dumps(sweep_doc()))
    pivot, long, cp = sweep_tables(doc)
    assert pivot.columns == ["kernel", "256", "512", "1024", "2048", "4096", "8192", "16384"]
    naive = next(r for r in pivot.rows if r[0] == "naive")
    assert naive[-1] == "—" and float(naive[1]) > 0
    assert any("naive: not run from N=8192" in n for n in pivot.notes)
    assert long.key == "sweep" and long.to_csv().splitlines()[0].startswith("kernel,N,status,reps")
    assert len(long.rows) == len(sweep.default_kernels()) * 7  # every default rung at each of 7 sizes
    assert cp.key == "sweep_copy" and len(cp.rows) == len(sweep.parse_sizes("256K..4G", high=2**40))
    assert sweep_tables({"device": {}}) == []


def test_picture_from_the_document_alone_has_no_collisions(tmp_path):
    doc = json.loads(results.dumps(sweep_doc()))
    fig = plot_sweep(doc, tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    gemm_ax, copy_ax = fig.axes
    assert gemm_ax.get_xscale() == "log" and copy_ax.get_xscale() == "log"
    named = [t.get_text() for t in gemm_ax.get_legend().get_texts()]  # the roofs are named in the legend
    assert "FP32 peak 66.9 TFLOP/s" in named and "BF16 tensor peak 989 TFLOP/s" in named
    measured = [ln for ln in gemm_ax.get_lines() if ln.get_marker() not in ("None", None, "")]
    assert len(measured) == len(sweep.default_kernels()) and all(ln.get_linestyle() == "-" for ln in measured)
    roofs = [ln for ln in gemm_ax.get_lines() if ln.get_marker() in ("None", None, "")]
    assert roofs and all(ln.get_linestyle() == "--" for ln in roofs)
    assert any("fill the L2" in t.get_text() for t in copy_ax.texts)
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))


def test_a_few_sizes_over_a_wide_range_get_ticks_that_do_not_touch():
    """Three copy sizes from 64 KiB to 1 GiB span 15 powers of two: ticks follow the range, not the
    count of sizes (the H200's sweep test drew all 15 and their labels overlapped)."""
    doc = json.loads(results.dumps(sweep_doc(sizes=[128, 256, 512], copy_sizes=sweep.parse_bytes("64K,1M,1G"))))
    fig = plot_sweep(doc)
    copy_ax = fig.axes[-1]
    assert len(copy_ax.get_xticks()) <= 8
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))


def test_picture_of_one_part_only(tmp_path):
    doc = json.loads(results.dumps(sweep_doc(copy=False)))
    assert len(plot_sweep(doc).axes) == 1
    with pytest.raises(UsageError):
        plot_sweep({"device": {"name": "x"}})


def test_rungs_at_one_size_are_grouped_by_the_reps_they_want():
    fake = FakeGemm()
    cfg = sweep.SweepConfig(sizes=[4096, 8192], kernels=["tiled32", "cublas_bf16"], copy=False)
    sweep.run(cfg, H200, gemm_run=fake, fits=lambda c, d: None)
    at_8192 = {tuple(ks): reps for n, ks, reps, _c in fake.calls if n == 8192}
    # tiled32: about 16 ms at 4096, so 0.13 s predicted at 8192: the minimum of 3 reps; cuBLAS BF16 about
    # 1.5 ms: the schedule's 5
    assert at_8192 == {("cublas_bf16",): 5, ("tiled32",): 3}


# ---------------------------------------------------------------- the command and the report


def _cli(*args):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(SRC), CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_sweep_command_renders_from_a_document(tmp_path):
    src = tmp_path / "in.json"
    src.write_text(results.dumps(sweep_doc()))
    proc = _cli("sweep", "--from", str(src), "--out", str(tmp_path / "out"), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("kernel,N,status,reps,median ms,TFLOP/s")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["results.json", "sweep.csv", "sweep.png", "sweep_copy.csv", "sweep_tflops.csv"]


@pytest.mark.parametrize(("args", "mention"), [
    (["--sizes", "4096..256"], "must go up"),
    (["--sizes", "abc"], "not a size"),
    (["--copy-sizes", "100"], "out of range (4096.."),
    (["--no-copy", "--no-gemm"], "nothing to sweep"),
    (["--kernels", "nope"], "nope: unknown"),
])
def test_sweep_bad_input_is_one_line(args, mention, tmp_path):
    proc = _cli("sweep", "--out", str(tmp_path / "o"), *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rooflab: error: ") and mention in lines[0], proc.stderr


def test_sweep_from_a_document_without_a_sweep_is_one_line(tmp_path):
    proc = _cli("sweep", "--from", str(DATA / "h200_report.json"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "has no sweep section" in proc.stderr


def test_the_report_carries_the_sweep(tmp_path):
    from rooflab import lab

    doc = json.loads(results.dumps(sweep_doc()))
    written = lab.write_outputs(doc, str(tmp_path))
    assert {"sweep.png", "sweep.csv", "sweep_tflops.csv", "sweep_copy.csv"} <= set(written)
    md = (tmp_path / "report.md").read_text()
    assert md.count("![speed against size](sweep.png)") == 1 and "**GEMM TFLOP/s against N**" in md
    assert "**Copy bandwidth against array size**" in md
    for row in doc["sweep"]["gemm"]["rows"] + doc["sweep"]["copy"]["rows"]:  # nothing timed: no picture
        row.update(tflops=None, median_ms=None, passed=False, gbs=None, verified=False, skipped="x")
    written = lab.write_outputs(doc, str(tmp_path / "none"))
    assert "sweep.png" not in written and "sweep.png" not in (tmp_path / "none" / "report.md").read_text()


def test_the_reports_sweep_keeps_to_a_few_sizes():
    from rooflab import lab

    assert lab.report_sweep(quick=False)["sizes"] == [1024, 2048, 4096, 8192]
    assert lab.report_sweep(quick=True)["sizes"] == [1024, 4096]
    assert "sweep" in lab.report_sections(lab.ReportConfig(profile=False))
    steps = lab.steps(lab.ReportConfig())
    assert steps == ["device", "flops", "bandwidth", "memory", "gemm", "sweep", "profile"]
