// FP8 (e4m3 x e4m3 -> FP32) warpgroup MMAs for the Hopper FP8 rung (rungs/wgmma_fp8.cu): one k32 step of
// a 64 x N tile, both operands read K-major from 128-byte-swizzled shared memory through descriptors
// (ptx.cuh's make_desc). sm_90a only.
#pragma once

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma_m64n<N>k32_e4m3(d, desc_a, desc_b, scale_d): D (64 x N, FP32, N / 2 registers per thread) (+)= A (64 x 32
// e4m3) * B (N x 32 e4m3), both K-major (8-bit types have no transpose); scale_d = 0: D = A * B. REGS / OPS are
// ptx.cuh's operand lists of the N / 2 accumulators, so the descriptors are operands NR and NR + 1, scale_d NR + 2
// (written out: the asm string needs them as literals)
#define WGMMA_E4M3(N, NR, REGS, OPS, A_OP, B_OP, SCALE_OP)                                                      \
    __device__ __forceinline__ void wgmma_m64n##N##k32_e4m3(float (&d)[NR], unsigned long long desc_a,          \
                                                             unsigned long long desc_b, int scale_d)            \
    {                                                                                                           \
        asm volatile("{\n"                                                                                      \
                     ".reg .pred p;\n"                                                                          \
                     "setp.ne.b32 p, %" #SCALE_OP ", 0;\n"                                                      \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 {" REGS "}, %" #A_OP ", %" #B_OP \
                     ", p, 1, 1;\n" /* scale-a = scale-b = +1 */                                                \
                     "}\n"                                                                                      \
                     : OPS(d)                                                                                   \
                     : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                                 \
    }

WGMMA_E4M3(128, 64, WGMMA_D64_REGS, WGMMA_D64_OPS, 64, 65, 66)
WGMMA_E4M3(144, 72, WGMMA_D72_REGS, WGMMA_D72_OPS, 72, 73, 74)
WGMMA_E4M3(192, 96, WGMMA_D96_REGS, WGMMA_D96_OPS, 96, 97, 98)
WGMMA_E4M3(224, 112, WGMMA_D112_REGS, WGMMA_D112_OPS, 112, 113, 114)
WGMMA_E4M3(256, 128, WGMMA_D128_REGS, WGMMA_D128_OPS, 128, 129, 130)
#undef WGMMA_E4M3
#endif
