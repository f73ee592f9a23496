"""A ceiling added from outside, as one record (rooflab.model.ceiling.Ceiling: its kernel file's
record, how its figure, witness and physical limit are read from the document, its section's
schema), a kernel file (data/kernels/fadd.cu) and one measurement, faked: its row of the bracketed
table in report.md, report.html and brackets.csv, the summary's tables in --format md and csv, the
roofs table (measured against published), `rooflab compare`'s ceilings, its roof in the roofline
pictures, flat and hierarchical (roofline.png/.svg, roofline-levels.png and report.html's; a bandwidth
ceiling as a slope), its section in --format json, the schema and `report --from` take it up with no
other edit. rooflab's own ceilings are records of the same registry: the roofs table's and `rooflab
compare`'s rows for them follow their records too."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflab import cli, lab, results
from rooflab.ceilings.record import KernelFile
from rooflab.model import ceiling
from rooflab.model.brackets import brackets
from rooflab.model.limits import Limit, compute_limit
from rooflab.schema.generate import section_schema
from rooflab.schema.typed import Record, field
from report_from import report_from

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden" / "h200_report_levels"  # the fixture's document rendered without the ceiling


@dataclass(frozen=True, kw_only=True)
class AddChains(KernelFile):
    """fadd.cu: FADD_PER_CHAIN_PER_ITER dependent adds per iteration on each of `acc` accumulators."""

    entry: str = "fadd_chain"
    acc: int = 8

    @property
    def kernel(self) -> str:
        return f"{self.entry}<{self.acc}>"

    def flops(self, threads: int, iters: int) -> float:
        return float(threads) * iters * self.define("FADD_PER_CHAIN_PER_ITER") * self.acc  # an add is one FLOP


FADD_CU = DATA / "kernels" / "fadd.cu"
ADD_CHAINS = AddChains(source=str(FADD_CU), defines=(("FADD_PER_CHAIN_PER_ITER", 16), ("FADD_BLOCK", 256)))


@dataclass(kw_only=True)
class FaddRun(Record):
    KEY = "test_fadd_run"

    kernel: str
    grid: int = field(required=True, minimum=1)
    block: int = field(required=True, minimum=1)
    iters: int = field(required=True, minimum=1)
    flops: float = field(required=True, exclusive_minimum=0)
    ms: float = field(required=True, exclusive_minimum=0)
    verified: bool


@dataclass(kw_only=True)
class Fadd(Record):
    KEY = "test_fadd"

    runs: list[FaddRun]


def best_add(doc: dict) -> ceiling.Figure | None:
    runs = [r for r in (doc.get("fadd") or {}).get("runs", []) if r["verified"]]
    if not runs:
        return None
    r = max(runs, key=lambda r: r["flops"] / r["ms"])
    return ceiling.Figure(r["flops"] / (r["ms"] * 1e-3), f"{r['kernel']}, grid {r['grid']:,}")


def fma_issue_rate(doc: dict) -> ceiling.Figure | None:
    """The FMA chains issue one instruction per lane per clock as the adds do, at 2 FLOP each."""
    rows = [r["tflops"] for r in (doc.get("flops") or {}).get("rows", []) if r.get("verified") and r.get("tflops")]
    return ceiling.Figure(max(rows) * 1e12 / 2, "FMA chains, 1 FLOP per instruction") if rows else None


def add_limit(doc: dict) -> Limit:
    fma = compute_limit(doc["device"], "fp32")
    return Limit(fma.value / 2, f"{fma.basis} ÷ 2 (an add is 1 FLOP)")


FADD = ceiling.Ceiling(name="FP32 add chains", unit="FLOP/s", level="compute", section="fadd", figure=best_add,
                       limit=add_limit, witness=fma_issue_rate, kernel=ADD_CHAINS, schema=section_schema(Fadd))


def measured(ms: float = 4.3) -> dict:
    """What the harness would return: one launch of a full wave, counted by the record's model."""
    grid, block, iters = 132 * 8, ADD_CHAINS.define("FADD_BLOCK"), 4096
    return {"runs": [{"kernel": ADD_CHAINS.kernel, "grid": grid, "block": block, "iters": iters,
                      "flops": ADD_CHAINS.flops(grid * block, iters), "ms": ms, "verified": True}]}


# what the table shows for it: witness 65.34 / 2, ceiling 1056 × 256 × 4096 × 16 × 8 FLOP in 4.3 ms,
# limit 66.91 / 2 TFLOP/s, 32.96 / 33.45 = 98.5 % of it; the roof is the ceiling
ROW_MD = ("| FP32 add chains | TFLOP/s | 32.7 | FMA chains, 1 FLOP per instruction | 33.0 | fadd_chain<8>, grid 1,056 "
          "| 33.5 | 132 SMs × 128 FP32 lanes × 2 FLOP/FMA × 1980 MHz ÷ 2 (an add is 1 FLOP) | 98.5% | 33.0 | ok |")
ROW_CSV = re.compile(r"^FP32 add chains,TFLOP/s,32\.669\d*,FMA chains 1 FLOP per instruction,32\.96\d*,"
                     r"fadd_chain<8> grid 1056,33\.45408,132 SMs x 128 FP32 lanes x 2 FLOP/FMA x 1980MHz ÷ 2 "
                     r"\(an add is 1 FLOP\),98\.5\d*,32\.96\d*,ok$", re.M)


# rooflab's own rows of the recorded document, in the table's order
ROOFLABS = ["HBM copy (read + write)", "HBM read", "HBM write", "L2 read, whole L2", "L2 read, one partition",
            "HBM read, swept beyond the L2", "shared memory", "FP64 CUDA cores", "FP16 CUDA cores", "FP32 CUDA cores"]


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr(ceiling, "CEILINGS", dict(ceiling.CEILINGS))
    monkeypatch.setattr(results, "SECTION_SCHEMAS", dict(results.SECTION_SCHEMAS))
    ceiling.register(FADD)  # the one step: the bracketed table and the schema follow
    monkeypatch.setitem(lab.MEASUREMENTS, "fadd", lambda cfg: lambda dev, say: measured())
    doc = json.loads((DATA / "h200_report_levels.json").read_text(encoding="utf-8"))
    doc["fadd"] = measured()
    return doc


def summary(md: str) -> str:
    return md.split("\n## ")[1]


def test_its_kernel_file_is_built_from_its_record():
    guarded = dict(re.findall(r"^#ifndef (\w+)\n#define \1 (\d+)\n#endif$", FADD_CU.read_text(), flags=re.M))
    assert {k: int(v) for k, v in guarded.items()} == dict(ADD_CHAINS.defines)
    assert ADD_CHAINS.options == ("-DFADD_PER_CHAIN_PER_ITER=16", "-DFADD_BLOCK=256")
    assert f"template __global__ void {ADD_CHAINS.kernel}(" in FADD_CU.read_text()


def test_register_brackets_it_and_puts_its_schema_in_the_results_schema(monkeypatch):
    monkeypatch.setattr(ceiling, "CEILINGS", {})
    monkeypatch.setattr(results, "SECTION_SCHEMAS", {})
    assert ceiling.register(FADD) is FADD
    assert ceiling.CEILINGS == {"FP32 add chains": FADD}
    assert results.schema()["properties"]["fadd"] == FADD.schema
    doc = {"device": {"sm_count": 132, "sm_clock_max_mhz": 1980.0, "cc": [9, 0]}, "fadd": measured()}
    assert [b.name for b in brackets(doc)] == ["FP32 add chains"]  # rooflab's own are in the registry too


def test_its_bracket_comes_from_its_section(registered):
    *own, added = brackets(registered)
    assert added.name == "FP32 add chains" and [b.name for b in own] == ROOFLABS  # after rooflab's own
    assert added.ceiling == pytest.approx(ADD_CHAINS.flops(1056 * 256, 4096) / 4.3e-3)
    assert added.witness == pytest.approx(65.33866812943826e12 / 2)
    assert added.limit.value == pytest.approx(66.90816e12 / 2)
    assert added.roof == added.ceiling and added.error is None and added.note is None
    del registered["fadd"]
    assert brackets(registered)[-1].name == "FP32 add chains"  # the witness alone still brackets the limit
    assert brackets(registered)[-1].ceiling_what == "none"


def test_its_order_places_its_row(registered):
    ceiling.register(replace(FADD, order=2))  # among rooflab's own: after the row of the same order
    assert [b.name for b in brackets(registered)][1:4] == ["HBM read", "FP32 add chains", "HBM write"]


def test_a_figure_above_its_limit_is_no_roof(registered):
    registered["fadd"] = measured(ms=4.0)  # 35.4 TFLOP/s: faster than the lanes can add
    added = brackets(registered)[-1]
    assert added.roof is None and added.error.startswith("faster than the units at the maximum clock")


def test_the_schema_validates_its_section(registered):
    assert results.schema_problem(registered) is None
    registered["fadd"]["runs"][0]["ms"] = "quick"
    assert results.schema_problem(registered) == "fadd.runs[0].ms: 'quick' is not of type 'number'"


def test_every_output_carries_it(registered, tmp_path):
    written = lab.write_outputs(registered, str(tmp_path))
    assert ROW_MD in summary((tmp_path / "report.md").read_text(encoding="utf-8"))
    assert ROW_CSV.search((tmp_path / "brackets.csv").read_text(encoding="utf-8"))
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["fadd"] == measured()
    if "report.html" in written:
        page = (tmp_path / "report.html").read_text(encoding="utf-8")
        assert "<td>fadd_chain&lt;8&gt;, grid 1,056</td>" in page and "FP32 add chains" in page


def test_a_commands_format_shows_it(registered, tmp_path):
    from rooflab.cli.output import emit
    from rooflab.report.sections import shown

    emit(registered, *shown(registered, "summary"), "md", str(tmp_path / "summary.md"))
    assert ROW_MD in (tmp_path / "summary.md").read_text(encoding="utf-8")
    emit(registered, *shown(registered, "summary"), "csv", str(tmp_path / "summary.csv"))
    assert ROW_CSV.search((tmp_path / "summary.csv").read_text(encoding="utf-8"))
    src = tmp_path / "doc.json"
    src.write_text(results.dumps(registered), encoding="utf-8")
    r = CliRunner().invoke(cli.cli, ["roofline", "--from", str(src), "--format", "json", "--out",
                                     str(tmp_path / "r.png")], catch_exceptions=False)
    assert r.exit_code == 0 and json.loads(r.stdout)["fadd"] == measured()


def _csv(path: Path) -> list[list[str]]:
    return list(csv.reader(path.read_text(encoding="utf-8").splitlines()))


def test_the_roofs_table_sets_its_figure_against_its_limit(registered, tmp_path):
    written = lab.write_outputs(registered, str(tmp_path / "with"))
    *own, added = _csv(tmp_path / "with" / "roofs.csv")
    assert own == _csv(GOLDEN / "csv" / "roofs.csv")  # rooflab's own rows as recorded, then its row
    name, measured_t, published, unit, pct, how = added
    assert (name, unit, how) == ("FP32 add chains", "TFLOP/s", "fadd_chain<8> grid 1056")  # as brackets.csv has it
    assert float(measured_t) == pytest.approx(ADD_CHAINS.flops(1056 * 256, 4096) / 4.3e-3 / 1e12, rel=1e-12)
    assert float(published) == pytest.approx(66.90816 / 2, rel=1e-12)  # its physical limit: the lanes ÷ 2
    assert float(pct) == pytest.approx(100 * 32.96 / 33.45, abs=0.01)
    if "report.html" in written:
        page = (tmp_path / "with" / "report.html").read_text(encoding="utf-8")
        assert "<td>32.96</td><td>33.45</td><td>TFLOP/s</td><td>98.5%</td>" in page
    del registered["fadd"]  # a witness alone is no measured roof
    lab.write_outputs(registered, str(tmp_path / "without"))
    assert _csv(tmp_path / "without" / "roofs.csv") == own


def test_rooflabs_own_rows_come_from_their_records(registered, tmp_path):
    """The roofs table and `rooflab compare` write no row of their own: a record of rooflab's replaced in
    the registry changes both, and a tensor core's row sets its figure against the spec table's rate."""
    from rooflab.report.summary import roofs_table

    table = roofs_table(registered)
    refused = "HBM read, swept beyond the L2"  # 1.044× the pin rate: no roof, named in a note
    assert [r[0] for r in table.rows] == [n for n in ROOFLABS if n != refused] + ["FP32 add chains"]
    assert any(refused in n and "no roof" in n for n in table.notes)
    toy = ceiling.Figure(1.5e12, "write_toy")
    ceiling.register(replace(ceiling.CEILINGS["HBM write"], figure=lambda doc: toy))
    row = next(r for r in roofs_table(registered).rows if r[0] == "HBM write")
    assert (row[1].value, row[3], row[5]) == (1.5, "TB/s", "write_toy")
    assert row[2].value == pytest.approx(4.814304)  # its physical limit: the pin rate
    rows = {r[0]: r for r in json.loads(_compare(tmp_path, registered, registered))["tables"][-1]["rows"]}
    assert rows["HBM write"] == ["HBM write", "GB/s", pytest.approx(1500.0), pytest.approx(1500.0), pytest.approx(1.0)]
    everything = json.loads((DATA / "golden" / "everything.json").read_text(encoding="utf-8"))
    bf16 = next(r for r in roofs_table(everything).rows if r[0] == "BF16 tensor cores")
    limit = next(b for b in brackets(everything) if b.name == "BF16 tensor cores").limit.value
    assert bf16[2].value == pytest.approx(989.0) and limit > 1.05 * 989e12  # published: not the clocks' limit


def test_compare_rows_keep_the_registry_order(tmp_path):
    """Rows only one document measured sit where the registry puts them, whichever side has them."""
    plain = results.load(DATA / "h200_results.json")  # no memory section, no read or write directions
    levels = json.loads((DATA / "h200_report_levels.json").read_text(encoding="utf-8"))
    order = ["FP32 peak (P1)", "HBM peak (P3)", "HBM copy (read + write)", "HBM read", "HBM write",
             "L2 read, whole L2", "L2 read, one partition", "HBM read, swept beyond the L2", "shared memory",
             "FP64 CUDA cores", "FP16 CUDA cores", "FP32 CUDA cores"]
    for a, b in ((plain, levels), (levels, plain)):
        rows = json.loads(_compare(tmp_path, a, b))["tables"][-1]["rows"]
        assert [r[0] for r in rows] == order
        both = {"FP32 peak (P1)", "HBM peak (P3)", "HBM copy (read + write)", "FP32 CUDA cores"}
        assert {r[0] for r in rows if r[-1] is None} == set(order) - both


def _compare(tmp_path: Path, a: dict, b: dict, fmt: str = "json") -> str:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(results.dumps(a), encoding="utf-8")
    pb.write_text(results.dumps(b), encoding="utf-8")
    r = CliRunner().invoke(cli.cli, ["compare", str(pa), str(pb), "--format", fmt], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.stdout


def test_compare_sets_it_beside_the_other_run(registered, tmp_path):
    slower = json.loads(results.dumps(registered))
    slower["fadd"] = measured(ms=8.6)  # half the rate
    ceilings = json.loads(_compare(tmp_path, registered, slower))["tables"][-1]
    assert ceilings["title"] == "Ceilings, A vs B"
    *own, added = ceilings["rows"]
    assert added == ["FP32 add chains", "TFLOP/s", pytest.approx(32.96, abs=0.005),
                     pytest.approx(16.48, abs=0.005), pytest.approx(0.5, rel=1e-12)]
    plain = {k: v for k, v in registered.items() if k != "fadd"}
    assert own == json.loads(_compare(tmp_path, plain, plain))["tables"][-1]["rows"]  # rooflab's own, untouched
    assert json.loads(_compare(tmp_path, registered, plain))["tables"][-1]["rows"][-1] == \
        ["FP32 add chains", "TFLOP/s", pytest.approx(32.96, abs=0.005), None, None]  # B did not measure it
    assert "| FP32 add chains | TFLOP/s | 33.0 | 16.5 | 0.500× |" in _compare(tmp_path, registered, slower, "md")


LABEL = "FP32 add chains 33 TFLOP/s"  # its record's name and its figure, 32.96 TFLOP/s


def test_the_roofline_pictures_draw_it(registered, tmp_path):
    from rooflab.model import placement
    from rooflab.report.collisions import collisions
    from rooflab.report.picture import plot

    rl = placement.roofline(registered)
    (added,) = rl.added_ceilings
    assert (added.name, added.unit, added.what) == ("FP32 add chains", "FLOP/s", "fadd_chain<8>, grid 1,056")
    assert added.value == pytest.approx(ADD_CHAINS.flops(1056 * 256, 4096) / 4.3e-3)
    fig = plot(rl)
    ax = fig.axes[0]
    assert LABEL in [t.get_text() for t in ax.texts]
    assert "FP32 add chains: fadd_chain<8>, grid 1,056" in [t.get_text() for t in ax.get_legend().get_texts()]
    y = added.value / 1e12
    (roof,) = [ln for ln in ax.lines if list(ln.get_ydata()) == [y, y]]
    assert roof.get_linestyle() == "-"  # solid: measured
    assert roof.get_xdata()[0] == pytest.approx(added.value / rl.bandwidth)  # from its ridge on the HBM slope
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))
    written = lab.write_outputs(registered, str(tmp_path))
    assert LABEL in (tmp_path / "roofline.svg").read_text(encoding="utf-8")  # SVG text stays text
    if "report.html" in written:  # the interactive twin: a trace named by its record
        assert '"name":"FP32 add chains 33 TFLOP' in (tmp_path / "report.html").read_text(encoding="utf-8")
    del registered["fadd"]  # its witness alone is no measured roof
    assert placement.roofline(registered).added_ceilings == []
    assert LABEL not in [t.get_text() for t in plot(placement.roofline(registered)).axes[0].texts]


def test_a_bandwidth_ceiling_is_a_slope_labelled_along_it(registered):
    from rooflab.model import placement
    from rooflab.report.collisions import collisions
    from rooflab.report.picture import plot
    from rooflab.report.styles import ADDED_COLOURS

    ceiling.register(_toy_l2())
    rl = placement.roofline(registered)
    assert [(c.name, c.unit) for c in rl.added_ceilings] == [("FP32 add chains", "FLOP/s"), ("toy L2 reads", "B/s")]
    fig = plot(rl)
    ax = fig.axes[0]
    (slope,) = [ln for ln in ax.lines if ln.get_color() == ADDED_COLOURS[1]]
    xs, ys = slope.get_xdata(), slope.get_ydata()
    assert slope.get_linestyle() == "-" and ys / xs == pytest.approx(9.1)  # TFLOP/s per FLOP/B: 9.1 TB/s
    (label,) = [t for t in ax.texts if t.get_text() == "toy L2 reads 9.10 TB/s"]
    assert 20 < label.get_rotation() < 70  # along the slope
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))


def _toy_l2() -> ceiling.Ceiling:
    return ceiling.Ceiling(name="toy L2 reads", unit="B/s", level="L2", section="fadd",
                           figure=lambda doc: ceiling.Figure(9.1e12, "l2_toy, 48 MiB"),
                           limit=lambda doc: Limit(12e12, "a toy L2's clock × width"))


def test_the_hierarchical_picture_draws_it(registered, tmp_path):
    from rooflab.model import placement
    from rooflab.report.collisions import collisions
    from rooflab.report.hierarchy_picture import plot_levels
    from rooflab.report.styles import ADDED_COLOURS

    h = placement.hierarchical_roofline(registered)
    assert h.added_ceilings == placement.roofline(registered).added_ceilings  # the flat picture's, as drawn
    (added,) = h.added_ceilings
    fig = plot_levels(registered, tmp_path / "levels.png")
    assert len(fig.axes) == 2  # one panel per family: each draws it
    fastest = max(lv.bandwidth for lv in h.levels)
    for ax in fig.axes:
        assert LABEL in [t.get_text() for t in ax.texts]
        assert "FP32 add chains: fadd_chain<8>, grid 1,056" in [t.get_text() for t in ax.get_legend().get_texts()]
        y = added.value / 1e12
        (roof,) = [ln for ln in ax.lines if list(ln.get_ydata()) == [y, y]]
        assert roof.get_linestyle() == "-" and roof.get_color() == ADDED_COLOURS[0]  # solid: measured
        assert roof.get_xdata()[0] == pytest.approx(added.value / fastest)  # from where the fastest slope meets it
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))
    plot_levels(registered, tmp_path / "levels.svg")
    assert LABEL in (tmp_path / "levels.svg").read_text(encoding="utf-8")  # SVG text stays text
    written = lab.write_outputs(registered, str(tmp_path / "rep"))
    assert "roofline-levels.png" in written
    if "report.html" in written:  # the interactive twin: a trace named by its record in both figures
        page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
        assert page.count('"name":"FP32 add chains 33 TFLOP') == 2
    del registered["fadd"]  # its witness alone is no measured roof
    assert placement.hierarchical_roofline(registered).added_ceilings == []
    assert LABEL not in [t.get_text() for ax in plot_levels(registered, tmp_path / "x.png").axes for t in ax.texts]


def test_the_interactive_hierarchy_carries_it(registered):
    pytest.importorskip("plotly")
    from rooflab.model import placement
    from rooflab.report.interactive import levels_figure

    ceiling.register(_toy_l2())
    h = placement.hierarchical_roofline(registered)
    traces = {t.name: t for t in levels_figure(registered, h).data}
    roof = traces["FP32 add chains 33 TFLOP/s (fadd_chain<8>, grid 1,056)"]
    slope = traces["toy L2 reads 9.10 TB/s (l2_toy, 48 MiB)"]
    assert list(roof.y) == [pytest.approx(32.96, abs=0.005)] * 2 and roof.line.dash == "dot"  # flat, measured
    assert [y / x for x, y in zip(slope.x, slope.y)] == [pytest.approx(9.1, rel=1e-3)] * 2 and slope.line.dash == "dot"
    ceiling.CEILINGS.pop("toy L2 reads")
    del registered["fadd"]
    names = [t.name for t in levels_figure(registered, placement.hierarchical_roofline(registered)).data]
    assert not [n for n in names if "FP32 add chains" in n or "toy L2" in n]


def test_a_bandwidth_ceiling_is_a_slope_in_the_hierarchical_picture(registered, tmp_path):
    from rooflab.report.collisions import collisions
    from rooflab.report.hierarchy_picture import plot_levels
    from rooflab.report.styles import ADDED_COLOURS

    ceiling.register(_toy_l2())
    fig = plot_levels(registered, tmp_path / "levels.png")
    for ax in fig.axes:
        (slope,) = [ln for ln in ax.lines if ln.get_color() == ADDED_COLOURS[1]]
        xs, ys = slope.get_xdata(), slope.get_ydata()
        assert slope.get_linestyle() == "-" and ys / xs == pytest.approx(9.1)  # TFLOP/s per FLOP/B: 9.1 TB/s
        (label,) = [t for t in ax.texts if t.get_text() == "toy L2 reads 9.10 TB/s"]
        assert 20 < label.get_rotation() < 70  # along the slope
        assert "toy L2 reads: l2_toy, 48 MiB" in [t.get_text() for t in ax.get_legend().get_texts()]
    found = collisions(fig)
    assert not found, "\n".join(map(str, found))


def test_report_from_renders_it(registered, tmp_path):
    assert ROW_MD in summary(report_from(registered, tmp_path))
    assert ROW_CSV.search((tmp_path / "rep" / "brackets.csv").read_text(encoding="utf-8"))


def test_report_from_refuses_its_section_when_wrong(registered, tmp_path, capsys):
    registered["fadd"]["runs"][0]["grid"] = 0
    src = tmp_path / "doc.json"
    src.write_text(results.dumps(registered), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--from", str(src), "--out", str(tmp_path / "rep")])
    assert exc.value.code == 2 and "fadd.runs[0].grid: 0 is not at least 1" in capsys.readouterr().err
    assert not (tmp_path / "rep" / "report.md").exists()


def test_the_report_measures_it(registered):
    sections = lab.report_sections(lab.ReportConfig(profile=False))
    assert list(sections)[-1] == "fadd" and sections["fadd"](None, None) == measured()
