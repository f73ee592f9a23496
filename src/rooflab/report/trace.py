"""A traced program rendered from its results document alone: the kernels ranked by the time there
is to win, the limits of what was measured, and a roofline with a bubble per kernel group."""

from __future__ import annotations

from pathlib import Path

from rooflab.model.trace import base_name
from rooflab.report.table import Table, fmt, missing
from rooflab.report.section import Drawing, Section, register

FAMILY_COLOURS = {"tensor": "#d62728", "compute": "#1f77b4", "memory": "#2ca02c", "unplaced": "#7f7f7f"}


def short(group: dict) -> str:
    g, b = group["grid"], group["block"]
    return f"{base_name(group['name'])} <<<{'×'.join(map(str, g))}, {'×'.join(map(str, b))}>>>"


def ranked_table(doc: dict) -> Table:
    sec = doc["trace"]
    total = sec["gpu_time_s"] or 0.0
    rows = []
    for i, p in enumerate(sec["groups"], 1):
        g = p["group"]
        share = 100.0 * g["total_s"] / total if total else None
        if p["profiled"]:
            where = [p["binding_name"], fmt(p["pct_of_attainable"], ".0f", "%") or missing("no FLOPs"),
                     fmt(p["headroom_s"] * 1e3 if p["headroom_s"] is not None else None, ".3f"), p["flops_source"]]
        else:
            where = [missing("not profiled"), None, None, None]
        rows.append([i, short(g), g["launches"], fmt(g["total_s"] * 1e3, ".3f"), fmt(share, ".1f", "%"), *where])
    lim = sec["limits"]
    notes = [f"{sec['kernels']} kernel groups, {sec['launches']} launches, {total * 1e3:.3f} ms of GPU time "
             f"({sec['collector']}); ceilings {sec['ceilings_source']}.",
             "headroom = time × (1 − achieved ÷ attainable at the binding level); a group that does no "
             "floating-point work: time − the time its busiest level needs."]
    if lim.get("unprofiled_groups"):
        share = 100 * lim["unprofiled_share"]
        notes.append(f"{plural(lim['unprofiled_groups'], 'group')} not profiled, holding {share:.1f}% of the GPU time.")
    return Table("Kernels ranked by the time there is to win",
                 ["rank", "kernel <<<grid, block>>>", "launches", "total ms", "share", "binding level",
                  "% of attainable", "headroom ms", "FLOPs from"], rows, notes, key="trace")


def paragraphs(doc: dict) -> list[tuple[str, str]]:
    sec = doc["trace"]
    lim = sec["limits"]
    out = []
    placed = [p for p in sec["groups"] if p["profiled"] and p["headroom_s"] is not None]
    if placed:
        top = placed[0]
        total_headroom = sum(p["headroom_s"] for p in placed)
        out.append(("Where the time is", (
            f"{len(placed)} groups were placed on this GPU's roofline; together they leave "
            f"{total_headroom * 1e3:.3f} ms of {sec['gpu_time_s'] * 1e3:.3f} ms on the table. The most is in "
            f"{short(top['group'])}: {top['group']['total_s'] * 1e3:.3f} ms over {plural(top['group']['launches'], 'launch')}, "
            f"bound by {top['binding_name']}" + (f" at {top['pct_of_attainable']:.0f}% of what that level allows"
                                                 if top["pct_of_attainable"] is not None else "") + ".")))
    honest = [f"{plural(lim['unprofiled_groups'], 'group')} ({100 * lim['unprofiled_share']:.1f}% of the GPU time) "
              "not profiled" if lim["unprofiled_groups"] else "every group was profiled"]
    if lim.get("unattributed_flops"):
        honest.append(f"{plural(len(lim['unattributed_flops']), 'profiled group')} used the tensor pipe with no "
                      "operator shapes to count their FLOPs, so they are placed by bytes alone")
    if lim.get("tracing_overhead") is not None:
        traced, untraced = lim["traced_step_s"] * 1e3, lim["untraced_step_s"] * 1e3
        honest.append(f"the traced step took {traced:.3f} ms against {untraced:.3f} ms untraced "
                      f"({100 * lim['tracing_overhead']:+.1f}%)")
    elif lim.get("traced_wall_s") and lim.get("untraced_wall_s"):
        honest.append(f"the whole command took {lim['traced_wall_s']:.1f} s traced against "
                      f"{lim['untraced_wall_s']:.1f} s untraced (the program reported no step time)")
    for note in (lim.get("profiler_note"), lim.get("budget_note")):
        if note:
            honest.append(note)
    out.append(("What was not measured", "; ".join(honest) + "."))
    return out


def merged_roofs(roofs: list[dict]) -> list[tuple[float, list[str], bool]]:
    """Roofs of one rate drawn once, with every name that shares it (BF16 and FP16 tensor, say)."""
    out: dict[float, tuple[list[str], bool]] = {}
    for r in roofs:
        names, measured = out.get(r["flops"], ([], False))
        out[r["flops"]] = ([*names, r["name"]], measured or r["measured"])
    return [(rate, names, m) for rate, (names, m) in sorted(out.items())]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "es" if word.endswith(("ch", "s")) else "s")


def family(p: dict) -> str:
    if not p["profiled"] or not p["flops"]:
        return "unplaced"
    if p["precision"] not in ("fp32", "fp64", "fp16"):
        return "tensor"
    return "memory" if p["binding"] in ("L1", "L2", "DRAM") else "compute"


def plot(doc: dict, path: str | Path) -> None:
    """The program's kernel groups on the hierarchical roofline: one bubble per placed group at its
    DRAM intensity and achieved rate, its area proportional to its GPU time; the roofs of the
    levels and the compute units the document carries."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    sec = doc["trace"]
    fig = Figure(figsize=(9, 6), dpi=110)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    pts = [p for p in sec["groups"] if family(p) != "unplaced" and p.get("achieved")]
    dram = [(p, p["level_bytes"].get("DRAM")) for p in pts]
    xs = [p["flops"] / b for p, b in dram if b]
    x_lo, x_hi = (min(xs + [0.1]) / 4, max(xs + [100]) * 4)
    import numpy as np  # noqa: PLC0415

    x = np.logspace(np.log10(x_lo), np.log10(x_hi), 200)
    peak = max((r["flops"] for r in sec["roofs"]), default=1e12)
    for lv in sec["levels"]:
        ax.plot(x, np.minimum(x * lv["bandwidth"], peak), "-" if lv["measured"] else "--", color="#555", lw=1)
        ax.annotate(f"{lv['name']} {lv['bandwidth'] / 1e12:.2f} TB/s", (x_lo * 1.2, x_lo * 1.2 * lv["bandwidth"]),
                    fontsize=7, color="#555", rotation=0)
    for rate, names, measured in merged_roofs(sec["roofs"]):
        ax.axhline(rate, ls="-" if measured else "--", color="#999", lw=0.8)
        ax.annotate(f"{' / '.join(names)} {rate / 1e12:.0f} TFLOP/s", (x_hi / 1.2, rate), ha="right",
                    va="bottom", fontsize=7, color="#777")
    total = sec["gpu_time_s"] or 1.0
    for (p, b) in dram:
        if not b:
            continue
        fam = family(p)
        ax.scatter([p["flops"] / b], [p["achieved"]], s=2000 * p["group"]["total_s"] / total + 15,
                   color=FAMILY_COLOURS[fam], alpha=0.5, edgecolors="black", linewidths=0.5)
    for fam, colour in FAMILY_COLOURS.items():
        if fam != "unplaced" and any(family(p) == fam for p in pts):
            ax.scatter([], [], color=colour, alpha=0.5, label={"tensor": "tensor cores", "compute": "CUDA-core bound",
                                                               "memory": "memory bound"}[fam])
    ax.set_xlabel("arithmetic intensity, FLOP per DRAM byte")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(f"{doc['device']['name']}: the program's kernels (area ∝ GPU time)", fontsize=10)
    if pts:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)


SECTION = register(Section(
    name="trace", heading="A program's kernels on this GPU's roofline", tables=lambda doc: [ranked_table(doc)],
    paragraphs=paragraphs, pictures=(Drawing("trace.png", "the program's kernels", plot),), order=20))
