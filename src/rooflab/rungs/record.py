"""What a GEMM rung declares: its kernel, launch geometry, traffic model and story.

Each rung lives in rooflab/rungs/: NAME.cu beside NAME.py, which holds one
`RUNG = Rung(...)`. The harness (rooflab.measure.gemm) only reads these records.
C (M x N) = A (M x K) * B (K x N), row-major FP32; kernels take (A, B, C, M, N, K).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Grid = Callable[[int, int, int], tuple[int, int, int]]


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Rung:
    name: str  # CLI name, e.g. "tiled32"
    title: str  # table label
    stage: str  # where it sits on the seed's ladder
    explain: str  # what the rung changes and why, in one paragraph (no numbers)
    # Traffic model: global-memory element loads per FMA (2 for one A and one B
    # load per multiply-add; 2/TILE when each staged element serves TILE FMAs).
    # None means "compulsory traffic only" (each matrix moved once: cuBLAS).
    loads_per_fma: float | None
    source: str | None = None  # kernel file inside the package, e.g. "rungs/naive.cu"
    kernel: str | None = None  # function or template instance, e.g. "mm_tiled<32>"
    block: tuple[int, int, int] = (16, 16, 1)
    grid: Grid | None = None
    precision: str = "fp32"  # which roof judges it: "fp32" CUDA cores, "tf32", "bf16" tensor cores
    normwise_tol: float = 1e-5  # FP32 accumulation over K=4096 lands near 1e-6
    launcher: Callable | None = None  # custom (library) rungs: make_launch(m, n, k) -> launch(a, b, c)
    options: tuple[str, ...] = ()

    def flops(self, m: int, n: int, k: int) -> float:
        return 2.0 * m * n * k

    def model(self, m: int, n: int, k: int) -> dict:
        """Modelled global-memory traffic and arithmetic intensity."""
        fmas = float(m) * n * k
        if self.loads_per_fma is None:
            loads = float(m) * k + float(k) * n
        else:
            loads = fmas * self.loads_per_fma
        bytes_moved = 4.0 * (loads + float(m) * n)  # + one write of C
        return {
            "global_loads": loads,
            "flop_per_load": self.flops(m, n, k) / loads,
            "bytes": bytes_moved,
            "ai_flop_per_byte": self.flops(m, n, k) / bytes_moved,
            "basis": "compulsory traffic (each matrix once)" if self.loads_per_fma is None
            else f"{self.loads_per_fma:g} global loads per FMA, no cache reuse counted",
        }
