"""The roofline picture (SPEC P9): roofs, slopes and placed kernels drawn with matplotlib's Agg
canvas and no pyplot state. Reads a :class:`rooflab.model.roofline.Roofline` only."""

from __future__ import annotations

import math
from pathlib import Path

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
from rooflab.report.labels import Layout, along_roof, best_legend, place_point_labels, slope_label
from rooflab.report.added_lines import plot_added
from rooflab.report.styles import MEASURED, THEORETICAL, style_handles

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
    tops = [(label, flops) for label, flops, _c in _roof_groups(rl)]
    tops += [(c.label, c.value) for c in rl.added_ceilings if not c.is_bandwidth]
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
    """FLOP/s of every flat line drawn: the roofs, a measured FMA rate where there is one, and the compute
    ceilings registered beyond rooflab's own."""
    return ([r.flops for r in rl.roofs] + ([rl.measured_flops] if rl.measured_flops else [])
            + [c.value for c in rl.added_ceilings if not c.is_bandwidth])


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

    lay = Layout(fig, ax)
    legend_extra = []

    # one convention in every picture: solid = measured, dashed = theoretical or published
    ceilings = sorted(_ceilings(rl))
    top_t = ceilings[-1] / 1e12 if ceilings else min(ymax, bw_t * xmax)
    xs = np.logspace(math.log10(xmin), math.log10(top_t / bw_t), 64)
    (slope,) = ax.plot(xs, xs * bw_t, color=_SLOPE_COLOUR, lw=2.0, ls=THEORETICAL, zorder=3)
    lay.add_line(slope)

    if rl.measured_bandwidth:  # measured copy bandwidth, up to where it meets the highest ceiling
        mb_t = rl.measured_bandwidth / 1e12
        xs_m = np.logspace(math.log10(xmin), math.log10(top_t / mb_t), 64)
        (ml,) = ax.plot(xs_m, xs_m * mb_t, color=_MEASURED_COLOUR, lw=1.6, ls=MEASURED, zorder=3)
        lay.add_line(ml)
        legend_extra.append(Line2D([], [], color=_MEASURED_COLOUR, lw=1.6, ls=MEASURED,
                                   label=f"measured copy bandwidth {_fmt(mb_t)} TB/s"))

    pending = []  # (annotation, candidates, pad): placed once every marker and line is known
    if rl.measured_flops:  # a measured FMA rate (where the FP32 peak is unknown), from the slope to the edge
        mf_t = rl.measured_flops / 1e12
        (mf,) = ax.plot([mf_t / bw_t, xmax], [mf_t, mf_t], color=_MEASURED_COLOUR, lw=1.8, ls=MEASURED, zorder=3)
        lay.add_line(mf)
        t = ax.annotate(f"measured FMA {_fmt(mf_t)} TFLOP/s", (xmax, mf_t), xytext=(-5, 3),
                        textcoords="offset points", ha="right", va="bottom", fontsize=9,
                        fontweight="bold", color=_MEASURED_COLOUR, zorder=6)
        pending.append((t, along_roof(mf_t / bw_t, xmax, mf_t), 1.0))
        legend_extra.append(Line2D([], [], color=_MEASURED_COLOUR, lw=1.8, ls=MEASURED,
                                   label="measured FMA rate (a floor under the unknown FP32 peak)"))

    # roofs: from each ridge to the right edge, value by the line, ridge AI at the knee; roofs of the same
    # height (FP32 and TF32 of an RTX 4090 are both 82.6) are one line with one label
    ridge_texts = set()
    for label, flops, colour in _roof_groups(rl):
        y, ridge = flops / 1e12, flops / rl.bandwidth
        (ln,) = ax.plot([ridge, xmax], [y, y], color=colour, lw=1.8, ls=THEORETICAL, zorder=3)
        lay.add_line(ln)
        ax.plot([ridge], [y], marker="o", ms=4, color=colour, zorder=4)
        lay.block_marker(ridge, y, 4)
        t = ax.annotate(label, (xmax, y), xytext=(-5, 3), textcoords="offset points", fontsize=9,
                        fontweight="bold", color=colour, zorder=6)
        pending.append((t, along_roof(ridge, xmax, y), 1.0))
        text = f"ridge {_fmt(ridge)} FLOP/B"
        if text in ridge_texts:
            continue
        ridge_texts.add(text)
        t = ax.annotate(text, (ridge, y), xytext=(6, -4), textcoords="offset points", fontsize=7.5, color=colour,
                        zorder=6)
        pending.append((t, [(None, (dx, dy), ha, va) for dx, dy, ha, va in (
            (6, -4, "left", "top"), (6, 3, "left", "bottom"), (-5, 3, "right", "bottom"), (12, -10, "left", "top"),
            (-8, 8, "right", "bottom"), (18, -16, "left", "top"), (-12, 14, "right", "bottom"))], 1.0))

    # ceilings registered beyond rooflab's own, measured (solid): a compute one from its ridge on the HBM
    # slope to the right edge, labelled like a roof; a bandwidth one up to the highest ceiling, labelled
    # along its line once the roofs' labels are placed
    added_slopes = []  # (label, TB/s, colour)
    for c, colour, ln, handle, x0 in plot_added(ax, rl.added_ceilings, xmin, xmax, top_t,
                                               lambda c: c.value / rl.bandwidth):
        y = c.value / 1e12
        if x0 is None:
            added_slopes.append((c.label, y, colour))
        else:
            t = ax.annotate(c.label, (xmax, y), xytext=(-5, 3), textcoords="offset points", fontsize=9,
                            fontweight="bold", color=colour, zorder=6)
            pending.append((t, along_roof(x0, xmax, y), 1.0))
        lay.add_line(ln)
        legend_extra.append(handle)

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
        ms = 8 if marker != "o" else 7
        ax.plot([x], [y], ls="none", marker=marker, ms=ms,
                mfc=colour if p.measured_ai else "white", mec=colour, mew=1.6, clip_on=False, zorder=7)
        lay.block_marker(x, y, ms + 1.6)
        markers.append((p, x, y, text, colour))

    # reference marks (y = a·x on a theoretical roofline): on the slope, labelled like the points
    for m in rl.marks:
        if _pos_finite(m.ai) and _pos_finite(m.flops):
            ax.plot([m.ai], [m.flops / 1e12], ls="none", marker="D", ms=7, mfc="white", mec=_SLOPE_COLOUR,
                    mew=1.8, clip_on=False, zorder=7)
            lay.block_marker(m.ai, m.flops / 1e12, 8.8)
            markers.append((m, m.ai, m.flops / 1e12, m.label, _SLOPE_COLOUR))

    # legend: only what is drawn: marker styles (AI source), clamping, marks, measured lines, line styles
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
    handles += style_handles(measured=bool(rl.added_ceilings), theoretical=True)
    best_legend(ax, lay, handles)

    for t, candidates, pad in pending:
        lay.place(t, candidates, pad)

    # the slope's label goes above the line, along the visible part of the slope below the lowest ridge
    x_in = max(xmin, ymin / bw_t)
    x_hi = ceilings[0] / rl.bandwidth if ceilings else top_t / bw_t
    if x_hi > x_in:
        slope_label(ax, lay, rl.bandwidth_label, bw_t, x_in, x_hi, _SLOPE_COLOUR)
    for label, cb_t, colour in added_slopes:  # anywhere along its visible part, below the highest ceiling
        lo, hi = max(xmin, ymin / cb_t), min(xmax, top_t / cb_t)
        if hi > lo:
            slope_label(ax, lay, label, cb_t, lo, hi, colour)

    place_point_labels(ax, lay, [(x, y, text, colour) for _p, x, y, text, colour in markers])

    if notes:
        fig.text(0.075, 0.012, "\n".join(notes), ha="left", va="bottom", fontsize=7.5, color="0.25",
                 linespacing=1.35)


def _roof_groups(rl: Roofline) -> list[tuple[str, float, str]]:
    """(label, FLOP/s, colour) per drawn roof, lowest first; roofs within 0.5% of each other share one.
    The FP32 roof is black; tensor roofs take the other colours, in the order the roofline lists them."""
    colours, tensor_i = {}, 1
    for r in rl.roofs:
        if r.is_tensor:
            colours[r.name] = _ROOF_COLOURS[tensor_i % len(_ROOF_COLOURS)]
            tensor_i += 1
        else:
            colours[r.name] = _ROOF_COLOURS[0]
    groups: list[list] = []
    for r in sorted(rl.roofs, key=lambda r: r.flops):
        if groups and r.flops <= groups[-1][0].flops * 1.005:
            groups[-1].append(r)
        else:
            groups.append([r])
    out = []
    for g in groups:
        if len(g) == 1:
            out.append((g[0].label, g[0].flops, colours[g[0].name]))
        else:
            heads = [r.label.rsplit(" ", 2)[0] for r in g]
            out.append((f"{' = '.join(heads)} {_fmt(g[0].flops / 1e12)} TFLOP/s", g[0].flops, colours[g[0].name]))
    return out
