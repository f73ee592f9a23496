// FP32 add chains, the ceiling tests/test_report_ceiling.py adds from outside rooflab: ACC
// independent accumulators per thread, FADD_PER_CHAIN_PER_ITER dependent adds on each per
// iteration, registers only. x arrives as an argument and the sum is stored, so no add can be
// folded away; one add is one FLOP, so FLOPs = threads * iters * FADD_PER_CHAIN_PER_ITER * ACC.
// The constants come from the test's record as -D options; the defaults let nvcc compile it alone.
#ifndef FADD_PER_CHAIN_PER_ITER
#define FADD_PER_CHAIN_PER_ITER 16
#endif
#ifndef FADD_BLOCK
#define FADD_BLOCK 256
#endif

template <int ACC>
__global__ void __launch_bounds__(FADD_BLOCK) fadd_chain(float* out, int iters, float x)
{
    float acc[ACC];
#pragma unroll
    for (int j = 0; j < ACC; j++) acc[j] = threadIdx.x * 1.0e-3f + (float)j;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < FADD_PER_CHAIN_PER_ITER; u++) {
#pragma unroll
            for (int j = 0; j < ACC; j++) acc[j] += x;
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < ACC; j++) s += acc[j];
    out[(unsigned long long)blockIdx.x * FADD_BLOCK + threadIdx.x] = s;
}

template __global__ void fadd_chain<8>(float*, int, float);
