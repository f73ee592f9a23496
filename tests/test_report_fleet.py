"""Rendering fleet documents: node table, link matrices, all-reduce."""

from __future__ import annotations

from rooflab.fleet import merge
from rooflab.report import fleet as render

from fleet_fixtures import allreduce_section, four, h200, links_section  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- rendering

def test_node_table_and_matrices(four):
    node = {"kind": merge.NODE_KIND, "host": "node-a", "links": links_section(failed=((0, 1),)),
            "allreduce": allreduce_section(), "torch_peer": {"available": False, "reason": "no torch"}}
    doc = merge.merge([(d, None) for d in four], [node])
    t = render.node_table(doc)
    assert len(t.rows) == 5 and t.rows[-1][0] == "median"
    assert "BF16 TFLOP/s" not in t.columns
    flags = {r[1]: r[-1] for r in t.rows[:-1]}
    assert flags["GPU2"].startswith("OUTLIER") and flags["GPU3"] == "ok"
    assert any("(90.9%)" in str(c) for c in t.rows[2])  # 0.90 / 0.99
    tables = render.link_tables(doc)
    titles = [x.title for x in tables]
    assert any("link between GPUs" in x for x in titles) and any("pinned host" in x for x in titles)
    ce = next(x for x in tables if "copy engine" in x.title and "one direction" in x.title)
    assert ce.rows[0][1:] == ["—", "FAILED"] and ce.rows[1][1:] == ["393 (82%)", "—"]
    bi = next(x for x in tables if "both directions" in x.title)
    assert bi.rows[0][2] == "764 (80%)"
    kind = next(x for x in tables if "link between" in x.title)
    assert kind.rows[0][2] == "NV18 · 478"
    assert "393 GB/s" in tables[-1].notes[-1]  # the torch reference, with its source
    ar = render.allreduce_tables(doc)[0]
    row16 = next(r for r in ar.rows if r[0] == "16 MiB")
    assert row16[3] == "220.0" and row16[5] == "220"
    assert next(r for r in ar.rows if r[0] == "1 GiB")[3] == "330.0"
    md = render.markdown(doc)
    assert "# rooflab fleet report" in md and "NCCL all-reduce" in md and "Outliers" in md


def test_a_link_faster_than_its_reported_kind_is_marked():
    sec = links_section()
    for p in sec["pairs"]:
        p["link"] = {"type": "PCIe", "label": "PCIe gen5 x16", "theoretical_gbs": 63.0}
    tables = render.link_tables({"fleet": {"links": {"h": sec}}})
    ce = next(x for x in tables if "copy engine" in x.title and "one direction" in x.title)
    assert ce.rows[0][2] == "393 (624% !)" and any("misreported" in n for n in ce.notes)


def test_nccl_unavailable_renders_cleanly():
    doc = {"fleet": {"allreduce": {"h": {"available": False, "reason": "NCCL not available through CuPy (x)"}}}}
    t = render.allreduce_tables(doc)[0]
    assert t.rows == [["NCCL not available through CuPy (x)"]]
