"""The BF16 wgmma rungs fed by TMA (rungs/wgmma_bf16_tma.cu, sm_90a): the first two steps past the
cp.async ring of wgmma_bf16 towards and past cuBLAS. Step 1 loads each stage with
cp.async.bulk.tensor on tensor maps (rooflab.cuda.tma, staging scheme "tma"); step 2 gives the
loads a warpgroup of their own. Their climb paragraphs are in rooflab/report/climb/tma.py."""

from rooflab.rungs.record import Rung, Variant, cdiv

BOX_BYTES = 64 * 128  # one 64 x 64 BF16 box


def smem_bytes(wgs: int, stages: int) -> int:
    """MM_TMA_SMEM(wgs, stages): per stage wgs 64-row boxes of A and 4 64-column panels of B, + 1024 for
    aligning the ring."""
    return stages * (wgs + 4) * BOX_BYTES + 1024


def _tiles(bm: int, bn: int = 256):
    def grid(m, n, k, bm=bm, bn=bn):
        return (cdiv(m, bm) * cdiv(n, bn), 1, 1)
    return grid


def _loads(bm: int, bn: int = 256) -> float:
    return 1 / bn + 1 / bm


# the 192x256 tile first, as wgmma_bf16's default: the step from it changes the loads and nothing else
_TMA_VARIANTS = (
    Variant("192x256x64 3 warpgroups stages 4", "mm_wgmma_bf16_tma_wg3", (384, 1, 1), _tiles(192), smem_bytes(3, 4)),
    Variant("128x256x64 2 warpgroups stages 4", "mm_wgmma_bf16_tma", (256, 1, 1), _tiles(128), smem_bytes(2, 4)),
)
_WS_VARIANTS = (
    Variant("128x256x64 producer + 2 consumer warpgroups stages 4", "mm_wgmma_bf16_tma_ws", (384, 1, 1), _tiles(128),
            smem_bytes(2, 4)),
)


_COMMON = dict(stage="tensor cores", precision="bf16", inputs="bf16", rounding="bf16", source="rungs/wgmma_bf16_tma.cu",
               requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",), staging="tma")

WGMMA_BF16_TMA = Rung(
    name="wgmma_bf16_tma", title="wgmma BF16, TMA loads (Hopper)", **_COMMON,
    kernel=_TMA_VARIANTS[0].kernel, block=_TMA_VARIANTS[0].block, grid=_TMA_VARIANTS[0].grid,
    shared_mem=_TMA_VARIANTS[0].shared_mem, loads_per_fma=_loads(192), variants=_TMA_VARIANTS,
    explain="wgmma BF16 with the operands loaded by the tensor memory accelerator: tensor maps of A and B "
            "(cuTensorMapEncodeTiled, 128-byte swizzle, zero fill out of bounds) let one thread fill a stage of a "
            "4-deep ring with cp.async.bulk.tensor, each stage's full mbarrier armed with the bytes to come "
            "(arrive.expect_tx); every warpgroup waits on the barrier's parity, issues its m64n256k16 wgmma on "
            "the swizzled tile, and releases the slot through an empty mbarrier once those products are done. "
            "Where K or N is not a multiple of 8 (TMA needs 16-byte row pitches) the operand is first copied "
            "with its rows padded, inside the timed launch.",
    compare=("wgmma_bf16", "cublas_bf16"),
    ratios=(("wgmma_bf16", "time_wgmma BF16 / time_wgmma BF16 TMA"),
            ("cublas_bf16", "time_cuBLAS BF16 / time_wgmma BF16 TMA")),
)
WGMMA_BF16_TMA_WS = Rung(
    name="wgmma_bf16_tma_ws", title="wgmma BF16, TMA + warp-specialised (Hopper)", **_COMMON,
    kernel=_WS_VARIANTS[0].kernel, block=_WS_VARIANTS[0].block, grid=_WS_VARIANTS[0].grid,
    shared_mem=_WS_VARIANTS[0].shared_mem, loads_per_fma=_loads(128), variants=_WS_VARIANTS,
    explain="The TMA rung with its roles split: warpgroup 0 produces (one thread issues the TMA boxes of each "
            "stage, waiting only for empty slots) and gives registers back with setmaxnreg.dec; warpgroups 1 and "
            "2 consume (setmaxnreg.inc), each waiting on a slot's full-barrier parity, issuing m64n256k16 wgmma "
            "for its 64 rows of the 128×256 tile and releasing the slot one k-tile later. No block-wide barrier "
            "after the start.",
    compare=("wgmma_bf16_tma", "cublas_bf16"),
    ratios=(("wgmma_bf16_tma", "time_wgmma BF16 TMA / time_wgmma BF16 TMA warp-specialised"),
            ("cublas_bf16", "time_cuBLAS BF16 / time_wgmma BF16 TMA warp-specialised")),
)

TMA_RUNGS = (WGMMA_BF16_TMA, WGMMA_BF16_TMA_WS)
