"""Parsing `ncu --csv --page raw` output recorded on an H200 (P8), and the
speed-of-light verdict built on it. No GPU, no ncu needed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rooflab.model import ncu
from rooflab.model.ncu import KernelProfile, combine, parse_csv, verdict

DATA = Path(__file__).parent / "data"


def _rows(name: str) -> list[dict]:
    return parse_csv((DATA / f"ncu_{name}.csv").read_text())


@pytest.fixture(scope="module")
def copy():
    return _rows("copy")


@pytest.fixture(scope="module")
def fma():
    return _rows("fma")


@pytest.fixture(scope="module")
def cublas():
    return _rows("cublas")


def test_one_row_per_file(copy, fma, cublas):
    assert len(copy) == len(fma) == len(cublas) == 1


def test_kernel_names(copy, fma, cublas):
    assert copy[0]["name"] == "copy_float4"
    assert "fma_chain<8>" in fma[0]["name"]
    assert cublas[0]["name"].strip()


def test_every_requested_metric_parsed(copy, fma, cublas):
    for rows in (copy, fma, cublas):
        # recorded before the L1/L2 byte metrics were requested: those are checked on
        # the constructed level fixtures in test_model_ncu.py
        missing = [m for m in ncu.METRICS if m not in rows[0]["metrics"]
                   and m not in ncu.LEVEL_METRICS and m not in ncu.STATE_METRICS]  # STATE: recorded later
        assert not missing, missing
        assert all(isinstance(v, float) and math.isfinite(v) for v in rows[0]["metrics"].values())


def test_copy_percentages(copy):
    m = copy[0]["metrics"]
    assert m[ncu.DRAM_PCT] == pytest.approx(88.6, abs=0.1)
    assert m[ncu.SM_PCT] == pytest.approx(17.0, abs=0.1)


def test_fma_percentages(fma):
    m = fma[0]["metrics"]
    assert m[ncu.DRAM_PCT] < 1
    assert m[ncu.SM_PCT] > 99


def test_bytes_in_bytes(copy, fma):
    m = copy[0]["metrics"]
    # 256M floats read once and written once: 2 GiB plus a little
    assert m[ncu.DRAM_READ] + m[ncu.DRAM_WRITE] == pytest.approx(2.12e9, rel=0.01)
    assert m[ncu.DRAM_READ] == pytest.approx(2**30, rel=0.01)
    assert fma[0]["metrics"][ncu.DRAM_READ] < 1e6


def test_duration_in_seconds(copy, fma):
    assert copy[0]["metrics"][ncu.DURATION] == pytest.approx(4.98e-4, rel=0.01)
    assert 1e-4 < fma[0]["metrics"][ncu.DURATION] < 1e-1


def test_thousands_separators_parsed(copy):
    # the raw file writes e.g. "1,980,000" (kHz clock): commas are separators, not decimals
    assert copy[0]["metrics"]["device__attribute_clock_rate"] == 1_980_000


def test_verdicts(copy, fma, cublas):
    assert combine("copy", copy).verdict() == "memory-bound"
    assert combine("fma", fma).verdict() == "compute-bound"
    assert combine("cublas", cublas).verdict() == "compute-bound"


def test_verdict_rule():
    assert verdict(30, 40).startswith("latency-bound")
    assert verdict(59.9, 59.9).startswith("latency-bound")
    assert verdict(88, 17) == "memory-bound"
    assert verdict(1, 99) == "compute-bound"
    assert verdict(float("nan"), 50) == "unknown"


def test_fma_flops_and_intensity(fma):
    p = combine("fma", fma)
    m = p.metrics
    assert p.fp32_flops == pytest.approx(m[ncu.FADD] + m[ncu.FMUL] + 2 * m[ncu.FFMA])
    assert p.fp32_flops == pytest.approx(2 * m[ncu.FFMA], rel=1e-3)  # FMAs are the work
    assert p.fp32_flops > 1e11
    assert p.ai > 1e6  # register-only: essentially no DRAM traffic


def test_copy_has_no_flops(copy):
    p = combine("copy", copy)
    assert p.fp32_flops == 0
    assert p.ai == 0
    assert p.dram_bytes == pytest.approx(2.12e9, rel=0.01)


def test_cublas_flops_match_2n3(cublas):
    # the recorded cuBLAS run is an N=4096 SGEMM: 2·N³ FLOP, all FFMA
    assert combine("cublas", cublas).fp32_flops == pytest.approx(2 * 4096**3, rel=0.01)


def test_empty_and_log_only():
    assert parse_csv("") == []
    assert parse_csv("==PROF== Connected to process 1\n==PROF== Disconnected from process 1\n") == []


def test_combine_weights_percentages_by_duration():
    rows = [{"name": "a", "metrics": {ncu.DRAM_PCT: 90.0, ncu.DURATION: 3e-3, ncu.DRAM_READ: 10.0}},
            {"name": "b", "metrics": {ncu.DRAM_PCT: 10.0, ncu.DURATION: 1e-3, ncu.DRAM_READ: 5.0}}]
    p = combine("lib", rows)
    assert p.kernels == ["a", "b"]
    assert p.dram_pct == pytest.approx(70.0)  # (90·3 + 10·1) / 4
    assert p.metrics[ncu.DRAM_READ] == 15.0  # counts are summed
    assert p.metrics[ncu.DURATION] == pytest.approx(4e-3)


def test_profile_round_trip(copy, fma):
    for label, rows in (("copy", copy), ("fma", fma)):
        p = combine(label, rows)
        d = json.loads(json.dumps(p.to_dict()))
        q = KernelProfile.from_dict(d)
        assert q.label == p.label and q.kernels == p.kernels
        assert q.metrics == pytest.approx(p.metrics)
        assert q.verdict() == p.verdict() == d["verdict"]
        assert d["dram_pct"] == pytest.approx(p.dram_pct)
        assert d["fp32_flops"] == pytest.approx(p.fp32_flops)


def test_recorded_profile_section_matches_csv(copy, fma):
    """The results fixture's profile entries are what parse_csv + combine give for the same run."""
    from rooflab.results import load

    doc = load(DATA / "h200_results.json")
    by_label = {d["label"]: KernelProfile.from_dict(d) for d in doc["profile"]["kernels"]}
    for label, rows in (("copy", copy), ("fma", fma)):
        assert by_label[label].verdict() == combine(label, rows).verdict()
        assert by_label[label].kernels == [r["name"] for r in rows]


# ---------------------------------------------------------------- tensor-pipe FLOPs


def _tensor_csv(rows: dict[str, tuple[str, str]]) -> str:
    """A constructed `ncu --csv --page raw` output: one kernel, the given metrics (value, unit)."""
    head = ['"ID"', '"Kernel Name"', *[f'"{m}"' for m in rows]]
    units = ['""', '""', *[f'"{u}"' for _v, u in rows.values()]]
    vals = ['"0"', '"sm90_xmma_gemm_bf16bf16_bf16f32"', *[f'"{v}"' for v, _u in rows.values()]]
    return "==PROF== Connected\n" + "\n".join(",".join(r) for r in (head, units, vals)) + "\n"


def test_tensor_flops_from_the_tensor_pipe():
    from rooflab.model import ncu as n

    M = N = K = 4096
    two_mnk = 2.0 * M * N * K
    # cuBLAS BF16 on Hopper: HGMMA, counted per FLOP; ncu chose a prefix for the unit
    csv_text = _tensor_csv({"sm__ops_path_tensor_src_bf16_dst_fp32.sum": (f"{two_mnk / 1e9:.4f}", "Gop"),
                            "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum":
                                (f"{two_mnk / 1e9:.4f}", "Gop"),
                            n.FFMA: ("0", "inst"), n.DRAM_READ: ("0.2", "Gbyte"), n.DURATION: ("180", "usecond")})
    p = n.combine("cublas_bf16", n.parse_csv(csv_text))
    assert p.fp32_flops == 0.0
    assert p.tensor_flops == pytest.approx(two_mnk, rel=1e-6)
    assert abs(p.flops / two_mnk - 1) < 0.02
    assert p.ai_all == pytest.approx(two_mnk / 0.2e9, rel=1e-6) and p.ai == 0.0
    assert p.to_dict()["tensor_flops"] == pytest.approx(two_mnk, rel=1e-6)


def test_tensor_flops_take_the_family_that_saw_the_work():
    """Where the per-source totals miss wgmma's HGMMA, the per-instruction counters carry it."""
    from rooflab.model import ncu as n

    p = n.KernelProfile("wgmma_tf32", [], {"sm__ops_path_tensor_src_tf32_dst_fp32.sum": 0.0,
                                           "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum": 1.37e11})
    assert p.tensor_flops == 1.37e11
    assert n.KernelProfile("copy", [], {n.FFMA: 1.0}).tensor_flops is None
    assert set(n.TENSOR_SRC) | set(n.TENSOR_OP) <= set(n.TENSOR_METRICS)


def test_profile_table_shows_tensor_flops_and_the_model_ratio():
    import copy
    import json
    from pathlib import Path

    from rooflab.model import ncu as n
    from rooflab.report.ceilings import profile_table

    doc = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    d = copy.deepcopy(doc)
    k = next(x for x in d["profile"]["kernels"] if x["label"] == "cublas_bf16")
    k["metrics"]["sm__ops_path_tensor_src_bf16_dst_fp32.sum"] = 2.0 * 4096**3 * 1.004
    t = profile_table(d)
    i = {c: j for j, c in enumerate(t.columns)}
    row = next(r for r in t.rows if r[0] == "cublas_bf16")
    assert row[i["tensor GFLOP"]] == f"{2 * 4096**3 * 1.004 / 1e9:.2f}" and row[i["÷ 2·M·N·K"]] == "1.004"
    coalesced = next(r for r in t.rows if r[0] == "coalesced")
    assert coalesced[i["verdict"]] == "compute-bound" and coalesced[i["hierarchy"]] == "L1/shared"
    assert any(note.startswith("coalesced: SM % is the busiest SM unit") for note in t.notes)
    assert n.TENSOR_SRC[0].startswith("sm__ops_path_tensor_src_")
