// Tensor-core rungs, Hopper: BF16 GEMM on wgmma.mma_async fed by TMA (sm_90a only), FP32
// accumulate and output. C (FP32, M x N row-major) = A * B, A M x K and B K x N row-major BF16.
//
// The kernels take tensor maps, not A and B: tmA and tmB point at 128-byte CUtensorMap objects
// in device memory, built on the host by rooflab.cuda.tma (cuTensorMapEncodeTiled):
//   A: dims {K, M}, row pitch in bytes, box {64, 64}: 64 k (128 B) x 64 rows
//   B: dims {N, K}, row pitch in bytes, box {64, 64}: 64 n (128 B) x 64 k-rows
// both with CU_TENSOR_MAP_SWIZZLE_128B and zero fill out of bounds. A box lands as 64 rows of
// 128 B with 16-byte chunk c of row r at position c ^ (r & 7) (the destination 1024-byte
// aligned): exactly the K-major A tile and the 64-column B panels that wgmma_bf16.cu builds with
// cp.async, read by the same descriptors (A: SBO 1024; B: LBO 8192 between panels, SBO 1024,
// transposed). So only the data path changes: one thread issues a whole stage (WGS boxes of A,
// 4 panels of B) and one mbarrier counts its bytes; no thread computes an address per chunk.
//
// Ring protocol (both kernels): slot s has a "full" barrier (count 1: the issuing thread's
// arrive.expect_tx, completed when the stage's bytes have landed) and an "empty" barrier
// (count: every consumer thread, arriving once its warpgroup's wgmma reading the slot have
// completed, wgmma.wait_group 1 one k-tile later). Tile kt uses slot kt % STAGES, the
// (kt / STAGES)-th use of it: full waits parity (kt / STAGES) & 1, and a refill of the slot
// with tile kt waits on empty with parity (kt / STAGES - 1) & 1. Boxes wholly past M or N are
// not issued (and not counted): they would only feed rows or columns of C that are never
// stored. The K tail is zero-filled by TMA, so the last k-tile's products add nothing.
//
// mm_wgmma_bf16_tma*: every warpgroup consumes (warpgroup w: rows 64w..64w+63 of the tile);
//   thread 0 also produces, refilling the slot of tile kt - 1 once everyone released it.
// mm_wgmma_bf16_tma_ws*: warp-specialised. Warpgroup 0 produces (one thread issues TMA, the
//   warpgroup gives registers back with setmaxnreg.dec); warpgroups 1.. consume with
//   setmaxnreg.inc. The producer runs up to STAGES tiles ahead, waiting only on empty slots.
// mm_wgmma_bf16_persistent, mm_wgmma_bf16_cluster, mm_wgmma_bf16_tma_store*: the warp-specialised kernel
//   made persistent (one block an SM over the grouped tile order, the ring running on from tile to
//   tile), then in 2-CTA clusters along M whose blocks multicast B's panels into both, then with the
//   epilogue through TMA stores: include/tma_persistent.cuh's body with the operand policy Bf16Op;
//   variants trade ring stages for C boxes staged at once.
//
// Every barrier wait gives up after MBAR_TIMEOUT_NS (ptx.cuh): a thread that timed out waits for
// nothing more, issues no more copies and stores nothing, so a stage whose bytes never arrive
// leaves C NaN-poisoned (the harness FAILS the rung) instead of hanging the process.
//
// Shapes: any M, N, K >= 1; TMA needs 16-byte row pitches and a 16-byte-aligned base, which
// the host side provides (a padded copy where K or N is not a multiple of 8). C stores are
// predicated per element. Grid (cdiv(M, BM) * cdiv(N, 256), 1, 1), grouped rasterisation (the
// persistent kernels: at most one block an SM, the record's grid function);
// dynamic shared memory MM_TMA_SMEM(wgs, stages) bytes. Compile with -arch=sm_90a; for any
// other target the bodies are empty and the rungs must not be launched.

#include "ptx.cuh"
#include "tma_persistent.cuh"
#include "wgmma_store.cuh"

#define TMA_BN 256
#define TMA_BK 64
#define TMA_BOX_BYTES (64 * 128)  // one 64 x 64 BF16 box: 8192 bytes
#ifndef GROUP_M
#define GROUP_M 16
#endif
// WGS 64-row A boxes + 4 B panels per stage; + 1024: the ring is aligned up inside the kernel
#define MM_TMA_SMEM(wgs, stages) ((stages) * ((wgs) + 4) * TMA_BOX_BYTES + 1024)
// the persistent kernels + the TMA-store epilogue's staging (include/tma_persistent.cuh)
#define MM_TMA_STORE_SMEM(stages) TP_STORE_SMEM(1, TMA_BN, stages)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tma_gemm {

// the block's tile (grouped rasterisation of the 1-D grid) and what of it lies inside A and B
template <int BM>
struct Tile {
    int bm, bn, KT, a_boxes, b_panels;
    __device__ __forceinline__ Tile(int M, int N, int K)
    {
        const int grid_m = (M + BM - 1) / BM, grid_n = (N + TMA_BN - 1) / TMA_BN;
        const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
        const int first_m = (pid / in_group) * GROUP_M;
        const int group_rows = min(grid_m - first_m, GROUP_M);
        bm = (first_m + (pid % in_group) % group_rows) * BM;
        bn = ((pid % in_group) / group_rows) * TMA_BN;
        KT = (K + TMA_BK - 1) / TMA_BK;
        a_boxes = min(BM / 64, (M - bm + 63) / 64);
        b_panels = min(TMA_BN / 64, (N - bn + 63) / 64);
    }
};

// one stage: arm the slot's full barrier with the bytes to come, then issue the boxes
template <int BM>
__device__ __forceinline__ void issue_stage(const void* tmA, const void* tmB, const Tile<BM>& t, unsigned slot,
                                            unsigned full, int kt)
{
    const int k0 = kt * TMA_BK;
#ifdef PLANT_SHORT_TX  // a planted bug for the GPU tests: the barrier waits for 16 bytes that never come
    mbar_arrive_expect_tx(full, (t.a_boxes + t.b_panels) * TMA_BOX_BYTES + 16);
#else
    mbar_arrive_expect_tx(full, (t.a_boxes + t.b_panels) * TMA_BOX_BYTES);
#endif
    for (int w = 0; w < t.a_boxes; w++) tma_load_2d(slot + w * TMA_BOX_BYTES, tmA, k0, t.bm + 64 * w, full);
    const unsigned sb = slot + BM * 128;
    for (int p = 0; p < t.b_panels; p++) tma_load_2d(sb + p * TMA_BOX_BYTES, tmB, t.bn + 64 * p, k0, full);
}

// a consumer warpgroup's 4 wgmma on one slot (its 64 rows of A against the 256 columns of B)
template <int BM>
__device__ __forceinline__ void mma_stage(float (&acc)[128], unsigned slot, int cw)
{
    const unsigned a0 = slot + cw * 64 * 128, b0 = slot + BM * 128;
    fence_acc(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < TMA_BK / 16; kk++)
        wgmma_m64n256k16_bf16(acc, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 2048, TMA_BOX_BYTES, 1024), 1);
    wgmma_commit();
}


// the ring (1024-byte aligned) and its barriers: full[s] at bars + 8s, empty[s] at bars + 8 (STAGES + s)
template <int STAGES>
struct Ring {
    unsigned base, bars;
    __device__ __forceinline__ unsigned full(int s) const { return bars + 8 * s; }
    __device__ __forceinline__ unsigned empty(int s) const { return bars + 8 * (STAGES + s); }
};

template <int STAGES>
__device__ __forceinline__ Ring<STAGES> make_ring(unsigned char* smem, unsigned long long* bars, unsigned consumers)
{
    const Ring<STAGES> r{(smem_u32(smem) + 1023u) & ~1023u, smem_u32(bars)};
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

// WGS warpgroups, all consumers; thread 0 issues the loads in line
template <int WGS, int STAGES>
__device__ __forceinline__ void body(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
    constexpr int BM = 64 * WGS, STAGE_BYTES = (WGS + 4) * TMA_BOX_BYTES;
    extern __shared__ __align__(1024) unsigned char tma_smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    const Ring<STAGES> ring = make_ring<STAGES>(tma_smem, bars, 128 * WGS);
    const Tile<BM> t(M, N, K);
    const int tid = threadIdx.x, wg = tid / 128;

    if (tid == 0) {
        tensormap_acquire(tmA);
        tensormap_acquire(tmB);
        for (int s = 0; s < STAGES && s < t.KT; s++)
            issue_stage<BM>(tmA, tmB, t, ring.base + s * STAGE_BYTES, ring.full(s), s);
    }
    __syncwarp();

    bool ok = true;  // false once a wait timed out
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;
    for (int kt = 0; kt < t.KT; kt++) {
        const int s = kt % STAGES;
        ok = ok && mbar_wait_bounded(ring.full(s), (kt / STAGES) & 1);
        mma_stage<BM>(acc, ring.base + s * STAGE_BYTES, wg);
        wgmma_wait<1>();  // tile kt - 1's products are done: its slot may be refilled
        fence_acc(acc);
        if (kt >= 1) {
            const int ps = (kt - 1) % STAGES, nk = kt - 1 + STAGES;
            mbar_arrive(ring.empty(ps));
            if (tid == 0 && nk < t.KT) {
                ok = ok && mbar_wait_bounded(ring.empty(ps), ((kt - 1) / STAGES) & 1);
                if (ok) issue_stage<BM>(tmA, tmB, t, ring.base + ps * STAGE_BYTES, ring.full(ps), nk);
            }
            __syncwarp();  // warp 0 reconverges before the next .aligned wgmma
        }
    }
    wgmma_wait<0>();
    fence_acc(acc);
    if (ok) store_wgmma_acc(acc, C, M, N, t.bm + wg * 64, t.bn);
}

// one producer warpgroup (warpgroup 0) + CONSUMERS consumer warpgroups; registers move from the
// producer (PRODUCER_REGS) to the consumers (CONSUMER_REGS). setmaxnreg.inc blocks until the block's
// pool (registers at launch x threads) has the registers, so 128 * (PRODUCER_REGS + CONSUMERS *
// CONSUMER_REGS) must fit it, or the consumers wait forever. ptxas gives a kernel that uses setmaxnreg
// the launch bound's maximum (168 at 384 threads: room for 232); 216 still fits at 158 registers a
// thread, should another compiler allocate fewer, and leaves the consumers ~50 above their 128
// accumulators. CONSUMER_REGS must not be below the launch count (168).
template <int CONSUMERS, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__device__ __forceinline__ void body_ws(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
    static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "register file overcommitted");
    constexpr int BM = 64 * CONSUMERS, STAGE_BYTES = (CONSUMERS + 4) * TMA_BOX_BYTES;
    extern __shared__ __align__(1024) unsigned char tma_smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];
    const Ring<STAGES> ring = make_ring<STAGES>(tma_smem, bars, 128 * CONSUMERS);
    const Tile<BM> t(M, N, K);
    const int tid = threadIdx.x, wg = tid / 128;

    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (tid == 0) {
            tensormap_acquire(tmA);
            tensormap_acquire(tmB);
            int issued = 0;
            for (; issued < t.KT; issued++) {
                const int s = issued % STAGES;
                if (issued >= STAGES && !mbar_wait_bounded(ring.empty(s), (issued / STAGES - 1) & 1)) break;
                issue_stage<BM>(tmA, tmB, t, ring.base + s * STAGE_BYTES, ring.full(s), issued);
            }
            // leave no copy in flight behind this thread: the last stages issued have landed
            bool ok = true;
            for (int kt = max(0, issued - STAGES); kt < issued; kt++)
                ok = ok && mbar_wait_bounded(ring.full(kt % STAGES), (kt / STAGES) & 1);
        }
    } else {
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; i++) acc[i] = 0.0f;
        bool ok = true;  // false once a wait timed out
        for (int kt = 0; kt < t.KT; kt++) {
            const int s = kt % STAGES;
            ok = ok && mbar_wait_bounded(ring.full(s), (kt / STAGES) & 1);
            mma_stage<BM>(acc, ring.base + s * STAGE_BYTES, cw);
            wgmma_wait<1>();
            fence_acc(acc);
            if (kt >= 1) mbar_arrive(ring.empty((kt - 1) % STAGES));
        }
        wgmma_wait<0>();
        fence_acc(acc);
        if (ok) store_wgmma_acc(acc, C, M, N, t.bm + cw * 64, t.bn);
    }
}

// the persistent kernels' operands: B's 64-column panels (N-major, wgmma's transposed B), k16 steps
struct Bf16Op {
    static constexpr int BK = TMA_BK, BN = TMA_BN, NACC = 128, PARTS = 1, FLUSH = 0;
    static constexpr bool B_KMAJOR = false;
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned a0, unsigned b0, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < TMA_BK / 16; kk++)
            wgmma_m64n256k16_bf16(d, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 2048, TMA_BOX_BYTES, 1024),
                                  accumulate || kk > 0);
    }
};

// the same, each CTA of a cluster loading all of B itself (tma_persistent::skips_multicast)
struct Bf16OpOwnB : Bf16Op {
    static constexpr bool NO_MULTICAST = true;
};

// the same with the tile's 128 rows of A in one box (the host's "tma_a128" maps): five TMA issues a stage, not six
struct Bf16OpA128 : Bf16Op {
    static constexpr int A_BOX_ROWS = 128;
};

// one TMA issue an operand a stage: A in one 128-row box, B as it lies in one rank-3 box of its four 64-column
// panels (the host's "tma_ab1" maps): two issues, not six
struct Bf16OpOneBox : Bf16Op {
    static constexpr int A_BOX_ROWS = 128;
    static constexpr bool B_ONE_BOX = true;
};

// the same in clusters whose partner releases an idle producer warp relays (tma_persistent::relays_release)
struct Bf16OpRelay : Bf16Op {
    static constexpr bool RELAY_RELEASE = true;
};

// the same with C also staged in the held slot of each tile's last k-tile (tma_persistent::stages_c_in_slot)
struct Bf16OpSlot : Bf16Op {
    static constexpr bool C_IN_SLOT = true;
};

}  // namespace tma_gemm
#endif

// TMA ring, every warpgroup a consumer: 2 warpgroups (128 x 256) or 3 (192 x 256)
extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_bf16_tma(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_gemm::body<2, 4>(tmA, tmB, C, M, N, K);  // MM_TMA_SMEM(2, 4) = 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_wg3(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_gemm::body<3, 4>(tmA, tmB, C, M, N, K);  // MM_TMA_SMEM(3, 4) = 230400 bytes
#endif
}

// warp-specialised: a producer warpgroup + 2 consumers (128 x 256). Three consumers (512 threads)
// do not fit: 128 registers a thread at launch, and a 64 x 256 wgmma alone needs 154 (ptxas C7602)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_ws(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_gemm::body_ws<2, 4, 40, 216>(tmA, tmB, C, M, N, K);  // MM_TMA_SMEM(2, 4) = 197632 bytes
#endif
}

// persistent: one CTA an SM over the grouped tile order, producer + 2 consumers (128 x 256)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_persistent(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 4, 40, 232, false>(tmA, tmB, C, M, N, K);  // MM_TMA_SMEM(2, 4) = 197632 bytes
#endif
}

// persistent in 2-CTA clusters along M, the B panels multicast to both CTAs
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 2, 4, 40, 232, false>(tmA, tmB, C, M, N, K);  // MM_TMA_SMEM(2, 4) = 197632 bytes
#endif
}


// persistent, the epilogue through shared memory and TMA stores (the map of C after B's)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);  // MM_TMA_STORE_SMEM(4) = 230400 bytes
#endif
}

// the same with A in one 128-row box a stage
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_a128(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16OpA128, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_ab1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16OpOneBox, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// 2-CTA clusters with B multicast, TMA-store epilogue, the releases for the partner relayed by warp 1 of the producer
// warpgroup
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_cluster_relay(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16OpRelay, 2, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the same with C staged in 5 buffers a consumer, 3 of them in the ring slot of the tile's last k-tile (its box of A
// and half the slot's B), held through the epilogue: 3 of 8 boxes wait for an earlier one's buffer, not 6
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_slot(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16OpSlot, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the same over other tile orders: 8 or 32 row tiles a group (16 above)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_g8(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 4, 40, 232, true, 8>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_g32(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 4, 40, 232, true, 32>(tmA, tmB, C, M, N, K);
#endif
}

// the same in 2-CTA clusters with B multicast
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 2, 4, 40, 232, true>(tmA, tmB, C, M, N, K);  // MM_TMA_STORE_SMEM(4) = 230400 bytes
#endif
}

// the clusters' lock-step without their shared loads (each CTA loads all of B, slots released on both), and
// their placement alone (launched in pairs, each CTA on its own)
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_cluster_ownb(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16OpOwnB, 2, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_pair(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// A shallower ring for a deeper C staging, in the same 230400 bytes: with 4 stages each consumer
// stages 2 of its 8 C boxes, so 6 wait for an earlier box's store to have read its buffer while the
// tensor cores idle (every SM reaches its epilogue at once, so those stores drain at the whole GPU's
// write rate). 3 stages leave room for 5 boxes (3 wait); 2 stages for all 8, written before one
// barrier (the public kernel's epilogue, which stages its whole BF16 tile). Groups of 16 as above.
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_s3(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 3, 40, 232, true, 16, 5>(tmA, tmB, C, M, N, K);  // TP_STORE_SMEM_BUFS(1, 256, 3, 5) = 230400
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_s2(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 2, 40, 232, true, 16, 8>(tmA, tmB, C, M, N, K);  // TP_STORE_SMEM_BUFS(1, 256, 2, 8) = 230400
#endif
}

// the public kernel's shape: 2-CTA clusters with B multicast, 3 stages, 5 C boxes a consumer
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_cluster_s3(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 2, 3, 40, 232, true, 16, 5>(tmA, tmB, C, M, N, K);  // TP_STORE_SMEM_BUFS(1, 256, 3, 5) = 230400
#endif
}

// the control: 3 stages with the 2 C boxes of the default (the ring's depth alone)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_tma_store_s3_c2(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tma_gemm::Bf16Op, 1, 3, 40, 232, true, 16, 2>(tmA, tmB, C, M, N, K);  // TP_STORE_SMEM(1, 256, 3) = 181248
#endif
}
