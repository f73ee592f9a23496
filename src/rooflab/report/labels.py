"""Label placement for the pictures: each label goes to the first good spot of a list of candidates,
where it covers no earlier label, marker, legend or data line and stays inside the axes. What
"covers" means is what rooflab.report.collisions checks, so a placed picture passes that check
whenever a free spot existed."""

from __future__ import annotations

import math

import numpy as np

from rooflab.report.collisions import inside, overlap, rect, text_corners

HARD = 1e6  # covering a label, marker or legend
LINE = 1e4  # a data line running through the label
OUTSIDE = 1e8  # leaving the axes


def _aabb(c: np.ndarray) -> tuple[float, float, float, float]:
    return float(c[:, 0].min()), float(c[:, 1].min()), float(c[:, 0].max()), float(c[:, 1].max())


def _padded(c: np.ndarray, pad: float) -> np.ndarray:
    centre = c.mean(axis=0)
    d = c - centre
    n = np.hypot(d[:, 0], d[:, 1])[:, None]
    return c + d / np.where(n > 0, n, 1) * pad * math.sqrt(2)


class Layout:
    """The obstacles of one axes, in display space, and a greedy placer over them."""

    def __init__(self, fig, ax):
        self.fig, self.ax = fig, ax
        self.renderer = fig.canvas.get_renderer()
        self.px = fig.dpi / 72.0
        bb = ax.get_window_extent(self.renderer)
        self.axbox = (bb.x0, bb.y0, bb.x1, bb.y1)
        self.polys: list[np.ndarray] = []
        self.boxes: list[tuple[float, float, float, float]] = []
        self.lines = np.zeros((0, 2))

    def block(self, corners: np.ndarray) -> None:
        self.polys.append(corners)
        self.boxes.append(_aabb(corners))

    def block_text(self, t, pad: float = 2.0) -> None:
        c = text_corners(t, self.renderer)
        if c is not None:
            self.block(_padded(c, pad * self.px))

    def block_marker(self, x: float, y: float, size_pt: float = 8.0) -> None:
        cx, cy = self.ax.transData.transform((x, y))
        h = size_pt * self.px / 2
        self.block(rect(cx - h, cy - h, cx + h, cy + h))

    def block_bbox(self, bb, pad: float = 2.0) -> None:
        p = pad * self.px
        self.block(rect(bb.x0 - p, bb.y0 - p, bb.x1 + p, bb.y1 + p))

    def add_line(self, ln) -> None:
        """A drawn line: labels keep off it (sampled a pixel apart)."""
        pts = self.ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]).astype(float))
        dense = []
        for a, b in zip(pts[:-1], pts[1:]):
            n = max(1, int(np.hypot(*(b - a)) / (1.5 * self.px)))
            dense.append(a + (b - a) * np.linspace(0, 1, n, endpoint=False)[:, None])
        dense.append(pts[-1:])
        self.lines = np.concatenate([self.lines, *dense])

    def cost(self, corners: np.ndarray, lines: bool = True) -> float:
        x0, y0, x1, y1 = _aabb(corners)
        ax0, ay0, ax1, ay1 = self.axbox
        score = 0.0
        if x0 < ax0 or y0 < ay0 or x1 > ax1 or y1 > ay1:
            score += OUTSIDE
        for (bx0, by0, bx1, by1), poly in zip(self.boxes, self.polys):
            if bx0 < x1 and x0 < bx1 and by0 < y1 and y0 < by1 and overlap(corners, poly):
                score += HARD
        if lines and len(self.lines):
            near = self.lines[(self.lines[:, 0] > x0) & (self.lines[:, 0] < x1)
                              & (self.lines[:, 1] > y0) & (self.lines[:, 1] < y1)]
            if len(near):
                score += LINE * int(inside(corners, near).sum() > 0) + float(inside(corners, near).sum())
        return score

    def corners(self, t, pad: float = 2.0) -> np.ndarray:
        return _padded(text_corners(t, self.renderer), pad * self.px)

    def place(self, ann, candidates, pad: float = 2.0, lines: bool = True, extra=None) -> float:
        """Move the annotation ``ann`` to the cheapest of ``candidates`` (each (xy, xytext, ha, va);
        xy None keeps the anchor), earlier ones preferred; block where it lands. ``extra(candidate,
        corners)`` adds a cost of the caller's. Returns the cost paid (0 when nothing is covered)."""
        best = None
        for i, (xy, xytext, ha, va) in enumerate(candidates):
            if xy is not None:
                ann.xy = xy
            ann.xyann = xytext
            ann.set_ha(ha)
            ann.set_va(va)
            c = self.corners(ann, pad)
            score = self.cost(c, lines) + (extra(candidates[i], c) if extra else 0.0)
            if best is None or score < best[0]:
                best = (score, i, c)
                if score == 0:
                    break
        score, i, c = best
        xy, xytext, ha, va = candidates[i]
        if xy is not None:
            ann.xy = xy
        ann.xyann = xytext
        ann.set_ha(ha)
        ann.set_va(va)
        self.block(c)
        return score


DIRS = ((1, 0), (1, 1), (1, -1), (0, 1), (0, -1), (-1, 0), (-1, 1), (-1, -1))
# farther out, the directions between those too: a crowded cluster needs the room
DIRS_FAR = DIRS + ((2, 1), (2, -1), (1, 2), (1, -2), (-2, 1), (-2, -1), (-1, 2), (-1, -2))


def around(radii=(7, 12, 18, 26, 36, 48, 62, 80, 100), dirs=DIRS):
    """Offsets (points) around an anchor, nearest first: each direction at each distance, with the
    alignment that keeps the text on that side."""
    out = []
    for rad in radii:
        for dx, dy in dirs if rad < 30 else DIRS_FAR:
            n = math.hypot(dx, dy)
            ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
            va = "bottom" if dy > 0 else ("top" if dy < 0 else "center")
            out.append((None, (rad * dx / n, rad * dy / n), ha, va))
    return out


def best_legend(ax, lay: Layout, handles, locs=("lower right", "upper left", "center right", "lower center",
                                               "upper center", "center left", "lower left"), **kw):
    """The legend at the first corner where it covers no marker or label already blocked (lines may run
    under it), its rows closer together, then in two columns, where it fits no corner as it is;
    blocked where it lands. None without handles."""
    if not handles:
        return None
    kw = {"fontsize": 8, "framealpha": 0.95, "edgecolor": "0.8", "handlelength": 3.2, **kw}
    best = None
    for shape in ({}, {"labelspacing": 0.2, "borderpad": 0.3}, {"ncol": 2}):
        for loc in locs:
            leg = ax.legend(handles=handles, loc=loc, **kw, **shape)
            bb = leg.get_window_extent(lay.renderer)
            c = rect(bb.x0 - 2 * lay.px, bb.y0 - 2 * lay.px, bb.x1 + 2 * lay.px, bb.y1 + 2 * lay.px)
            score = lay.cost(c, lines=False)
            if best is None or score < best[0]:
                best = (score, loc, shape, c)
            if score == 0:
                break
        if best[0] == 0:
            break
    leg = ax.legend(handles=handles, loc=best[1], **kw, **best[2])
    lay.block(best[3])
    return leg


def slope_label(ax, lay: Layout, text: str, bw_t: float, x_in: float, x_hi: float, colour: str, fontsize=8.5):
    """Write ``text`` along the slope y = bw_t·x, just above it, at the spot between x_in and x_hi
    (nearest the middle first) that covers nothing."""
    pa, pb = ax.transData.transform([(x_in, x_in * bw_t), (x_hi, x_hi * bw_t)])
    ang = math.degrees(math.atan2(pb[1] - pa[1], pb[0] - pa[0]))
    nx, ny = -math.sin(math.radians(ang)), math.cos(math.radians(ang))
    t = ax.annotate(text, (x_in, x_in * bw_t), xytext=(4 * nx, 4 * ny), textcoords="offset points",
                    rotation=ang, rotation_mode="anchor", ha="center", va="bottom", fontsize=fontsize,
                    color=colour, fontweight="bold", zorder=6)
    fs = (0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9, 0.1, 0.65, 0.45, 0.35, 0.75, 0.25, 0.85, 0.15)
    candidates = []
    for f in fs:
        xc = x_in * (x_hi / x_in) ** f
        for lift in (4, 10, 16):
            candidates.append(((xc, xc * bw_t), (lift * nx, lift * ny), "center", "bottom"))
    lay.place(t, candidates, pad=1.0, lines=True)
    return t


def place_point_labels(ax, lay: Layout, points, fontsize=8.5) -> None:
    """A boxed label by each (x, y, text, colour) marker, at the nearest spot around it that covers
    nothing; a thin leader line joins a far label to its marker."""
    cands = around()
    for x, y, text, colour in points:
        ann = ax.annotate(text, (x, y), xytext=(7, 0), textcoords="offset points", fontsize=fontsize,
                          color="black", zorder=8, annotation_clip=False,
                          bbox={"boxstyle": "round,pad=0.18", "fc": "white", "ec": colour, "lw": 0.6, "alpha": 0.9})
        mx, my = ax.transData.transform((x, y))

        def leader_cost(cand, _corners, mx=mx, my=my):
            ox, oy = cand[1]
            if math.hypot(ox, oy) <= 10:
                return 0.0
            # the leader should not cross other labels or markers
            hits = 0
            for f in np.linspace(0.3, 0.9, 7):
                sx, sy = mx + f * ox * lay.px, my + f * oy * lay.px
                hits += sum(1 for bx0, by0, bx1, by1 in lay.boxes
                            if bx0 < sx < bx1 and by0 < sy < by1 and not (bx0 < mx < bx1 and by0 < my < by1))
            return 300.0 * hits

        lay.place(ann, cands, pad=1.5, lines=True, extra=leader_cost)
        ox, oy = ann.xyann
        if math.hypot(ox, oy) > 10:
            ax.annotate("", (x, y), xytext=(ox, oy), textcoords="offset points", zorder=7, annotation_clip=False,
                        arrowprops={"arrowstyle": "-", "color": colour, "lw": 0.8, "shrinkA": 0, "shrinkB": 4})


def along_roof(x0: float, x1: float, y: float):
    """Candidate spots for a roof's label: above its line flush right, below it, then further left,
    then a little further off the line."""
    out = []
    for lift in (3, 9):
        for f in (1.0, 0.85, 0.7, 0.55, 0.4, 0.25, 0.1):
            x = x0 * (x1 / x0) ** f
            ha = "right" if f == 1.0 else "center"
            dx = -5 if f == 1.0 else 0
            out += [((x, y), (dx, lift), ha, "bottom"), ((x, y), (dx, -lift), ha, "top")]
    return out
