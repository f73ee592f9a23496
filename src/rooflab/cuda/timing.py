"""Timing with CUDA events around the kernel only (G3).

One warm-up launch outside the measurement, then `reps` launches, each between
its own pair of events on the same stream (no host synchronisation in between,
so the seed's mean of back-to-back launches is preserved). Optionally the L2 is
flushed before each rep, outside the events. NVML telemetry is sampled while the
reps run, so every figure carries the clocks it ran at.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from rooflab.cuda.gpu import cuda_call, cupy, synchronize
from rooflab.cuda.telemetry import Telemetry


@dataclass
class Timing:
    times_ms: list[float]  # per launch
    warmup: int
    l2_flushed: bool
    telemetry: dict | None = field(default=None)
    method: str = "events"  # "events": a pair around each launch; "batched": a pair around many launches
    launches_per_sample: int = 1

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.times_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(reps=len(self.times_ms), mean_ms=self.mean_ms, median_ms=self.median_ms,
                 min_ms=self.min_ms, max_ms=self.max_ms)
        return d


@functools.cache
def _flush_buffer(nbytes: int):
    cp = cupy()
    return cp.empty(nbytes // 4, dtype=cp.float32)


def l2_flusher(l2_bytes: int) -> Callable[[], None]:
    """Writing twice the L2 size evicts whatever the previous rep left there."""
    buf = _flush_buffer(max(2 * l2_bytes, 8 << 20))
    return lambda: buf.fill(1.0)


# Below this a launch is short enough for launch gaps to show inside an event pair.
SHORT_LAUNCH_MS = 0.1
BATCH_TARGET_MS = 2.0  # each batched sample runs about this long


def time_kernel(launch: Callable[[], None], *, label: str, reps: int = 20, warmup: int = 1,
                flush: Callable[[], None] | None = None, pci_bus_id: str = "", batch: int = 1,
                before_last: Callable[[], None] | None = None) -> Timing:
    """Time `launch` (which enqueues the kernel on the current stream).

    batch = 1: a pair of events around each launch (the seed's method). batch > 1: a pair
    around `batch` back-to-back launches, reported per launch, so launch gaps of microsecond
    kernels are shared out instead of counted whole (no L2 flush between them).
    before_last runs (enqueued outside the events) before the last sample: the harness poisons the
    output there, so what the last timed launch wrote can be checked.
    """
    if reps < 1 or batch < 1:
        raise ValueError("reps and batch must be at least 1")
    cp = cupy()
    for _ in range(warmup):
        launch()
    synchronize(label)
    with cuda_call(label, "cudaEventCreate"):
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    with Telemetry(pci_bus_id) as tel:
        for i, (start, stop) in enumerate(events):
            if flush:
                flush()
            if before_last and i == len(events) - 1:
                before_last()
            start.record()
            for _ in range(batch):
                launch()
            stop.record()
        synchronize(label)
    with cuda_call(label, "cudaEventElapsedTime"):
        times = [cp.cuda.get_elapsed_time(a, b) / batch for a, b in events]
    return Timing(times_ms=times, warmup=warmup, l2_flushed=flush is not None and batch == 1,
                  telemetry=tel.summary(), method="events" if batch == 1 else "batched",
                  launches_per_sample=batch)


def time_launches(launch: Callable[[], None], *, label: str, reps: int = 20, warmup: int = 1,
                  flush: Callable[[], None] | None = None, pci_bus_id: str = "", method: str = "events",
                  before_last: Callable[[], None] | None = None) -> Timing:
    """time_kernel with the method chosen: "events", "batched", or "auto" (batched when one launch
    takes under SHORT_LAUNCH_MS, where an event pair per launch would count launch gaps)."""
    if method == "events":
        return time_kernel(launch, label=label, reps=reps, warmup=warmup, flush=flush, pci_bus_id=pci_bus_id,
                           before_last=before_last)
    probe = time_kernel(launch, label=label, reps=3, warmup=warmup, pci_bus_id=pci_bus_id)
    if method == "auto" and probe.median_ms >= SHORT_LAUNCH_MS:
        return time_kernel(launch, label=label, reps=reps, warmup=0, flush=flush, pci_bus_id=pci_bus_id,
                           before_last=before_last)
    batch = max(2, min(10_000, int(BATCH_TARGET_MS / max(probe.min_ms, 1e-4))))
    return time_kernel(launch, label=label, reps=reps, warmup=0, pci_bus_id=pci_bus_id, batch=batch,
                       before_last=before_last)
