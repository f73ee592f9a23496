"""A timing that proves itself: the output is poisoned before the last timed sample and checked
after it (a kernel that passes its checks and then skips work on later launches, or leaves an
earlier output in place, fails here), and the median must not be below the roofline floor
(model/floor.py). The one path every timed kernel goes through: GEMM rungs, user kernels and the
ceilings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import synchronize
from rooflab.cuda.timing import Timing, time_launches, time_until_stable
from rooflab.model.check import Check
from rooflab.model.floor import floor_check, floor_error, roofline_floor

LAST = "last timed launch"


@dataclass
class Proven:
    timing: Timing
    checks: list[Check]  # the last launch's recheck, then the floor (where one is known)
    error: str | None  # why the timing is no result; None where it stands

    @property
    def passed(self) -> bool:
        return self.error is None


def device_dict(device: DeviceInfo) -> dict:
    return asdict(device)


def time_proven(launch: Callable[[], None], *, label: str, reps: int, device: DeviceInfo, poison: Callable[[], None],
                recheck: Callable[[], int], shape: tuple[int, int, int], precision: str, flops: float,
                nbytes: float, footprint_bytes: float, warmup: int = 1, flush: Callable[[], None] | None = None,
                method: str = "events", budget_s: float | None = None) -> Proven:
    """Time `launch`, recheck the last timed launch's output (`recheck` returns how many elements are
    wrong, after `poison` ran before that sample) and hold the median against the floor. With
    `budget_s`, samples are taken until the median's spread is below 0.5% or the budget ends (at
    least `reps`), then one last poisoned sample."""
    if budget_s is None:
        t = time_launches(launch, label=label, reps=reps, warmup=warmup, flush=flush,
                          pci_bus_id=device.pci_bus_id, method=method, before_last=poison)
    else:
        def sample(count: int) -> Timing:
            return time_launches(launch, label=label, reps=count, warmup=0, flush=flush,
                                 pci_bus_id=device.pci_bus_id, method=method)

        t = time_until_stable(sample, budget_s=budget_s, chunk=max(1, reps))
        last = time_launches(launch, label=label, reps=1, warmup=0, flush=flush, pci_bus_id=device.pci_bus_id,
                             method=method, before_last=poison)
        t.times_ms = [*t.times_ms, *last.times_ms]
    synchronize(label)
    wrong = recheck()
    checks = [Check(LAST, tuple(shape), "", "output poisoned before it, checked after", float(wrong), 0.0,
                    wrong == 0)]
    error = None if wrong == 0 else (f"the last timed launch's output is wrong ({wrong:,} element"
                                     f"{'s' if wrong > 1 else ''} or a failed check): the kernel passed its "
                                     "checks, then did not do the work while it was timed")
    beyond_l2 = footprint_bytes > device.l2_bytes or (flush is not None and t.launches_per_sample == 1)
    floor = roofline_floor(device_dict(device), precision, flops, nbytes, beyond_l2=beyond_l2)
    fc = floor_check(t.median_ms * 1e-3, floor, shape)
    if fc is not None:
        checks.append(fc)
        if not fc.passed:  # the headline: the time itself is impossible
            error = floor_error(fc, floor)
    return Proven(t, checks, error)
