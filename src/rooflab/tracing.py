"""`rooflab trace`'s pipeline: collect every kernel of a program, profile the groups that hold most
of its GPU time, and place each on this GPU's measured hierarchical roofline, ranked by headroom.

The ceilings come from a results document of this GPU (`ceilings`), else from the cache of an
earlier trace on the same GPU and driver, else they are measured here (the quick flops, bandwidth
and memory sections of the report) and cached.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rooflab import results
from rooflab.errors import TRACE_OVER_BUDGET, TraceError, UsageError
from rooflab.model import trace as model
from rooflab.model.hierarchy import compute_roofs, levels
from rooflab.model.metrics import peak_for

Progress = Callable[[str], None]
TENSOR_PRECISIONS = ("tf32", "bf16", "fp16", "fp8")


@dataclass
class TraceConfig:
    command: list[str] = field(default_factory=list)
    coverage: float = 0.9  # profile the fewest groups holding this share of the GPU time
    cap: int = 12  # at most this many groups
    per_group: int = 3  # sampled launches per group
    max_launches: int = 200  # launches ncu profiles at most
    budget_s: float = 600.0  # the whole trace, every run of the command included
    window: str | None = None  # only kernels inside the last range of this name
    ceilings: str | None = None  # a results document of this GPU with its ceilings
    baseline: bool = True  # run the command once untraced (for the tracing overhead)
    profile: bool = True  # run Nsight Compute on the top groups

    def validate(self) -> None:
        if not 0 < self.coverage <= 1:
            raise UsageError(f"--coverage must be in (0, 1], got {self.coverage}")
        for name in ("cap", "per_group", "max_launches"):
            if getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
        if self.budget_s <= 0:
            raise UsageError("--budget must be positive")


def cache_path(device: dict) -> Path:
    from rooflab.measure.tune import cache_dir  # noqa: PLC0415  (the tune cache's folder)

    key = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{device.get('name')}-{device.get('driver_version')}")
    return cache_dir() / "ceilings" / f"{key}.json"


def roofs_of(doc: dict) -> list:
    """The compute roofs a program's kernels are judged against: the document's own (FP32, the
    measured FP64/FP16) and every tensor rate the device publishes."""
    from rooflab.model.hierarchy import ComputeRoof  # noqa: PLC0415

    roofs = compute_roofs(doc)
    have = {r.precision for r in roofs}
    for prec in TENSOR_PRECISIONS:
        rate = peak_for(doc, prec)
        if rate and prec not in have:
            roofs.append(ComputeRoof(f"{prec.upper()} tensor", prec, rate, False, True, "published dense rate"))
    return roofs


def ceilings_document(cfg: TraceConfig, progress: Progress) -> tuple[dict, str]:
    """A document holding this GPU's ceilings, and where it came from."""
    if cfg.ceilings:
        return results.load(cfg.ceilings), f"from {cfg.ceilings}"
    from rooflab import lab  # noqa: PLC0415
    from rooflab.cuda.device import detect, document_entry  # noqa: PLC0415

    dev = document_entry(detect())
    path = cache_path(dev)
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8")), f"cached {path}"
        except (OSError, ValueError):
            pass
    progress("measuring this GPU's ceilings (the quick flops, bandwidth and memory sections), once per GPU")
    doc = lab.measure({"flops": lab.flops_section(True), "bandwidth": lab.bandwidth_section(True),
                       "memory": lab.memory_section(True)}, progress=progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    results.write_atomic(path, results.dumps(doc))
    return doc, f"measured now (cached in {path})"


def run(cfg: TraceConfig, *, progress: Progress | None = None, doc: dict | None = None) -> dict:
    """The trace document. `doc` receives what is known as it is known, so a caller that is
    stopped (a failing command, the budget) still holds the results so far."""
    from rooflab.measure import trace as collect  # noqa: PLC0415

    cfg.validate()
    say = progress or (lambda _m: None)
    doc = doc if doc is not None else {}
    deadline = time.perf_counter() + cfg.budget_s

    def left(what: str) -> float:
        t = deadline - time.perf_counter()
        if t <= 1:
            raise TraceError(f"the {cfg.budget_s:.0f} s budget ended before {what}", TRACE_OVER_BUDGET)
        return t

    collect.check_command(cfg.command)  # before anything is measured
    ceil_doc, ceil_src = ceilings_document(cfg, say)
    doc.update(results.new_document(results.command_line(), ceil_doc.get("device")))
    lvls, roofs = levels(ceil_doc), roofs_of(ceil_doc)
    untraced_wall = untraced_step = None
    if cfg.baseline:
        say(f"running {' '.join(cfg.command)} untraced")
        untraced_wall, untraced_step = collect.run_untraced(cfg.command, left("the untraced run"))
    say("running it under the tracer")
    got = collect.collect_command(cfg.command, left("the traced run"), cfg.window)
    groups = model.group(got.launches)
    chosen = model.choose(groups, cfg.coverage, cfg.cap)

    def fill(placed: list, note: str | None = None, profiler_note: str | None = None) -> None:
        doc["trace"] = model.section(groups, placed, command=cfg.command, levels=lvls, roofs=roofs,
                                     ceilings_source=ceil_src, traced_step_s=got.step_s,
                                     untraced_step_s=untraced_step, collector=got.collector,
                                     profiler_note=profiler_note, budget_note=note)
        doc["trace"]["limits"].update(traced_wall_s=got.wall_s, untraced_wall_s=untraced_wall)

    fill([], profiler_note="not profiled yet")
    if not cfg.profile:
        fill([], profiler_note="--no-profile: no group placed")
        return doc
    samples, note, _raw = collect.profile_groups(cfg.command, chosen, per_group=cfg.per_group,
                                                 max_launches=cfg.max_launches,
                                                 timeout_s=left("Nsight Compute"), progress=say)
    placed = [model.place(g, samples.get(g.key, []), lvls, roofs) for g in chosen]
    missed = [g.key for g in chosen if not samples.get(g.key)]
    fill(placed, note, f"no ncu sample for {len(missed)} chosen group(s)" if missed else None)
    return doc
