"""The roofline floor: no kernel on this GPU can take less time than max(FLOPs / compute limit,
compulsory bytes / bandwidth limit). A timed kernel below it, beyond noise, did not do the work it
claims (skipped launches, outputs left from an earlier call, a miscounted problem): it is FAILED,
with no throughput. Pure: the harness passes the figures in."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rooflab.model.check import Check
from rooflab.model.limits import Limit, fastest_limit, hbm_limit

NAME = "roofline floor"
# How far below the floor a time may fall before it is impossible rather than noise: the limits
# already use the maximum clock and the pin rate, so a real kernel stays above them; timer
# resolution and the spread between reps stay well under this.
FLOOR_NOISE = 0.03


@dataclass(frozen=True)
class Floor:
    seconds: float
    compute_s: float | None
    memory_s: float | None
    basis: str  # which term sets the floor, with its arithmetic

    def to_dict(self) -> dict:
        return asdict(self)


def roofline_floor(device: dict, precision: str, flops: float, nbytes: float, *, beyond_l2: bool) -> Floor | None:
    """The floor for one launch. The bytes term applies only where the footprint cannot sit in the
    L2 between launches (larger than it, or flushed): the L2 has no published limit to divide by."""
    comp = fastest_limit(device, precision)
    pins = hbm_limit(device)
    compute_s = flops / comp.value if flops and comp.value else None
    memory_s = nbytes / pins.value if nbytes and pins.value and beyond_l2 else None
    terms = [(s, what) for s, what in ((compute_s, f"{flops / 1e9:,.4g} GFLOP ÷ {comp.value / 1e12 if comp.value else 0:,.1f} "
                                                   f"TFLOP/s ({comp.basis})"),
                                       (memory_s, f"{nbytes / 1e6:,.4g} MB ÷ {pins.value / 1e9 if pins.value else 0:,.0f} "
                                                  f"GB/s ({pins.basis})")) if s]
    if not terms:
        return None
    s, what = max(terms)
    return Floor(s, compute_s, memory_s, what)


def floor_check(median_s: float, floor: Floor | None, shape: tuple[int, int, int],
                noise: float = FLOOR_NOISE) -> Check | None:
    """A passed check at or above the floor, a failed one below it; None where no floor is known."""
    if floor is None or median_s is None:
        return None
    ok = median_s >= floor.seconds * (1 - noise)  # a time of zero is below every floor
    return Check(NAME, tuple(shape), "", floor.basis, median_s / floor.seconds, 1 - noise, ok)


def floor_error(check: Check, floor: Floor) -> str:
    """The FAILED line for a time below the floor."""
    t = check.value * floor.seconds
    return (f"faster than this GPU can run it: {t * 1e3:.4g} ms measured, {floor.seconds * 1e3:.4g} ms at least "
            f"({floor.basis}); the kernel skipped work or reused an earlier output")


def unit_floor(amount: float, limit: Limit, unit: str) -> Floor | None:
    """The floor of a ceiling kernel held to one unit's limit (shared-memory banks, FP64 lanes, a
    tensor-core pipe): `amount` bytes or FLOPs over the limit; None where the limit is unknown."""
    if not amount or not limit.value:
        return None
    scale, name = (1e9, "GB/s") if unit == "B/s" else (1e12, "TFLOP/s")
    what = "MB" if unit == "B/s" else "GFLOP"
    div = 1e6 if unit == "B/s" else 1e9
    return Floor(amount / limit.value, None, None,
                 f"{amount / div:,.4g} {what} ÷ {limit.value / scale:,.1f} {name} ({limit.basis})")
