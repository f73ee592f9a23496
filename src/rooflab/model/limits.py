"""Physical limits and the bracket around every measured ceiling (pure: reads a results document).

A ceiling is only a roof if it sits between a lower witness (the best kernel known to run on the
device: rooflab's own, or the vendor's path such as cudaMemcpy, CUB's reduction or cuBLAS) and the
physical limit (the HBM pin rate; clock x units x work per cycle). A figure above its physical
limit measured something else than it claims (the usual cause is named) and is never a roof.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

from rooflab.model import arch
from rooflab.model.peaks import nominal_tensor_fma

# Measurement noise allowed above a physical limit before the figure is called impossible: clock
# and timer jitter are below 0.5% on a steady GPU; a limit computed from the maximum clock already
# sits above what the part sustains.
LIMIT_TOLERANCE = 0.01

# Why a figure above its limit was possible, per level: the usual contamination.
CONTAMINATION = {
    "DRAM": "faster than the pins: part of the footprint was served by the L2 (a footprint swept again and "
            "again keeps part of itself there), so this is no HBM figure",
    "L2": "faster than the L2 can deliver: part of the footprint was served by the L1, so this is no L2 figure",
    "L1": "faster than the shared-memory banks at the maximum clock: bytes over-counted or the clock listed too low",
    "compute": "faster than the units at the maximum clock: FLOPs over-counted, or work skipped",
}


@dataclass(frozen=True)
class Limit:
    """A physical limit and the arithmetic it comes from (value None: no published limit)."""

    value: float | None
    basis: str

    def to_dict(self) -> dict:
        return asdict(self)


def hbm_limit(dev: dict) -> Limit:
    """The pin rate: 2 transfers per memory clock x bus width in bytes."""
    mhz, bits = dev.get("mem_clock_max_mhz"), dev.get("bus_width_bits")
    if mhz and bits:
        return Limit(2 * mhz * 1e6 * bits / 8, f"pin rate: 2 × {mhz:.0f} MHz × {bits:,} bit / 8")
    peak = dev.get("hbm_peak_bytes_per_s")
    return Limit(peak, "pin rate (device attributes)" if peak else "unknown: no memory clock or bus width")


def shared_limit(dev: dict) -> Limit:
    sms, mhz, cc = dev.get("sm_count"), dev.get("sm_clock_max_mhz"), tuple(dev.get("cc") or (0, 0))
    if not (sms and mhz) or cc < (5, 0):
        return Limit(None, "unknown")
    return Limit(sms * 128 * mhz * 1e6, f"{sms} SMs × 32 banks × 4 B × {mhz:.0f} MHz")


def l2_limit(dev: dict) -> Limit:
    per_clk = arch.l2_bytes_per_clk(tuple(dev.get("cc") or (0, 0)))
    mhz = dev.get("sm_clock_max_mhz")
    if per_clk and mhz:
        return Limit(per_clk * mhz * 1e6, f"whitepaper {per_clk:,} B/clk × {mhz:.0f} MHz")
    return Limit(None, "no published limit for this architecture")


def compute_limit(dev: dict, precision: str) -> Limit:
    """Clock x SMs x units x work per cycle, at the maximum SM clock, for one precision."""
    sms, mhz = dev.get("sm_count"), dev.get("sm_clock_max_mhz")
    cc = tuple(dev.get("cc") or (0, 0))
    if not (sms and mhz):
        return Limit(None, "unknown: no SM count or clock")
    hz = mhz * 1e6
    p = precision.lower()
    if p == "fp32":
        lanes = dev.get("fp32_cores_per_sm") or arch.fp32_cores_per_sm(cc)
        if lanes:
            return Limit(sms * lanes * 2 * hz, f"{sms} SMs × {lanes} FP32 lanes × 2 FLOP/FMA × {mhz:.0f} MHz")
    elif p == "fp64":
        lanes = arch.fp64_lanes_per_sm(cc)
        if lanes:
            return Limit(sms * lanes * 2 * hz, f"{sms} SMs × {lanes} FP64 lanes × 2 × {mhz:.0f} MHz")
    elif p == "fp16":
        lanes = arch.fp16_lanes_per_sm(cc)
        if lanes:
            return Limit(sms * lanes * 2 * hz, f"{sms} SMs × {lanes} FP16 FMA/clk × 2 × {mhz:.0f} MHz")
    else:
        base = "tf32" if p == "3xtf32" else p
        nominal = nominal_tensor_fma(cc, base, dev.get("spec_key"))
        if nominal:
            fma, _src = nominal
            value = sms * fma * 2 * hz / (3 if p == "3xtf32" else 1)
            split = " ÷ 3 (three products per FMA)" if p == "3xtf32" else ""
            return Limit(value, f"{sms} SMs × {fma:g} {base.upper()} tensor FMA/clk × 2 × {mhz:.0f} MHz{split}")
    return Limit(None, f"unknown for {precision} on sm_{cc[0]}{cc[1]}")


# the device's nominal peaks, as its device table and `rooflab compare` name them
FP32_PEAK, HBM_PEAK = "FP32 peak (P1)", "HBM peak (P3)"


class Peak(NamedTuple):
    name: str
    unit: str  # "B/s" | "FLOP/s"
    limit: Limit


def nominal_peaks(dev: dict) -> list[Peak]:
    """The FP32 CUDA cores' clocks × lanes (P1) and the HBM pin rate (P3) of a device block: the
    physical limits the FP32 and HBM ceilings are bracketed by."""
    return [Peak(FP32_PEAK, "FLOP/s", compute_limit(dev, "fp32")), Peak(HBM_PEAK, "B/s", hbm_limit(dev))]


# The units that can deliver a result of each precision (a floor must allow the fastest: an FP32-accurate
# GEMM may run as 3xTF32 on tensor cores, FP16 on the tensor cores or as HFMA2). "fp32-simt": a kernel
# known to run on the FP32 CUDA cores only (the FMA chains).
_DELIVER = {"fp32": ("fp32", "3xtf32"), "fp32-simt": ("fp32",), "ieee": ("fp32", "3xtf32"), "3xtf32": ("3xtf32",), "tf32": ("tf32",),
            "bf16": ("bf16",), "fp16": ("fp16", "fp16-tensor"), "fp8": ("fp8",), "fp64": ("fp64",)}


def fastest_limit(dev: dict, precision: str) -> Limit:
    """The highest compute limit of any unit that can produce this precision's result."""
    cands = []
    for p in _DELIVER.get(precision.lower(), (precision.lower(),)):
        lim = _tensor(dev, "fp16") if p == "fp16-tensor" else compute_limit(dev, p)
        if lim.value:
            cands.append(lim)
    if precision.lower() == "fp64" and cands and tuple(dev.get("cc") or (0, 0)) >= (8, 0):
        # A100 and Hopper run FP64 matrix products on the tensor cores at twice the DFMA rate
        cands.append(Limit(2 * cands[0].value, f"2 × ({cands[0].basis}): FP64 tensor cores"))
    return max(cands, key=lambda lim: lim.value) if cands else Limit(None, f"unknown for {precision}")


def _tensor(dev: dict, precision: str) -> Limit:
    sms, mhz = dev.get("sm_count"), dev.get("sm_clock_max_mhz")
    nominal = nominal_tensor_fma(tuple(dev.get("cc") or (0, 0)), precision, dev.get("spec_key"))
    if not (sms and mhz and nominal):
        return Limit(None, "unknown")
    return Limit(sms * nominal[0] * 2 * mhz * 1e6,
                 f"{sms} SMs × {nominal[0]:g} {precision.upper()} tensor FMA/clk × 2 × {mhz:.0f} MHz")


def above_limit(value: float | None, limit: Limit, what: str) -> str | None:
    """The error for a figure above its physical limit (beyond noise), or None."""
    if not value or not limit.value or value <= limit.value * (1 + LIMIT_TOLERANCE):
        return None
    return f"{CONTAMINATION.get(what, 'above its physical limit')} ({value / limit.value:.3f}× the {limit.basis})"


@dataclass
class Bracket:
    """witness <= ceiling <= limit for one measured ceiling, and what went wrong where it does not hold."""

    name: str  # "HBM copy", "HBM read", "FP32 FMA", ...
    unit: str  # "B/s" or "FLOP/s"
    ceiling: float | None
    ceiling_what: str
    witness: float | None
    witness_what: str
    limit: Limit
    level: str  # CONTAMINATION key
    error: str | None = None  # the ceiling is above its limit: not a roof
    note: str | None = None  # the witness beats the ceiling: rooflab's kernel is not the device's best

    def __post_init__(self) -> None:
        self.error = above_limit(self.ceiling, self.limit, self.level)
        if self.error is None and self.ceiling and self.witness and self.witness > self.ceiling:
            self.note = (f"the witness ({self.witness_what}) is {self.witness / self.ceiling:.3f}× this ceiling: "
                         "the device can do more than rooflab's kernel")

    @property
    def roof(self) -> float | None:
        """The figure to draw: the ceiling where it holds, never one above its physical limit."""
        if self.error:
            return None
        return max(v for v in (self.ceiling, self.witness, 0.0) if v is not None) or None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["limit"] = self.limit.to_dict()
        d["roof"] = self.roof
        return d
