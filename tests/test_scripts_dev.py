"""The scripts in scripts/dev that stay: construct_fixtures.py writes exactly the constructed fixtures
the tests read, and tma_climb.py's table of the BF16 climb (rooflab's Table, the gemm renderers'
status) from a results document."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "dev" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_constructed_fixtures_are_what_the_script_writes(tmp_path):
    cf = _script("construct_fixtures")
    cf.level_csvs(tmp_path)
    for label in cf.LEVELS:
        name = f"ncu_{label}_levels_constructed.csv"
        assert (tmp_path / name).read_text() == (DATA / name).read_text(), name
    assert cf.memory_section() == json.loads((DATA / "h200_memory_constructed.json").read_text())


@pytest.fixture
def climb_doc() -> dict:
    """The recorded H200 ladder with two TMA rungs made from its wgmma_bf16 record: one 1.25x faster, one
    that failed its checks."""
    doc = json.loads((DATA / "h200_report_levels.json").read_text())
    recs = {r["kernel"]: r for r in doc["gemm"]["rungs"]}
    tma = copy.deepcopy(recs["wgmma_bf16"])
    tma["kernel"] = "wgmma_bf16_tma"
    tma["timing"]["median_ms"] = recs["wgmma_bf16"]["timing"]["median_ms"] / 1.25
    ws = copy.deepcopy(recs["wgmma_bf16"])
    ws.update(kernel="wgmma_bf16_tma_ws", passed=False, timing=None, error="launch failed")
    doc["gemm"]["rungs"] += [tma, ws]
    return doc


def test_the_climb_table(climb_doc):
    tc = _script("tma_climb")
    t = tc.climb_table(climb_doc)
    by = {r[0]: r for r in t.rows}
    assert list(by) == ["wgmma_bf16", "wgmma_bf16_tma", "wgmma_bf16_tma_ws", "cublas_bf16"]
    recs = {r["kernel"]: r for r in climb_doc["gemm"]["rungs"]}
    base, peer = recs["wgmma_bf16"]["timing"]["median_ms"], recs["cublas_bf16"]["timing"]["median_ms"]
    assert by["wgmma_bf16_tma"][3].value == pytest.approx(1.25)
    assert by["wgmma_bf16_tma"][4].value == pytest.approx(peer / (base / 1.25))
    assert by["wgmma_bf16"][3] is None and by["cublas_bf16"][3] is None  # no previous rung / the peer itself
    assert by["wgmma_bf16_tma_ws"][1] is None and by["wgmma_bf16_tma_ws"][5] == "FAILED: launch failed"
    assert by["wgmma_bf16"][2].value == pytest.approx(recs["wgmma_bf16"]["flops"] / (base * 1e-3) / 1e12)
    assert f"N={climb_doc['gemm']['config']['n']}," in t.title
    assert t.to_markdown() and t.to_csv()


def test_the_climb_command_line(climb_doc, tmp_path, capsys):
    tc = _script("tma_climb")
    p = tmp_path / "gemm.json"
    p.write_text(json.dumps(climb_doc))
    assert tc.main([str(p)]) == 0
    text = capsys.readouterr().out
    assert "BF16 climb" in text and "wgmma_bf16_tma" in text and "1.250×" in text


def test_the_epilogue_share_measures_real_kernels_with_a_define_the_body_reads():
    import importlib.util

    from rooflab import rungs

    path = Path(__file__).parent.parent / "scripts" / "dev" / "epilogue_share.py"
    spec = importlib.util.spec_from_file_location("epilogue_share", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    body = (Path(rungs.__file__).parent.parent / "include" / "tma_persistent.cuh").read_text()
    assert f"#ifndef {mod.SKIP}" in body  # else the second build would time the same kernel
    for name, kernel in mod.CASES:
        r = mod.rung_of(name, kernel)
        assert r.kernel == (kernel or rungs.get(name).kernel)
        assert "tma_persistent.cuh" in (Path(rungs.__file__).parent / r.source.split("/", 1)[1]).read_text()
