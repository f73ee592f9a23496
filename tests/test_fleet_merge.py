"""Merging per-GPU documents into one fleet document (fleet.merge)."""

from __future__ import annotations

import copy
import json

import pytest

from rooflab import results
from rooflab.fleet import layout, merge
from rooflab.model.fleet.summary import summarize_gpu
from rooflab.report import fleet as render

from fleet_fixtures import h200, scaled  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- merging

def test_summary_reads_the_recorded_h200(h200):
    s = summarize_gpu(h200)
    assert s["copy_gbs"] == pytest.approx(4254, rel=1e-3)  # float4, median of the two rounds
    assert s["fma_tflops"] == pytest.approx(65.34, rel=1e-3)
    assert s["sgemm_tflops"] == pytest.approx(51.22, rel=1e-3)
    assert s["bf16_tflops"] is None  # no bf16 rung in this run
    assert s["telemetry"]["sm_mhz_load"] == 1980 and s["telemetry"]["reasons"] == []


def test_bf16_read_generically_from_any_bf16_rung(h200):
    d = copy.deepcopy(h200)
    rung = copy.deepcopy(next(r for r in d["gemm"]["rungs"] if r["kernel"] == "cublas"))
    rung.update(kernel="cublas_bf16_tc", precision="bf16")
    rung["timing"]["median_ms"] = rung["flops"] / 600e12 * 1e3  # 600 TFLOP/s
    d["gemm"]["rungs"].append(rung)
    s = summarize_gpu(d)
    assert s["bf16_tflops"] == pytest.approx(600, rel=1e-9)
    assert s["sgemm_tflops"] == pytest.approx(51.22, rel=1e-3)  # the FP32 figure ignores it
    table = render.node_table(merge.merge([(d, "a.json")]))
    assert "BF16 TFLOP/s" in table.columns


def test_merge_keys_by_uuid_sorted_with_node_sections(h200):
    docs = [scaled(h200, 1.0, uuid="GPU-bbbb", host="node-b", index=0),
            scaled(h200, 1.0, uuid="GPU-aaa1", host="node-a", index=1),
            scaled(h200, 1.0, uuid="GPU-aaa0", host="node-a", index=0)]
    node = {"kind": merge.NODE_KIND, "host": "node-a", "gpus": [], "links": {"devices": []},
            "allreduce": {"available": False, "reason": "x"}, "torch_peer": None, "errors": ["boom"]}
    doc = merge.merge([(d, f"gpus/{i}.json") for i, d in enumerate(docs)], [node], command="test")
    f = doc["fleet"]
    assert list(f["gpus"]) == ["GPU-aaa0", "GPU-aaa1", "GPU-bbbb"]
    g = f["gpus"]["GPU-aaa1"]
    assert (g["host"], g["index"], g["serial"], g["pci_bus_id"]) == ("node-a", 1, "S1", "0000:02:00.0")
    assert g["document"]["gemm"]["rungs"]  # the whole per-GPU document travels along
    assert f["links"] == {"node-a": {"devices": []}} and "node-a" in f["allreduce"]
    assert f["errors"] == ["node-a: boom"]
    assert doc["format"] == results.FORMAT and doc["device"] is None
    assert f["medians"]["fma_tflops"] == pytest.approx(65.34, rel=1e-3)


def test_merge_flags_two_documents_for_one_gpu(h200):
    a = scaled(h200, 1.0, uuid="GPU-same", index=0)
    b = scaled(h200, 1.0, uuid="GPU-same", index=1)
    f = merge.merge([(a, "a"), (b, "b")])["fleet"]
    assert len(f["gpus"]) == 1 and "two documents for GPU GPU-same" in f["errors"][0]


def test_merge_dir_roundtrip(tmp_path, h200):
    for i, fac in enumerate((1.0, 0.9)):
        p = layout.gpu_json(tmp_path, "node-a", i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(scaled(h200, fac, uuid=f"GPU-{i}", index=i)))
    (tmp_path / "gpus" / "notes.json").write_text("[1, 2]")  # not a results document: ignored
    gpu_docs, node_docs, errs = merge.load_dir(tmp_path)
    assert len(gpu_docs) == 2 and node_docs == [] and errs == []
    doc = merge.merge(gpu_docs, node_docs)
    written = merge.write(doc, tmp_path)
    assert written == ["fleet.json", "fleet.md", "fleet_gpus.csv"]
    again = json.loads((tmp_path / "fleet.json").read_text())
    assert list(again["fleet"]["gpus"]) == ["GPU-0", "GPU-1"]
    assert "OUTLIER" in (tmp_path / "fleet.md").read_text()


def test_merge_dir_merges_and_writes_what_a_run_left(tmp_path, h200):
    for i, fac in enumerate((1.0, 0.5)):
        p = layout.gpu_json(tmp_path, "node-a", i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(scaled(h200, fac, uuid=f"GPU-{i}", index=i)))
    doc, written = merge.merge_dir(str(tmp_path), outlier_pct=20)
    assert written == ["fleet.json", "fleet.md", "fleet_gpus.csv"]
    assert doc["fleet"]["launch"] == {"mode": "merge", "directory": str(tmp_path)}
    assert doc["fleet"]["config"]["outlier_pct"] == 20 and {o["uuid"] for o in doc["fleet"]["outliers"]} == {"GPU-1"}
    assert json.loads((tmp_path / "fleet.json").read_text())["fleet"]["gpus"].keys() == doc["fleet"]["gpus"].keys()


def test_merge_dir_refuses_a_folder_with_no_gpu_documents_and_a_negative_threshold(tmp_path):
    from rooflab.errors import UsageError

    with pytest.raises(UsageError, match="no per-GPU documents"):
        merge.merge_dir(str(tmp_path))
    with pytest.raises(UsageError, match="--outlier-pct"):
        merge.merge_dir(str(tmp_path), outlier_pct=-1)
    assert list(tmp_path.iterdir()) == []  # nothing written
