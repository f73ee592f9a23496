"""Autotuning of rungs that declare launch variants: each variant is compiled, checked and timed
at one size; the fastest that passes is cached on disk, keyed by GPU name, compute capability,
driver and rooflab version, and reused without searching (`rooflab tune` searches again)."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

from rooflab import __version__, results
from rooflab.cuda.device import DeviceInfo
from rooflab.rungs.record import Rung, Variant


def cache_dir() -> Path:
    """rooflab's cache folder: $ROOFLAB_CACHE, else $XDG_CACHE_HOME/rooflab, else ~/.cache/rooflab."""
    return Path(os.environ.get("ROOFLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rooflab"))


def cache_path() -> Path:
    return cache_dir() / "tune.json"


def device_key(device: DeviceInfo) -> str:
    return f"{device.name}|sm_{device.cc[0]}{device.cc[1]}|driver {device.driver_version}|rooflab {__version__}"


def _load() -> dict:
    try:
        return json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def cached(rung: Rung, device: DeviceInfo) -> dict | None:
    """The cached search result for this rung on this device, if any."""
    entry = _load().get(device_key(device), {}).get(rung.name)
    if entry and any(v.label == entry.get("winner") for v in rung.variants):
        return entry
    return None


# Shared memory one block may opt into, bytes, by compute capability (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"); an unknown one gets the 48 KB every GPU allows.
SMEM_OPTIN = {(7, 0): 96 * 1024, (7, 2): 96 * 1024, (7, 5): 64 * 1024, (8, 0): 163 * 1024, (8, 6): 99 * 1024,
              (8, 7): 163 * 1024, (8, 9): 99 * 1024, (9, 0): 227 * 1024, (10, 0): 227 * 1024,
              (10, 3): 227 * 1024, (12, 0): 99 * 1024}


def fits(v: Variant, device: DeviceInfo) -> bool:
    """Whether the variant's dynamic shared memory is within what a block may have on this device."""
    return v.shared_mem <= SMEM_OPTIN.get(tuple(device.cc), 48 * 1024)


def choose(rung: Rung, device: DeviceInfo) -> tuple[Rung, dict]:
    """The rung with its tuned (or default) variant applied, and what to record about the choice.
    The default is the first variant that fits the device's shared memory (the first of all if none does)."""
    if not rung.variants:
        return rung, {}
    entry = cached(rung, device)
    default = next((v for v in rung.variants if fits(v, device)), rung.variants[0])
    label = entry["winner"] if entry else default.label
    v = next(v for v in rung.variants if v.label == label)
    info = {"config": v.label, "tuned": bool(entry), "tried": entry["tried"] if entry else 0,
            "candidates": len(rung.variants), "tuned_at_n": entry["n"] if entry else None}
    return rung.with_variant(v), info


def search(rung: Rung, device: DeviceInfo, measure: Callable[[Rung], float | None] | None = None,
           progress: Callable[[str], None] | None = None, n: int = 4096,
           measure_all: Callable[[list[tuple[str, Rung]]], list[float | None]] | None = None) -> dict:
    """Time every variant (measure(rung) -> median ms, None if it failed its check; or measure_all, given
    every variant that fits as (progress label, rung), their medians in that order: interleaved rounds);
    cache the winner."""
    say = progress or (lambda _m: None)
    times: dict[str, float | None] = {}
    todo: list[tuple[str, str, Rung]] = []  # (variant, progress label, rung)
    for i, v in enumerate(rung.variants):
        if not fits(v, device):
            say(f"tune {rung.name}: {v.label} ({i + 1}/{len(rung.variants)}) skipped: needs {v.shared_mem} bytes "
                f"of shared memory per block")
            times[v.label] = None
            continue
        times[v.label] = None  # keeps the variants' order
        todo.append((v.label, f"tune {rung.name}: {v.label} ({i + 1}/{len(rung.variants)})", rung.with_variant(v)))
    if measure_all is not None:
        medians = measure_all([(label, r) for _v, label, r in todo])
    else:
        medians = []
        for _v, label, r in todo:
            say(label)
            medians.append(measure(r))
    for (v, _label, _r), ms in zip(todo, medians, strict=True):
        times[v] = ms
    ok = {k: t for k, t in times.items() if t}
    if not ok:
        return {"rung": rung.name, "winner": None, "tried": len(times), "times_ms": times}
    winner = min(ok, key=ok.get)
    entry = {"winner": winner, "tried": len(times), "n": n, "times_ms": times,
             "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    data = _load()
    data.setdefault(device_key(device), {})[rung.name] = entry
    results.write_atomic(cache_path(), json.dumps(data, indent=2) + "\n")
    return {"rung": rung.name, **entry}


__all__ = ["Variant", "cache_path", "cached", "choose", "search"]
