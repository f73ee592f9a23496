// FP32 compute roof (seed 002, exercise 5): long register-only FMA chains.
// ACC independent accumulators give the scheduler ACC FMAs it can issue back to
// back; with one accumulator every FMA waits for the previous one (about 4 cycles
// on recent GPUs), so a warp needs other warps or other chains to fill the pipe.
// Per loop iteration each accumulator gets 16 FMAs: FMA per iteration = 16 * ACC.
// x and y arrive as arguments and the sum is stored, so nothing can be folded away.
// The constants come from the record (rooflab.ceilings.FMA) as -D options; the defaults let nvcc
// compile the file alone.
#ifndef FMA_PER_CHAIN_PER_ITER
#define FMA_PER_CHAIN_PER_ITER 16
#endif

template <int ACC>
__global__ void fma_chain(float* out, int iters, float x, float y)
{
    float acc[ACC];
#pragma unroll
    for (int j = 0; j < ACC; j++) acc[j] = threadIdx.x * 1.0e-3f + (float)j;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < FMA_PER_CHAIN_PER_ITER; u++) {
#pragma unroll
            for (int j = 0; j < ACC; j++) acc[j] = fmaf(acc[j], x, y);
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < ACC; j++) s += acc[j];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template __global__ void fma_chain<1>(float*, int, float, float);
template __global__ void fma_chain<2>(float*, int, float, float);
template __global__ void fma_chain<4>(float*, int, float, float);
template __global__ void fma_chain<8>(float*, int, float, float);
