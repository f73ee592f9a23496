// Inline-PTX wrappers shared by the tensor-core kernels (rungs/mma_*.cu, rungs/wgmma_*.cu,
// ceilings/tensor_peak.cu): cp.async, ldmatrix, wgmma fences, descriptors and MMAs, mbarriers, TMA. rooflab.cuda.compile puts this folder on NVRTC's include path for the
// package's kernels; each group compiles only where its instructions exist.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// src_bytes < 16 (or 4) zero-fills the rest of the destination: out-of-range chunks load as zeros
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// generic-proxy shared writes (cp.async, st.shared) -> visible to the async proxy (wgmma)
// an empty asm on each register keeps the compiler from moving accumulator reads or writes across
// the asynchronous MMAs that own them
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void cp_async_mbar_arrive(unsigned bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// TMA (cp.async.bulk.tensor) and the mbarrier transaction count that tracks it. The tensor map
// lives in global memory, written by the host before the launch: one acquire fence per issuing
// thread makes those generic-proxy bytes visible to the tensor-map proxy that TMA reads through.
__device__ __forceinline__ void tensormap_acquire(const void* tmap)
{
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;\n" ::"l"(tmap) : "memory");
}
// arm a barrier's phase: this thread's arrival, plus `bytes` of transactions the copies will complete
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// one 2-D box (coordinates: c0 along the contiguous dimension, c1 along rows) into shared memory;
// out-of-bounds elements arrive as zeros and still count toward the barrier's transaction bytes
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* tmap, int c0, int c1, unsigned bar)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            dst),
        "l"(tmap), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
// a rank-3 box (c0 innermost), landing as its boxes of the two inner dimensions one after another
__device__ __forceinline__ void tma_load_3d(unsigned dst, const void* tmap, int c0, int c1, int c2, unsigned bar)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            dst),
        "l"(tmap), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
// mbar_wait that gives up: false when the phase has not completed after MBAR_TIMEOUT_NS of GPU time (a
// copy that never lands, an expect_tx that overcounts). The caller then stops issuing and stores
// nothing, so a broken ring leaves C unwritten (the harness FAILS it) within seconds, where a plain
// spin would hang the process, and a trap would leave the CUDA context unusable for what runs after.
// Legitimate waits last a few k-tiles: microseconds, milliseconds under a sanitizer.
#ifndef MBAR_TIMEOUT_NS
#define MBAR_TIMEOUT_NS 2000000000ull
#endif
__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
__device__ __forceinline__ bool mbar_wait_bounded(unsigned bar, unsigned parity)
{
    if (mbar_try_wait(bar, parity)) return true;
    const unsigned long long t0 = global_ns();
    while (!mbar_try_wait(bar, parity))
        if (global_ns() - t0 > MBAR_TIMEOUT_NS) return false;
    return true;
}
// Clusters (sm_90): a CTA's rank in its cluster, the cluster's index in the grid and their count,
// and the cluster-wide barrier every thread of every CTA of the cluster passes (non-.aligned: the
// threads of a warp may reach it apart)
__device__ __forceinline__ unsigned cluster_ctarank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned cluster_id_x()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned cluster_count_x()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}
// arrive on the barrier at the same shared-memory offset in CTA `cta` of this cluster (this one included)
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta)
{
    asm volatile(
        "{\n"
        ".reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
        "}\n" ::"r"(bar),
        "r"(cta)
        : "memory");
}
// tma_load_2d into the same offset of every CTA in `mask` (bit r: cluster rank r), each CTA's barrier at
// offset `bar` counting the bytes that land in it
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const void* tmap, int c0, int c1, unsigned bar,
                                                      unsigned short mask)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}
// TMA store: one 2-D box from shared memory (the source 1024-byte aligned for the 128-byte swizzle)
// to the tensor at (c0 along the contiguous dimension, c1 along rows); what falls outside the
// tensor is not written. Each store is a bulk group of the issuing thread.
__device__ __forceinline__ void tma_store_2d(const void* tmap, unsigned src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(tmap), "r"(c0),
                 "r"(c1), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// this thread's bulk groups but the newest N have read their shared memory (it may be written again)
template <int N>
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory"); }
// ... and have completed their writes
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// the mbarrier inits must be visible to the async proxy (TMA's complete_tx) before the first copy
__device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// registers move between warpgroups: every thread of the warpgroup executes the same one
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }

// The accumulator operands of an m64nN wgmma (N / 2 FP32 registers a thread): the "{%0, ...}" list
// of the instruction and the matching "+f" constraints, named once for every wrapper.
#define WGMMA_D64_REGS \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_D72_REGS WGMMA_D64_REGS ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71"
#define WGMMA_D96_REGS WGMMA_D64_REGS ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define WGMMA_D112_REGS WGMMA_D96_REGS ", " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define WGMMA_D128_REGS WGMMA_D96_REGS ", " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WGMMA_D64_OPS(d) \
    "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
    "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
    "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
    "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
    "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
    "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
    "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
    "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])
#define WGMMA_D72_OPS(d) WGMMA_D64_OPS(d), \
    "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71])
#define WGMMA_D96_OPS(d) WGMMA_D64_OPS(d), \
    "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]), \
    "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]), \
    "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]), \
    "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95])
#define WGMMA_D112_OPS(d) WGMMA_D96_OPS(d), \
    "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
    "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111])
#define WGMMA_D128_OPS(d) WGMMA_D96_OPS(d), \
    "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
    "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]), \
    "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]), \
    "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127])

// wgmma matrix descriptor: start address, leading / stride byte offsets (all >> 4), base offset 0
// (1024-byte-aligned tiles), layout type 1 = 128-byte swizzle
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

// D (64 x 256, FP32, 128 registers per thread) += A (64 x 16, K-major) * B (16 x 256, MN-major),
// both from shared memory through descriptors. scale-d is a predicate (true: accumulate).
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        WGMMA_D128_REGS
        "}, %128, %129, p, 1, 1, 0, 1;\n"  // scale-a = scale-b = +1; A K-major (0), B MN-major (1)
        "}\n"
        : WGMMA_D128_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 256, FP32) (+)= A (64 x 8 TF32) * B (8 x 256 TF32), both K-major (TF32 has no transpose) in
// shared memory through descriptors; scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], unsigned long long desc_a,
                                                      unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        WGMMA_D128_REGS
        "}, %128, %129, p, 1, 1;\n"  // scale-a = scale-b = +1
        "}\n"
        : WGMMA_D128_OPS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
// D (64 x 256, FP32) (+)= A (64 x 8 TF32, from registers) * B (8 x 256 TF32, K-major in shared
// memory). A's fragment (CUTLASS's ALayout_64x8): warp w, lane = 4g + t holds a[0] = A[16w + g][t],
// a[1] = A[16w + g + 8][t], a[2] = A[16w + g][t + 4], a[3] = A[16w + g + 8][t + 4]. The registers are
// read asynchronously: they must not be written until the wait that retires this MMA.
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const unsigned (&a)[4],
                                                         unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        WGMMA_D128_REGS
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n"
        "}\n"
        : WGMMA_D128_OPS(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
// the same with B 8 x 128 (D 64 x 128, 64 registers a thread); A's fragment as above
__device__ __forceinline__ void wgmma_m64n128k8_tf32_rs(float (&d)[64], const unsigned (&a)[4],
                                                         unsigned long long desc_b, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        WGMMA_D64_REGS
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n"
        "}\n"
        : WGMMA_D64_OPS(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
// the same for an operand's 32-bit registers
template <int N>
__device__ __forceinline__ void fence_regs(unsigned (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+r"(r[i])::"memory");
}
// D (64 x 128, FP32, 64 registers per thread) (+)= A (64 x 8) * B (8 x 128), TF32, both K-major in
// 128-byte-swizzled shared memory, through descriptors; scale_d = 0: D = A * B.
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], unsigned long long da, unsigned long long db, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        WGMMA_D64_REGS
        "}, %64, %65, p, 1, 1;\n"
        "}\n"
        : WGMMA_D64_OPS(d)
        : "l"(da), "l"(db), "r"(scale_d));
}

#endif
