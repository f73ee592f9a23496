// Tensor-core rung, BF16: C (FP32) = A * B with BF16 inputs and FP32 accumulation, on the
// warp-level mma.sync.m16n8k16 (sm_80+).
//
// Inputs are passed as `const unsigned short*` holding BF16 bit patterns: the same 2-byte
// layout as __nv_bfloat16, without depending on <cuda_bf16.h> being visible to NVRTC. The
// kernel never does BF16 arithmetic; it only moves bits into the tensor cores.
//
// Block tile BM x BN x BK = 128 x 256 x 32, 8 warps as 2 (M) x 4 (N), each warp owns a
// 64 x 64 piece of C: 4 x 8 m16n8 accumulators = 128 floats per thread. Per k16 step a warp
// reads (64 + 64) x 16 x 2 B = 4 KB of shared memory for 32 MMAs (128 KFLOP): 32 FLOP per
// shared byte, above the ~20 the mma.sync pipe needs at 128 B/clk per SM.
// Global -> shared copies are 16-byte cp.async in a 4-deep ring (3 tiles in flight).
//
// Fragments come from ldmatrix (no per-element shared loads):
//   A, row-major As[BM][A_LD]: x4 over (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
//     k 8-15), (rows 8-15, k 8-15) = a0..a3 of m16n8k16 (lane address: row lane%16,
//     k (lane/16)*8).
//   B, row-major Bs[BK][B_LD] (k rows, n contiguous): the col-major B fragment wants two
//     consecutive k in one register, so ldmatrix.trans: x4 over (k 0-7, n 0-7), (k 8-15,
//     n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) = b0, b1 of two adjacent n8 tiles
//     (lane address: k lane%16, n (lane/16)*8).
// Padding: A_LD = 40 (80 B pitch), B_LD = 264 (528 B pitch): the 8 row addresses of one
// ldmatrix phase land in 8 different 16 B bank groups (80/16 = 5 and 528/16 = 33 are odd).
//
// Shapes: any M, N, K >= 1. Fast path when K % 8 == 0 and N % 8 == 0 (and A, B 16-byte
// aligned): 16-byte cp.async of whole 8-element chunks, in or out of range (src-size 0
// zero-fills). Otherwise (rows not 16-byte aligned) a synchronous path: per-element
// predicated 2-byte global loads and shared stores into the same ring slot (slow, correct).
// Launch: block 256, grid (cdiv(M,128) * cdiv(N,256), 1, 1), dynamic shared memory
// MM_BF16_SMEM = 108544 bytes (> 48 KB: set max_dynamic_shared_size_bytes).
// sm_75 has no BF16 mma: the body compiles empty there and the rung is skipped.

#include "ptx.cuh"  // the inline-PTX wrappers shared by the tensor-core kernels (include/ptx.cuh)

#define BM 128
#define BN 256
#define BK 32
#ifndef STAGES  // overridable (-DSTAGES=5) for tuning runs; shared memory scales with it
#define STAGES 4
#endif
#define WARPS_N 4
#define WM 64
#define WN 64
#define MT (WM / 16)  // m16 tiles per warp
#define NT (WN / 8)   // n8 tiles per warp
#define A_LD (BK + 8)
#define B_LD (BN + 8)
#define A_STAGE (BM * A_LD)  // elements
#define B_STAGE (BK * B_LD)
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 8
#endif
// 4 * (128*40 + 32*264) * 2 = 108544 bytes
#define MM_BF16_SMEM (STAGES * (A_STAGE + B_STAGE) * 2)

typedef unsigned short bf16_bits;

#if __CUDA_ARCH__ >= 800

// 16-byte copy; src_bytes = 0 writes 16 zero bytes and reads nothing

__device__ __forceinline__ void mma_bf16_16x8x16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Per-thread copy plan, computed once: each thread owns 2 16-byte chunks of the A tile
// (rows tid/4 + 64i, elements (tid%4)*8..+7) and 4 of the B tile (rows tid/32 + 8i,
// elements (tid%32)*8..+7). Only the k offset changes from tile to tile.
struct Loader {
    const bf16_bits* A;
    const bf16_bits* B;
    const bf16_bits* a;  // A + (bm + tid/4) * K + (tid%4)*8
    const bf16_bits* b;  // B + (tid/32) * N + bn + (tid%32)*8
    bf16_bits* As;       // ring base (generic pointers, for the synchronous path)
    bf16_bits* Bs;
    unsigned a_dst, b_dst;  // shared addresses of this thread's chunk 0 in slot 0
    int M, N, K, bm, bn, tid;
    unsigned a_rows_ok;  // bit i: chunk i's row is < M
    bool b_col_ok, vec;

    __device__ __forceinline__ Loader(const bf16_bits* A_, const bf16_bits* B_, bf16_bits* As_, bf16_bits* Bs_,
                                      int M_, int N_, int K_, int bm_, int bn_, int tid_, bool vec_)
        : A(A_), B(B_), As(As_), Bs(Bs_), M(M_), N(N_), K(K_), bm(bm_), bn(bn_), tid(tid_), vec(vec_)
    {
        const int ar = tid / (BK / 8), ac = (tid % (BK / 8)) * 8;
        const int br = tid / (BN / 8), bc = (tid % (BN / 8)) * 8;
        a = A + (size_t)(bm + ar) * K + ac;
        b = B + (size_t)br * N + bn + bc;
        a_dst = smem_u32(As + ar * A_LD + ac);
        b_dst = smem_u32(Bs + br * B_LD + bc);
        a_rows_ok = 0;
#pragma unroll
        for (int i = 0; i < 2; i++) a_rows_ok |= (bm + ar + i * 64 < M ? 1u : 0u) << i;
        b_col_ok = bn + bc < N;
    }

    // stage k-tile kt into ring slot s
    __device__ __forceinline__ void load(int kt, int s) const
    {
        const int k0 = kt * BK;
        if (vec) {
            const unsigned sa = a_dst + s * (A_STAGE * 2), sb = b_dst + s * (B_STAGE * 2);
            const bool a_col_ok = k0 + (tid % (BK / 8)) * 8 < K;  // K % 8 == 0: whole chunk
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const bool ok = a_col_ok && ((a_rows_ok >> i) & 1u);
                cp_async16(sa + i * 64 * A_LD * 2, ok ? a + (size_t)i * 64 * K + k0 : A, ok ? 16 : 0);
            }
            const int br = tid / (BN / 8) + k0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const bool ok = b_col_ok && br + i * 8 < K;
                cp_async16(sb + i * 8 * B_LD * 2, ok ? b + (size_t)(k0 + i * 8) * N : B, ok ? 16 : 0);
            }
        } else {
            // rows not 16-byte aligned: plain predicated loads and shared stores. The slot is
            // free (the barrier before this call) and is read only after later barriers.
            bf16_bits* as = As + s * A_STAGE;
            bf16_bits* bs = Bs + s * B_STAGE;
#pragma unroll 4
            for (int e = tid; e < BM * BK; e += 256) {
                const int r = e / BK, c = e % BK, gr = bm + r, gc = k0 + c;
                as[r * A_LD + c] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : (bf16_bits)0;
            }
#pragma unroll 4
            for (int e = tid; e < BK * BN; e += 256) {
                const int r = e / BN, c = e % BN, gr = k0 + r, gc = bn + c;
                bs[r * B_LD + c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : (bf16_bits)0;
            }
        }
    }
};
#endif

extern "C" __global__ void __launch_bounds__(256, 1)
mm_bf16(const bf16_bits* A, const bf16_bits* B, float* C, int M, int N, int K)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) bf16_bits smem_bf16[];
    bf16_bits* As = smem_bf16;                     // STAGES x [BM][A_LD]
    bf16_bits* Bs = smem_bf16 + STAGES * A_STAGE;  // STAGES x [BK][B_LD]

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

    const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0) &&
                     ((reinterpret_cast<size_t>(B) & 15) == 0);
    const int KT = (K + BK - 1) / BK;
    const Loader ld(A, B, As, Bs, M, N, K, bm, bn, tid, vec);

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

    // per-lane ldmatrix addresses inside slot 0 (bytes)
    const unsigned a_lane = smem_u32(As + (wm * WM + (lane % 16)) * A_LD + (lane / 16) * 8);
    const unsigned b_lane = smem_u32(Bs + (lane % 16) * B_LD + wn * WN + (lane / 16) * 8);

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
        const unsigned as = a_lane + s * (A_STAGE * 2);
        const unsigned bs = b_lane + s * (B_STAGE * 2);
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            unsigned af[MT][4], bf[NT / 2][4];
#pragma unroll
            for (int i = 0; i < MT; i++) ldmatrix_x4(af[i], as + (i * 16 * A_LD + kk * 16) * 2);
#pragma unroll
            for (int p = 0; p < NT / 2; p++) ldmatrix_x4_trans(bf[p], bs + (kk * 16 * B_LD + p * 16) * 2);
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int j = 0; j < NT; j++)
                    mma_bf16_16x8x16(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
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
