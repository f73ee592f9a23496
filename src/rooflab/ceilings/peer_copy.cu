// GPU-to-GPU copy by a kernel (as nvbandwidth's SM copies do): launched on the
// destination GPU, it reads the source GPU's memory over the link (peer access
// enabled) and writes its own. 16-byte accesses, 4 loads in flight per thread
// before the first store, so one resident wave covers the link's latency.
// n16 = number of 16-byte elements (the harness sizes buffers in whole uint4).
extern "C" __global__ void peer_copy_uint4(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                           unsigned long long n16)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = src[i];
        uint4 b = src[i + stride];
        uint4 c = src[i + 2 * stride];
        uint4 d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride) dst[i] = src[i];
}
