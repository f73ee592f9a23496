// L2 bandwidth: stream float4 reads over a footprint that fits in the L2,
// many times within one launch, with loads that bypass the L1 (ld.global.cg), so every
// byte counted crossed the L2 -> SM path. Swept past the L2 size the same kernel shows
// the cliff down to HBM.
//
// Indexing: thread t reads the virtual elements v = t + k*T (T = threads in the grid,
// k = 0 .. U*iters-1, U = L2_UNROLL) at address v mod n4. The wrap is kept incremental (step = T mod n4
// is passed in, one compare-and-subtract per load) instead of a 64-bit modulo. Over the
// whole grid the virtual elements are exactly 0 .. T*U*iters-1, so the sum of all partial
// sums is known on the host: (T*U*iters / n4) full passes plus a prefix. n4 and T are
// multiples of 32, so a wrap never splits a warp's 512 contiguous bytes.
// Bytes counted: 16 * T * U * iters read (the T partial sums written are not counted).

// The constants come from the record (rooflab.ceilings.L2) as -D options; the defaults let nvcc
// compile the file alone.
#ifndef L2_UNROLL
#define L2_UNROLL 4
#endif
// The walks below are written out for four loads: loops over L2_UNROLL schedule the loads and
// adds differently, and this form's machine code is the one measured. Another value is refused
// here rather than modelled wrongly.
static_assert(L2_UNROLL == 4, "l2_read and l2_copy issue exactly four loads per iteration");
#ifndef L2_BLOCK
#define L2_BLOCK 256
#endif

// 16-byte load cached in L2 only: a footprint of a few MiB spread over the SMs would
// otherwise be served by the L1s after the first pass.
__device__ __forceinline__ float4 ld_cg(const float4* p)
{
    float4 v;
    asm("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

// The same load as a compiler barrier for memory: the copy's four loads are then issued
// before its four stores (otherwise each load is sunk next to its store, and the warp
// waits for every load in turn).
__device__ __forceinline__ float4 ld_cg_ordered(const float4* p)
{
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned int wrap_add(unsigned int i, unsigned int step, unsigned int n4)
{
    i += step;  // i < n4 and step < n4, so one subtraction brings it back
    return i >= n4 ? i - n4 : i;
}

// Four independent 16-byte loads in flight per thread per iteration, each summed into its
// own accumulator so no add waits on another load.
extern "C" __global__ void __launch_bounds__(L2_BLOCK)
l2_read(const float4* __restrict__ in, float* __restrict__ partial,
        unsigned int n4, unsigned int step, int iters)
{
    const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int i0 = t % n4;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int it = 0; it < iters; it++) {
        const unsigned int i1 = wrap_add(i0, step, n4);
        const unsigned int i2 = wrap_add(i1, step, n4);
        const unsigned int i3 = wrap_add(i2, step, n4);
        const float4 a = ld_cg(in + i0);
        const float4 b = ld_cg(in + i1);
        const float4 c = ld_cg(in + i2);
        const float4 d = ld_cg(in + i3);
        s0 += (a.x + a.y) + (a.z + a.w);
        s1 += (b.x + b.y) + (b.z + b.w);
        s2 += (c.x + c.y) + (c.z + c.w);
        s3 += (d.x + d.y) + (d.z + d.w);
        i0 = wrap_add(i3, step, n4);
    }
    partial[t] = (s0 + s1) + (s2 + s3);
}

// The copy variant at an in-L2 footprint: the same walk, each float4 read (L2 only) and
// written back to a second array. Bytes counted: 32 * T * L2_UNROLL * iters (read + write).
// Several threads may write the same element; they write the same value.
extern "C" __global__ void __launch_bounds__(L2_BLOCK)
l2_copy(const float4* __restrict__ in, float4* __restrict__ out,
        unsigned int n4, unsigned int step, int iters)
{
    const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int i0 = t % n4;
    for (int it = 0; it < iters; it++) {
        const unsigned int i1 = wrap_add(i0, step, n4);
        const unsigned int i2 = wrap_add(i1, step, n4);
        const unsigned int i3 = wrap_add(i2, step, n4);
        const float4 a = ld_cg_ordered(in + i0);
        const float4 b = ld_cg_ordered(in + i1);
        const float4 c = ld_cg_ordered(in + i2);
        const float4 d = ld_cg_ordered(in + i3);
        out[i0] = a;
        out[i1] = b;
        out[i2] = c;
        out[i3] = d;
        i0 = wrap_add(i3, step, n4);
    }
}
