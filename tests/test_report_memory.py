"""report.memory: the memory tables, paragraphs and hierarchy table from a results document, with
failures shown, a spec-only document and results older than the level metrics."""

from __future__ import annotations

import copy
import json

from rooflab.model.hierarchy import hierarchy, memory_summary

from memory_fixtures import DATA, doc, memory_section, spec_doc  # noqa: F401 (pytest fixtures)


def test_tables(doc):
    from rooflab.report.memory import hierarchy_table, memory_tables

    tables = memory_tables(doc)
    assert [t.key for t in tables] == ["memory_l2", "memory_shared", "memory_peaks"]
    l2 = tables[0]
    assert len(l2.rows) == 14 + 1  # the sweep and the copy
    assert l2.rows[4][:3] == ["16", "0.27", "7,610"] and l2.rows[4][3] == "100%"
    assert l2.rows[-2][0] == "256" and l2.rows[-2][4] == "0.90×"
    assert l2.rows[-1][0].startswith("copy 16")
    shared = tables[1]
    assert shared.rows[0][1:3] == ["31.20", "93.3%"] and shared.rows[1][1] == "3.95"
    assert shared.rows[-1][:2] == ["theoretical", "33.45"]
    peaks = tables[2]
    assert peaks.rows[0][2:5] == ["32.60", "33.45", "97.4%"]
    assert peaks.rows[1][2:5] == ["130.10", "133.82", "97.2%"]
    h = hierarchy_table(doc)
    by = {r[0]: r for r in h.rows}
    assert by["naive"][8] == "L1/shared" and by["naive"][2] == "0.118"
    assert by["copy"][8] == "HBM" and "busy" in by["copy"][7]
    for t in [*tables, h]:
        assert t.to_markdown() and t.to_csv()


def test_paragraphs_use_the_numbers(doc):
    from rooflab.report.memory import memory_paragraphs

    paras = dict(memory_paragraphs(doc))
    assert set(paras) == {"L2 bandwidth and the cliff to HBM", "Shared-memory bandwidth and bank conflicts",
                          "FP64 and FP16 peaks", "Which level binds each kernel"}
    l2 = paras["L2 bandwidth and the cliff to HBM"]
    assert "7.61 TB/s" in l2 and "1.58× the HBM peak" in l2 and "two partitions of 30 MiB" in l2
    assert "first drops below it at 32 MiB" in l2
    assert "93.3% of the theoretical 33.45 TB/s" in paras["Shared-memory bandwidth and bank conflicts"]
    assert "7.9× slower" in paras["Shared-memory bandwidth and bank conflicts"]
    binds = paras["Which level binds each kernel"]
    assert "naive is bound by L1/shared traffic: its L1/shared AI 0.118 FLOP/B × 31.20 TB/s = 3.67" in binds
    assert "copy does no FLOPs; its busiest level is HBM" in binds
    # not canned: change the run and the text follows
    d = copy.deepcopy(doc)
    for r in d["memory"]["shared"]["rows"]:
        if r["variant"] == "conflict-free":
            r["rate"] = 25.0e12
    d["memory"]["summary"] = memory_summary(d["memory"])
    text = dict(memory_paragraphs(d))["Shared-memory bandwidth and bank conflicts"]
    assert "25.00 TB/s" in text and "74.7%" in text
    assert "× 25.00 TB/s" in dict(memory_paragraphs(d))["Which level binds each kernel"]


def test_errors_are_shown_not_hidden(doc):
    from rooflab.report.memory import memory_tables

    d = copy.deepcopy(doc)
    d["memory"]["fp16"] = {"label": "fp16", "verified": False, "error": "hfma2_chain<8>: NVRTC compile failed: x",
                           "rounds": []}
    d["memory"]["summary"] = memory_summary(d["memory"])
    peaks = memory_tables(d)[2]
    assert peaks.rows[1][-1] == "ERROR" and peaks.rows[1][2] is None
    assert any("NVRTC compile failed" in n for n in peaks.notes)


def test_a_part_that_failed_whole_is_noted(doc):
    from rooflab.report.memory import memory_tables

    d = copy.deepcopy(doc)
    d["memory"]["l2_sweep"] = {"label": "l2", "verified": False, "error": "l2_read: NVRTC compile failed: y",
                               "rounds": []}
    d["memory"]["summary"] = memory_summary(d["memory"])
    l2 = memory_tables(d)[0]
    assert l2.rows[-1][0].startswith("copy") and any("NVRTC compile failed: y" in n for n in l2.notes)


def test_spec_only(spec_doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels
    from rooflab.report.memory import hierarchy_table, memory_paragraphs, memory_tables

    assert memory_tables(spec_doc) == [] and memory_paragraphs(spec_doc) == []
    assert hierarchy_table(spec_doc) is None
    h = hierarchy(spec_doc)
    assert h.kernels == [] and [lv.key for lv in h.levels] == ["L1", "DRAM"]
    assert not any(lv.measured for lv in h.levels)
    assert [r.precision for r in h.roofs] == ["fp32"]
    png = tmp_path / "spec.png"
    plot_levels(spec_doc, png)
    assert png.stat().st_size > 10_000


def test_old_results_have_no_hierarchy_table():
    from rooflab.report.memory import hierarchy_table, memory_paragraphs

    d = json.loads((DATA / "h200_results.json").read_text())  # profiles without L1/L2 bytes
    assert hierarchy_table(d) is None and memory_paragraphs(d) == []
    assert hierarchy({"device": None}) is None
