"""The roofline (SPEC P9): roofs, the HBM slope, kernels placed on them, as numbers and as a picture.

A :class:`Roofline` holds one device's memory slope (bytes/s), its compute roofs (FLOP/s: the FP32
CUDA-core roof and, where they apply, tensor-core roofs) and the measured kernels as
:class:`Point` s. Each point names the roof it is judged against, so a TF32 or BF16 kernel is never
measured against the FP32 roof (SPEC G12).

``rows()`` gives the same points as a table; ``plot()`` draws the picture (PNG and/or SVG) with
matplotlib's Agg canvas and no pyplot state. This module never prints and never exits.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rooflab.errors import UsageError

__all__ = ["Roof", "Point", "Roofline", "plot", "example"]

# Default x range (FLOP/byte) and how far it may grow to take in points that fall outside it.
# Points beyond the grown range (or with AI 0 / inf) are clamped to the edge with an arrow marker.
X_MIN, X_MAX = 1e-2, 1e4
X_MIN_CAP, X_MAX_CAP = 1e-3, 1e5

_ROOF_COLOURS = ["#1a1a1a", "#c0392b", "#7d3c98", "#1e8449", "#b9770e", "#2471a3"]
_SLOPE_COLOUR = "#1f4e9c"
_MEASURED_COLOUR = "#2e86c1"


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


def _pos_finite(x: Any) -> bool:
    return _is_num(x) and 0 < x < math.inf


def _fmt(v: float) -> str:
    """A number for a label: three significant figures, no exponent below a million."""
    if not _is_num(v):
        return str(v)
    if v == math.inf:
        return "∞"
    a = abs(v)
    if a >= 1e6:
        return f"{v:.2g}".replace("e+0", "e").replace("e+", "e")
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _fmt_edge(x: float) -> str:
    """An axis-edge value: 1e4 rather than 10000."""
    e = math.log10(x)
    if abs(e - round(e)) < 1e-9 and abs(round(e)) >= 3:
        return f"1e{int(round(e))}"
    return _fmt(x)


def _enc(x: Any) -> Any:
    """Non-finite floats as strings, so to_dict() survives strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _dec(x: Any) -> Any:
    if isinstance(x, str) and x.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
        return float(x)
    return x


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------


@dataclass
class Roof:
    """A compute ceiling: ``flops`` peak FLOP/s for one kind of unit and precision."""

    name: str  # "FP32 CUDA cores", "BF16 tensor cores"
    flops: float  # peak FLOP/s
    kind: str = "compute"
    dashed: bool = False  # tensor-core roofs are drawn dashed
    precision: str = ""  # "FP32", "TF32", "BF16", ...; defaults to the first word of name

    def __post_init__(self) -> None:
        if not _pos_finite(self.flops):
            raise UsageError(f"roof {self.name!r}: peak must be a positive number of FLOP/s, got {self.flops!r}")
        if not self.precision:
            self.precision = self.name.split()[0] if self.name.split() else ""

    @property
    def is_tensor(self) -> bool:
        return "tensor" in self.name.lower()

    @property
    def label(self) -> str:
        """Short label with the value, e.g. ``FP32 66.9 TFLOP/s`` or ``BF16 tensor 989 TFLOP/s``."""
        head = f"{self.precision} tensor" if self.is_tensor else (self.precision or self.name)
        return f"{head} {_fmt(self.flops / 1e12)} TFLOP/s"


@dataclass
class Point:
    """One kernel on the roofline."""

    label: str  # "tiled32"
    ai: float | None  # arithmetic intensity, FLOP/byte; may be 0, inf or None (unknown)
    flops: float | None  # achieved FLOP/s
    ai_source: str  # "ncu" (measured DRAM bytes) or "model" (FLOPs / modelled bytes)
    roof: str  # name (or precision) of the roof it is judged against; "" = the first roof
    note: str = ""

    @property
    def measured_ai(self) -> bool:
        return self.ai_source.strip().lower() in ("ncu", "measured")


@dataclass
class Roofline:
    """A device's roofline: the HBM slope, its compute roofs and the kernels placed on them."""

    device: str
    bandwidth: float  # bytes/s, the slope
    bandwidth_label: str = ""  # "HBM 4.81 TB/s (memory clock × bus width)"
    roofs: list[Roof] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    measured_bandwidth: float | None = None  # measured copy bandwidth: a second, dotted slope
    title: str = ""

    def __post_init__(self) -> None:
        if not _pos_finite(self.bandwidth):
            raise UsageError(f"roofline for {self.device!r}: bandwidth must be a positive number of bytes/s, "
                             f"got {self.bandwidth!r}")
        if self.measured_bandwidth is not None and not _pos_finite(self.measured_bandwidth):
            raise UsageError(f"roofline for {self.device!r}: measured bandwidth must be positive, "
                             f"got {self.measured_bandwidth!r}")
        if not self.bandwidth_label:
            bw = self.bandwidth
            self.bandwidth_label = f"HBM {_fmt(bw / 1e12)} TB/s" if bw >= 1e12 else f"HBM {_fmt(bw / 1e9)} GB/s"

    # -- lookups and arithmetic -----------------------------------------------------------------

    def roof(self, name: str | Roof = "") -> Roof:
        """The roof called ``name`` (exact, then case-insensitive name, then precision); "" = first roof."""
        if isinstance(name, Roof):
            return name
        if not self.roofs:
            raise UsageError(f"roofline for {self.device!r} has no roofs")
        if not name:
            return self.roofs[0]
        for r in self.roofs:
            if r.name == name:
                return r
        key = name.strip().lower()
        for r in self.roofs:
            if r.name.lower() == key:
                return r
        for r in self.roofs:
            if r.precision.lower() == key:
                return r
        raise UsageError(f"no roof called {name!r} on {self.device!r} "
                         f"(roofs: {', '.join(r.name for r in self.roofs)})")

    def ridge(self, roof: str | Roof = "") -> float:
        """The ridge point of ``roof``: its peak FLOP/s ÷ bandwidth, in FLOP/byte."""
        return self.roof(roof).flops / self.bandwidth

    def attainable(self, ai: float, roof: str | Roof = "") -> float:
        """min(peak, ai × bandwidth) in FLOP/s; ai may be 0 or inf."""
        if not _is_num(ai) or ai < 0:
            raise UsageError(f"arithmetic intensity must be a number ≥ 0, got {ai!r}")
        r = self.roof(roof)
        return min(r.flops, ai * self.bandwidth)

    def rows(self) -> list[dict[str, Any]]:
        """The points as a table, one dict per point.

        Keys: label, ai, ai_source, achieved_tflops, roof, ridge_ai, attainable_tflops,
        pct_of_attainable, bound ("memory-bound" / "compute-bound", or "unknown" without an AI), note.
        """
        out = []
        for p in self.points:
            r = self.roof(p.roof)
            ridge = self.ridge(r)
            achieved = p.flops / 1e12 if _is_num(p.flops) else None
            if _is_num(p.ai) and p.ai >= 0:
                att = self.attainable(p.ai, r)
                bound = "memory-bound" if p.ai < ridge else "compute-bound"
                att_t = att / 1e12
                pct = 100.0 * p.flops / att if (achieved is not None and att > 0) else None
            else:
                att_t, pct, bound = None, None, "unknown"
            out.append({
                "label": p.label,
                "ai": p.ai,
                "ai_source": p.ai_source,
                "achieved_tflops": achieved,
                "roof": r.name,
                "ridge_ai": ridge,
                "attainable_tflops": att_t,
                "pct_of_attainable": pct,
                "bound": bound,
                "note": p.note,
            })
        return out

    # -- JSON -------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite numbers as "inf"/"nan" strings); from_dict() reads it back."""
        d = asdict(self)
        for p in d["points"]:
            p["ai"], p["flops"] = _enc(p["ai"]), _enc(p["flops"])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Roofline":
        try:
            roofs = [Roof(**{**r, "flops": _dec(r["flops"])}) for r in d.get("roofs", [])]
            points = [Point(**{**p, "ai": _dec(p.get("ai")), "flops": _dec(p.get("flops"))})
                      for p in d.get("points", [])]
            return cls(
                device=d["device"],
                bandwidth=_dec(d["bandwidth"]),
                bandwidth_label=d.get("bandwidth_label", ""),
                roofs=roofs,
                points=points,
                measured_bandwidth=_dec(d.get("measured_bandwidth")),
                title=d.get("title", ""),
            )
        except (KeyError, TypeError) as e:
            raise UsageError(f"not a roofline: {e}") from e


# ----------------------------------------------------------------------------------------------
# the picture
# ----------------------------------------------------------------------------------------------


def plot(roofline: Roofline, png_path: str | Path | None = None, svg_path: str | Path | None = None):
    """Draw ``roofline`` on a fresh Agg figure; write PNG (150 dpi) and/or SVG when paths are given.

    Returns the matplotlib Figure. Uses no pyplot and no global state beyond an rc_context
    (SVG text is written as text, so labels stay searchable).
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not roofline.roofs:
        raise UsageError(f"roofline for {roofline.device!r} has no roofs to draw")
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(10, 6.5), dpi=150)
        FigureCanvasAgg(fig)
        _draw(fig, roofline)
        for path, fmt in ((png_path, "png"), (svg_path, "svg")):
            if path is not None:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                fig.savefig(path, format=fmt, dpi=150, facecolor="white")
    return fig


def _x_limits(rl: Roofline) -> tuple[float, float]:
    xmin, xmax = X_MIN, X_MAX
    ais = [p.ai for p in rl.points if _pos_finite(p.ai)]
    lo = min((a for a in ais if a >= X_MIN_CAP), default=None)
    hi = max((a for a in ais if a <= X_MAX_CAP), default=None)
    if lo is not None and lo < xmin * 1.5:
        xmin = 10 ** math.floor(math.log10(lo / 1.5))
    if hi is not None and hi > xmax / 1.5:
        xmax = 10 ** math.ceil(math.log10(hi * 1.5))
    top_ridge = max(rl.ridge(r) for r in rl.roofs)
    if top_ridge > xmax / 4:  # keep room right of the highest ridge for its roof
        xmax = 10 ** math.ceil(math.log10(top_ridge * 4))
    return max(xmin, X_MIN_CAP), max(xmax, top_ridge * 4)


def _y_limits(rl: Roofline) -> tuple[float, float]:
    """In TFLOP/s."""
    peaks = [r.flops / 1e12 for r in rl.roofs]
    achieved = [p.flops / 1e12 for p in rl.points if _pos_finite(p.flops)]
    lo = min(achieved + [min(peaks)]) / 3
    ymin = 10 ** math.floor(math.log10(lo))
    ymax = max(peaks + achieved) * 3
    return ymin, ymax


def _draw(fig, rl: Roofline) -> None:
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    xmin, xmax = _x_limits(rl)
    ymin, ymax = _y_limits(rl)
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
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("Performance (TFLOP/s)")
    ax.set_title(rl.title or rl.device, fontsize=12, fontweight="bold")
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

    # HBM slope up to the highest ridge
    roofs = sorted(rl.roofs, key=lambda r: r.flops)
    top_ridge = rl.ridge(roofs[-1])
    xs = np.logspace(math.log10(xmin), math.log10(top_ridge), 64)
    (slope,) = ax.plot(xs, xs * bw_t, color=_SLOPE_COLOUR, lw=2.0, solid_capstyle="round", zorder=3)
    lines.append(slope)

    # measured copy bandwidth: dotted, up to where it meets the highest roof
    legend_extra = []
    if rl.measured_bandwidth:
        mb_t = rl.measured_bandwidth / 1e12
        xs_m = np.logspace(math.log10(xmin), math.log10(roofs[-1].flops / 1e12 / mb_t), 64)
        (ml,) = ax.plot(xs_m, xs_m * mb_t, color=_MEASURED_COLOUR, lw=1.4, ls=":", zorder=3)
        lines.append(ml)
        legend_extra.append(Line2D([], [], color=_MEASURED_COLOUR, lw=1.4, ls=":",
                                   label=f"measured copy bandwidth {_fmt(mb_t)} TB/s"))

    # roofs: from each ridge to the right edge, value at the right end, ridge AI at the ridge
    colours = {}
    for i, r in enumerate(rl.roofs):
        colours[r.name] = _ROOF_COLOURS[i % len(_ROOF_COLOURS)]
    for r in roofs:
        c, y, ridge = colours[r.name], r.flops / 1e12, rl.ridge(r)
        (ln,) = ax.plot([ridge, xmax], [y, y], color=c, lw=1.6 if r.dashed else 2.2,
                        ls=(0, (6, 3)) if r.dashed else "-", zorder=3)
        lines.append(ln)
        ax.plot([ridge], [y], marker="o", ms=4, color=c, zorder=4)
        labels.append(ax.annotate(r.label, (xmax, y), xytext=(-5, 3), textcoords="offset points",
                                  ha="right", va="bottom", fontsize=9, fontweight="bold", color=c, zorder=6))
        labels.append(ax.annotate(f"ridge {_fmt(ridge)} FLOP/B", (ridge, y), xytext=(-5, 3),
                                  textcoords="offset points", ha="right", va="bottom", fontsize=7.5,
                                  color=c, zorder=6))

    # the slope's label goes above the line, along the visible part of the slope below the lowest
    # ridge, where it covers the fewest points (a point can sit above the slope when its AI is modelled)
    pending_slope_label = None
    x_in = max(xmin, ymin / bw_t)
    x_hi = rl.ridge(roofs[0])
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

    if pending_slope_label is not None:
        rotated.append(_slope_label(fig, ax, rl.bandwidth_label, bw_t, *pending_slope_label,
                                    [(x, y) for _p, x, y, _t, _c in markers], labels))

    # legend: marker styles (AI source), clamping, measured slope
    handles = [
        Line2D([], [], ls="none", marker="o", ms=7, mfc="0.3", mec="0.3", mew=1.6, label="AI measured (ncu)"),
        Line2D([], [], ls="none", marker="o", ms=7, mfc="white", mec="0.3", mew=1.6,
               label="AI modelled (FLOPs ÷ bytes)"),
    ]
    if clamped_any:
        handles.append(Line2D([], [], ls="none", marker=">", ms=8, mfc="white", mec="0.3", mew=1.6,
                              label="off the axis: clamped to its edge"))
    handles += legend_extra
    handles.append(Line2D([], [], color="0.3", lw=1.6, ls=(0, (6, 3)), label="tensor-core roof"))
    leg = ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.95, edgecolor="0.8")

    _place_labels(fig, ax, markers, lines, labels, rotated, leg)

    if notes:
        fig.text(0.075, 0.012, "\n".join(notes), ha="left", va="bottom", fontsize=7.5, color="0.25",
                 linespacing=1.35)


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
    heavy.append(legend.get_window_extent(renderer).padded(2 * px))
    r_m = 5.5 * px
    for _p, x, y, _t, _c in markers:
        cx, cy = ax.transData.transform((x, y))
        heavy.append(Bbox.from_extents(cx - r_m, cy - r_m, cx + r_m, cy + r_m))
    for ln in lines:
        pts = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
        dense = []
        for a, b in zip(pts[:-1], pts[1:]):
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
                          bbox=dict(boxstyle="round,pad=0.18", fc="white", ec=colour, lw=0.6, alpha=0.9))
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
                        arrowprops=dict(arrowstyle="-", color=colour, lw=0.8, shrinkA=0, shrinkB=4))
        heavy.append(bb)


# ----------------------------------------------------------------------------------------------
# an example (H200-like numbers), for tests and for the docs
# ----------------------------------------------------------------------------------------------


def example() -> Roofline:
    """An H200-like roofline with the copy and FMA kernels and the SGEMM ladder on it."""
    return Roofline(
        device="NVIDIA H200 (example numbers)",
        bandwidth=4.81e12,
        bandwidth_label="HBM 4.81 TB/s (memory clock × bus width)",
        roofs=[
            Roof("FP32 CUDA cores", 66.9e12, precision="FP32"),
            Roof("TF32 tensor cores", 494.7e12, dashed=True, precision="TF32"),
            Roof("BF16 tensor cores", 989e12, dashed=True, precision="BF16"),
        ],
        points=[
            Point("copy", 0.125, 0.53e12, "model", "FP32 CUDA cores", note="copy placed as y=a·x"),
            Point("fma", 1e6, 65e12, "ncu", "FP32 CUDA cores"),
            Point("naive", 0.25, 0.97e12, "model", "FP32 CUDA cores"),
            Point("coalesced", 0.25, 5.2e12, "model", "FP32 CUDA cores"),
            Point("tiled16", 4, 7e12, "model", "FP32 CUDA cores"),
            Point("tiled32", 8, 8.8e12, "model", "FP32 CUDA cores"),
            Point("cublas", 683, 50.4e12, "model", "FP32 CUDA cores"),
        ],
        measured_bandwidth=0.53e12 / 0.125,
    )
