// Tensor-core rung, 3xTF32: FP32-accurate C = A * B on TF32 tensor cores (sm_80+).
// Each FP32 operand x is split as big = tf32(x), small = tf32(x - big) (x - big is exact in
// FP32); C += a_small*b_big + a_big*b_small + a_big*b_big with FP32 accumulation. The dropped
// a_small*b_small term and the rounding of small are both ~2^-22 relative to a*b, below the
// FP32 accumulation error, so the result is as accurate as SGEMM: 3 TF32 MMAs per product.
//
// Where the split happens: in registers, right after the fragment loads from shared memory.
// Splitting while staging would cost a register round trip on the global -> shared path
// (cp.async cannot transform data) and double the shared footprint and the shared reads
// (big and small both stored); in registers the split is 5 integer/FP32 instructions per
// fragment element per warp, against 3 MMAs per element pair, and shared traffic stays 1x.
// Rounding is integer arithmetic on the FP32 bits: (x + 0x1000) & 0xffffe000 is
// round-to-nearest (ties away from zero, like cvt.rna) to a 10-bit mantissa, with the low
// 13 bits cleared, so x - big is exact and nothing relies on the MMA ignoring low bits.
//
// Accumulation: by default the three MMAs accumulate straight into the FP32 accumulator
// registers (as CUTLASS's 3xTF32 does); the tensor core's internal additions are not
// round-to-nearest. -DACC_FLUSH=1 instead sums each k8 step's three MMAs from zero in the
// tensor core and adds that small partial sum to the accumulator with a round-to-nearest
// FADD: K/8 RN additions per output (fewer than SGEMM's K FMAs), at 4 FADD per 3 MMAs.
// That variant is for measuring the accuracy effect only: it needs 16 more live registers
// and spills a few bytes (ptxas: 24 bytes on sm_90), so it must not become the default.
//
// Everything else is the TF32 rung (mma_tf32.cu): block tile 128 x 256 x 32, 8 warps of
// 64 x 64, 3-stage cp.async ring, padded conflict-free shared layouts, ldmatrix for A.
//
// Shapes: any M, N, K >= 1. Fast path when K % 4 == 0 and N % 4 == 0 (and A, B 16-byte
// aligned): 16-byte cp.async. Otherwise 4-byte cp.async per element. Out-of-range
// elements are zero-filled (src-size 0) and never stored.
// Launch: block 256, grid (cdiv(M,128) * cdiv(N,256), 1, 1), dynamic shared memory
// MM_3XTF32_SMEM = 156672 bytes (> 48 KB: set max_dynamic_shared_size_bytes).
// sm_75 has no TF32 mma: the body compiles empty there and the rung is skipped.

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
#ifndef ACC_FLUSH  // 1: each k8 step's three MMAs start from zero and are added with FADD (see below)
#define ACC_FLUSH 0
#endif
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 8
#endif
// 3 * (128*36 + 32*264) * 4 = 156672 bytes
#define MM_3XTF32_SMEM (STAGES * (A_STAGE + B_STAGE) * 4)

#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte copy; src_bytes = 0 writes 16 zero bytes and reads nothing
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

// x -> (big, small), both exact TF32 values (low 13 bits zero)
__device__ __forceinline__ void split_tf32(unsigned x, unsigned& big, unsigned& small)
{
    big = (x + 0x1000u) & 0xffffe000u;
    const float rest = __uint_as_float(x) - __uint_as_float(big);  // exact
    small = (__float_as_uint(rest) + 0x1000u) & 0xffffe000u;
}

// D = A * B (C = 0): a fresh partial sum
__device__ __forceinline__ void mma_tf32_16x8x8_zero(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    const float z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(z));
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
mm_3xtf32(const float* A, const float* B, float* C, int M, int N, int K)
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
            // A fragments of this k-step, split once: 32 registers for the whole sweep
            unsigned ab[MT][4], as_[MT][4];
#pragma unroll
            for (int i = 0; i < MT; i++) {
                unsigned af[4];
                ldmatrix_x4(af, smem_u32(as + a_off + i * 16 * A_LD + kk * 8));
#pragma unroll
                for (int r = 0; r < 4; r++) split_tf32(af[r], ab[i][r], as_[i][r]);
            }
            // one B column tile at a time (4 registers live), its 12 MMAs on 4 accumulators:
            // the two correction terms first, the big product last
#pragma unroll
            for (int j = 0; j < NT; j++) {
                unsigned bb[2], bs_[2];
                split_tf32(__float_as_uint(bs[b_off + kk * 8 * B_LD + j * 8]), bb[0], bs_[0]);
                split_tf32(__float_as_uint(bs[b_off + (kk * 8 + 4) * B_LD + j * 8]), bb[1], bs_[1]);
#if ACC_FLUSH
                float part[MT][4];
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8_zero(part[i], as_[i], bb);
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8(part[i], ab[i], bs_);
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8(part[i], ab[i], bb);
#pragma unroll
                for (int i = 0; i < MT; i++)
#pragma unroll
                    for (int r = 0; r < 4; r++) acc[i][j][r] += part[i][r];
#else
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8(acc[i][j], as_[i], bb);
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8(acc[i][j], ab[i], bs_);
#pragma unroll
                for (int i = 0; i < MT; i++) mma_tf32_16x8x8(acc[i][j], ab[i], bb);
#endif
            }
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
