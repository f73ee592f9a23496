"""Shared pieces of the memory-hierarchy tests: the recorded H200 results with the constructed level
profiles and memory section (tests/data/*_constructed.*: CONSTRUCTED, not recorded; see
tests/data/README.md), and a spec-only document."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rooflab.model.ncu import KernelProfile, combine, parse_csv

DATA = Path(__file__).parent / "data"
SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"
LABELS = ("naive", "coalesced", "tiled32", "copy")
MiB = 2**20


def _profile(label: str) -> KernelProfile:
    return combine(label, parse_csv((DATA / f"ncu_{label}_levels_constructed.csv").read_text()))


@pytest.fixture(scope="module")
def memory_section() -> dict:
    return json.loads((DATA / "h200_memory_constructed.json").read_text())


@pytest.fixture
def doc(memory_section) -> dict:
    """The recorded H200 results with the constructed level profiles and memory section."""
    d = json.loads((DATA / "h200_results.json").read_text())
    lv = {label: _profile(label).to_dict() for label in LABELS}
    d["profile"]["kernels"] = [lv.get(k["label"], k) for k in d["profile"]["kernels"]]
    d["memory"] = copy.deepcopy(memory_section)
    return d


@pytest.fixture
def spec_doc() -> dict:
    from rooflab import results
    from rooflab.lab import spec_device_entry

    return results.new_document("rooflab test", spec_device_entry("h200"))
