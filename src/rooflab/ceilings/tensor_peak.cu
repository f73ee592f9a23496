// Tensor-core compute roof (the mma.sync analogue of fma.cu): long register-only chains of
// warp-level MMAs, no memory traffic in the loop.
// Each warp keeps NACC independent accumulator tiles (16 x 8 FP32, 4 registers per lane);
// MMAs on one accumulator depend on each other (tens of cycles of latency), MMAs on
// different accumulators do not, so the scheduler can keep the tensor pipe busy with NACC
// chains per warp plus the other warps on the SM sub-partition.
// Per loop iteration each accumulator gets UNROLL MMAs: MMAs per warp per iteration =
// NACC * UNROLL = 32. FLOP per MMA: m16n8k16 (BF16) 2*16*8*16 = 4096, m16n8k8 (TF32) 2048.
// FLOP of a launch = iters * 32 * FLOP_per_MMA * (total threads / 32).
// Operands come from the thread index and the sum of all accumulators is stored, so nothing
// can be folded or dropped. Values stay finite for any iters (a*b*k = 2^-10 per MMA).
// Launch: block 256 (any multiple of 32), grid = a few blocks per SM (e.g. 8 * SMs) so every
// sub-partition has several warps; out needs one float per thread.
// sm_75 has neither MMA shape for these types: the bodies compile empty there.
#include "ptx.cuh"  // make_desc, wgmma_m64n256k16_bf16 / k8_tf32 (include/ptx.cuh)

// The constants come from the record (rooflab.ceilings.TENSOR) as -D options; the defaults let
// nvcc compile the file alone.
#ifndef NACC
#define NACC 8
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef MMA_BLOCK
#define MMA_BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(MMA_BLOCK) mma_peak_bf16(float* out, int iters)
{
#if __CUDA_ARCH__ >= 800
    // bf16 0x3C00 = 2^-7 (plus a thread-dependent low mantissa bit pattern)
    const unsigned v = 0x3C003C00u | (threadIdx.x & 7u) | ((threadIdx.x & 7u) << 16);
    const unsigned a0 = v, a1 = v ^ 1u, a2 = v ^ 2u, a3 = v ^ 3u, b0 = v ^ 4u, b1 = v ^ 5u;
    float acc[NACC][4];
#pragma unroll
    for (int j = 0; j < NACC; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) acc[j][r] = threadIdx.x * 1.0e-3f + (float)(j * 4 + r);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < NACC; j++)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                             : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < NACC; j++) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

extern "C" __global__ void __launch_bounds__(MMA_BLOCK) mma_peak_tf32(float* out, int iters)
{
#if __CUDA_ARCH__ >= 800
    // FP32 bit patterns near 2^-7 with thread-dependent mantissas (TF32 uses the top 19 bits)
    const unsigned v = 0x3C000000u | ((threadIdx.x & 7u) << 13);
    const unsigned a0 = v, a1 = v ^ 0x2000u, a2 = v ^ 0x4000u, a3 = v ^ 0x6000u, b0 = v ^ 0x8000u,
                   b1 = v ^ 0xA000u;
    float acc[NACC][4];
#pragma unroll
    for (int j = 0; j < NACC; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) acc[j][r] = threadIdx.x * 1.0e-3f + (float)(j * 4 + r);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < NACC; j++)
                asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                             : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                             : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < NACC; j++) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

// Hopper wgmma roof (sm_90a only): one warpgroup (128 threads) per block issues chains of
// wgmma.mma_async m64n256k16 BF16 -> FP32 on operands already in shared memory (zeros; the
// tensor-core rate does not depend on the values), WG_UNROLL per commit group, keeping one
// group in flight (wait_group 1) exactly like mm_wgmma_bf16's main loop. No global traffic
// in the loop. FLOP per wgmma = 2 * 64 * 256 * 16 = 524288;
// FLOP of a launch = iters * WG_UNROLL * 524288 * blocks (one warpgroup per block).
// Launch: block 128, grid = 2 * SMs (two warpgroups per SM, as in the GEMM), out: one float
// per thread. Compile with -arch=sm_90a; elsewhere the body is empty.
#ifndef WG_UNROLL
#define WG_UNROLL 8
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

#endif

extern "C" __global__ void __launch_bounds__(128) wgmma_peak_bf16(float* out, int iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // A: 64 rows x 128 B (K-major, 128B swizzle); B: 4 panels x 16 k-rows x 128 B (MN-major)
    __shared__ __align__(1024) unsigned char tiles[8192 + 8192 + 1024];
    const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(tiles)) + 1023u) & ~1023u;
    for (int i = threadIdx.x; i < (8192 + 8192 + 1024) / 4; i += blockDim.x)
        reinterpret_cast<unsigned*>(tiles)[i] = 0u;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const unsigned long long da = make_desc(base, 16, 1024), db = make_desc(base + 8192, 2048, 1024);

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = threadIdx.x * 1.0e-3f + (float)i;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int u = 0; u < WG_UNROLL; u++) wgmma_m64n256k16_bf16(acc, da, db, 1);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
        for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) s += acc[i];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

// The TF32 wgmma roof: the same chains with m64n256k8 TF32 (both operands K-major), 2 * 64 *
// 256 * 8 = 262144 FLOP per wgmma; FLOP of a launch = iters * WG_UNROLL * 262144 * blocks.
// Launch as wgmma_peak_bf16 (block 128, grid 2 * SMs). The rungs wgmma_3xtf32 / wgmma_tf32
// are judged against this rate (/3 for 3xTF32).
extern "C" __global__ void __launch_bounds__(128) wgmma_peak_tf32(float* out, int iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // A: 64 rows x 128 B, B: 256 rows x 128 B, both K-major with the 128B swizzle (zeros)
    __shared__ __align__(1024) unsigned char tiles[8192 + 32768 + 1024];
    const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(tiles)) + 1023u) & ~1023u;
    for (int i = threadIdx.x; i < (8192 + 32768 + 1024) / 4; i += blockDim.x)
        reinterpret_cast<unsigned*>(tiles)[i] = 0u;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const unsigned long long da = make_desc(base, 16, 1024), db = make_desc(base + 8192, 16, 1024);

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = threadIdx.x * 1.0e-3f + (float)i;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int u = 0; u < WG_UNROLL; u++) wgmma_m64n256k8_tf32(acc, da, db, 1);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
        for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+f"(acc[i])::"memory");
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) s += acc[i];
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}
