"""The ceilings, as BabelStream's benchmark table: one record per kernel file (ceilings/*.cu) with
its entries, launch geometry, the constants it is built with (passed as -D) and its FLOP and byte
model. Every harness (rooflab.measure: bandwidth, read_stream, flops, tensor_peaks, memory, links,
profile_target) launches and models a ceiling from here; the record types are in .record."""

from __future__ import annotations

from rooflab.ceilings.record import (
    FmaChains,
    FmaProfile,
    KernelFile,
    L2Walk,
    MmaShape,
    PeerCopy,
    SharedStream,
    SharedVariant,
    Stream,
    StreamKernels,
    TensorPeak,
    TensorPeakKernels,
    resident_wave,
)

# ------------------------------------------------------------------- copy.cu: the HBM roof (P3-P5)

COPY_SCALAR = Stream("copy_scalar", "seed's scalar grid-stride loop", arrays=2,
                     profile_blocks_per_sm=4)  # profiled at the seed's launch: 4 blocks of 256 per SM
COPY_FLOAT4 = Stream("copy_float4", "float4 (16-byte) grid-stride loop", arrays=2, per_thread=4)
COPY_UNROLL4 = Stream("copy_float4_unroll<4>", "float4, 4 loads in flight per thread", arrays=2, per_thread=16)
SCALE = Stream("scale_float4", "y = a·x, float4 (the seed's P5 kernel, AI 0.125)", arrays=2, per_thread=4,
               flops_per_element=1.0, verify="scale")
READ = Stream("read_float4", "read only: float4 grid-stride sum, 16 float4 per thread", arrays=1,
              per_thread=64, verify="sum")
WRITE = Stream("write_float4", "write only: float4 fill, one float4 per thread", arrays=1, per_thread=4,
               verify="fill", block=128)
# Read-only streams with more bytes in flight: UNROLL 16-byte loads per thread per step, a grid
# sized to the SMs (waves of full occupancy, grid-stride), a load hint each.
READ_HINTS = {0: "plain", 1: "evict-first (__ldcs)", 2: "L1::no_allocate, read-only path"}


def _read_unroll(unroll: int, hint: int) -> Stream:
    return Stream(f"read_float4_unroll<{unroll}, {hint}>",
                  f"read only: {unroll} float4 loads in flight per thread, {READ_HINTS[hint]}", arrays=1,
                  per_thread=4 * unroll, verify="sum")


def _read_batched(unroll: int, hint: int) -> Stream:
    return Stream(f"read_float4_batched<{unroll}, {hint}>",
                  f"read only: {unroll} float4 loads a step, the next step's issued before this one's sums, "
                  f"{READ_HINTS[hint]}", arrays=1, per_thread=4 * unroll, verify="sum")


READ_VARIANTS = (*(_read_unroll(u, h) for u, h in ((4, 0), (8, 0), (16, 0), (8, 1), (8, 2))),
                 *(_read_batched(u, 0) for u in (8, 16)))
SWEEP = (COPY_SCALAR, COPY_FLOAT4, COPY_UNROLL4)  # the launch sweep (P4): every copy variant × blocks × grids

COPY = StreamKernels(source="ceilings/copy.cu",
                     entries=(COPY_SCALAR, COPY_FLOAT4, COPY_UNROLL4, SCALE, READ, WRITE, *READ_VARIANTS),
                     read_waves=(1, 2, 4))
BY_KERNEL = {c.kernel: c for c in COPY.entries}

# ------------------------------------------------------- fma*.cu: the CUDA-core compute roofs (P6)

FMA = FmaChains(source="ceilings/fma.cu", defines=(("FMA_PER_CHAIN_PER_ITER", 16),), entry="fma_chain",
                precision="fp32", flop_per_fma=2, accumulators=(1, 2, 4, 8),
                profile=FmaProfile(blocks_per_sm=4, block=256, acc=8, iters=4096))
FMA64 = FmaChains(source="ceilings/fma64.cu", defines=(("FMA_PER_CHAIN_PER_ITER", 16), ("FMA_BLOCK", 256)),
                  entry="dfma_chain", precision="fp64", flop_per_fma=2, accumulators=(8,))
FMA16 = FmaChains(source="ceilings/fma16.cu", defines=(("FMA_PER_CHAIN_PER_ITER", 16), ("FMA_BLOCK", 256)),
                  entry="hfma2_chain", precision="fp16", flop_per_fma=4, accumulators=(8,))  # HFMA2: 2 halves

# ------------------------------------------------------------- l2.cu, smem.cu: the on-chip levels

L2 = L2Walk(source="ceilings/l2.cu", defines=(("L2_UNROLL", 4), ("L2_BLOCK", 256)))
SHARED = SharedStream(source="ceilings/smem.cu", defines=(("SMEM_F4", 512), ("SMEM_UNROLL", 4), ("SMEM_BLOCK", 256)),
                      variant_list=(
                          ("conflict-free", SharedVariant(1, 128, 255, 4, "lanes 16 B apart: each quarter-warp "
                                                                          "covers the 32 banks once")),
                          ("32-way conflict", SharedVariant(8, 4, 127, 32, "lanes 128 B apart: all 32 lanes in "
                                                                           "banks 0-3, 32 rows"))))

# ----------------------------------------------------------- tensor_peak.cu: the tensor-core roofs

# mma.sync: MMA_BLOCK / 32 warps per block, NACC × UNROLL MMAs per warp per iteration, m16n8k16 BF16 = 4096 FLOP,
# m16n8k8 TF32 = 2048; wgmma: one warpgroup per block, WG_UNROLL per iteration, m64n256k16 BF16 /
# m64n256k8 TF32
TENSOR = TensorPeakKernels(
    source="ceilings/tensor_peak.cu", defines=(("NACC", 8), ("UNROLL", 4), ("MMA_BLOCK", 256), ("WG_UNROLL", 8)),
    shapes=(MmaShape("mma_peak_bf16", "bf16", "mma.sync", 2 * 16 * 8 * 16, 8, (8, 0)),
            MmaShape("mma_peak_tf32", "tf32", "mma.sync", 2 * 16 * 8 * 8, 8, (8, 0)),
            MmaShape("wgmma_peak_bf16", "bf16", "wgmma", 2 * 64 * 256 * 16, 2, (9, 0), True, ("-arch=sm_90a",)),
            MmaShape("wgmma_peak_tf32", "tf32", "wgmma", 2 * 64 * 256 * 8, 2, (9, 0), True, ("-arch=sm_90a",))))
TENSOR_PEAKS = TENSOR.peaks

# ------------------------------------------------------------ peer_copy.cu: the GPU-to-GPU links

PEER_COPY = PeerCopy(source="ceilings/peer_copy.cu", defines=(("PEER_UNROLL", 4),))

# one record per kernel file
KERNELS: tuple[KernelFile, ...] = (COPY, FMA, FMA64, FMA16, L2, SHARED, TENSOR, PEER_COPY)

__all__ = ["BY_KERNEL", "COPY", "COPY_FLOAT4", "COPY_SCALAR", "COPY_UNROLL4", "FMA", "FMA16", "FMA64", "KERNELS",
           "L2", "PEER_COPY", "READ", "READ_HINTS", "READ_VARIANTS", "SCALE", "SHARED", "SWEEP", "TENSOR",
           "TENSOR_PEAKS", "WRITE", "FmaChains", "FmaProfile", "KernelFile", "L2Walk", "MmaShape", "PeerCopy", "SharedStream",
           "SharedVariant", "Stream", "StreamKernels", "TensorPeak", "TensorPeakKernels", "resident_wave"]
