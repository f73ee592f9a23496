"""The hierarchical roofline picture: one slope per memory level (L1/shared, L2, HBM),
the FP32 roof (and the measured FP64/FP16 roofs, dashed), every ceiling registered beyond rooflab's
own (a compute one a roof, a bandwidth one a slope, solid: measured), and each profiled kernel placed
once per level: same achieved FLOP/s, one x per level (its AI there), one marker shape per level,
the three joined by a thin line. Matplotlib's Figure and Agg canvas, no pyplot. Reads a results
document (through rooflab.model.placement.hierarchical_roofline) only."""

from __future__ import annotations

import math
from pathlib import Path

from rooflab.errors import UsageError
from rooflab.model.hierarchy import COMPUTE, LEVEL_NAMES, Hierarchy
from rooflab.model.placement import hierarchical_roofline
from rooflab.model.roofline import X_MAX, X_MAX_CAP, X_MIN, X_MIN_CAP, _fmt_edge
from rooflab.report.families import CEILINGS, ORDER, SIMT, TITLES, families, family
from rooflab.report.labels import Layout, along_roof, around, best_legend, slope_label
from rooflab.report.added_lines import plot_added
from rooflab.report.styles import line_style, style_handles

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
        top = max(_flat(h))
        ridge = max(top / lv.bandwidth for lv in h.levels)
        if ridge > xmax / 4:
            xmax = 10 ** math.ceil(math.log10(ridge * 4))
    peaks = [f / 1e12 for f in _flat(h)] or [1.0]
    achieved = [k.achieved / 1e12 for k in h.kernels if _finite_pos(k.achieved)]
    ymin = 10 ** math.floor(math.log10(min(achieved + [min(peaks) / 100]) / 3))  # room for the slopes
    ymax = max(peaks + achieved) * 3
    return max(xmin, X_MIN_CAP), xmax, ymin, ymax


def _flat(h: Hierarchy) -> list[float]:
    """FLOP/s of every flat line drawn: the compute roofs and the compute ceilings registered beyond
    rooflab's own."""
    return [r.flops for r in h.roofs] + [c.value for c in h.added_ceilings if not c.is_bandwidth]


PANEL_AT = 9  # more placed kernels than this: one panel per family, so that 21 rungs stay readable


def plot_hierarchy(h: Hierarchy, png_path: str | Path | None = None, svg_path: str | Path | None = None,
                   families: dict[str, str] | None = None):
    """Draw ``h`` on a fresh Agg figure; write PNG (150 dpi) and/or SVG where paths are given.
    With more than PANEL_AT kernels and ``families`` (label -> family), one panel per family.
    Returns the Figure."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not h.roofs:
        raise UsageError(f"{h.device}: no compute roof to draw")
    panels = _panels(h, families or {})
    cols = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / cols)
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(10 if cols == 1 else 16, 6.5 if rows == 1 else 6.2 * rows), dpi=150)
        FigureCanvasAgg(fig)
        _draw(fig, h, panels, (rows, cols))
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
    h = hierarchical_roofline(doc)
    if h is None:
        raise UsageError("the results document has no device FP32 peak: no hierarchical roofline to draw")
    fams = families(doc)
    p = Path(path)
    if p.suffix.lower() == ".svg":
        return plot_hierarchy(h, svg_path=p, families=fams)
    return plot_hierarchy(h, png_path=p, families=fams)


def _panels(h: Hierarchy, fams: dict[str, str]) -> list[tuple[str, list]]:
    """(title, kernels) per panel: all in one, or one per family (the ceilings go with the SIMT rungs,
    the FMA kernel being their roof)."""
    placed = [k for k in h.kernels if _finite_pos(k.achieved)]
    if len(placed) <= PANEL_AT or not fams:
        return [("", placed)]
    groups: dict[str, list] = {}
    for k in placed:
        f = family(fams, k.label)
        groups.setdefault(SIMT if f == CEILINGS else f, []).append(k)
    return [(TITLES[f] if f != SIMT else "SIMT rungs and the FMA ceiling (FP32 CUDA cores)", groups[f])
            for f in ORDER if f in groups]


def _panel_roofs(h: Hierarchy, kernels: list, alone: bool) -> list:
    """The roofs a panel's kernels are judged against, and the FP32 peak (every roof where there is
    one panel); the measured FP16/FP64 CUDA-core rates go beside the SIMT rungs."""
    if alone:
        return list(h.roofs)
    names = {k.roof for k in kernels}
    tensor = any(r.name in names for r in h.roofs if r.dashed and not r.measured)
    out = [r for r in h.roofs if r.precision == "fp32" or r.name in names or (r.measured and not tensor)]
    return out or list(h.roofs)


def _draw(fig, h: Hierarchy, panels, grid) -> None:
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
    rows, cols = grid
    inch = fig.get_figheight()
    foot = (0.5 + 0.17 * len(notes)) / inch  # room for the x label and the notes, in figure fractions
    head = (0.55 if rows == 1 else 0.8) / inch
    left, right, gap_x, gap_y = 0.075 / cols * (1 if cols == 1 else 1.2), 0.985, 0.06, 0.75 / inch
    w = (right - left - gap_x * (cols - 1)) / cols
    hgt = (1 - head - foot - gap_y * (rows - 1)) / rows
    for i, (title, kernels) in enumerate(panels):
        r, c = divmod(i, cols)
        ax = fig.add_axes((left + c * (w + gap_x), 1 - head - (r + 1) * hgt - r * gap_y, w, hgt))
        _panel(fig, ax, h, kernels, title, alone=len(panels) == 1)
    if len(panels) > 1:
        fig.suptitle(h.title or h.device, fontsize=13, fontweight="bold", y=1 - 0.12 / inch)
    if notes:
        fig.text(0.075 / cols, 0.08 / inch, "\n".join(notes), ha="left", va="bottom", fontsize=7.5, color="0.25",
                 linespacing=1.35)


def _panel(fig, ax, h: Hierarchy, kernels: list, title: str, alone: bool) -> None:
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    roofs = _panel_roofs(h, kernels, alone)
    xmin, xmax, ymin, ymax = _limits(Hierarchy(**{**h.__dict__, "kernels": kernels, "roofs": roofs}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(ymin, ymax)
    xmax = _room_right_of_kernels(fig, ax, kernels, [_roof_text(r) for r in roofs]
                                  + [c.label for c in h.added_ceilings if not c.is_bandwidth], xmin, xmax)
    ax.set_xlim(xmin, xmax)
    ax.set_xlabel("Arithmetic intensity at each level (FLOP per byte through that level; GEMM rungs: 2·M·N·K)"
                  if alone else "AI at each level (FLOP per byte through that level)")
    ax.set_ylabel("Performance (TFLOP/s)")
    ax.set_title((h.title or h.device) if alone else title, fontsize=12 if alone else 11, fontweight="bold")
    tick = FuncFormatter(lambda v, _pos: _fmt_edge(v) if v >= 1e4 or v < 1e-3 else f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=20))
        axis.set_major_formatter(tick)
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="0.88", lw=0.6)
    ax.grid(True, which="minor", color="0.95", lw=0.4)
    ax.set_axisbelow(True)
    lay = Layout(fig, ax)

    top = max(r.flops for r in roofs) / 1e12
    top = max([top] + [c.value / 1e12 for c in h.added_ceilings if not c.is_bandwidth])
    handles = []
    slope_labels = []  # written last, where they cover nothing
    for lv in sorted(h.levels, key=lambda lv: -lv.bandwidth):  # slopes, each up to the highest roof
        colour, marker = LEVEL_STYLE[lv.key]
        bw_t = lv.bandwidth / 1e12
        xs = np.logspace(math.log10(xmin), math.log10(top / bw_t), 64)
        (ln,) = ax.plot(xs, xs * bw_t, color=colour, lw=2.0, ls=line_style(lv.measured), zorder=3)
        lay.add_line(ln)
        slope_labels.append((f"{lv.name} {bw_t:.2f} TB/s", bw_t, colour, max(xmin, ymin / bw_t), top / bw_t))
        handles.append(Line2D([], [], color=colour, lw=2.0, ls=line_style(lv.measured), marker=marker, ms=6,
                              mfc=colour, mec=colour,
                              label=f"{lv.name}: {'measured' if lv.measured else 'theoretical'} {bw_t:.2f} TB/s"
                                    + (f", {lv.applies_to}" if lv.applies_to else "")))
    # compute roofs, from where the fastest slope meets them to the right edge
    fastest = max((lv.bandwidth for lv in h.levels), default=None)
    roof_labels = []
    for r in sorted(roofs, key=lambda r: r.flops):
        y = r.flops / 1e12
        x0 = y / (fastest / 1e12) if fastest else xmin
        colour = ROOF_COLOURS.get(r.precision, "#555555")
        (ln,) = ax.plot([x0, xmax], [y, y], color=colour, lw=1.8, ls=line_style(r.measured), zorder=3)
        lay.add_line(ln)
        roof_labels.append((ax.annotate(_roof_text(r), (xmax, y), xytext=(-5, 3), textcoords="offset points",
                                        ha="right", va="bottom", fontsize=9, fontweight="bold", color=colour,
                                        zorder=6), along_roof(x0, xmax, y)))
    handles += _added(ax, lay, h, (xmin, xmax, ymin), top, fastest, roof_labels, slope_labels)

    # kernels: one marker per level, joined by a thin line, one label per kernel
    placed = []
    for i, k in enumerate(kernels):
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
        (ln,) = ax.plot([x for x, _ in pts], [y] * len(pts), color=colour, lw=0.8, alpha=0.8, zorder=4)
        lay.add_line(ln)
        for x, level in pts:
            _c, marker = LEVEL_STYLE[level]
            ax.plot([x], [y], ls="none", marker=marker, ms=7, mfc=colour, mec="black" if level == k.binding else colour,
                    mew=1.4 if level == k.binding else 0.8, clip_on=False, zorder=7)
            lay.block_marker(x, y, 8.4)
        text = f"{k.label}: {k.binding_name}" + (" (AI off the axis, clamped)" if clamped else "")
        placed.append((text, min(x for x, _ in pts), y, colour))
    if placed:
        handles.append(Line2D([], [], ls="none", marker="o", ms=7, mfc="0.6", mec="black", mew=1.4,
                              label="black edge: the level that binds the kernel"))
    handles += style_handles(measured=any(lv.measured for lv in h.levels) or any(r.measured for r in roofs)
                             or bool(h.added_ceilings),
                             theoretical=any(not lv.measured for lv in h.levels) or any(not r.measured for r in roofs))
    best_legend(ax, lay, handles)
    for t, cands in roof_labels:
        lay.place(t, cands, pad=1.0)
    _label(ax, lay, placed)
    for text, bw_t, colour, x_in, x_hi in slope_labels:
        if x_hi > x_in:  # a slope that leaves the axes at once has nowhere to be labelled
            slope_label(ax, lay, text, bw_t, x_in, x_hi, colour)


def _added(ax, lay: Layout, h: Hierarchy, edges, top: float, fastest: float | None, roof_labels: list,
           slope_labels: list) -> list:
    """The ceilings registered beyond rooflab's own, measured (solid), in the flat picture's colours: a
    compute one from where the fastest slope meets it to the right edge, labelled like a roof; a bandwidth
    one a slope up to the highest roof, labelled along it. Their labels join the roofs' and the slopes'
    (placed last, where they cover nothing); returns their legend entries."""
    xmin, xmax, ymin = edges
    handles = []
    for c, colour, ln, handle, x0 in plot_added(ax, h.added_ceilings, xmin, xmax, top,
                                               lambda c: c.value / fastest if fastest else xmin):
        v_t = c.value / 1e12
        if x0 is None:
            slope_labels.append((c.label, v_t, colour, max(xmin, ymin / v_t), min(xmax, top / v_t)))
        else:
            roof_labels.append((ax.annotate(c.label, (xmax, v_t), xytext=(-5, 3), textcoords="offset points",
                                            ha="right", va="bottom", fontsize=9, fontweight="bold", color=colour,
                                            zorder=6), along_roof(x0, xmax, v_t)))
        lay.add_line(ln)
        handles.append(handle)
    return handles


def _roof_text(r) -> str:
    kind = "measured" if r.measured else "tensor" if r.dashed else "peak"
    return f"{r.precision.upper().replace('3XTF32', '3xTF32')} {kind} {r.flops / 1e12:.3g} TFLOP/s"


def _room_right_of_kernels(fig, ax, kernels, labels: list[str], xmin: float, xmax: float) -> float:
    """xmax, grown so that the widest roof label fits right of the rightmost kernel marker: roofs run
    through the kernels that reach them, and their labels need a free stretch."""
    xs = [p.ai for k in kernels for p in k.points if _finite_pos(p.ai) and p.ai <= X_MAX_CAP]
    if not xs:
        return xmax
    renderer = fig.canvas.get_renderer()
    width = ax.get_window_extent(renderer).width
    widest = 0.0
    for label in labels:
        t = ax.text(1, 1, label, fontsize=9, fontweight="bold")
        widest = max(widest, t.get_window_extent(renderer).width)
        t.remove()
    k = (widest + 12 * fig.dpi / 72) / width
    if k >= 0.8:
        return xmax
    lo, m = math.log10(xmin), math.log10(max(xs))
    need = (m - k * lo) / (1 - k)
    return 10 ** (math.ceil(need * 4) / 4) if need > math.log10(xmax) else xmax


def _label(ax, lay: Layout, placed: list[tuple[str, float, float, str]]) -> None:
    """Each kernel's label left of its leftmost marker where that is free, else the nearest free spot
    around it, with a leader line."""
    left = [(None, (-8, dy), "right", "center") for dy in (0, 10, -10, 20, -20)]
    for text, x, y, colour in sorted(placed, key=lambda t: -t[2]):
        ann = ax.annotate(text, (x, y), xytext=(-8, 0), textcoords="offset points", ha="right", va="center",
                          fontsize=8, color="black", zorder=8, annotation_clip=False,
                          bbox={"boxstyle": "round,pad=0.18", "fc": "white", "ec": colour, "lw": 0.6, "alpha": 0.9})
        lay.place(ann, left + around(), pad=1.5)
        ox, oy = ann.xyann
        if math.hypot(ox, oy) > 10:
            ax.annotate("", (x, y), xytext=(ox, oy), textcoords="offset points", zorder=7, annotation_clip=False,
                        arrowprops={"arrowstyle": "-", "color": colour, "lw": 0.8, "shrinkA": 0, "shrinkB": 4})
