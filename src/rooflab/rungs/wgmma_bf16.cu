// Tensor-core rung, Hopper: BF16 GEMM on wgmma.mma_async (sm_90a only), FP32 accumulate and
// output. C (FP32) = A * B, A M x K and B K x N row-major BF16 bits (unsigned short, the
// __nv_bfloat16 layout), as in mma_bf16.cu.
//
// Why wgmma: on Hopper the warp-level mma.sync reaches about 2/3 of the tensor-core rate;
// wgmma.mma_async lets a warpgroup (4 warps, 128 threads) issue 64 x 256 x 16 MMAs that read
// both operands straight from shared memory through 64-bit matrix descriptors, with no
// register fragments and no ldmatrix, and that run asynchronously to the issuing warps.
//
// Structure (no TMA: a TMA descriptor would have to be built on the host with the driver
// API, outside the harness's (A, B, C, M, N, K) signature; cp.async does the copies):
//   - block tile BM x BN x BK = 128 x 256 x 64, 256 threads = WGS = 2 warpgroups; warpgroup
//     w computes rows 64w..64w+63 of the tile with m64n256k16 (128 FP32 accumulators per thread).
//   - every thread copies 16-byte chunks with cp.async into a STAGES = 4 deep ring of
//     (A 16 KB + B 32 KB) slots laid out in the 128-byte swizzle wgmma expects;
//   - per k-tile: cp.async.wait_group + fence.proxy.async (makes the generic-proxy copies
//     visible to the async proxy that wgmma reads through) + __syncthreads, then 4 wgmma
//     (k = 0, 16, 32, 48), commit, and wgmma.wait_group 1: one batch stays in flight on the
//     tensor cores while the warps go round the loop. A slot is refilled only two
//     iterations after its batch was issued (after every warpgroup's wait_group 1 and a
//     barrier), so the prefetch distance is STAGES - 2 = 2 k-tiles. (-DINFLIGHT=0 trades
//     that overlap for a deeper prefetch: wait_group 0, distance STAGES - 1.)
//
// Shared layouts (each slot 1024-byte aligned; 16-byte chunk index XOR (row & 7) = the
// Swizzle<3,4,3> of the byte address, as CUTLASS's canonical SW128 GMMA layouts):
//   A, K-major: row m (of BM) at m * 128 B holds k 0..63; chunk c (k 8c..8c+7) sits at chunk
//     position c ^ (m & 7). Descriptor: start = row 64w, + 32 B per k16 step; SBO = 1024 B
//     (next 8 rows); LBO unused for swizzled K-major (1); layout type 1 (128B swizzle).
//   B, MN-major (row-major K x N is N-contiguous): 4 panels of 64 columns, panel p at
//     p * 8192 B; in a panel, k-row r at r * 128 B holds n 64p..64p+63, chunk c at position
//     c ^ (r & 7). Descriptor: start = + 2048 B per k16 step (16 rows); LBO = 8192 B (next
//     64 columns), SBO = 1024 B (next 8 k-rows); transpose-B immediate = 1.
// tests/tensor_emulator.py replays the loader and reads the tiles back through these
// descriptors with CUTLASS's canonical layout formulas, and checks the accumulator layout.
//
// Shapes: any M, N, K >= 1. Fast path when K % 8 == 0 and N % 8 == 0 (and A, B 16-byte
// aligned): 16-byte cp.async, src-size 0 zero-fills out-of-range chunks. Otherwise a
// synchronous path stores each element (zero out of range) into the same swizzled slot.
// C stores are predicated per element.
// Launch: block 256 (128 * WGS), grid (cdiv(M,128) * cdiv(N,256), 1, 1), dynamic shared
// memory MM_WGMMA_BF16_SMEM = 4 * 49152 + 1024 = 197632 bytes (> 48 KB: set
// max_dynamic_shared_size_bytes). Compile with -arch=sm_90a; for any other target (sm_75,
// sm_80, plain sm_90) the body is empty and the rung must not be launched.

#include "ptx.cuh"  // the inline-PTX wrappers shared by the tensor-core kernels (include/ptx.cuh)

#define WG_BN 256
#define WG_BK 64
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 16
#endif
#define B_STAGE_BYTES (WG_BK * WG_BN * 2)  // 32768
#define B_PANEL_BYTES (WG_BK * 128)        // 64 k-rows x 128 B
// per block: WGS consumer warpgroups (BM = 64 * WGS rows), STAGES-deep ring; + 1024: the ring
// is aligned up to 1024 B inside the kernel
#define MM_WGMMA_BF16_SMEM(wgs, stages) ((stages) * ((wgs) * 64 * WG_BK * 2 + B_STAGE_BYTES) + 1024)

typedef unsigned short bf16_bits;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void st_shared_u16(unsigned dst, bf16_bits v)
{
    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(dst), "h"(v) : "memory");
}

// keep the compiler from moving accumulator reads/writes across the asynchronous MMAs
__device__ __forceinline__ void fence_acc(float (&d)[128])
{
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+f"(d[i])::"memory");
}



// Per-thread copy plan of THREADS loading threads (tid = 0..THREADS-1) for a BM-row A tile:
// A chunks (rows tid/8 + i * THREADS/8, chunk tid%8) and B chunks (k-rows tid/32 + i *
// THREADS/32, 16-byte column chunk tid%32), each placed at its swizzled position. With 384
// threads a B tile (64 k-rows) takes 5 full passes of 12 rows plus a partial one (warps 0-3
// only: warp-uniform).
template <int BM_, int THREADS_, bool LAUNDER>
struct Loader {
    static constexpr int THREADS = THREADS_, BM = BM_, A_BYTES = BM * WG_BK * 2;
    const bf16_bits* A;
    const bf16_bits* B;
    int M, N, K, bm, bn, tid_;
    bool vec;

    __device__ __forceinline__ void load(unsigned slot, int kt) const
    {
        // LAUNDER (3 warpgroups, 168 registers at most): the thread index re-read here (an opaque S2R)
        // keeps the compiler from hoisting a pointer and a predicate per chunk out of the
        // k-loop (10 chunks, ~30 registers held for the whole loop, spilled); recomputing
        // them is a few integer instructions per chunk, issued while the tensor cores run
        int tid = tid_;
        if constexpr (LAUNDER) asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(tid));
        const int k0 = kt * WG_BK;
        const unsigned sa = slot, sb = slot + A_BYTES;
        if (vec) {
            const int c = tid % 8;
            const bool col_ok = k0 + c * 8 < K;  // K % 8 == 0: whole chunk in or out
#pragma unroll
            for (int i = 0; i < BM * 8 / THREADS; i++) {
                const int m = tid / 8 + i * (THREADS / 8);
                const bool ok = col_ok && bm + m < M;
                cp_async16(sa + m * 128 + ((c ^ (m & 7)) << 4), ok ? A + (size_t)(bm + m) * K + k0 + c * 8 : A,
                           ok ? 16 : 0);
            }
            const int cn = tid % 32, p = cn / 8, cc = cn % 8;
            const bool n_ok = bn + cn * 8 < N;   // N % 8 == 0: whole chunk in or out
            constexpr int RPP = THREADS / 32;   // k-rows per pass
#pragma unroll
            for (int i = 0; i < (WG_BK + RPP - 1) / RPP; i++) {
                const int r = tid / 32 + i * RPP;
                if ((i + 1) * RPP > WG_BK && r >= WG_BK) break;  // last partial pass only
                const bool ok = n_ok && k0 + r < K;
                cp_async16(sb + p * B_PANEL_BYTES + r * 128 + ((cc ^ (r & 7)) << 4),
                           ok ? B + (size_t)(k0 + r) * N + bn + cn * 8 : B, ok ? 16 : 0);
            }
        } else {
            // rows not 16-byte aligned: element by element, synchronously, same positions
#pragma unroll 1
            for (int e = tid; e < BM * WG_BK; e += THREADS) {
                const int m = e / WG_BK, kc = e % WG_BK, gr = bm + m, gc = k0 + kc;
                const bf16_bits v = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : (bf16_bits)0;
                st_shared_u16(sa + m * 128 + (((kc / 8) ^ (m & 7)) << 4) + (kc % 8) * 2, v);
            }
#pragma unroll 1
            for (int e = tid; e < WG_BK * WG_BN; e += THREADS) {
                const int r = e / WG_BN, n = e % WG_BN, gr = k0 + r, gc = bn + n;
                const bf16_bits v = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : (bf16_bits)0;
                st_shared_u16(sb + (n / 64) * B_PANEL_BYTES + r * 128 + ((((n % 64) / 8) ^ (r & 7)) << 4) + (n % 8) * 2,
                              v);
            }
        }
    }
};

// WGS consumer warpgroups (warpgroup w: rows 64w..64w+63 of the BM = 64 * WGS row tile),
// STAGES-deep cp.async ring, INFLIGHT wgmma batches left running across the barrier
template <int WGS, int STAGES, int INFLIGHT, bool FENCE = true>
__device__ __forceinline__ void wgmma_bf16_body(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
    static_assert(STAGES - 1 - INFLIGHT >= 1, "the ring needs at least one k-tile of prefetch");
    using LD = Loader<64 * WGS, 128 * WGS, WGS == 3>;
    constexpr int BM = LD::BM, STAGE_BYTES = LD::A_BYTES + B_STAGE_BYTES;
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    const unsigned ring = (smem_u32(wg_smem) + 1023u) & ~1023u;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, warp_in_wg = (tid % 128) / 32;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + WG_BN - 1) / WG_BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * WG_BN;

    const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0) &&
                     ((reinterpret_cast<size_t>(B) & 15) == 0);
    const int KT = (K + WG_BK - 1) / WG_BK;
    const LD ld{A, B, M, N, K, bm, bn, tid, vec};

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;

    constexpr int P = STAGES - 1 - INFLIGHT;  // prefetch distance in k-tiles
#pragma unroll
    for (int s = 0; s < P; s++) {
        if (s < KT) ld.load(ring + s * STAGE_BYTES, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<P - 1>();  // my copies of tile kt have landed
        if constexpr (FENCE) fence_proxy_async();  // ... and are visible to the async proxy
        __syncthreads();         // everyone's are; every batch <= kt - 1 - INFLIGHT has completed
        {
            const int nk = kt + P;  // its slot held tile kt - 1 - INFLIGHT: free
            if (nk < KT) ld.load(ring + (nk % STAGES) * STAGE_BYTES, nk);
            cp_async_commit();
        }
        const unsigned slot = ring + (kt % STAGES) * STAGE_BYTES;
        const unsigned a0 = slot + wg * 64 * 128, b0 = slot + LD::A_BYTES;
        fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < WG_BK / 16; kk++)
            wgmma_m64n256k16_bf16(acc, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 2048, B_PANEL_BYTES, 1024),
                                  1);
        wgmma_commit();
        wgmma_wait<INFLIGHT>();  // batch kt - INFLIGHT is done; a later one keeps the tensor cores busy
        fence_acc(acc);
    }
    wgmma_wait<0>();
    fence_acc(acc);
    cp_async_wait<0>();

    // accumulator layout of m64nNk16 (per warp like mma.m16n8): acc[4j + 2h + e] is
    // row 16 * warp + lane / 4 + 8h, column 8j + 2 * (lane % 4) + e of the warpgroup's 64 x 256
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = bm + wg * 64 + warp_in_wg * 16 + lane / 4 + 8 * h;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const int c = bn + 8 * j + 2 * (lane % 4);
            float* p = C + (size_t)r * N + c;
            if (pair && c < N) {  // N even and c even: c + 1 < N too
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            } else {
                if (c < N) p[0] = acc[4 * j + 2 * h];
                if (c + 1 < N) p[1] = acc[4 * j + 2 * h + 1];
            }
        }
    }
}

// Warp-specialized variant: warpgroup 0 produces (cp.async into a STAGES-deep ring, each
// slot's completion signalled on its "full" mbarrier with cp.async.mbarrier.arrive), and
// warpgroups 1 and 2 consume (rows 0-63 and 64-127 of the 128 x 256 tile). A consumer waits
// for the slot's full barrier, fences the async proxy, issues its 4 wgmma, and once the
// previous slot's wgmma have completed (wait_group 1) arrives on that slot's "empty"
// barrier, which the producer waits for before refilling it. No block-wide barrier in the
// loop, and the consumers never have loads of their own in flight when they fence.
template <int STAGES>
__device__ __forceinline__ void wgmma_bf16_ws_body(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N,
                                                   int K)
{
    using LD = Loader<128, 128, false>;
    constexpr int BM = 128, STAGE_BYTES = LD::A_BYTES + B_STAGE_BYTES;
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];  // full[s], then empty[s]
    const unsigned ring = (smem_u32(wg_smem) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&bars[0]), empty0 = smem_u32(&bars[STAGES]);

    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, warp_in_wg = (tid % 128) / 32;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + WG_BN - 1) / WG_BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * WG_BN;

    const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0) &&
                     ((reinterpret_cast<size_t>(B) & 15) == 0);
    const int KT = (K + WG_BK - 1) / WG_BK;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full0 + 8 * s, 128);   // every producer thread arrives once per fill
            mbar_init(empty0 + 8 * s, 256);  // every consumer thread arrives once per use
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // producer: tile kt into slot kt % STAGES once its previous tile (kt - STAGES) is released
        const LD ld{A, B, M, N, K, bm, bn, tid, vec};
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % STAGES;
            if (kt >= STAGES) mbar_wait(empty0 + 8 * s, ((kt / STAGES) - 1) & 1);
            ld.load(ring + s * STAGE_BYTES, kt);
            if (vec) cp_async_mbar_arrive(full0 + 8 * s);  // fires when this thread's copies have landed
            else mbar_arrive(full0 + 8 * s);                // synchronous st.shared: release now
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }

    // consumers
    const int cw = wg - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;
    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % STAGES;
        mbar_wait(full0 + 8 * s, (kt / STAGES) & 1);  // every producer thread's copies of tile kt have landed
        fence_proxy_async();                          // ... and are visible to the async proxy
        const unsigned slot = ring + s * STAGE_BYTES;
        const unsigned a0 = slot + cw * 64 * 128, b0 = slot + LD::A_BYTES;
        fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < WG_BK / 16; kk++)
            wgmma_m64n256k16_bf16(acc, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 2048, B_PANEL_BYTES, 1024),
                                  1);
        wgmma_commit();
        wgmma_wait<1>();  // tile kt - 1's wgmma are done: release its slot
        fence_acc(acc);
        if (kt >= 1) mbar_arrive(empty0 + 8 * ((kt - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_acc(acc);

    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = bm + cw * 64 + warp_in_wg * 16 + lane / 4 + 8 * h;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const int c = bn + 8 * j + 2 * (lane % 4);
            float* p = C + (size_t)r * N + c;
            if (pair && c < N) {  // N even and c even: c + 1 < N too
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            } else {
                if (c < N) p[0] = acc[4 * j + 2 * h];
                if (c + 1 < N) p[1] = acc[4 * j + 2 * h + 1];
            }
        }
    }
}
#endif

// the rung's kernel and its variants (rooflab tune); shared memory MM_WGMMA_BF16_SMEM(wgs, stages)
extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_bf16(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_body<2, 4, 1>(A, B, C, M, N, K);  // 128 x 256 tile, 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_wg3(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_body<3, 4, 1>(A, B, C, M, N, K);  // 192 x 256 tile, 230400 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_wg3_s3(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_body<3, 3, 1>(A, B, C, M, N, K);  // 192 x 256 tile, 173056 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_ws(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_ws_body<4>(A, B, C, M, N, K);  // 128 x 256 tile, 1 producer + 2 consumer warpgroups, 197632 bytes
#endif
}

// Diagnostics for the checker only (not rung variants): no fence.proxy.async between the
// cp.async copies and wgmma. ptxas emits the fence as MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S,
// and the MEMBAR may wait for this thread's cp.async still in flight (the next tile's),
// which would cut the prefetch to one tile. CUTLASS's cp.async + GMMA mainloops issue no
// proxy fence either; the PTX memory model asks for one for generic-proxy writes, and
// whether cp.async writes count as such is exactly what these two would test.
extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_bf16_nofence(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_body<2, 4, 1, false>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_bf16_wg3_nofence(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_bf16_body<3, 4, 1, false>(A, B, C, M, N, K);
#endif
}
