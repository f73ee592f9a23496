// GPU-to-GPU copy by a kernel (as nvbandwidth's SM copies do): launched on the
// destination GPU, it reads the source GPU's memory over the link (peer access
// enabled) and writes its own. 16-byte accesses, PEER_UNROLL loads in flight per thread
// before the first store, so one resident wave covers the link's latency.
// n16 = number of 16-byte elements (the harness sizes buffers in whole uint4).
// PEER_UNROLL comes from the record (rooflab.ceilings.PEER_COPY) as a -D option; the default lets
// nvcc compile the file alone.
#ifndef PEER_UNROLL
#define PEER_UNROLL 4
#endif

extern "C" __global__ void peer_copy_uint4(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                           unsigned long long n16)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (PEER_UNROLL - 1) * stride < n16; i += PEER_UNROLL * stride) {
        uint4 v[PEER_UNROLL];
#pragma unroll
        for (int u = 0; u < PEER_UNROLL; u++) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < PEER_UNROLL; u++) dst[i + u * stride] = v[u];
    }
    for (; i < n16; i += stride) dst[i] = src[i];
}
