"""rooflab report / roofline / compare / specs / ridge on a machine with no GPU."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflab import cli as cli_mod
from rooflab import lab as report_mod
from rooflab import results

DATA = Path(__file__).parent / "data"
H200 = DATA / "h200_results.json"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def rooflab(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


@pytest.mark.parametrize("saved", [H200, DATA / "h200_report.json"])
def test_report_from_saved_h200_results(tmp_path, saved):
    out = tmp_path / "r"
    p = rooflab("report", "--from", str(saved), "--out", str(out))
    assert p.returncode == 0, p.stderr
    names = {f.name for f in out.iterdir()}
    assert {"report.md", "results.json", "roofline.png", "roofline.svg", "gemm.csv", "bandwidth.csv",
            "flops.csv", "profile.csv", "roofline.csv", "specs.csv", "telemetry.csv"} <= names
    assert not any(n.startswith(".") and n != results.MANIFEST for n in names), "temporary files left behind"
    md = (out / "report.md").read_text()
    for heading in ("SGEMM ladder (G1–G11)", "FP32 FMA peak (P6, P7)", "Copy bandwidth (P3, P4, P7)",
                    "Nsight Compute (P8)", "Roofline (P9)", "Ridge points (P5)", "Seed deliverables", "Telemetry"):
        assert heading in md
    assert "![roofline](roofline.png)" in md
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema_version"] == results.SCHEMA_VERSION
    assert (out / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every labelled point is in the picture
    svg = (out / "roofline.svg").read_text()
    for label in ("naive", "coalesced", "tiled16", "tiled32", "cublas", "fma"):
        assert label in svg


def test_spec_only_report_says_nothing_was_measured(tmp_path):
    out = tmp_path / "s"
    p = rooflab("report", "--gpu", "t4", "--out", str(out))
    assert p.returncode == 0, p.stderr
    md = (out / "report.md").read_text()
    assert "Nothing was measured" in md and "T4" in md
    assert "SGEMM ladder" not in md
    doc = json.loads((out / "results.json").read_text())
    assert doc["device"]["spec_only"] and "gemm" not in doc
    assert (out / "roofline.png").exists()


def test_report_without_gpu_falls_back_to_spec_only(tmp_path):
    out = tmp_path / "d"
    p = rooflab("report", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "no GPU here" in p.stderr
    assert "Nothing was measured" in (out / "report.md").read_text()


def test_report_bad_gpu_name_is_one_line(tmp_path):
    p = rooflab("report", "--gpu", "voodoo5", "--out", str(tmp_path / "x"))
    assert p.returncode == 2
    assert p.stderr.strip().startswith("rooflab: error:") and "Traceback" not in p.stderr
    assert not (tmp_path / "x").exists()


def test_interrupted_report_writes_no_report_and_says_what_finished(tmp_path, monkeypatch):
    def fake_run(cfg, *, on_step=None, progress=None, doc=None):
        doc.update(results.new_document("rooflab report", {"name": "fake"}))
        doc["report"] = {"finished_steps": ["device", "specs", "flops"]}
        on_step("bandwidth")
        raise KeyboardInterrupt

    monkeypatch.setattr(report_mod, "run", fake_run)
    out = tmp_path / "i"
    r = CliRunner().invoke(cli_mod.cli, ["report", "--out", str(out)])
    assert r.exit_code == 130
    assert "interrupted during 'bandwidth'" in r.output
    assert "finished: device, specs, flops" in r.output
    assert not (out / "report.md").exists() and not (out / "results.json").exists()


def test_write_outputs_is_atomic(tmp_path, monkeypatch):
    doc = results.load(H200)
    out = tmp_path / "a"
    report_mod.write_outputs(doc, str(out))
    before = (out / "report.md").read_text()

    def boom(*_a, **_k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(results.os, "fdopen", boom)
    with pytest.raises(RuntimeError):
        report_mod.write_outputs(doc, str(out))
    assert (out / "report.md").read_text() == before  # the old file is intact
    assert not [f for f in out.iterdir() if f.name.endswith(".tmp")]


def test_compare_two_runs(tmp_path):
    """B's rung times are known multiples of A's: the table's ratio cells must be exactly those."""
    a = results.load(H200)
    b = json.loads(json.dumps(a))
    factors = {"naive": 2.0, "coalesced": 0.5, "tiled16": 4.0, "tiled32": 1.25, "cublas": 0.8}
    for rec in b["gemm"]["rungs"]:
        rec["timing"]["median_ms"] *= factors[rec["kernel"]]
    b["bandwidth"]["memcpy"] = [{**r, "gbs": r["gbs"] * 1.5} for r in b["bandwidth"]["memcpy"]]
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    p = rooflab("compare", str(pa), str(pb), "--format", "json")
    assert p.returncode == 0, p.stderr
    gemm, ceilings = json.loads(p.stdout)["tables"]
    assert gemm["title"] == "GEMM rungs, A vs B" and ceilings["title"] == "Ceilings, A vs B"
    assert gemm["columns"][-1].startswith("speedup of B")
    cells = {row[0]: row for row in gemm["rows"]}
    assert set(cells) == set(factors)
    for kernel, f in factors.items():
        ma = next(r for r in a["gemm"]["rungs"] if r["kernel"] == kernel)["timing"]["median_ms"]
        assert cells[kernel][2] == f"{ma:.3f}"
        assert cells[kernel][3] == f"{ma * f:.3f}"
        assert cells[kernel][-1] == f"{1 / f:.2f}×", (kernel, cells[kernel])
    ceil = {row[0]: row for row in ceilings["rows"]}
    assert ceil["cudaMemcpy D2D"][-1] == "1.500×"
    assert ceil["FP32 peak (P1)"][-1] == "1.000×"
    assert ceil["best copy kernel"][-1] == "1.000×"
    md = rooflab("compare", str(pa), str(pb), "--format", "md")
    assert md.returncode == 0 and "| naive | 4096 / 4096 |" in md.stdout and "| 0.50× |" in md.stdout


def test_compare_ratios():
    from rooflab.report.compare import compare_tables

    a = results.load(H200)
    b = json.loads(json.dumps(a))
    for rec in b["gemm"]["rungs"]:
        rec["timing"]["times_ms"] = [t / 2 for t in rec["timing"]["times_ms"]]
        rec["timing"]["median_ms"] /= 2
    gemm = compare_tables(a, b)[0]
    assert all(row[-1] == "2.00×" for row in gemm.rows)


def test_compare_rejects_non_results_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    p = rooflab("compare", str(bad), str(H200))
    assert p.returncode == 2 and "not a rooflab results file" in p.stderr


def test_roofline_from_saved_results(tmp_path):
    png = tmp_path / "rl.png"
    p = rooflab("roofline", "--from", str(H200), "--out", str(png), "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert png.exists() and png.with_suffix(".svg").exists()
    assert "cublas" in p.stdout and "compute-bound" in p.stdout


def test_specs_h100_sxm_fp32_peak():
    p = rooflab("specs", "--gpu", "h100-sxm", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "66.9" in p.stdout and "33.5" in p.stdout  # the forgot-FMA figure beside it


def test_ridge_h100():
    p = rooflab("ridge", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "295.2" in p.stdout and "590.7" in p.stdout and "1,125.0" in p.stdout
