// Stage 7 (G12): the warp-tiled kernel of warptile.cu, pipelined. While a block
// computes slice k of its tile, slice k+1 is already on its way:
//   STAGES == 2 (V = 0): register prefetch. The next slice's global loads are
//     issued at the top of the slice, their values parked in registers, and
//     stored into the other of two shared buffers just before the slice's last
//     k-step; one __syncthreads per slice (warptile.cu needs two).
//   STAGES >= 3 (V = 0), any STAGES >= 2 (V = 1): cp.async (sm_80+): STAGES shared
//     buffers filled by the copy engine STAGES-1 slices ahead, no staging
//     registers; one __syncthreads per slice. Before sm_80 the same schedule runs
//     with ordinary loads and stores.
// Shared-memory fragments are double buffered where registers allow: the LDS.128s
// for k-step k+1 are issued before the FFMAs of step k (see FRAG_DB).
//
// Versions of the cp.async pipeline (template argument V):
//   V = 0: the first one, kept unchanged as a tuned fallback: static shared memory,
//     barrier at the top of each slice, every copy predicated and its source clamped.
//   V = 1: issue-slot diet for the same arithmetic. Dynamic shared memory (so
//     BK = 16 rings and 4-stage 128x256 rings fit; size PipeV1<...>::SMEM_BYTES,
//     mirrored by pipelined.py), and
//     - copies of an interior block (whole tile inside A, B, C, 16-byte path) and
//       a full k-slice take no predicate, no clamp and no address arithmetic: each
//       thread keeps one source pointer per A row (two) and one for B, and every copy
//       is LDGSTS [reg + immediate], [reg + immediate]. Edge blocks and the last
//       partial slice take the checked copies (as in V = 0).
//     - A moves as 4-byte copies (it is transposed into As[k][m]); a warp's copy
//       covers TPK consecutive k of 32/TPK rows, and LDA = BM + 32/TPK keeps the
//       transposing stores conflict-free; B as 16-byte copies, TPR threads per row.
//     - the barrier sits before the slice's last k-step: the FFMAs of that step run
//       while the first fragments of the next slice load (no LDS latency after the
//       barrier), as in the register-prefetch schedule.
//   V = 2: the V = 0 schedule unchanged, its ring moved to dynamic shared memory
//     (PipeV0<...>::SMEM_BYTES = STAGES x BK x (BM + 4 + BN) x 4), so BK = 16 slices and
//     4 stages fit: half the barriers and slice overhead per FFMA. The H200's winner is
//     <128,256,16,64,64,8,16,4,2,8> (0.92x cuBLAS at 4096; V = 0's best was 0.90x).
//     V = 3 / 4: V = 2 with a rolled loop of 2 / 8 unrolled k-steps per slice (less code:
//     V = 4 cut ncu's no_instruction stalls from 0.16 to 0.03 per issue, but the loop
//     boundary cost more in short-scoreboard and dispatch stalls; both slower).
//   GM > 1: grouped rasterisation, for any version: consecutive blocks walk a
//     band of GM block-rows down before moving to the next block-column (L2 reuse of
//     B across the band). The grid is unchanged (cdiv(N, BN), cdiv(M, BM), 1).
//
// PLANT_WAIT_SHORT makes every cp.async wait one stage short (a slice may still be in flight
// when it is read): a race the values can miss at every size and compute-sanitizer's
// racecheck reports (tests/test_gpu_planted.py).
#ifdef PLANT_WAIT_SHORT
#define WAIT_SLACK 1
#else
#define WAIT_SLACK 0
#endif
//
// Arithmetic per k-step and thread: TM x TN FFMAs for TM/4 + TN/4 LDS.128
// (8x8: 64 FFMA per 4 LDS; 8x16: 128 FFMA per 6 LDS). Global: per slice the block
// loads (BM + BN) x BK floats for BM x BN x BK FMAs, (BM + BN) / (BM x BN) loads
// per FMA: 1/64 for 128x128, 3/256 for 128x256.
//
// Template: mm_pipe<BM, BN, BK, WM, WN, TM, TN, STAGES, V = 0, GM = 1>; block tile
// BM x BN, warp tile WM x WN, thread tile TM x TN (as (TM/4) x (TN/4) sub-tiles of
// 4x4 spread over the warp tile with strides 4*WM/TM rows and 4*WN/TN columns, so a
// warp's LDS.128 touches at most 8 consecutive float4s: conflict-free).
// Threads per block: (BM/WM)(BN/WN) x 32; grid (cdiv(N, BN), cdiv(M, BM), 1).
// Shared memory: V = 0 static, STAGES x BK x (BM + 4 + BN) x 4 bytes (<= 48 KB); V = 2..4 the same
// bytes, dynamic;
// V = 1 dynamic, PipeV1<...>::SMEM_BYTES = STAGES x BK x (BM + 32/TPK + BN) x 4,
// to be passed at launch (and opted into above 48 KB); the kernel traps if the
// launch gives it less.
// 16-byte paths (float4 loads, 16-byte cp.async, float4 stores of C) need
// K % 4 == 0, N % 4 == 0 and 16-byte-aligned A, B, C; the kernel checks that at
// run time (one uniform flag) and otherwise moves single floats. Out-of-range
// elements load as 0 and are never stored, so any M, N, K >= 1 works.

template <int NT, int TM, int TN>
struct PipeOcc {
    // 8x8 threads fit 128 registers (two 256-thread blocks per SM); 8x16 threads
    // need ~200 (one 256-thread block, or two 128-thread blocks).
    static constexpr int per_sm_threads = (TM * TN <= 64) ? 512 : 256;
    static constexpr int value = per_sm_threads / NT > 0 ? per_sm_threads / NT : 1;
};

// V = 1 layout. Ring slot s (s < STAGES) holds As[BK][LDA] then Bs[BK][LDB], so one
// stage offset serves both. A copy map: TPK threads along k per row (2 rows per
// thread), LDA = BM + 32/TPK: a warp's transposing 4-byte stores hit 32 banks.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct PipeV1 {
    static constexpr int NT = (BM / WM) * (BN / WN) * 32;
    static constexpr int TPK = 2 * NT / BM < 1 ? 1 : (2 * NT / BM > BK ? BK : 2 * NT / BM);
    static constexpr int LDA = BM + 32 / TPK;
    static constexpr int LDB = BN;
    static constexpr int STAGE_FLOATS = BK * (LDA + LDB);
    static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
};
__device__ __forceinline__ void cp_async4(float* dst, const float* src, bool ok)
{
#if __CUDA_ARCH__ >= 800
    // src-size 0 writes a zero and reads nothing (src is a valid address anyway)
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(ok ? 4 : 0)
                 : "memory");
#else
    *dst = ok ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool ok)
{
#if __CUDA_ARCH__ >= 800
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(ok ? 16 : 0)
                 : "memory");
#else
    *reinterpret_cast<float4*>(dst) = ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}


// V = 1 copies address shared memory as 32-bit shared-window addresses: s0 =
// smem_addr(buffer) once, plus byte offsets (immediates where compile-time). Before
// sm_80 (and in host builds of this file) s0 is 0 and the number is a byte offset
// into the buffer, copied synchronously.
__device__ __forceinline__ unsigned smem_addr(const float* p)
{
#if __CUDA_ARCH__ >= 800
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
#else
    (void)p;
    return 0u;
#endif
}

__device__ __forceinline__ float* smem_at(float* smem, unsigned off)
{
    return reinterpret_cast<float*>(reinterpret_cast<char*>(smem) + off);
}

// unconditional copies (interior blocks, full slices)
__device__ __forceinline__ void cpa4(float* smem, unsigned dst, const float* src)
{
#if __CUDA_ARCH__ >= 800
    (void)smem;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
#else
    *smem_at(smem, dst) = *src;
#endif
}

__device__ __forceinline__ void cpa16(float* smem, unsigned dst, const float* src)
{
#if __CUDA_ARCH__ >= 800
    (void)smem;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#else
    *reinterpret_cast<float4*>(smem_at(smem, dst)) = *reinterpret_cast<const float4*>(src);
#endif
}

// checked copies: src-size 0 writes zeros and reads nothing; the caller passes the
// matrix start as src then, so no address is ever invalid
__device__ __forceinline__ void cpa4z(float* smem, unsigned dst, const float* src, bool ok)
{
#if __CUDA_ARCH__ >= 800
    (void)smem;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 4 : 0)
                 : "memory");
#else
    *smem_at(smem, dst) = ok ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void cpa16z(float* smem, unsigned dst, const float* src, bool ok)
{
#if __CUDA_ARCH__ >= 800
    (void)smem;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0)
                 : "memory");
#else
    *reinterpret_cast<float4*>(smem_at(smem, dst)) =
        ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

// Block origin: blockIdx as is (GM <= 1), or grouped: GM block-rows form a band that
// the linear block order walks column by column (GM rows of one column, then the
// next column), the last band holding what is left of the rows.
template <int BM, int BN, int GM>
__device__ __forceinline__ void pipe_origin(int& bm, int& bn)
{
    if constexpr (GM > 1) {
        const unsigned gn = gridDim.x, gm = gridDim.y;
        const unsigned pid = blockIdx.y * gn + blockIdx.x;
        const unsigned band = GM * gn;                // blocks per band
        const unsigned first = (pid / band) * GM;      // first block-row of this band
        const unsigned rows = gm - first < GM ? gm - first : GM;
        const unsigned in = pid % band;
        bm = static_cast<int>((first + in % rows) * BM);
        bn = static_cast<int>((in / rows) * BN);
    } else {
        bm = blockIdx.y * BM;
        bn = blockIdx.x * BN;
    }
}

// V = 0: the first version, kept as it was (static shared memory, ring slots
// [STAGES][BK][BM + 4] then [STAGES][BK][BN]; barrier at the top of each slice).
// V = 2, 3, 4: the same schedule with its ring in dynamic shared memory (dsmem, PipeV0<...>::SMEM_BYTES:
// BK = 16/32 slices and 4-stage 128x256 rings fit); V = 3 and 4 also keep the k-steps of a slice in a
// rolled loop of 2 (V = 3) or 8 (V = 4) unrolled k-steps instead of unrolling all BK of them: less
// code per slice (the instruction caches), at the price of a loop boundary every 2 or 8 steps.
template <int BM, int BN, int BK, int STAGES>
struct PipeV0 {
    static constexpr int LDA = BM + 4, LDB = BN;
    static constexpr int SMEM_BYTES = STAGES * BK * (LDA + LDB) * 4;
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int V = 0>
__device__ __forceinline__ void pipe_v0(float* dsmem, const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K, int bm, int bn)
{
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int WARPS_N = BN / WN;
    constexpr int WTR = WM / TM;  // lanes down the warp tile
    constexpr int WTC = WN / TN;  // lanes across it
    constexpr int LDA = BM + 4;   // As[k][m] row stride: +4 makes the transposing stores conflict-free
    constexpr int LDB = BN;
    constexpr int KQ = BK / 4;                 // float4s per row of the A tile
    constexpr int NQ = BN / 4;                 // float4s per row of the B tile
    constexpr int AF4 = BM * BK / 4 / NT;      // A-tile float4 slots per thread
    constexpr int BF4 = BK * BN / 4 / NT;      // B-tile float4 slots per thread
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
    static_assert(WTR * WTC == 32, "a warp tile is 32 thread tiles");
    static_assert(WTR <= 8 && WTC <= 8, "at most 8 distinct float4s per LDS.128: conflict-free");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "4x4 sub-tiles, float4 k-groups");
    static_assert(AF4 * NT * 4 == BM * BK && BF4 * NT * 4 == BK * BN, "loads split evenly");
    static_assert(STAGES >= 2, "two buffers at least");
    static_assert(BK % 2 == 0, "fragment register sets alternate per k-step");
    // Explicit fragment double buffering (LDS for step k+1 issued before the
    // FFMAs of step k) costs TM + TN registers. The 8x8 register-prefetch variant
    // has no room for them under its 128-register cap (two 256-thread blocks per
    // SM): there ptxas's own scheduler hoists the LDS as far as registers allow.
    constexpr bool FRAG_DB = !(STAGES == 2 && TM * TN <= 64);

    static_assert(V == 0 || STAGES >= 3, "dynamic rings (V = 2, 3, 4) are cp.async rings");
    // k-steps unrolled per trip of the slice loop: all of them, or 2 (V = 3) or 8 (V = 4)
    constexpr int KU = V == 3 ? 2 : (V == 4 && BK > 8 ? 8 : BK);
    static_assert(KU % 2 == 0 && BK % KU == 0, "trips of an even number of k-steps");
    float (*As)[BK][LDA];
    float (*Bs)[BK][LDB];
    if constexpr (V == 0) {
        (void)dsmem;
        __shared__ __align__(16) float As_[STAGES][BK][LDA];
        __shared__ __align__(16) float Bs_[STAGES][BK][LDB];
        As = As_;
        Bs = Bs_;
    } else {
#if defined(__CUDA_ARCH__)
        {  // a launch with less dynamic shared memory than the layout needs stops here
            unsigned dyn;
            asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
            if (dyn < static_cast<unsigned>(PipeV0<BM, BN, BK, STAGES>::SMEM_BYTES)) __trap();
        }
#endif
        As = reinterpret_cast<float (*)[BK][LDA]>(dsmem);
        Bs = reinterpret_cast<float (*)[BK][LDB]>(dsmem + STAGES * BK * LDA);  // 16-byte aligned: LDA % 4 == 0
    }

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = (warp / WARPS_N) * WM;  // warp tile origin inside the block tile
    const int wn = (warp % WARPS_N) * WN;
    const int ty = lane / WTC, tx = lane % WTC;

    // One uniform flag: 16-byte accesses are legal for this launch (a branch per
    // slice; two specialised copies of the body would cost registers and code).
    const bool vec = ((K | N) & 3) == 0 &&
                     ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                       reinterpret_cast<unsigned long long>(C)) & 15) == 0;

    // Staging map: slot f = tid + i*NT; consecutive threads take consecutive float4s
    // of a row (coalesced LDG.128), A rows of BK floats, B rows of BN floats.
    // Each slot keeps a running source pointer and a limit, so the bounds test
    // of a slice is one compare against k0.
    int a_r[AF4], a_c[AF4], b_r[BF4], b_c[BF4];
    int a_klim[AF4], b_klim[BF4], b_nlim[BF4];
    const float* a_p[AF4];
    const float* b_p[BF4];
#pragma unroll
    for (int i = 0; i < AF4; i++) {
        const int f = tid + i * NT;
        a_r[i] = f / KQ;
        a_c[i] = (f % KQ) * 4;
        const bool in = bm + a_r[i] < M;
        a_klim[i] = in ? K - a_c[i] : 0;                               // column k0 + a_c + j is in if k0 + j < a_klim
        a_p[i] = A + (size_t)(in ? bm + a_r[i] : 0) * K + a_c[i];      // advances by BK per slice
    }
#pragma unroll
    for (int i = 0; i < BF4; i++) {
        const int f = tid + i * NT;
        b_r[i] = f / NQ;
        b_c[i] = (f % NQ) * 4;
        b_nlim[i] = N - (bn + b_c[i]);                                 // column j of the float4 is in if j < b_nlim
        b_klim[i] = b_nlim[i] > 0 ? K - b_r[i] : 0;                    // row k0 + b_r is in if k0 < b_klim
        b_p[i] = B + (size_t)b_r[i] * N + bn + b_c[i];                 // advances by BK rows per slice
    }
    const size_t b_step = (size_t)BK * N;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    float fa[2][TM], fb[2][TN];
    // fragments of k-step k of buffer buf into register set s
    auto frag = [&](int buf, int k, int s) {
#pragma unroll
        for (int ii = 0; ii < TM / 4; ii++) {
            const float4 v = *reinterpret_cast<const float4*>(&As[buf][k][wm + ii * WTR * 4 + ty * 4]);
            fa[s][ii * 4 + 0] = v.x; fa[s][ii * 4 + 1] = v.y; fa[s][ii * 4 + 2] = v.z; fa[s][ii * 4 + 3] = v.w;
        }
#pragma unroll
        for (int jj = 0; jj < TN / 4; jj++) {
            const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][k][wn + jj * WTC * 4 + tx * 4]);
            fb[s][jj * 4 + 0] = v.x; fb[s][jj * 4 + 1] = v.y; fb[s][jj * 4 + 2] = v.z; fb[s][jj * 4 + 3] = v.w;
        }
    };
    auto fma_step = [&](int s) {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) acc[i][j] = fmaf(fa[s][i], fb[s][j], acc[i][j]);
    };

    const int nk = (K + BK - 1) / BK;

    if constexpr (STAGES == 2) {
        float4 pa[AF4], pb[BF4];
        // global -> registers: the slice starting at k0; then step the pointers
        auto gload = [&](int k0) {
            const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int i = 0; i < AF4; i++) {
                const float* p = a_p[i];
                if (vec) {
                    pa[i] = k0 < a_klim[i] ? *reinterpret_cast<const float4*>(p) : z;
                } else {
                    pa[i].x = k0 + 0 < a_klim[i] ? p[0] : 0.0f;
                    pa[i].y = k0 + 1 < a_klim[i] ? p[1] : 0.0f;
                    pa[i].z = k0 + 2 < a_klim[i] ? p[2] : 0.0f;
                    pa[i].w = k0 + 3 < a_klim[i] ? p[3] : 0.0f;
                }
                a_p[i] += BK;
            }
#pragma unroll
            for (int i = 0; i < BF4; i++) {
                const float* p = b_p[i];
                const bool kin = k0 < b_klim[i];
                if (vec) {
                    pb[i] = kin ? *reinterpret_cast<const float4*>(p) : z;
                } else {
                    pb[i].x = (kin && 0 < b_nlim[i]) ? p[0] : 0.0f;
                    pb[i].y = (kin && 1 < b_nlim[i]) ? p[1] : 0.0f;
                    pb[i].z = (kin && 2 < b_nlim[i]) ? p[2] : 0.0f;
                    pb[i].w = (kin && 3 < b_nlim[i]) ? p[3] : 0.0f;
                }
                b_p[i] += b_step;
            }
        };
        // registers -> shared buffer buf; A goes in transposed (As[k][m])
        auto sstore = [&](int buf) {
#pragma unroll
            for (int i = 0; i < AF4; i++) {
                As[buf][a_c[i] + 0][a_r[i]] = pa[i].x;
                As[buf][a_c[i] + 1][a_r[i]] = pa[i].y;
                As[buf][a_c[i] + 2][a_r[i]] = pa[i].z;
                As[buf][a_c[i] + 3][a_r[i]] = pa[i].w;
            }
#pragma unroll
            for (int i = 0; i < BF4; i++) *reinterpret_cast<float4*>(&Bs[buf][b_r[i]][b_c[i]]) = pb[i];
        };

        gload(0);
        sstore(0);
        __syncthreads();
        if constexpr (FRAG_DB) frag(0, 0, 0);
        for (int t = 0; t < nk; t++) {
            const int cur = t & 1;
            const bool more = t + 1 < nk;  // uniform over the block
            if (more) gload((t + 1) * BK);  // in flight during this slice's FFMAs
            if constexpr (FRAG_DB) {
#pragma unroll
                for (int k = 0; k < BK; k++) {
                    if (k < BK - 1) {
                        frag(cur, k + 1, (k + 1) & 1);
                    } else if (more) {
                        // Buffer cur^1 was last read in slice t-1, before that
                        // slice's barrier: fill it, one barrier publishes it.
                        sstore(cur ^ 1);
                        __syncthreads();
                        frag(cur ^ 1, 0, 0);  // BK is even: step BK-1 used set 1
                    }
                    fma_step(k & 1);
                }
            } else {
#pragma unroll
                for (int k = 0; k < BK; k++) {
                    frag(cur, k, k & 1);
                    fma_step(k & 1);
                }
                if (more) {
                    sstore(cur ^ 1);  // same reasoning: cur^1 was freed by slice t-1's barrier
                    __syncthreads();
                }
            }
        }
    } else {
        // cp.async ring: slice t lives in buffer t % STAGES. issue() copies the
        // slice starting at k0 into buffer buf, then steps the pointers.
        // Out-of-range copies get src-size 0 (zero fill, nothing read) and a
        // source pointer clamped to the matrix start, so no address is ever invalid.
        //
        // A is transposed on the way in, so it moves as 4-byte copies, mapped for
        // that: thread tid copies column k = tid % BK of rows tid / BK + q * RSTEP.
        // One warp instruction then reads 32 / BK whole rows of the slice (BK = 8:
        // 4 full 32-byte sectors, 4 L1 tags) instead of 16 half-used sectors, and
        // its 32 shared stores As[k][m] land in 32 distinct banks (LDA = 4 mod 32:
        // bank = 4k + m mod 32, k < 8, 4 consecutive m).
        constexpr int ACP = BM * BK / NT;  // A copies per thread per slice
        constexpr int RSTEP = NT / BK;     // rows between a thread's copies
        static_assert(ACP * NT == BM * BK && RSTEP * BK == NT, "A copies split evenly");
        const int c_k = tid % BK, c_m = tid / BK;
        // rows bm + c_m + q*RSTEP are inside A for q < c_qlim
        const int c_qlim = bm + c_m < M ? (M - bm - c_m + RSTEP - 1) / RSTEP : 0;
        const float* c_p = A + (size_t)(bm + c_m < M ? bm + c_m : 0) * K + c_k;  // + k0 (steps BK)
        const size_t c_step = (size_t)RSTEP * K;                                // rows q -> q + 1
        auto issue = [&](int buf, int k0) {
            const bool kin = k0 + c_k < K;
#pragma unroll
            for (int q = 0; q < ACP; q++) {
                const bool ok = kin && q < c_qlim;
                cp_async4(&As[buf][c_k][c_m + q * RSTEP], ok ? c_p + q * c_step : A, ok);
            }
            c_p += BK;
#pragma unroll
            for (int i = 0; i < BF4; i++) {
                const bool kin = k0 < b_klim[i];
                float* d = &Bs[buf][b_r[i]][b_c[i]];
                if (vec) {
                    cp_async16(d, kin ? b_p[i] : B, kin);
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const bool ok = kin && j < b_nlim[i];
                        cp_async4(d + j, ok ? b_p[i] + j : B, ok);
                    }
                }
                b_p[i] += b_step;
            }
        };

#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < nk) issue(s, s * BK);
            cp_async_commit();  // empty groups keep the count uniform
        }
        int rd = 0, wr = STAGES - 1;
        for (int t = 0; t < nk; t++) {
            cp_async_wait<STAGES - 2 + WAIT_SLACK>();  // this thread's copies of slice t have landed
            __syncthreads();              // everyone's have; and slice t-1's buffer is free
            if (t + STAGES - 1 < nk) issue(wr, (t + STAGES - 1) * BK);
            cp_async_commit();
            wr = (wr + 1 == STAGES) ? 0 : wr + 1;
            frag(rd, 0, 0);
            if constexpr (KU < BK) {
                // rolled: KU unrolled k-steps per trip; the last step of a trip loads the
                // next trip's first fragments (KU is even: into set 0)
#pragma unroll 1
                for (int h = 0; h < BK; h += KU) {
#pragma unroll
                    for (int j = 0; j < KU; j++) {
                        if (j < KU - 1) {
                            frag(rd, h + j + 1, (j + 1) & 1);
                        } else if (h + KU < BK) {
                            frag(rd, h + KU, 0);
                        }
                        fma_step(j & 1);
                    }
                }
            } else {
#pragma unroll
                for (int k = 0; k < BK; k++) {
                    if (k < BK - 1) frag(rd, k + 1, (k + 1) & 1);
                    fma_step(k & 1);
                }
            }
            rd = (rd + 1 == STAGES) ? 0 : rd + 1;
        }
    }

    // Each thread's (TM/4) x (TN/4) sub-tiles of 4x4; a row of a sub-tile is one
    // float4, and WTC lanes write WTC consecutive float4s.
#pragma unroll
    for (int ii = 0; ii < TM / 4; ii++) {
#pragma unroll
        for (int ri = 0; ri < 4; ri++) {
            const int row = bm + wm + ii * WTR * 4 + ty * 4 + ri;
            if (row >= M) continue;
            float* crow = C + (size_t)row * N;
#pragma unroll
            for (int jj = 0; jj < TN / 4; jj++) {
                const int col = bn + wn + jj * WTC * 4 + tx * 4;
                const int i = ii * 4 + ri, j = jj * 4;
                if (vec) {
                    if (col < N)
                        *reinterpret_cast<float4*>(crow + col) =
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
                } else {
#pragma unroll
                    for (int rj = 0; rj < 4; rj++)
                        if (col + rj < N) crow[col + rj] = acc[i][j + rj];
                }
            }
        }
    }
}

// V = 1 (see the top of the file). smem: the dynamic buffer, PipeV1<...>::SMEM_BYTES.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
__device__ __forceinline__ void pipe_v1(float* smem, const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K, int bm, int bn)
{
    using P = PipeV1<BM, BN, BK, WM, WN, TM, TN, STAGES>;
    constexpr int NT = P::NT, LDA = P::LDA, LDB = P::LDB, SF = P::STAGE_FLOATS;
    constexpr unsigned SB = SF * 4u;  // stage bytes
    constexpr int WARPS_N = BN / WN;
    constexpr int WTR = WM / TM;  // lanes down the warp tile
    constexpr int WTC = WN / TN;  // lanes across it
    // A copies: thread (a_k, a_m) copies k = a_k + j*TPK (j < KA) of rows a_m + r*RSTEP (r < RA)
    constexpr int TPK = P::TPK, KA = BK / TPK, RSTEP = NT / TPK, RA = BM / RSTEP;
    // B copies: thread (b_k, b_n) copies float4s b_n + i*TPR*4 (i < CPT) of row b_k
    constexpr int NQ = BN / 4, TPR = NT / BK, CPT = NQ / TPR;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
    static_assert(WTR * WTC == 32, "a warp tile is 32 thread tiles");
    static_assert(WTR <= 8 && WTC <= 8, "at most 8 distinct float4s per LDS.128: conflict-free");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "4x4 sub-tiles, float4 k-groups");
    static_assert(STAGES >= 2 && BK % 2 == 0, "a ring of two slots at least; register sets alternate per k-step");
    static_assert(TPK <= 8 && 32 % TPK == 0 && KA * TPK == BK && RSTEP * TPK == NT && RA * RSTEP == BM,
                  "A copies split evenly, at most 8 threads along k");
    static_assert(TPR * BK == NT && CPT * TPR == NQ && TPR >= 8, "B copies split evenly, 8+ float4s per row");
    static_assert(LDA % 4 == 0 && SF % 4 == 0, "16-byte rows and slots");

#if defined(__CUDA_ARCH__)
    {  // a launch with less dynamic shared memory than the layout needs stops here
        unsigned dyn;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
        if (dyn < static_cast<unsigned>(P::SMEM_BYTES)) __trap();
    }
#endif

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = (warp / WARPS_N) * WM;  // warp tile origin inside the block tile
    const int wn = (warp % WARPS_N) * WN;
    const int ty = lane / WTC, tx = lane % WTC;

    const bool vec = ((K | N) & 3) == 0 &&
                     ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                       reinterpret_cast<unsigned long long>(C)) & 15) == 0;
    // slices 0 .. nk_fast-1 take the unchecked copies (all of them for an interior block when BK | K)
    const int nk = (K + BK - 1) / BK;
    const int nk_fast = (vec && bm <= M - BM && bn <= N - BN) ? K / BK : 0;

    const int a_k = tid % TPK, a_m = tid / TPK;
    const int a_rlim = a_m < M - bm ? (M - bm - a_m + RSTEP - 1) / RSTEP : 0;  // rows r < a_rlim are in A
    // sources of the unchecked copies (used only when nk_fast > 0: every row and column in)
    const float* a_src[RA];
#pragma unroll
    for (int r = 0; r < RA; r++) a_src[r] = A + (size_t)(bm + a_m + r * RSTEP) * K + a_k;  // + k0
    const int b_k = tid / TPR, b_n = (tid % TPR) * 4;
    const float* b_src = B + (size_t)b_k * N + bn + b_n;  // + k0 rows
    const size_t b_step = (size_t)BK * N;
    const unsigned s0 = smem_addr(smem);
    const unsigned a_dst = s0 + (a_k * LDA + a_m) * 4;
    const unsigned b_dst = s0 + (BK * LDA + b_k * LDB + b_n) * 4;

    // copies of slice s (columns k0 = s*BK on) into the ring slot at byte offset off.
    // Unchecked slices are a prefix (s < nk_fast) and are issued in order, so only
    // they step the pointers; checked copies compute their addresses afresh.
    auto issue = [&](int s, unsigned off) {
        if (s < nk_fast) {
#pragma unroll
            for (int j = 0; j < KA; j++)
#pragma unroll
                for (int r = 0; r < RA; r++)
                    cpa4(smem, a_dst + off + (j * TPK * LDA + r * RSTEP) * 4, a_src[r] + j * TPK);
#pragma unroll
            for (int i = 0; i < CPT; i++) cpa16(smem, b_dst + off + i * TPR * 16, b_src + i * TPR * 4);
#pragma unroll
            for (int r = 0; r < RA; r++) a_src[r] += BK;
            b_src += b_step;
        } else {
            const int k0 = s * BK;
#pragma unroll
            for (int j = 0; j < KA; j++) {
                const int k = k0 + a_k + j * TPK;
#pragma unroll
                for (int r = 0; r < RA; r++) {
                    const bool ok = k < K && r < a_rlim;
                    const float* src = A + (ok ? (size_t)(bm + a_m + r * RSTEP) * K + k : 0);
                    cpa4z(smem, a_dst + off + (j * TPK * LDA + r * RSTEP) * 4, src, ok);
                }
            }
            const int kb = k0 + b_k;
            const bool kin = kb < K;
#pragma unroll
            for (int i = 0; i < CPT; i++) {
                const int col = bn + b_n + i * TPR * 4;
                const unsigned d = b_dst + off + i * TPR * 16;
                if (vec) {
                    const bool ok = kin && col < N;  // N % 4 == 0: the whole float4 is in
                    cpa16z(smem, d, B + (ok ? (size_t)kb * N + col : 0), ok);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const bool ok = kin && col + e < N;
                        cpa4z(smem, d + e * 4, B + (ok ? (size_t)kb * N + col + e : 0), ok);
                    }
                }
            }
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    float fa[2][TM], fb[2][TN];
    const float* fa_p = smem + wm + ty * 4;
    const float* fb_p = smem + BK * LDA + wn + tx * 4;
    // fragments of k-step k of the slot at float offset st into register set s
    auto frag = [&](int st, int k, int s) {
#pragma unroll
        for (int ii = 0; ii < TM / 4; ii++) {
            const float4 v = *reinterpret_cast<const float4*>(fa_p + st + k * LDA + ii * WTR * 4);
            fa[s][ii * 4 + 0] = v.x; fa[s][ii * 4 + 1] = v.y; fa[s][ii * 4 + 2] = v.z; fa[s][ii * 4 + 3] = v.w;
        }
#pragma unroll
        for (int jj = 0; jj < TN / 4; jj++) {
            const float4 v = *reinterpret_cast<const float4*>(fb_p + st + k * LDB + jj * WTC * 4);
            fb[s][jj * 4 + 0] = v.x; fb[s][jj * 4 + 1] = v.y; fb[s][jj * 4 + 2] = v.z; fb[s][jj * 4 + 3] = v.w;
        }
    };
    auto fma_step = [&](int s) {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) acc[i][j] = fmaf(fa[s][i], fb[s][j], acc[i][j]);
    };

    // Slice t lives in slot t % STAGES. Slot (t-1) % STAGES is refilled (with slice
    // t + STAGES - 1) at the top of slice t: its last fragment reads were issued before
    // the barrier that ends slice t-1. That barrier comes after this thread's wait for
    // its copies of slice t, so slice t is complete in shared memory when read.
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) issue(s, s * SB);
        cp_async_commit();  // empty groups keep the count uniform
    }
    cp_async_wait<STAGES - 2 + WAIT_SLACK>();
    __syncthreads();
    frag(0, 0, 0);
    int rd = 0;                       // float offset of slice t's slot
    unsigned wr = (STAGES - 1) * SB;  // byte offset of the slot refilled now
    for (int t = 0; t < nk; t++) {
        if (t + STAGES - 1 < nk) issue(t + STAGES - 1, wr);
        cp_async_commit();
        wr = (wr + SB == STAGES * SB) ? 0u : wr + SB;
        const bool more = t + 1 < nk;  // uniform over the block
        const int nx = (rd + SF == STAGES * SF) ? 0 : rd + SF;
#pragma unroll
        for (int k = 0; k < BK; k++) {
            if (k < BK - 1) {
                frag(rd, k + 1, (k + 1) & 1);
            } else if (more) {
                cp_async_wait<STAGES - 2 + WAIT_SLACK>();  // this thread's copies of slice t+1 have landed
                __syncthreads();              // everyone's have, and everyone is past slice t-1's reads
                frag(nx, 0, 0);               // BK is even: step BK-1 uses set 1
            }
            fma_step(k & 1);
        }
        rd = nx;
    }

    // Each thread's (TM/4) x (TN/4) sub-tiles of 4x4; a row of a sub-tile is one
    // float4, and WTC lanes write WTC consecutive float4s.
#pragma unroll
    for (int ii = 0; ii < TM / 4; ii++) {
#pragma unroll
        for (int ri = 0; ri < 4; ri++) {
            const int row = bm + wm + ii * WTR * 4 + ty * 4 + ri;
            if (row >= M) continue;
            float* crow = C + (size_t)row * N;
#pragma unroll
            for (int jj = 0; jj < TN / 4; jj++) {
                const int col = bn + wn + jj * WTC * 4 + tx * 4;
                const int i = ii * 4 + ri, j = jj * 4;
                if (vec) {
                    if (col < N)
                        *reinterpret_cast<float4*>(crow + col) =
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
                } else {
#pragma unroll
                    for (int rj = 0; rj < 4; rj++)
                        if (col + rj < N) crow[col + rj] = acc[i][j + rj];
                }
            }
        }
    }
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int V = 0, int GM = 1>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, (PipeOcc<(BM / WM) * (BN / WN) * 32, TM, TN>::value))
mm_pipe(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    static_assert(V >= 0 && V <= 4, "versions 0 to 4");
    int bm, bn;
    pipe_origin<BM, BN, GM>(bm, bn);
    if constexpr (V == 0) {
        pipe_v0<BM, BN, BK, WM, WN, TM, TN, STAGES>(nullptr, A, B, C, M, N, K, bm, bn);
    } else if constexpr (V >= 2) {
#ifdef __CUDACC__
        extern __shared__ __align__(16) float pipe_smem[];
#else  // host builds (tests/host_run/kernels_on_host.cpp): a static buffer of the same size
        __shared__ __align__(16) float pipe_smem[PipeV0<BM, BN, BK, STAGES>::SMEM_BYTES / 4];
#endif
        pipe_v0<BM, BN, BK, WM, WN, TM, TN, STAGES, V>(pipe_smem, A, B, C, M, N, K, bm, bn);
    } else {
#ifdef __CUDACC__
        extern __shared__ __align__(16) float pipe_smem[];
#else  // host builds (tests/host_run/kernels_on_host.cpp): a static buffer of the same size
        __shared__ __align__(16) float pipe_smem[PipeV1<BM, BN, BK, WM, WN, TM, TN, STAGES>::SMEM_BYTES / 4];
#endif
        pipe_v1<BM, BN, BK, WM, WN, TM, TN, STAGES>(pipe_smem, A, B, C, M, N, K, bm, bn);
    }
}

// Instances worth searching (explicit instantiations for offline nvcc builds and
// the compile test; NVRTC builds only the name expression it is asked for, and
// PIPE_NO_INSTANCES leaves them out for a file that only includes the templates).
#if !defined(__CUDACC_RTC__) && !defined(PIPE_NO_INSTANCES)
// V = 0. STAGES == 2: register prefetch; >= 3: cp.async ring.
// 128x128 tiles, 8x8 per thread, 256 threads, <= 128 registers: two blocks per SM.
template __global__ void mm_pipe<128, 128, 8, 32, 64, 8, 8, 2>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 8, 32, 64, 8, 8, 3>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 8, 32, 64, 8, 8, 4>(const float*, const float*, float*, int, int, int);
// 128x128 tiles, 8x16 per thread, 128 threads (the shape of cuBLAS's sm80 FFMA kernel), two blocks per SM.
template __global__ void mm_pipe<128, 128, 8, 64, 64, 8, 16, 2>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 8, 64, 64, 8, 16, 3>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 8, 64, 64, 8, 16, 4>(const float*, const float*, float*, int, int, int);
// 128x256 tiles, 8x16 per thread, 256 threads: one block per SM.
template __global__ void mm_pipe<128, 256, 8, 64, 64, 8, 16, 2>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 8, 64, 64, 8, 16, 3>(const float*, const float*, float*, int, int, int);
// V = 1 (dynamic shared memory), grouped rasterisation over bands of 8 block-rows.
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 3, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 4, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 8, 64, 64, 8, 16, 3, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 8, 64, 64, 8, 16, 4, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 16, 64, 64, 8, 16, 3, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 16, 64, 64, 8, 16, 4, 1, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<256, 128, 16, 64, 64, 16, 8, 3, 1, 8>(const float*, const float*, float*, int, int, int);
// the same pipeline with the plain block order, to measure what the grouping gives
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 3, 1, 1>(const float*, const float*, float*, int, int, int);
// V = 2 (the V = 0 schedule, ring in dynamic shared memory): the H200's winner first
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 4, 2, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 3, 2, 8>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 4, 2, 2>(const float*, const float*, float*, int, int, int);
template __global__ void mm_pipe<128, 128, 16, 64, 64, 8, 16, 3, 2, 8>(const float*, const float*, float*, int, int, int);
// V = 4 (rolled loop of 8 unrolled k-steps): measured slower, kept compiled for the record
template __global__ void mm_pipe<128, 256, 16, 64, 64, 8, 16, 3, 4, 8>(const float*, const float*, float*, int, int, int);
#endif
