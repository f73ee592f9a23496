"""The ceilings: one record per kernel, as BabelStream's benchmark table (label, weight = arrays
moved per element, so bytes = weight × 4 × n). The harnesses (rooflab.measure.bandwidth, .flops)
launch and verify them; the renderers read the labels and models from here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ceiling:
    kernel: str  # the function (or template instance) in `source`
    source: str  # kernel file inside the package
    what: str  # table label
    arrays: float  # float arrays moved per element: bytes = arrays × 4 × n
    per_thread: int = 1  # elements per thread per grid-stride step
    flops_per_element: float = 0.0
    verify: str = "copy"  # what the checked run must produce: copy | scale | sum | fill

    def bytes(self, n: int) -> float:
        return self.arrays * 4.0 * n

    def flops(self, n: int) -> float:
        return self.flops_per_element * n


COPY = "ceilings/copy.cu"
COPY_SCALAR = Ceiling("copy_scalar", COPY, "seed's scalar grid-stride loop", arrays=2)
COPY_FLOAT4 = Ceiling("copy_float4", COPY, "float4 (16-byte) grid-stride loop", arrays=2, per_thread=4)
COPY_UNROLL4 = Ceiling("copy_float4_unroll<4>", COPY, "float4, 4 loads in flight per thread", arrays=2,
                       per_thread=16)
SCALE = Ceiling("scale_float4", COPY, "y = a·x, float4 (the seed's P5 kernel, AI 0.125)", arrays=2, per_thread=4,
                flops_per_element=1.0, verify="scale")
READ = Ceiling("read_float4", COPY, "read only: float4 grid-stride sum, 16 float4 per thread", arrays=1,
               per_thread=64, verify="sum")
WRITE = Ceiling("write_float4", COPY, "write only: float4 fill, one float4 per thread", arrays=1, per_thread=4,
                verify="fill")
# Read-only streams with more bytes in flight: UNROLL 16-byte loads per thread per step, a grid
# sized to the SMs (waves of full occupancy, grid-stride), a load hint each.
READ_HINTS = {0: "plain", 1: "evict-first (__ldcs)", 2: "L1::no_allocate, read-only path"}


def _read_unroll(unroll: int, hint: int) -> Ceiling:
    return Ceiling(f"read_float4_unroll<{unroll}, {hint}>", COPY,
                   f"read only: {unroll} float4 loads in flight per thread, {READ_HINTS[hint]}", arrays=1,
                   per_thread=4 * unroll, verify="sum")


READ_VARIANTS = tuple(_read_unroll(u, h) for u, h in ((4, 0), (8, 0), (16, 0), (8, 1), (8, 2)))
READ_WAVES = (1, 2, 4)  # grids of this many full-occupancy waves

# the launch sweep (P4): every copy variant × block sizes × grids
SWEEP = (COPY_SCALAR, COPY_FLOAT4, COPY_UNROLL4)
BY_KERNEL = {c.kernel: c for c in (COPY_SCALAR, COPY_FLOAT4, COPY_UNROLL4, SCALE, READ, WRITE, *READ_VARIANTS)}


@dataclass(frozen=True)
class FmaChain:
    """Register-only FMA chains (P6): FLOPs = threads × iters × (16 × accumulators) × 2."""

    source: str = "ceilings/fma.cu"
    fma_per_chain_per_iter: int = 16  # must match FMA_PER_CHAIN_PER_ITER in fma.cu
    accumulators: tuple[int, ...] = (1, 2, 4, 8)  # the compiled instances

    def kernel(self, acc: int) -> str:
        return f"fma_chain<{acc}>"

    def flops(self, threads: int, iters: int, acc: int) -> float:
        return float(threads) * iters * self.fma_per_chain_per_iter * acc * 2


FMA = FmaChain()


@dataclass(frozen=True)
class TensorPeak:
    """Tensor-core compute roof (ceilings/tensor_peak.cu): long chains of MMAs on registers (mma.sync)
    or on shared-memory operands (wgmma), no global traffic in the loop.
    FLOPs = blocks × iters × flop_per_block_iter."""

    kernel: str
    precision: str  # the roof it measures: "bf16" | "tf32"
    unit: str  # "mma.sync" | "wgmma"
    flop_per_block_iter: float
    block: int
    blocks_per_sm: int
    requires_cc: tuple[int, int]
    exact_cc: bool = False  # wgmma: sm_90a code runs on cc 9.0 only
    options: tuple[str, ...] = ()
    source: str = "ceilings/tensor_peak.cu"

    def flops(self, blocks: int, iters: int) -> float:
        return self.flop_per_block_iter * blocks * iters


# mma.sync: 8 warps per block, 32 MMAs per warp per iteration (NACC × UNROLL), m16n8k16 BF16 = 4096 FLOP,
# m16n8k8 TF32 = 2048; wgmma: one warpgroup per block, 8 per iteration, m64n256k16 BF16 / m64n256k8 TF32
TENSOR_PEAKS = (
    TensorPeak("mma_peak_bf16", "bf16", "mma.sync", 8 * 32 * 4096, 256, 8, (8, 0)),
    TensorPeak("mma_peak_tf32", "tf32", "mma.sync", 8 * 32 * 2048, 256, 8, (8, 0)),
    TensorPeak("wgmma_peak_bf16", "bf16", "wgmma", 8 * 2 * 64 * 256 * 16, 128, 2, (9, 0), True, ("-arch=sm_90a",)),
    TensorPeak("wgmma_peak_tf32", "tf32", "wgmma", 8 * 2 * 64 * 256 * 8, 128, 2, (9, 0), True, ("-arch=sm_90a",)),
)
