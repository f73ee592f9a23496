"""The record types of the ceiling kernels: one record per kernel file, holding where the file is,
its entry points, their launch geometry, the constants the file is built with and the FLOP and
byte model of one launch. The constants reach the kernel as -D options, so the model and the
machine code cannot disagree; each .cu repeats them only as `#ifndef X / #define X default` so
that nvcc compiles it alone (a test holds the two to the same values)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def resident_wave(sm_count: int, threads_per_sm: int, block: int) -> int:
    """Blocks of `block` threads in one full-occupancy wave (the grids the harnesses size in waves)."""
    return sm_count * max(1, threads_per_sm // block)


@dataclass(frozen=True, kw_only=True)
class KernelFile:
    """A ceiling kernel file and the constants it is compiled with."""

    source: str  # inside the package
    defines: tuple[tuple[str, int], ...] = ()  # (macro, value): passed as -Dmacro=value

    def define(self, name: str) -> int:
        return dict(self.defines)[name]

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(f"-D{k}={v}" for k, v in self.defines)

    def with_defines(self, **values: int) -> KernelFile:
        """The same file built with other constants (what a changed record compiles)."""
        unknown = set(values) - set(dict(self.defines))
        if unknown:
            raise KeyError(f"{self.source} has no constants {sorted(unknown)}")
        return replace(self, defines=tuple((k, values.get(k, v)) for k, v in self.defines))


# ---------------------------------------------------------------------------------------- copy.cu


@dataclass(frozen=True)
class Stream:
    """One entry of copy.cu, as BabelStream's table: label, arrays moved per element (bytes =
    arrays × 4 × n), elements per thread per grid-stride step, and what its checked run produces."""

    kernel: str  # the function (or template instance)
    what: str  # table label
    arrays: float  # float arrays moved per element: bytes = arrays × 4 × n
    per_thread: int = 1  # elements per thread per grid-stride step
    flops_per_element: float = 0.0
    verify: str = "copy"  # what the checked run must produce: copy | scale | sum | fill
    block: int = 256
    profile_blocks_per_sm: int = 0  # the grid Nsight Compute profiles; 0: one grid-stride step per thread

    def bytes(self, n: int) -> float:
        return self.arrays * 4.0 * n

    def flops(self, n: int) -> float:
        return self.flops_per_element * n

    def grid(self, n: int, block: int | None = None) -> int:
        """One grid-stride step per thread."""
        return _cdiv(_cdiv(n, self.per_thread), block or self.block)

    def profile_grid(self, n: int, sm_count: int) -> int:
        return sm_count * self.profile_blocks_per_sm if self.profile_blocks_per_sm else self.grid(n)


@dataclass(frozen=True, kw_only=True)
class StreamKernels(KernelFile):
    entries: tuple[Stream, ...]
    read_waves: tuple[int, ...] = ()  # the unrolled reads run at grids of this many full-occupancy waves

    def entry(self, kernel: str) -> Stream:
        return next(e for e in self.entries if e.kernel == kernel)


# ------------------------------------------------------------------------ fma.cu, fma64.cu, fma16.cu


class FmaProfile(NamedTuple):
    blocks_per_sm: int
    block: int
    acc: int
    iters: int


@dataclass(frozen=True, kw_only=True)
class FmaChains(KernelFile):
    """Register-only FMA chains: each of `acc` accumulators gets FMA_PER_CHAIN_PER_ITER FMAs per
    iteration; FLOPs = threads × iters × FMA_PER_CHAIN_PER_ITER × acc × flop_per_fma."""

    entry: str  # the kernel template
    precision: str
    flop_per_fma: int  # 2; 4 for HFMA2 (two halves)
    accumulators: tuple[int, ...]  # the compiled instances
    profile: FmaProfile | None = None  # the launch Nsight Compute profiles

    @property
    def block(self) -> int | None:
        """Fixed by __launch_bounds__(FMA_BLOCK); None where the harness sweeps it."""
        return dict(self.defines).get("FMA_BLOCK")

    @property
    def fma_per_chain_per_iter(self) -> int:
        return self.define("FMA_PER_CHAIN_PER_ITER")

    def kernel(self, acc: int) -> str:
        return f"{self.entry}<{acc}>"

    def fma_per_iter(self, acc: int) -> int:
        return self.fma_per_chain_per_iter * acc

    def flops(self, threads: int, iters: int, acc: int) -> float:
        return float(threads) * iters * self.fma_per_iter(acc) * self.flop_per_fma


# ---------------------------------------------------------------------------------------- l2.cu


@dataclass(frozen=True, kw_only=True)
class L2Walk(KernelFile):
    """l2.cu: every thread walks the footprint with L2_UNROLL 16-byte loads per iteration."""

    read: str = "l2_read"
    copy: str = "l2_copy"

    @property
    def unroll(self) -> int:
        return self.define("L2_UNROLL")

    @property
    def block(self) -> int:
        return self.define("L2_BLOCK")

    def visits(self, threads: int, iters: int) -> int:
        """float4 elements one launch visits."""
        return threads * self.unroll * iters

    def read_bytes(self, threads: int, iters: int) -> float:
        return 16.0 * self.visits(threads, iters)

    def copy_bytes(self, threads: int, iters: int) -> float:
        return 32.0 * self.visits(threads, iters)  # 16 read + 16 written per visit


# ---------------------------------------------------------------------------------------- smem.cu


class SharedVariant(NamedTuple):
    lane_stride: int  # 16-byte words between neighbouring lanes
    step: int  # the per-iteration base step and wrap mask the host passes
    mask: int
    wavefronts: int  # per LDS.128
    how: str


@dataclass(frozen=True, kw_only=True)
class SharedStream(KernelFile):
    """smem.cu: SMEM_UNROLL LDS.128 per thread per iteration over a buffer of SMEM_F4 uint4."""

    entry: str = "smem_read"
    variant_list: tuple[tuple[str, SharedVariant], ...] = ()

    @property
    def variants(self) -> dict[str, SharedVariant]:
        return dict(self.variant_list)

    @property
    def unroll(self) -> int:
        return self.define("SMEM_UNROLL")

    @property
    def buffer_f4(self) -> int:
        return self.define("SMEM_F4")

    @property
    def block(self) -> int:
        return self.define("SMEM_BLOCK")

    def kernel(self, lane_stride: int) -> str:
        return f"{self.entry}<{lane_stride}>"

    def bytes(self, threads: int, iters: int) -> float:
        return 16.0 * threads * self.unroll * iters


# --------------------------------------------------------------------------------- tensor_peak.cu


@dataclass(frozen=True)
class TensorPeak:
    """One tensor-core roof kernel as built: FLOPs = blocks × iters × flop_per_block_iter."""

    kernel: str
    precision: str  # the roof it measures: "bf16" | "tf32"
    unit: str  # "mma.sync" | "wgmma"
    flop_per_block_iter: float
    block: int
    blocks_per_sm: int
    requires_cc: tuple[int, int]
    exact_cc: bool = False  # wgmma: sm_90a code runs on cc 9.0 only
    options: tuple[str, ...] = ()
    source: str = ""

    def flops(self, blocks: int, iters: int) -> float:
        return self.flop_per_block_iter * blocks * iters


WARPGROUP = 128  # threads of one wgmma issuer: a wgmma block is one warpgroup


@dataclass(frozen=True)
class MmaShape:
    kernel: str
    precision: str
    unit: str  # mma.sync: NACC × UNROLL per warp per iteration, MMA_BLOCK threads; wgmma: WG_UNROLL per warpgroup
    flop_per_instr: int
    blocks_per_sm: int
    requires_cc: tuple[int, int]
    exact_cc: bool = False
    arch: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TensorPeakKernels(KernelFile):
    shapes: tuple[MmaShape, ...]

    def block(self, s: MmaShape) -> int:
        return WARPGROUP if s.unit == "wgmma" else self.define("MMA_BLOCK")

    def per_block_iter(self, s: MmaShape) -> float:
        if s.unit == "wgmma":
            return float(self.define("WG_UNROLL") * s.flop_per_instr)
        return float(self.block(s) // 32 * self.define("NACC") * self.define("UNROLL") * s.flop_per_instr)

    @property
    def peaks(self) -> tuple[TensorPeak, ...]:
        return tuple(TensorPeak(s.kernel, s.precision, s.unit, self.per_block_iter(s), self.block(s), s.blocks_per_sm,
                                s.requires_cc, s.exact_cc, (*s.arch, *self.options), self.source)
                     for s in self.shapes)


# ---------------------------------------------------------------------------------- peer_copy.cu


@dataclass(frozen=True, kw_only=True)
class PeerCopy(KernelFile):
    """peer_copy.cu: PEER_UNROLL 16-byte loads in flight per thread; bytes = the copy size."""

    entry: str = "peer_copy_uint4"

    @property
    def unroll(self) -> int:
        return self.define("PEER_UNROLL")

    @staticmethod
    def elements(nbytes: int) -> int:
        return nbytes // 16

    @staticmethod
    def grid(sm_count: int, threads_per_sm: int, block: int) -> int:
        """One resident wave."""
        return resident_wave(sm_count, threads_per_sm, block)
