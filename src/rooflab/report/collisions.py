"""Where a drawn picture's texts collide: every text's, marker's and legend's box in display space
(from matplotlib's renderer), and every pair that overlaps. Used by the pictures' tests, and by
anyone who changes a picture and wants to know it still reads."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_EPS = 0.75  # pixels: boxes that only touch do not collide


@dataclass
class Shape:
    kind: str  # "text", "tick", "marker", "legend"
    name: str  # the text, or the line's label and the point's index for a marker
    corners: np.ndarray  # 4×2 display coordinates of a (possibly rotated) rectangle
    owner: object = None  # the artist

    def __repr__(self) -> str:
        return f"{self.kind} {self.name!r}"


@dataclass
class Collision:
    a: Shape
    b: Shape

    def __str__(self) -> str:
        return f"{self.a!r} overlaps {self.b!r}"


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], dtype=float)


def _shrunk(c: np.ndarray, by: float = _EPS) -> np.ndarray:
    centre = c.mean(axis=0)
    out = []
    for p in c:
        d = p - centre
        n = float(np.hypot(*d))
        out.append(p - d / n * by * math.sqrt(2) if n > by * 2 else p)
    return np.array(out)


def text_corners(t, renderer) -> np.ndarray | None:
    if not t.get_visible() or not t.get_text().strip():
        return None
    patch = t.get_bbox_patch()
    if patch is not None:  # a boxed label: the box is what covers (moved to the text only when drawn)
        if hasattr(t, "update_positions"):
            t.update_positions(renderer)
        t.update_bbox_position_size(renderer)
        bb = patch.get_window_extent(renderer)
        return rect(bb.x0, bb.y0, bb.x1, bb.y1)
    bb = t.get_window_extent(renderer)
    ang = t.get_rotation() % 180
    if ang == 0:
        return rect(bb.x0, bb.y0, bb.x1, bb.y1)
    # a rotated text: its axis-aligned box is centred on the rotated rectangle, whose size is the text's
    # unrotated size
    rot = t.get_rotation()
    t.set_rotation(0)
    flat = t.get_window_extent(renderer)
    t.set_rotation(rot)
    w, h = flat.width / 2, flat.height / 2
    a = math.radians(rot)
    ca, sa = math.cos(a), math.sin(a)
    cx, cy = (bb.x0 + bb.x1) / 2, (bb.y0 + bb.y1) / 2
    return np.array([(cx + dx * ca - dy * sa, cy + dx * sa + dy * ca)
                     for dx, dy in ((-w, -h), (w, -h), (w, h), (-w, h))])


def _ticks(ax, renderer):
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        for tick in axis.get_major_ticks():
            loc = tick.get_loc()
            if not (lo * (1 - 1e-9) <= loc <= hi * (1 + 1e-9)):
                continue
            for lab in (tick.label1, tick.label2):
                c = text_corners(lab, renderer) if lab.get_visible() else None
                if c is not None:
                    yield Shape("tick", lab.get_text(), c, lab)


def _marker_size_px(ln, px: float) -> float:
    return (ln.get_markersize() + ln.get_markeredgewidth()) * px


def _has_marker(ln) -> bool:
    m = ln.get_marker()
    return m not in (None, "None", "none", "", " ") and ln.get_visible()


def shapes(fig) -> list[Shape]:
    """Every text (tick labels included), marker and legend box of a drawn figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72.0
    out: list[Shape] = []
    for t in fig.texts:
        c = text_corners(t, renderer)
        if c is not None:
            out.append(Shape("text", t.get_text(), c, t))
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        axbox = ax.get_window_extent(renderer)
        for t in [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]:
            c = text_corners(t, renderer)
            if c is not None:
                out.append(Shape("text", t.get_text(), c, t))
        out.extend(_ticks(ax, renderer))
        for ln in ax.lines:
            if not _has_marker(ln):
                continue
            half = _marker_size_px(ln, px) / 2
            xy = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]).astype(float))
            for i, (x, y) in enumerate(xy):
                if not np.isfinite([x, y]).all():
                    continue
                if ln.get_clip_on() and not (axbox.x0 - half <= x <= axbox.x1 + half
                                             and axbox.y0 - half <= y <= axbox.y1 + half):
                    continue
                out.append(Shape("marker", f"{ln.get_label()}[{i}]", rect(x - half, y - half, x + half, y + half), ln))
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            bb = leg.get_window_extent(renderer)
            out.append(Shape("legend", "legend", rect(bb.x0, bb.y0, bb.x1, bb.y1), leg))
    return out


def overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Two convex quadrilaterals intersect (separating axis test)."""
    for poly in (a, b):
        for i in range(len(poly)):
            e = poly[(i + 1) % len(poly)] - poly[i]
            n = np.array([-e[1], e[0]])
            pa, pb = a @ n, b @ n
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


def inside(poly: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Which of ``pts`` lie inside the convex ``poly`` (corners in order)."""
    ok = np.ones(len(pts), dtype=bool)
    sign = None
    for i in range(len(poly)):
        a, b = poly[i], poly[(i + 1) % len(poly)]
        cross = (b[0] - a[0]) * (pts[:, 1] - a[1]) - (b[1] - a[1]) * (pts[:, 0] - a[0])
        if sign is None:
            sign = 1.0 if ((b[0] - a[0]) * (poly[(i + 2) % len(poly)][1] - a[1])
                           - (b[1] - a[1]) * (poly[(i + 2) % len(poly)][0] - a[0])) > 0 else -1.0
        ok &= cross * sign > 0
    return ok


def line_samples(fig) -> list[tuple[object, np.ndarray]]:
    """Every drawn data line (roofs, slopes, joins) as points a pixel apart, inside its axes."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        axbox = ax.get_window_extent(renderer)
        for ln in ax.lines:
            if ln.get_linestyle() in ("None", "none", "", " ") or not ln.get_visible() or len(ln.get_xdata()) < 2:
                continue
            pts = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]).astype(float))
            dense = []
            for a, b in zip(pts[:-1], pts[1:]):
                n = max(1, int(np.hypot(*(b - a))))
                dense.append(a + (b - a) * np.linspace(0, 1, n, endpoint=False)[:, None])
            dense.append(pts[-1:])
            d = np.concatenate(dense)
            d = d[(d[:, 0] >= axbox.x0) & (d[:, 0] <= axbox.x1) & (d[:, 1] >= axbox.y0) & (d[:, 1] <= axbox.y1)]
            if len(d):
                out.append((ln, d))
    return out


def collisions(fig, lines: bool = True) -> list[Collision]:
    """Every overlapping pair among the figure's texts, markers and legends (markers may overlap
    each other: two kernels can run at the same speed), and, with ``lines``, every text a data
    line runs through (tick labels are outside the axes, where no line runs)."""
    items = shapes(fig)
    shrunk = [_shrunk(s.corners) for s in items]
    found = []
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            a, b = items[i], items[j]
            if a.kind == "marker" and b.kind == "marker":
                continue
            if overlap(shrunk[i], shrunk[j]):
                found.append(Collision(a, b))
    if lines:
        for ln, pts in line_samples(fig):
            for s, c in zip(items, shrunk):
                if s.kind in ("text",) and inside(c, pts).any():
                    found.append(Collision(s, Shape("line", str(ln.get_label()), pts[:1], ln)))
    return found
