"""Correctness checks against a float64 reference (G1, G2).

Three value checks, on two kinds of input, because each breaks where the others work:
- the seed's check, max_i |got-ref| / max(|ref|, 1e-6) <= rtol (1e-3), on inputs
  uniform in [0, 1): every reference entry is then about K/4, far from zero, so the
  per-element relative error is meaningful;
- the normwise check ||got-ref||_F / ||ref||_F on inputs uniform in [-1, 1):
  with mixed signs some reference entries land near zero, where the seed's
  per-element ratio explodes for a correct kernel, while the normwise error stays
  at FP32 rounding (~1e-6 at K=4096; TF32 would give ~3e-4);
- the componentwise check max_i |got-ref| / (|A|·|B|)_i against the standard GEMM
  error bound (rooflab.model.tolerance): one wrong element, diluted in the normwise
  error and too small for the seed's 1e-3, stands out against its own bound.
Outputs are poisoned with NaN before every checked run; a NaN left anywhere (an
unwritten element) makes both errors infinite.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rooflab.model import e4m3
from rooflab.model.tolerance import SEED_RTOL  # noqa: F401  (the seed's check, where callers look for it)
POSITIVE = "uniform [0,1)"
MIXED = "uniform [-1,1)"


@dataclass
class Check:
    # "seed max-rel" | "normwise" | "componentwise" | "guard zones" | "deterministic", or a
    # compute-sanitizer tool ("memcheck", "racecheck", "synccheck") with reference "compute-sanitizer"
    name: str
    shape: tuple[int, int, int]
    inputs: str
    reference: str  # "CPU float64" | "GPU float64"
    value: float
    tol: float
    passed: bool
    unwritten: int = 0

    def line(self) -> str:
        m, n, k = self.shape
        size = f"{m}x{n}x{k}"
        if self.name == "seed max-rel":
            text = f"max relative error = {self.value:.3e} (tolerance {self.tol:.1e})"
        elif self.name == "deterministic":
            runs = self.reference  # e.g. "3 runs + 4 concurrent"
            text = (f"{runs} bitwise identical" if self.passed
                    else f"{runs}: {self.value:.0f} elements DIFFER between runs (a race?)")
            return f"{self.name} @ {size}, {self.inputs}: {text}"
        elif self.name == "last timed launch":
            text = ("output right" if self.passed
                    else f"{self.value:.0f} elements WRONG: work skipped while timed")
            return f"{self.name} @ {size} ({self.reference}): {text}"
        elif self.name == "roofline floor":
            text = (f"{self.value:.3g}× the floor" if self.passed
                    else f"{self.value:.3g}× the floor: FASTER THAN THIS GPU CAN RUN IT")
            return f"{self.name} @ {size} ({self.reference}): {text}"
        elif self.reference == "compute-sanitizer":
            text = ("no errors" if self.passed else f"{self.value:.0f} errors reported") + (
                f" ({self.inputs})" if self.inputs else "")
            return f"compute-sanitizer {self.name} @ {size}: {text}"
        elif self.name == "componentwise":
            text = f"max |C - C64| / (|A|·|B|) = {self.value:.3e} (bound {self.tol:.1e})"
        elif self.name == "guard zones":
            text = ("nothing written outside C" if self.passed
                    else f"wrote {self.value:.0f} elements outside C")
            return f"{self.name} @ {size}: {text}"
        else:
            text = f"normwise error = {self.value:.3e} (tolerance {self.tol:.1e})"
        extra = f", {self.unwritten} elements never written" if self.unwritten else ""
        return f"{self.name} @ {size}, {self.inputs} vs {self.reference}: {text}{extra}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shape"] = list(self.shape)
        d["value"] = _json_float(self.value)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Check:
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}  # newer fields are allowed, and ignored
        d["shape"] = tuple(d["shape"])
        d["value"] = float(d["value"]) if d["value"] is not None else float("inf")
        return cls(**d)


def _json_float(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else float(x)


def _finite_or_inf(xp, got, value) -> tuple[float, int]:
    bad = int(xp.count_nonzero(~xp.isfinite(got)))
    v = float(value)
    return (float("inf") if bad or v != v else v), bad


def seed_max_rel(xp, got, ref) -> tuple[float, int]:
    """The seed's checkResult: max over elements of |got-ref| / max(|ref|, 1e-6)."""
    g = got.astype(xp.float64)
    rel = xp.abs(g - ref) / xp.maximum(xp.abs(ref), 1e-6)
    return _finite_or_inf(xp, got, rel.max() if rel.size else 0.0)


def normwise(xp, got, ref) -> tuple[float, int]:
    g = got.astype(xp.float64)
    denom = float(xp.linalg.norm(ref))
    value = float(xp.linalg.norm(g - ref)) / denom if denom else float(xp.linalg.norm(g - ref))
    return _finite_or_inf(xp, got, value)


def componentwise(xp, got, ref, absprod) -> tuple[float, int]:
    """max over elements of |got-ref| / (|A|·|B|); where |A|·|B| is 0 the exact result is 0 in any
    precision, so any error there counts as (practically) infinite."""
    err = xp.abs(got.astype(xp.float64) - ref)
    ratio = err / xp.maximum(absprod, 1e-300)
    return _finite_or_inf(xp, got, ratio.max() if ratio.size else 0.0)


def make_check(name: str, xp, got, ref, *, shape, inputs, reference, tol, absprod=None) -> Check:
    if name == "componentwise":
        value, bad = componentwise(xp, got, ref, absprod)
    else:
        value, bad = (seed_max_rel if name == "seed max-rel" else normwise)(xp, got, ref)
    return Check(name, tuple(shape), inputs, reference, value, tol, value <= tol, bad)


def round_inputs(xp, x, to: str):
    """FP32 values rounded as a tensor core reads them, still as float32: "tf32" (10 mantissa bits,
    round to nearest, ties away: cvt.rna.tf32.f32), "tf32_trunc" (10 bits, the low 13 dropped: what
    the tensor core does with FP32 bits nobody rounded, e.g. Triton's input_precision="tf32") or
    "bf16" (7 bits, ties to even), "e4m3" (FP8: 3 bits, ties to even, saturating at 448:
    rooflab.model.e4m3); "fp32" as is."""
    if to == "fp32":
        return x
    if to == "e4m3":
        return e4m3.round_e4m3(xp, x)
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    if to == "tf32":
        r = (bits + xp.uint32(0x1000)) & xp.uint32(0xFFFFE000)
    elif to == "tf32_trunc":
        r = bits & xp.uint32(0xFFFFE000)
    elif to == "bf16":
        r = ((bits + xp.uint32(0x7FFF) + ((bits >> xp.uint32(16)) & xp.uint32(1))) >> xp.uint32(16)) << xp.uint32(16)
    else:
        raise ValueError(f"unknown rounding {to!r}")
    return r.astype(xp.uint32).view(xp.float32)


def bf16_bits(xp, x):
    """FP32 values as bf16 bit patterns (uint16), rounded to nearest even: what a BF16 kernel takes."""
    return (round_inputs(xp, x, "bf16").view(xp.uint32) >> xp.uint32(16)).astype(xp.uint16)


def operands(xp, a, b, inputs: str):
    """FP32 A (M x K) and B (K x N) as a rung of `inputs` takes them: "fp32" as they are, "bf16" bit
    patterns (uint16), or "fp8": e4m3 bit patterns (uint8) with B as B^T (N x K, contiguous), since FP8
    MMAs read both operands K-major and cuBLASLt's FP8 GEMM takes B that way too."""
    if inputs == "bf16":
        return bf16_bits(xp, a), bf16_bits(xp, b)
    if inputs == "fp8":
        return e4m3.to_bits(xp, a), xp.ascontiguousarray(e4m3.to_bits(xp, b).T)
    return a, b
