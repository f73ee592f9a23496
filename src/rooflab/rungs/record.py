"""What a GEMM rung declares: its kernel, launch geometry, traffic model, checks and which rungs
it is compared with.

Each rung lives in rooflab/rungs/: NAME.cu beside NAME.py, which holds one
`RUNG = Rung(...)`. Everything else derives from these records: the harness
(rooflab.measure.gemm) launches and checks them, the CLI's help lists them, the
ratio table and the climb paragraphs (rooflab.report.climb) are computed from them.
C (M x N) = A (M x K) * B (K x N), row-major FP32; kernels take (A, B, C, M, N, K).

Records are pure data (no CUDA import), so the renderers may read them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rooflab.model import tolerance

Grid = Callable[[int, int, int], tuple[int, int, int]]
INPUT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def launch_grid(grid: Grid, m: int, n: int, k: int, sms: Callable[[], int]) -> tuple[int, ...]:
    """The grid of one launch. A persistent kernel's grid function also takes the GPU's SM count
    (a keyword `sms`, asked of `sms()` only then): it launches one block an SM, not one a tile."""
    import inspect  # noqa: PLC0415

    try:
        takes_sms = "sms" in inspect.signature(grid).parameters
    except (TypeError, ValueError):
        takes_sms = False
    return tuple(grid(m, n, k, sms=sms()) if takes_sms else grid(m, n, k))


def persistent_grid(cluster: int, bm: int = 128, bn: int = 256, swap_ab: bool = False) -> Grid:
    """The grid of a persistent kernel: at most one block an SM, in whole clusters of `cluster` along M;
    the fewest clusters that take as many rounds of bm x bn tiles as all of them would (at N = 8192,
    64 clusters of 16 tiles each, where 66 would leave the last round half empty and draw the power of
    all SMs through it). swap_ab: the kernel tiles C^T (bm columns of C x bn rows)."""
    def grid(m, n, k, sms=132, cluster=cluster, bm=bm, bn=bn):
        rows, cols = (n, m) if swap_ab else (m, n)
        tiles = cdiv(cdiv(rows, bm), cluster) * cdiv(cols, bn)
        most = max(1, sms // cluster)
        return (cluster * (tiles if tiles <= most else cdiv(tiles, cdiv(tiles, most))), 1, 1)
    return grid


def persistent_smem_bytes(stages: int, parts: int = 1, bn: int = 256, tma_store: bool = True, c_bufs: int = 2,
                          split_a: bool = False, bm: int = 128) -> int:
    """TP_SMEM / TP_STORE_SMEM_BUFS(parts, bn, stages, c_bufs) of include/tma_persistent.cuh: per stage parts x
    (bm rows of A, 64 a consumer warpgroup, + bn rows of B) of 128 bytes, + 1024 for aligning the ring, + (TMA
    store) c_bufs 64 x 32 FP32 boxes of C for each of 2 consumers; split_a (TP_SPLIT_STORE_SMEM): + a residual of
    the stage's bn / 64 boxes of A a stage."""
    box = 64 * 128
    residual = stages * (bn // 64) * box if split_a else 0
    return stages * parts * (bm + bn) * 128 + residual + 1024 + (2 * c_bufs * box if tma_store else 0)


def spread_store(parts: int) -> str:
    """The label of include/tma_persistent.cuh's SPREAD_STORE: a tile's C leaves from a copy of its accumulator,
    a part under each of the next tile's first k-tiles."""
    return f"C stored from registers, a copy in {parts} parts under the next tile's MMAs"


@dataclass(frozen=True)
class Variant:
    """One launch configuration of a tunable rung: a template instance and its geometry."""

    label: str  # e.g. "128x128x8 w64x32 t8x8 s2"
    kernel: str
    block: tuple[int, int, int]
    grid: Grid | None
    shared_mem: int = 0
    # a library rung's configuration (a Triton tile, rooflab.rungs.triton.Config.spec), replacing the rung's own
    config: str | None = None
    # the operands' staging where this kernel takes them otherwise than the rung's default (rooflab.cuda.staging)
    staging: str | None = None


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
    # kernel file: inside the package ("rungs/naive.cu") or an absolute path (a user's kernel)
    source: str | None = None
    kernel: str | None = None  # function or template instance, e.g. "mm_tiled<32>"
    block: tuple[int, int, int] = (16, 16, 1)
    grid: Grid | None = None
    precision: str = "fp32"  # which roof judges it: "fp32" CUDA cores; "tf32", "bf16", "3xtf32" tensor cores
    # None: from the precision's error model at the checked K (rooflab.model.tolerance); a number
    # only where the model cannot know the kernel's rounding (a library that does not document it)
    normwise_tol: float | None = None
    # what A and B are: "fp32" arrays, "bf16" (uint16 bit patterns) or "fp8" (e4m3 bit patterns, B as B^T)
    inputs: str = "fp32"
    # the check's reference: the float64 product of the inputs rounded as the kernel reads them
    # ("tf32", "bf16"), so the check measures the kernel and not the input rounding; the error
    # against the FP32 inputs is reported beside it. "fp32": no rounding (3xTF32 must meet it).
    rounding: str = "fp32"
    requires_cc: tuple[int, int] = (7, 5)  # oldest GPU it runs on; older ones skip it, saying why
    requires_what: str = ""  # what the oldest GPU brought that the rung needs ("FP8 tensor cores"), for the skip
    exact_cc: bool = False  # architecture-specific code (sm_90a): runs on requires_cc only
    aligned: int = 1  # M, N and K must be multiples of this (1 = any); a rung that cannot run says so
    # tunable rungs: the configurations `rooflab tune` searches; the first is the default, and the
    # winner for a GPU is cached on disk (rooflab.measure.tune)
    variants: tuple[Variant, ...] = ()

    def with_variant(self, v: Variant) -> Rung:
        from dataclasses import replace  # noqa: PLC0415

        if v.config is not None:
            return replace(self, config=v.config)
        return replace(self, kernel=v.kernel, block=v.block, grid=v.grid, shared_mem=v.shared_mem,
                       staging=v.staging or self.staging)
    # a library rung: which library runs it, a key of rooflab.measure.libraries.LIBRARIES ("cublas",
    # "triton"; a name keeps this record free of CUDA imports), and the library's configuration
    library: str | None = None
    config: str | None = None
    # a user's Python callable: launcher(m, n, k) returns launch(a, b, c)
    launcher: Callable | None = None
    # Python modules the rung needs beyond rooflab's own (e.g. triton, torch); where one is missing the
    # rung is skipped, saying which
    needs: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    # operands staged before each launch (rooflab.cuda.staging): "tma" hands the kernel tensor maps of
    # A and B in their place (rooflab.cuda.tma); "tf32" or "3xtf32" run a pre-pass:
    # the source then holds stage_a_<scheme> / stage_bt_<scheme>, and the kernel reads K-major
    # rounded (or big/small split) copies of A and B^T with K padded; timed with the kernel
    staging: str | None = None
    shared_mem: int = 0  # dynamic shared memory per block, bytes
    # the earlier rungs this one is compared with, a climb paragraph each where both passed
    # (rooflab.report.climb holds the prose; a step with none gets a paragraph of the run's figures)
    compare: tuple[str, ...] = ()
    # ratios the seed asks for, time(other) / time(this): (other rung, label)
    ratios: tuple[tuple[str, str], ...] = ()

    def normwise_tolerance(self, k: int) -> float:
        """The normwise check's tolerance at inner size k, against this rung's own reference."""
        if self.normwise_tol is not None:
            return self.normwise_tol
        rounded = self.rounding != "fp32" or self.inputs != "fp32"
        return tolerance.normwise(self.precision, k, rounded_reference=rounded)

    def componentwise_tolerance(self, k: int) -> float:
        """The componentwise bound's factor on |A|·|B| at inner size k, against the FP32 inputs."""
        return tolerance.componentwise(self.precision, k)

    def flops(self, m: int, n: int, k: int) -> float:
        return 2.0 * m * n * k

    def source_path(self) -> Path | None:
        """The kernel file, for compilation checks (package files resolve inside the package)."""
        if self.source is None:
            return None
        p = Path(self.source)
        return p if p.is_absolute() else Path(__file__).resolve().parents[1] / p

    def model(self, m: int, n: int, k: int) -> dict:
        """Modelled global-memory traffic and arithmetic intensity."""
        fmas = float(m) * n * k
        if self.loads_per_fma is None:
            loads = float(m) * k + float(k) * n
        else:
            loads = fmas * self.loads_per_fma
        size = INPUT_BYTES.get(self.inputs, 4.0)  # bytes per input element; C is FP32
        bytes_moved = size * loads + 4.0 * float(m) * n  # + one write of C
        return {
            "global_loads": loads,
            "flop_per_load": self.flops(m, n, k) / loads,
            "bytes": bytes_moved,
            "ai_flop_per_byte": self.flops(m, n, k) / bytes_moved,
            "basis": "compulsory traffic (each matrix once)" if self.loads_per_fma is None
            else f"{self.loads_per_fma:g} global loads per FMA, no cache reuse counted",
        }
