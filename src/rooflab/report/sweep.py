"""Speed against problem size, from a results document's "sweep" section alone: TFLOP/s of each
rung against N with the roofs as horizontal lines, and the copy's bandwidth against array size
with the HBM peak and the L2's size marked; their tables (sweep.csv, sweep_copy.csv)."""

from __future__ import annotations

import math
from pathlib import Path

from rooflab.errors import UsageError
from rooflab.model.metrics import peak_for
from rooflab.report.labels import Layout, along_roof, best_legend
from rooflab.report.styles import MEASURED, THEORETICAL, style_handles
from rooflab.report.table import Table, fmt, missing
from rooflab.report.section import Drawing, Section, register

KERNEL_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                  "#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
                  "#e6550d", "#31a354", "#756bb1", "#636363"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
ROOF_COLOURS = {"fp32": "#1a1a1a", "tf32": "#c0392b", "3xtf32": "#b9770e", "bf16": "#7d3c98", "fp16": "#7d3c98"}


def _gemm(doc: dict) -> dict | None:
    return (doc.get("sweep") or {}).get("gemm")


def _copy(doc: dict) -> dict | None:
    return (doc.get("sweep") or {}).get("copy")


def _status(row: dict) -> str:
    if row.get("skipped"):
        return "skipped"
    if row.get("error"):
        return "ERROR"
    if not row.get("passed"):
        return "FAILED " + ", ".join(row.get("failed_checks") or [])
    return "ok"


def _kernels(g: dict) -> list[str]:
    return list(dict.fromkeys([*g.get("kernels", []), *(r["kernel"] for r in g["rows"])]))


def _bytes_text(b: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b:g} B"


def sweep_tables(doc: dict) -> list[Table]:
    """The sweep's tables: TFLOP/s by rung and N (for people), every rung at every size (sweep.csv),
    and the copy's bandwidth by array size (sweep_copy.csv). None where the document has no sweep."""
    out = []
    g = _gemm(doc)
    if g and g.get("rows"):
        sizes = sorted({r["n"] for r in g["rows"]})
        by = {(r["kernel"], r["n"]): r for r in g["rows"]}
        rows = []
        for k in _kernels(g):
            cells = []
            for n in sizes:
                r = by.get((k, n))
                if r is None:
                    cells.append(None)
                elif r.get("tflops") is not None:
                    cells.append(fmt(r["tflops"], ".3g" if r["tflops"] < 100 else ".0f"))
                else:
                    cells.append(missing("—" if r.get("skipped") else _status(r)))
            rows.append([k, *cells])
        notes = sorted({f"{r['kernel']}: {r['skipped']}" for r in g["rows"]
                        if r.get("skipped") and r["skipped"].startswith("not run from")})
        notes.append("Every cell is a rung checked (float64 reference, guard zones, determinism) and timed at "
                     "that N (M = N = K); median of the reps (fewer at large N: see sweep.csv).")
        out.append(Table("GEMM TFLOP/s against N", ["kernel", *(str(n) for n in sizes)], rows, notes,
                         key="sweep_tflops"))
        long_rows = [[r["kernel"], r["n"], _status(r), r.get("reps"), fmt(r.get("median_ms"), ".4g"),
                      fmt(r.get("tflops"), ".4g"), fmt(r.get("worst_error"), ".2e"), r.get("skipped") or r.get("error")]
                     for r in sorted(g["rows"], key=lambda r: (_kernels(g).index(r["kernel"]), r["n"]))]
        out.append(Table("GEMM sweep: every rung at every size", ["kernel", "N", "status", "reps", "median ms",
                                                                  "TFLOP/s", "worst error", "note"], long_rows,
                         key="sweep"))
    c = _copy(doc)
    if c and c.get("rows"):
        peak = c.get("hbm_peak_bytes_per_s")
        rows = [[_bytes_text(r["bytes_per_array"]), r["bytes_per_array"],
                 fmt(r["gbs"], ".0f") if r.get("gbs") else missing(r.get("skipped") or "FAILED"),
                 fmt(r.get("gbs_best"), ".0f"), fmt(r.get("memcpy_gbs"), ".0f"),
                 fmt(100 * r["gbs"] * 1e9 / peak, ".0f", "%") if r.get("gbs") and peak else None,
                 "yes" if 2 * r["bytes_per_array"] <= (c.get("l2_bytes") or 0) else "no"]
                for r in c["rows"]]
        out.append(Table("Copy bandwidth against array size", ["per array", "bytes", "copy GB/s", "best GB/s",
                                                                "cudaMemcpy GB/s", "% of HBM peak", "fits in L2"],
                         rows, [c.get("method", "")], key="sweep_copy"))
    return out


# ----------------------------------------------------------------------------------------------
# the picture
# ----------------------------------------------------------------------------------------------


def has_picture(doc: dict) -> bool:
    """Whether the document has a timed sweep to draw."""
    g, c = _gemm(doc) or {}, _copy(doc) or {}
    return any(r.get("tflops") for r in g.get("rows", [])) or any(r.get("gbs") for r in c.get("rows", []))


def plot_sweep(doc: dict, path: str | Path | None = None):
    """TFLOP/s against N (log N) per rung with the roofs, and the copy's GB/s against array size;
    written to ``path`` (PNG, or SVG by its extension) when given. Returns the Figure."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    g, c = _gemm(doc), _copy(doc)
    g = g if g and any(r.get("tflops") for r in g.get("rows", [])) else None
    c = c if c and any(r.get("gbs") for r in c.get("rows", [])) else None
    if not (g or c):
        raise UsageError("the results document has no timed sweep to draw")
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(17 if g and c else 11, 7), dpi=150)
        FigureCanvasAgg(fig)
        name = (doc.get("device") or {}).get("name", "")
        fig.suptitle(f"{name} — speed against problem size", fontsize=13, fontweight="bold", y=0.985)
        if g and c:
            _gemm_panel(fig, fig.add_axes((0.045, 0.09, 0.39, 0.83)), doc, g, legend_x=1.01)
            _copy_panel(fig, fig.add_axes((0.675, 0.09, 0.315, 0.83)), c)
        elif g:
            _gemm_panel(fig, fig.add_axes((0.07, 0.09, 0.66, 0.83)), doc, g, legend_x=1.01)
        else:
            _copy_panel(fig, fig.add_axes((0.08, 0.09, 0.88, 0.83)), c)
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(p, format="svg" if p.suffix.lower() == ".svg" else "png", dpi=150, facecolor="white")
    return fig


MAX_TICKS = 8  # labels a panel's size axis holds without touching


def _log2_axis(ax, values: list[float], text) -> None:
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ax.set_xscale("log", base=2)
    lo, hi = min(values), max(values)
    ax.set_xlim(lo / 1.25, hi * 1.25)
    e0, e1 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((e1 - e0 + 1) / MAX_TICKS))  # the powers of two in the range, not the sizes measured
    ticks = [2.0**e for e in range(e0, e1 + 1) if (e - e0) % step == 0 and lo / 1.25 <= 2.0**e <= hi * 1.25]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(lambda v, _pos: text(v))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _log_y(ax, subs=(1.0,)) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=20))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="0.88", lw=0.6)
    ax.grid(True, which="minor", color="0.95", lw=0.4)
    ax.set_axisbelow(True)


def _gemm_panel(fig, ax, doc: dict, g: dict, legend_x: float) -> None:
    from matplotlib.lines import Line2D

    rows = [r for r in g["rows"] if r.get("tflops")]
    sizes = sorted({r["n"] for r in g["rows"]})
    precs = list(dict.fromkeys(r.get("precision", "fp32") for r in rows))
    roofs = [(p, peak_for(doc, p)) for p in precs]
    roofs = [(p, v / 1e12) for p, v in roofs if v]
    values = [r["tflops"] for r in rows] + [v for _p, v in roofs]
    _log2_axis(ax, sizes, lambda v: f"{v:.0f}")
    _log_y(ax)
    ax.set_ylim(10 ** math.floor(math.log10(min(values) / 1.5)), max(values) * 2.5)
    ax.set_xlabel("N (M = N = K), log scale")
    ax.set_ylabel("TFLOP/s (2·N³ / median time)")
    ax.set_title("GEMM: each rung checked and timed at each N", fontsize=11, fontweight="bold")
    lay = Layout(fig, ax)
    handles = []
    for i, k in enumerate(_kernels(g)):
        pts = sorted((r["n"], r["tflops"]) for r in rows if r["kernel"] == k)
        if not pts:
            continue
        colour, marker = KERNEL_COLOURS[i % len(KERNEL_COLOURS)], MARKERS[i % len(MARKERS)]
        (ln,) = ax.plot([n for n, _ in pts], [t for _, t in pts], color=colour, lw=1.6, ls=MEASURED, marker=marker,
                        ms=5, zorder=5, label=k)
        lay.add_line(ln)
        for n, t in pts:
            lay.block_marker(n, t, 6)
        handles.append(Line2D([], [], color=colour, lw=1.6, ls=MEASURED, marker=marker, ms=5, label=k))
    xmin, xmax = ax.get_xlim()
    # the roofs are named in the legend beside the panel: a dense panel leaves no free stretch on them
    for p, v in sorted(roofs, key=lambda pv: -pv[1]):
        colour = ROOF_COLOURS.get(p, "#555555")
        ax.plot([xmin, xmax], [v, v], color=colour, lw=1.6, ls=THEORETICAL, zorder=3)
        name = "FP32 peak" if p == "fp32" else f"{p.upper().replace('3XTF32', '3xTF32')} tensor peak"
        handles.append(Line2D([], [], color=colour, lw=1.6, ls=THEORETICAL, label=f"{name} {v:.3g} TFLOP/s"))
    handles += style_handles(measured=True, theoretical=bool(roofs))
    # the legend beside the panel: a line per rung would cover the lines it names
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(legend_x, 1.0), fontsize=8, framealpha=0.95,
              edgecolor="0.8", handlelength=3.2, borderaxespad=0)


def _copy_panel(fig, ax, c: dict) -> None:
    from matplotlib.lines import Line2D

    rows = [r for r in c["rows"] if r.get("gbs")]
    sizes = [r["bytes_per_array"] for r in c["rows"]]
    peak = c.get("hbm_peak_bytes_per_s")
    values = [r["gbs"] for r in rows] + [r["memcpy_gbs"] for r in rows if r.get("memcpy_gbs")]
    if peak:
        values.append(peak / 1e9)
    _log2_axis(ax, sizes, lambda v: _bytes_text(v).replace(" ", "\u2009"))
    _log_y(ax, subs=(1.0, 2.0, 5.0))
    ax.set_ylim(10 ** math.floor(math.log10(min(values) / 1.5)), max(values) * 2.5)
    ax.set_xlabel("bytes per array (source and destination each), log scale")
    ax.set_ylabel("GB/s (2 × bytes / median time)")
    ax.set_title("Copy: bandwidth against array size", fontsize=11, fontweight="bold")
    lay = Layout(fig, ax)
    handles = []
    for key, label, colour, marker in (("gbs", "float4 copy kernel", "#1f4e9c", "o"),
                                       ("memcpy_gbs", "cudaMemcpy device to device", "#d35400", "s")):
        pts = [(r["bytes_per_array"], r[key]) for r in rows if r.get(key)]
        if not pts:
            continue
        (ln,) = ax.plot([x for x, _ in pts], [y for _, y in pts], color=colour, lw=1.8, ls=MEASURED, marker=marker,
                        ms=5, zorder=5)
        lay.add_line(ln)
        for x, y in pts:
            lay.block_marker(x, y, 6)
        handles.append(Line2D([], [], color=colour, lw=1.8, ls=MEASURED, marker=marker, ms=5, label=label))
    xmin, xmax = ax.get_xlim()
    ymin, ymax = ax.get_ylim()
    pending = []
    if peak:
        (ln,) = ax.plot([xmin, xmax], [peak / 1e9, peak / 1e9], color="#1a1a1a", lw=1.6, ls=THEORETICAL, zorder=3)
        lay.add_line(ln)
        t = ax.annotate(f"HBM peak {peak / 1e12:.2f} TB/s", (xmax, peak / 1e9), xytext=(-5, 3),
                        textcoords="offset points", ha="right", va="bottom", fontsize=8.5, fontweight="bold",
                        color="#1a1a1a", zorder=6)
        pending.append((t, along_roof(xmin, xmax, peak / 1e9)))
    l2 = c.get("l2_bytes")
    if l2 and xmin < l2 / 2 < xmax:  # two arrays of L2/2 fill the L2
        (ln,) = ax.plot([l2 / 2, l2 / 2], [ymin, ymax], color="0.45", lw=1.2, ls=THEORETICAL, zorder=2)
        lay.add_line(ln)
        t = ax.annotate(f"two arrays fill the L2 ({_bytes_text(l2)})", (l2 / 2, ymin), xytext=(4, 6),
                        textcoords="offset points", rotation=90, ha="left", va="bottom", fontsize=8, color="0.3",
                        zorder=6)
        cands = []
        for f in (0.03, 0.3, 0.6):
            y = ymin * (ymax / ymin) ** f
            cands += [((l2 / 2, y), (4, 0), "left", "bottom"), ((l2 / 2, y), (-4, 0), "right", "bottom")]
        pending.append((t, cands))
    for t, cands in pending:
        lay.place(t, cands, pad=1.0)
    handles += style_handles(measured=True, theoretical=bool(peak or l2))
    best_legend(ax, lay, handles, locs=("lower right", "lower center", "center right", "upper left", "lower left"))


SECTION = register(Section(
    name="sweep", heading="Speed against problem size", tables=sweep_tables,
    pictures=(Drawing("sweep.png", "speed against size", plot_sweep, when=has_picture),),
    brief=("sweep_tflops", "sweep_copy"),
    notes=lambda doc: ["Every rung at every size, with its reps and worst error: sweep.csv."], order=10))
