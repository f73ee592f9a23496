// Device-to-device copy kernels for the memory roof (seed 002, exercise 2).
// Every kernel reads each element once and writes it once: bytes = 2 * n * 4.

// The seed's kernel: scalar grid-stride loop. With a grid that covers n it is
// "one element per thread"; with a small grid each thread walks the array.
extern "C" __global__ void copy_scalar(const float* in, float* out, unsigned long long n)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride)
        out[i] = in[i];
}

// 16-byte accesses: a warp moves 512 contiguous bytes per instruction, a quarter
// of the load/store instructions of the scalar loop. The tail (n % 4) is copied
// by the first threads with scalar accesses.
extern "C" __global__ void copy_float4(const float* in, float* out, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (unsigned long long i = tid; i < n4; i += stride)
        out4[i] = in4[i];
    unsigned long long t = n4 * 4 + tid;
    if (t < n) out[t] = in[t];
}

// float4 with UNROLL independent loads issued before the first store: more bytes
// in flight per thread, so a grid of a few waves can still cover DRAM latency.
template <int UNROLL>
__global__ void copy_float4_unroll(const float* in, float* out, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4* out4 = reinterpret_cast<float4*>(out);
    unsigned long long i = tid;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = in4[i + u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) out4[i + u * stride] = v[u];
    }
    for (; i < n4; i += stride) out4[i] = in4[i];
    unsigned long long t = n4 * 4 + tid;
    if (t < n) out[t] = in[t];
}

template __global__ void copy_float4_unroll<4>(const float*, float*, unsigned long long);
template __global__ void copy_float4_unroll<8>(const float*, float*, unsigned long long);

// The seed's scalar-times-vector kernel y = a * x (P5): 1 FLOP per 8 bytes,
// arithmetic intensity 0.125 FLOP/byte. Same traffic as the copy, float4 accesses.
extern "C" __global__ void scale_float4(const float* x, float* y, float a, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (unsigned long long i = tid; i < n4; i += stride) {
        float4 v = x4[i];
        y4[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
    }
    unsigned long long t = n4 * 4 + tid;
    if (t < n) y[t] = a * x[t];
}

// One direction at a time, to show what the copy pays for mixing them: a pure
// read (each thread sums its float4s and stores one float) and a pure write.
// bytes = n * 4 each; their rates bound what a read+write copy can reach.
extern "C" __global__ void read_float4(const float* in, float* partial, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float s = 0.0f;
    for (unsigned long long i = tid; i < n4; i += stride) {
        float4 v = in4[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    unsigned long long t = n4 * 4 + tid;
    if (t < n) s += in[t];
    partial[tid] = s;
}

extern "C" __global__ void write_float4(float* out, float value, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    float4* out4 = reinterpret_cast<float4*>(out);
    for (unsigned long long i = tid; i < n4; i += stride)
        out4[i] = make_float4(value, value, value, value);
    unsigned long long t = n4 * 4 + tid;
    if (t < n) out[t] = value;
}

// Read-only streams with more bytes in flight per SM: UNROLL independent 16-byte loads issued
// before any is summed, one partial sum per accumulator (no dependency between the loads), and a
// grid sized to the SMs walking the array (grid-stride). HINT picks the load:
//   0: plain ld.global; 1: ld.global.cs (__ldcs, evict-first: the line is read once);
//   2: ld.global.nc.L1::no_allocate (read-only path, no L1 line kept for data never reused).
template <int HINT>
__device__ __forceinline__ float4 stream_load(const float4* p)
{
    if (HINT == 1) return __ldcs(p);
    if (HINT == 2) {
        float4 v;
        asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        return v;
    }
    return *p;
}

// the read streams' end: the float4s left past the last whole step, the scalar tail, and the
// thread's partial sum (its UNROLL running sums added)
template <int UNROLL, int HINT>
__device__ __forceinline__ void read_tail(const float* in, const float4* in4, float (&s)[UNROLL], unsigned long long i,
                                          unsigned long long n4, unsigned long long stride, unsigned long long tid,
                                          unsigned long long n, float* partial)
{
    for (; i < n4; i += stride) {
        float4 v = stream_load<HINT>(in4 + i);
        s[0] += (v.x + v.y) + (v.z + v.w);
    }
    unsigned long long t = n4 * 4 + tid;
    if (t < n) s[0] += in[t];
    float total = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) total += s[u];
    partial[tid] = total;
}

template <int UNROLL, int HINT>
__global__ void read_float4_unroll(const float* in, float* partial, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float s[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) s[u] = 0.0f;
    unsigned long long i = tid;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = stream_load<HINT>(in4 + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) s[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    read_tail<UNROLL, HINT>(in, in4, s, i, n4, stride, tid, n, partial);
}

// The same reads with the next step's UNROLL loads issued before this step's sums: ptxas schedules
// read_float4_unroll's adds right behind its loads (reusing their registers), so a thread has about
// two loads in flight whatever UNROLL is (its SASS, tests/test_sass.py); here the sums read registers
// loaded a step earlier, so all UNROLL loads of a step are in flight together, at twice the registers.
template <int UNROLL, int HINT>
__global__ void read_float4_batched(const float* in, float* partial, unsigned long long n)
{
    unsigned long long n4 = n / 4;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float s[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) s[u] = 0.0f;
    unsigned long long i = tid;
    if (i + (UNROLL - 1) * stride < n4) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = stream_load<HINT>(in4 + i + u * stride);
        for (;;) {
            const unsigned long long next = i + UNROLL * stride;
            const bool more = next + (UNROLL - 1) * stride < n4;
            float4 w[UNROLL];
            if (more) {
#pragma unroll
                for (int u = 0; u < UNROLL; u++) w[u] = stream_load<HINT>(in4 + next + u * stride);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) s[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            i = next;
            if (!more) break;
#pragma unroll
            for (int u = 0; u < UNROLL; u++) v[u] = w[u];
        }
    }
    read_tail<UNROLL, HINT>(in, in4, s, i, n4, stride, tid, n, partial);
}

template __global__ void read_float4_unroll<4, 0>(const float*, float*, unsigned long long);
template __global__ void read_float4_unroll<8, 0>(const float*, float*, unsigned long long);
template __global__ void read_float4_unroll<16, 0>(const float*, float*, unsigned long long);
template __global__ void read_float4_unroll<8, 1>(const float*, float*, unsigned long long);
template __global__ void read_float4_unroll<8, 2>(const float*, float*, unsigned long long);
template __global__ void read_float4_batched<8, 0>(const float*, float*, unsigned long long);
template __global__ void read_float4_batched<16, 0>(const float*, float*, unsigned long long);
