"""What an operation declares, so any kernel computing it can be checked, timed and placed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Normwise tolerances per precision: FP32 accumulation lands near 1e-6; TF32 inputs near 3e-4;
# BF16 inputs between 1e-3 and 1e-2 (see rooflab.model.check).
TOLERANCES = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 2e-2, "fp16": 1e-2}


@dataclass(frozen=True)
class Op:
    """An operation on device arrays (CuPy), described so a harness needs nothing else.

    inputs(xp, n, seed) -> tuple of device arrays (xp is CuPy), fresh random values for each seed
    reference(xp, *inputs) -> the exact result in float64 (a device array)
    out_shape(n) -> the output's shape (float32)
    args(inputs, out, n) -> the argument tuple for a raw CUDA kernel taking (inputs..., out, sizes...)
    flops(n), bytes(n) -> FLOPs and compulsory bytes (each input read once, the output written once)

    Example, a sum of squares reduction (one float out):
        Op("sumsq", inputs=lambda xp, n, seed: (xp.random.RandomState(seed).uniform(-1, 1, n[0], dtype="f4"),),
           reference=lambda xp, x: (x.astype("f8") ** 2).sum().reshape(1),
           out_shape=lambda n: (1,), args=lambda ins, out, n: (*ins, out, numpy.uint64(n[0])),
           flops=lambda n: 2.0 * n[0], bytes=lambda n: 4.0 * n[0] + 4)
    """

    name: str
    inputs: Callable
    reference: Callable
    out_shape: Callable
    args: Callable
    flops: Callable
    bytes: Callable
    tolerances: dict = field(default_factory=lambda: dict(TOLERANCES))
    describe: str = ""

    def tolerance(self, precision: str) -> float:
        return self.tolerances.get(precision, TOLERANCES["fp32"])
