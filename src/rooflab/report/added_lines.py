"""The lines of the ceilings registered beyond rooflab's own, as both roofline pictures draw them
(measured, so solid, in ADDED_COLOURS): a compute ceiling a roof from where it starts to the right edge,
a bandwidth one a slope up to the highest roof. The labels are each picture's own."""

from __future__ import annotations

import math
from collections.abc import Callable

from rooflab.report.styles import ADDED_COLOURS, MEASURED


def plot_added(ax, ceilings, xmin: float, xmax: float, top_t: float,
               roof_start: Callable[[object], float]) -> list[tuple]:
    """Draw each ceiling's line; returns (ceiling, colour, line, legend handle, x where a roof starts or
    None for a slope) for each, in order."""
    import numpy as np
    from matplotlib.lines import Line2D

    out = []
    for i, c in enumerate(ceilings):
        colour = ADDED_COLOURS[i % len(ADDED_COLOURS)]
        v_t = c.value / 1e12
        if c.is_bandwidth:
            xs = np.logspace(math.log10(xmin), math.log10(top_t / v_t), 64)
            (ln,) = ax.plot(xs, xs * v_t, color=colour, lw=1.6, ls=MEASURED, zorder=3)
            x0 = None
        else:
            x0 = roof_start(c)
            (ln,) = ax.plot([x0, xmax], [v_t, v_t], color=colour, lw=1.6, ls=MEASURED, zorder=3)
        handle = Line2D([], [], color=colour, lw=1.6, ls=MEASURED, label=f"{c.name}: {c.what}")
        out.append((c, colour, ln, handle, x0))
    return out
