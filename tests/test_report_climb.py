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
