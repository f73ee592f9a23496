"""The climb paragraphs (report/climb/): on every recorded H200 document, with and without its
profile, and on one constructed to hold every rung, they read as tests/data/expected/climb_paragraphs.json
holds them (captured from the renderers before the prose left the rung records)."""

from __future__ import annotations

import json

import pytest

from climb_fixtures import EXPECTED, documents
from rooflab.report import gemm as render_gemm

_EXPECTED = json.loads(EXPECTED.read_text())


@pytest.mark.parametrize("name", sorted(_EXPECTED))
def test_the_climb_paragraphs_read_as_recorded(name):
    doc = documents()[name]
    assert [list(p) for p in render_gemm.paragraphs(doc)] == _EXPECTED[name]


def test_every_document_is_compared():
    assert sorted(documents()) == sorted(_EXPECTED)


def test_all_prose_belongs_to_a_step_a_record_declares():
    """Prose keyed by a step no rung compares (a renamed rung, a dropped comparison) would never show."""
    from rooflab import rungs
    from rooflab.report import climb

    declared = {(r.name, earlier) for r in rungs.LADDER for earlier in r.compare}
    assert set(climb.PARAGRAPHS) <= declared
    names = set(rungs.names())
    assert all(earlier in names for _, earlier in declared)


def test_a_step_with_no_prose_reads_the_runs_figures_and_profile():
    from rooflab.report.climb.step import Step, generic, generic_heading, known

    def figures(ms, pct):
        return known({"ms": ms, "gflops": 2 * 4096**3 / ms / 1e6, "pct_peak": pct, "speedup": None})

    prev_rec, this_rec = {"kernel": "a", "title": "rung A"}, {"kernel": "b", "title": "rung B"}
    prof = {"b": {"issue_pct": 61.0, "registers": 168}}
    s = Step(figures(2.0, 40.0), figures(1.6, None), prev_rec, this_rec, prof)
    assert generic_heading(s) == "rung A → rung B"
    assert generic(s) == ("rung B against rung A: 1.25× as fast (2.000 → 1.600 ms, 85.9 TFLOP/s, ?% of its roof). "
                          "Nsight Compute on b: issue slots 61% busy; 168 registers per thread.")
    assert "within run-to-run spread" in generic(Step(figures(1.61, 50.0), figures(1.6, 50.0), prev_rec, this_rec))
