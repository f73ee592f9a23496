// Shared-memory bandwidth: a stream of 16-byte shared loads (LDS.128),
// every word of which is summed into registers that are stored at the end, so no load
// is dead code and none can be narrowed. The sums are 32-bit integer (IADD3: two words
// and the accumulator in one instruction, half the adds of FADD, and exact modulo 2^32,
// so the host checks the timed launch itself, bit for bit, whatever the iteration count).
//
// Shared memory has 32 banks of 4 bytes: 128 bytes per clock per SM. A warp's LDS.128
// moves 512 bytes, at best in 4 passes ("wavefronts") of 128 bytes, one per quarter-warp.
// LANE_STRIDE is the distance between neighbouring lanes, in float4:
//   1: lane i reads bytes 16i..16i+15, each quarter-warp covers all 32 banks once:
//      conflict-free, 4 wavefronts per instruction.
//   8: lane i reads 128 bytes after lane i-1, so all 32 lanes land in banks 0-3 of
//      32 different rows: a 32-way conflict, 32 wavefronts (8x the time).
// Each thread keeps SMEM_UNROLL loads in flight per iteration. The per-iteration base b
// moves by `step` and wraps with `mask`, both kernel arguments: the compiler cannot prove
// the addresses repeat, so it cannot hoist the loads out of the loop. With the arguments
// the host passes (mask 255, step 128 for stride 1; mask 127, step 4 for stride 8) every
// address stays inside the 512-float4 buffer.
// Bytes counted: 16 * threads * SMEM_UNROLL * iters.

// The constants come from the record (rooflab.ceilings.SHARED) as -D options; the defaults let
// nvcc compile the file alone.
#ifndef SMEM_F4
#define SMEM_F4 512  // float4 per block (8 KB): eight blocks of 256 fit on every SM from sm_75 on
#endif
#ifndef SMEM_UNROLL
#define SMEM_UNROLL 4
#endif
#ifndef SMEM_BLOCK
#define SMEM_BLOCK 256
#endif

// Word w of the buffer: a multiplicative hash, so a wrong address gives a wrong sum.
__device__ __forceinline__ unsigned int smem_value(unsigned int w)
{
    return w * 2654435761u;
}

template <int LANE_STRIDE>
__global__ void __launch_bounds__(SMEM_BLOCK)
smem_read(unsigned int* __restrict__ out, int iters, unsigned int step, unsigned int mask)
{
    // a quarter-warp of stride-1 lanes spans 8 float4; the unrolled loads of a stride-1
    // thread are a warp apart (512 bytes), those of a stride-8 thread adjacent
    constexpr int U_STRIDE = LANE_STRIDE == 1 ? 32 : 1;
    __shared__ uint4 buf[SMEM_F4];
    for (unsigned int i = threadIdx.x; i < SMEM_F4; i += blockDim.x)
        buf[i] = make_uint4(smem_value(4 * i), smem_value(4 * i + 1), smem_value(4 * i + 2),
                            smem_value(4 * i + 3));
    __syncthreads();

    const uint4* p = buf + (threadIdx.x & 31) * LANE_STRIDE;
    unsigned int acc0 = 0, acc1 = 0;
    unsigned int b = 0;
#pragma unroll 2  // 8 loads per trip: the loop branch and address update are amortised over more LDS.128
    for (int it = 0; it < iters; it++) {
        const uint4* q = p + b;
        uint4 v[SMEM_UNROLL];
#pragma unroll
        for (int u = 0; u < SMEM_UNROLL; u++) v[u] = q[u * U_STRIDE];
#pragma unroll
        for (int u = 0; u < SMEM_UNROLL; u++) {
            acc0 += v[u].x + v[u].y;
            acc1 += v[u].z + v[u].w;
        }
        b = (b + step) & mask;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc0 + acc1;
}

template __global__ void smem_read<1>(unsigned int*, int, unsigned int, unsigned int);
template __global__ void smem_read<8>(unsigned int*, int, unsigned int, unsigned int);
