"""The line convention every picture shares: solid = measured, dashed = theoretical or published."""

from __future__ import annotations

MEASURED = "-"
THEORETICAL = (0, (6, 3))
# the ceilings registered beyond rooflab's own, in their order, in every roofline picture (flat and
# hierarchical, static and interactive): none of the roofs' or slopes' colours
ADDED_COLOURS = ("#117a65", "#a04000", "#6c3483", "#7b7d7d", "#b7950b", "#943126")


def line_style(measured: bool):
    return MEASURED if measured else THEORETICAL


def style_handles(measured: bool = False, theoretical: bool = True) -> list:
    """Legend entries for the convention itself, in black: they stand for a line style, whatever the colour."""
    from matplotlib.lines import Line2D

    out = []
    if measured:
        out.append(Line2D([], [], color="black", lw=1.8, ls=MEASURED, label="solid line: measured (any colour)"))
    if theoretical:
        out.append(Line2D([], [], color="black", lw=1.8, ls=THEORETICAL,
                          label="dashed line: theoretical / published (any colour)"))
    return out
