// FP8 (e4m3 x e4m3 -> FP32) warpgroup MMAs for the Hopper FP8 rung (rungs/wgmma_fp8.cu): one k32 step of
// a 64 x N tile, both operands read K-major from 128-byte-swizzled shared memory through descriptors
// (ptx.cuh's make_desc). sm_90a only.
#pragma once

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// D (64 x 128, FP32, 64 registers per thread) (+)= A (64 x 32 e4m3) * B (128 x 32 e4m3), both K-major
// (8-bit types have no transpose) in shared memory through descriptors; scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
        WGMMA_D64_REGS
        "}, %64, %65, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D64_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 144, FP32, 72 registers per thread) (+)= A (64 x 32 e4m3) * B (144 x 32 e4m3), as above
__device__ __forceinline__ void wgmma_m64n144k32_e4m3(float (&d)[72], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %74, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n144k32.f32.e4m3.e4m3 {"
        WGMMA_D72_REGS
        "}, %72, %73, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D72_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 192, FP32, 96 registers per thread) (+)= A (64 x 32 e4m3) * B (192 x 32 e4m3), as above
__device__ __forceinline__ void wgmma_m64n192k32_e4m3(float (&d)[96], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {"
        WGMMA_D96_REGS
        "}, %96, %97, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D96_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 224, FP32, 112 registers per thread) (+)= A (64 x 32 e4m3) * B (224 x 32 e4m3), as above
__device__ __forceinline__ void wgmma_m64n224k32_e4m3(float (&d)[112], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %114, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n224k32.f32.e4m3.e4m3 {"
        WGMMA_D112_REGS
        "}, %112, %113, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D112_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 256, FP32, 128 registers per thread) (+)= A (64 x 32 e4m3) * B (256 x 32 e4m3), both K-major
// (8-bit types have no transpose) in shared memory through descriptors; scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[128], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
        WGMMA_D128_REGS
        "}, %128, %129, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D128_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#endif
