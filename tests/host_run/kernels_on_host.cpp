// Runs the real kernel source of a rung on the CPU: one std::thread per CUDA thread,
// blocks one after another, __syncthreads as a std::barrier, __shared__ as static
// storage shared by the block's threads. Built with -fsanitize=address it catches any
// out-of-bounds global read or write (A, B and C are allocated at their exact sizes);
// with -fsanitize=thread, any shared-memory access not ordered by a barrier.
// The sm_80 cp.async paths are compiled out (__CUDA_ARCH__ is undefined here), so the
// cp.async instances run their pre-sm_80 fallback: same ring schedule, synchronous copies.
// Dynamic shared memory (__CUDACC__ undefined) becomes a static buffer of the kernel's size.
// Built and run by tests/test_rungs_host_run.py: -DKFILE names the .cu file, -DKLIST its kernels as
// E(name) entries; each run is "index M N K misalign gx gy bx by", the grid and block from the
// rung's record.
#include <array>
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
static thread_local Idx threadIdx, blockIdx, blockDim, gridDim;
static std::barrier<>* g_bar;
static inline void __syncthreads() { g_bar->arrive_and_wait(); }

#include KFILE

using Kern = void (*)(const float*, const float*, float*, int, int, int);
struct Entry {
    const char* name;
    Kern fn;
};
#define E(name) {#name, name}
static const Entry KERNELS[] = {KLIST};

static void launch(const Entry& e, const float* A, const float* B, float* C, int M, int N, int K, int gx, int gy,
                   int bx, int by)
{
    const int nt = bx * by;
    std::barrier<> bar(nt);
    g_bar = &bar;
    std::vector<std::thread> th;
    for (int t = 0; t < nt; t++)
        th.emplace_back([&, t] {
            threadIdx = {t % bx, t / bx, 0};
            blockDim = {bx, by, 1};
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
    // runs: index M N K misalign gx gy bx by ...
    std::vector<std::array<int, 9>> runs;
    for (int i = 1; i + 9 <= argc; i += 9) {
        std::array<int, 9> r;
        for (int j = 0; j < 9; j++) r[j] = atoi(argv[i + j]);
        runs.push_back(r);
    }
    int failed = 0;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (auto [idx, M, N, K, mis, gx, gy, bx, by] : runs) {
        const Entry& e = KERNELS[idx];
        // exact-size allocations (+ mis floats in front, to make the 16-byte path illegal)
        float* Abuf = new float[(size_t)M * K + mis];
        float* Bbuf = new float[(size_t)K * N];
        float* Cbuf = new float[(size_t)M * N + mis];
        float *A = Abuf + mis, *B = Bbuf, *C = Cbuf + mis;
        for (size_t i = 0; i < (size_t)M * K; i++) A[i] = U(rng);
        for (size_t i = 0; i < (size_t)K * N; i++) B[i] = U(rng);
        for (size_t i = 0; i < (size_t)M * N; i++) C[i] = NAN;
        launch(e, A, B, C, M, N, K, gx, gy, bx, by);
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
               vec ? "16-byte" : "scalar ", mis ? " (A, C misaligned)" : "", err, nan ? " unwritten elements!" : "");
        failed += !ok;
        delete[] Abuf;
        delete[] Bbuf;
        delete[] Cbuf;
    }
    return failed ? 1 : 0;
}
