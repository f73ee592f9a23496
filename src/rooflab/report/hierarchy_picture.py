"""The hierarchical roofline picture (issue 11): one slope per memory level (L1/shared, L2, HBM),
the FP32 roof (and the measured FP64/FP16 roofs, dashed), and each profiled kernel placed once per
level: same achieved FLOP/s, one x per level (its AI there), one marker shape per level, the three
joined by a thin line. Matplotlib's Figure and Agg canvas, no pyplot. Reads a results document
(through rooflab.model.hierarchy) only."""

from __future__ import annotations

import math
from pathlib import Path

from rooflab.errors import UsageError
from rooflab.model.hierarchy import COMPUTE, LEVEL_NAMES, Hierarchy, hierarchy
from rooflab.model.roofline import X_MAX, X_MAX_CAP, X_MIN, X_MIN_CAP

LEVEL_STYLE = {"L1": ("#1e8449", "^"), "L2": ("#d35400", "s"), "DRAM": ("#1f4e9c", "o")}
ROOF_COLOURS = {"fp32": "#1a1a1a", "fp16": "#c0392b", "fp64": "#7d3c98"}
KERNEL_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                  "#7f7f7f", "#bcbd22"]


def _finite_pos(x) -> bool:
    return isinstance(x, (int, float)) and 0 < x < math.inf


def _limits(h: Hierarchy) -> tuple[float, float, float, float]:
    xmin, xmax = X_MIN, X_MAX
    ais = [p.ai for k in h.kernels if _finite_pos(k.achieved) for p in k.points if _finite_pos(p.ai)]
    lo = min((a for a in ais if a >= X_MIN_CAP), default=None)
    hi = max((a for a in ais if a <= X_MAX_CAP), default=None)
    if lo is not None and lo < xmin * 1.5:
        xmin = 10 ** math.floor(math.log10(lo / 1.5))
    if hi is not None and hi > xmax / 1.5:
        xmax = 10 ** math.ceil(math.log10(hi * 1.5))
    if h.levels and h.roofs:
        top = max(r.flops for r in h.roofs)
        ridge = max(top / lv.bandwidth for lv in h.levels)
        if ridge > xmax / 4:
            xmax = 10 ** math.ceil(math.log10(ridge * 4))
    peaks = [r.flops / 1e12 for r in h.roofs] or [1.0]
    achieved = [k.achieved / 1e12 for k in h.kernels if _finite_pos(k.achieved)]
    ymin = 10 ** math.floor(math.log10(min(achieved + [min(peaks) / 100]) / 3))  # room for the slopes
    ymax = max(peaks + achieved) * 3
    return max(xmin, X_MIN_CAP), xmax, ymin, ymax


def plot_hierarchy(h: Hierarchy, png_path: str | Path | None = None, svg_path: str | Path | None = None):
    """Draw ``h`` on a fresh Agg figure; write PNG (150 dpi) and/or SVG where paths are given.
    Returns the Figure."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not h.roofs:
        raise UsageError(f"{h.device}: no compute roof to draw")
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(10, 6.5), dpi=150)
        FigureCanvasAgg(fig)
        _draw(fig, h)
        for path, fmt in ((png_path, "png"), (svg_path, "svg")):
            if path is not None:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                fig.savefig(path, format=fmt, dpi=150, facecolor="white")
    return fig


def plot_levels(doc: dict, path: str | Path):
    """`rooflab roofline --levels`: the hierarchical roofline of a results document, written to
    ``path`` (PNG, or SVG when the name ends in .svg). Without a memory section the slopes are the
    theoretical ones that are known (no L2 slope where no figure is published); without level
    profiles no kernel is placed. Returns the Figure."""
    h = hierarchy(doc)
    if h is None:
        raise UsageError("the results document has no device FP32 peak: no hierarchical roofline to draw")
    p = Path(path)
    if p.suffix.lower() == ".svg":
        return plot_hierarchy(h, svg_path=p)
    return plot_hierarchy(h, png_path=p)


def _draw(fig, h: Hierarchy) -> None:
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    from matplotlib.transforms import Bbox

    xmin, xmax, ymin, ymax = _limits(h)
    notes = []
    for k in h.kernels:
        if not _finite_pos(k.achieved):
            b = k.point(k.binding) if k.binding not in (COMPUTE, "unknown") else None
            busy = (f"; busiest level {LEVEL_NAMES[k.binding]} at {b.pct_of_level:.0f}% of its bandwidth"
                    if b and b.pct_of_level is not None else "")
            notes.append(f"{k.label}: no FLOPs, not placed{busy}.")
    missing = [LEVEL_NAMES[key] for key in ("L1", "L2", "DRAM") if h.level(key) is None]
    if missing:
        notes.append(f"No slope for {', '.join(missing)}: neither measured nor published.")
    if not h.kernels:
        notes.append("No kernel placed: the document has no Nsight Compute profile with L1/L2 byte counts.")
    bottom = 0.095 + 0.024 * len(notes)
    ax = fig.add_axes((0.075, bottom, 0.905, 0.925 - bottom))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_xlabel("Arithmetic intensity at each level (FLOP per byte through that level; GEMM rungs: 2·M·N·K)")
    ax.set_ylabel("Performance (TFLOP/s)")
    ax.set_title(h.title or h.device, fontsize=12, fontweight="bold")
    tick = FuncFormatter(lambda v, _pos: f"1e{round(math.log10(v))}" if v >= 1e4 or v < 1e-3 else f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=20))
        axis.set_major_formatter(tick)
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="0.88", lw=0.6)
    ax.grid(True, which="minor", color="0.95", lw=0.4)
    ax.set_axisbelow(True)

    top = max(r.flops for r in h.roofs) / 1e12
    handles = []
    slope_labels = []  # written last, where they cover no kernel
    # slopes, each up to the highest roof
    for lv in sorted(h.levels, key=lambda lv: -lv.bandwidth):
        colour, marker = LEVEL_STYLE[lv.key]
        bw_t = lv.bandwidth / 1e12
        xs = np.logspace(math.log10(xmin), math.log10(top / bw_t), 64)
        ax.plot(xs, xs * bw_t, color=colour, lw=2.0 if lv.measured else 1.4, ls="-" if lv.measured else ":",
                zorder=3)
        slope_labels.append((f"{lv.name} {bw_t:.2f} TB/s", bw_t, colour, max(xmin, ymin / bw_t), top / bw_t))
        handles.append(Line2D([], [], color=colour, lw=2.0 if lv.measured else 1.4, ls="-" if lv.measured else ":",
                              marker=marker, ms=6, mfc=colour, mec=colour,
                              label=f"{lv.name}: {'measured' if lv.measured else 'theoretical'} "
                                    f"{bw_t:.2f} TB/s" + (f", {lv.applies_to}" if lv.applies_to else "")))
    # compute roofs, from where the fastest slope meets them to the right edge
    fastest = max((lv.bandwidth for lv in h.levels), default=None)
    roof_labels = []
    for r in sorted(h.roofs, key=lambda r: r.flops):
        y = r.flops / 1e12
        x0 = y / (fastest / 1e12) if fastest else xmin
        colour = ROOF_COLOURS.get(r.precision, "#555555")
        ax.plot([x0, xmax], [y, y], color=colour, lw=1.6 if r.dashed else 2.2, ls=(0, (6, 3)) if r.dashed else "-",
                zorder=3)
        roof_labels.append(ax.annotate(f"{r.precision.upper()} {'measured ' if r.measured else ''}{y:.3g} TFLOP/s",
                                       (xmax, y), xytext=(-5, 3), textcoords="offset points", ha="right",
                                       va="bottom", fontsize=9, fontweight="bold", color=colour, zorder=6))
    if any(r.dashed for r in h.roofs):
        handles.append(Line2D([], [], color="0.3", lw=1.6, ls=(0, (6, 3)), label="measured FP16 / FP64 roof; tensor roofs (published)"))

    # kernels: one marker per level, joined by a thin line, one label per kernel
    placed = []
    marker_xy = []  # every kernel marker: labels keep off them
    for i, k in enumerate(x for x in h.kernels if _finite_pos(x.achieved)):
        colour = KERNEL_COLOURS[i % len(KERNEL_COLOURS)]
        y = k.achieved / 1e12
        pts = []
        clamped = False
        for p in sorted(k.points, key=lambda p: list(LEVEL_STYLE).index(p.level)):
            x = p.ai
            if not _finite_pos(x) or x > xmax:
                x, clamped = xmax, True
            elif x < xmin:
                x, clamped = xmin, True
            pts.append((x, p.level))
        ax.plot([x for x, _ in pts], [y] * len(pts), color=colour, lw=0.8, alpha=0.8, zorder=4)
        for x, level in pts:
            _c, marker = LEVEL_STYLE[level]
            marker_xy.append((x, y))
            ax.plot([x], [y], ls="none", marker=marker, ms=7, mfc=colour, mec="black" if level == k.binding else colour,
                    mew=1.4 if level == k.binding else 0.8, clip_on=False, zorder=7)
        where = k.binding_name
        text = f"{k.label}: {where}" + (" (AI off the axis, clamped)" if clamped else "")
        placed.append((text, min(x for x, _ in pts), y, colour))
    renderer = fig.canvas.get_renderer()
    r_m = 5 * fig.dpi / 72
    obstacles = [t.get_window_extent(renderer).padded(2) for t in roof_labels]
    for x, y in marker_xy:
        cx, cy = ax.transData.transform((x, y))
        obstacles.append(Bbox.from_extents(cx - r_m, cy - r_m, cx + r_m, cy + r_m))
    boxes = _label(fig, ax, placed, obstacles)
    marks = [ax.transData.transform((x, y)) for _t, x, y, _c in placed]
    for text, bw_t, colour, x_in, x_hi in slope_labels:
        boxes.append(_slope_label(fig, ax, text, bw_t, colour, x_in, x_hi, boxes, marks))

    if placed:
        handles.append(Line2D([], [], ls="none", marker="o", ms=7, mfc="0.6", mec="black", mew=1.4,
                              label="black edge: the level that binds the kernel"))
    ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.95, edgecolor="0.8")
    if notes:
        fig.text(0.075, 0.012, "\n".join(notes), ha="left", va="bottom", fontsize=7.5, color="0.25",
                 linespacing=1.35)


def _slope_label(fig, ax, text: str, bw_t: float, colour: str, x_in: float, x_hi: float, boxes, marks):
    """Write a slope's label along it, above it, at the first of a few spots that covers no kernel
    label, marker or earlier slope label. Returns its box."""
    renderer = fig.canvas.get_renderer()
    axbox = ax.get_window_extent(renderer)
    pa, pb = ax.transData.transform([(x_in, x_in * bw_t), (x_hi, x_hi * bw_t)])
    ang = math.degrees(math.atan2(pb[1] - pa[1], pb[0] - pa[0]))
    t = ax.annotate(text, (x_in, x_in * bw_t), xytext=(-4, 4), textcoords="offset points", rotation=ang,
                    rotation_mode="anchor", ha="center", va="bottom", fontsize=8.5, color=colour,
                    fontweight="bold", zorder=6)
    best = None
    for f in (0.55, 0.7, 0.4, 0.85, 0.25, 0.15):
        xc = x_in * (x_hi / x_in) ** f
        t.xy = (xc, xc * bw_t)
        bb = t.get_window_extent(renderer)
        score = abs(f - 0.55)
        if bb.x0 < axbox.x0 or bb.y1 > axbox.y1 or bb.y0 < axbox.y0:
            score += 100
        score += 10 * sum(1 for o in boxes if bb.overlaps(o))
        score += 10 * sum(1 for mx, my in marks if bb.x0 - 6 < mx < bb.x1 + 6 and bb.y0 - 6 < my < bb.y1 + 6)
        if best is None or score < best[0]:
            best = (score, xc)
    t.xy = (best[1], best[1] * bw_t)
    return t.get_window_extent(renderer)


def _label(fig, ax, placed: list[tuple[str, float, float, str]], obstacles: list) -> list:
    """Each kernel's label left of its leftmost marker, moved up or down until it overlaps no
    earlier label or roof label (a simple greedy search in display space). Returns all boxes."""
    renderer = fig.canvas.get_renderer()
    axbox = ax.get_window_extent(renderer)
    boxes = list(obstacles)
    for text, x, y, colour in sorted(placed, key=lambda t: -t[2]):
        ann = ax.annotate(text, (x, y), xytext=(-8, 0), textcoords="offset points", ha="right", va="center",
                          fontsize=8, color="black", zorder=8, annotation_clip=False,
                          bbox={"boxstyle": "round,pad=0.18", "fc": "white", "ec": colour, "lw": 0.6, "alpha": 0.9})
        for dx, dy, ha in [(-8, 0, "right"), (-8, 12, "right"), (-8, -12, "right"), (8, 12, "left"),
                           (8, -12, "left"), (-8, 24, "right"), (-8, -24, "right"), (8, 24, "left"),
                           (8, -24, "left"), (-8, 36, "right"), (-8, -36, "right")]:
            ann.set_ha(ha)
            ann.xyann = (dx, dy)
            bb = ann.get_window_extent(renderer).padded(2)
            inside = bb.x0 >= axbox.x0 and bb.x1 <= axbox.x1 and bb.y0 >= axbox.y0 and bb.y1 <= axbox.y1
            if inside and not any(bb.overlaps(o) for o in boxes):
                break
        boxes.append(ann.get_window_extent(renderer).padded(2))
    return boxes
