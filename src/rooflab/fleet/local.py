"""`fleet links` and `fleet allreduce`: this node's GPUs measured from this process (no workers),
as a fleet document of one node, the shape the merged document has, so one renderer serves both."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from rooflab import results
from rooflab.cuda.inventory import select
from rooflab.errors import UsageError
from rooflab.fleet import allreduce, layout, orchestrate
from rooflab.measure import collectives, links
from rooflab.model.fleet import reference

Say = Callable[[str], None]


def choose_devices(devices: str | None) -> None:
    """--devices for a measurement in this process: CUDA_VISIBLE_DEVICES, set before CUDA starts
    (CUDA reads it once)."""
    if not devices or devices.strip().lower() == "all":
        return
    if "cupy" in sys.modules:
        raise UsageError("--devices must be chosen before CUDA is initialised in this process")
    inv, _note = orchestrate.inventory_here()
    os.environ.update(orchestrate.cuda_env(select(inv, devices)))


def _document(**sections) -> dict:
    doc = results.new_document(results.command_line(), None)
    doc["fleet"] = {"gpus": {}, **sections, "outliers": [], "medians": {}, "config": {},
                    "references": dict(reference.REFERENCES)}
    return doc


def measure_links(cfg: links.LinksConfig, say: Say, *, with_torch: bool = False) -> dict:
    """The links section (and, with_torch, PyTorch's peer copy) of this node."""
    host = layout.hostname()
    sec = links.run(cfg, say)
    tp = links.torch_peer(cfg.nbytes, cfg.reps) if with_torch else None
    return _document(links={host: sec}, torch_peer={host: tp} if tp else {}, allreduce={})


def measure_allreduce(cfg: collectives.AllreduceConfig, say: Say, log_dir: str = ".") -> dict:
    """The all-reduce section of this node (CuPy's NCCL, else torch.distributed ranks)."""
    sec = allreduce.measure_with_fallback(cfg, say, log_dir=log_dir)
    return _document(links={}, allreduce={layout.hostname(): sec})
