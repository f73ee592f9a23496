"""The BF16 wgmma rungs fed by TMA (rungs/wgmma_bf16_tma.cu, sm_90a): the steps past the cp.async
ring of wgmma_bf16 towards and past cuBLAS. TMA loads (cp.async.bulk.tensor on tensor maps,
rooflab.cuda.tma, staging scheme "tma"); a warpgroup of its own for the loads; persistent blocks;
2-CTA clusters with B multicast; the epilogue through shared memory and TMA stores (scheme
"tma_store"). Their climb paragraphs are in rooflab/report/climb/tma.py."""

from rooflab.rungs.record import Rung, Variant, cdiv, persistent_grid, persistent_smem_bytes

BOX_BYTES = 64 * 128  # one 64 x 64 BF16 box


def smem_bytes(wgs: int, stages: int) -> int:
    """MM_TMA_SMEM(wgs, stages): per stage wgs 64-row boxes of A and 4 64-column panels of B, + 1024 for
    aligning the ring."""
    return stages * (wgs + 4) * BOX_BYTES + 1024


def store_smem_bytes(stages: int, c_bufs: int = 2) -> int:
    """TP_STORE_SMEM_BUFS(1, 256, stages, c_bufs): the 2-consumer ring + c_bufs 64 x 32 FP32 boxes for each
    consumer."""
    return persistent_smem_bytes(stages, c_bufs=c_bufs)


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


_PERSISTENT_VARIANTS = (
    Variant("128x256x64 persistent, producer + 2 consumers stages 4", "mm_wgmma_bf16_persistent", (384, 1, 1),
            persistent_grid(1), smem_bytes(2, 4)),
)
_CLUSTER_VARIANTS = (
    Variant("2x(128x256x64) clusters, B multicast, persistent stages 4", "mm_wgmma_bf16_cluster", (384, 1, 1),
            persistent_grid(2), smem_bytes(2, 4)),
)

_STORE_VARIANTS = (
    Variant("128x256x64 persistent, TMA-store epilogue stages 4", "mm_wgmma_bf16_tma_store", (384, 1, 1),
            persistent_grid(1), store_smem_bytes(4)),
    Variant("2x(128x256x64) clusters, B multicast, TMA-store epilogue stages 4", "mm_wgmma_bf16_tma_store_cluster",
            (384, 1, 1), persistent_grid(2), store_smem_bytes(4)),
    # the clusters taken apart: each CTA loading all of B, slots released on both (the lock-step without the
    # shared loads); launched in pairs, each CTA on its own (the placement alone)
    Variant("2x(128x256x64) clusters, each CTA loading B, slots released on both, TMA-store epilogue stages 4",
            "mm_wgmma_bf16_tma_store_cluster_ownb", (384, 1, 1), persistent_grid(2), store_smem_bytes(4)),
    Variant("2x(128x256x64) clusters, each CTA on its own, TMA-store epilogue stages 4", "mm_wgmma_bf16_tma_store_pair",
            (384, 1, 1), persistent_grid(2), store_smem_bytes(4)),
    Variant("128x256x64 persistent, TMA-store epilogue stages 4, A in one box", "mm_wgmma_bf16_tma_store_a128",
            (384, 1, 1), persistent_grid(1), store_smem_bytes(4), staging="tma_a128_store"),
    Variant("128x256x64 persistent, TMA-store epilogue stages 4, A and B one box each (B's panels as one)",
            "mm_wgmma_bf16_tma_store_ab1", (384, 1, 1), persistent_grid(1), store_smem_bytes(4),
            staging="tma_ab1_store"),
    *(Variant(f"128x256x64 persistent, TMA-store epilogue stages 4, groups of {g}", f"mm_wgmma_bf16_tma_store_g{g}",
              (384, 1, 1), persistent_grid(1), store_smem_bytes(4)) for g in (8, 32)),
    # the clusters with the partner's releases relayed by an idle producer warp: no consumer warp issues a remote arrive
    Variant("2x(128x256x64) clusters, B multicast, releases relayed, TMA-store epilogue stages 4",
            "mm_wgmma_bf16_tma_store_cluster_relay", (384, 1, 1), persistent_grid(2), store_smem_bytes(4)),
    # C staged in 5 buffers a consumer, 3 of them in the ring slot of the tile's last k-tile, held through the epilogue
    Variant("128x256x64 persistent, TMA-store epilogue stages 4, C also staged in the last k-tile's slot",
            "mm_wgmma_bf16_tma_store_slot", (384, 1, 1), persistent_grid(1), store_smem_bytes(4)),
    # ring stages traded for C boxes staged at once (of a consumer's 8), in the same shared memory
    Variant("128x256x64 persistent, TMA-store epilogue stages 3, 5 of 8 C boxes staged", "mm_wgmma_bf16_tma_store_s3",
            (384, 1, 1), persistent_grid(1), store_smem_bytes(3, 5)),
    Variant("128x256x64 persistent, TMA-store epilogue stages 2, 8 of 8 C boxes staged", "mm_wgmma_bf16_tma_store_s2",
            (384, 1, 1), persistent_grid(1), store_smem_bytes(2, 8)),
    Variant("2x(128x256x64) clusters, B multicast, TMA-store epilogue stages 3, 5 of 8 C boxes staged",
            "mm_wgmma_bf16_tma_store_cluster_s3", (384, 1, 1), persistent_grid(2), store_smem_bytes(3, 5)),
    Variant("128x256x64 persistent, TMA-store epilogue stages 3", "mm_wgmma_bf16_tma_store_s3_c2", (384, 1, 1),
            persistent_grid(1), store_smem_bytes(3)),
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

WGMMA_BF16_PERSISTENT = Rung(
    name="wgmma_bf16_persistent", title="wgmma BF16, TMA + WS, persistent (Hopper)", **_COMMON,
    kernel=_PERSISTENT_VARIANTS[0].kernel, block=_PERSISTENT_VARIANTS[0].block, grid=_PERSISTENT_VARIANTS[0].grid,
    shared_mem=_PERSISTENT_VARIANTS[0].shared_mem, loads_per_fma=_loads(128), variants=_PERSISTENT_VARIANTS,
    explain="The warp-specialised rung made persistent: one block an SM walks the 128×256 tiles in grouped order "
            "(block b takes tiles b, b + grid, …); the producer thread runs one ring through all of its tiles, so "
            "loads for the next tile start while the consumers store the last one, and a slot is released by one "
            "thread of each consumer warpgroup instead of all 128.",
    compare=("wgmma_bf16_tma_ws", "cublas_bf16"),
    ratios=(("wgmma_bf16_tma_ws", "time_wgmma BF16 TMA warp-specialised / time_wgmma BF16 persistent"),
            ("cublas_bf16", "time_cuBLAS BF16 / time_wgmma BF16 persistent")),
)
WGMMA_BF16_CLUSTER = Rung(
    name="wgmma_bf16_cluster", title="wgmma BF16, persistent 2-CTA clusters + multicast (Hopper)", **_COMMON,
    kernel=_CLUSTER_VARIANTS[0].kernel, block=_CLUSTER_VARIANTS[0].block, grid=_CLUSTER_VARIANTS[0].grid,
    shared_mem=_CLUSTER_VARIANTS[0].shared_mem, loads_per_fma=1 / 256 + 1 / 256, variants=_CLUSTER_VARIANTS,
    explain="The persistent rung in clusters of two blocks stacked along M: both blocks of a cluster work on "
            "row tiles that share their 256 columns of B, each issues half of B's panels with TMA multicast into "
            "both blocks' shared memory, and every consumer releases a slot on the empty barriers of both blocks "
            "(through mapa), so neither overwrites a slot its partner still reads.",
    compare=("wgmma_bf16_persistent", "cublas_bf16"),
    ratios=(("wgmma_bf16_persistent", "time_wgmma BF16 persistent / time_wgmma BF16 clusters"),
            ("cublas_bf16", "time_cuBLAS BF16 / time_wgmma BF16 clusters")),
)

WGMMA_BF16_TMA_STORE = Rung(
    name="wgmma_bf16_tma_store", title="wgmma BF16, persistent + TMA-store epilogue (Hopper)",
    **{**_COMMON, "staging": "tma_store"},
    kernel=_STORE_VARIANTS[0].kernel, block=_STORE_VARIANTS[0].block, grid=_STORE_VARIANTS[0].grid,
    shared_mem=_STORE_VARIANTS[0].shared_mem, loads_per_fma=_loads(128), variants=_STORE_VARIANTS,
    explain="The persistent rung with its epilogue through shared memory: each consumer warpgroup writes its "
            "64×256 FP32 accumulators a 64×32 box at a time (128-byte rows, 128-byte swizzle, so a warp's eight "
            "rows fall in different banks) into one of two 8 KB buffers, and its first thread issues a TMA store "
            "of each box through a tensor map of C, waiting only until the box before the last has been read. "
            "The warpgroup is back at the next tile's wgmma as soon as the last box is issued. Where C's rows are "
            "not 16-byte multiples (N not a multiple of 4) it stores directly, as the other rungs do. A variant "
            "runs it in 2-CTA clusters with B multicast.",
    compare=("wgmma_bf16_cluster", "cublas_bf16"),
    ratios=(("wgmma_bf16_cluster", "time_wgmma BF16 clusters / time_wgmma BF16 TMA-store epilogue"),
            ("cublas_bf16", "time_cuBLAS BF16 / time_wgmma BF16 TMA-store epilogue")),
)

TMA_RUNGS = (WGMMA_BF16_TMA, WGMMA_BF16_TMA_WS, WGMMA_BF16_PERSISTENT, WGMMA_BF16_CLUSTER, WGMMA_BF16_TMA_STORE)
