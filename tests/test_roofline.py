"""The roofline (SPEC P9): the arithmetic, the table, the JSON round trip and the picture. CPU only."""

import json
import math
import re
from html import unescape

import pytest

from rooflab.errors import UsageError
from rooflab.model.roofline import AddedCeiling, Point, Roof, Roofline, example
from rooflab.report.picture import plot


def test_example_shape():
    rl = example()
    assert rl.bandwidth == 4.81e12
    assert [r.name for r in rl.roofs] == ["FP32 CUDA cores", "TF32 tensor cores", "BF16 tensor cores"]
    assert [r.dashed for r in rl.roofs] == [False, True, True]
    assert [p.label for p in rl.points] == ["copy", "fma", "naive", "coalesced", "tiled16", "tiled32", "cublas"]


def test_ridge_points():
    rl = example()
    assert rl.ridge("FP32 CUDA cores") == pytest.approx(66.9e12 / 4.81e12)  # ~13.9 FLOP/B
    assert rl.ridge("BF16 tensor cores") == pytest.approx(989e12 / 4.81e12)  # ~206 FLOP/B
    assert rl.ridge(rl.roofs[1]) == pytest.approx(494.7e12 / 4.81e12)
    assert rl.ridge() == rl.ridge("FP32 CUDA cores")  # "" = the first roof
    assert rl.ridge("bf16") == rl.ridge("BF16 tensor cores")  # by precision, any case


def test_attainable():
    rl = example()
    fp32 = rl.roofs[0]
    assert rl.attainable(0.125, fp32) == pytest.approx(0.125 * 4.81e12)  # on the slope
    assert rl.attainable(1000, fp32) == 66.9e12  # under the roof
    assert rl.attainable(rl.ridge(fp32), fp32) == pytest.approx(66.9e12)  # both meet at the ridge
    assert rl.attainable(0, fp32) == 0
    assert rl.attainable(math.inf, fp32) == 66.9e12
    assert rl.attainable(1000, "BF16 tensor cores") == 989e12
    with pytest.raises(UsageError):
        rl.attainable(-1, fp32)
    with pytest.raises(UsageError):
        rl.attainable(1, "FP8 tensor cores")  # no such roof


def test_rows_classification_and_percentages():
    rows = {r["label"]: r for r in example().rows()}
    assert len(rows) == 7
    assert rows["naive"]["bound"] == "memory-bound"
    assert rows["copy"]["bound"] == "memory-bound"
    assert rows["tiled32"]["bound"] == "memory-bound"  # AI 8 < ridge 13.9
    assert rows["cublas"]["bound"] == "compute-bound"
    assert rows["fma"]["bound"] == "compute-bound"
    n = rows["naive"]
    assert n["roof"] == "FP32 CUDA cores"
    assert n["ai_source"] == "model"
    assert n["achieved_tflops"] == pytest.approx(0.97)
    assert n["attainable_tflops"] == pytest.approx(0.25 * 4.81)
    assert n["pct_of_attainable"] == pytest.approx(100 * 0.97 / (0.25 * 4.81))
    c = rows["cublas"]
    assert c["attainable_tflops"] == pytest.approx(66.9)
    assert c["pct_of_attainable"] == pytest.approx(100 * 50.4 / 66.9)
    assert rows["fma"]["ai_source"] == "ncu"
    assert rows["copy"]["note"] == "copy placed as y=a·x"


def test_rows_judge_each_point_against_its_own_roof():
    rl = example()
    rl.points.append(Point("bf16 mma", 400, 600e12, "ncu", "BF16 tensor cores"))
    rl.points.append(Point("no ai", None, 1e12, "model", ""))
    rows = {r["label"]: r for r in rl.rows()}
    b = rows["bf16 mma"]
    assert b["roof"] == "BF16 tensor cores"
    assert b["bound"] == "compute-bound"  # 400 > ridge 206
    assert b["pct_of_attainable"] == pytest.approx(100 * 600 / 989)  # not against FP32's 66.9
    u = rows["no ai"]
    assert u["bound"] == "unknown" and u["attainable_tflops"] is None and u["pct_of_attainable"] is None


def test_json_round_trip():
    rl = example()
    rl.points.append(Point("inf", math.inf, 1e12, "ncu", "FP32 CUDA cores", note="register only"))
    rl.points.append(Point("none", None, 2e12, "model", ""))
    rl.added_ceilings.append(AddedCeiling("FP32 add chains", 33e12, "FLOP/s", "fadd_chain<8>"))
    text = json.dumps(rl.to_dict(), allow_nan=False)  # strict JSON: inf is written as a string
    back = Roofline.from_dict(json.loads(text))
    assert back == rl
    assert back.points[-2].ai == math.inf
    assert back.rows() == rl.rows()


def test_bad_input_is_a_usage_error():
    with pytest.raises(UsageError):
        Roofline("x", bandwidth=0)
    with pytest.raises(UsageError):
        Roof("FP32 CUDA cores", -1.0)
    with pytest.raises(UsageError):
        Roofline.from_dict({"bandwidth": 1e12})  # no device
    with pytest.raises(UsageError):
        AddedCeiling("toy", 1e12, "GB/s")  # a ceiling is FLOP/s or B/s
    with pytest.raises(UsageError):
        AddedCeiling("toy", math.inf, "B/s")


def test_roof_labels():
    rl = example()
    assert rl.roofs[0].label == "FP32 66.9 TFLOP/s"
    assert rl.roofs[2].label == "BF16 tensor 989 TFLOP/s"


def _svg_text(path) -> str:
    """All text of an SVG written with svg.fonttype=none, entities decoded."""
    return unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def test_plot_writes_png_and_svg_with_every_label(tmp_path):
    rl = example()
    png, svg = tmp_path / "roof.png", tmp_path / "sub" / "roof.svg"
    fig = plot(rl, png_path=png, svg_path=svg)
    assert fig is not None
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert svg.stat().st_size > 10_000
    text = _svg_text(svg)
    for p in rl.points:
        assert p.label in text, p.label
    assert "AI ≫ 1e4" in text  # fma's AI (1e6) is off the axis: clamped, and said so
    assert "FP32 66.9 TFLOP/s" in text
    assert "BF16 tensor 989 TFLOP/s" in text
    assert "TF32 tensor 495 TFLOP/s" in text
    assert "ridge 13.9 FLOP/B" in text
    assert "HBM 4.81 TB/s" in text
    assert "AI measured (ncu)" in text and "AI modelled" in text
    assert "NVIDIA H200" in text


def test_plot_without_paths_and_odd_points(tmp_path):
    rl = example()
    rl.points += [
        Point("zero", 0, 0.1e12, "model", ""),
        Point("infinite", math.inf, 20e12, "ncu", ""),
        Point("tiny", 1e-6, 0.2e12, "model", ""),
        Point("noflops", 3, 0, "model", ""),
        Point("unknown", None, 3e12, "model", ""),
        Point("far", 5e4, 30e12, "ncu", "BF16"),
    ]
    fig = plot(rl)  # no files: just the figure
    assert fig.get_size_inches() == pytest.approx((10, 6.5))
    svg = tmp_path / "odd.svg"
    plot(rl, svg_path=svg)
    text = _svg_text(svg)
    for p in rl.points:
        assert p.label in text, p.label
    assert "AI = 0" in text
    assert "AI unknown" in text
    # the axis grew to take in 5e4, so the clamp edge is now 1e5
    assert "AI ≫ 1e5" in text


_PYPLOT_STATE = r"""
import sys
sys.path.insert(0, sys.argv[1])
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # pyplot loaded first, as in a notebook or a script that plots too
from rooflab.model.roofline import example
from rooflab.report.picture import plot

before = {k: repr(v) for k, v in matplotlib.rcParams.items()}
backend = matplotlib.get_backend()
plot(example())
assert plt.get_fignums() == [], plt.get_fignums()  # no figure registered with pyplot's manager
after = {k: repr(v) for k, v in matplotlib.rcParams.items()}
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
assert not changed, changed  # rc settings used for the drawing are restored
assert matplotlib.get_backend() == backend
print("ok")
"""


def test_plot_leaves_no_pyplot_state():
    """With pyplot already imported (a notebook, a script), plot() registers no figure with it and
    leaves every rcParam as it found it. Run in a fresh interpreter so that the test sees only
    plot()'s effect."""
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run([sys.executable, "-c", _PYPLOT_STATE, src], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_no_measured_point_sits_above_the_roofs():
    """The recorded H200 run (tensor rungs profiled): every GEMM point is placed with ncu's DRAM bytes and
    its own 2·M·N·K FLOPs, so none lands above the HBM roof at its AI or above its compute roof. Taking
    ncu's FP32 FLOPs put cuBLAS TF32 (399 TFLOP/s) at AI 0.1, forty times above the HBM line."""
    import json
    from pathlib import Path

    from rooflab.model import placement

    doc = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    rl = placement.roofline(doc)
    roofs = {r.name: r.flops for r in rl.roofs}
    gemm = {r["kernel"] for r in doc["gemm"]["rungs"]}
    placed = [p for p in rl.points if p.label in gemm]
    assert {p.label for p in placed} == gemm
    for p in placed:
        attainable = min(roofs[p.roof], rl.bandwidth * p.ai)
        assert p.flops <= 1.02 * attainable, (p.label, p.ai, p.flops, attainable)
    tf32 = next(p for p in placed if p.label == "cublas_tf32")
    assert tf32.measured_ai and tf32.ai > 100
