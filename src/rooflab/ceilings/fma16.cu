// FP16 CUDA-core roof (issue 11): register-only HFMA2 chains on half2, as fma.cu does
// for FP32. One __hfma2 is two FMAs (one per half): 4 FLOP. ACC independent half2
// accumulators per thread; per loop iteration each gets 16 HFMA2:
// FLOP per iteration = 16 * ACC * 4. x and y arrive as float arguments (converted with
// round-to-nearest), and the accumulators are summed with __hadd2 and stored.
// Every product of two halves is exact in float64, so the host reproduces each fused
// HFMA2 bit for bit: compute a*x + y in float64, round once to float16.
#include <cuda_fp16.h>

#define FMA_PER_CHAIN_PER_ITER 16

template <int ACC>
__global__ void __launch_bounds__(256) hfma2_chain(__half2* out, int iters, float xf, float yf)
{
    const __half2 x = __float2half2_rn(xf);
    const __half2 y = __float2half2_rn(yf);
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

template __global__ void hfma2_chain<8>(__half2*, int, float, float);
