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
from rooflab.errors import KernelError
from rooflab.cuda.telemetry import Telemetry, merge_summaries


@dataclass
class Timing:
    times_ms: list[float]  # per launch
    warmup: int
    l2_flushed: bool
    telemetry: dict | None = field(default=None)
    method: str = "events"  # "events": a pair around each launch; "batched": a pair around many launches;
    # "graph": a pair around one replay of a CUDA graph holding many launches
    launches_per_sample: int = 1
    stopped_by: str = "reps"  # what ended the timing: "reps" (a fixed count), "converged", "time budget"
    median_spread_pct: float | None = None  # the median's relative 95% spread when it stopped
    round_medians_ms: list[float] | None = None  # each interleaved round's median, where there were rounds

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


def merge_rounds(rounds: list[Timing]) -> Timing:
    """One timing from interleaved rounds of the same launch: every sample, each round's median beside
    them, the telemetry over all of them (a round's clock state is part of its figure)."""
    if not rounds:
        raise ValueError("no rounds to merge")
    if len(rounds) == 1:
        return rounds[0]
    first = rounds[0]
    return Timing(times_ms=[t for r in rounds for t in r.times_ms], warmup=first.warmup,
                  l2_flushed=all(r.l2_flushed for r in rounds), telemetry=merge_summaries([r.telemetry for r in rounds]),
                  method=first.method, launches_per_sample=first.launches_per_sample, stopped_by=first.stopped_by,
                  median_spread_pct=None, round_medians_ms=[r.median_ms for r in rounds])


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
# The noise-based stop: time until the median is known to this relative spread, or the budget ends.
SPREAD_TARGET = 0.005
MIN_SAMPLES = 10
MAX_SAMPLES = 2000


def median_spread(times: list[float]) -> float | None:
    """The relative width of a 95% confidence interval of the median, (hi - lo) / median, from order
    statistics (no distribution assumed): ranks n/2 -+ 0.98 sqrt(n). None below 5 samples."""
    n = len(times)
    if n < 5:
        return None
    xs = sorted(times)
    half = 0.98 * n ** 0.5
    lo, hi = xs[max(0, int(n / 2 - half))], xs[min(n - 1, int(n / 2 + half + 0.5))]
    med = statistics.median(xs)
    return (hi - lo) / med if med > 0 else None


def stop_reason(times: list[float], elapsed_s: float, budget_s: float, *, target: float = SPREAD_TARGET,
                min_samples: int = MIN_SAMPLES, max_samples: int = MAX_SAMPLES) -> str | None:
    """Why to stop sampling now ("converged", "time budget", "max samples"), or None to go on."""
    if len(times) >= min_samples:
        spread = median_spread(times)
        if spread is not None and spread < target:
            return "converged"
    if elapsed_s >= budget_s:
        return "time budget"
    if len(times) >= max_samples:
        return "max samples"
    return None


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
    """time_kernel with the method chosen: "events", "batched", "graph" (a CUDA graph of many launches
    replayed per sample), or "auto" (under SHORT_LAUNCH_MS per launch, where an event pair per launch
    would count launch gaps: a graph, else batched launches where the launch cannot be captured)."""
    if method == "events":
        return time_kernel(launch, label=label, reps=reps, warmup=warmup, flush=flush, pci_bus_id=pci_bus_id,
                           before_last=before_last)
    probe = time_kernel(launch, label=label, reps=3, warmup=warmup, pci_bus_id=pci_bus_id)
    if method == "auto" and probe.median_ms >= SHORT_LAUNCH_MS:
        return time_kernel(launch, label=label, reps=reps, warmup=0, flush=flush, pci_bus_id=pci_bus_id,
                           before_last=before_last)
    batch = max(2, min(10_000, int(BATCH_TARGET_MS / max(probe.min_ms, 1e-4))))
    if method in ("auto", "graph"):  # short kernels: replay a graph, no host launch gaps between them
        try:
            return time_graph(launch, label=label, reps=reps, batch=batch, warmup=1, pci_bus_id=pci_bus_id,
                              before_last=before_last)
        except (KernelError, RuntimeError):
            if method == "graph":
                raise
            # a launch that cannot be captured (a library with its own stream): batched launches instead
    return time_kernel(launch, label=label, reps=reps, warmup=0, pci_bus_id=pci_bus_id, batch=batch,
                       before_last=before_last)


def _graph(launch: Callable[[], None], batch: int, label: str, stream):
    """`batch` launches captured into one CUDA graph on `stream` (launch enqueues on the current stream)."""
    with cuda_call(label, "cudaStreamBeginCapture / cudaGraphInstantiate"):
        with stream:
            stream.begin_capture()
            try:
                for _ in range(batch):
                    launch()
            finally:
                graph = stream.end_capture()
        graph.upload(stream)
    return graph


def time_graph(launch: Callable[[], None], *, label: str, reps: int = 20, batch: int = 100, warmup: int = 1,
               pci_bus_id: str = "", before_last: Callable[[], None] | None = None) -> Timing:
    """Replay a CUDA graph of `batch` launches per sample: no launch overhead from the host between
    the kernels, reported per launch. Raises KernelError where the launch cannot be captured."""
    cp = cupy()
    stream = cp.cuda.Stream(non_blocking=True)
    graph = _graph(launch, batch, label, stream)
    for _ in range(warmup):
        graph.launch(stream)
    with cuda_call(label, "cudaEventCreate"):
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    with cuda_call(label, "cudaStreamSynchronize"):
        stream.synchronize()
    with Telemetry(pci_bus_id) as tel:
        for i, (start, stop) in enumerate(events):
            if before_last and i == len(events) - 1:
                with stream:
                    before_last()
            start.record(stream)
            graph.launch(stream)
            stop.record(stream)
        with cuda_call(label, "cudaStreamSynchronize"):
            stream.synchronize()
    with cuda_call(label, "cudaEventElapsedTime"):
        times = [cp.cuda.get_elapsed_time(a, b) / batch for a, b in events]
    return Timing(times_ms=times, warmup=warmup, l2_flushed=False, telemetry=tel.summary(), method="graph",
                  launches_per_sample=batch)


def time_until_stable(sample: Callable[[int], Timing], *, budget_s: float, chunk: int = MIN_SAMPLES,
                      target: float = SPREAD_TARGET, clock: Callable[[], float] | None = None) -> Timing:
    """Call `sample(chunk)` (a Timing of `chunk` more samples) until the median's relative spread is
    below `target` or the budget ends; the Timing says which ended it."""
    import time  # noqa: PLC0415

    now = clock or time.perf_counter
    t0 = now()
    first = sample(chunk)
    times = list(first.times_ms)
    while (why := stop_reason(times, now() - t0, budget_s, target=target)) is None:
        times += sample(chunk).times_ms
    first.times_ms = times
    first.stopped_by = why
    first.median_spread_pct = None if median_spread(times) is None else 100 * median_spread(times)
    return first
