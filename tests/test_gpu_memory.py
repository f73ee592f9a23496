"""The memory-hierarchy ceilings on a real GPU, at small settings: every configuration
verified, the L2 cliff, the bank-conflict penalty, the FP64 and FP16 chains, and a section that the
renderers (and the constructed CPU fixture's schema) agree with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
MiB = 2**20
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


def _pow2_at_least(x: int) -> int:
    f = MiB
    while f < x:
        f *= 2
    return f


@pytest.fixture(scope="module")
def section(device):
    from rooflab.measure.memory import MemoryConfig, run

    small = max(MiB, min(4 * MiB, device.l2_bytes // 8 // 1024 * 1024))  # well inside the L2
    big = _pow2_at_least(8 * device.l2_bytes)  # far beyond it: nearly every byte from HBM
    cfg = MemoryConfig(rounds=2, reps=3, target_ms=1.0, footprints=(small, big))
    return run(cfg, device)


def _rows(sec: dict) -> list[dict]:
    return [*sec["l2_sweep"]["rows"], sec["l2_copy"], *sec["shared"]["rows"], sec["fp64"], sec["fp16"]]


def test_every_configuration_verified_and_timed(section):
    for r in _rows(section):
        assert not r.get("error"), r
        assert r["verified"], r["label"]
        assert len(r["rounds"]) == 2 and r["rate"] > 0, r["label"]


def test_l2_cliff(section):
    rows = sorted(section["l2_sweep"]["rows"], key=lambda r: r["footprint_bytes"])
    assert rows[0]["rate"] > 1.5 * rows[-1]["rate"], [(r["footprint_bytes"] / MiB, r["rate"] / 1e9) for r in rows]
    assert section["summary"]["l2_over_beyond"] > 1.5


def test_shared_bank_conflicts(section):
    s = section["summary"]
    assert s["shared_bytes_per_s"] > 4 * s["shared_conflict_bytes_per_s"]


def test_shared_near_theory_on_hopper(section, device):
    if tuple(device.cc) != (9, 0):
        pytest.skip("the 90% acceptance figure is set for the H100/H200")
    assert section["summary"]["shared_pct_of_theoretical"] >= 90.0


def test_fp64_fp16(section):
    theo = section["theoretical"]
    for p in ("fp64", "fp16"):
        r = section[p]
        assert r["verified"] and r["check"]["mismatches"] == 0
        if theo.get(f"{p}_flops"):
            assert 0.3 < r["rate"] / theo[f"{p}_flops"] < 1.05, (p, r["rate"], theo[f"{p}_flops"])


def test_rounds_agree(section):
    for r in _rows(section):
        assert r["spread_pct"] < 5.0, (r["label"], r["spread_pct"])


def test_schema_matches_the_constructed_fixture(section):
    """The CPU tests render tests/data/h200_memory_constructed.json: it must look like a real section."""
    con = json.loads((DATA / "h200_memory_constructed.json").read_text())
    assert set(con) <= set(section)
    assert set(con["l2_sweep"]["rows"][0]) <= set(section["l2_sweep"]["rows"][0])
    assert set(con["l2_copy"]) <= set(section["l2_copy"])
    assert set(con["shared"]["rows"][0]) <= set(section["shared"]["rows"][0])
    assert set(con["fp64"]) <= set(section["fp64"]) and set(con["fp16"]) <= set(section["fp16"])
    assert set(con["theoretical"]) == set(section["theoretical"])
    assert set(con["summary"]) <= set(section["summary"])
    assert set(con["method"]) - {"constructed"} <= set(section["method"])
    assert set(con["l2_sweep"]["rows"][0]["rounds"][0]) == set(section["l2_sweep"]["rows"][0]["rounds"][0])


def test_renders(section, device, tmp_path):
    from rooflab import results
    from rooflab.cuda.device import document_entry
    from rooflab.report.hierarchy_picture import plot_levels
    from rooflab.report.memory import memory_paragraphs, memory_tables

    doc = results.new_document("rooflab test", document_entry(device))
    doc["memory"] = section
    doc = json.loads(results.dumps(doc))  # what a saved file holds
    assert len(memory_tables(doc)) == 3
    assert len(memory_paragraphs(doc)) == 3
    plot_levels(doc, tmp_path / "levels.png")
    assert (tmp_path / "levels.png").stat().st_size > 10_000


def test_cli_memory_json(device):
    from click.testing import CliRunner

    from rooflab.cli import cli

    res = CliRunner().invoke(cli, ["memory", "--parts", "shared,fp64", "--rounds", "1", "--reps", "3",
                                   "--launch-ms", "0.5", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # progress goes to stderr
    assert doc["memory"]["shared"]["rows"][0]["verified"] and doc["memory"]["fp64"]["verified"]
    assert "l2_sweep" not in doc["memory"]
