// Planted for tests/test_kernels_compile.py: a kernel ptxas compiles with no error and no spill but
// with every wgmma serialised, which it reports only as an info line (C7514). The overlapped
// promotion written the naive way (include/overlap.cuh says why it is not): a loop of pairs of
// k-tiles, two partials in turn, each added after the next k-tile's wait_group 1, so p1's MMAs are
// in flight across the back-edge and read in the next pass. `ok` is the same loop with the pass
// ending on wait_group 0 and adding p1 there (then zeroing it): nothing is in flight at the
// back-edge, and ptxas says nothing. sm_90a only.
#include "ptx.cuh"
#include "wgmma_fp8.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void ktile(float (&d)[64], unsigned slot)
{
    fence_acc(d);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
        wgmma_m64n128k32_e4m3(d, make_desc(slot + kk * 32, 16, 1024), make_desc(slot + 16384 + kk * 32, 16, 1024),
                              kk > 0);
    wgmma_commit();
}

template <bool DRAIN>
__device__ __forceinline__ void pairs(float* C, int KT, unsigned slot)
{
    float acc[64], p0[64], p1[64];
#pragma unroll
    for (int e = 0; e < 64; e++) acc[e] = p0[e] = p1[e] = 0.0f;
    for (int kt = 0; kt < KT; kt += 2) {
        ktile(p0, slot);
        wgmma_wait<1>();
        fence_acc(p1);
#pragma unroll
        for (int e = 0; e < 64; e++) acc[e] += p1[e];
        ktile(p1, slot + 32768);
        if (DRAIN)
            wgmma_wait<0>();
        else
            wgmma_wait<1>();
        fence_acc(p0);
#pragma unroll
        for (int e = 0; e < 64; e++) acc[e] += p0[e];
        if (DRAIN) {
            fence_acc(p1);
#pragma unroll
            for (int e = 0; e < 64; e++) acc[e] += p1[e], p1[e] = 0.0f;
        }
    }
    wgmma_wait<0>();
    fence_acc(p1);
#pragma unroll
    for (int e = 0; e < 64; e++) C[threadIdx.x * 64 + e] = acc[e] + p1[e];
}
#endif

extern "C" __global__ void __launch_bounds__(128, 1) serialized(float* C, int KT, unsigned slot)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    pairs<false>(C, KT, slot);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1) ok(float* C, int KT, unsigned slot)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    pairs<true>(C, KT, slot);
#endif
}
