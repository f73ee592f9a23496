// Tensor-core rung, Hopper: FP8 GEMM on wgmma.mma_async (e4m3 x e4m3 -> FP32 accumulate) fed by TMA,
// sm_90a only. C (FP32, M x N row-major) = A * B, with A M x K e4m3 (row-major: K-major) and B given
// as B^T, N x K e4m3 (row-major: K-major). FP8 wgmma reads both operands K-major from shared memory
// (an 8-bit type has no transpose), so the harness hands this kernel B transposed, as cuBLASLt's
// FP8 GEMM needs it too; the transposition is part of preparing the inputs, not of the GEMM.
//
// The kernels take tensor maps (rooflab.cuda.tma, layout "tma_fp8"): tmA and tmB point at
// 128-byte CUtensorMap objects in device memory,
//   A:   dims {K, M}, row pitch in bytes, box {128, 64}: 128 k (128 B) x 64 rows of M
//   B^T: dims {K, N}, row pitch in bytes, box {128, 64}: 128 k (128 B) x 64 rows of N
// as UINT8 (TMA moves bytes), CU_TENSOR_MAP_SWIZZLE_128B, zero fill out of bounds. A box lands as
// 64 rows of 128 B, 16-byte chunk c of row r at c ^ (r & 7): the K-major swizzled layout both
// descriptors read (SBO 1024 between 8-row groups; a k32 step is 32 bytes along the row). The B
// boxes of a stage sit one after another, so the BN rows of B^T are one K-major operand.
//
// Warp-specialised, with the ring of include/tma_ring.cuh: warpgroup 0 produces (one thread arms
// a slot's full barrier with the stage's bytes and issues its boxes; the warpgroup gives registers
// back with setmaxnreg.dec), warpgroups 1 and 2 consume (setmaxnreg.inc), each issuing the
// m64nBNk32 MMAs of its 64 rows. Two ways to accumulate:
//   PROMOTE = 0: every k32 product adds into the accumulator the wgmma chain keeps (the tensor
//     core's own FP8 accumulation, which keeps fewer bits than FP32: cuBLASLt's "fast accumulation");
//   PROMOTE = 1: each k-tile (128 k) is summed from zero in a partial accumulator, waited for and
//     added to an FP32 accumulator with FP32 adds, so the tensor core's short accumulation acts on
//     128 products at a time only (cuBLASLt's default). Partial + accumulator = 2 x BN / 2
//     registers, so this path runs 128-column tiles. The wait for each k-tile drains the tensor
//     pipe, so nothing of this consumer overlaps its adds;
//   PROMOTE = -U: the same sums, overlapped (include/overlap.cuh): two partials take groups of U
//     k-tiles in turn, each added while the next group's MMAs run, the tensor core's accumulation
//     acting on U x 128 products at a time. Accumulator + 2 partials = 3 x 64 registers: 128-column
//     tiles, and the consumers get 232 registers (40 / 232 at 384 threads).
//
// Shapes: any M, N, K >= 1. TMA needs 16-byte row pitches (K a multiple of 16) and a 16-byte-aligned
// base, which the host side provides (a padded copy otherwise); the K tail and boxes partly past M
// or N are zero-filled by TMA; boxes wholly past them are not issued; C stores are predicated per
// element. Grid (cdiv(M, 128) * cdiv(N, BN), 1, 1), grouped rasterisation; dynamic shared memory
// MM_FP8_SMEM(consumers, BN, stages) bytes. Compile with -arch=sm_90a; for any other target the
// bodies are empty and the rungs must not be launched.

#include "overlap.cuh"
#include "ptx.cuh"
#include "tma_persistent.cuh"
#include "tma_ring.cuh"
#include "wgmma_fp8.cuh"
#include "wgmma_store.cuh"

#define FP8_BK 128                   // k per stage: one 128-byte swizzle row of e4m3
#define FP8_BOX_BYTES (64 * FP8_BK)  // one 128 x 64 box: 8192 bytes
// per stage: a 64-row box of A per consumer and BN / 64 boxes of B^T; + 1024 to align the ring
#define MM_FP8_SMEM(consumers, bn, stages) ((stages) * ((consumers) + (bn) / 64) * FP8_BOX_BYTES + 1024)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace fp8_gemm {

template <int BM, int BN>
using Tile = tma_ring::Tile<BM, BN, FP8_BK>;

// one stage: arm the slot's full barrier with the bytes to come, then issue the boxes
template <int BM, int BN>
__device__ __forceinline__ void issue_stage(const void* tmA, const void* tmB, const Tile<BM, BN>& t, unsigned slot,
                                            unsigned full, int kt)
{
    const int k0 = kt * FP8_BK;
#ifdef PLANT_SHORT_TX  // a planted bug for the GPU tests: the barrier waits for 16 bytes that never come
    mbar_arrive_expect_tx(full, (t.a_boxes + t.b_boxes) * FP8_BOX_BYTES + 16);
#else
    mbar_arrive_expect_tx(full, (t.a_boxes + t.b_boxes) * FP8_BOX_BYTES);
#endif
    for (int w = 0; w < t.a_boxes; w++) tma_load_2d(slot + w * FP8_BOX_BYTES, tmA, k0, t.bm + 64 * w, full);
    const unsigned sb = slot + BM * 128;
    for (int p = 0; p < t.b_boxes; p++) tma_load_2d(sb + p * FP8_BOX_BYTES, tmB, k0, t.bn + 64 * p, full);
}

template <int BN>
__device__ __forceinline__ void mma(float (&d)[BN / 2], unsigned long long da, unsigned long long db, int scale_d)
{
    static_assert(BN == 128 || BN == 144 || BN == 192 || BN == 224 || BN == 256,
                  "an e4m3 wgmma of 128, 144, 192, 224 or 256 columns");
    if constexpr (BN == 128) wgmma_m64n128k32_e4m3(d, da, db, scale_d);
    else if constexpr (BN == 144) wgmma_m64n144k32_e4m3(d, da, db, scale_d);
    else if constexpr (BN == 192) wgmma_m64n192k32_e4m3(d, da, db, scale_d);
    else if constexpr (BN == 224) wgmma_m64n224k32_e4m3(d, da, db, scale_d);
    else wgmma_m64n256k32_e4m3(d, da, db, scale_d);
}

// a consumer warpgroup's 4 k32 MMAs on one slot (its 64 rows of A against the BN rows of B^T);
// accumulate = false: the first of them starts d from zero
template <int BM, int BN>
__device__ __forceinline__ void mma_stage(float (&d)[BN / 2], unsigned slot, int cw, bool accumulate)
{
    const unsigned a0 = slot + cw * 64 * 128, b0 = slot + BM * 128;
    fence_acc(d);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < FP8_BK / 32; kk++)
        mma<BN>(d, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 32, 16, 1024), accumulate || kk > 0);
    wgmma_commit();
}

// the persistent kernels' operands (include/tma_persistent.cuh; the overlapped body below issues its
// MMAs too): both K-major, k32 steps; FLUSH 1 adds each k-tile's products to the FP32 accumulator
// (PROMOTE = 1 below), -1 the same overlapped (PROMOTE = -1), 0 leaves them in the chain; DEFER: each
// tile's C is stored under the next tile's first MMAs (tma_persistent.cuh's DEFER_STORE); SPREAD > 0: each
// tile's C leaves from a copy in SPREAD parts under the next tile's first SPREAD k-tiles (SPREAD_STORE)
template <int BN_, int FLUSH_, bool DEFER_ = false, int SPREAD_ = 0>
struct Fp8Op {
    static constexpr int BK = FP8_BK, BN = BN_, NACC = BN_ / 2, PARTS = 1, FLUSH = FLUSH_, SPREAD_STORE = SPREAD_;
    static constexpr bool B_KMAJOR = true, DEFER_STORE = DEFER_;
    static __device__ __forceinline__ void mma(float (&d)[NACC], unsigned a0, unsigned b0, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < FP8_BK / 32; kk++)
            fp8_gemm::mma<BN>(d, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 32, 16, 1024),
                              accumulate || kk > 0);
    }
};

// the same policy, each CTA of a cluster loading all of B^T itself (tma_persistent::skips_multicast)
template <int BN_, int FLUSH_>
struct Fp8OpOwnB : Fp8Op<BN_, FLUSH_> {
    static constexpr bool NO_MULTICAST = true;
};

// the same policy with B^T in boxes BR rows tall (the host's "tma_fp8_b<BR>" maps): one box of the whole tile
// (BR = BN; TMA takes up to 256 rows, and 128-byte rows swizzled in 8-row atoms lie as 64-row boxes do), or 32-row
// boxes for a width no multiple of 64
template <int BN_, int BR, int FLUSH_, int AR = 64>
struct Fp8OpBox : Fp8Op<BN_, FLUSH_> {
    static constexpr int B_BOX_ROWS = BR, A_BOX_ROWS = AR;  // AR 128: the tile's A in one box too
};

// the same in clusters whose partner releases an idle producer warp relays (tma_persistent::relays_release)
template <int BN_, int BR, int FLUSH_, int AR = 64>
struct Fp8OpBoxRelay : Fp8OpBox<BN_, BR, FLUSH_, AR> {
    static constexpr bool RELAY_RELEASE = true;
};

// the same with 3 consumer warpgroups (tma_persistent::consumers): a 192-row tile, two warpgroups' MMAs under the
// third's adds and waits
template <int BN_, int BR, int FLUSH_, int AR = 64>
struct Fp8OpBox3 : Fp8OpBox<BN_, BR, FLUSH_, AR> {
    static constexpr int CONSUMERS = 3;
};

// one producer warpgroup + CONSUMERS consumer warpgroups; registers move from the producer
// (PRODUCER_REGS) to the consumers (CONSUMER_REGS): 128 * (PRODUCER_REGS + CONSUMERS *
// CONSUMER_REGS) must fit the block's pool, or setmaxnreg.inc waits forever (the BF16 rung's
// 40 / 216 split at 384 threads, launch bound 168).
template <int CONSUMERS, int BN, int STAGES, int PROMOTE, int PRODUCER_REGS, int CONSUMER_REGS>
__device__ __forceinline__ void body(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
    static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "register file overcommitted");
    static_assert(BN == 128 || BN == 256, "m64n128k32 or m64n256k32");
    constexpr int BM = 64 * CONSUMERS, STAGE_BYTES = (CONSUMERS + BN / 64) * FP8_BOX_BYTES, NACC = BN / 2;
    extern __shared__ __align__(1024) unsigned char fp8_smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    const auto ring = tma_ring::make_ring<STAGES, STAGE_BYTES>(fp8_smem, bars, 128 * CONSUMERS);
    const Tile<BM, BN> t(M, N, K);
    const int tid = threadIdx.x, wg = tid / 128;

    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (tid == 0) {
            tensormap_acquire(tmA);
            tensormap_acquire(tmB);
            tma_ring::produce(ring, t.KT, [&](unsigned slot, unsigned full, int kt) {
                issue_stage<BM, BN>(tmA, tmB, t, slot, full, kt);
            });
        }
        return;
    }
    setmaxnreg_inc<CONSUMER_REGS>();
    const int cw = wg - 1;
    float acc[NACC];
#pragma unroll
    for (int i = 0; i < NACC; i++) acc[i] = 0.0f;
    bool ok;
    if constexpr (PROMOTE < 0) {
        ok = overlap::run<NACC, -PROMOTE>(
            acc, t.KT,
            [&](int kt, bool& go) {
                go = go && mbar_wait_bounded(ring.full(kt % STAGES), (kt / STAGES) & 1);
                return ring.slot(kt % STAGES);
            },
            [&](float (&d)[NACC], unsigned slot, int accumulate) {
                Fp8Op<BN, 0>::mma(d, slot + cw * 64 * 128, slot + BM * 128, accumulate);
            },
            [&](int kt) { mbar_arrive(ring.empty(kt % STAGES)); });
    } else if constexpr (PROMOTE) {
        float part[NACC];  // each k-tile's first MMA overwrites it (scale-d 0); zeroed so no register starts undefined
#pragma unroll
        for (int i = 0; i < NACC; i++) part[i] = 0.0f;
        ok = tma_ring::consume<STAGES, STAGE_BYTES, 0>(ring, t.KT, [&](unsigned slot, int) {
            mma_stage<BM, BN>(part, slot, cw, false);
            wgmma_wait<0>();
            fence_acc(part);
#pragma unroll
            for (int i = 0; i < NACC; i++) acc[i] += part[i];
        });
    } else {
        ok = tma_ring::consume<STAGES, STAGE_BYTES, 1>(ring, t.KT, [&](unsigned slot, int) {
            mma_stage<BM, BN>(acc, slot, cw, true);
            wgmma_wait<1>();  // tile kt - 1's products are done: its slot may be refilled
            fence_acc(acc);
        });
        wgmma_wait<0>();
        fence_acc(acc);
    }
    if (ok) store_wgmma_acc(acc, C, M, N, t.bm + cw * 64, t.bn);
}

}  // namespace fp8_gemm
#endif

// 128 x 128 tiles, each k-tile's products added to an FP32 accumulator (the default: cuBLASLt's
// default accumulation)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    fp8_gemm::body<2, 128, 6, 1, 40, 216>(tmA, tmB, C, M, N, K);  // MM_FP8_SMEM(2, 128, 6) = 197632 bytes
#endif
}

// 128 x 256 tiles accumulated by the tensor core alone (cuBLASLt's fast accumulation)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_fast(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    fp8_gemm::body<2, 256, 4, 0, 40, 216>(tmA, tmB, C, M, N, K);  // MM_FP8_SMEM(2, 256, 4) = 197632 bytes
#endif
}

// persistent (one block an SM over the grouped tile order, the ring running on from tile to tile), the
// epilogue through TMA stores (C's map after B's): 128 x 128 tiles, each k-tile added to an FP32
// accumulator, 6 stages (TP_STORE_SMEM(1, 128, 6) = 230400 bytes)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 1, 6, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the same with 128 x 256 tiles accumulated by the tensor core alone, 4 stages (TP_STORE_SMEM(1, 256, 4)
// = 230400 bytes)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_fast(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<256, 0>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the accurate persistent kernel in 2-CTA clusters along M, B^T's boxes multicast into both
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 2, 6, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the accurate accumulations overlapped (PROMOTE / FLUSH -1: two partials, each k-tile's 128 products
// summed from zero, added to the FP32 accumulator while the next k-tile's MMAs run): the same FP32 sums
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    fp8_gemm::body<2, 128, 6, -1, 40, 232>(tmA, tmB, C, M, N, K);  // MM_FP8_SMEM(2, 128, 6) = 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, -1>, 1, 6, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_cluster_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, -1>, 2, 6, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// C staged whole (4 boxes a consumer, one barrier, no store waiting on another's read) at the cost of a
// stage: TP_STORE_SMEM_BUFS(1, 128, 5, 4) = 230400 bytes
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_c4(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 1, 5, 40, 232, true, 16, 4>(tmA, tmB, C, M, N, K);
#endif
}

// each tile's C stored while the next tile's first k-tile of MMAs runs (the accumulator is free of the
// MMAs: they write the partial)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_defer(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1, true>, 1, 6, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// C written from the registers straight to memory (no staging, no store waiting on anything), 6 stages
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 1, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// C from the registers while the next tile's first k-tile of MMAs runs; C from the registers in 2-CTA clusters
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_direct_defer(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1, true>, 1, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_cluster_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// C from the registers, its staging's room given to a 7th stage (TP_SMEM(1, 128, 7) = 230400 bytes)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_direct_s7(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1>, 1, 7, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// C from the registers in 8 (or 32) parts, each after one of the next tile's first k-tiles' MMAs are issued,
// from a copy of the accumulator (64 + 64 + 64 registers: accumulator, partial, copy); and in 2-CTA clusters
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_spread8(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1, false, 8>, 1, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_spread32(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1, false, 32>, 1, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_cluster_spread8(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<128, 1, false, 8>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 192 tiles: a sixth fewer operand bytes a MAC from L2 and into shared memory than 128 x 128 (1/192 + 1/128
// against 2/128), accumulator and partial 96 + 96 registers; C from the registers, 5 stages (TP_SMEM(1, 192, 5,
// no C staging) = 205824 bytes)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n192(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<192, 1>, 1, 5, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 192 with B^T in one 192-row box a stage: three fewer TMA issues a stage than in 64-row boxes
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n192_b192(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<192, 192, 1>, 1, 5, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 224 tiles: operand bytes a MAC 1/224 + 1/128, 6% fewer than 128 x 192's; accumulator and partial 112 + 112
// registers, so the consumers take 240 and the producer warpgroup keeps 24 (128 x (24 + 2 x 240) = the launch's
// 384 x 168); C from the registers, 5 stages (TP_SMEM(1, 224, 5) = 226304 bytes); B^T in one 224-row box a stage
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 224, 1>, 1, 5, 24, 240, false>(tmA, tmB, C, M, N, K);
#endif
}

// the same with A in one 128-row box as well: two TMA issues a stage
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224_a128(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 224, 1, 128>, 1, 5, 24, 240, false>(tmA, tmB, C, M, N, K);
#endif
}

// the same over other tile orders: 8 or 32 row tiles a group (16 above)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224_a128_g8(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 224, 1, 128>, 1, 5, 24, 240, false, 8>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224_a128_g32(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 224, 1, 128>, 1, 5, 24, 240, false, 32>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 144 tiles, A and B^T in one box each, 6 stages (TP_SMEM(1, 144, 6) = 209920 bytes): cuBLASLt's FP8 tile and
// ring depth on the H200 (nvjet_sm90_qqsss_144x128_128x6_1x2, Nsight Compute); accumulator and partial 72 + 72
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<144, 144, 1, 128>, 1, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// the same in 2-CTA clusters along M, as cuBLASLt's: rank 0 multicasts the one box of B^T into both CTAs
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<144, 144, 1, 128>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// the same with B^T in two 72-row boxes, each CTA multicasting one into both (CUTLASS's split of the shared operand)
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_cluster_b72(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<144, 72, 1, 128>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 224 tiles in 2-CTA clusters along M, each CTA multicasting one 112-row half of B^T into both: a quarter fewer
// operand bytes a CTA from L2 than alone; producer 24 registers, consumers 240
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 112, 1, 128>, 2, 5, 24, 240, false>(tmA, tmB, C, M, N, K);
#endif
}

// 2-CTA clusters of 128 x 144 tiles (rank 0 multicasting B^T's one box into both), the releases for the partner
// relayed by warp 1 of the producer warpgroup, so no consumer warp issues a remote arrive; the adds after each k-tile's
// drain, or overlapped (128 x 224 spills here: its producer's multicast issue needs more than 24 registers)
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_cluster_overlap_relay(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBoxRelay<144, 144, -1, 128>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_cluster_relay(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBoxRelay<144, 144, 1, 128>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// 192 x 128 tiles, 3 consumer warpgroups (512 threads), A and B^T in one box each, 5 stages (5 x 40 KB + 1024 =
// 205824 bytes): accumulator and partial 64 + 64 registers a consumer, in 160 (128 x (24 + 3 x 160) = 64512)
extern "C" __global__ void __launch_bounds__(512, 1)
mm_wgmma_fp8_persistent_m192(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox3<128, 128, 1, 192>, 1, 5, 24, 160, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 144 with the adds overlapped (FLUSH -1: two partials in turn, each k-tile's added under the next one's MMAs;
// accumulator and partials 3 x 72 registers, the widest tile whose three fit 240), alone and in 2-CTA clusters (B^T
// multicast; 40 registers for the producer, whose multicast issue spills at 24, and 232 for the consumers)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<144, 144, -1, 128>, 1, 6, 24, 240, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n144_cluster_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<144, 144, -1, 128>, 2, 6, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// the same in 32-row boxes of B^T, seven a stage
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n224_b32(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpBox<224, 32, 1>, 1, 5, 24, 240, false>(tmA, tmB, C, M, N, K);
#endif
}

// 128 x 192 in 2-CTA clusters along M: B^T's boxes multicast into both CTAs (a quarter fewer operand bytes a
// CTA from L2), each slot released on both CTAs' empty barriers
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n192_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<192, 1>, 2, 5, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// the cluster's lock-step without its shared loads: each CTA loads all of B^T, slots released on both CTAs
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n192_cluster_ownb(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8OpOwnB<192, 1>, 2, 5, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// launched in 2-CTA clusters, each CTA on its own (no multicast, no shared barrier): the clusters' placement alone
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_fp8_persistent_n192_pair(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<fp8_gemm::Fp8Op<192, 1>, 1, 5, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}
