"""report.md, report.html, results.json and the CSVs, rendered from a results document alone
(so `rooflab report --from results.json` needs no GPU): a title and the device line, then each
section the document holds, in the registered order (rooflab.report.sections: the built-in ones)."""

from __future__ import annotations

from rooflab import results
from rooflab.model import placement
from rooflab.model.roofline import Roofline
from rooflab.report import html, section
from rooflab.report import sections as _sections  # noqa: F401 (registers the built-in sections)
from rooflab.report.blocks import Block, Heading, Text, to_markdown
from rooflab.report.table import Table
from rooflab.report.telemetry import warnings


def roofline_for(doc: dict) -> Roofline:
    return placement.roofline(doc)


def all_tables(doc: dict) -> list[Table]:
    """Every table of the report (a CSV each), section by section."""
    return section.tables(doc)


def _title(doc: dict) -> list[Block]:
    """The heading and what ran where; the warnings, or that nothing was measured."""
    dev = doc["device"]
    created = f"Created {doc['created']} by rooflab {doc['rooflab_version']} (`{doc['command']}`)."
    out: list[Block] = [Heading(1, f"rooflab report — {dev['name']}")]
    if dev.get("spec_only"):
        return out + [Text(created), Text(
            f"**Nothing was measured.** This is the spec-only report: peaks, tensor-core arithmetic, ridge points "
            f"and the theoretical roofline of the {dev['name']} from the published spec table. Run `rooflab report` "
            "on a machine with an NVIDIA GPU to measure.", quote=True)]
    out.append(Text(f"{created} Device: {dev['name']}, {dev['sm_count']} SMs, SM clock max "
                    f"{dev['sm_clock_max_mhz']:.0f} MHz, memory {dev['mem_clock_max_mhz']:.0f} MHz × "
                    f"{dev['bus_width_bits']} bit; driver {dev.get('driver_version')}, CUDA runtime "
                    f"{dev.get('cuda_runtime_version')}, CuPy {dev.get('cupy_version')}."))
    return out + [Text(f"⚠ {w}", quote=True) for w in warnings(doc)]


def blocks(doc: dict, tables: list[Table], rl: Roofline | None = None) -> list[Block]:
    """The report, in reading order: the title, then each section the document holds."""
    view = section.View(doc, {t.key: t for t in tables}, rl if rl is not None else roofline_for(doc))
    return _title(doc) + [b for sec in section.present(doc) for b in sec.report_blocks(view)]


def markdown(doc: dict, tables: list[Table], rl: Roofline | None = None) -> str:
    return to_markdown(blocks(doc, tables, rl))


def files(doc: dict, rl: Roofline | None = None) -> dict[str, str]:
    """Every text output of a report, by file name."""
    tables = all_tables(doc)
    parts = blocks(doc, tables, rl)
    out = {"report.md": to_markdown(parts), "results.json": results.dumps(doc)}
    if html.unavailable() is None:  # without Plotly the CLI says report.html was left out
        out["report.html"] = html.render(doc, parts)
    for t in tables:
        if t.key:
            out[f"{t.key}.csv"] = t.to_csv()
    return out
