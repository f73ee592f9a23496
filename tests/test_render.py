"""Tables and paragraphs rendered from a results document recorded on an H200
(G2, G4, G9, G10, P3, P4, P6, P7, P8), and the results file format itself.
No GPU needed: everything here is rendered from saved data."""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path

import pytest

from rooflab import results
from rooflab.errors import UsageError
from rooflab.model.ceilings import summarize
from rooflab.report import ceilings as render_ceilings
from rooflab.report import climb, explain_ceilings
from rooflab.report import gemm as render_gemm
from rooflab.report.table import Table

DATA = Path(__file__).parent / "data"
LADDER = ["naive", "coalesced", "tiled16", "tiled32", "cublas"]
COLS = ["N", "kernel", "ms", "mean ms", "min ms", "GFLOP/s", "% peak", "roof", "vs naive", "check", "status"]


@pytest.fixture(scope="module")
def recorded() -> dict:
    return results.load(DATA / "h200_results.json")


@pytest.fixture
def doc(recorded) -> dict:
    return copy.deepcopy(recorded)


def median_ms(doc: dict, kernel: str) -> float:
    return next(r for r in doc["gemm"]["rungs"] if r["kernel"] == kernel)["timing"]["median_ms"]


def rung(doc: dict, kernel: str) -> dict:
    return next(r for r in doc["gemm"]["rungs"] if r["kernel"] == kernel)


def col(table: Table, name: str) -> list:
    i = table.columns.index(name)
    return [row[i] for row in table.rows]


def number(text: str) -> float:
    return float(text.replace(",", "").rstrip("%×"))


def fail_rung(doc: dict, kernel: str, *, keep_timing: bool = False) -> dict:
    """Make one rung fail its timed-size normwise check, as gemm.run_rung records it."""
    rec = rung(doc, kernel)
    checks = [c for c in rec["checks"] if c["name"] != "deterministic"]
    checks[-1] = {**checks[-1], "value": 0.25, "passed": False}
    rec["checks"] = checks
    rec["passed"] = False
    if not keep_timing:
        rec["timing"] = None
    return rec


# ---------------------------------------------------------------- GEMM ladder


def test_gemm_table_ladder(doc):
    t = render_gemm.gemm_table(doc)
    assert t.columns == COLS
    assert len(t.rows) == 5
    assert [r["kernel"] for r in doc["gemm"]["rungs"]] == LADDER
    titles = col(t, "kernel")
    assert titles == [r["title"] for r in doc["gemm"]["rungs"]]
    for name, title in zip(LADDER[:2], titles[:2], strict=True):
        assert title.startswith(name)
    assert "16" in titles[2] and "32" in titles[3] and "cuBLAS" in titles[4]
    assert col(t, "status") == ["passed"] * 5
    assert all(v and v.endswith("%") for v in col(t, "% peak"))
    assert set(col(t, "roof")) == {"FP32 66.9"}
    assert set(col(t, "N")) == {"4096"}


def test_each_rung_is_judged_against_its_own_roof():
    """The recorded H200 run: % peak of a tensor rung is of its tensor roof, named beside it."""
    full = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    t = render_gemm.gemm_table(full)
    roof = dict(zip(col(t, "kernel"), col(t, "roof"), strict=True))
    pct = dict(zip(col(t, "kernel"), col(t, "% peak"), strict=True))
    by = {r["kernel"]: r["title"] for r in full["gemm"]["rungs"]}
    assert roof[by["cublas"]] == "FP32 66.9"
    assert roof[by["cublas_tf32"]].startswith("TF32 49") and roof[by["cublas_bf16"]].startswith("BF16 98")
    assert roof[by["wgmma_3xtf32"]].startswith("TF32÷3 16")
    # cuBLAS BF16 at ~760 TFLOP/s is ~77% of the BF16 roof, not 1100% of FP32's
    assert 60 < float(pct[by["cublas_bf16"]].rstrip("%")) < 90


def test_gemm_table_numbers_from_the_file(doc):
    t = render_gemm.gemm_table(doc)
    flops = 2 * 4096**3
    peak = doc["device"]["fp32_peak_flops"]
    naive = median_ms(doc, "naive")
    for row, kernel in zip(t.rows, LADDER, strict=True):
        ms = median_ms(doc, kernel)
        gflops = flops / (ms * 1e-3) / 1e9
        assert row[COLS.index("ms")] == f"{ms:.3f}"
        assert number(row[COLS.index("GFLOP/s")]) == pytest.approx(gflops, abs=0.5)
        assert number(row[COLS.index("% peak")]) == pytest.approx(100 * gflops * 1e9 / peak, abs=0.05)
        assert number(row[COLS.index("vs naive")]) == pytest.approx(naive / ms, abs=0.05)
    cublas = t.rows[LADDER.index("cublas")]
    assert number(cublas[COLS.index("GFLOP/s")]) > 45_000
    assert any("66.9 TFLOP/s" in n for n in t.notes)


def test_ratio_table(doc):
    t = render_gemm.ratio_table(doc)
    got = dict(t.rows)
    ms = {k: median_ms(doc, k) for k in LADDER}
    expect = {
        "time_naive / time_coalesced (G6)": ms["naive"] / ms["coalesced"],
        "time_coalesced / time_tiled(TILE=32)": ms["coalesced"] / ms["tiled32"],
        "time_tiled(16) / time_tiled(32) (G7)": ms["tiled16"] / ms["tiled32"],
        "time_tiled(32) / time_cuBLAS (G8)": ms["tiled32"] / ms["cublas"],
        "time_naive / time_cuBLAS": ms["naive"] / ms["cublas"],
    }
    assert set(got) == set(expect)
    for label, value in expect.items():
        assert got[label] == f"{value:.2f}×"
    assert number(got["time_naive / time_coalesced (G6)"]) > 1


def test_check_table(doc):
    t = render_gemm.check_table(doc)
    assert t.columns == ["kernel", "check", "result"]
    seed_lines = [r for r in t.rows if r[1].startswith("seed max-rel")]
    assert [r[0] for r in seed_lines] == LADDER
    for _kernel, line, result in seed_lines:
        assert "max relative error = " in line
        assert "(tolerance 1.0e-03)" in line
        assert result == "pass"
    assert all(r[2] == "pass" for r in t.rows)
    assert any("normwise error = " in r[1] and "uniform [-1,1)" in r[1] for r in t.rows)


def test_gemm_transitions(doc):
    paras = climb.transitions(doc)
    assert [title for title, _ in paras] == ["naive → coalesced", "coalesced → tiled", "TILE=16 vs TILE=32",
                                             "tiled → cuBLAS"]
    ms = {k: median_ms(doc, k) for k in LADDER}
    text = dict(paras)
    first = text["naive → coalesced"]
    assert f"{ms['naive']:.1f}" in first and f"{ms['coalesced']:.1f}" in first
    assert f"{ms['naive'] / ms['coalesced']:.1f}×" in first
    assert f"{ms['coalesced'] / ms['tiled32']:.2f}×" in text["coalesced → tiled"]
    assert f"{ms['tiled32']:.1f}" in text["coalesced → tiled"]
    third = text["TILE=16 vs TILE=32"]
    assert f"{ms['tiled16']:.2f}" in third and f"{ms['tiled32']:.2f}" in third
    last = text["tiled → cuBLAS"]
    assert f"{ms['cublas']:.3f}" in last
    pct = render_gemm.gemm_table(doc).rows[LADDER.index("cublas")][COLS.index("% peak")]
    assert pct in last
    assert render_gemm.paragraphs(doc) == paras


def test_gemm_transitions_follow_the_data(doc):
    """No canned figures: change the measurements and the paragraphs change with them."""
    before = dict(climb.transitions(doc))
    for kernel, factor in (("naive", 1.5), ("coalesced", 0.5), ("tiled16", 0.5), ("tiled32", 3.0),
                           ("cublas", 2.0)):
        rung(doc, kernel)["timing"]["median_ms"] *= factor
    after = dict(climb.transitions(doc))
    ms = {k: median_ms(doc, k) for k in LADDER}
    assert f"{ms['naive']:.1f} → {ms['coalesced']:.1f} ms" in after["naive → coalesced"]
    assert f"{ms['coalesced']:.1f} → {ms['tiled32']:.1f} ms" in after["coalesced → tiled"]
    assert f"TILE=16 took {ms['tiled16']:.2f} ms and TILE=32 {ms['tiled32']:.2f} ms" in after["TILE=16 vs TILE=32"]
    assert "TILE=16 was" in after["TILE=16 vs TILE=32"]  # the faster one is named from the data
    assert f"{ms['tiled32']:.2f} → {ms['cublas']:.3f} ms" in after["tiled → cuBLAS"]
    for title, text in before.items():
        assert text != after[title]


@pytest.mark.parametrize("keep_timing", [False, True], ids=["timing-none", "timing-left-in"])
def test_failed_rung_gets_no_throughput(doc, keep_timing):
    """G2: no throughput is ever reported for a kernel that failed its check."""
    fail_rung(doc, "tiled32", keep_timing=keep_timing)
    t = render_gemm.gemm_table(doc)
    row = t.rows[LADDER.index("tiled32")]
    assert row[COLS.index("status")].startswith("FAILED")
    assert "normwise error = 2.500e-01" in row[COLS.index("status")]
    for c in ("ms", "mean ms", "min ms", "GFLOP/s", "% peak", "vs naive"):
        assert row[COLS.index(c)] is None, c
    md = t.to_markdown()
    md_row = next(line for line in md.splitlines() if "TILE=32" in line)
    cells = [c.strip() for c in md_row.strip("|").split("|")]
    assert cells[COLS.index("ms")] == cells[COLS.index("GFLOP/s")] == cells[COLS.index("% peak")] == "—"
    assert "FAILED" in cells[COLS.index("status")]
    # the other rungs are untouched
    assert [s for i, s in enumerate(col(t, "status")) if i != LADDER.index("tiled32")] == ["passed"] * 4
    # no ratio and no paragraph quotes the failed rung's time
    r = dict(render_gemm.ratio_table(doc).rows)
    assert r["time_tiled(16) / time_tiled(32) (G7)"] is None
    assert r["time_tiled(32) / time_cuBLAS (G8)"] is None
    assert r["time_naive / time_coalesced (G6)"] is not None
    titles = [title for title, _ in climb.transitions(doc)]
    assert titles == ["naive → coalesced"]
    assert "FAIL" in [row[2] for row in render_gemm.check_table(doc).rows]


def test_kernel_error_rung(doc):
    rec = rung(doc, "naive")
    rec.update(passed=False, timing=None, checks=[],
               error="naive: cudaStreamSynchronize (after launch) failed: an illegal memory access was encountered")
    t = render_gemm.gemm_table(doc)
    row = t.rows[0]
    assert row[COLS.index("status")] == f"FAILED: {rec['error']}"
    assert row[COLS.index("GFLOP/s")] is None
    assert col(t, "vs naive")[1:] == [None] * 4  # no baseline, no speedups


# ---------------------------------------------------------------- ceilings


def test_bandwidth_tables(doc):
    head, sweep = render_ceilings.bandwidth_tables(doc)
    s = summarize(doc["bandwidth"])
    memcpy, best = s["memcpy_gbs"], s["best"]
    assert best["gbs"] >= 0.99 * memcpy
    assert head.rows[0][0] == "cudaMemcpy device-to-device"
    assert head.rows[0][1] == f"{memcpy:,.0f}"
    assert head.rows[1][0].startswith(f"best kernel: {best['kernel']}")
    assert head.rows[1][1] == f"{best['gbs']:,.0f}"
    assert number(head.rows[1][3]) >= 0.99
    assert number(head.rows[1][2]) == pytest.approx(100 * best["gbs"] / s["peak_gbs"], abs=0.05)
    assert len(sweep.rows) == len(doc["bandwidth"]["sweep"])
    assert set(col(sweep, "verified")) == {"yes"}
    assert {r[0] for r in sweep.rows} == {"copy_scalar", "copy_float4", "copy_float4_unroll<4>"}


def test_bandwidth_tables_4gib_fixture():
    d = results.load(DATA / "h200_bandwidth_4gib.json")
    head, sweep = render_ceilings.bandwidth_tables(d)
    s = summarize(d["bandwidth"])
    assert head.rows[1][1] == f"{s['best']['gbs']:,.0f}"
    assert sweep.rows
    assert explain_ceilings.bandwidth_paragraphs(d)


def test_unverified_copy_gets_no_bandwidth(doc):
    row = doc["bandwidth"]["sweep"][0]
    row["runs"] = [{"label": row["kernel"], "verified": False, "timing": None} for _ in row["runs"]]
    _head, sweep = render_ceilings.bandwidth_tables(doc)
    bad = [r for r in sweep.rows if r[-1] == "NO"]
    assert len(bad) == 1
    assert bad[0][3] is None and bad[0][4] is None and bad[0][5] is None and bad[0][6] is None


def test_flops_table(doc):
    t = render_ceilings.flops_table(doc)
    assert len(t.rows) == len(doc["flops"]["rows"])
    acc, pct = col(t, "accumulators"), col(t, "% peak")
    eight = [number(p) for a, p in zip(acc, pct, strict=True) if a == 8]
    assert max(eight) >= 97
    one = [number(p) for a, p in zip(acc, pct, strict=True) if a == 1]
    assert min(one) < 50  # one dependent chain at one warp per scheduler idles the FMA pipe
    assert set(col(t, "verified")) == {"yes"}


def test_unverified_fma_gets_no_flops(doc):
    r = doc["flops"]["rows"][0]
    r.update(verified=False, timing=None)
    r.pop("tflops"), r.pop("pct_peak")
    row = render_ceilings.flops_table(doc).rows[0]
    assert row[4] is None and row[5] is None and row[6] is None and row[7] == "NO"


def test_profile_table(doc):
    t = render_ceilings.profile_table(doc)
    v = dict(zip(col(t, "kernel"), col(t, "verdict"), strict=True))
    assert v["copy"] == "memory-bound"
    assert v["fma"] == "compute-bound"
    assert v["cublas"] == "compute-bound"
    assert set(LADDER) <= set(v)
    dram = dict(zip(col(t, "kernel"), col(t, "DRAM %"), strict=True))
    assert number(dram["copy"]) == pytest.approx(88.6, abs=0.1)


def test_ceiling_paragraphs_use_the_measurements(doc):
    s = summarize(doc["bandwidth"])
    (title, text), = explain_ceilings.bandwidth_paragraphs(doc)
    assert "P7" in title
    assert f"{s['best']['gbs']:,.0f} GB/s" in text
    assert f"{s['memcpy_gbs']:,.0f} GB/s" in text
    assert f"{s['peak_gbs']:,.0f} GB/s" in text
    assert f"{100 * s['best']['gbs'] / s['peak_gbs']:.1f}%" in text

    rows = [r for r in doc["flops"]["rows"] if r.get("pct_peak")]
    best = max(rows, key=lambda r: r["pct_peak"])
    (title, text), = explain_ceilings.flops_paragraphs(doc)
    assert "P7" in title
    assert f"{best['tflops']:.2f} TFLOP/s" in text
    assert f"{best['pct_peak']:.1f}%" in text

    # and they move with the data
    for r in doc["flops"]["rows"]:
        if r.get("pct_peak"):
            r["pct_peak"] /= 2
            r["tflops"] /= 2
    (_, text2), = explain_ceilings.flops_paragraphs(doc)
    assert f"{best['tflops']:.2f} TFLOP/s" in text2 and text2 != text


def test_ceiling_paragraphs_absent_without_data(doc):
    del doc["bandwidth"], doc["flops"]
    assert explain_ceilings.bandwidth_paragraphs(doc) == []
    assert explain_ceilings.flops_paragraphs(doc) == []


# ---------------------------------------------------------------- Table formats


def all_tables(doc: dict) -> list[Table]:
    return [render_gemm.gemm_table(doc), render_gemm.ratio_table(doc), render_gemm.check_table(doc),
            *render_ceilings.bandwidth_tables(doc), render_ceilings.flops_table(doc),
            render_ceilings.profile_table(doc)]


def test_markdown_well_formed(doc):
    fail_rung(doc, "coalesced")  # a None cell in the mix
    for t in all_tables(doc):
        lines = t.to_markdown().splitlines()
        assert lines[0] == f"**{t.title}**"
        table_lines = [ln for ln in lines if ln.startswith("|")]
        assert len(table_lines) == len(t.rows) + 2
        n = len(t.columns)
        assert table_lines[1] == "|" + "|".join(["---"] * n) + "|"
        for ln in table_lines:
            assert ln.endswith("|") and ln.count("|") == n + 1, (t.title, ln)
        assert "None" not in "\n".join(table_lines)
        for note in t.notes:
            assert f"_{note}_" in lines


def test_csv_well_formed(doc):
    fail_rung(doc, "coalesced")
    for t in all_tables(doc):
        text = t.to_csv()
        parsed = list(csv.reader(io.StringIO(text)))
        assert len(parsed) == len(t.rows) + 1
        assert all(len(r) == len(parsed[0]) for r in parsed), t.title
        assert len(parsed[0]) == len(t.columns) + sum(len(v) - 1 for v in t.csv_split.values()), t.title
        assert "None" not in text and "—" not in text
    t = render_gemm.gemm_table(doc)
    gemm = list(csv.DictReader(io.StringIO(t.to_csv())))
    assert list(gemm[0]) == [*COLS[:8], "vs naive (×)", *COLS[9:]]  # the unit moved into the header
    cublas = gemm[LADDER.index("cublas")]
    gflops = 2 * 4096**3 / (median_ms(doc, "cublas") * 1e-3) / 1e9
    assert float(cublas["GFLOP/s"]) == pytest.approx(gflops, rel=1e-12)  # the number, not the text "51,220"
    assert t.rows[LADDER.index("cublas")][COLS.index("GFLOP/s")] == f"{gflops:,.0f}"  # people still get "51,220"
    assert float(cublas["vs naive (×)"]) == pytest.approx(median_ms(doc, "naive") / median_ms(doc, "cublas"))
    coalesced = gemm[LADDER.index("coalesced")]
    assert coalesced["ms"] == coalesced["GFLOP/s"] == coalesced["% peak"] == ""  # missing: empty


def test_table_to_dict(doc):
    t = render_gemm.gemm_table(doc)
    d = json.loads(json.dumps(t.to_dict()))
    assert d["columns"] == COLS and len(d["rows"]) == 5


# ---------------------------------------------------------------- results documents


def test_dumps_writes_nan_and_inf_as_null():
    doc = results.new_document("rooflab test", None)
    doc["x"] = {"nan": float("nan"), "inf": float("inf"), "ninf": -math.inf, "ok": 1.5,
                "list": [float("nan"), 2.0, (float("inf"),)]}
    text = results.dumps(doc)
    assert "NaN" not in text and "Infinity" not in text
    back = json.loads(text)
    assert back["x"] == {"nan": None, "inf": None, "ninf": None, "ok": 1.5, "list": [None, 2.0, [None]]}
    assert back["format"] == results.FORMAT
    assert text.endswith("\n")


def test_dump_and_load_round_trip(recorded, tmp_path):
    p = tmp_path / "sub" / "results.json"
    results.write_atomic(p, results.dumps(recorded))
    assert results.load(p) == json.loads(results.dumps(recorded))
    assert [f.name for f in p.parent.iterdir()] == ["results.json"]  # no temporary left behind
    # a reloaded document renders the same tables
    assert render_gemm.gemm_table(results.load(p)).rows == render_gemm.gemm_table(recorded).rows


def test_load_rejects_non_rooflab_json(tmp_path):
    for i, content in enumerate(['{"foo": 1}', "[1, 2, 3]", "not json at all", "", '{"schema_version": "1"}',
                                 '{"schema_version": null}']):
        p = tmp_path / f"other{i}.json"
        p.write_text(content)
        with pytest.raises(UsageError, match="not a rooflab results file"):
            results.load(p)


def test_load_rejects_missing_file(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        results.load(tmp_path / "nope.json")


def test_load_rejects_newer_schema(recorded, tmp_path):
    doc = copy.deepcopy(recorded)
    doc["format"] = results.FORMAT + 1
    p = tmp_path / "future.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="newer"):
        results.load(p)


def test_usage_error_exit_code():
    """A real usage error, through the real entry point: exit 2 and one line (not a class constant)."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "CUDA_VISIBLE_DEVICES": ""}
    for args in (["gemm", "--reps", "zero"], ["report", "--from", str(DATA / "missing.json")]):
        p = subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env, check=False,
                           timeout=60)
        assert p.returncode == 2, p.stderr
        assert p.stdout == ""
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("rooflab: error: "), p.stderr
