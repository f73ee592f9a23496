"""rooflab report / roofline / compare / specs / ridge on a machine with no GPU."""

import csv
import io
import json
import os
import re
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
                          cwd=cwd, timeout=120, check=False)


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
                    "Nsight Compute (P8)", "Roofline (P9)", "Ridge points (P5)", "From the course", "Method and telemetry"):
        assert heading in md
    assert "![roofline](roofline.png)" in md
    doc = json.loads((out / "results.json").read_text())
    assert doc["format"] == results.FORMAT
    assert (out / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every labelled point is in the picture
    svg = (out / "roofline.svg").read_text()
    for label in ("naive", "coalesced", "tiled16", "tiled32", "cublas", "fma"):
        assert label in svg


# a number, maybe with thousands separators and a unit or suffix stuck to it: what a person's table shows
NUMBER_LIKE = re.compile(r"^[-+]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*"
                         r"(%|×|x|[kMGT]?(Hz|B/s|B|FLOP/s|FLOP/B|FLOP|bit)|[KMG]iB|W|°C|ms)?$")
THOUSANDS = re.compile(r"\d,\d{3}(?!\d)")


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_report_csvs_are_for_machines(tmp_path):
    """Every CSV the report writes: plain numbers (float() reads every cell of a numeric column),
    no thousands separators, no units or suffixes in cells (they are in the header), empty cells
    for missing values."""
    out = tmp_path / "r"
    p = rooflab("report", "--from", str(H200), "--out", str(out))
    assert p.returncode == 0, p.stderr
    csvs = sorted(out.glob("*.csv"))
    assert len(csvs) >= 10
    headers = {}
    for path in csvs:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        head, body = rows[0], rows[1:]
        headers[path.name] = head
        assert body, path.name
        assert all(h.strip() for h in head) and len(set(head)) == len(head), (path.name, head)
        assert all(len(r) == len(head) for r in body), path.name
        for r in body:
            for h, cell in zip(head, r, strict=True):
                where = (path.name, h, cell)
                assert "×" not in cell and " MHz" not in cell and "%" not in cell, where
                assert not THOUSANDS.search(cell), where
                assert cell not in ("—", "None", "nan"), where
        for i, h in enumerate(head):
            cells = [r[i] for r in body if r[i] != ""]
            if any(NUMBER_LIKE.match(c) for c in cells):  # a numeric-looking column: every cell is a number
                bad = [c for c in cells if not _is_float(c)]
                assert not bad, (path.name, h, bad)
    # units moved from the cells to the header
    assert "vs naive (×)" in headers["gemm.csv"] and "GFLOP/s" in headers["gemm.csv"]
    assert "implied clock (MHz)" in headers["tensor.csv"] and "ratio (×)" in headers["tensor.csv"]
    assert "SM clock max (MHz)" in headers["device.csv"]
    gemm = list(csv.DictReader(io.StringIO((out / "gemm.csv").read_text(encoding="utf-8"))))
    cublas = next(r for r in gemm if r["kernel"].startswith("cuBLAS"))
    assert 45_000 < float(cublas["GFLOP/s"]) < 60_000
    assert 70 < float(cublas["% peak"]) < 80 and 40 < float(cublas["vs naive (×)"]) < 60


def _svg_text(path: Path) -> str:
    from html import unescape

    return unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def unknown_architecture(doc: dict, *, in_spec_table: bool = True) -> dict:
    """The recorded H200 run as it would come out of a GPU whose architecture rooflab's table lacks
    (compute capability 13.0): no FP32 lanes per SM, so no FP32 peak, and no % of peak from flops."""
    dev = doc["device"]
    dev.update(cc=[13, 0], arch="sm_130", fp32_cores_per_sm=None, fp32_peak_flops=None)
    if not in_spec_table:  # a part the spec table lacks too: no tensor rates either
        dev.update(name="NVIDIA B999", spec_key=None, tensor_peaks={})
    doc["flops"]["fp32_peak_flops"] = None
    for r in doc["flops"]["rows"]:
        r["pct_peak"] = None
    return doc


@pytest.mark.parametrize("in_spec_table", [True, False], ids=["named-part", "unknown-part"])
def test_report_for_an_unknown_architecture(tmp_path, in_spec_table):
    doc = unknown_architecture(results.load(H200), in_spec_table=in_spec_table)
    out = tmp_path / "u"
    written = report_mod.write_outputs(doc, str(out))
    assert {"report.md", "roofline.png", "roofline.svg", "gemm.csv", "flops.csv", "roofline.csv",
            "device.csv"} <= set(written)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "peak unknown for sm_130" in md
    assert "1.0e+" not in md and "e+15%" not in md  # no percentage of a made-up peak
    sections = md.split("\n## ")
    for heading in ("Summary", "FP32 FMA peak", "Roofline"):  # the summary holds the device and ladder tables
        body = next(s for s in sections if s.startswith(heading))
        assert "peak unknown for sm_130" in body, heading
    # the tables: a cell says so where the peak would be; the CSV leaves the cell empty
    gemm = list(csv.DictReader(io.StringIO((out / "gemm.csv").read_text(encoding="utf-8"))))
    assert all(r["% peak"] == "" and float(r["GFLOP/s"]) > 0 for r in gemm)
    assert "| peak unknown for sm_130 |" in md
    # the picture: no FP32 roof, the measured FMA rate as a ceiling, and the title says why
    svg = _svg_text(out / "roofline.svg")
    assert "peak unknown for sm_130" in svg
    assert "FP32 66.9" not in svg
    assert "measured FMA 65.3 TFLOP/s" in svg
    assert ("BF16 tensor 989 TFLOP/s" in svg) == in_spec_table
    for label in ("naive", "coalesced", "tiled16", "tiled32", "cublas"):
        assert label in svg


def test_spec_only_report_has_no_empty_points_table(tmp_path):
    """A theoretical roofline places no kernel: no header-only points table, no roofline.csv."""
    doc = results.new_document("rooflab report --gpu h200", report_mod.spec_device_entry("h200"))
    written = report_mod.write_outputs(doc, str(tmp_path))
    assert "roofline.csv" not in written and not (tmp_path / "roofline.csv").exists()
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Roofline points" not in md
    assert "![roofline](roofline.png)" in md and "no kernel is placed" in md


def test_roofline_gpu_prints_no_empty_table(tmp_path):
    p = rooflab("roofline", "--gpu", "t4", "--out", str(tmp_path / "t4.png"), "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert (tmp_path / "t4.png").exists()


def test_measured_report_keeps_its_points_table(tmp_path):
    written = report_mod.write_outputs(results.load(H200), str(tmp_path))
    assert "roofline.csv" in written
    assert "Roofline points" in (tmp_path / "report.md").read_text(encoding="utf-8")


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
    for row in b["bandwidth"]["sweep"]:  # every copy configuration 1.5× faster: so is the best
        row["runs"] = [{**r, "gbs": r["gbs"] * 1.5} for r in row["runs"]]
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
        # JSON holds the numbers themselves, not the text a table shows
        assert cells[kernel][2] == pytest.approx(ma, rel=1e-12)
        assert cells[kernel][3] == pytest.approx(ma * f, rel=1e-12)
        assert cells[kernel][-1] == pytest.approx(1 / f, rel=1e-12), (kernel, cells[kernel])
    assert gemm["units"][-1] == "×"
    # the device's nominal peaks, then a row per registered ceiling the documents measured
    ceil = {row[0]: row for row in ceilings["rows"]}
    assert list(ceil) == ["FP32 peak (P1)", "HBM peak (P3)", "HBM copy (read + write)", "FP32 CUDA cores"]
    assert ceil["HBM copy (read + write)"][-1] == pytest.approx(1.5)
    assert ceil["FP32 peak (P1)"][-1] == pytest.approx(1.0)
    assert ceil["HBM peak (P3)"][1:] == ["GB/s", pytest.approx(4814.3, abs=0.05), pytest.approx(4814.3, abs=0.05),
                                         pytest.approx(1.0)]
    assert ceil["FP32 CUDA cores"][1:] == ["TFLOP/s", pytest.approx(65.34, abs=0.005), pytest.approx(65.34, abs=0.005),
                                           pytest.approx(1.0)]
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
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [f.name for f in tmp_path.iterdir()] == ["rl.png"]  # exactly the file named
    assert "cublas" in p.stdout and "compute-bound" in p.stdout


MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


@pytest.mark.parametrize("name", ["x.png", "x.svg", "x.pdf", "X.SVG"])
def test_roofline_out_format_follows_the_extension(tmp_path, name):
    p = rooflab("roofline", "--gpu", "h200", "--out", name, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [f.name for f in tmp_path.iterdir()] == [name]  # that file only: no sibling, no temporary
    data = (tmp_path / name).read_bytes()
    assert data.startswith(MAGIC[name.rsplit(".", 1)[1].lower()]), data[:20]
    if name.lower().endswith(".svg"):
        assert b"<svg" in data[:2000]
    (tmp_path / "plain").touch()
    assert (tmp_path / name).stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777


@pytest.mark.parametrize("name", ["x.txt", "x", "x.jpeg"])
def test_roofline_out_unknown_extension_is_a_usage_error(tmp_path, name):
    p = rooflab("roofline", "--gpu", "h200", "--out", name, cwd=tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rooflab: error:") and name in lines[0], p.stderr
    assert not list(tmp_path.iterdir())


def test_specs_h100_sxm_fp32_peak():
    p = rooflab("specs", "--gpu", "h100-sxm", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "66.9" in p.stdout and "33.5" in p.stdout  # the forgot-FMA figure beside it


def test_ridge_h100():
    p = rooflab("ridge", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "295.2" in p.stdout and "590.7" in p.stdout and "1,125.0" in p.stdout


def test_a_profile_is_kept_and_a_missing_ncu_is_said(monkeypatch):
    """lab.run keeps the profile section (it has its own 'skipped' list: user kernels it could not
    profile) and turns only a missing or refused ncu into report.profile_skipped."""
    from rooflab import lab

    def fake_measure(sections, *, progress=None, on_step=None, doc=None, partial_dir=None):
        doc.update({"device": {"name": "x"}, "report": {"finished_steps": []}})
        doc["profile"] = sections["profile"](None, lambda _m: None)
        return doc

    monkeypatch.setattr(lab, "measure", fake_measure)
    monkeypatch.setattr(lab, "report_sections", lambda cfg: {"profile": lambda dev, say: {"kernels": [1], "skipped": []}})
    doc = lab.run(lab.ReportConfig(out_dir=None))
    assert doc["profile"] == {"kernels": [1], "skipped": []} and "profile_skipped" not in doc["report"]
