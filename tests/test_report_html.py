"""report.html without a browser: one self-contained file under 5 MB with the report's content, every
table whole, every placed kernel a hoverable point with its tooltip, a legend entry per family; and
where Plotly is missing, report.html is left out with one warning line (tests/test_report_browser.py
opens the page in headless Chromium)."""

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflab import cli as cli_mod
from rooflab import lab, results
from rooflab.model import hierarchy as hier
from rooflab.report import document, html, interactive
from rooflab.report import gemm as render_gemm

pytest.importorskip("plotly")

DATA = Path(__file__).parent / "data"
FULL = DATA / "h200_report_levels.json"
LIMIT = 5_000_000  # bytes


def _page(doc: dict) -> str:
    return document.files(doc)["report.html"]


@pytest.fixture(scope="module")
def full():
    doc = results.load(FULL)
    return doc, _page(doc)


def figure_data(page: str, kind: str) -> list[dict]:
    """The traces Plotly.newPlot gets for the figure that replaces picture ``kind``."""
    m = re.search(r'Plotly\.newPlot\(\s*"figure-' + kind + r'",\s*(\[.*?\]),\s*\{', page, flags=re.S)
    assert m, kind
    return json.loads(m.group(1))


def test_self_contained_and_small(full):
    _doc, page = full
    assert len(page.encode("utf-8")) <= LIMIT
    # nothing is fetched: no external script, stylesheet, image or frame
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=", page)
    assert not re.search(r"<link[^>]*href=\"(?!data:)", page)
    assert "Plotly.newPlot" in page and page.index("<script>") < page.index("</head>")  # the runtime, inlined


def test_the_same_content_as_report_md(full):
    doc, page = full
    tables = document.all_tables(doc)
    for t in tables:  # every table whole, sortable
        m = re.search(rf'<table class="sortable" id="table-{re.escape(t.key)}">(.*?)</table>', page, flags=re.S)
        assert m, t.key
        assert m.group(1).count("<tr>") == len(t.rows) + 1, t.key  # the header and every row
    for heading in re.findall(r"^#+ (.+)$", document.markdown(doc, tables), flags=re.M):
        assert html._inline(heading) in page, heading
    for title, _text in render_gemm.paragraphs(doc):
        assert f"<strong>{html._inline(title)}.</strong>" in page
    assert "guard zones @ 512x512x512: nothing written outside C" in page  # the full check list
    assert "b200 FP4 tensor" in page  # and the all-GPU ridge table


def test_every_point_is_a_hoverable_point_with_its_tooltip(full):
    doc, page = full
    rl = document.roofline_for(doc)
    h = hier.hierarchy(doc)
    flat = [p for tr in figure_data(page, "roofline") if tr.get("mode") == "markers" for p in tr["customdata"]]
    assert flat == [p.label for p in interactive.flat_points(doc, rl, h)] or sorted(flat) == sorted(
        p.label for p in interactive.flat_points(doc, rl, h))
    assert len(flat) == len(rl.points) == 19
    traces = [tr for tr in figure_data(page, "roofline") if tr.get("mode") == "markers"]
    hover = {c: t for tr in traces for c, t in zip(tr["customdata"], tr["hovertext"], strict=True)}
    tip = hover["wgmma_bf16"]
    k = next(k for k in h.kernels if k.label == "wgmma_bf16")  # the binding level is the model's, not the page's
    for what in ("wgmma_bf16", "(tensor)", "time: 0.238 ms", "578 TFLOP/s", "AI L1/shared: 81.9 FLOP/B",
                 "AI L2: 87.7 FLOP/B", "AI HBM: 676 FLOP/B", f"binding: {k.binding_name}",
                 f"{k.pct_of_attainable:.1f}% of attainable", "% of roof"):
        assert what in tip, (what, tip)
    assert "binding: L1/shared" in hover["naive"]
    # the hierarchical view: every kernel with FLOPs once per level it has bytes for
    levels = [c for tr in figure_data(page, "levels") if tr.get("mode") == "markers" for c in tr["customdata"]]
    expected = [k for k in h.kernels if k.achieved and k.flops]
    assert len(levels) == sum(len(k.points) for k in expected) and set(levels) == {k.label for k in expected}


def test_a_legend_entry_per_family(full):
    doc, page = full
    names = [tr["name"] for tr in figure_data(page, "roofline") if tr.get("mode") == "markers"]
    assert names == ["SIMT", "tensor", "ceilings"]
    fams = {p.label: p.family for p in interactive.flat_points(doc, document.roofline_for(doc), hier.hierarchy(doc))}
    assert fams["cublas"] == "SIMT" and fams["cublas_tf32"] == "tensor" and fams["fma (8 acc)"] == "ceilings"
    assert interactive.family("triton_tf32", doc) == "Triton"
    doc2 = json.loads(json.dumps(doc))
    doc2["gemm"]["rungs"][0]["kernel"] = "my_gemm"
    assert interactive.family("my_gemm", doc2) == "user kernels"


def test_tables_sort_by_number_not_text(full):
    _doc, page = full
    gemm = re.search(r'id="table-gemm">(.*?)</table>', page, flags=re.S).group(1)
    assert "<td>141.171</td>" in gemm and "<td>5,418</td>" in gemm  # a number's text sorts by that number
    # a cell whose text does not start with its number carries it: the worst error sorts by error / tolerance
    checks = re.search(r'id="table-check_summary">(.*?)</table>', page, flags=re.S).group(1)
    assert '<td data-v="0.963898">normwise 9.6e-06 / 1e-05 @ 4096</td>' in checks
    assert "#table-gemm td:nth-child(3)," in page  # numbers right-aligned
    assert "table.sortable th" in page


def test_report_gpu_and_from_write_report_html(tmp_path):
    for args in (["--gpu", "h200"], ["--from", str(FULL)]):
        out = tmp_path / args[0].strip("-")
        r = CliRunner().invoke(cli_mod.cli, ["report", *args, "--out", str(out)])
        assert r.exit_code == 0, r.output
        page = (out / "report.html").read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and "figure-roofline" in page
        assert "report.html" in results.read_manifest(out)
    spec = (tmp_path / "gpu" / "report.html").read_text(encoding="utf-8")
    assert "Nothing was measured" in spec
    marks = [c for tr in figure_data(spec, "roofline") if tr.get("mode") == "markers" for c in tr["customdata"]]
    assert marks == ["y = a·x: AI 0.125, 0.6 TFLOP/s attainable"]


def test_without_plotly_report_html_is_left_out_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)  # import plotly now raises ImportError
    assert html.unavailable() == "plotly is not installed (pip install plotly)"
    r = CliRunner().invoke(cli_mod.cli, ["report", "--from", str(FULL), "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    warned = [ln for ln in r.output.splitlines() if "report.html" in ln and ln.startswith("warning")]
    assert warned == ["warning: report.html not written: plotly is not installed (pip install plotly)"]
    assert not (tmp_path / "o" / "report.html").exists() and (tmp_path / "o" / "report.md").exists()
    assert "report.html" not in lab.write_outputs(results.load(FULL), str(tmp_path / "p"))
