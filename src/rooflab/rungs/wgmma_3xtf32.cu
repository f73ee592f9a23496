// Tensor-core rungs, Hopper: FP32-accurate 3xTF32 (and plain TF32) GEMM on wgmma.mma_async
// (sm_90a only). C (FP32) = A * B, A M x K and B K x N row-major FP32.
//
// TF32 wgmma needs both operands K-major (the transpose immediates exist only for 16-bit
// types), and B (row-major K x N) is N-major. So the kernel computes the transposed product,
// C^T = B^T A^T: wgmma's "A" operand (64 rows x 8 k, from REGISTERS) is a 64-column slice of
// B, and its "B" operand (8 k x BM columns, from shared memory) is a BM-row slice of A, whose
// rows are already K-contiguous. A warpgroup's 64 x BM accumulator is a BM x 64 block of C
// seen transposed.
//
// The register operand is loaded straight from global memory (L2) into the fragment
// registers, no shared memory: lane (g = lane/4, t = lane%4) of warp w holds fragment rows
// 16w + g and 16w + g + 8 at k = t and t + 4 (CUTLASS ALayout_64x8, the m16n8k8 A layout).
// Fragment rows are mapped to columns of C as row 16w + g + 8h -> column 16w + 2g + h, so a
// lane's two rows are ADJACENT columns of B and C: one 8-byte load per (k, lane) and one
// 8-byte store per (row of C, lane).
// The shared operand: every thread loads 16-byte chunks of the A tile into registers,
// splits / rounds them there, and stores the TF32 parts with st.shared into K-major slots
// laid out as the 128-byte swizzle wgmma expects (row m at m * 128 B holds k 0..31, chunk c
// = k 4c..4c+3 at chunk position c ^ (m & 7); descriptor: start + 32 B per k8 step, SBO =
// 1024 B, LBO unused, layout type 1), double-buffered. No cp.async: the loads for tile kt+2
// are in flight in registers while the tensor cores work on tile kt.
//
// 3xTF32: x = big + small (big = tf32_rna(x), small = tf32_rna(x - big), x - big exact);
// per k8 step three wgmma into the same accumulator: b_big * a_small, b_small * a_big,
// b_big * a_big (the a_small * b_small term, ~2^-22 relative, is dropped).
// Accumulation (FLUSH): the tensor core's FP32 accumulation truncates, so a long-lived
// accumulator collects an error that grows with K. Each k-tile's 12 wgmma therefore start
// from zero (scale-d = 0) in a partial accumulator, which is then added to the FP32
// accumulator with round-to-nearest FADDs: K/32 RN additions per output.
//
// Per k-tile (BK = 32), all 256 threads (2 warpgroups; warpgroup w computes C columns
// 64w..64w+63 of the block for all BM rows):
//   1. wgmma.fence; the k-tile's wgmma (4 k8 steps x PRODUCTS) on slot kt%2 and the
//      fragment registers; commit.
//   2. barrier 1: every thread has passed step 5 of the last iteration, so every
//      warpgroup's wgmma of tile kt-1 has completed and slot (kt+1)%2 is free.
//   3. split the A chunks of tile kt+1 (in registers since the last iteration) into slot
//      (kt+1)%2.
//   4. fence.proxy.async (the generic-proxy st.shared -> visible to wgmma's async proxy);
//      barrier 2: slot (kt+1)%2 is complete for every warpgroup. Then issue the global
//      loads of tile kt+2's A chunks (after the fence: ptxas emits it as MEMBAR.ALL.CTA +
//      FENCE.VIEW.ASYNC.S, and the MEMBAR may wait for loads still in flight).
//   5. wgmma.wait_group 0 (the fragment registers and the partial are free again);
//      FLUSH: acc += part.
//   6. split tile kt+1's B values (in registers since the last iteration) into the
//      fragment registers; issue the global loads of tile kt+2's B values. (LATE_B, kernel
//      mm_wgmma_3xtf32_lateb: tile kt+1's B loads are issued after the fence of step 4
//      instead, so no load is in flight across a fence, but they have only step 5 to arrive.)
// Both barriers fall while the tensor cores work; they idle only across steps 5-6 (the
// flush and the B split). Each global load has one full iteration to arrive.
//
// Shapes: any M, N, K >= 1. 16-byte loads of A when K % 4 == 0 (and A 16-byte aligned),
// 8-byte loads of B when N % 2 == 0 (and B 8-byte aligned), else per element; out-of-range
// elements are loaded as zero and never stored; C stores are predicated per element
// (float2 when N is even).
// Kernels (extern "C"):
//   mm_wgmma_3xtf32       3xTF32, BM = 128 (wgmma m64n128k8), FLUSH          tile 128 x 128
//   mm_wgmma_3xtf32_lateb the same with LATE_B (see step 6)
//   mm_wgmma_tf32         TF32 (both operands cvt.rna-rounded), BM = 128, FLUSH
//   mm_wgmma_tf32_n256    TF32, BM = 256 (m64n256k8), no flush (acc in the wgmma chain)
// Launch: block 256, grid (cdiv(M,BM) * cdiv(N,128), 1, 1), dynamic shared memory
// MM_WGMMA_3XTF32_SMEM = 66560 bytes for all four (2 slots x {big, small} x 16 KB, or
// 2 x 32 KB, + 1024 to align the slots to 1024 B): set max_dynamic_shared_size_bytes.
// Compile with -arch=sm_90a; for any other target the bodies are empty.

#define W3_BN 128  // columns of C per block: 2 warpgroups x 64
#define W3_BK 32   // one 128-byte swizzle row of TF32
#define W3_THREADS 256
#ifndef GROUP_M  // rasterization: GROUP_M block-rows sweep the columns together (L2 reuse)
#define GROUP_M 16
#endif
#define MM_WGMMA_3XTF32_SMEM (2 * 2 * 16384 + 1024)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace w3 {

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void sts128(unsigned addr, unsigned a, unsigned b, unsigned c, unsigned d)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d)
                 : "memory");
}

// generic-proxy shared writes -> visible to the async proxy (wgmma)
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// a block-wide barrier on a named barrier (0 is __syncthreads'): all W3_THREADS threads
template <int ID>
__device__ __forceinline__ void named_barrier() { asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(W3_THREADS) : "memory"); }

// keep the compiler from moving register reads/writes across the asynchronous MMAs, and
// keep the fragment registers allocated until the MMAs that read them have completed
template <int N>
__device__ __forceinline__ void fence_f(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void fence_u(unsigned (&r)[4][4])
{
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) asm volatile("" : "+r"(r[i][j])::"memory");
}

// wgmma matrix descriptor: start address, leading / stride byte offsets (all >> 4),
// base offset 0 (slots are 1024-byte aligned), layout type 1 = 128-byte swizzle
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

// round to TF32, nearest, ties away from zero (cvt.rna), low 13 bits cleared
__device__ __forceinline__ unsigned rna(unsigned x) { return (x + 0x1000u) & 0xffffe000u; }

// x -> (big, small), both exact TF32 values
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small)
{
    big = rna(__float_as_uint(x));
    small = rna(__float_as_uint(x - __uint_as_float(big)));  // x - big is exact
}

// D (64 x 128, FP32, 64 registers per thread) (+)= A (64 x 8 TF32, registers) * B (8 x 128 TF32,
// K-major in shared memory, 128-byte swizzle, through its descriptor); scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_rs_m64n128k8(float (&d)[64], const unsigned (&a)[4], unsigned long long desc_b,
                                                int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// D (64 x 256, FP32, 128 registers per thread) (+)= A (64 x 8 TF32, registers) * B (8 x 256 TF32,
// K-major in shared memory, 128-byte swizzle, through its descriptor); scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_rs_m64n256k8(float (&d)[128], const unsigned (&a)[4], unsigned long long desc_b,
                                                int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}


template <int BM>
__device__ __forceinline__ void wgmma_rs(float (&d)[BM / 2], const unsigned (&a)[4], unsigned long long desc, int scale_d)
{
    if constexpr (BM == 128) wgmma_rs_m64n128k8(d, a, desc, scale_d);
    else wgmma_rs_m64n256k8(d, a, desc, scale_d);
}

// BM: rows of C per block (= wgmma N); PRODUCTS: 3 (3xTF32) or 1 (TF32); FLUSH: partial
// accumulator per k-tile added with RN FADDs (needs 2 x BM/2 accumulator registers)
template <int BM, int PRODUCTS, bool FLUSH, bool LATE_B = false>
__device__ __forceinline__ void body(const float* A, const float* B, float* C, int M, int N, int K)
{
    constexpr int CH = BM * 8 / W3_THREADS;        // 16-byte A chunks per thread per k-tile
    constexpr int PART_BYTES = BM * 128;           // one TF32 part of one slot
    constexpr int SLOT_BYTES = PART_BYTES * (PRODUCTS == 3 ? 2 : 1);
    constexpr int NACC = BM / 2;                   // accumulator registers per thread
    static_assert(2 * SLOT_BYTES + 1024 <= MM_WGMMA_3XTF32_SMEM, "shared memory size");

    extern __shared__ __align__(1024) unsigned char w3_smem[];
    const unsigned ring = (smem_u32(w3_smem) + 1023u) & ~1023u;

    const int tid = threadIdx.x, wg = tid / 128, wi = (tid % 128) / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;

    // grouped rasterization of the 1-D grid
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + W3_BN - 1) / W3_BN;
    const int pid = blockIdx.x, in_group = GROUP_M * grid_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % in_group) % group_rows) * BM;
    const int bn = ((pid % in_group) / group_rows) * W3_BN;

    const bool vec_a = (K % 4 == 0) && ((reinterpret_cast<size_t>(A) & 15) == 0);
    const bool vec_b = (N % 2 == 0) && ((reinterpret_cast<size_t>(B) & 7) == 0);
    const int KT = (K + W3_BK - 1) / W3_BK;

    // this thread's A chunks: rows am + 32i of the tile, k 4c..4c+3 of each k-tile
    const int am = tid / 8, ac = tid % 8;
    // this thread's B values: k = t (+4) of each k8 step, columns bcol, bcol + 1
    const int bcol = bn + 64 * wg + 16 * wi + 2 * g;

    float4 ra[CH];
    float2 rb[4][2];
    unsigned fb[4][4], fs[4][4];  // fragments: big (and small) parts, [k8 step][register]
    float acc[NACC], part[NACC];
#pragma unroll
    for (int i = 0; i < NACC; i++) acc[i] = part[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) fs[i][j] = 0u;

    auto load_a = [&](int kt) {
        const int k = kt * W3_BK + 4 * ac;
        if (vec_a) {  // K % 4 == 0: a chunk is wholly in or out of range
#pragma unroll
            for (int i = 0; i < CH; i++) {
                const int m = bm + am + 32 * i;
                ra[i] = (m < M && k < K) ? __ldg(reinterpret_cast<const float4*>(A + (size_t)m * K + k))
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
            }
        } else {
#pragma unroll
            for (int i = 0; i < CH; i++) {
                const int m = bm + am + 32 * i;
                const float* p = A + (size_t)m * K + k;
                ra[i].x = (m < M && k + 0 < K) ? __ldg(p + 0) : 0.0f;
                ra[i].y = (m < M && k + 1 < K) ? __ldg(p + 1) : 0.0f;
                ra[i].z = (m < M && k + 2 < K) ? __ldg(p + 2) : 0.0f;
                ra[i].w = (m < M && k + 3 < K) ? __ldg(p + 3) : 0.0f;
            }
        }
    };
    auto load_b = [&](int kt) {
        if (vec_b) {  // N % 2 == 0 and bcol even: both columns in or out of range
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int k = kt * W3_BK + 8 * kk + t + 4 * h;
                    rb[kk][h] = (k < K && bcol < N) ? __ldg(reinterpret_cast<const float2*>(B + (size_t)k * N + bcol))
                                                    : make_float2(0.f, 0.f);
                }
        } else {
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int k = kt * W3_BK + 8 * kk + t + 4 * h;
                    const float* p = B + (size_t)k * N + bcol;
                    rb[kk][h].x = (k < K && bcol < N) ? __ldg(p) : 0.0f;
                    rb[kk][h].y = (k < K && bcol + 1 < N) ? __ldg(p + 1) : 0.0f;
                }
        }
    };
    // A chunks in registers -> TF32 parts in slot s (same swizzled position in each part)
    auto store_a = [&](int s) {
        const unsigned base = ring + s * SLOT_BYTES;
#pragma unroll
        for (int i = 0; i < CH; i++) {
            const int m = am + 32 * i;
            const unsigned off = m * 128 + ((ac ^ (m & 7)) << 4);
            if constexpr (PRODUCTS == 3) {
                unsigned b0, b1, b2, b3, s0, s1, s2, s3;
                split(ra[i].x, b0, s0);
                split(ra[i].y, b1, s1);
                split(ra[i].z, b2, s2);
                split(ra[i].w, b3, s3);
                sts128(base + off, b0, b1, b2, b3);
                sts128(base + PART_BYTES + off, s0, s1, s2, s3);
            } else {
                sts128(base + off, rna(__float_as_uint(ra[i].x)), rna(__float_as_uint(ra[i].y)),
                       rna(__float_as_uint(ra[i].z)), rna(__float_as_uint(ra[i].w)));
            }
        }
    };
    // B values in registers -> fragment registers: a0 (row g, k t), a1 (row g+8, k t),
    // a2 (row g, k t+4), a3 (row g+8, k t+4); rows g, g+8 are columns bcol, bcol + 1
    auto split_b = [&]() {
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const float v[4] = {rb[kk][0].x, rb[kk][0].y, rb[kk][1].x, rb[kk][1].y};
#pragma unroll
            for (int r = 0; r < 4; r++) {
                if constexpr (PRODUCTS == 3) split(v[r], fb[kk][r], fs[kk][r]);
                else fb[kk][r] = rna(__float_as_uint(v[r]));
            }
        }
    };

    // prologue: tile 0 into slot 0 and the fragments, tile 1 into registers
    load_a(0);
    load_b(0);
    store_a(0);
    split_b();
    if (KT > 1) {
        load_a(1);
        if constexpr (!LATE_B) load_b(1);
    }
    fence_proxy_async();
    __syncthreads();

    for (int kt = 0; kt < KT; kt++) {
        const unsigned big = ring + (kt & 1) * SLOT_BYTES, small = big + PART_BYTES;
        // 1. this k-tile's MMAs
        if constexpr (FLUSH) fence_f(part);
        else fence_f(acc);
        fence_u(fb);
        if constexpr (PRODUCTS == 3) fence_u(fs);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const unsigned long long d_big = make_desc(big + 32 * kk, 16, 1024);
            if constexpr (PRODUCTS == 3) {
                const unsigned long long d_small = make_desc(small + 32 * kk, 16, 1024);
                if constexpr (FLUSH) {
                    wgmma_rs<BM>(part, fb[kk], d_small, kk > 0);  // starts from zero each k-tile
                    wgmma_rs<BM>(part, fs[kk], d_big, 1);
                    wgmma_rs<BM>(part, fb[kk], d_big, 1);
                } else {
                    wgmma_rs<BM>(acc, fb[kk], d_small, 1);
                    wgmma_rs<BM>(acc, fs[kk], d_big, 1);
                    wgmma_rs<BM>(acc, fb[kk], d_big, 1);
                }
            } else {
                if constexpr (FLUSH) wgmma_rs<BM>(part, fb[kk], d_big, kk > 0);
                else wgmma_rs<BM>(acc, fb[kk], d_big, 1);
            }
        }
        wgmma_commit();
        // 2. every thread has waited for tile kt-1's MMAs (step 5 of the last iteration), so
        //    slot (kt+1)%2 is free
        named_barrier<1>();
        // 3. next tile's A parts into it
        if (kt + 1 < KT) store_a((kt + 1) & 1);
        // 4. the new slot complete and visible to every warpgroup's wgmma (async proxy); then
        //    the loads of the tile after next (issued after the fence, whose MEMBAR would
        //    otherwise wait for them)
        fence_proxy_async();
        named_barrier<2>();
        if (kt + 2 < KT) load_a(kt + 2);
        if constexpr (LATE_B) {
            if (kt + 1 < KT) load_b(kt + 1);  // needed at step 6: only the wait in between
        }
        // 5. wait for the MMAs; flush the partial
        wgmma_wait0();
        fence_u(fb);
        if constexpr (PRODUCTS == 3) fence_u(fs);
        if constexpr (FLUSH) {
            fence_f(part);
#pragma unroll
            for (int i = 0; i < NACC; i++) acc[i] += part[i];
        } else {
            fence_f(acc);
        }
        // 6. next tile's fragments, then the loads of the tile after
        if (kt + 1 < KT) {
            split_b();
            if constexpr (!LATE_B) {
                if (kt + 2 < KT) load_b(kt + 2);  // a whole iteration to arrive, across one fence
            }
        }
    }

    // accumulator layout (CUTLASS CLayout_64xN): acc[v], v = v0 + 2 v1 + 4 v2, is fragment
    // row 16 wi + g + 8 v1 (C column bcol + v1), column 8 v2 + 2t + v0 (C row bm + 8 v2 + 2t + v0)
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
#pragma unroll
    for (int v2 = 0; v2 < BM / 8; v2++) {
#pragma unroll
        for (int v0 = 0; v0 < 2; v0++) {
            const int r = bm + 8 * v2 + 2 * t + v0;
            if (r >= M) continue;
            float* p = C + (size_t)r * N + bcol;
            const float x = acc[4 * v2 + v0], y = acc[4 * v2 + 2 + v0];
            if (pair && bcol < N) {  // N even and bcol even: bcol + 1 < N too
                *reinterpret_cast<float2*>(p) = make_float2(x, y);
            } else {
                if (bcol < N) p[0] = x;
                if (bcol + 1 < N) p[1] = y;
            }
        }
    }
}

}  // namespace w3
#endif

extern "C" __global__ void __launch_bounds__(W3_THREADS, 1)
mm_wgmma_3xtf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    w3::body<128, 3, true>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(W3_THREADS, 1)
mm_wgmma_3xtf32_lateb(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    w3::body<128, 3, true, true>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(W3_THREADS, 1)
mm_wgmma_tf32(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    w3::body<128, 1, true>(A, B, C, M, N, K);
#endif
}

extern "C" __global__ void __launch_bounds__(W3_THREADS, 1)
mm_wgmma_tf32_n256(const float* A, const float* B, float* C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    w3::body<256, 1, false>(A, B, C, M, N, K);
#endif
}
