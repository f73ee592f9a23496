"""The theoretical roofline of a GPU from the spec table (`rooflab roofline --gpu NAME`, the spec-only
report), and what any roofline picture promises: its title says what it shows, its legend lists only
what is drawn, its labels do not overlap, the memory slope is labelled by memory type and source.
CPU only."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from rooflab import results
from rooflab.lab import spec_device_entry
from rooflab.model import placement
from rooflab.model.specs import find_spec
from rooflab.report.picture import plot

DATA = Path(__file__).parent / "data"
SPEC_GPUS = ["h200", "t4", "l4", "rtx-4090", "a100-80gb", "b200"]


def spec_doc(key: str) -> dict:
    return results.new_document("rooflab roofline --gpu " + key, spec_device_entry(key))


def measured_doc() -> dict:
    return results.load(DATA / "h200_results.json")


def draw(doc: dict):
    rl = placement.roofline(doc)
    fig = plot(rl)
    return rl, fig, fig.axes[0]


def texts(ax) -> list:
    return [t for t in ax.texts if t.get_visible() and t.get_text().strip()]


def legend_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def outline(text, renderer):
    """The text's outline in display pixels as a closed path: its real rotated rectangle, not the
    axis-aligned box around it."""
    from matplotlib.path import Path as MPath

    rot = text.get_rotation()
    text.set_rotation(0)
    bb = text.get_window_extent(renderer)
    text.set_rotation(rot)
    ha, va = text.get_ha(), text.get_va()
    cx = {"left": bb.x0, "center": (bb.x0 + bb.x1) / 2, "right": bb.x1}[ha]
    cy = {"bottom": bb.y0, "baseline": bb.y0, "center": (bb.y0 + bb.y1) / 2,
          "center_baseline": (bb.y0 + bb.y1) / 2, "top": bb.y1}[va]
    if text.get_rotation_mode() != "anchor" or rot % 360 == 0:
        cx, cy, rot = 0.0, 0.0, 0.0
        bb = text.get_window_extent(renderer)
    a = math.radians(rot)
    corners = []
    for x, y in ((bb.x0 + 1, bb.y0 + 1), (bb.x1 - 1, bb.y0 + 1), (bb.x1 - 1, bb.y1 - 1), (bb.x0 + 1, bb.y1 - 1)):
        dx, dy = x - cx, y - cy
        corners.append((cx + dx * math.cos(a) - dy * math.sin(a), cy + dx * math.sin(a) + dy * math.cos(a)))
    return MPath(corners + [corners[0]], closed=True)


def overlaps(fig, ax) -> list[tuple[str, str]]:
    """Pairs of texts (and the legend) that cover each other."""
    from matplotlib.path import Path as MPath

    renderer = fig.canvas.get_renderer()
    shapes = [(t.get_text(), outline(t, renderer)) for t in texts(ax)]
    if ax.get_legend() is not None:
        leg = ax.get_legend().get_window_extent(renderer)
        corners = [(leg.x0, leg.y0), (leg.x1, leg.y0), (leg.x1, leg.y1), (leg.x0, leg.y1), (leg.x0, leg.y0)]
        shapes.append(("<legend>", MPath(corners, closed=True)))
    return [(a, b) for (a, pa), (b, pb) in itertools.combinations(shapes, 2) if pa.intersects_path(pb, filled=True)]


# ---------------------------------------------------------------- the title says it is theoretical


@pytest.mark.parametrize("key", SPEC_GPUS)
def test_spec_only_title_says_theoretical(key):
    _rl, _fig, ax = draw(spec_doc(key))
    assert "theoretical (spec sheet), nothing measured" in ax.get_title()
    assert find_spec(key).name in ax.get_title()


def test_measured_title_does_not_say_theoretical():
    _rl, _fig, ax = draw(measured_doc())
    assert "theoretical" not in ax.get_title()


# ---------------------------------------------------------------- the legend lists only what is drawn


@pytest.mark.parametrize("key", SPEC_GPUS)
def test_spec_only_legend_lists_only_drawn_markers(key):
    _rl, _fig, ax = draw(spec_doc(key))
    labels = " | ".join(legend_labels(ax))
    assert "AI measured" not in labels and "AI modelled" not in labels  # no kernel was placed
    assert "clamped" not in labels


def test_measured_legend_lists_the_marker_kinds_drawn():
    doc = measured_doc()
    _rl, _fig, ax = draw(doc)
    labels = " | ".join(legend_labels(ax))
    assert "AI measured (ncu)" in labels and "AI modelled" in labels  # the fixture has both
    del doc["profile"]  # now every AI is modelled
    _rl, _fig, ax = draw(doc)
    labels = " | ".join(legend_labels(ax))
    assert "AI measured" not in labels and "AI modelled" in labels


@pytest.mark.parametrize("key", SPEC_GPUS)
def test_tensor_roofs_drawn_match_the_spec_record_and_the_legend(key):
    spec = find_spec(key)
    rl, _fig, ax = draw(spec_doc(key))
    drawn = {r.flops for r in rl.roofs if r.dashed}
    assert drawn == {v * 1e12 for v in spec.tensor_tflops.values()}  # every tensor rate the record has
    shown = " | ".join(t.get_text() for t in texts(ax))
    for r in rl.roofs:  # each roof named, with its value (roofs of one height share a label)
        assert r.label.rsplit(" ", 2)[0] in shown and r.label.rsplit(" ", 2)[1] in shown, r.label
    # spec-sheet roofs are theoretical: dashed, one line per height, and the legend says what dashed means
    assert "dashed line: theoretical / published" in " | ".join(legend_labels(ax))
    roof_lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--" and len(ln.get_xdata()) == 2]
    assert len(roof_lines) == len({round(r.flops / 1e12, 1) for r in rl.roofs})


def test_roofs_of_one_height_are_one_labelled_line_rtx_4090():
    """FP32 and TF32 tensor of an RTX 4090 are both 82.6 TFLOP/s: they lay striped on each other."""
    rl, _fig, ax = draw(spec_doc("rtx-4090"))
    at = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2 and ln.get_ydata()[0] == pytest.approx(82.58, rel=1e-3)]
    assert len(at) == 1
    assert "FP32 = TF32 tensor 82.6 TFLOP/s" in [t.get_text() for t in texts(ax)]


def test_t4_draws_its_fp16_tensor_roof():
    rl, _fig, ax = draw(spec_doc("t4"))
    assert [r.label for r in rl.roofs if r.dashed] == ["FP16 tensor 65 TFLOP/s"]
    assert "FP16 tensor 65 TFLOP/s" in [t.get_text() for t in texts(ax)]


def test_measured_lines_solid_theoretical_dashed():
    """One convention in every picture: the measured copy slope is solid, the spec slope and roofs dashed."""
    rl, _fig, ax = draw(measured_doc())
    styles = {}
    for ln in ax.get_lines():
        if len(ln.get_xdata()) >= 2 and ln.get_linestyle() != "None":
            styles.setdefault(ln.get_color(), set()).add(ln.get_linestyle())
    from rooflab.report.picture import _MEASURED_COLOUR, _SLOPE_COLOUR

    assert styles[_MEASURED_COLOUR] == {"-"} and styles[_SLOPE_COLOUR] == {"--"}
    assert all(st == {"--"} for c, st in styles.items() if c != _MEASURED_COLOUR)


# ---------------------------------------------------------------- y = a·x on the spec-only picture


@pytest.mark.parametrize("key", SPEC_GPUS)
def test_spec_only_marks_y_equals_ax_on_the_slope(key):
    spec = find_spec(key)
    rl, _fig, ax = draw(spec_doc(key))
    y = 0.125 * spec.bandwidth_bytes_per_s / 1e12  # TFLOP/s: AI 0.125 on the memory slope
    lo, hi = ax.get_ylim()
    assert lo < y < hi, (lo, y, hi)
    marks = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [0.125]]
    assert marks and marks[0].get_ydata()[0] == pytest.approx(y)
    assert marks[0].get_marker() not in ("None", "", None)
    assert any("y = a·x" in t.get_text() for t in texts(ax))
    assert not rl.points  # a reference mark, not a measured kernel


def test_measured_picture_has_no_theoretical_mark():
    _rl, _fig, ax = draw(measured_doc())
    assert not any(t.get_text().startswith("y = a·x") for t in texts(ax))


# ---------------------------------------------------------------- labels do not overlap


@pytest.mark.parametrize("key", SPEC_GPUS)
def test_spec_only_labels_do_not_overlap(key):
    _rl, fig, ax = draw(spec_doc(key))
    assert overlaps(fig, ax) == []


def test_measured_labels_do_not_overlap():
    _rl, fig, ax = draw(measured_doc())
    assert overlaps(fig, ax) == []


def test_ridge_label_clear_of_the_bandwidth_label_h200():
    """The case seen in the picture: 'ridge 13.9 FLOP/B' ran into the rotated HBM label."""
    _rl, fig, ax = draw(spec_doc("h200"))
    renderer = fig.canvas.get_renderer()
    slope = next(t for t in texts(ax) if "TB/s" in t.get_text() and t.get_rotation() % 360 != 0)
    for t in texts(ax):
        if t.get_text().startswith("ridge"):
            assert not outline(t, renderer).intersects_path(outline(slope, renderer), filled=True), t.get_text()


# ---------------------------------------------------------------- the slope: memory type and source


@pytest.mark.parametrize(("key", "label"), [
    ("t4", "GDDR6 320 GB/s (datasheet)"),
    ("l4", "GDDR6 300 GB/s (datasheet)"),
    ("rtx-4090", "GDDR6X 1.01 TB/s (datasheet)"),
    ("h200", "HBM3e 4.80 TB/s (datasheet)"),
    ("a100-80gb", "HBM2e 2.04 TB/s (datasheet)"),
])
def test_spec_only_slope_label_names_memory_type_and_source(key, label):
    rl, _fig, ax = draw(spec_doc(key))
    assert rl.bandwidth_label == label
    assert label in [t.get_text() for t in texts(ax)]


def test_measured_slope_label_says_how_it_was_computed():
    rl, _fig, _ax = draw(measured_doc())
    assert rl.bandwidth_label == "HBM3e 4.81 TB/s (memory clock × bus width)"


def test_measured_unknown_part_slope_label():
    doc = measured_doc()
    doc["device"].update(name="NVIDIA B999", spec_key=None)
    rl, _fig, _ax = draw(doc)
    assert rl.bandwidth_label == "memory 4.81 TB/s (memory clock × bus width)"
