// Tensor-core rungs, Hopper: TF32 and FP32-accurate 3xTF32 GEMM on wgmma.mma_async fed by TMA, on the
// persistent warp-specialised body of the BF16 climb (include/tma_persistent.cuh), sm_90a only.
// C (FP32, M x N row-major) = A (M x K) * B (K x N), FP32 inputs.
//
// TF32 wgmma reads both operands K-major (the transpose immediates exist only for 16-bit types), and
// row-major B is N-major, so a pre-pass of include/stage_tf32.cuh runs first, timed with the GEMM
// (rooflab.cuda.staging):
//   TF32 (scheme "tma_tf32t"): B' = B^T (N x K), the bits as they are; A is read where it is. The
//     tensor core truncates both to TF32 as it reads them (the rung's rounding "tf32_trunc").
//   3xTF32 (scheme "tma_3xtf32"): A' = [A_big; A_small] (2M x Kp), B' = [B_big^T; B_small^T] (2N x Kp),
//     big = tf32_rna(x), small = tf32_rna(x - big).
// The swapped kernels (Tf32SwapOp, X3SwapOp: C^T = B^T A^T, scheme "tma_f32_store") need no pre-pass:
// they take maps of A and B as they lie (rooflab.cuda.tma's "tma_f32"; B in 32 n x 32 k boxes), and
// X3SwapOp splits both into TF32 parts inside the kernel.
// The others take tensor maps of the K-major operands and of C (rooflab.cuda.tma):
//   A or A': dims {K, parts x M}, box {32, 64}: 32 k (128 B) x 64 rows
//   B':      dims {K, parts x N}, box {32, 64}
//   C:       dims {N, M}, box {32, 64}, for the TMA-store epilogue
// 128-byte swizzle, zero fill out of bounds: a box lands as the K-major swizzled tile both
// descriptors read (start + 32 B per k8 step, SBO 1024 between 8-row groups), and a stage's B boxes,
// one after another, are one K-major operand of BN rows.
//
// Accumulation. The tensor core's FP32 accumulation truncates, so a long chain collects an error
// growing with K.
//   TF32: the accumulator stays in the wgmma chain (as cuBLAS TF32 does); 128 x 256 tiles. The K tail
//     (K not a multiple of 32) is zero-filled by TMA.
//   3xTF32: per k8 step three products (big*small, small*big, big*big; small*small ~2^-22 dropped)
//     into a partial accumulator summed from zero for FLUSH k-tiles, then added to the FP32
//     accumulator with round-to-nearest adds; 128 x 128 tiles (partial + accumulator: 128 registers),
//     with or without the pre-pass. FLUSH -F (pre-pass): the same sums, overlapped
//     (include/overlap.cuh: two partials, 192 registers).
//
// Shapes: any M, N >= 1; K through Kp. Persistent: at most one block an SM (the record's grid
// function), block 384 (a producer warpgroup, two consumers), dynamic shared memory TP_STORE_SMEM.
// Compile with -arch=sm_90a; for any other target the main kernels' bodies are empty (the stage_*
// kernels run anywhere).

#include "ptx.cuh"
#include "stage_tf32.cuh"
#include "tma_persistent.cuh"

#define TF_BK 32  // one 128-byte swizzle row of FP32

// the pre-pass (any architecture)
extern "C" __global__ void stage_a_tf32(const float* X, float* out, int R, int K, int Kp) { stage_rows<1>(X, out, R, K, Kp); }
extern "C" __global__ void stage_a_3xtf32(const float* X, float* out, int R, int K, int Kp) { stage_rows<2>(X, out, R, K, Kp); }
extern "C" __global__ void stage_bt_tf32(const float* X, float* out, int K, int N, int Kp) { stage_cols<1>(X, out, K, N, Kp); }
extern "C" __global__ void stage_bt_3xtf32(const float* X, float* out, int K, int N, int Kp) { stage_cols<2>(X, out, K, N, Kp); }
extern "C" __global__ void stage_bt_transpose(const float* X, float* out, int K, int N) { transpose_rows(X, out, K, N); }

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tf32_tma {

// TF32: one part, m64n256k8 on both K-major operands, the chain keeping the accumulator
struct Tf32Op {
    static constexpr int BK = TF_BK, BN = 256, NACC = 128, PARTS = 1, FLUSH = 0;
    static constexpr bool B_KMAJOR = true;
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned a0, unsigned b0, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < TF_BK / 8; kk++)
            wgmma_m64n256k8_tf32(d, make_desc(a0 + kk * 32, 16, 1024), make_desc(b0 + kk * 32, 16, 1024),
                                 accumulate || kk > 0);
    }
};

// TF32 without the transpose: C^T = B^T A^T (SWAP_AB, include/tma_persistent.cuh), B^T's fragments
// loaded by the consumers from B's 32 x 32 boxes as it lies, A K-major as it lies in the descriptors;
// m64n256k8 with A from registers, the tile 256 rows of C x 128 columns
struct Tf32SwapOp {
    static constexpr int BK = TF_BK, BN = 256, NACC = 128, PARTS = 1, FLUSH = 0;
    static constexpr bool B_KMAJOR = true, SWAP_AB = true;
    static __device__ __forceinline__ void mma(float (&d)[128], const unsigned (&f)[16], unsigned b0, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < TF_BK / 8; kk++)
            wgmma_m64n256k8_tf32_rs(d, *reinterpret_cast<const unsigned(*)[4]>(&f[4 * kk]),
                                    make_desc(b0 + kk * 32, 16, 1024), accumulate || kk > 0);
    }
};

// fewer TMA issues a stage for the same bytes: A in one box of the tile's 128 rows, B^T in one of its 256
struct Tf32OneBoxOp : Tf32Op {
    static constexpr int A_BOX_ROWS = 128, B_BOX_ROWS = 256;
};

// the swapped product's stage in two issues: B in one rank-3 box of 4 chunks, A in one box of 256 rows
// (B_BOX_ROWS: the second operand's, A here); _a1: A's box only
template <bool B_ONE>
struct Tf32SwapBoxOp : Tf32SwapOp {
    static constexpr int B_BOX_ROWS = 256;
    static constexpr bool B_ONE_BOX = B_ONE;
};

// 3xTF32: the stage holds A_big's and A_small's boxes (a: the warpgroup's rows of A_big; its A_small
// 2 boxes = 16 KB on), then B_big's 2 boxes and B_small's 2 (b: B_big; B_small 16 KB on)
// SPREAD: C stored in parts under the next tile's first k-tiles (tma_persistent.cuh's SPREAD_STORE)
template <int FLUSH_, bool DEFER_ = false, int SPREAD_ = 0>
struct X3Op {
    static constexpr int BK = TF_BK, BN = 128, NACC = 64, PARTS = 2, FLUSH = FLUSH_, SPREAD_STORE = SPREAD_;
    static constexpr bool B_KMAJOR = true, DEFER_STORE = DEFER_;  // DEFER: C stored under the next tile's first MMAs
    static constexpr unsigned A_PART = 2 * TP_BOX_BYTES, B_PART = (BN / 64) * TP_BOX_BYTES;
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned a0, unsigned b0, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < TF_BK / 8; kk++) {
            const unsigned ka = a0 + kk * 32, kb = b0 + kk * 32;
            const auto a_big = make_desc(ka, 16, 1024), a_small = make_desc(ka + A_PART, 16, 1024);
            const auto b_big = make_desc(kb, 16, 1024), b_small = make_desc(kb + B_PART, 16, 1024);
            wgmma_m64n128k8_tf32(d, a_big, b_small, accumulate || kk > 0);
            wgmma_m64n128k8_tf32(d, a_small, b_big, 1);
            wgmma_m64n128k8_tf32(d, a_big, b_big, 1);
        }
    }
};

// 3xTF32 without the pre-pass: C^T = B^T A^T as in Tf32SwapOp, on 128 x 128 tiles (SPLIT_A,
// include/tma_persistent.cuh). Each FP32 operand is loaded once, as it lies, and split where it is read:
//   B^T's fragments in the consumers' registers: big = tf32_rna(x), small = tf32_rna(x - big), the
//     pre-pass's split;
//   A by two producer warps into the stage's residual buffer: small = tf32_rna(a - big). big is A as
//     staged, which the tensor core truncates as it reads it: small then holds up to 13 bits, rounded
//     to TF32's 11 (within 2 FP32 ulps of a, the pre-pass's split within 1), and the dropped
//     small * small reaches 2^-21 of |a b| (2^-22), for one 16 KB store a k-tile. REWRITE_A: big =
//     tf32_rna(a), written back over the staged A (the pre-pass's split, at 16 KB more stores a k-tile).
// Per k8 step three m64n128k8 with B^T from registers: big_b * small_a, small_b * big_a, big_b * big_a,
// summed from zero in a partial accumulator for FLUSH k-tiles, then added to the FP32 accumulator.
template <int FLUSH_, bool REWRITE_A_>
struct X3SwapOp {
    static constexpr int BK = TF_BK, BN = 128, NACC = 64, PARTS = 1, FLUSH = FLUSH_, SPLIT_WARPS = 2;
    static constexpr bool B_KMAJOR = true, SWAP_AB = true, SPLIT_A = true, REWRITE_A = REWRITE_A_;
    static __device__ __forceinline__ void split_b(unsigned& x, unsigned& small)
    {
        const float v = __uint_as_float(x), big = nt_rna(v);
        small = __float_as_uint(nt_rna(v - big));  // v - big is exact
        x = __float_as_uint(big);
    }
    static __device__ __forceinline__ void split_a(unsigned (&x)[4], unsigned (&small)[4])
    {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float v = __uint_as_float(x[i]), big = REWRITE_A ? nt_rna(v) : __uint_as_float(x[i] & 0xffffe000u);
            small[i] = __float_as_uint(nt_rna(v - big));
            if (REWRITE_A) x[i] = __float_as_uint(big);
        }
    }
    static __device__ __forceinline__ void mma(float (&d)[64], const unsigned (&f)[32], unsigned a_big,
                                               unsigned a_small, int accumulate)
    {
#pragma unroll
        for (int kk = 0; kk < TF_BK / 8; kk++) {
            const unsigned(&big)[4] = *reinterpret_cast<const unsigned(*)[4]>(&f[4 * kk]);
            const unsigned(&small)[4] = *reinterpret_cast<const unsigned(*)[4]>(&f[16 + 4 * kk]);
            const auto ab = make_desc(a_big + kk * 32, 16, 1024), as = make_desc(a_small + kk * 32, 16, 1024);
            wgmma_m64n128k8_tf32_rs(d, big, as, accumulate || kk > 0);
            wgmma_m64n128k8_tf32_rs(d, small, ab, 1);
            wgmma_m64n128k8_tf32_rs(d, big, ab, 1);
        }
    }
};

// the swapped 3xTF32 stage in two issues: B in one rank-3 box of 4 chunks, A in one box of 128 rows
template <int FLUSH_>
struct X3SwapOneBoxOp : X3SwapOp<FLUSH_, false> {
    static constexpr int B_BOX_ROWS = 128;
    static constexpr bool B_ONE_BOX = true;
};

}  // namespace tf32_tma
#endif

// TF32, 128 x 256 tiles, 4 stages, TMA-store epilogue (TP_STORE_SMEM(1, 256, 4) = 230400 bytes)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_tma(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32Op, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the same in 2-CTA clusters along M, B's boxes multicast into both
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_tf32_tma_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32Op, 2, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// TF32 swapped (no pre-pass): 256 x 128 tiles of C, 4 stages, TMA-store epilogue (TP_STORE_SMEM(1, 256, 4))
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_swap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32SwapOp, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// the same in 2-CTA clusters (along C's columns), A's boxes multicast into both
extern "C" __global__ void TP_CLUSTER_DIMS_2 __launch_bounds__(384, 1)
mm_wgmma_tf32_swap_cluster(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32SwapOp, 2, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// 3xTF32, 128 x 128 tiles, 3 stages, the partial flushed every 2 k-tiles (TP_STORE_SMEM(2, 128, 3) =
// 230400 bytes); _f1, _f4: every k-tile, every 4
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<2>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_f1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<1>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// each tile's C stored while the next tile's first k-tile of MMAs runs (tma_persistent.cuh's DEFER_STORE)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_defer(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<2, true>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_f4(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<4>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// 3xTF32 swapped (no pre-pass): 128 x 128 tiles of C, 4 stages each with A's residual, the partial
// flushed every k-tile, TMA-store epilogue (TP_SPLIT_STORE_SMEM(128, 4) = 230400 bytes); _f2: every 2
// k-tiles; _rna: A's high part rounded to nearest and rewritten in the stage
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_swap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3SwapOp<1, false>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_swap_f2(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3SwapOp<2, false>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_swap_rna(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3SwapOp<1, true>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// 3xTF32 with the pre-pass, the same sums as _f1 and the default, overlapped (FLUSH -1, -2: two partials
// in turn, each added to the FP32 accumulator while the next group's MMAs run)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_overlap(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<-1>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_overlap2(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<-2>, 1, 3, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

// C written from the registers straight to memory (no staging, no store waiting on a buffer's read): the
// TF32 kernels, the 3xTF32 flush-1 kernel and the swapped 3xTF32 one (flush 2)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_tma_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32Op, 1, 4, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_swap_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32SwapOp, 1, 4, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_f1_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<1>, 1, 3, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_swap_f2_direct(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3SwapOp<2, false>, 1, 4, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// C from the registers in 8 parts under the next tile's first 8 k-tiles (tma_persistent.cuh's SPREAD_STORE),
// the 3xTF32 kernel with the pre-pass flushing every k-tile (the copy of the accumulator spills ptxas's
// allocation of the flush-2 and swapped kernels)
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_tma_f1_spread(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3Op<1, false, 8>, 1, 3, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}

// each operand's stage in one TMA issue (the same bytes, the same shared-memory layout): TF32 with A in one
// 128-row box and B^T in one 256-row box; swapped TF32 with A in one 256-row box (_a1) and B too, as one
// rank-3 box of four 32-column chunks (_ab1); swapped 3xTF32 (flush 2, C from registers) likewise
extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_tma_ab1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32OneBoxOp, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_swap_a1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32SwapBoxOp<false>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_tf32_swap_ab1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::Tf32SwapBoxOp<true>, 1, 4, 40, 232, true>(tmA, tmB, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
mm_wgmma_3xtf32_swap_f2_direct_ab1(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    tma_persistent::body<tf32_tma::X3SwapOneBoxOp<2>, 1, 4, 40, 232, false>(tmA, tmB, C, M, N, K);
#endif
}
