"""The in-process fleet measurements (fleet.local): --devices before CUDA starts, and the
one-node documents `fleet links` and `fleet allreduce` render from."""

from __future__ import annotations

import os
import sys

import pytest

from rooflab.errors import UsageError
from rooflab.fleet import allreduce, layout, local, orchestrate
from rooflab.measure import collectives, links
from rooflab.model.fleet import reference

from fleet_fixtures import FAKE_GPUS, allreduce_section, links_section

FLEET_KEYS = ["gpus", "links", "torch_peer", "allreduce", "outliers", "medians", "config", "references"]


@pytest.fixture
def node_a(monkeypatch):
    monkeypatch.setattr(layout, "hostname", lambda: "node-a")
    monkeypatch.setattr(orchestrate, "inventory_here", lambda: (FAKE_GPUS, None))


def test_devices_set_cuda_visible_devices_by_uuid(node_a, monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # so that monkeypatch puts back what was there
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    local.choose_devices(None)
    local.choose_devices("all")
    assert "CUDA_VISIBLE_DEVICES" not in os.environ
    local.choose_devices("2,0")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "GPU-fake-2,GPU-fake-0"


def test_devices_are_refused_once_cuda_is_loaded(node_a, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", object())
    with pytest.raises(UsageError, match="before CUDA is initialised"):
        local.choose_devices("0")
    local.choose_devices("all")  # nothing to choose: no error


def test_links_document_has_the_merged_documents_shape(node_a, monkeypatch):
    monkeypatch.setattr(links, "run", lambda cfg, say: links_section())
    monkeypatch.setattr(links, "torch_peer", lambda nbytes, reps: {"available": True, "nbytes": nbytes, "reps": reps})
    doc = local.measure_links(links.LinksConfig(nbytes=2**20, reps=3), print)
    assert list(doc["fleet"]) == FLEET_KEYS and doc["device"] is None
    assert doc["fleet"]["links"] == {"node-a": links_section()} and doc["fleet"]["allreduce"] == {}
    assert doc["fleet"]["torch_peer"] == {}  # only with_torch
    assert doc["fleet"]["references"] == reference.REFERENCES
    doc = local.measure_links(links.LinksConfig(nbytes=2**20, reps=3), print, with_torch=True)
    assert doc["fleet"]["torch_peer"] == {"node-a": {"available": True, "nbytes": 2**20, "reps": 3}}


def test_allreduce_document_has_the_merged_documents_shape(node_a, monkeypatch):
    seen = {}

    def fake(cfg, say, log_dir):
        seen.update(cfg=cfg, log_dir=log_dir)
        return allreduce_section()

    monkeypatch.setattr(allreduce, "measure_with_fallback", fake)
    cfg = collectives.AllreduceConfig(min_bytes=1024, max_bytes=2**20, factor=4, reps=3)
    doc = local.measure_allreduce(cfg, print)
    assert list(doc["fleet"]) == [k for k in FLEET_KEYS if k != "torch_peer"]
    assert doc["fleet"]["allreduce"] == {"node-a": allreduce_section()} and doc["fleet"]["links"] == {}
    assert seen == {"cfg": cfg, "log_dir": "."}
