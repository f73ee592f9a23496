// Tensor-core rung, 3xTF32: FP32-accurate C = A * B on TF32 tensor cores (sm_80+).
// Each FP32 operand x is split as big = tf32(x), small = tf32(x - big) (x - big is exact in
// FP32); C += a_small*b_big + a_big*b_small + a_big*b_big. The dropped a_small*b_small term
// and the rounding of small are both ~2^-22 relative to a*b: 3 TF32 MMAs per product.
//
// Accuracy: the tensor core's FP32 accumulation is not round-to-nearest (it truncates), so
// accumulating all 3K/8 MMAs straight into one long-lived accumulator gives an error that
// grows linearly with K (2.9e-5 at K = 4096 on an H200, worse than SGEMM's 1.1e-6). Here
// every k-tile (BK = 32: 12 MMAs per output) is summed from zero in a separate partial
// accumulator, and the partial is added to the FP32 accumulator with a round-to-nearest
// FADD: K/32 RN additions per output, and the truncation only ever acts on a 32-term
// partial sum, whose sign is random from tile to tile, so its errors cancel instead of
// piling up. That needs two accumulator sets, so the warp tile is 64 x 32 (64 + 64
// registers) and the block tile 128 x 128.
//
// Where the split happens: in registers, right after the fragment loads from shared memory
// (5 integer/FP32 instructions per fragment element per warp; shared traffic stays 1x).
// Rounding is integer arithmetic on the FP32 bits: (x + 0x1000) & 0xffffe000 is
// round-to-nearest (ties away from zero, like cvt.rna) to a 10-bit mantissa with the low
// 13 bits cleared, so x - big is exact and nothing relies on the MMA ignoring low bits.
//
// Block tile BM x BN x BK = 128 x 128 x 32, 8 warps as 2 (M) x 4 (N), warp tile 64 x 32:
// 4 x 4 m16n8 tiles. Per k8 step a warp issues its MMAs product by product over all 16
// tiles (16 independent MMAs between two that share an accumulator).
// Global -> shared: cp.async in a STAGES-deep ring (one barrier per k-tile), padded
// conflict-free layouts: As[BM][36] read with ldmatrix.x4 (each lane's b16 pair is one
// float), Bs[BK][136] read with 32-bit loads (136 = 8 mod 32: bank = 8t + g).
//
// Shapes: any M, N, K >= 1. Fast path when K % 4 == 0 and N % 4 == 0 (and A, B 16-byte
// aligned): 16-byte cp.async. Otherwise 4-byte cp.async per element. Out-of-range
// elements are zero-filled (src-size 0) and never stored.
// Kernels (extern "C", one per ring depth; the rung's variants):
//   mm_3xtf32     STAGES = 4, dynamic shared 4 * 35840 = 143360 bytes (the default)
//   mm_3xtf32_s3  STAGES = 3, 107520 bytes
//   mm_3xtf32_s5  STAGES = 5, 179200 bytes
// Launch: block 256, grid (cdiv(M,128) * cdiv(N,128), 1, 1); > 48 KB of dynamic shared
// memory: set max_dynamic_shared_size_bytes.
// sm_75 has no TF32 mma: the bodies compile empty there and the rung is skipped.

#include "ptx.cuh"  // the inline-PTX wrappers shared by the tensor-core kernels (include/ptx.cuh)

#define X3_BM 128
#define X3_BN 128
#define X3_BK 32
#define X3_WARPS_N 4
#define X3_WM 64
#define X3_WN 32
#define X3_MT (X3_WM / 16)  // m16 tiles per warp
#define X3_NT (X3_WN / 8)   // n8 tiles per warp
#define X3_A_LD (X3_BK + 4)
#define X3_B_LD (X3_BN + 8)
#define X3_A_STAGE (X3_BM * X3_A_LD)
#define X3_B_STAGE (X3_BK * X3_B_LD)
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 8
#endif
// STAGES * (128*36 + 32*136) * 4 = STAGES * 35840 bytes
#define MM_3XTF32_SMEM(stages) ((stages) * (X3_A_STAGE + X3_B_STAGE) * 4)

#if __CUDA_ARCH__ >= 800
namespace x3 {

// 16-byte copy; src_bytes = 0 writes 16 zero bytes and reads nothing

// x -> (big, small), both exact TF32 values (low 13 bits zero)
__device__ __forceinline__ void split_tf32(unsigned x, unsigned& big, unsigned& small)
{
    big = (x + 0x1000u) & 0xffffe000u;
    const float rest = __uint_as_float(x) - __uint_as_float(big);  // exact
    small = (__float_as_uint(rest) + 0x1000u) & 0xffffe000u;
}

// D = A * B + (ZERO ? 0 : D)
template <bool ZERO>
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    if (ZERO) {
        const float z = 0.0f;
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(z));
    } else {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

// Per-thread copy plan: 4 16-byte chunks of the A tile (rows tid/8 + 32i, floats
// (tid%8)*4..+3) and 4 of the B tile (rows tid/32 + 8i, floats (tid%32)*4..+3).
template <int STAGES>
struct Loader {
    const float* A;
    const float* B;
    const float* a;  // A + (bm + tid/8) * K + (tid%8)*4
    const float* b;  // B + (tid/32) * N + bn + (tid%32)*4
    unsigned sbase;         // shared address of the ring
    unsigned a_dst, b_dst;  // shared addresses of this thread's chunk 0 in slot 0
    int M, N, K, bm, bn, tid;
    unsigned a_rows_ok;  // bit i: chunk i's row is < M
    bool b_col_ok, vec;

    __device__ __forceinline__ Loader(const float* A_, const float* B_, int M_, int N_, int K_, int bm_,
                                      int bn_, int tid_, bool vec_, unsigned smem_base)
        : A(A_), B(B_), sbase(smem_base), M(M_), N(N_), K(K_), bm(bm_), bn(bn_), tid(tid_), vec(vec_)
    {
        const int ar = tid / (X3_BK / 4), ac = (tid % (X3_BK / 4)) * 4;
        const int br = tid / (X3_BN / 4), bc = (tid % (X3_BN / 4)) * 4;
        a = A + (size_t)(bm + ar) * K + ac;
        b = B + (size_t)br * N + bn + bc;
        a_dst = smem_base + (ar * X3_A_LD + ac) * 4;
        b_dst = smem_base + STAGES * X3_A_STAGE * 4 + (br * X3_B_LD + bc) * 4;
        a_rows_ok = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) a_rows_ok |= (bm + ar + i * 32 < M ? 1u : 0u) << i;
        b_col_ok = bn + bc < N;
    }

    // stage k-tile kt into ring slot s
    __device__ __forceinline__ void load(int kt, int s) const
    {
        const int k0 = kt * X3_BK;
        const unsigned sa = a_dst + s * (X3_A_STAGE * 4), sb = b_dst + s * (X3_B_STAGE * 4);
        if (vec) {
            const bool a_col_ok = k0 + (tid % (X3_BK / 4)) * 4 < K;  // K % 4 == 0: whole chunk
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const bool ok = a_col_ok && ((a_rows_ok >> i) & 1u);
                cp_async16(sa + i * 32 * X3_A_LD * 4, ok ? a + (size_t)i * 32 * K + k0 : A, ok ? 16 : 0);
            }
            const int br = tid / (X3_BN / 4) + k0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const bool ok = b_col_ok && br + i * 8 < K;
                cp_async16(sb + i * 8 * X3_B_LD * 4, ok ? b + (size_t)(k0 + i * 8) * N : B, ok ? 16 : 0);
            }
        } else {
            // unaligned shapes: one 4-byte cp.async per element, same ring and barriers
            const unsigned base_a = sbase + s * (X3_A_STAGE * 4);
            const unsigned base_b = sbase + STAGES * X3_A_STAGE * 4 + s * (X3_B_STAGE * 4);
#pragma unroll 1
            for (int e = tid; e < X3_BM * X3_BK; e += 256) {
                const int r = e / X3_BK, c = e % X3_BK, gr = bm + r, gc = k0 + c;
                const bool ok = gr < M && gc < K;
                cp_async4(base_a + (r * X3_A_LD + c) * 4, ok ? A + (size_t)gr * K + gc : A, ok ? 4 : 0);
            }
#pragma unroll 1
            for (int e = tid; e < X3_BK * X3_BN; e += 256) {
                const int r = e / X3_BN, c = e % X3_BN, gr = k0 + r, gc = bn + c;
                const bool ok = gr < K && gc < N;
                cp_async4(base_b + (r * X3_B_LD + c) * 4, ok ? B + (size_t)gr * N + gc : B, ok ? 4 : 0);
            }
        }
    }
};

template <int STAGES>
__device__ __forceinline__ void body(const float* A, const float* B, float* C, int M, int N, int K)
{
    extern __shared__ __align__(128) float smem[];
    float* As = smem;                        // STAGES x [BM][A_LD]
    float* Bs = smem + STAGES * X3_A_STAGE;  // STAGES x [BK][B_LD]

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / X3_WARPS_N, wn = warp % X3_WARPS_N;
    const int g = lane / 4, t = lane % 4;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + X3_BM - 1) / X3_BM, grid_n = (N + X3_BN - 1) / X3_BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * X3_BM;
    const int bn = ((pid % in_group) / group_rows) * X3_BN;

    const bool vec = (K % 4 == 0) && (N % 4 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0) &&
                     ((reinterpret_cast<size_t>(B) & 15) == 0);
    const int KT = (K + X3_BK - 1) / X3_BK;
    const Loader<STAGES> ld(A, B, M, N, K, bm, bn, tid, vec, smem_u32(smem));

    float acc[X3_MT][X3_NT][4];   // round-to-nearest FP32 sums of the k-tile partials
    float part[X3_MT][X3_NT][4];  // this k-tile's partial, summed by the tensor core from zero
#pragma unroll
    for (int i = 0; i < X3_MT; i++)
#pragma unroll
        for (int j = 0; j < X3_NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0f;

    // prologue: STAGES - 1 tiles in flight (one commit group each, empty past the end)
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) ld.load(s, s);
        cp_async_commit();
    }

    // per-lane fragment offsets inside a stage
    const int a_off = (wm * X3_WM + (lane % 16)) * X3_A_LD + (lane / 16) * 4;
    const int b_off = t * X3_B_LD + wn * X3_WN + g;

    for (int kt = 0; kt < KT; kt++) {
        // my copies of tile kt have landed; the barrier makes everyone's visible and
        // also says every warp has finished reading slot (kt - 1) % STAGES
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        {
            const int nk = kt + STAGES - 1;
            if (nk < KT) ld.load(nk, nk % STAGES);
            cp_async_commit();
        }
        const int s = kt % STAGES;
        const float* as = As + s * X3_A_STAGE;
        const float* bs = Bs + s * X3_B_STAGE;
#pragma unroll
        for (int kk = 0; kk < X3_BK / 8; kk++) {
            unsigned ab[X3_MT][4], asm_[X3_MT][4], bb[X3_NT][2], bsm[X3_NT][2];
#pragma unroll
            for (int i = 0; i < X3_MT; i++) {
                unsigned af[4];
                ldmatrix_x4(af, smem_u32(as + a_off + i * 16 * X3_A_LD + kk * 8));
#pragma unroll
                for (int r = 0; r < 4; r++) split_tf32(af[r], ab[i][r], asm_[i][r]);
            }
#pragma unroll
            for (int j = 0; j < X3_NT; j++) {
                split_tf32(__float_as_uint(bs[b_off + kk * 8 * X3_B_LD + j * 8]), bb[j][0], bsm[j][0]);
                split_tf32(__float_as_uint(bs[b_off + (kk * 8 + 4) * X3_B_LD + j * 8]), bb[j][1], bsm[j][1]);
            }
            // product by product over all 16 tiles: the two correction terms, then the big one
            if (kk == 0) {
#pragma unroll
                for (int i = 0; i < X3_MT; i++)
#pragma unroll
                    for (int j = 0; j < X3_NT; j++) mma<true>(part[i][j], asm_[i], bb[j]);
            } else {
#pragma unroll
                for (int i = 0; i < X3_MT; i++)
#pragma unroll
                    for (int j = 0; j < X3_NT; j++) mma<false>(part[i][j], asm_[i], bb[j]);
            }
#pragma unroll
            for (int i = 0; i < X3_MT; i++)
#pragma unroll
                for (int j = 0; j < X3_NT; j++) mma<false>(part[i][j], ab[i], bsm[j]);
#pragma unroll
            for (int i = 0; i < X3_MT; i++)
#pragma unroll
                for (int j = 0; j < X3_NT; j++) mma<false>(part[i][j], ab[i], bb[j]);
        }
        // flush: one round-to-nearest addition per output per k-tile
#pragma unroll
        for (int i = 0; i < X3_MT; i++)
#pragma unroll
            for (int j = 0; j < X3_NT; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) acc[i][j][r] += part[i][j][r];
    }
    cp_async_wait<0>();  // only empty groups can remain; drain them before exit anyway

    // epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) of each 16 x 8 tile
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int i = 0; i < X3_MT; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = bm + wm * X3_WM + i * 16 + g + h * 8;
            if (r >= M) continue;
#pragma unroll
            for (int j = 0; j < X3_NT; j++) {
                const int c = bn + wn * X3_WN + j * 8 + 2 * t;
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
}

}  // namespace x3
#endif

extern "C" __global__ void __launch_bounds__(256, 1)
mm_3xtf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if __CUDA_ARCH__ >= 800
    x3::body<4>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_3xtf32_s3(const float* A, const float* B, float* C, int M, int N, int K)
{
#if __CUDA_ARCH__ >= 800
    x3::body<3>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(256, 1)
mm_3xtf32_s5(const float* A, const float* B, float* C, int M, int N, int K)
{
#if __CUDA_ARCH__ >= 800
    x3::body<5>(A, B, C, M, N, K);
#endif
}
