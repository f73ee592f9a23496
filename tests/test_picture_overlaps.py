"""No label in a picture overlaps another label, a marker, a roof label or the legend, and no data
line runs through a label: every box measured with matplotlib's renderer (rooflab.report.collisions)
on the recorded H200 document (21 rungs), subsets of 5 and 12 of its rungs, and every spec-only GPU;
a planted collision must be found. CPU only."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rooflab.lab import spec_only
from rooflab.model import placement
from rooflab.model.specs import SPECS
from rooflab.report.collisions import collisions, shapes
from rooflab.report.hierarchy_picture import plot_levels
from rooflab.report.picture import plot

DATA = Path(__file__).parent / "data"
LEVELS = json.loads((DATA / "h200_report_levels.json").read_text())
SIMT_FIRST = ["naive", "coalesced", "tiled16", "tiled32", "regtile", "vec", "warptile", "pipelined", "cublas"]


def subset(n: int) -> dict:
    """The recorded H200 document with n kernels placed: the FMA and copy ceilings and n - 2 of its GEMM
    rungs (SIMT and tensor mixed), profiles cut to match."""
    doc = copy.deepcopy(LEVELS)
    rungs = doc["gemm"]["rungs"]
    order = [r["kernel"] for r in rungs]
    keep = set((order[::2] + order[1::2])[:n - 2])
    doc["gemm"]["rungs"] = [r for r in rungs if r["kernel"] in keep]
    gemm = set(order)
    doc["profile"]["kernels"] = [k for k in doc["profile"]["kernels"] if k["label"] not in gemm or k["label"] in keep]
    return doc


def with_triton(doc: dict) -> dict:
    """The recording with two Triton rungs beside the ladder (copies of the cuBLAS FP32 and BF16 records at
    90% of their speed, profiles included): 21 kernels placed, and a third family."""
    doc = copy.deepcopy(doc)
    for base, name in (("cublas", "triton_fp32"), ("cublas_bf16", "triton_bf16")):
        rec = copy.deepcopy(next(r for r in doc["gemm"]["rungs"] if r["kernel"] == base))
        rec["kernel"], rec["title"] = name, name
        t = rec["timing"]
        for key in ("median_ms", "mean_ms", "min_ms", "max_ms"):
            t[key] /= 0.9
        t["times_ms"] = [x / 0.9 for x in t["times_ms"]]
        doc["gemm"]["rungs"].append(rec)
        prof = copy.deepcopy(next(k for k in doc["profile"]["kernels"] if k["label"] == base))
        prof["label"] = name
        doc["profile"]["kernels"].append(prof)
    return doc


def show(found) -> str:
    return "\n".join(str(c) for c in found)


@pytest.mark.parametrize("n", [5, 12, 19, 21])
def test_flat_roofline_has_no_collisions(n, tmp_path):
    doc = {19: LEVELS, 21: with_triton(LEVELS)}.get(n) or subset(n)
    placed = len(placement.roofline(doc).points)
    assert placed == n  # the recording: 17 rungs, the FMA and copy kernels
    fig = plot(placement.roofline(doc), png_path=tmp_path / "r.png")
    found = collisions(fig)
    assert not found, show(found)


@pytest.mark.parametrize("n", [5, 12, 19, 21])
def test_hierarchical_roofline_has_no_collisions(n, tmp_path):
    doc = {19: LEVELS, 21: with_triton(LEVELS)}.get(n) or subset(n)
    fig = plot_levels(doc, tmp_path / "levels.png")
    found = collisions(fig)
    assert not found, show(found)
    labels = [s.name for s in shapes(fig) if s.kind == "text" and s.owner.get_bbox_patch() is not None]
    kernels = {k["label"] for k in doc["profile"]["kernels"]} - {"copy", "copy_scalar"}  # no FLOPs: notes
    assert {lab.split(":")[0] for lab in labels} == kernels


def test_hierarchical_roofline_splits_by_family_at_21_rungs(tmp_path):
    fig = plot_levels(LEVELS, tmp_path / "levels.png")
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["SIMT rungs and the FMA ceiling (FP32 CUDA cores)", "tensor-core rungs"]
    simt = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert all(f"{k}:" in simt for k in SIMT_FIRST + ["fma"]) and "wgmma_bf16" not in simt
    assert len(plot_levels(subset(5), tmp_path / "five.png").axes) == 1  # few kernels: one panel
    three = plot_levels(with_triton(LEVELS), tmp_path / "three.png")
    assert [ax.get_title() for ax in three.axes][2] == "Triton rungs"


@pytest.mark.parametrize("key", [s.key for s in SPECS])
def test_spec_only_pictures_have_no_collisions(key, tmp_path):
    doc = spec_only(key)
    found = collisions(plot(placement.roofline(doc)))
    assert not found, show(found)
    found = collisions(plot_levels(doc, tmp_path / "levels.png"))
    assert not found, show(found)


def test_a_planted_collision_is_found():
    fig = plot(placement.roofline(LEVELS))
    ax = fig.axes[0]
    assert not collisions(fig)
    roof = next(t for t in ax.texts if t.get_text().startswith("FP32"))
    ax.annotate("planted", roof.xy, xytext=roof.xyann, textcoords="offset points", ha=roof.get_ha(),
                va=roof.get_va(), fontsize=9)
    found = [str(c) for c in collisions(fig)]
    assert any("'planted'" in c and "FP32" in c for c in found), found


def test_a_label_on_a_marker_is_found():
    fig = plot(placement.roofline(LEVELS))
    ax = fig.axes[0]
    p = next(p for p in placement.roofline(LEVELS).points if p.label == "naive")
    ax.text(p.ai, p.flops / 1e12, "on naive", ha="center", va="center")
    found = [str(c) for c in collisions(fig)]
    assert any("'on naive'" in c and "marker" in c for c in found), found


def test_a_line_through_a_label_is_found():
    fig = plot(placement.roofline(LEVELS))
    ax = fig.axes[0]
    roof = next(t for t in ax.texts if t.get_text().startswith("FP32"))
    fig.canvas.draw()
    bb = roof.get_window_extent(fig.canvas.get_renderer())
    _x, y = ax.transData.inverted().transform(((bb.x0 + bb.x1) / 2, (bb.y0 + bb.y1) / 2))
    ax.plot([1, 1e4], [y, y], color="red")  # through the middle of the label
    found = [str(c) for c in collisions(fig)]
    assert any("FP32" in c and "line" in c for c in found), found


def test_tick_labels_are_checked():
    fig = plot(placement.roofline(LEVELS))
    ticks = [s for s in shapes(fig) if s.kind == "tick"]
    assert {"0.01", "1", "1000"} <= {s.name for s in ticks}
    ax = fig.axes[0]
    ax.tick_params(axis="x", labelsize=60)  # huge tick labels run into each other
    assert any("tick" in str(c) for c in collisions(fig))


@pytest.mark.parametrize("name", ["h200_results.json", "h200_report.json", "h200_bandwidth_4gib.json"])
def test_every_recorded_document_draws_without_collisions(name):
    doc = json.loads((DATA / name).read_text())
    found = collisions(plot(placement.roofline(doc)))
    assert not found, show(found)
