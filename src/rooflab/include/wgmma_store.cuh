// The C stores of one warpgroup's wgmma accumulators (m64nNk*, FP32 out). The TMA-fed kernels use
// it; wgmma_bf16.cu and wgmma_tf32.cu still carry their own copy (switching them changes their
// register allocation, to be measured on a GPU first). acc[4j + 2h + e] is row 16 * warp + lane / 4 + 8h, column 8j + 2 * (lane % 4) + e of
// the warpgroup's 64 x (2 * NACC) tile, whose first row is row0 and first column bn.
// Stores are predicated per element; pairs go out as one float2 where N and C allow it.
#pragma once

// one float pair of store_wgmma_acc: acc[4j + 2h], acc[4j + 2h + 1] (j and h constants where this is unrolled)
template <int NACC>
__device__ __forceinline__ void store_wgmma_pair(const float (&acc)[NACC], float* C, int M, int N, int row0, int bn,
                                                 int j, int h, bool pair)
{
    const int lane = threadIdx.x % 32, warp_in_wg = (threadIdx.x % 128) / 32;
    const int r = row0 + warp_in_wg * 16 + lane / 4 + 8 * h, c = bn + 8 * j + 2 * (lane % 4);
    if (r >= M) return;
    float* p = C + (size_t)r * N + c;
    if (pair && c < N) {  // N even and c even: c + 1 < N too
        *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    } else {
        if (c < N) p[0] = acc[4 * j + 2 * h];
        if (c + 1 < N) p[1] = acc[4 * j + 2 * h + 1];
    }
}

__device__ __forceinline__ bool stores_pairs(const float* C, int N)
{
    return (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
}

template <int NACC>
__device__ __forceinline__ void store_wgmma_acc(const float (&acc)[NACC], float* C, int M, int N, int row0, int bn)
{
    const bool pair = stores_pairs(C, N);
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int j = 0; j < NACC / 4; j++) store_wgmma_pair(acc, C, M, N, row0, bn, j, h, pair);
    }
}

// The same for a warpgroup that computed C^T (the swapped product D = B^T A^T, 64 rows of D being 64
// columns of C): acc[4j + 2h + e] is C's row m0 + 8j + 2 * (lane % 4) + e, column n0 + 16 * warp +
// 2 * (lane / 4) + h (the kernel gives D's rows g and g + 8 of each warp C's columns 2g and 2g + 1, so
// a thread's pair h = 0, 1 is two neighbours of one row of C).
template <int NACC>
__device__ __forceinline__ void store_wgmma_acc_t(const float (&acc)[NACC], float* C, int M, int N, int n0, int m0)
{
    const int lane = threadIdx.x % 32, warp_in_wg = (threadIdx.x % 128) / 32;
    const int n = n0 + warp_in_wg * 16 + 2 * (lane / 4);
    const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);
    if (n >= N) return;
#pragma unroll
    for (int j = 0; j < NACC / 4; j++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int m = m0 + 8 * j + 2 * (lane % 4) + e;
            if (m >= M) continue;
            float* p = C + (size_t)m * N + n;
            if (pair) {  // N even and n even: n + 1 < N too
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + e], acc[4 * j + 2 + e]);
            } else {
                p[0] = acc[4 * j + e];
                if (n + 1 < N) p[1] = acc[4 * j + 2 + e];
            }
        }
    }
}

// part `chunk` (0 .. CHUNKS - 1, known only at run time) of store_wgmma_acc: NACC / 2 / CHUNKS of its pairs,
// so a tile's C can leave a little at a time; each part is its own unrolled branch, which keeps every
// accumulator index a constant (a run-time index would put acc in local memory)
template <int NACC, int CHUNKS>
__device__ __forceinline__ void store_wgmma_acc_part(const float (&acc)[NACC], float* C, int M, int N, int row0,
                                                     int bn, int chunk)
{
    constexpr int PER = NACC / 2 / CHUNKS;
    static_assert(PER * CHUNKS * 2 == NACC, "the pairs split evenly");
    const bool pair = stores_pairs(C, N);
#pragma unroll
    for (int c = 0; c < CHUNKS; c++) {
        if (c != chunk) continue;
#pragma unroll
        for (int q = 0; q < PER; q++) {
            store_wgmma_pair(acc, C, M, N, row0, bn, (c * PER + q) / 2, (c * PER + q) % 2, pair);
        }
    }
}
