// Tensor-core rungs, Hopper: TF32 and FP32-accurate 3xTF32 GEMM on wgmma.mma_async (sm_90a only).
// C (FP32, M x N row-major) = A (M x K) * B (K x N), FP32 inputs.
//
// Data path. TF32 wgmma reads both operands K-major from shared memory (the transpose
// immediates exist only for 16-bit types), and row-major B is N-major. So the operands are
// STAGED by a pre-pass (the stage_* kernels below; rooflab.cuda.staging launches them before
// the main kernel, and the rung's time includes them):
//   TF32:   A' = tf32_rna(A)  (M x Kp),  B' = tf32_rna(B)^T  (N x Kp);
//   3xTF32: A' = [A_big; A_small], B' = [B_big^T; B_small^T]  (each part M x Kp / N x Kp),
//           x = big + small, big = tf32_rna(x), small = tf32_rna(x - big) (x - big is exact).
// Kp = K rounded up to a multiple of 32, the pad zero-filled, so the main kernel needs no
// K predicate and every row is 128-byte aligned. The main kernel is called with K = Kp.
//
// Main kernel (modelled on wgmma_bf16.cu): block tile BM x BN x 32 (BM = 64 * WGS, WGS
// warpgroups; warpgroup w computes rows 64w..64w+63 with m64nBNk8). Every thread copies
// 16-byte chunks with cp.async (src-size 0 zero-fills rows past M or N) into a STAGES-deep
// ring; a slot holds, per part, the A tile (BM rows) then the B tile (BN rows), row r at
// r * 128 B holding k 0..31, 16-byte chunk c (k 4c..4c+3) at chunk position c ^ (r & 7): the
// 128-byte swizzle. Descriptors (both operands alike): start = the tile's first row + 32 B
// per k8 step, SBO = 1024 B (next 8 rows), LBO unused, layout type 1; slots 1024-B aligned.
// Per k-tile: cp.async.wait_group + fence.proxy.async + __syncthreads; refill the slot freed
// INFLIGHT + 1 tiles ago (prefetch distance STAGES - 1 - INFLIGHT); 4 k8 steps of wgmma
// (x 3 products for 3xTF32), commit; wgmma.wait_group INFLIGHT.
//
// Accumulation. The tensor core's FP32 accumulation truncates, so a long chain collects an
// error growing with K (3xTF32 unflushed: 2.9e-5 at K = 4096; FP32 SGEMM 1.15e-6).
//   TF32: the accumulator stays in the wgmma chain (as cuBLAS TF32 and mma_tf32 do), so the
//     rung's tolerance is the tensor core's, not FP32 RN accumulation's (see tensor.py).
//   3xTF32: per k8 step three products (big*small, small*big, big*big; small*small ~2^-22
//     dropped) into a PARTIAL accumulator that starts from zero (scale-d = 0) every FLUSH
//     k-tiles; after a group's last tile the warpgroup drains its wgmma (wait_group 0) and
//     adds the partial to its FP32 accumulator with round-to-nearest FADDs. (A second partial
//     flushed while the other's wgmma run would keep the pipe full, but ptxas then serializes
//     every wgmma: it cannot tell which group a wait_group 1 retires.) Warpgroup w's groups
//     start STAGGER * w tiles late, so the two warpgroups do not drain on the same k-tile.
//
// Shapes: any M, N >= 1; K through Kp. Kernels (extern "C"), shared memory per
// MM_WGMMA_TF32_SMEM(BM, BN, parts, stages) (set max_dynamic_shared_size_bytes):
//   mm_wgmma_tf32_wg3      TF32, 192 x 256, 3 warpgroups, 4 stages, 1 in flight (the default)
//   mm_wgmma_tf32          TF32, 128 x 256, 2 warpgroups, 4 stages, 1 in flight
//   mm_wgmma_tf32_wg3_w0   TF32, 192 x 256, 3 warpgroups, 4 stages, wait_group 0 (prefetch distance 3)
//   mm_wgmma_tf32_wg3_s3   TF32, 192 x 256, 3 warpgroups, 3 stages, 1 in flight
//   mm_wgmma_tf32_ws       TF32, 128 x 256, producer + 2 consumer warpgroups (body_ws), 4 stages
//   mm_wgmma_3xtf32_ws     3xTF32, 128 x 128, producer + 2 consumers, 3 stages, flush every 2 k-tiles (default)
//   mm_wgmma_3xtf32_ws_f4  the same, flush every 4 k-tiles; _ws_f1: every k-tile
//   mm_wgmma_3xtf32        3xTF32, 128 x 128, 2 warpgroups, 3 stages, flush every 2 k-tiles, staggered
//   mm_wgmma_3xtf32_f1     the same, flush every k-tile
//   mm_wgmma_3xtf32_f4     flush every 4 k-tiles, staggered by 2
//   mm_wgmma_3xtf32_f2_ns  flush every 2 k-tiles, not staggered
//   mm_wgmma_3xtf32_wg3    192 x 128, 3 warpgroups, 2 stages, wait_group 0, flush every 2 k-tiles
// Launch: block 128 * WGS (body_ws: 384), grid (cdiv(M,BM) * cdiv(N,BN), 1, 1). Compile with -arch=sm_90a;
// for any other target the main kernels' bodies are empty (the stage_* kernels run anywhere).

#include "ptx.cuh"  // the inline-PTX wrappers shared by the tensor-core kernels (include/ptx.cuh)

#define NT_BK 32  // one 128-byte swizzle row of FP32
#ifndef GROUP_M   // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 16
#endif
#define MM_WGMMA_TF32_SMEM(bm, bn, parts, stages) ((stages) * (parts) * ((bm) + (bn)) * 128 + 1024)

#include "stage_tf32.cuh"  // the pre-pass (any architecture)

extern "C" __global__ void stage_a_tf32(const float* X, float* out, int R, int K, int Kp) { stage_rows<1>(X, out, R, K, Kp); }
extern "C" __global__ void stage_a_3xtf32(const float* X, float* out, int R, int K, int Kp) { stage_rows<2>(X, out, R, K, Kp); }
extern "C" __global__ void stage_bt_tf32(const float* X, float* out, int K, int N, int Kp) { stage_cols<1>(X, out, K, N, Kp); }
extern "C" __global__ void stage_bt_3xtf32(const float* X, float* out, int K, int N, int Kp) { stage_cols<2>(X, out, K, N, Kp); }

// ------------------------------------------------------------------ main kernels (sm_90a)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace nt {

// keep the compiler from moving accumulator reads/writes across the asynchronous MMAs
template <int N>
__device__ __forceinline__ void fence_f(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma matrix descriptor: start address, leading / stride byte offsets (all >> 4), base
// offset 0 (slots are 1024-byte aligned), layout type 1 = 128-byte swizzle
__device__ __forceinline__ unsigned long long desc(unsigned addr)
{
    constexpr unsigned lbo = 16, sbo = 1024;
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

template <int V>
struct IC {
    static constexpr int value = V;
};
template <int I, int N, typename F>
__device__ __forceinline__ void static_for(F&& f)
{
    if constexpr (I < N) {
        f(IC<I>{});
        static_for<I + 1, N>(f);
    }
}

// One k-tile of the staged operands into a ring slot by THREADS copying threads (t < THREADS):
// per part, BM rows of A then BN rows of B, each row 8 16-byte chunks; thread t copies chunk
// t % 8 of rows t / 8 + i * RPP. The row range of pass i is known at compile time, so where a
// pass lies wholly in one operand (all the configurations here) its source is one base
// pointer plus t / 8 rows: a handful of instructions per chunk, no branches. A pass that
// straddles two operands takes the general per-chunk path.
template <int BM, int BN, int PARTS, int THREADS>
__device__ __forceinline__ void copy_tile(unsigned slot, const float* A, const float* B, int M, int N, int K, int bm,
                                          int bn, int kt, int t)
{
    constexpr int ROWS = BM + BN, PART_BYTES = ROWS * 128, RPP = THREADS / 8, TOTAL = PARTS * ROWS;
    static_assert(THREADS % 64 == 0, "passes of whole 8-row swizzle groups");
    const int c = t % 8, rr = t / 8, k = kt * NT_BK + 4 * c;
    const unsigned sw = rr * 128 + ((c ^ (rr & 7)) << 4);  // RPP % 8 == 0: row & 7 == rr & 7
    const size_t a_part = (size_t)M * K, b_part = (size_t)N * K;
    static_for<0, (TOTAL + RPP - 1) / RPP>([&](auto ic) {
        constexpr int row0 = decltype(ic)::value * RPP, p = row0 / ROWS, r0 = row0 % ROWS;
        constexpr bool is_a = r0 < BM;
        constexpr bool whole = is_a ? r0 + RPP <= BM : r0 + RPP <= ROWS;
        if (row0 + RPP > TOTAL && row0 + rr >= TOTAL) return;  // the last pass, partly past the end
        if constexpr (whole) {
            const int g = (is_a ? bm + r0 : bn + (r0 - BM)) + rr;
            const bool ok = g < (is_a ? M : N);
            const float* src = (is_a ? A + p * a_part : B + p * b_part) + (size_t)g * K + k;
            cp_async16(slot + p * PART_BYTES + r0 * 128 + sw, ok ? src : A, ok ? 16 : 0);
        } else {
            const int pr = row0 + rr, pp = pr / ROWS, r = pr % ROWS;
            const bool a_row = r < BM;
            const int g = a_row ? bm + r : bn + (r - BM);
            const bool ok = g < (a_row ? M : N);
            const float* src = a_row ? A + pp * a_part + (size_t)g * K + k : B + pp * b_part + (size_t)g * K + k;
            cp_async16(slot + pp * PART_BYTES + r * 128 + ((c ^ (r & 7)) << 4), ok ? src : A, ok ? 16 : 0);
        }
    });
}

template <int BN>
__device__ __forceinline__ void mma(float (&d)[BN / 2], unsigned long long da, unsigned long long db, int scale_d)
{
    if constexpr (BN == 128) wgmma_m64n128k8_tf32(d, da, db, scale_d);
    else wgmma_m64n256k8_tf32(d, da, db, scale_d);
}

// WGS warpgroups (BM = 64 * WGS rows), BN columns, STAGES-deep ring, INFLIGHT wgmma batches
// left running across the barrier; PARTS = 1 (TF32) or 2 (3xTF32: big and small parts of
// both operands, a partial accumulator flushed every FLUSH k-tiles, warpgroup w's groups
// shifted by STAGGER * w tiles). K is the staged Kp.
template <int WGS, int BN, int STAGES, int INFLIGHT, int PARTS, int FLUSH, int STAGGER>
__device__ __forceinline__ void body(const float* A, const float* B, float* C, int M, int N, int K)
{
    constexpr int BM = 64 * WGS, THREADS = 128 * WGS, ROWS = BM + BN;
    constexpr int PART_BYTES = ROWS * 128, STAGE_BYTES = PARTS * PART_BYTES;
    constexpr int NACC = BN / 2;  // accumulator registers per thread
    constexpr int P = STAGES - 1 - INFLIGHT;  // prefetch distance in k-tiles
    static_assert(P >= 1, "the ring needs at least one k-tile of prefetch");
    static_assert(PARTS == 1 || FLUSH >= 1, "3xTF32 flushes its partials");
    extern __shared__ __align__(1024) unsigned char nt_smem[];
    const unsigned ring = (smem_u32(nt_smem) + 1023u) & ~1023u;
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, warp = (tid % 128) / 32;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * BN;
    const int KT = K / NT_BK;

    // tile kt into its slot; the thread index re-read (an opaque S2R) keeps the compiler from
    // hoisting a pointer and a predicate per chunk out of the k-loop (registers held for the
    // whole loop: spills); recomputing them is a few instructions per chunk
    auto load = [&](int kt) {
        int t;
        asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
        copy_tile<BM, BN, PARTS, THREADS>(ring + (kt % STAGES) * STAGE_BYTES, A, B, M, N, K, bm, bn, kt, t);
    };

    float acc[NACC], part[PARTS == 2 ? NACC : 1];
#pragma unroll
    for (int i = 0; i < NACC; i++) acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < (PARTS == 2 ? NACC : 1); i++) part[i] = 0.0f;
    // 3xTF32: warpgroup w's groups of FLUSH k-tiles start STAGGER * w tiles late, so the
    // warpgroups' flushes (and the drains before them) fall on different k-tiles
    const int shift = STAGGER * wg;

#pragma unroll
    for (int s = 0; s < P; s++) {
        if (s < KT) load(s);
        cp_async_commit();
    }

    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<P - 1>();  // my copies of tile kt have landed
        fence_proxy_async();     // ... and are visible to the async proxy
        __syncthreads();         // everyone's are; every batch <= kt - 1 - INFLIGHT has completed
        if (kt + P < KT) load(kt + P);  // its slot held tile kt - 1 - INFLIGHT: free
        cp_async_commit();
        const unsigned slot = ring + (kt % STAGES) * STAGE_BYTES;
        const unsigned a0 = slot + wg * 64 * 128, b0 = slot + BM * 128;
        if constexpr (PARTS == 1) {
            fence_f(acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < NT_BK / 8; kk++) mma<BN>(acc, desc(a0 + 32 * kk), desc(b0 + 32 * kk), 1);
            wgmma_commit();
            wgmma_wait<INFLIGHT>();
            fence_f(acc);
        } else {
            const bool first = kt == 0 || (kt + shift) % FLUSH == 0;  // the partial starts from zero
            const bool last = kt == KT - 1 || (kt + 1 + shift) % FLUSH == 0;  // ... and is flushed after
            fence_f(part);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < NT_BK / 8; kk++) {
                const unsigned ab = a0 + 32 * kk, as = ab + PART_BYTES, bb = b0 + 32 * kk, bs = bb + PART_BYTES;
                mma<BN>(part, desc(ab), desc(bs), kk > 0 || !first);  // big * small
                mma<BN>(part, desc(as), desc(bb), 1);                 // small * big
                mma<BN>(part, desc(ab), desc(bb), 1);                 // big * big
            }
            wgmma_commit();
            if (last) {  // warpgroup-uniform: drain, then round-to-nearest FP32 adds
                wgmma_wait<0>();
                fence_f(part);
#pragma unroll
                for (int i = 0; i < NACC; i++) acc[i] += part[i];
            } else {
                wgmma_wait<INFLIGHT>();
                fence_f(part);
            }
        }
    }
    wgmma_wait<0>();
    fence_f(acc);
    cp_async_wait<0>();

    // accumulator layout of m64nNk8 (per warp like mma.m16n8): acc[4j + 2h + e] is row
    // 16 * warp + lane / 4 + 8h, column 8j + 2 * (lane % 4) + e of the warpgroup's 64 x BN
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = bm + wg * 64 + warp * 16 + lane / 4 + 8 * h;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
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

// Warp-specialised: warpgroup 0 produces (cp.async into the STAGES-deep ring, each slot's
// completion signalled on its "full" mbarrier by cp.async.mbarrier.arrive), warpgroups 1 and 2
// consume (rows 0-63 and 64-127 of the 128 x BN tile): wait for the slot's full barrier, fence
// the async proxy, issue the k-tile's wgmma, and once the previous tile's have completed arrive
// on that slot's "empty" barrier, which the producer waits for before refilling it. The
// producer never waits for its own copies, so up to STAGES tiles are in flight (the
// block-synchronous body: STAGES - 1 - INFLIGHT, and its proxy fence's MEMBAR may wait for the
// copies still in flight); no block-wide barrier in the loop, so the consumers drift apart
// and one's drain overlaps the other's wgmma.
template <int BN, int STAGES, int PARTS, int FLUSH, int STAGGER>
__device__ __forceinline__ void body_ws(const float* A, const float* B, float* C, int M, int N, int K)
{
    constexpr int BM = 128, THREADS = 128, ROWS = BM + BN;  // THREADS: the producer's
    constexpr int PART_BYTES = ROWS * 128, STAGE_BYTES = PARTS * PART_BYTES;
    constexpr int NACC = BN / 2;
    extern __shared__ __align__(1024) unsigned char nt_smem[];
    __shared__ __align__(8) unsigned long long bars[2 * STAGES];  // full[s], then empty[s]
    const unsigned ring = (smem_u32(nt_smem) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&bars[0]), empty0 = smem_u32(&bars[STAGES]);
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, warp = (tid % 128) / 32;

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * BN;
    const int KT = K / NT_BK;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full0 + 8 * s, THREADS);  // every producer thread arrives once per fill
            mbar_init(empty0 + 8 * s, 256);     // every consumer thread once per use
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {  // producer: tile kt into slot kt % STAGES once tile kt - STAGES is released
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % STAGES;
            if (kt >= STAGES) mbar_wait(empty0 + 8 * s, ((kt / STAGES) - 1) & 1);
            copy_tile<BM, BN, PARTS, THREADS>(ring + s * STAGE_BYTES, A, B, M, N, K, bm, bn, kt, tid);
            cp_async_mbar_arrive(full0 + 8 * s);  // fires when this thread's copies have landed
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }

    const int cw = wg - 1, shift = STAGGER * cw;
    float acc[NACC], part[PARTS == 2 ? NACC : 1];
#pragma unroll
    for (int i = 0; i < NACC; i++) acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < (PARTS == 2 ? NACC : 1); i++) part[i] = 0.0f;
    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % STAGES;
        mbar_wait(full0 + 8 * s, (kt / STAGES) & 1);  // every producer thread's copies of tile kt have landed
        fence_proxy_async();                          // ... and are visible to the async proxy
        const unsigned slot = ring + s * STAGE_BYTES;
        const unsigned a0 = slot + cw * 64 * 128, b0 = slot + BM * 128;
        if constexpr (PARTS == 1) {
            fence_f(acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < NT_BK / 8; kk++) mma<BN>(acc, desc(a0 + 32 * kk), desc(b0 + 32 * kk), 1);
            wgmma_commit();
            wgmma_wait<1>();
            fence_f(acc);
        } else {
            const bool first = kt == 0 || (kt + shift) % FLUSH == 0;
            const bool last = kt == KT - 1 || (kt + 1 + shift) % FLUSH == 0;
            fence_f(part);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < NT_BK / 8; kk++) {
                const unsigned ab = a0 + 32 * kk, as = ab + PART_BYTES, bb = b0 + 32 * kk, bs = bb + PART_BYTES;
                mma<BN>(part, desc(ab), desc(bs), kk > 0 || !first);  // big * small
                mma<BN>(part, desc(as), desc(bb), 1);                 // small * big
                mma<BN>(part, desc(ab), desc(bb), 1);                 // big * big
            }
            wgmma_commit();
            if (last) {
                wgmma_wait<0>();
                fence_f(part);
#pragma unroll
                for (int i = 0; i < NACC; i++) acc[i] += part[i];
            } else {
                wgmma_wait<1>();
                fence_f(part);
            }
        }
        if (kt >= 1) mbar_arrive(empty0 + 8 * ((kt - 1) % STAGES));  // tile kt - 1's wgmma are done
    }
    wgmma_wait<0>();
    fence_f(acc);

    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = bm + cw * 64 + warp * 16 + lane / 4 + 8 * h;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int c = bn + 8 * j + 2 * (lane % 4);
            float* p = C + (size_t)r * N + c;
            if (pair && c < N) {
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            } else {
                if (c < N) p[0] = acc[4 * j + 2 * h];
                if (c + 1 < N) p[1] = acc[4 * j + 2 * h + 1];
            }
        }
    }
}

}  // namespace nt
#endif

// the rungs' kernels and their variants (rooflab tune):
// template <WGS, BN, STAGES, INFLIGHT, PARTS, FLUSH, STAGGER>; shared memory per MM_WGMMA_TF32_SMEM
extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_tf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<2, 256, 4, 1, 1, 0, 0>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_wg3(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<3, 256, 4, 1, 1, 0, 0>(A, B, C, M, N, K);  // 230400 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_wg3_w0(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<3, 256, 4, 0, 1, 0, 0>(A, B, C, M, N, K);  // 230400 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_wg3_s3(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<3, 256, 3, 1, 1, 0, 0>(A, B, C, M, N, K);  // 173056 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_3xtf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<2, 128, 3, 1, 2, 2, 1>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_3xtf32_f1(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<2, 128, 3, 1, 2, 1, 0>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_3xtf32_f4(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<2, 128, 3, 1, 2, 4, 2>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_wgmma_3xtf32_f2_ns(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<2, 128, 3, 1, 2, 2, 0>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_wg3(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body<3, 128, 2, 0, 2, 2, 1>(A, B, C, M, N, K);  // 164864 bytes
#endif
}

// warp-specialised (nt::body_ws<BN, STAGES, PARTS, FLUSH, STAGGER>): 1 producer + 2 consumer warpgroups
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_ws(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body_ws<256, 4, 1, 0, 0>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_ws(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body_ws<128, 3, 2, 2, 1>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_ws_f4(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body_ws<128, 3, 2, 4, 2>(A, B, C, M, N, K);  // 197632 bytes
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_ws_f1(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    nt::body_ws<128, 3, 2, 1, 0>(A, B, C, M, N, K);  // 197632 bytes
#endif
}
