// The TMA ring of the warp-specialised tensor-core kernels (rungs/wgmma_fp8.cu; the protocol of
// rungs/wgmma_bf16_tma.cu's body_ws, as reusable pieces): the block's tile in a grouped 1-D grid,
// the ring of STAGES slots with a "full" and an "empty" mbarrier each, the producer's loop and the
// consumers' loop.
//
// Protocol: tile kt uses slot kt % STAGES, its (kt / STAGES)-th use. "full" (count 1) completes
// when the producer's arrive.expect_tx and the stage's TMA bytes have all landed: a consumer waits
// parity (kt / STAGES) & 1. "empty" (count: every consumer thread) completes when each consumer
// has released the slot: the producer waits parity (kt / STAGES - 1) & 1 before refilling it with
// tile kt. A consumer releases slot kt - LAG once its MMAs on it have completed (LAG 1: after
// wgmma.wait_group 1 on tile kt; LAG 0: after wait_group 0).
//
// Every wait is bounded (mbar_wait_bounded, MBAR_TIMEOUT_NS): a thread whose wait timed out issues
// no more copies, and a consumer that saw one stores nothing, so a stage whose bytes never arrive
// leaves C NaN-poisoned (the harness FAILS the rung) instead of hanging the process.
#pragma once

#include "ptx.cuh"

#ifndef GROUP_M
#define GROUP_M 16
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tma_ring {

// the block's BM x BN tile (grouped rasterisation of the 1-D grid), its k-tiles of BK, and the
// 64-row boxes of each operand that hold any of it (a box wholly past M or N is never loaded)
template <int BM, int BN, int BK>
struct Tile {
    int bm, bn, KT, a_boxes, b_boxes;
    __device__ __forceinline__ Tile(int M, int N, int K)
    {
        const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
        const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
        const int first_m = (pid / in_group) * GROUP_M;
        const int group_rows = min(grid_m - first_m, GROUP_M);
        bm = (first_m + (pid % in_group) % group_rows) * BM;
        bn = ((pid % in_group) / group_rows) * BN;
        KT = (K + BK - 1) / BK;
        a_boxes = min(BM / 64, (M - bm + 63) / 64);
        b_boxes = min(BN / 64, (N - bn + 63) / 64);
    }
};

// the ring (1024-byte aligned, as the 128-byte swizzle needs) and its barriers: full[s] at bars + 8s,
// empty[s] at bars + 8 (STAGES + s)
template <int STAGES, int STAGE_BYTES>
struct Ring {
    unsigned base, bars;
    __device__ __forceinline__ unsigned slot(int s) const { return base + s * STAGE_BYTES; }
    __device__ __forceinline__ unsigned full(int s) const { return bars + 8 * s; }
    __device__ __forceinline__ unsigned empty(int s) const { return bars + 8 * (STAGES + s); }
};

// every thread of the block calls it (it ends in a block barrier)
template <int STAGES, int STAGE_BYTES>
__device__ __forceinline__ Ring<STAGES, STAGE_BYTES> make_ring(unsigned char* smem, unsigned long long* bars,
                                                              unsigned consumers)
{
    const Ring<STAGES, STAGE_BYTES> r{(smem_u32(smem) + 1023u) & ~1023u, smem_u32(bars)};
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(r.full(s), 1);
            mbar_init(r.empty(s), consumers);
        }
        mbar_init_fence();
    }
    __syncthreads();
    return r;
}

// the producer thread: issue(slot, full barrier, kt) arms the slot's barrier and issues tile kt's
// copies, running up to STAGES tiles ahead; then waits until its last copies have landed, so no
// copy is in flight behind it when the block exits
template <int STAGES, int STAGE_BYTES, class Issue>
__device__ __forceinline__ void produce(const Ring<STAGES, STAGE_BYTES>& ring, int KT, Issue&& issue)
{
    int issued = 0;
    for (; issued < KT; issued++) {
        const int s = issued % STAGES;
        if (issued >= STAGES && !mbar_wait_bounded(ring.empty(s), (issued / STAGES - 1) & 1)) break;
        issue(ring.slot(s), ring.full(s), issued);
    }
    bool ok = true;
    for (int kt = max(0, issued - STAGES); kt < issued; kt++)
        ok = ok && mbar_wait_bounded(ring.full(kt % STAGES), (kt / STAGES) & 1);
}

// a consumer thread: for each k-tile, wait for its slot, step(slot, kt) (the warpgroup's MMAs, and
// the wait that makes slot kt - LAG free), release slot kt - LAG. False if any wait timed out.
template <int STAGES, int STAGE_BYTES, int LAG, class Step>
__device__ __forceinline__ bool consume(const Ring<STAGES, STAGE_BYTES>& ring, int KT, Step&& step)
{
    static_assert(LAG == 0 || LAG == 1, "a slot is released after its own tile or the next");
    bool ok = true;
    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % STAGES;
        ok = ok && mbar_wait_bounded(ring.full(s), (kt / STAGES) & 1);
        step(ring.slot(s), kt);
        if (kt >= LAG) mbar_arrive(ring.empty((kt - LAG) % STAGES));
    }
    return ok;
}

}  // namespace tma_ring
#endif
