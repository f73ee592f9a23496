"""The roofline picture (SPEC P9): roofs, slopes and placed kernels drawn with matplotlib's Agg
canvas and no pyplot state. Reads a :class:`rooflab.model.roofline.Roofline` only."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from rooflab import results
from rooflab.errors import UsageError
from rooflab.model.roofline import (
    X_MAX,
    X_MAX_CAP,
    X_MIN,
    X_MIN_CAP,
    Roofline,
    _fmt,
    _fmt_edge,
    _is_num,
    _pos_finite,
)

_ROOF_COLOURS = ["#1a1a1a", "#c0392b", "#7d3c98", "#1e8449", "#b9770e", "#2471a3"]
_SLOPE_COLOUR = "#1f4e9c"
_MEASURED_COLOUR = "#2e86c1"

# ----------------------------------------------------------------------------------------------
# the picture
# ----------------------------------------------------------------------------------------------


FORMATS = ("png", "svg", "pdf")


def image_format(path: str | Path) -> str:
    """The picture format a file name asks for, from its extension: png, svg or pdf (any case).

    Anything else is a UsageError, so a caller can check a name before it measures anything.
    """
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise UsageError(f"cannot tell the picture format of {str(path)!r}: "
                         "the name must end in .png, .svg or .pdf")
    return ext


def plot(roofline: Roofline, png_path: str | Path | None = None, svg_path: str | Path | None = None,
         pdf_path: str | Path | None = None):
    """Draw ``roofline`` on a fresh Agg figure; write PNG (150 dpi), SVG and/or PDF when paths are given.

    Returns the matplotlib Figure. Uses no pyplot and no global state beyond an rc_context
    (SVG text is written as text, so labels stay searchable). Each path is written in the format
    its keyword names, whatever its extension.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42, "font.size": 9}):
        fig = Figure(figsize=(10, 6.5), dpi=150)
        FigureCanvasAgg(fig)
        _draw(fig, roofline)
        for path, fmt in ((png_path, "png"), (svg_path, "svg"), (pdf_path, "pdf")):
            if path is not None:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                fig.savefig(path, format=fmt, dpi=150, facecolor="white")
    return fig


def save(roofline: Roofline, path: str | Path) -> Path:
    """Write the picture to ``path`` in the format its extension names (see image_format), and
    nothing else: drawn to a temporary file beside it, then renamed into place."""
    import os
    import tempfile

    path = Path(path)
    fmt = image_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".{fmt}")
    os.close(fd)
    try:
        plot(roofline, **{f"{fmt}_path": tmp})
        results.publish(tmp, path)  # the umask's mode; a symlink's target written, a device or FIFO written through
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _x_limits(rl: Roofline) -> tuple[float, float]:
    xmin, xmax = X_MIN, X_MAX
    ais = [p.ai for p in rl.points + rl.marks if _pos_finite(p.ai)]
    lo = min((a for a in ais if a >= X_MIN_CAP), default=None)
    hi = max((a for a in ais if a <= X_MAX_CAP), default=None)
    if lo is not None and lo < xmin * 1.5:
        xmin = 10 ** math.floor(math.log10(lo / 1.5))
    if hi is not None and hi > xmax / 1.5:
        xmax = 10 ** math.ceil(math.log10(hi * 1.5))
    ceilings = _ceilings(rl)
    if not ceilings:
        return max(xmin, X_MIN_CAP), xmax
    top_ridge = max(ceilings) / rl.bandwidth
    if top_ridge > xmax / 4:  # keep room right of the highest ridge for its roof
        xmax = 10 ** math.ceil(math.log10(top_ridge * 4))
    return max(xmin, X_MIN_CAP), max(xmax, top_ridge * 4)


def _room_for_roof_labels(fig, ax, rl: Roofline, xmin: float, xmax: float) -> float:
    """xmax, grown where a roof's label (written above its line, flush right) is wider than the roof
    between its ridge and the right edge: there it would run into the slope rising to higher roofs."""
    renderer = fig.canvas.get_renderer()
    width = ax.get_window_extent(renderer).width  # pixels across the axes
    px = fig.dpi / 72.0
    lo, need = math.log10(xmin), math.log10(xmax)
    tops = [(r.label, r.flops) for r in rl.roofs]
    if rl.measured_flops:
        tops.append((f"measured FMA {_fmt(rl.measured_flops / 1e12)} TFLOP/s", rl.measured_flops))
    for label, flops in tops:
        t = ax.text(0, 0, label, fontsize=9, fontweight="bold")
        bb = t.get_window_extent(renderer)
        t.remove()
        # its offset from the edge, and room at the ridge for the slope, which climbs through the height
        # of the label just right of the ridge
        w = bb.width + 8 * px + 2 * bb.height
        if w < width:  # the label spans w of the width pixels: (X - ridge) / (X - lo) >= w / width
            need = max(need, (math.log10(flops / rl.bandwidth) * width - lo * w) / (width - w))
    if need <= math.log10(xmax):
        return xmax
    grown = 10**need
    step = 10 ** math.floor(math.log10(grown))  # two significant figures, rounded up: 1.1e4, not 10964
    return math.ceil(grown / step * 10) * step / 10


def _ceilings(rl: Roofline) -> list[float]:
    """FLOP/s of every flat line drawn: the roofs, and a measured FMA rate where there is one."""
    return [r.flops for r in rl.roofs] + ([rl.measured_flops] if rl.measured_flops else [])


def _y_limits(rl: Roofline, xmin: float, xmax: float) -> tuple[float, float]:
    """In TFLOP/s."""
    peaks = [f / 1e12 for f in _ceilings(rl)]
    achieved = [p.flops / 1e12 for p in rl.points + rl.marks if _pos_finite(p.flops)]
    if not peaks + achieved:  # nothing but the slope
        peaks = [rl.bandwidth / 1e12 * xmin * 3, rl.bandwidth / 1e12 * xmax / 3]
    lo = min(achieved + [min(peaks)]) / 3
    ymin = 10 ** math.floor(math.log10(lo))
    ymax = max(peaks + achieved) * 3
    return ymin, ymax


def _draw(fig, rl: Roofline) -> None:
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    xmin, xmax = _x_limits(rl)
    ymin, ymax = _y_limits(rl, xmin, xmax)
    bw_t = rl.bandwidth / 1e12  # TFLOP/s per FLOP/byte

    notes = [f"{p.label}: {p.note}" for p in rl.points if p.note]
    unplaced = [p for p in rl.points if not _is_num(p.ai)]
    if unplaced:
        notes.append("AI unknown, not placed: " + ", ".join(
            f"{p.label} ({_fmt(p.flops / 1e12)} TFLOP/s)" if _is_num(p.flops) else p.label for p in unplaced))
    bottom = 0.095 + 0.024 * len(notes)
    ax = fig.add_axes((0.075, bottom, 0.905, 0.925 - bottom))
    ax.set_xscale("log")
    ax.set_yscale("log")
    xmax = _room_for_roof_labels(fig, ax, rl, xmin, xmax)
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("Performance (TFLOP/s)")
    title = rl.title or rl.device
    if rl.unknown_peaks:  # say why a roof is missing
        title += "\n" + "; ".join(f"{name}: {why}, no roof drawn" for name, why in rl.unknown_peaks.items())
    ax.set_title(title, fontsize=12, fontweight="bold")
    tick = FuncFormatter(lambda v, _pos: _fmt_edge(v) if v >= 1e4 or v < 1e-3 else f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=20))
        axis.set_major_formatter(tick)
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="0.88", lw=0.6)
    ax.grid(True, which="minor", color="0.95", lw=0.4)
    ax.set_axisbelow(True)

    lines: list[Any] = []  # drawn lines: label placement steers clear of them
    labels: list[Any] = []  # drawn texts: placement must not cover them
    rotated: list[Any] = []  # rotated texts: obstacles sampled along their baseline

    # the memory slope up to the highest ceiling (across the chart where there is none)
    roofs = sorted(rl.roofs, key=lambda r: r.flops)
    ceilings = sorted(_ceilings(rl))
    top_t = ceilings[-1] / 1e12 if ceilings else min(ymax, bw_t * xmax)
    xs = np.logspace(math.log10(xmin), math.log10(top_t / bw_t), 64)
    (slope,) = ax.plot(xs, xs * bw_t, color=_SLOPE_COLOUR, lw=2.0, solid_capstyle="round", zorder=3)
    lines.append(slope)

    # measured copy bandwidth: dotted, up to where it meets the highest ceiling
    legend_extra = []
    if rl.measured_bandwidth:
        mb_t = rl.measured_bandwidth / 1e12
        xs_m = np.logspace(math.log10(xmin), math.log10(top_t / mb_t), 64)
        (ml,) = ax.plot(xs_m, xs_m * mb_t, color=_MEASURED_COLOUR, lw=1.4, ls=":", zorder=3)
        lines.append(ml)
        legend_extra.append(Line2D([], [], color=_MEASURED_COLOUR, lw=1.4, ls=":",
                                   label=f"measured copy bandwidth {_fmt(mb_t)} TB/s"))

    # a measured FMA rate (where the FP32 peak is unknown): dotted, from the slope to the right edge
    if rl.measured_flops:
        mf_t = rl.measured_flops / 1e12
        (mf,) = ax.plot([mf_t / bw_t, xmax], [mf_t, mf_t], color=_MEASURED_COLOUR, lw=1.8, ls=":", zorder=3)
        lines.append(mf)
        labels.append(ax.annotate(f"measured FMA {_fmt(mf_t)} TFLOP/s", (xmax, mf_t), xytext=(-5, 3),
                                  textcoords="offset points", ha="right", va="bottom", fontsize=9,
                                  fontweight="bold", color=_MEASURED_COLOUR, zorder=6))
        legend_extra.append(Line2D([], [], color=_MEASURED_COLOUR, lw=1.8, ls=":",
                                   label="measured FMA rate (a floor under the unknown FP32 peak)"))

    # roofs: from each ridge to the right edge, value at the right end, ridge AI at the knee. The FP32
    # roof is black; tensor roofs take the other colours, in the order the roofline lists them.
    colours, tensor_i = {}, 1
    for r in rl.roofs:
        if r.is_tensor:
            colours[r.name] = _ROOF_COLOURS[tensor_i % len(_ROOF_COLOURS)]
            tensor_i += 1
        else:
            colours[r.name] = _ROOF_COLOURS[0]
    renderer = fig.canvas.get_renderer()
    ridge_texts = set()
    for r in roofs:
        c, y, ridge = colours[r.name], r.flops / 1e12, rl.ridge(r)
        (ln,) = ax.plot([ridge, xmax], [y, y], color=c, lw=1.6 if r.dashed else 2.2,
                        ls=(0, (6, 3)) if r.dashed else "-", zorder=3)
        lines.append(ln)
        ax.plot([ridge], [y], marker="o", ms=4, color=c, zorder=4)
        # the value above the line at the right edge; below it where a roof of (nearly) the same height
        # already took that place (FP32 and TF32 of an RTX 4090 are both 82.6)
        t = ax.annotate(r.label, (xmax, y), xytext=(0, 0), textcoords="offset points", fontsize=9, fontweight="bold", color=c,
                        zorder=6)
        labels.append(_first_clear(renderer, labels, t, [((-5, 3), "right", "bottom"), ((-5, -3), "right", "top")]))
        # the ridge's AI just right of the knee, under the roof: the slope and its label run up to the
        # knee from the left; one label for roofs that share a knee
        text = f"ridge {_fmt(ridge)} FLOP/B"
        if text in ridge_texts:
            continue
        ridge_texts.add(text)
        t = ax.annotate(text, (ridge, y), xytext=(0, 0), textcoords="offset points", fontsize=7.5, color=c, zorder=6)
        labels.append(_first_clear(renderer, labels, t, [((6, -4), "left", "top"), ((6, 3), "left", "bottom"),
                                                         ((-5, 3), "right", "bottom")]))

    # the slope's label goes above the line, along the visible part of the slope below the lowest
    # ridge, where it covers the fewest points (a point can sit above the slope when its AI is modelled)
    pending_slope_label = None
    x_in = max(xmin, ymin / bw_t)
    x_hi = ceilings[0] / rl.bandwidth if ceilings else top_t / bw_t
    if x_hi > x_in:
        pending_slope_label = (x_in, x_hi)

    # points
    markers = []  # (point, x, y, label text, colour)
    cmap = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
            "#7f7f7f", "#bcbd22"]
    clamped_any = False
    for i, p in enumerate(rl.points):
        if not _is_num(p.ai):
            continue
        colour = cmap[i % len(cmap)]
        text, marker, x = p.label, "o", p.ai
        if p.ai <= 0:
            x, marker, text = xmin, "<", f"{p.label} (AI = 0)"
        elif p.ai < xmin:
            x, marker, text = xmin, "<", f"{p.label} (AI ≪ {_fmt_edge(xmin)})"
        elif p.ai > xmax:
            x, marker, text = xmax, ">", f"{p.label} (AI ≫ {_fmt_edge(xmax)})"
        y = p.flops / 1e12 if _is_num(p.flops) else 0.0
        if y <= 0:
            y, marker, text = ymin, "v", f"{text} (0 FLOP/s)"
        elif y > ymax:
            y, marker = ymax, "^"
        clamped_any |= marker != "o"
        ax.plot([x], [y], ls="none", marker=marker, ms=8 if marker != "o" else 7,
                mfc=colour if p.measured_ai else "white", mec=colour, mew=1.6, clip_on=False, zorder=7)
        markers.append((p, x, y, text, colour))

    # reference marks (y = a·x on a theoretical roofline): on the slope, labelled like the points
    for m in rl.marks:
        if _pos_finite(m.ai) and _pos_finite(m.flops):
            ax.plot([m.ai], [m.flops / 1e12], ls="none", marker="D", ms=7, mfc="white", mec=_SLOPE_COLOUR,
                    mew=1.8, clip_on=False, zorder=7)
            markers.append((m, m.ai, m.flops / 1e12, m.label, _SLOPE_COLOUR))

    if pending_slope_label is not None:
        rotated.append(_slope_label(fig, ax, rl.bandwidth_label, bw_t, *pending_slope_label,
                                    [(x, y) for _p, x, y, _t, _c in markers], labels))

    # legend: only what is drawn: marker styles (AI source), clamping, marks, measured lines, tensor roofs
    placed = [p for p in rl.points if _is_num(p.ai)]
    handles = []
    if any(p.measured_ai for p in placed):
        handles.append(Line2D([], [], ls="none", marker="o", ms=7, mfc="0.3", mec="0.3", mew=1.6,
                              label="AI measured (ncu)"))
    if any(not p.measured_ai for p in placed):
        handles.append(Line2D([], [], ls="none", marker="o", ms=7, mfc="white", mec="0.3", mew=1.6,
                              label="AI modelled (FLOPs ÷ bytes)"))
    if clamped_any:
        handles.append(Line2D([], [], ls="none", marker=">", ms=8, mfc="white", mec="0.3", mew=1.6,
                              label="off the axis: clamped to its edge"))
    if rl.marks:
        handles.append(Line2D([], [], ls="none", marker="D", ms=7, mfc="white", mec=_SLOPE_COLOUR, mew=1.8,
                              label="attainable on the memory slope (theoretical)"))
    handles += legend_extra
    if any(r.dashed for r in rl.roofs):
        handles.append(Line2D([], [], color="0.3", lw=1.6, ls=(0, (6, 3)), label="tensor-core roof"))
    leg = (ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.95, edgecolor="0.8")
           if handles else None)

    _place_labels(fig, ax, markers, lines, labels, rotated, leg)

    if notes:
        fig.text(0.075, 0.012, "\n".join(notes), ha="left", va="bottom", fontsize=7.5, color="0.25",
                 linespacing=1.35)


def _first_clear(renderer, placed, t, options):
    """Move the annotation ``t`` to the first of ``options`` ((offset in points, ha, va)) where it overlaps
    none of the ``placed`` texts, or back to the first option where it overlaps some everywhere."""
    taken = [o.get_window_extent(renderer).padded(4) for o in placed]
    for xytext, ha, va in [*options, options[0]]:
        t.xyann = xytext
        t.set_ha(ha)
        t.set_va(va)
        if not any(t.get_window_extent(renderer).overlaps(o) for o in taken):
            break
    return t


def _rotated_boxes(bb, ang: float, h: float):
    """Small squares along the diagonal of a rotated text's bounding box (not the whole box)."""
    from matplotlib.transforms import Bbox

    n = max(2, int(math.hypot(bb.width, bb.height) / h))
    out = []
    for k in range(n + 1):
        f = k / n
        cx = bb.x0 + f * bb.width
        cy = (bb.y0 + f * bb.height) if ang >= 0 else (bb.y1 - f * bb.height)
        out.append(Bbox.from_extents(cx - h / 2, cy - h / 2, cx + h / 2, cy + h / 2))
    return out


def _slope_label(fig, ax, text: str, bw_t: float, x_in: float, x_hi: float, points, texts):
    """Write ``text`` along the slope, above it, at the spot (of a few) that covers the fewest markers
    and other labels."""
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72.0
    pa, pb = ax.transData.transform([(x_in, x_in * bw_t), (x_hi, x_hi * bw_t)])
    ang = math.degrees(math.atan2(pb[1] - pa[1], pb[0] - pa[0]))
    nx, ny = -math.sin(math.radians(ang)), math.cos(math.radians(ang))
    t = ax.annotate(text, (x_in, x_in * bw_t), xytext=(4 * nx, 4 * ny), textcoords="offset points",
                    rotation=ang, rotation_mode="anchor", ha="center", va="bottom", fontsize=8.5,
                    color=_SLOPE_COLOUR, fontweight="bold", zorder=6)
    axbox = ax.get_window_extent(renderer)
    marks = [ax.transData.transform(p) for p in points]
    boxes = [o.get_window_extent(renderer).padded(2 * px) for o in texts]
    r = 7 * px
    best = None
    for f in (0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2):
        xc = x_in * (x_hi / x_in) ** f
        t.xy = (xc, xc * bw_t)
        bb = t.get_window_extent(renderer)
        score = abs(f - 0.55) * 10
        if bb.x0 < axbox.x0 or bb.y1 > axbox.y1 or bb.y0 < axbox.y0:
            score += 1e6
        for sq in _rotated_boxes(bb, ang, 12 * px):
            for mx, my in marks:
                if sq.x0 - r < mx < sq.x1 + r and sq.y0 - r < my < sq.y1 + r:
                    score += 100
            for o in boxes:
                if sq.overlaps(o):
                    score += 100
        if best is None or score < best[0]:
            best = (score, xc)
    t.xy = (best[1], best[1] * bw_t)
    return t, ang


def _place_labels(fig, ax, markers, lines, labels, rotated, legend) -> None:
    """Put each point's label near its marker where it covers the least: a greedy, scored search."""
    import numpy as np
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72.0  # pixels per point
    axbox = ax.get_window_extent(renderer)
    heavy: list[Bbox] = []  # texts, markers, legend: never cover
    light: list[np.ndarray] = []  # line samples (N×2 display coords): avoid

    for t in labels:
        heavy.append(t.get_window_extent(renderer).padded(2 * px))
    for t, ang in rotated:
        heavy.extend(_rotated_boxes(t.get_window_extent(renderer), ang, 10 * px))
    if legend is not None:
        heavy.append(legend.get_window_extent(renderer).padded(2 * px))
    r_m = 5.5 * px
    for _p, x, y, _t, _c in markers:
        cx, cy = ax.transData.transform((x, y))
        heavy.append(Bbox.from_extents(cx - r_m, cy - r_m, cx + r_m, cy + r_m))
    for ln in lines:
        pts = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
        dense = []
        for a, b in itertools.pairwise(pts):
            n = max(1, int(np.hypot(*(b - a)) / (3 * px)))
            dense.append(a + (b - a) * np.linspace(0, 1, n, endpoint=False)[:, None])
        dense.append(pts[-1:])
        light.append(np.concatenate(dense))
    line_pts = np.concatenate(light) if light else np.zeros((0, 2))


    def overlap(a: Bbox, b: Bbox) -> float:
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        return w * h if w > 0 and h > 0 else 0.0

    # candidate offsets (points): 8 directions × 4 distances, right and up first
    dirs = [(1, 0), (1, 1), (1, -1), (0, 1), (0, -1), (-1, 0), (-1, 1), (-1, -1)]
    radii = [7, 13, 22, 34, 48]

    for p, x, y, text, colour in markers:
        ann = ax.annotate(text, (x, y), xytext=(0, 0), textcoords="offset points", fontsize=8.5,
                          color="black", zorder=8, annotation_clip=False,
                          bbox={"boxstyle": "round,pad=0.18", "fc": "white", "ec": colour, "lw": 0.6, "alpha": 0.9})
        best = None
        for rad in radii:
            for k, (dx, dy) in enumerate(dirs):
                norm = math.hypot(dx, dy)
                ox, oy = rad * dx / norm, rad * dy / norm
                ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
                va = "bottom" if dy > 0 else ("top" if dy < 0 else "center")
                ann.set_ha(ha)
                ann.set_va(va)
                ann.xyann = (ox, oy)
                bb = ann.get_window_extent(renderer).padded(3 * px)
                score = rad * px * 1.5 + k * 2.0
                if not (bb.x0 >= axbox.x0 and bb.x1 <= axbox.x1 and bb.y0 >= axbox.y0 and bb.y1 <= axbox.y1):
                    score += 1e7
                score += 20.0 * sum(overlap(bb, o) for o in heavy)
                if len(line_pts):
                    inside = ((line_pts[:, 0] >= bb.x0) & (line_pts[:, 0] <= bb.x1)
                              & (line_pts[:, 1] >= bb.y0) & (line_pts[:, 1] <= bb.y1))
                    score += 40.0 * px * float(inside.sum())
                if rad > 10:  # a leader line will be drawn: it should not cross texts or other markers
                    mx, my = ax.transData.transform((x, y))
                    for f in np.linspace(0.25, 1.0, 10):
                        sx, sy = mx + f * ox * px, my + f * oy * px
                        score += 300.0 * sum(1 for o in heavy
                                             if o.contains(sx, sy) and not o.contains(mx, my))
                if best is None or score < best[0]:
                    best = (score, ox, oy, ha, va, bb)
        _score, ox, oy, ha, va, bb = best
        ann.set_ha(ha)
        ann.set_va(va)
        ann.xyann = (ox, oy)
        if math.hypot(ox, oy) > 10:  # a leader line from a far label to its marker
            ax.annotate("", (x, y), xytext=(ox, oy), textcoords="offset points", zorder=7,
                        annotation_clip=False,
                        arrowprops={"arrowstyle": "-", "color": colour, "lw": 0.8, "shrinkA": 0, "shrinkB": 4})
        heavy.append(bb)


