// Tensor-core rung, TF32: C = A * B with FP32 inputs rounded to TF32 (10-bit mantissa,
// cvt.rna) and FP32 accumulation, on the warp-level mma.sync.m16n8k8 (sm_80+).
//
// Block tile BM x BN x BK = 128 x 256 x 32, 8 warps as 2 (M) x 4 (N), each warp owns a
// 64 x 64 piece of C: 4 x 8 m16n8 accumulators = 128 floats per thread. A 64 x 64 warp
// tile reads (64 + 64) x 8 x 4 B of shared memory per 64 x 64 x 8 MMAs: 16 FLOP per
// shared byte, above the ~10 the mma.sync pipe needs at 128 B/clk per SM.
// Global -> shared copies are cp.async (no register round trip) in a STAGES-deep ring,
// so STAGES - 1 tiles are in flight while the tensor cores work on the current one.
//
// Shared layouts (row-major, padded so fragment loads are bank-conflict free):
//   As[BM][A_LD], A_LD = 36 floats: ldmatrix reads 8 rows x 16 B per phase; a 144 B row
//     pitch puts those rows in 8 different 16 B bank groups.
//   Bs[BK][B_LD], B_LD = 264 floats (= 8 mod 32): the B fragment (k = t, t+4; n = g) is
//     read with 32-bit loads, bank = 8t + g: 32 lanes, 32 banks.
// ldmatrix is a b16 instruction; on 32-bit data each lane's 32 bits are one float, and
// an 8 x 8 b16 matrix is 8 rows x 4 floats. x4 with matrices (rows 0-7, k 0-3),
// (rows 8-15, k 0-3), (rows 0-7, k 4-7), (rows 8-15, k 4-7) yields exactly the m16n8k8
// A fragment a0..a3 = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4] (g = lane/4, t = lane%4).
//
// Shapes: any M, N, K >= 1. Fast path when K % 4 == 0 and N % 4 == 0 (and A, B 16-byte
// aligned): 16-byte cp.async, whole 4-float chunks in or out of range. Otherwise every
// element is its own 4-byte cp.async. Out-of-range elements are zero-filled (src-size 0)
// and never stored. C stores are predicated per element.
// Launch: block 256, grid (cdiv(M,128) * cdiv(N,256), 1, 1), dynamic shared memory
// MM_TF32_SMEM = 156672 bytes (> 48 KB: set max_dynamic_shared_size_bytes).
// sm_75 has no TF32 mma: the body compiles empty there and the rung is skipped.

#include "ptx.cuh"  // the inline-PTX wrappers shared by the tensor-core kernels (include/ptx.cuh)

#define BM 128
#define BN 256
#define BK 32
#ifndef STAGES  // overridable (-DSTAGES=4) for tuning runs; shared memory scales with it
#define STAGES 3
#endif
#define WARPS_N 4
#define WM 64
#define WN 64
#define MT (WM / 16)  // m16 tiles per warp
#define NT (WN / 8)   // n8 tiles per warp
#define A_LD (BK + 4)
#define B_LD (BN + 8)
#define A_STAGE (BM * A_LD)
#define B_STAGE (BK * B_LD)
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 8
#endif
// 3 * (128*36 + 32*264) * 4 = 156672 bytes
#define MM_TF32_SMEM (STAGES * (A_STAGE + B_STAGE) * 4)

#if __CUDA_ARCH__ >= 800

// 16-byte copy; src_bytes = 0 writes 16 zero bytes and reads nothing

__device__ __forceinline__ unsigned to_tf32(unsigned x)
{
    unsigned y;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(y) : "f"(__uint_as_float(x)));
    return y;
}

__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Per-thread copy plan, computed once: each thread owns 4 16-byte chunks of the A tile
// (rows tid/8 + 32i, floats (tid%8)*4..+3) and 8 of the B tile (rows tid/64 + 4i, floats
// (tid%64)*4..+3). Only the k offset changes from tile to tile, so the per-tile cost is
// one add per chunk plus its bounds test.
struct Loader {
    const float* A;
    const float* B;
    const float* a;  // A + (bm + tid/8) * K + (tid%8)*4
    const float* b;  // B + (tid/64) * N + bn + (tid%64)*4
    unsigned sbase;         // shared address of the ring
    unsigned a_dst, b_dst;  // shared addresses of this thread's chunk 0 in slot 0
    int M, N, K, bm, bn, tid;
    unsigned a_rows_ok;  // bit i: chunk i's row is < M
    bool b_col_ok, vec;

    __device__ __forceinline__ Loader(const float* A_, const float* B_, int M_, int N_, int K_, int bm_,
                                      int bn_, int tid_, bool vec_, unsigned smem_base)
        : A(A_), B(B_), sbase(smem_base), M(M_), N(N_), K(K_), bm(bm_), bn(bn_), tid(tid_), vec(vec_)
    {
        const int ar = tid / (BK / 4), ac = (tid % (BK / 4)) * 4;
        const int br = tid / (BN / 4), bc = (tid % (BN / 4)) * 4;
        a = A + (size_t)(bm + ar) * K + ac;
        b = B + (size_t)br * N + bn + bc;
        a_dst = smem_base + (ar * A_LD + ac) * 4;
        b_dst = smem_base + STAGES * A_STAGE * 4 + (br * B_LD + bc) * 4;
        a_rows_ok = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) a_rows_ok |= (bm + ar + i * 32 < M ? 1u : 0u) << i;
        b_col_ok = bn + bc < N;
    }

    // stage k-tile kt into ring slot s
    __device__ __forceinline__ void load(int kt, int s) const
    {
        const int k0 = kt * BK;
        const unsigned sa = a_dst + s * (A_STAGE * 4), sb = b_dst + s * (B_STAGE * 4);
        if (vec) {
            const bool a_col_ok = k0 + (tid % (BK / 4)) * 4 < K;  // K % 4 == 0: whole chunk
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const bool ok = a_col_ok && ((a_rows_ok >> i) & 1u);
                cp_async16(sa + i * 32 * A_LD * 4, ok ? a + (size_t)i * 32 * K + k0 : A, ok ? 16 : 0);
            }
            const int br = tid / (BN / 4) + k0;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const bool ok = b_col_ok && br + i * 4 < K;
                cp_async16(sb + i * 4 * B_LD * 4, ok ? b + (size_t)(k0 + i * 4) * N : B, ok ? 16 : 0);
            }
        } else {
            // unaligned shapes: one 4-byte cp.async per element, same ring and barriers
            const unsigned base_a = sbase + s * (A_STAGE * 4);
            const unsigned base_b = sbase + STAGES * A_STAGE * 4 + s * (B_STAGE * 4);
#pragma unroll 1
            for (int e = tid; e < BM * BK; e += 256) {
                const int r = e / BK, c = e % BK, gr = bm + r, gc = k0 + c;
                const bool ok = gr < M && gc < K;
                cp_async4(base_a + (r * A_LD + c) * 4, ok ? A + (size_t)gr * K + gc : A, ok ? 4 : 0);
            }
#pragma unroll 1
            for (int e = tid; e < BK * BN; e += 256) {
                const int r = e / BN, c = e % BN, gr = k0 + r, gc = bn + c;
                const bool ok = gr < K && gc < N;
                cp_async4(base_b + (r * B_LD + c) * 4, ok ? B + (size_t)gr * N + gc : B, ok ? 4 : 0);
            }
        }
    }
};
#endif

extern "C" __global__ void __launch_bounds__(256, 1)
mm_tf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) float smem[];
    float* As = smem;                     // STAGES x [BM][A_LD]
    float* Bs = smem + STAGES * A_STAGE;  // STAGES x [BK][B_LD]

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * BN;

    const bool vec = (K % 4 == 0) && (N % 4 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0) &&
                     ((reinterpret_cast<size_t>(B) & 15) == 0);
    const int KT = (K + BK - 1) / BK;
    const Loader ld(A, B, M, N, K, bm, bn, tid, vec, smem_u32(smem));

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;

    // prologue: STAGES - 1 tiles in flight (one commit group each, empty past the end)
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) ld.load(s, s);
        cp_async_commit();
    }

    // per-lane fragment offsets inside a stage
    const int a_off = (wm * WM + (lane % 16)) * A_LD + (lane / 16) * 4;
    const int b_off = t * B_LD + wn * WN + g;

    for (int kt = 0; kt < KT; kt++) {
        // my copies of tile kt have landed; the barrier makes everyone's visible and
        // also says every warp has finished reading slot (kt - 1) % STAGES
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        {
            int nk = kt + STAGES - 1, s = nk % STAGES;
            if (nk < KT) ld.load(nk, s);
            cp_async_commit();
        }
        const int s = kt % STAGES;
        const float* as = As + s * A_STAGE;
        const float* bs = Bs + s * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK / 8; kk++) {
            unsigned af[MT][4], bf[NT][2];
#pragma unroll
            for (int i = 0; i < MT; i++) {
                ldmatrix_x4(af[i], smem_u32(as + a_off + i * 16 * A_LD + kk * 8));
#pragma unroll
                for (int r = 0; r < 4; r++) af[i][r] = to_tf32(af[i][r]);
            }
#pragma unroll
            for (int j = 0; j < NT; j++) {
                bf[j][0] = to_tf32(__float_as_uint(bs[b_off + kk * 8 * B_LD + j * 8]));
                bf[j][1] = to_tf32(__float_as_uint(bs[b_off + (kk * 8 + 4) * B_LD + j * 8]));
            }
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int j = 0; j < NT; j++) mma_tf32_16x8x8(acc[i][j], af[i], bf[j]);
        }
    }
    cp_async_wait<0>();  // only empty groups can remain; drain them before exit anyway

    // epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) of each 16 x 8 tile
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int i = 0; i < MT; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = bm + wm * WM + i * 16 + g + h * 8;
            if (r >= M) continue;
#pragma unroll
            for (int j = 0; j < NT; j++) {
                const int c = bn + wn * WN + j * 8 + 2 * t;
                float* p = C + (size_t)r * N + c;
                if (pair && c < N) {  // N even and c even: c + 1 < N too
                    *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (c < N) p[0] = acc[i][j][2 * h];
                    if (c + 1 < N) p[1] = acc[i][j][2 * h + 1];
                }
            }
        }
    }
#endif
}
