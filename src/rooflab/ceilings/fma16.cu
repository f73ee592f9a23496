// FP16 CUDA-core roof: register-only HFMA2 chains on half2, as fma.cu does
// for FP32. One __hfma2 is two FMAs (one per half): 4 FLOP. ACC independent half2
// accumulators per thread; per loop iteration each gets 16 HFMA2:
// FLOP per iteration = 16 * ACC * 4. The accumulators are summed with __hadd2 and stored.
// Every product of two halves is exact in float64, so the host reproduces each fused
// HFMA2 bit for bit: compute a*x + y in float64, round once to float16.
//
// x and y arrive as the bits of a half2 each (x in both halves). Had they been built in the
// kernel from floats, ptxas packs the two broadcast halves into one register and reads them
// with .H0_H0/.H1_H1 swizzles, which only the FMA pipe's HFMA2 accepts: on sm_80/sm_90 the
// chains then run on that pipe alone, at half the FP16 rate. From two opaque registers ptxas
// issues half of them as HFMA2.MMA, which runs on the tensor-core pipe, and the FP16 rate
// (twice FP32 on A100/H100) is reachable.
#include <cuda_fp16.h>

// The constants come from the record (rooflab.ceilings) as -D options; the defaults let nvcc
// compile the file alone.
#ifndef FMA_PER_CHAIN_PER_ITER
#define FMA_PER_CHAIN_PER_ITER 16
#endif
#ifndef FMA_BLOCK
#define FMA_BLOCK 256
#endif

__device__ __forceinline__ __half2 half2_from_bits(unsigned int bits)
{
    __half2_raw r;
    r.x = (unsigned short)(bits & 0xffffu);
    r.y = (unsigned short)(bits >> 16);
    return __half2(r);
}

template <int ACC>
__global__ void __launch_bounds__(FMA_BLOCK) hfma2_chain(__half2* out, int iters, unsigned int xbits, unsigned int ybits)
{
    const __half2 x = half2_from_bits(xbits);
    const __half2 y = half2_from_bits(ybits);
    __half2 acc[ACC];
    const float t = (float)(threadIdx.x & 63) * 0.0078125f;  // distinct start per thread
#pragma unroll
    for (int j = 0; j < ACC; j++) acc[j] = __floats2half2_rn(t + 0.25f * j, t + 0.25f * j + 0.125f);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < FMA_PER_CHAIN_PER_ITER; u++) {
#pragma unroll
            for (int j = 0; j < ACC; j++) acc[j] = __hfma2(acc[j], x, y);
        }
    }
    __half2 s = acc[0];
#pragma unroll
    for (int j = 1; j < ACC; j++) s = __hadd2(s, acc[j]);
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template __global__ void hfma2_chain<8>(__half2*, int, unsigned int, unsigned int);
