"""The scripts in scripts/dev that stay: construct_fixtures.py writes exactly the constructed fixtures
the tests read, tma_climb.py's table of the BF16 climb (rooflab's Table, the gemm renderers'
status) from a results document, and the diagnostics' cases and the ring trace's reading of its stamps."""

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


def _dev_script(name: str, monkeypatch):
    """A script that imports its neighbours (scripts/dev/cases.py)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts" / "dev"))
    return _script(name)


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


def test_the_epilogue_share_measures_real_kernels_with_a_define_the_body_reads(monkeypatch):
    from rooflab import rungs

    monkeypatch.delenv("SKIP", raising=False)
    monkeypatch.delenv("CASES", raising=False)
    mod = _dev_script("epilogue_share", monkeypatch)
    body = (Path(rungs.__file__).parent.parent / "include" / "tma_persistent.cuh").read_text()
    assert f"#ifndef {mod.SKIP}" in body  # else the second build would time the same kernel
    assert "#ifndef TP_SKIP_PROMOTION" in body  # the adds' share (SKIP=TP_SKIP_PROMOTION)
    assert "#ifndef TP_IDLE_WAIT" in body  # the idle threads' early exit in clusters (SKIP=TP_IDLE_WAIT)
    for name, kernel in mod.CASES:
        r = mod.rung_of(name, kernel)
        assert r.kernel == (kernel or rungs.get(name).kernel)
        assert "tma_persistent.cuh" in (Path(rungs.__file__).parent / r.source.split("/", 1)[1]).read_text()


def test_the_cases_a_diagnostic_takes(monkeypatch):
    cases = _dev_script("cases", monkeypatch)
    default = [("wgmma_fp8_persistent", None)]
    monkeypatch.delenv("CASES", raising=False)
    assert cases.cases(default) == default
    monkeypatch.setenv("CASES", "wgmma_bf16_tma_store,wgmma_fp8_persistent:mm_wgmma_fp8_persistent_n144")
    assert cases.cases(default) == [("wgmma_bf16_tma_store", None),
                                    ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144")]
    r = cases.rung_of("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144")
    assert r.kernel == "mm_wgmma_fp8_persistent_n144" and cases.rung_of("wgmma_fp8_persistent", None).kernel != r.kernel


def test_the_ring_trace_summary_reads_the_stamps(monkeypatch):
    """Synthetic stamps at 1 GHz (ns = clocks): a 1000 ns k-tile, consumers asking 50 ns before their data where it
    is late (every other k-tile: 300 ns), a slot coming free 120 ns after the later release, tiles of 64 k-tiles
    ending with a 3 us epilogue; block 1 runs 400 ns behind block 0."""
    import numpy as np

    rt = _dev_script("ring_trace", monkeypatch)
    kt, stages = 64, 5
    ev = np.zeros((4, 512, 10), dtype=np.int64)
    for b in range(4):
        for it in range(512):
            t = 100_000 + 1000 * it + 3000 * (it // kt) + (400 if b % 2 else 0)
            for c in range(2):
                o = 4 * c
                ev[b, it, rt.READY + o] = t - (300 if it % 2 else 50)
                ev[b, it, rt.GOT + o] = t
                ev[b, it, rt.MMA + o] = t + 100
                ev[b, it, rt.RELEASED + o] = t + 400 + 10 * c
    for b in range(4):
        for it in range(512):
            ev[b, it, rt.ISSUED] = ev[b, it, rt.GOT] - 2000
            src = it - stages
            ev[b, it, rt.FREE] = (ev[b, src, rt.RELEASED + 4] + 120) if src >= 0 else 1
    clocks = np.array([[0, 0, 10**9, 10**9, 7 + b] for b in range(4)])
    text = "\n".join(rt.summary(ev, clocks, stages, kt))
    assert "k-tile 1000 ns" in text and "SM 7, 1.00 GHz" in text
    assert "(mean 175, 50% of k-tiles > 100 ns)" in text  # 50 and 300 ns in turn
    assert "slot free 120 ns after the later local release" in text
    assert "epilogue (last release → next tile's first wait): c0 3550 ns, c1 3540 ns" in text  # 4000 - 50 - 400 (- 10)
    assert "block 1 has k-tile it 400 ns after block 0" in text
