"""Everything about a rung derives from its record: ratios, the steps it is compared in, help, the compile check.

Any subset of rungs, in any order, renders; a rung added to the ladder in a
test (a record plus a .cu in a temporary folder) shows up everywhere with no other edit.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rooflab import rungs
from rooflab.report import climb, document
from rooflab.report import gemm as render_gemm
from rooflab.report.climb.step import Step
from rooflab.rungs.record import Rung, cdiv

DATA = Path(__file__).parent / "data"
NAMES = ["naive", "coalesced", "tiled16", "tiled32", "regtile", "cublas"]


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads((DATA / "h200_report.json").read_text())


def subset(doc: dict, names: list[str]) -> dict:
    d = copy.deepcopy(doc)
    by = {r["kernel"]: r for r in d["gemm"]["rungs"]}
    d["gemm"]["rungs"] = [by[n] for n in names]
    return d


def test_recorded_run_holds_the_whole_ladder(recorded):
    names = rungs.names()
    assert [r["kernel"] for r in recorded["gemm"]["rungs"]] == NAMES
    assert [names.index(n) for n in NAMES] == sorted(names.index(n) for n in NAMES)  # same order as the ladder


@pytest.mark.parametrize("names", [
    ["coalesced", "tiled16", "tiled32", "regtile", "cublas"],  # the command from the issue: no naive
    ["cublas"], ["tiled32", "naive"], ["regtile", "cublas", "coalesced"], ["tiled16"],
])
def test_any_subset_renders(recorded, names):
    d = subset(recorded, names)
    table = render_gemm.gemm_table(d)
    vs = table.columns.index("vs naive")
    if "naive" not in names:
        assert all(row[vs] is None for row in table.rows)  # empty, not a crash
    paras = dict(climb.transitions(d))
    for r in rungs.LADDER:
        for after, heading, _fn in climb.steps(r):
            assert (heading in paras) == (r.name in names and after in names), heading
    ratios = render_gemm.ratios(d)
    for a, b, _label in render_gemm.ratio_specs():
        assert (f"{a}/{b}" in ratios) == (a in names and b in names)


def test_every_subset_of_the_ladder_renders_a_report(recorded, tmp_path):
    for size in (1, 2, 5):
        for names in itertools.combinations(NAMES, size):
            d = subset(recorded, list(names))
            md = document.markdown(d, document.all_tables(d))
            assert "SGEMM ladder" in md


def test_ratios_come_from_the_records(recorded):
    specs = render_gemm.ratio_specs()
    assert ("naive", "coalesced", "time_naive / time_coalesced (G6)") in specs
    assert len(specs) == sum(len(r.ratios) for r in rungs.LADDER)
    r = render_gemm.ratios(recorded)
    ms = {x["kernel"]: x["timing"]["median_ms"] for x in recorded["gemm"]["rungs"]}
    assert r["naive/coalesced"] == pytest.approx(ms["naive"] / ms["coalesced"])


def _toy(tmp_path: Path) -> Rung:
    cu = tmp_path / "toy.cu"
    cu.write_text('extern "C" __global__ void mm_toy(const float* A, const float* B, float* C, int M, int N, int K)\n'
                  "{ int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;\n"
                  "  if (r < M && c < N) { float s = 0; for (int k = 0; k < K; k++) s += A[r * K + k] * B[k * N + c];"
                  " C[r * N + c] = s; } }\n")

    return Rung(name="toy", title="toy rung", stage="test", explain="A test rung.", loads_per_fma=2.0,
                source=str(cu), kernel="mm_toy", grid=lambda m, n, k: (cdiv(n, 16), cdiv(m, 16), 1),
                compare=("tiled32",), ratios=(("tiled32", "time_tiled32 / time_toy"),))


def test_a_rung_added_to_the_ladder_needs_no_other_edit(recorded, tmp_path, monkeypatch):
    toy = _toy(tmp_path)
    monkeypatch.setattr(rungs, "LADDER", [*rungs.LADDER, toy])
    # help text
    from rooflab.cli import cli
    out = CliRunner().invoke(cli, ["gemm", "--help"]).output
    assert "toy" in " ".join(out.split())
    # ratios and paragraphs, from a document holding a toy rung
    d = copy.deepcopy(recorded)
    t32 = next(r for r in d["gemm"]["rungs"] if r["kernel"] == "tiled32")
    rec = {**copy.deepcopy(t32), "kernel": "toy", "title": "toy rung"}
    rec["timing"] = {**rec["timing"], "median_ms": t32["timing"]["median_ms"] / 2}
    d["gemm"]["rungs"].append(rec)
    assert render_gemm.ratios(d)["tiled32/toy"] == pytest.approx(2.0)
    # no prose of its own: the step's paragraph is made of the run's figures
    ms = rec["timing"]["median_ms"]
    gflops = rec["flops"] / (ms * 1e-3) / 1e9
    pct = 100 * gflops * 1e9 / d["device"]["fp32_peak_flops"]
    assert dict(climb.transitions(d))["tiled (TILE=32) → toy rung"] == (
        f"toy rung against tiled (TILE=32): 2.00× as fast ({2 * ms:.3f} → {ms:.3f} ms, {gflops / 1e3:,.1f} TFLOP/s, "
        f"{pct:.1f}% of its roof).")
    # prose written for it in the report replaces the generic paragraph, under its own heading
    monkeypatch.setitem(climb.PARAGRAPHS, ("toy", "tiled32"),
                        ("tiled32 → toy", lambda s: f"toy ran {s.ratio:.2f}× against tiled32"))
    paras = dict(climb.transitions(d))
    assert paras["tiled32 → toy"] == "toy ran 2.00× against tiled32" and "tiled (TILE=32) → toy rung" not in paras
    # the harness accepts it by name
    from rooflab.measure.gemm import GemmConfig
    GemmConfig(kernels=["toy"]).validate()
    assert toy.source_path() == tmp_path / "toy.cu"


def test_a_compile_error_shows_the_compilers_lines_then_one_error(monkeypatch, capsys):
    import sys

    from rooflab import cli as cli_mod
    from rooflab.errors import CompileError

    def refuse(*_a, **_k):
        raise CompileError("/x/broken.cu", "broken.cu(4): error: identifier \"undeclared_name\" is undefined\n"
                                           "1 error detected in the compilation of \"broken.cu\".")

    monkeypatch.setattr(cli_mod.bench, "parse_target", refuse)
    monkeypatch.setattr(sys, "argv", ["rooflab", "bench", "/x/broken.cu", "--kernel", "broken"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert "undeclared_name" in lines[0]
    assert lines[-1] == "rooflab: error: /x/broken.cu does not compile (1 compiler error above)"


def test_paragraphs_quote_nsight_computes_warp_state(recorded):
    """a transition names its cause with the profile's stall reasons, issue slots, occupancy."""
    from rooflab.model import ncu

    d = subset(recorded, ["tiled32", "regtile"])
    metrics = {ncu.ISSUE_PCT: 48.0, ncu.OCCUPANCY_PCT: 24.5, ncu.REGISTERS: 128,
               ncu.STALLS["barrier"]: 1.9, ncu.STALLS["long_scoreboard"]: 0.7, ncu.STALLS["wait"]: 0.2,
               ncu.BANK_CONFLICTS_LD: 1e6, ncu.SHARED_WAVEFRONTS_LD: 4e9}
    d["profile"] = {"kernels": [{"label": "regtile", "dram_bytes": 1e9, "dram_pct": 2.0, "sm_pct": 49.0,
                                 "metrics": metrics}]}
    text = dict(climb.transitions(d))["tiled → register-tiled (G12)"]
    assert "Nsight Compute on regtile: issue slots 48% busy; achieved occupancy 24%" in text  # 24.5 rounds to even
    assert "top stalls barrier 1.90, long scoreboard 0.70, wait 0.20" in text
    assert "bank conflicts 0% of 4.00 G wavefronts" in text
    d["profile"]["kernels"][0]["metrics"] = {}
    assert "Nsight Compute on" not in dict(climb.transitions(d))["tiled → register-tiled (G12)"]


def test_a_size_that_cannot_fit_says_so_before_allocating():
    from types import SimpleNamespace

    from rooflab.errors import UsageError
    from rooflab.measure.gemm import GemmConfig, check_fits

    h200 = SimpleNamespace(memory_bytes=143_771 * 2**20)
    with pytest.raises(UsageError) as exc:
        check_fits(GemmConfig(m=999999, n=999999, k=999999), h200)
    assert str(exc.value) == "N=999999 needs 44 TB (A, B, C and the float64 references); this GPU has 151 GB"
    check_fits(GemmConfig(m=8192, n=8192, k=8192), h200)  # 2.1 GB: fine


def test_the_3xtf32_paragraph_says_how_many_times_faster_it_ran():
    """Step.ratio is time(prev) / time(this): a 3xTF32 rung twice as fast as SGEMM reads 2.00×."""
    _, para = climb.PARAGRAPHS[("wgmma_3xtf32", "cublas")]
    figures = {"gflops": 1e5, "pct_peak": 60.0}
    rec = {"kernel": "k", "checks": [{"name": "normwise", "value": 4e-7}]}
    text = para(Step(prev={"ms": 2.6, **figures}, this={"ms": 1.3, **figures}, prev_rec=rec, this_rec=rec))
    assert "2.00× the speed of cuBLAS SGEMM" in text


def test_only_tensor_core_accumulation_gets_the_looser_tolerance():
    """FP32-accurate rungs (CUDA cores, 3xTF32 with its round-to-nearest flushes) get FP32's model; rungs
    whose sums stay in the tensor core's truncating accumulator a linear allowance, still far below the
    7.9e-4 of a wrong TF32 rounding model at K = 4096."""
    from rooflab.rungs import LADDER

    for r in LADDER:
        if r.precision in ("fp32", "3xtf32"):
            assert r.normwise_tolerance(4096) < 5e-6, r.name
        elif r.name != "cublas_tf32" and r.precision != "fp8":  # FP8's accumulator: tests/test_fp8_rung.py
            assert 2e-5 < r.normwise_tolerance(4096) <= 2e-4, r.name


def test_the_remaining_gap_paragraph_quotes_this_runs_issue_rates():
    _, para = climb.PARAGRAPHS[("cublas", "pipelined")]
    figs = {"gflops": 4.7e4, "pct_peak": 70.0}
    prev_rec, this_rec = {"kernel": "pipelined", "checks": []}, {"kernel": "cublas", "checks": []}
    profiled = Step(prev={"ms": 2.9, **figs}, this={"ms": 2.68, **figs}, prev_rec=prev_rec, this_rec=this_rec,
                    profile={"pipelined": {"issue_pct": 77.0}, "cublas": {"issue_pct": 93.0}})
    text = para(profiled)
    assert "77% of cycles issue an instruction against cuBLAS's 93%" in text and "1.08× slower" in text
    bare = para(Step(prev={"ms": 2.9, **figs}, this={"ms": 2.68, **figs}, prev_rec=prev_rec, this_rec=this_rec))
    # not profiled: no issue rates, and no reference figures from another run in their place
    assert "of cycles issue" not in bare and "instructions against" not in bare
    assert "reference" not in bare and "2026" not in bare and "H200" not in bare


@pytest.mark.parametrize("rung", [r for r in rungs.LADDER if r.variants], ids=lambda r: r.name)
def test_a_rungs_own_launch_is_its_first_variants(rung):
    """The record's own kernel, geometry and staging are its default variant's: whatever reads the record without
    choosing a variant launches what `rooflab gemm` launches by default."""
    first = rung.with_variant(rung.variants[0])
    assert (rung.kernel, rung.block, rung.grid, rung.shared_mem, rung.staging, rung.config) == \
        (first.kernel, first.block, first.grid, first.shared_mem, first.staging, first.config)
