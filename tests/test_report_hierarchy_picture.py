"""report.hierarchy_picture: the memory levels' roofline picture, far points clamped, none without a
peak."""

from __future__ import annotations

import copy

import pytest

from rooflab.errors import UsageError
from rooflab.model import ncu
from rooflab.model.ncu import KernelProfile

from memory_fixtures import doc, memory_section  # noqa: F401 (pytest fixtures)


def test_picture(doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    png = tmp_path / "levels.png"
    fig = plot_levels(doc, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "naive: L1/shared" in texts and "L2 5.22 TB/s" in texts and "FP64 measured" in texts
    svg = tmp_path / "levels.svg"
    plot_levels(doc, svg)
    assert "<svg" in svg.read_text()[:500]


def test_picture_clamps_far_points(doc, tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    d = copy.deepcopy(doc)
    fma = KernelProfile("fma", ["fma_chain<8>"], {ncu.FFMA: 7e10, ncu.DURATION: 2.2e-3, ncu.L1_BYTES: 4096.0,
                                                 ncu.L2_BYTES: 0.0, ncu.DRAM_READ: 5120.0})
    d["profile"]["kernels"].append(fma.to_dict())
    fig = plot_levels(d, tmp_path / "x.png")
    assert "clamped" in " ".join(t.get_text() for ax in fig.axes for t in ax.texts)


def test_no_device_peak_no_picture(tmp_path):
    from rooflab.report.hierarchy_picture import plot_levels

    with pytest.raises(UsageError):
        plot_levels({"device": {"name": "x"}}, tmp_path / "x.png")
