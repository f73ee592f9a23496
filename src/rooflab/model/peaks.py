"""Theoretical peaks from a spec sheet (P1) and tensor-core arithmetic worked backwards (P2)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from rooflab.model.specs import GpuSpec

# Dense 16-bit (FP16/BF16, FP32 accumulate) tensor-core FMA per SM per clock, by compute capability.
# Whitepapers give per-tensor-core or per-SM figures; checked against each published dense rate:
# rate / (SMs x 2 x this) must come out at a plausible clock.
_TENSOR_FMA_PER_SM_CYCLE: dict[tuple[int, int], tuple[int, str]] = {
    (7, 0): (512, "Volta whitepaper: 8 tensor cores/SM x 64 FMA/clock"),
    (7, 5): (512, "Turing whitepaper: 8 tensor cores/SM x 64 FP16 FMA/clock"),
    (8, 0): (1024, "A100 whitepaper: 4 tensor cores/SM x 256 FMA/clock"),
    (8, 6): (512, "GA10x whitepaper (pro parts; GeForce halves it with FP32 accumulate)"),
    (8, 9): (512, "Ada whitepaper (L4/L40 rates; GeForce halves it with FP32 accumulate)"),
    (9, 0): (2048, "H100 whitepaper per-SM table: 2x A100 clock for clock (A100 1024)"),
    (10, 0): (4096, "UNCERTAIN: not published per SM; derived as 2x Hopper, which puts B200's "
                    "2250 TFLOP/s at ~1.86 GHz"),
}

# Parts whose rate differs from their architecture's (the number NVIDIA prints uses FP32 accumulate).
_PRODUCT_TENSOR_FMA: dict[str, tuple[int, str]] = {
    "rtx-4090": (256, "GeForce Ada: FP16/BF16 with FP32 accumulate is half the FP16-accumulate rate"),
}

# Throughput relative to 16-bit: narrower operands pack more products into the same datapath.
_PRECISION_SCALE: dict[str, float] = {"tf32": 0.5, "fp16": 1.0, "bf16": 1.0, "fp8": 2.0, "fp4": 4.0}


def _fmt_rate(flops: float) -> str:
    return f"{flops / 1e12:,.2f} TFLOP/s"


@dataclass(frozen=True)
class FP32Peak:
    sms: int
    cores_per_sm: int
    clock_hz: float
    flops: float  # SMs x cores x 2 x clock
    flops_forgot_fma: float  # the same without the factor 2 for FMA
    error_pct: float  # how far the forgot-FMA figure is below the right one
    formula: str

    @property
    def tflops(self) -> float:
        return self.flops / 1e12

    def to_dict(self) -> dict:
        return asdict(self)


def fp32_peak(sms: int, cores_per_sm: int, clock_hz: float) -> FP32Peak:
    flops = sms * cores_per_sm * 2 * clock_hz
    forgot = sms * cores_per_sm * clock_hz
    formula = (
        f"{sms} SMs x {cores_per_sm} FP32 cores/SM x 2 FLOP/FMA x {clock_hz / 1e9:.3f} GHz"
        f" = {_fmt_rate(flops)}"
    )
    return FP32Peak(sms, cores_per_sm, clock_hz, flops, forgot, (flops - forgot) / flops * 100.0 if flops else 0.0,
                    formula)


def implied_clock_hz(rate: float, sms: int, flop_per_sm_per_cycle: float) -> float:
    """The clock at which sms x flop_per_sm_per_cycle reaches the rate."""
    return rate / (sms * flop_per_sm_per_cycle)


def nominal_tensor_fma(
    cc: tuple[int, int], precision: str = "bf16", key: str | None = None
) -> tuple[float, str] | None:
    """(dense tensor FMA/SM/cycle, where the figure comes from) or None when not known."""
    entry = _PRODUCT_TENSOR_FMA.get(key or "") or _TENSOR_FMA_PER_SM_CYCLE.get(tuple(cc))
    scale = _PRECISION_SCALE.get(precision.lower())
    if entry is None or scale is None:
        return None
    return entry[0] * scale, entry[1]


@dataclass(frozen=True)
class TensorArithmetic:
    precision: str
    rate_flops: float
    sms: int
    clock_hz: float
    flop_per_cycle: float
    flop_per_sm_per_cycle: float
    fma_per_sm_per_cycle: float
    cuda_core_fma_per_sm_per_cycle: int  # one FMA per FP32 lane per clock
    ratio: float  # tensor FMA/SM/cycle over CUDA-core FMA/SM/cycle
    nominal_fma_per_sm_per_cycle: float | None = None
    nominal_source: str = ""
    # Clock that the published rate implies with the nominal FMA/SM/cycle; NVIDIA computes tensor
    # rates at a lower clock than the boost clock used for FP32 on Hopper.
    implied_clock_hz: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def tensor_arithmetic(
    rate_flops: float,
    sms: int,
    clock_hz: float,
    fp32_cores_per_sm: int,
    precision: str = "bf16",
    *,
    cc: tuple[int, int] | None = None,
    key: str | None = None,
    nominal_fma_per_sm_per_cycle: float | None = None,
) -> TensorArithmetic:
    """Work a published dense rate backwards to per-cycle and per-SM figures (seed 002, ex. 1.3)."""
    per_cycle = rate_flops / clock_hz
    per_sm = per_cycle / sms
    fma_sm = per_sm / 2  # FMA = 2 FLOP
    source = ""
    if nominal_fma_per_sm_per_cycle is None and cc is not None:
        found = nominal_tensor_fma(cc, precision, key)
        if found is not None:
            nominal_fma_per_sm_per_cycle, source = found
    elif nominal_fma_per_sm_per_cycle is not None:
        source = "given"
    implied = (
        implied_clock_hz(rate_flops, sms, 2 * nominal_fma_per_sm_per_cycle)
        if nominal_fma_per_sm_per_cycle
        else None
    )
    return TensorArithmetic(
        precision=precision.lower(),
        rate_flops=rate_flops,
        sms=sms,
        clock_hz=clock_hz,
        flop_per_cycle=per_cycle,
        flop_per_sm_per_cycle=per_sm,
        fma_per_sm_per_cycle=fma_sm,
        cuda_core_fma_per_sm_per_cycle=fp32_cores_per_sm,
        ratio=fma_sm / fp32_cores_per_sm,
        nominal_fma_per_sm_per_cycle=nominal_fma_per_sm_per_cycle,
        nominal_source=source,
        implied_clock_hz=implied,
    )


@dataclass(frozen=True)
class SpecPeaks:
    key: str
    name: str
    fp32: FP32Peak
    tensor: TensorArithmetic | None  # BF16, or FP16 where the GPU has no BF16 (Turing)
    by_precision: dict[str, TensorArithmetic] = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "name": self.name,
            "fp32": self.fp32.to_dict(),
            "tensor": None if self.tensor is None else self.tensor.to_dict(),
            "by_precision": {p: t.to_dict() for p, t in self.by_precision.items()},
        }


def spec_peaks(spec: GpuSpec) -> SpecPeaks:
    """P1 and P2 for one row of the spec table, at its published boost clock."""
    fp32 = fp32_peak(spec.sms, spec.fp32_cores_per_sm, spec.clock_hz)
    by_prec = {
        p: tensor_arithmetic(
            spec.tensor_flops(p), spec.sms, spec.clock_hz, spec.fp32_cores_per_sm, p,
            cc=spec.cc, key=spec.key,
        )
        for p in spec.precisions
    }
    primary = by_prec.get("bf16") or by_prec.get("fp16")
    return SpecPeaks(spec.key, spec.name, fp32, primary, by_prec)
