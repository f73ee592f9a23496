"""The FP8 rung (rungs/wgmma_fp8.cu, sm_90a): e4m3 x e4m3 -> FP32 on wgmma, on the machinery of the
warp-specialised BF16 TMA rung, beside cuBLASLt's FP8 GEMM (rooflab.cuda.cublaslt_fp8, through
torch._scaled_mm). Both are judged against the FP8 dense roof and checked against the float64
product of their e4m3-rounded inputs, with the FP8 error model's tolerance
(rooflab.model.tolerance); the error against the unrounded FP32 inputs is reported beside it.

Both take the harness's FP8 operands (rooflab.model.check.operands): e4m3 bit patterns, A as it is
(M x K) and B as B^T (N x K). FP8 wgmma reads both operands K-major, and cuBLASLt's FP8 GEMM needs
B that way too, so the transposition is part of preparing the inputs, done once before any launch
and timed for neither: the same bytes go to both. Their climb paragraphs are in
rooflab/report/climb/fp8.py."""

from dataclasses import replace

from rooflab.rungs.record import Rung, Variant, cdiv, persistent_grid, persistent_smem_bytes, spread_store

BOX_BYTES = 64 * 128  # one 128 k x 64 row e4m3 box
SOURCE = "rungs/wgmma_fp8.cu"


def smem_bytes(consumers: int, bn: int, stages: int) -> int:
    """MM_FP8_SMEM(consumers, bn, stages): per stage a 64-row box of A per consumer and bn / 64 boxes of
    B^T, + 1024 for aligning the ring."""
    return stages * (consumers + bn // 64) * BOX_BYTES + 1024


def _tiles(bm: int, bn: int):
    def grid(m, n, k, bm=bm, bn=bn):
        return (cdiv(m, bm) * cdiv(n, bn), 1, 1)
    return grid


def _loads(bm: int, bn: int) -> float:
    return 1 / bn + 1 / bm


# the accurate accumulation with the FP32 adds under the next k-tile's MMAs (include/overlap.cuh: two
# partials, 128 k each, U = 1): the same sums, added in the same order
OVERLAPPED = "accurate accumulation overlapped (2 partials, 128 k each)"
# each tile's C stored through TMA while the next tile's first k-tile of MMAs runs
DEFERRED = "TMA-store epilogue under the next tile's first MMAs"

# each k-tile summed from zero and added in FP32 first: on all-positive inputs the tensor core's own
# accumulation may miss the seed's 1e-3 at K = 512 (rooflab.model.tolerance), which no tuning should trade
_VARIANTS = (
    Variant("128x128x128 producer + 2 consumer warpgroups stages 6, accurate accumulation", "mm_wgmma_fp8",
            (384, 1, 1), _tiles(128, 128), smem_bytes(2, 128, 6)),
    Variant("128x256x128 producer + 2 consumer warpgroups stages 4, fast accumulation", "mm_wgmma_fp8_fast",
            (384, 1, 1), _tiles(128, 256), smem_bytes(2, 256, 4)),
    Variant(f"128x128x128 producer + 2 consumer warpgroups stages 6, {OVERLAPPED}", "mm_wgmma_fp8_overlap",
            (384, 1, 1), _tiles(128, 128), smem_bytes(2, 128, 6)),
)
# persistent on include/tma_persistent.cuh's body, C through TMA stores: accurate accumulation first, as above
_PERSISTENT_VARIANTS = (
    # 128 x 224 tiles first, C stored from the registers, A and B^T in one box each a stage (two TMA issues):
    # 1/224 + 1/128 operand bytes a MAC, a fifth fewer than 128 x 128 and 6% fewer than 128 x 192, in 112 + 112
    # registers of accumulator and partial. By `rooflab tune` on the H200 (2026-12-04, NOTES.md): 0.825 ms at 8192
    # against 0.829 with A in two boxes, 0.838 for 128 x 192 in one box, 0.844 in three; at 4096 0.1206 against
    # 0.124 (5 rounds of tiles against 6)
    Variant("128x224x128 persistent, producer + 2 consumers stages 5, A and B^T in one box each, C stored from "
            "registers, accurate accumulation", "mm_wgmma_fp8_persistent_n224_a128", (384, 1, 1),
            persistent_grid(1, bn=224), persistent_smem_bytes(5, bn=224, tma_store=False),
            staging="tma_fp8_a128_b224_store"),
    # 192 x 128 tiles over 3 consumer warpgroups (512 threads), A and B^T in one box each: a consumer's adds and waits
    # under the other two's MMAs; 1/128 + 1/192 operand bytes a MAC (6% more than 128 x 224)
    Variant("192x128x128 persistent, producer + 3 consumers stages 5, A and B^T in one box each, C stored from "
            "registers, accurate accumulation", "mm_wgmma_fp8_persistent_m192", (512, 1, 1),
            persistent_grid(1, bm=192, bn=128), persistent_smem_bytes(5, bn=128, tma_store=False, bm=192),
            staging="tma_fp8_a192_b128_store"),
    # the same over other tile orders: 8 or 32 row tiles a group (16 above)
    *(Variant(f"128x224x128 persistent, producer + 2 consumers stages 5, A and B^T in one box each, C stored from "
              f"registers, accurate accumulation, groups of {g}", f"mm_wgmma_fp8_persistent_n224_a128_g{g}", (384, 1, 1),
              persistent_grid(1, bn=224), persistent_smem_bytes(5, bn=224, tma_store=False),
              staging="tma_fp8_a128_b224_store") for g in (8, 32)),
    # 128 x 144 tiles in 6 stages, A and B^T in one box each: cuBLASLt's tile and ring depth on the H200 (its kernel
    # nvjet_sm90_qqsss_144x128_128x6_1x2), alone and in 2-CTA clusters with B^T multicast, as cuBLASLt's runs
    *(Variant(f"{tiles} persistent, producer + 2 consumers stages 6, A and B^T in one box each, C stored from "
              "registers, accurate accumulation", f"mm_wgmma_fp8_persistent_n144{suffix}", (384, 1, 1),
              persistent_grid(c, bn=144), persistent_smem_bytes(6, bn=144, tma_store=False),
              staging="tma_fp8_a128_b144_store")
      for c, tiles, suffix in ((1, "128x144x128", ""), (2, "2x(128x144x128) clusters, B multicast,", "_cluster"))),
    # 2-CTA clusters with B^T in two boxes, each CTA multicasting one into both (CUTLASS's split of the shared
    # operand): 128 x 144 (72-row boxes) and 128 x 224 (112-row boxes; a quarter fewer operand bytes a CTA from L2)
    *(Variant(f"2x(128x{bn}x128) clusters, B multicast in halves, persistent, producer + 2 consumers stages {st}, A "
              f"in one box, C stored from registers, accurate accumulation", f"mm_wgmma_fp8_persistent_{name}",
              (384, 1, 1), persistent_grid(2, bn=bn), persistent_smem_bytes(st, bn=bn, tma_store=False),
              staging=f"tma_fp8_a128_b{bn // 2}_store")
      for bn, st, name in ((224, 5, "n224_cluster"), (144, 6, "n144_cluster_b72"))),
    # the 128 x 144 tiles with the adds overlapped (two partials: each k-tile's added under the next one's MMAs), so
    # a consumer keeps MMAs in flight while it adds; 3 x 72 registers, the widest tile whose three fit
    *(Variant(f"{tiles} persistent, producer + 2 consumers stages 6, A and B^T in one box each, C stored from "
              f"registers, {OVERLAPPED}", f"mm_wgmma_fp8_persistent_n144{suffix}_overlap", (384, 1, 1),
              persistent_grid(c, bn=144), persistent_smem_bytes(6, bn=144, tma_store=False),
              staging="tma_fp8_a128_b144_store")
      for c, tiles, suffix in ((1, "128x144x128", ""), (2, "2x(128x144x128) clusters, B multicast,", "_cluster"))),
    # the 128 x 144 clusters with the partner's releases relayed by an idle producer warp (no consumer warp issues a
    # remote arrive), the adds after each drain or overlapped
    *(Variant(f"2x(128x144x128) clusters, B multicast, releases relayed, persistent, producer + 2 consumers stages 6, A "
              f"and B^T in one box each, C stored from registers, {acc}", f"mm_wgmma_fp8_persistent_n144_cluster{sfx}_relay",
              (384, 1, 1), persistent_grid(2, bn=144), persistent_smem_bytes(6, bn=144, tma_store=False),
              staging="tma_fp8_a128_b144_store")
      for sfx, acc in (("", "accurate accumulation"), ("_overlap", OVERLAPPED))),
    # A in two 64-row boxes, B^T in one box (or 32-row ones): 128 x 224 and 128 x 192
    *(Variant(f"128x{bn}x128 persistent, producer + 2 consumers stages 5, B^T in {boxes}, C stored from registers, "
              "accurate accumulation", f"mm_wgmma_fp8_persistent_n{bn}{suffix}", (384, 1, 1), persistent_grid(1, bn=bn),
              persistent_smem_bytes(5, bn=bn, tma_store=False), staging=f"tma_fp8_b{rows}_store")
      for bn, rows, boxes, suffix in ((224, 224, "one box", ""), (192, 192, "one box", "_b192"),
                                      (224, 32, "32-row boxes", "_b32"))),
    # 128 x 192 in three 64-row boxes of B^T: the default before (0.852 against 0.925 ms for 128 x 128 at 8192,
    # 2026-12-03)
    Variant("128x192x128 persistent, producer + 2 consumers stages 5, C stored from registers, accurate accumulation",
            "mm_wgmma_fp8_persistent_n192", (384, 1, 1), persistent_grid(1, bn=192),
            persistent_smem_bytes(5, bn=192, tma_store=False)),
    # the 128 x 192 tiles in 2-CTA clusters: B^T multicast; each CTA loading all of B^T, slots still released on
    # both (the lock-step without the shared loads); and launched in pairs, each CTA on its own (the placement)
    *(Variant(f"2x(128x192x128) clusters, {what}, persistent stages 5, C stored from registers, accurate accumulation",
              f"mm_wgmma_fp8_persistent_n192{suffix}", (384, 1, 1), persistent_grid(2, bn=192),
              persistent_smem_bytes(5, bn=192, tma_store=False))
      for what, suffix in (("B multicast", "_cluster"), ("each CTA loading B, slots released on both", "_cluster_ownb"),
                           ("each CTA on its own", "_pair"))),
    # 128 x 128, C from the registers: the default before (0.915 against 0.987 ms through TMA stores at 8192,
    # 2026-12-02)
    Variant("128x128x128 persistent stages 6, C stored from registers, accurate accumulation",
            "mm_wgmma_fp8_persistent_direct", (384, 1, 1), persistent_grid(1, bn=128),
            persistent_smem_bytes(6, bn=128, tma_store=False)),
    Variant("128x128x128 persistent stages 6, TMA-store epilogue, accurate accumulation",
            "mm_wgmma_fp8_persistent", (384, 1, 1), persistent_grid(1, bn=128), persistent_smem_bytes(6, bn=128)),
    Variant("128x256x128 persistent stages 4, TMA-store epilogue, fast accumulation", "mm_wgmma_fp8_persistent_fast",
            (384, 1, 1), persistent_grid(1), persistent_smem_bytes(4)),
    Variant("2x(128x128x128) clusters, B multicast, persistent stages 6, TMA-store epilogue, accurate accumulation",
            "mm_wgmma_fp8_persistent_cluster", (384, 1, 1), persistent_grid(2, bn=128), persistent_smem_bytes(6, bn=128)),
    Variant(f"128x128x128 persistent stages 6, TMA-store epilogue, {OVERLAPPED}", "mm_wgmma_fp8_persistent_overlap",
            (384, 1, 1), persistent_grid(1, bn=128), persistent_smem_bytes(6, bn=128)),
    Variant(f"2x(128x128x128) clusters, B multicast, persistent stages 6, TMA-store epilogue, {OVERLAPPED}",
            "mm_wgmma_fp8_persistent_cluster_overlap", (384, 1, 1), persistent_grid(2, bn=128),
            persistent_smem_bytes(6, bn=128)),
    Variant("128x128x128 persistent stages 5, all 4 C boxes staged, TMA-store epilogue, accurate accumulation",
            "mm_wgmma_fp8_persistent_c4", (384, 1, 1), persistent_grid(1, bn=128),
            persistent_smem_bytes(5, bn=128, c_bufs=4)),
    Variant(f"128x128x128 persistent stages 6, {DEFERRED}, accurate accumulation", "mm_wgmma_fp8_persistent_defer",
            (384, 1, 1), persistent_grid(1, bn=128), persistent_smem_bytes(6, bn=128)),
    Variant("128x128x128 persistent stages 6, C stored from registers under the next tile's first MMAs, accurate "
            "accumulation", "mm_wgmma_fp8_persistent_direct_defer", (384, 1, 1), persistent_grid(1, bn=128),
            persistent_smem_bytes(6, bn=128, tma_store=False)),
    Variant("2x(128x128x128) clusters, B multicast, persistent stages 6, C stored from registers, accurate "
            "accumulation", "mm_wgmma_fp8_persistent_cluster_direct", (384, 1, 1), persistent_grid(2, bn=128),
            persistent_smem_bytes(6, bn=128, tma_store=False)),
    Variant("128x128x128 persistent stages 7, C stored from registers, accurate accumulation",
            "mm_wgmma_fp8_persistent_direct_s7", (384, 1, 1), persistent_grid(1, bn=128),
            persistent_smem_bytes(7, bn=128, tma_store=False)),
    *(Variant(f"{tiles} persistent stages 6, {spread_store(parts)}, accurate accumulation",
              f"mm_wgmma_fp8_persistent{suffix}_spread{parts}", (384, 1, 1), persistent_grid(c, bn=128),
              persistent_smem_bytes(6, bn=128, tma_store=False))
      for c, tiles, suffix, parts in ((1, "128x128x128", "", 8), (1, "128x128x128", "", 32),
                                      (2, "2x(128x128x128) clusters, B multicast,", "_cluster", 8))),
)
# each variant names its maps, as B^T's box height differs between them: none falls back on the rung's
_PERSISTENT_VARIANTS = tuple(replace(v, staging=v.staging or "tma_fp8_store") for v in _PERSISTENT_VARIANTS)
_PEER_VARIANTS = tuple(Variant(f"{mode} accumulation", "cublasLt", (0, 0, 0), None, config=mode)
                       for mode in ("accurate", "fast"))


FAST = "fast accumulation"  # in the label of each variant that leaves the whole sum to the tensor core

_COMMON = dict(precision="fp8", inputs="fp8", rounding="e4m3")

WGMMA_FP8 = Rung(
    name="wgmma_fp8", title="wgmma FP8 e4m3, TMA + warp-specialised (Hopper)", stage="tensor cores", **_COMMON,
    source=SOURCE, kernel=_VARIANTS[0].kernel, block=_VARIANTS[0].block, grid=_VARIANTS[0].grid,
    shared_mem=_VARIANTS[0].shared_mem, loads_per_fma=_loads(128, 128), variants=_VARIANTS,
    requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",), staging="tma_fp8",
    requires_what="FP8 wgmma",
    explain="FP8 (e4m3 × e4m3, FP32 accumulate) on Hopper's warpgroup MMA, fed by TMA: tensor maps of A and of "
            "B^T (e4m3 bytes, 128-byte swizzle, zero fill out of bounds) load 128 k × 64 rows a box; a producer "
            "warpgroup arms each slot's mbarrier with the stage's bytes and issues its boxes, two consumer "
            "warpgroups (registers moved to them with setmaxnreg) wait on the slot's parity and issue "
            "m64nNk32 e4m3 MMAs. FP8 wgmma reads both operands K-major, so B arrives transposed (N × K), as "
            "cuBLASLt's FP8 GEMM takes it: a step of preparing the inputs, timed for neither. The default "
            "sums each k-tile's products from zero in a partial accumulator and adds it to the FP32 one (128 × "
            "128 tiles: partial and accumulator share the registers); the variant on 128 × 256 tiles leaves the "
            "whole sum to the tensor core's accumulator, which keeps fewer bits.",
    compare=("wgmma_bf16_tma_ws", "cublaslt_fp8"),
    ratios=(("wgmma_bf16_tma_ws", "time_wgmma BF16 TMA warp-specialised / time_wgmma FP8"),
            ("cublaslt_fp8", "time_cuBLASLt FP8 / time_wgmma FP8")),
)
WGMMA_FP8_PERSISTENT = Rung(
    name="wgmma_fp8_persistent", title="wgmma FP8 e4m3, persistent (Hopper)",
    stage="tensor cores", **_COMMON, source=SOURCE, kernel=_PERSISTENT_VARIANTS[0].kernel,
    block=_PERSISTENT_VARIANTS[0].block, grid=_PERSISTENT_VARIANTS[0].grid,
    shared_mem=_PERSISTENT_VARIANTS[0].shared_mem, loads_per_fma=_loads(128, 224), variants=_PERSISTENT_VARIANTS,
    requires_cc=(9, 0), exact_cc=True, options=("-arch=sm_90a",), staging=_PERSISTENT_VARIANTS[0].staging,
    requires_what="FP8 wgmma",
    explain="The FP8 rung on the BF16 climb's last kernel: one block an SM walks the tiles in grouped order, its "
            "producer running the ring on from one tile into the next while each consumer warpgroup stores its "
            "C. The default takes 128 × 224 tiles (m64n224k32, 5 stages, A and B^T in one box each a stage): "
            "a fifth fewer operand bytes a MAC from L2 and into shared memory than 128 × 128 (6% fewer than "
            "128 × 192), with accumulator and partial in 112 + 112 registers, and writes C from the registers "
            "straight to memory; variants stage it in shared memory for TMA stores (a tensor map of C after "
            "B^T's), which on the H200 were slower: the FP32 C tile is four times an e4m3 operand tile's bytes "
            "and the tile's MMAs are short. The same two accumulations: each k-tile summed from zero and added "
            "in FP32 (128 × 224, 128 × 192 and 128 × 128 tiles), or the tensor core's chain alone (128 × 256, "
            "4 stages).",
    compare=("wgmma_fp8", "cublaslt_fp8"),
    ratios=(("wgmma_fp8", "time_wgmma FP8 / time_wgmma FP8 persistent"),
            ("cublaslt_fp8", "time_cuBLASLt FP8 / time_wgmma FP8 persistent")),
)
CUBLASLT_FP8 = Rung(
    name="cublaslt_fp8", title="cuBLASLt FP8 e4m3 (torch._scaled_mm)", stage="tensor cores (ceiling)", **_COMMON,
    library="cublaslt_fp8", config=_PEER_VARIANTS[0].config, variants=_PEER_VARIANTS, loads_per_fma=None,
    block=(0, 0, 0),
    requires_cc=(8, 9), needs=("torch",), requires_what="FP8 tensor cores",
    explain="cublasLtMatmul on e4m3 A and B with FP32 compute and FP32 output, through torch._scaled_mm (scales "
            "1.0, no bias, out_dtype=torch.float32, written into C): the FP8 rung's peer, given the same bytes "
            "(B as B^T, N × K, the column-major K × N operand it requires). The default accumulates as torch "
            "does by default (use_fast_accum=False); the 'fast accumulation' variant leaves the sum to the "
            "tensor core. Shapes with K, N or M not a multiple of 16 go through zero-padded copies inside the "
            "launch.",
)

FP8_RUNGS = (WGMMA_FP8, WGMMA_FP8_PERSISTENT, CUBLASLT_FP8)
