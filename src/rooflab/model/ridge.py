"""Ridge points (P5): where a roofline's slope meets its flat roof, in FLOP per byte."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from rooflab.errors import UsageError
from rooflab.model.specs import PRECISIONS, SPECS, find_spec

# y[i] = a * x[i]: one multiply per 4 bytes read and 4 bytes written.
SCALE_AI = 0.125


@dataclass(frozen=True)
class Ridge:
    label: str
    flops: float  # peak FLOP/s
    bw: float  # memory bandwidth, bytes/s
    ridge: float  # FLOP/byte
    key: str = ""  # spec key, when from the table
    precision: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def ridge_point(peak_flops: float, bandwidth_bytes_per_s: float) -> float:
    """FLOP/s divided by bytes/s: the arithmetic intensity (FLOP/byte) at which both roofs meet."""
    if not bandwidth_bytes_per_s or bandwidth_bytes_per_s <= 0:
        raise UsageError(f"memory bandwidth must be positive, got {bandwidth_bytes_per_s!r}")
    return peak_flops / bandwidth_bytes_per_s


def _ridge(label: str, flops: float, bw: float, key: str = "", precision: str = "", note: str = "") -> Ridge:
    return Ridge(label, flops, bw, ridge_point(flops, bw), key, precision, note)


def _spec_ridge(key: str, precision: str, label: str, note: str = "") -> Ridge:
    spec = find_spec(key)
    return _ridge(label, spec.peak_flops(precision), spec.bandwidth_bytes_per_s, key, precision, note)


def seed_ridges() -> list[Ridge]:
    """The seed's four ridge points (exercise 3), ascending."""
    a40 = find_spec("a100-40gb")
    a100_note = (
        "seed writes 312/2: ~2 TB/s is the A100 80GB SXM (2.039 TB/s); "
        f"the A100 40GB (1.555 TB/s) gives {a40.ridge('bf16'):.0f} FLOP/byte"
    )
    ridges = [
        _spec_ridge("a100-80gb", "bf16", "A100 BF16", a100_note),
        _spec_ridge("h100-sxm", "bf16", "H100 BF16"),
        _spec_ridge("h100-sxm", "fp8", "H100 FP8"),
        _spec_ridge("b200", "fp4", "B200 FP4"),
    ]
    return sorted(ridges, key=lambda r: r.ridge)


def all_ridges() -> list[Ridge]:
    """A ridge for every GPU in the spec table and every precision it has, FP32 CUDA cores first."""
    out: list[Ridge] = []
    for spec in SPECS:
        for p in ("fp32",) + spec.precisions:
            what = "FP32 (CUDA cores)" if p == "fp32" else f"{p.upper()} tensor"
            out.append(_spec_ridge(spec.key, p, f"{spec.key} {what}"))
    return out


def classify(ai: float, ridge: float) -> str:
    """Left of the ridge the memory roof is the lower one."""
    return "memory-bound" if ai < ridge else "compute-bound"


def _tbs(bw: float) -> str:
    return f"{bw / 1e12:.2f} TB/s"


def trend_paragraph(ridges: Sequence[Ridge]) -> str:
    """Why the ridges climb, with the numbers of the ridges given (any number of them, >= 1)."""
    rs = sorted(ridges, key=lambda r: r.ridge)
    if not rs:
        return ""
    order = " < ".join(f"{r.label} {r.ridge:,.0f}" for r in rs)
    parts = [f"Sorted ascending (FLOP/byte): {order}."]
    steps = []
    for a, b in itertools.pairwise(rs):
        fx, bx = b.flops / a.flops, b.bw / a.bw
        if abs(bx - 1) < 1e-3:
            steps.append(
                f"{a.label} -> {b.label}: compute x{fx:.2f} at the same {_tbs(a.bw)}, "
                f"so the ridge grows by the same x{fx:.2f}"
            )
        else:
            steps.append(f"{a.label} -> {b.label}: compute x{fx:.2f}, bandwidth only x{bx:.2f}")
    if steps:
        lo, hi = rs[0], rs[-1]
        parts.append(
            "Each step multiplies peak FLOP/s by more than it multiplies memory bandwidth ("
            + "; ".join(steps)
            + f"). From {lo.label} to {hi.label} compute grows x{hi.flops / lo.flops:.1f} but bandwidth "
            f"x{hi.bw / lo.bw:.1f}, so the ridge moves x{hi.ridge / lo.ridge:.1f} to the right."
        )
        parts.append(
            "Compute rates grow faster than memory bandwidth from one generation to the next, and a "
            "narrower precision doubles the tensor rate again without moving a byte more per second "
            "(FP8 doubles BF16's ridge at the same bandwidth). So a kernel needs ever more FLOP per byte "
            "it moves to be compute-bound, and data reuse (tiling, keeping operands on chip) matters more "
            "on every new part."
        )
    parts.append(
        f"The scalar x vector kernel y = a*x does 1 FLOP per 8 bytes (AI {SCALE_AI}): "
        f"{rs[0].ridge / SCALE_AI:,.0f}x left of the lowest ridge and {rs[-1].ridge / SCALE_AI:,.0f}x "
        f"left of the highest, {classify(SCALE_AI, rs[0].ridge)} on every one of them."
    )
    return " ".join(parts)


def present_device_ridges(
    fp32_peak_flops: float | None,
    hbm_bytes_per_s: float,
    tensor_tflops: Mapping[str, float] | None = None,
    name: str = "this GPU",
) -> list[Ridge]:
    """Ridges of the GPU found at run time: its FP32 peak (where known), plus the published tensor rates."""
    out = []
    if fp32_peak_flops:
        out.append(_ridge(f"{name} FP32 (CUDA cores)", fp32_peak_flops, hbm_bytes_per_s, precision="fp32"))
    rates = {p.lower(): tf for p, tf in (tensor_tflops or {}).items()}
    for p in PRECISIONS:
        if rates.get(p):
            out.append(_ridge(f"{name} {p.upper()} tensor", rates[p] * 1e12, hbm_bytes_per_s, precision=p))
    return out
