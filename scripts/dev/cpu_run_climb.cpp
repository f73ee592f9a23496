// Runs the real kernel source of a rung on the CPU: one std::thread per CUDA thread,
// blocks one after another, __syncthreads as a std::barrier, __shared__ as static
// storage shared by the block's threads. Built with -fsanitize=address it catches any
// out-of-bounds global read or write (A, B and C are allocated at their exact sizes);
// with -fsanitize=thread, any shared-memory access not ordered by a barrier.
// The sm_80 cp.async paths are compiled out (__CUDA_ARCH__ is undefined here), so the
// cp.async instances run their pre-sm_80 fallback: same ring schedule, synchronous copies.
// Dynamic shared memory (__CUDACC__ undefined) becomes a static buffer of the kernel's size.
// Build and run through scripts/dev/cpu_run_climb.sh.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct alignas(16) float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct Idx {
    int x, y, z;
};
static thread_local Idx threadIdx, blockIdx, gridDim;
static std::barrier<>* g_bar;
static inline void __syncthreads() { g_bar->arrive_and_wait(); }

#include KFILE

using Kern = void (*)(const float*, const float*, float*, int, int, int);
struct Entry {
    const char* name;
    Kern fn;
    int nt, bm, bn;
};
#define E(name, nt, bm, bn) {#name, name, nt, bm, bn}
static const Entry KERNELS[] = {KLIST};

static void launch(const Entry& e, const float* A, const float* B, float* C, int M, int N, int K)
{
    const int gx = (N + e.bn - 1) / e.bn, gy = (M + e.bm - 1) / e.bm;
    std::barrier<> bar(e.nt);
    g_bar = &bar;
    std::vector<std::thread> th;
    for (int t = 0; t < e.nt; t++)
        th.emplace_back([&, t] {
            threadIdx = {t, 0, 0};
            gridDim = {gx, gy, 1};
            for (int by = 0; by < gy; by++)
                for (int bx = 0; bx < gx; bx++) {
                    blockIdx = {bx, by, 0};
                    e.fn(A, B, C, M, N, K);
                    bar.arrive_and_wait();  // the block is done before the next reuses shared memory
                }
        });
    for (auto& t : th) t.join();
}

int main(int argc, char** argv)
{
    // shapes: M N K [misalign] ...
    std::vector<std::array<int, 4>> shapes;
    for (int i = 1; i + 3 < argc + 1 && i + 3 <= argc; i += 4)
        shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3])});
    int failed = 0;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (const auto& e : KERNELS) {
        for (auto [M, N, K, mis] : shapes) {
            // exact-size allocations (+ mis floats in front, to make the 16-byte path illegal)
            float* Abuf = new float[(size_t)M * K + mis];
            float* Bbuf = new float[(size_t)K * N];
            float* Cbuf = new float[(size_t)M * N + mis];
            float *A = Abuf + mis, *B = Bbuf, *C = Cbuf + mis;
            for (size_t i = 0; i < (size_t)M * K; i++) A[i] = U(rng);
            for (size_t i = 0; i < (size_t)K * N; i++) B[i] = U(rng);
            for (size_t i = 0; i < (size_t)M * N; i++) C[i] = NAN;
            launch(e, A, B, C, M, N, K);
            double num = 0, den = 0;
            long nan = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double r = 0;
                    for (int k = 0; k < K; k++) r += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
                    double c = C[(size_t)i * N + j];
                    if (std::isnan(c)) nan++;
                    num += (c - r) * (c - r);
                    den += r * r;
                }
            double err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
            bool ok = nan == 0 && err <= 1e-5;
            const bool vec = ((K | N) & 3) == 0 &&
                             (((unsigned long long)A | (unsigned long long)B | (unsigned long long)C) & 15) == 0;
            printf("%-4s %-36s %5dx%5dx%5d %s path%s err %.2e%s\n", ok ? "ok" : "FAIL", e.name, M, N, K,
                   vec ? "16-byte" : "scalar ", mis ? " (A, C misaligned)" : "", err,
                   nan ? " unwritten elements!" : "");
            failed += !ok;
            delete[] Abuf;
            delete[] Bbuf;
            delete[] Cbuf;
        }
    }
    return failed ? 1 : 0;
}
