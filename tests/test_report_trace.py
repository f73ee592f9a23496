"""A trace section rendered from the document alone: the ranked table, the limits paragraph and
the bubble roofline (constructed trace, tests/trace_fixtures.py)."""

from __future__ import annotations

import pytest
from trace_fixtures import chrome_trace, h200_doc, ncu_rows

from rooflab.model import trace as model
from rooflab.model.hierarchy import levels
from rooflab.report import trace as render
from rooflab.tracing import roofs_of


@pytest.fixture
def doc() -> dict:
    d = h200_doc()
    lv, roofs = levels(d), roofs_of(d)
    t = chrome_trace()
    groups = model.group(model.in_window(t, model.launches_from_chrome_trace(t), "step"))
    samples = model.ncu_samples(ncu_rows(), groups)
    placed = [model.place(g, samples.get(g.key, []), lv, roofs) for g in model.choose(groups, 0.9)]
    d["trace"] = model.section(groups, placed, command=["python3", "x.py"], levels=lv, roofs=roofs,
                               ceilings_source="constructed", traced_step_s=1.1e-3, untraced_step_s=1e-3,
                               collector="torch.profiler (CUPTI)")
    return d


def test_ranked_table(doc):
    t = render.ranked_table(doc)
    assert [r[0] for r in t.rows] == [1, 2, 3]
    assert t.rows[0][5] == "BF16 compute" and t.rows[1][5] == "HBM"
    assert t.rows[2][5] == "not profiled"
    assert "vectorized_elementwise_kernel <<<16384×1×1, 128×1×1>>>" == t.rows[1][1]
    assert any("1 group not profiled" in n for n in t.notes)
    csv = t.to_csv().splitlines()
    assert len(csv) == 4 and "headroom ms" in csv[0]


def test_paragraphs_quote_the_run(doc):
    paras = dict(render.paragraphs(doc))
    assert "0.250 ms over 1 launch," in paras["Where the time is"]
    assert "1 group (1.3% of the GPU time) not profiled" in paras["What was not measured"]
    assert "(+10.0%)" in paras["What was not measured"]


def test_identical_roofs_are_drawn_once():
    merged = render.merged_roofs([{"name": "BF16 tensor", "flops": 1.0, "measured": False},
                                  {"name": "FP16 tensor", "flops": 1.0, "measured": False},
                                  {"name": "FP32", "flops": 0.1, "measured": True}])
    assert merged == [(0.1, ["FP32"], True), (1.0, ["BF16 tensor", "FP16 tensor"], False)]


def test_picture(doc, tmp_path):
    render.plot(doc, tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
