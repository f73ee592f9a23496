"""The rooflines of report.html as Plotly figures: the flat one (every kernel against its roof and
the HBM slope) and the hierarchical one (every kernel once per memory level). Each point's hover
says kernel, time, TFLOP/s, AI at each level, binding level and % of roof; each family of kernels is
one legend entry, so a click hides it. Placement is the model's (placement, hierarchy): nothing is
re-derived here."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rooflab import rungs
from rooflab.model import hierarchy as hier
from rooflab.model.roofline import X_MAX, X_MAX_CAP, X_MIN, X_MIN_CAP, Roofline, _fmt
from rooflab.report.styles import ADDED_COLOURS
from rooflab.rungs.triton import TRITON_RUNGS

FAMILIES = ("SIMT", "tensor", "Triton", "ceilings", "user kernels")
_FAMILY_COLOUR = {"SIMT": "#1f77b4", "tensor": "#d62728", "Triton": "#2ca02c", "ceilings": "#7f7f7f",
                  "user kernels": "#9467bd"}
_LEVEL_SYMBOL = {"L1": "circle", "L2": "square", "DRAM": "diamond"}
# one convention for every picture: theoretical roofs solid, measured ones dotted
_THEORY, _MEASURED = "solid", "dot"


def family(label: str, doc: dict) -> str:
    """Which legend entry a placed kernel belongs to."""
    rung = rungs.get(label)
    if rung is not None:
        if rung.name in {t.name for t in TRITON_RUNGS}:
            return "Triton"
        return "SIMT" if rung.precision == "fp32" else "tensor"
    mine = {r.get("kernel") for r in (doc.get("gemm") or {}).get("rungs", [])}
    mine |= {r.get("kernel") for r in (doc.get("bench") or {}).get("rows", [])}
    return "user kernels" if label in mine else "ceilings"


def _profile_label(label: str) -> str:
    """The name Nsight Compute's profile (and so the hierarchy) gives a placed point."""
    if label.startswith("fma"):
        return "fma"
    if label.startswith("copy"):
        return "copy"
    return label


def times_ms(doc: dict) -> dict[str, float]:
    """Median time of each placed kernel, by its profile label."""
    out: dict[str, float] = {}
    for rec in (doc.get("gemm") or {}).get("rungs", []):
        if (rec.get("timing") or {}).get("median_ms"):
            out[rec["kernel"]] = rec["timing"]["median_ms"]
    for rec in (doc.get("bench") or {}).get("rows", []):
        if (rec.get("timing") or {}).get("median_ms") and rec.get("kernel"):
            out[rec["kernel"]] = rec["timing"]["median_ms"]
    rows = [r for r in (doc.get("flops") or {}).get("rows", []) if r.get("tflops") and r.get("timing")]
    if rows:
        out["fma"] = max(rows, key=lambda r: r["tflops"])["timing"]["median_ms"]
    scale = (doc.get("bandwidth") or {}).get("scale") or {}
    if (scale.get("timing") or {}).get("median_ms"):
        out["copy"] = scale["timing"]["median_ms"]
    return out


@dataclass
class Placed:
    """One hoverable point: where it is drawn and what its tooltip says."""

    label: str
    family: str
    x: float
    y: float
    hover: str
    symbol: str = "circle"
    binding: bool = False  # the level that binds the kernel (hierarchical view)


def _edge(ai: float) -> tuple[float, str]:
    """Where a point is drawn on the AI axis: an AI beyond the axis's caps sits on the edge, and says so."""
    if ai > X_MAX_CAP:
        return X_MAX_CAP, " (beyond the axis: drawn at its edge)"
    if ai < X_MIN_CAP:
        return X_MIN_CAP, " (beyond the axis: drawn at its edge)"
    return ai, ""


def _num(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{_fmt(x)}{unit}"


def _levels_text(k: hier.KernelLevels | None, names: dict[str, str]) -> str:
    if k is None:
        return ""
    return "<br>".join(f"AI {names.get(p.level, p.level)}: {_num(p.ai)} FLOP/B" for p in k.points)


def flat_points(doc: dict, rl: Roofline, h: hier.Hierarchy | None) -> list[Placed]:
    kernels = {k.label: k for k in (h.kernels if h else [])}
    names = {lv.key: lv.name for lv in (h.levels if h else [])}
    t = times_ms(doc)
    out = []
    for p, row in zip(rl.points, rl.rows(), strict=True):
        if not (p.ai and p.flops) or not math.isfinite(p.ai):
            continue  # no AI or no FLOPs: nothing to place on a log-log picture (the tables have it)
        key = _profile_label(p.label)
        k = kernels.get(key)
        roof = next((r for r in rl.roofs if r.name == row["roof"]), None)
        pct_roof = 100 * p.flops / roof.flops if roof else None
        # the hierarchy's binding level and what it allows where the kernel was profiled per level;
        # else the flat roofline's (HBM slope and the roof)
        binding = k.binding_name if k else row["bound"]
        pct_attainable = k.pct_of_attainable if k and k.pct_of_attainable is not None else row["pct_of_attainable"]
        x, edge = _edge(p.ai)
        lines = [f"<b>{p.label}</b> ({family(p.label, doc)}){edge}",
                 f"time: {_num(t.get(key), ' ms')}",
                 f"{p.flops / 1e12:,.3g} TFLOP/s",
                 f"AI (HBM, {p.ai_source}): {_num(p.ai)} FLOP/B",
                 _levels_text(k, names),
                 f"binding: {binding}",
                 f"roof: {row['roof']}; {_num(pct_roof, '%')} of roof, "
                 f"{_num(pct_attainable, '%')} of attainable"]
        out.append(Placed(p.label, family(p.label, doc), x, p.flops / 1e12, "<br>".join(ln for ln in lines if ln)))
    return out


def level_points(doc: dict, h: hier.Hierarchy) -> list[Placed]:
    names = {lv.key: lv.name for lv in h.levels}
    t = times_ms(doc)
    out = []
    for k in h.kernels:
        if not k.achieved or not k.flops:
            continue  # a kernel with no FLOPs (a copy) has no height: the table says how busy each level was
        for p in k.points:
            if not math.isfinite(p.ai) or p.ai <= 0:
                continue
            x, edge = _edge(p.ai)
            lines = [f"<b>{k.label}</b> at {names.get(p.level, p.level)} ({family(k.label, doc)}){edge}",
                     f"time: {_num(t.get(k.label), ' ms')}",
                     f"{k.achieved / 1e12:,.3g} TFLOP/s",
                     _levels_text(k, names),
                     f"binding: {k.binding_name}",
                     f"{_num(k.pct_of_attainable, '%')} of attainable ({_num(k.attainable / 1e12 if k.attainable else None)}"
                     f" TFLOP/s), {_num(100 * k.achieved / k.peak if k.peak else None, '%')} of the {k.roof} roof"]
            out.append(Placed(k.label, family(k.label, doc), x, k.achieved / 1e12, "<br>".join(lines),
                              _LEVEL_SYMBOL.get(p.level, "circle"), p.level == k.binding))
    return out


def _r(v: float) -> float:
    """Five significant figures: enough to draw, and the page stays small."""
    return float(f"{v:.5g}")


def _x_range(xs: list[float]) -> tuple[float, float]:
    lo = min([X_MIN, *xs]) / 2
    hi = max([X_MAX, *xs]) * 2
    return lo, hi


def _roof_line(go, name: str, bw: float, flops: float, x0: float, x1: float, dash: str, colour: str, group: str):
    """min(flops, AI × bw) over [x0, x1]: the slope up to the ridge, the roof after it."""
    ridge = flops / bw
    xs = [x0, ridge, x1] if x0 < ridge < x1 else [x0, x1]
    ys = [_r(min(flops, x * bw) / 1e12) for x in xs]
    return go.Scatter(x=[_r(x) for x in xs], y=ys, mode="lines", name=name, legendgroup=group, hoverinfo="skip",
                      line={"dash": dash, "color": colour, "width": 1.5})


def _added(ceilings: list) -> list[tuple]:
    """(ceiling, colour, trace name) for each ceiling registered beyond rooflab's own: measured, so dotted,
    in the static pictures' colours."""
    return [(c, ADDED_COLOURS[i % len(ADDED_COLOURS)], f"{c.label} ({c.what})") for i, c in enumerate(ceilings)]


def _added_slope(go, name: str, bw: float, colour: str, x0: float, x1: float, top: float | None):
    """A registered bandwidth ceiling: its slope up to the highest roof."""
    xs = [x0, min(x1, (top or bw * x1) / bw)]
    return go.Scatter(x=[_r(x) for x in xs], y=[_r(x * bw / 1e12) for x in xs], mode="lines", name=name,
                      legendgroup="registered", hoverinfo="skip",
                      line={"dash": _MEASURED, "color": colour, "width": 1.5})


def _point_traces(go, placed: list[Placed]) -> list:
    traces = []
    for fam in FAMILIES:
        pts = [p for p in placed if p.family == fam]
        if not pts:
            continue
        traces.append(go.Scatter(
            x=[_r(p.x) for p in pts], y=[_r(p.y) for p in pts], mode="markers", name=fam, legendgroup=fam,
            hovertext=[p.hover for p in pts], hovertemplate="%{hovertext}<extra></extra>",
            customdata=[p.label for p in pts],
            marker={"color": _FAMILY_COLOUR[fam], "size": [12 if p.binding else 9 for p in pts],
                    "symbol": [p.symbol for p in pts],
                    "line": {"color": "black", "width": [2 if p.binding else 0.5 for p in pts]}}))
    return traces


def _layout(fig, title: str, x_range: tuple[float, float]) -> None:
    # no template: a template is written into the page with every figure, and the page must stay small
    fig.update_layout(title=title, hovermode="closest", template="none", height=620, plot_bgcolor="white",
                      legend={"title": {"text": "click to hide"}}, margin={"l": 70, "r": 20, "t": 60, "b": 60},
                      hoverlabel={"align": "left"})
    grid = {"showgrid": True, "gridcolor": "#e5e5e5", "zeroline": False, "linecolor": "#444", "showline": True,
            "dtick": 1}  # a label per decade only
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP/byte)",
                     range=[math.log10(x_range[0]), math.log10(x_range[1])], **grid)
    fig.update_yaxes(type="log", title="TFLOP/s", **grid)


def roofline_figure(doc: dict, rl: Roofline, h: hier.Hierarchy | None = None):
    """The flat roofline: compute roofs over the HBM slope, every kernel at its HBM intensity."""
    import plotly.graph_objects as go  # noqa: PLC0415

    placed = flat_points(doc, rl, h)
    x0, x1 = _x_range([p.x for p in placed])
    fig = go.Figure()
    for roof in rl.roofs:
        fig.add_trace(_roof_line(go, f"{roof.label} (ridge {rl.ridge(roof):.3g})", rl.bandwidth, roof.flops, x0, x1,
                                 "dash" if roof.dashed else _THEORY, "#444" if not roof.dashed else "#b03a2e",
                                 "roofs"))
    if rl.measured_bandwidth:  # a slope only, up to the highest roof: it bounds no roof of its own
        bw = rl.measured_bandwidth
        top = max(r.flops for r in rl.roofs) if rl.roofs else bw * x1
        xs = [x0, min(x1, top / bw)]
        fig.add_trace(go.Scatter(x=[_r(x) for x in xs], y=[_r(x * bw / 1e12) for x in xs], mode="lines",
                                 name=f"measured copy {bw / 1e12:.2f} TB/s", legendgroup="measured", hoverinfo="skip",
                                 line={"dash": _MEASURED, "color": "#2e86c1", "width": 1.5}))
    if rl.measured_flops:
        fig.add_trace(go.Scatter(x=[x0, x1], y=[rl.measured_flops / 1e12] * 2, mode="lines", hoverinfo="skip",
                                 name=f"measured FMA {rl.measured_flops / 1e12:.1f} TFLOP/s", legendgroup="measured",
                                 line={"dash": _MEASURED, "color": "#2e86c1"}))
    top = max((r.flops for r in rl.roofs), default=None)
    for c, colour, name in _added(rl.added_ceilings):
        if c.is_bandwidth:  # a slope up to the highest roof, as the measured copy's
            fig.add_trace(_added_slope(go, name, c.value, colour, x0, x1, top))
        else:
            fig.add_trace(_roof_line(go, name, rl.bandwidth, c.value, x0, x1, _MEASURED, colour, "registered"))
    for trace in _point_traces(go, placed):
        fig.add_trace(trace)
    for m in rl.marks:
        fig.add_trace(go.Scatter(x=[m.ai], y=[m.flops / 1e12], mode="markers", name=m.label, legendgroup="marks",
                                 hovertext=[m.label], hovertemplate="%{hovertext}<extra></extra>",
                                 customdata=[m.label], marker={"symbol": "diamond", "size": 10, "color": "#444"}))
    _layout(fig, rl.title or rl.device, (x0, x1))
    return fig


def levels_figure(doc: dict, h: hier.Hierarchy):
    """The hierarchical roofline: one slope per level, every kernel once per level (circle L1/shared,
    square L2, diamond HBM; the binding level's marker larger, black-edged)."""
    import plotly.graph_objects as go  # noqa: PLC0415

    placed = level_points(doc, h)
    x0, x1 = _x_range([p.x for p in placed])
    top = max((r.flops for r in h.roofs), default=1e15)
    fig = go.Figure()
    colours = {"L1": "#1e8449", "L2": "#b9770e", "DRAM": "#1f4e9c"}
    for lv in h.levels:  # each slope up to the highest roof
        xs = [x0, min(x1, top / lv.bandwidth)]
        fig.add_trace(go.Scatter(
            x=[_r(x) for x in xs], y=[_r(x * lv.bandwidth / 1e12) for x in xs], mode="lines", hoverinfo="skip",
            name=f"{lv.name} {lv.bandwidth / 1e12:.2f} TB/s ({'measured' if lv.measured else 'theoretical'})",
            legendgroup="slopes", line={"dash": _MEASURED if lv.measured else _THEORY,
                                        "color": colours.get(lv.key, "#444"), "width": 1.5}))
    for r in h.roofs:
        fig.add_trace(go.Scatter(x=[x0, x1], y=[r.flops / 1e12] * 2, mode="lines", hoverinfo="skip",
                                 name=f"{r.name} {r.flops / 1e12:,.1f} TFLOP/s", legendgroup="roofs",
                                 line={"dash": _MEASURED if r.measured else ("dash" if r.dashed else _THEORY),
                                       "color": "#444", "width": 1.2}))
    for c, colour, name in _added(h.added_ceilings):  # a slope beside the levels', or a roof beside theirs
        fig.add_trace(_added_slope(go, name, c.value, colour, x0, x1, top) if c.is_bandwidth else go.Scatter(
            x=[x0, x1], y=[c.value / 1e12] * 2, mode="lines", hoverinfo="skip", name=name, legendgroup="registered",
            line={"dash": _MEASURED, "color": colour, "width": 1.5}))
    for trace in _point_traces(go, placed):
        fig.add_trace(trace)
    _layout(fig, f"{h.title}<br><sup>circle: L1/shared · square: L2 · diamond: HBM · "
                 "large, black-edged: the level that binds the kernel</sup>", (x0, x1))
    return fig


def point_labels(fig) -> list[str]:
    """Every hoverable point's kernel, in trace order (what the browser test looks for)."""
    return [c for tr in fig.data if getattr(tr, "customdata", None) is not None for c in tr.customdata]
