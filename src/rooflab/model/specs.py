"""Published specifications of the GPUs rooflab knows by name (requirements P1, P2, P5, P10).

Every tensor rate here is DENSE: NVIDIA datasheets print the 2:4-sparsity figure first, which
is twice the dense one and not reachable by an ordinary GEMM. Bandwidths are in GB/s of 1e9 bytes.
The driver reports SMs and clocks at run time; this table supplies what it cannot (published
tensor-core rates, HBM bandwidth as marketed) and lets P1/P2/P5 run on a machine with no GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rooflab.errors import UsageError
from rooflab.model.arch import arch_name

# Order in which precisions are listed everywhere (widest first).
PRECISIONS: tuple[str, ...] = ("tf32", "fp16", "bf16", "fp8", "fp4")


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    arch: str
    cc: tuple[int, int]
    sms: int
    fp32_cores_per_sm: int
    boost_clock_mhz: float
    mem_bandwidth_gbs: float
    memory_gb: float
    # precision -> dense tensor-core TFLOP/s; absent = the hardware lacks it (e.g. BF16 on Turing)
    tensor_tflops: dict[str, float] = field(hash=False)
    source: str = ""
    aliases: tuple[str, ...] = ()
    memory_type: str = ""  # "HBM3e", "GDDR6", ...: how the roofline labels the memory slope

    @property
    def clock_hz(self) -> float:
        return self.boost_clock_mhz * 1e6

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.mem_bandwidth_gbs * 1e9

    @property
    def fp32_peak_flops(self) -> float:
        # FMA counts as 2 FLOP: SMs x lanes x 2 x clock
        return self.sms * self.fp32_cores_per_sm * 2 * self.clock_hz

    @property
    def fp32_peak_tflops(self) -> float:
        return self.fp32_peak_flops / 1e12

    @property
    def precisions(self) -> tuple[str, ...]:
        """Tensor precisions this GPU has, in PRECISIONS order."""
        return tuple(p for p in PRECISIONS if p in self.tensor_tflops)

    def tensor_flops(self, precision: str) -> float | None:
        tf = self.tensor_tflops.get(precision.lower())
        return None if tf is None else tf * 1e12

    def peak_flops(self, precision: str = "bf16") -> float:
        """Peak FLOP/s for 'fp32' (CUDA cores) or a tensor precision; UsageError if absent."""
        p = precision.lower()
        if p == "fp32":
            return self.fp32_peak_flops
        rate = self.tensor_flops(p)
        if rate is None:
            have = ", ".join(("fp32",) + self.precisions)
            raise UsageError(f"{self.key} has no {p} rate; it has: {have}")
        return rate

    def ridge(self, precision: str = "bf16") -> float:
        """Ridge point in FLOP/byte: peak FLOP/s over HBM bytes/s."""
        return self.peak_flops(precision) / self.bandwidth_bytes_per_s

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "name": self.name,
            "arch": self.arch,
            "cc": list(self.cc),
            "sms": self.sms,
            "fp32_cores_per_sm": self.fp32_cores_per_sm,
            "boost_clock_mhz": self.boost_clock_mhz,
            "mem_bandwidth_gbs": self.mem_bandwidth_gbs,
            "memory_gb": self.memory_gb,
            "fp32_peak_tflops": self.fp32_peak_tflops,
            "tensor_tflops": dict(self.tensor_tflops),
            "source": self.source,
            "aliases": list(self.aliases),
            "memory_type": self.memory_type,
        }


def _spec(key: str, name: str, cc: tuple[int, int], **kw) -> GpuSpec:
    return GpuSpec(key=key, name=name, arch=arch_name(cc), cc=cc, **kw)


_H100_SXM_TENSOR = {"tf32": 494.5, "fp16": 989.0, "bf16": 989.0, "fp8": 1979.0}
_A100_TENSOR = {"tf32": 156.0, "fp16": 312.0, "bf16": 312.0}

SPECS: tuple[GpuSpec, ...] = (
    _spec(
        "h100-sxm", "NVIDIA H100 SXM5 80GB", (9, 0),
        sms=132, fp32_cores_per_sm=128, boost_clock_mhz=1980, mem_bandwidth_gbs=3350, memory_gb=80, memory_type="HBM3",
        tensor_tflops=dict(_H100_SXM_TENSOR),
        source="H100 SXM datasheet; dense rates = half of the with-sparsity figures (BF16 1979 -> 989). "
               "The tensor rates imply ~1830 MHz, not the 1980 MHz boost that gives FP32 66.9 TFLOP/s.",
        aliases=("h100", "h100 sxm", "h100 sxm5", "h100-sxm5", "nvidia h100 80gb hbm3"),
    ),
    _spec(
        "h100-pcie", "NVIDIA H100 PCIe 80GB", (9, 0),
        sms=114, fp32_cores_per_sm=128, boost_clock_mhz=1755, mem_bandwidth_gbs=2000, memory_gb=80, memory_type="HBM2e",
        tensor_tflops={"tf32": 378.0, "fp16": 756.0, "bf16": 756.0, "fp8": 1513.0},
        source="H100 PCIe datasheet/whitepaper (HBM2e 2.0 TB/s); dense = half of sparsity figures.",
        aliases=("h100 pcie", "nvidia h100 pcie"),
    ),
    _spec(
        "h200", "NVIDIA H200 SXM 141GB", (9, 0),
        sms=132, fp32_cores_per_sm=128, boost_clock_mhz=1980, mem_bandwidth_gbs=4800, memory_gb=141, memory_type="HBM3e",
        tensor_tflops=dict(_H100_SXM_TENSOR),
        source="H200 datasheet: 4.8 TB/s HBM3e (device: 3201 MHz x 6016-bit -> 4.81 TB/s); same GH100 "
               "compute as H100 SXM, so the same dense tensor rates.",
        aliases=("h200", "h200 sxm", "nvidia h200"),
    ),
    _spec(
        "a100-40gb", "NVIDIA A100 SXM4 40GB", (8, 0),
        sms=108, fp32_cores_per_sm=64, boost_clock_mhz=1410, mem_bandwidth_gbs=1555, memory_gb=40, memory_type="HBM2",
        tensor_tflops=dict(_A100_TENSOR),
        source="A100 datasheet/whitepaper: 1555 GB/s HBM2; dense BF16/FP16 312, TF32 156 "
               "(sparsity figures are 2x). The 40GB PCIe card has the same rates.",
        aliases=("a100 40gb", "nvidia a100 sxm4 40gb", "nvidia a100 pcie 40gb"),
    ),
    _spec(
        "a100-80gb", "NVIDIA A100 SXM4 80GB", (8, 0),
        sms=108, fp32_cores_per_sm=64, boost_clock_mhz=1410, mem_bandwidth_gbs=2039, memory_gb=80, memory_type="HBM2e",
        tensor_tflops=dict(_A100_TENSOR),
        source="A100 80GB datasheet: SXM 2039 GB/s HBM2e (the seed's 'A100 BF16 312/2' = ~2 TB/s); "
               "dense rates as A100 40GB.",
        aliases=("a100", "a100 80gb", "a100 sxm4", "nvidia a100 sxm4 80gb"),
    ),
    _spec(
        "a100-80gb-pcie", "NVIDIA A100 PCIe 80GB", (8, 0),
        sms=108, fp32_cores_per_sm=64, boost_clock_mhz=1410, mem_bandwidth_gbs=1935, memory_gb=80, memory_type="HBM2e",
        tensor_tflops=dict(_A100_TENSOR),
        source="A100 80GB datasheet: PCIe 1935 GB/s (SXM is 2039); dense rates as A100.",
        aliases=("a100 80gb pcie", "nvidia a100 80gb pcie"),
    ),
    _spec(
        "b200", "NVIDIA B200 SXM 180GB", (10, 0),
        sms=148, fp32_cores_per_sm=128, boost_clock_mhz=1965, mem_bandwidth_gbs=8000, memory_gb=180, memory_type="HBM3e",
        tensor_tflops={"tf32": 1100.0, "fp16": 2250.0, "bf16": 2250.0, "fp8": 4500.0, "fp4": 9000.0},
        source="HGX B200 datasheet (1000 W), dense = half of sparsity (FP4 9000 as the seed uses; "
               "BF16 2250, TF32 1100). Boost clock APPROXIMATE: NVIDIA publishes none (third-party "
               "lists ~1965-1980 MHz); 180 GB usable of 192 GB; 148 SMs per public listings, "
               "not an NVIDIA document.",
        aliases=("b200", "nvidia b200"),
    ),
    _spec(
        "l4", "NVIDIA L4 24GB", (8, 9),
        sms=58, fp32_cores_per_sm=128, boost_clock_mhz=2040, mem_bandwidth_gbs=300, memory_gb=24, memory_type="GDDR6",
        tensor_tflops={"tf32": 60.0, "fp16": 121.0, "bf16": 121.0, "fp8": 242.5},
        source="L4 datasheet (7424 CUDA cores = 58 SMs, FP32 30.3 TFLOP/s); dense = half of sparsity "
               "(BF16 242 -> 121, FP8 485 -> 242.5, TF32 120 -> 60).",
        aliases=("l4", "nvidia l4"),
    ),
    _spec(
        "t4", "NVIDIA Tesla T4 16GB", (7, 5),
        sms=40, fp32_cores_per_sm=64, boost_clock_mhz=1590, mem_bandwidth_gbs=320, memory_gb=16, memory_type="GDDR6",
        tensor_tflops={"fp16": 65.0},
        source="T4 datasheet: FP16 mixed precision 65 TFLOP/s (no sparsity on Turing); "
               "Turing has no BF16, TF32 or FP8 tensor cores.",
        aliases=("t4", "tesla t4", "nvidia t4"),
    ),
    _spec(
        "rtx-4090", "NVIDIA GeForce RTX 4090 24GB", (8, 9),
        sms=128, fp32_cores_per_sm=128, boost_clock_mhz=2520, mem_bandwidth_gbs=1008, memory_gb=24, memory_type="GDDR6X",
        tensor_tflops={"tf32": 82.6, "fp16": 165.2, "bf16": 165.2, "fp8": 330.3},
        source="Ada whitepaper appendix, dense with FP32 accumulate (GeForce runs FP16/FP8 with FP16 "
               "accumulate at 2x: 330.3 / 660.6).",
        aliases=("rtx 4090", "4090", "geforce rtx 4090", "nvidia geforce rtx 4090"),
    ),
)

_BY_KEY: dict[str, GpuSpec] = {s.key: s for s in SPECS}

# Vendor words that say nothing about which part it is.
_NOISE = {"nvidia", "tesla", "geforce"}


def _tokens(name: str) -> tuple[str, ...]:
    words = re.split(r"[\s_\-/]+", name.strip().lower())
    return tuple(w for w in words if w and w not in _NOISE)


# Device-name rules: (key, model token, required extra tokens, allowed extra tokens).
# Every other token must be known, so an "H100 NVL", "L40S" or "RTX 4090 D" (different parts)
# is not mistaken for a listed one. First match wins.
_RULES: tuple[tuple[str, str, frozenset[str], frozenset[str]], ...] = tuple(
    (k, m, frozenset(req), frozenset(ok))
    for k, m, req, ok in (
        ("h100-pcie", "h100", {"pcie"}, {"80gb", "hbm2e"}),
        ("h100-sxm", "h100", set(), {"sxm", "sxm5", "80gb", "hbm3"}),
        ("h200", "h200", set(), {"sxm", "sxm5", "141gb", "hbm3e"}),
        ("a100-40gb", "a100", {"40gb"}, {"sxm", "sxm4", "pcie"}),
        ("a100-80gb-pcie", "a100", {"80gb", "pcie"}, set()),
        ("a100-40gb", "a100", {"pcie"}, set()),
        ("a100-80gb", "a100", set(), {"sxm", "sxm4", "80gb"}),
        ("b200", "b200", set(), {"sxm", "sxm6", "180gb", "192gb", "hbm3e"}),
        ("l4", "l4", set(), {"24gb"}),
        ("t4", "t4", set(), {"16gb"}),
        ("rtx-4090", "4090", {"rtx"}, {"24gb"}),
    )
)


def match_device_name(name: str) -> GpuSpec | None:
    """The table row for a key, alias or driver device name ("NVIDIA H100 80GB HBM3"), or None."""
    toks = _tokens(name)
    if not toks:
        return None
    for spec in SPECS:
        if toks == _tokens(spec.key) or any(toks == _tokens(a) for a in spec.aliases):
            return spec
    have = set(toks)
    for key, model, required, allowed in _RULES:
        if model in have and required <= have and have - {model} <= required | allowed:
            return _BY_KEY[key]
    return None


def find_spec(name: str) -> GpuSpec:
    """Like match_device_name, but a name that matches nothing is a UsageError."""
    spec = match_device_name(name)
    if spec is None:
        raise UsageError(f"unknown GPU {name!r}; known: {', '.join(_BY_KEY)}")
    return spec
