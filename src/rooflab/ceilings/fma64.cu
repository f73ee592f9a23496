// FP64 CUDA-core roof: register-only DFMA chains, as fma.cu does for FP32.
// ACC independent accumulators per thread; per loop iteration each gets 16 DFMAs:
// DFMA per iteration = 16 * ACC, 2 FLOP each. x and y arrive as arguments and the sum is
// stored, so nothing can be folded away. The host passes x = 0.5: the product a*x is then
// exact, so a fused DFMA and numpy's a*x + y round identically and the check is bitwise.
// The constants come from the record (rooflab.ceilings) as -D options; the defaults let nvcc
// compile the file alone.
#ifndef FMA_PER_CHAIN_PER_ITER
#define FMA_PER_CHAIN_PER_ITER 16
#endif
#ifndef FMA_BLOCK
#define FMA_BLOCK 256
#endif

template <int ACC>
__global__ void __launch_bounds__(FMA_BLOCK) dfma_chain(double* out, int iters, double x, double y)
{
    double acc[ACC];
#pragma unroll
    for (int j = 0; j < ACC; j++) acc[j] = threadIdx.x * 0.0009765625 + (double)j;  // exact: 2^-10
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < FMA_PER_CHAIN_PER_ITER; u++) {
#pragma unroll
            for (int j = 0; j < ACC; j++) acc[j] = fma(acc[j], x, y);
        }
    }
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < ACC; j++) s += acc[j];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template __global__ void dfma_chain<8>(double*, int, double, double);
