// Planted bugs that only some checks see (tests/test_gpu_planted.py), each a copy of
// my_sgemm.cu's tiled kernel with one change. PLANTED_STORE(r, c, s) is the store of C.
#define T 16

#define TILED_SGEMM(NAME, STORE)                                                                       \
extern "C" __global__ void NAME(const float* A, const float* B, float* C, int M, int N, int K)        \
{                                                                                                      \
    __shared__ float As[T][T], Bs[T][T];                                                               \
    int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;                            \
    float s = 0.0f;                                                                                    \
    for (int k0 = 0; k0 < K; k0 += T) {                                                                \
        As[threadIdx.y][threadIdx.x] = (r < M && k0 + threadIdx.x < K) ? A[(size_t)r * K + k0 + threadIdx.x] : 0.0f; \
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && c < N) ? B[(size_t)(k0 + threadIdx.y) * N + c] : 0.0f; \
        __syncthreads();                                                                               \
        for (int k = 0; k < T; k++) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];                      \
        __syncthreads();                                                                               \
    }                                                                                                  \
    if (r < M && c < N) { STORE; }                                                                     \
}

// the unplanted twin
TILED_SGEMM(sgemm_ok, C[(size_t)r * N + c] = s)
// C indexed with row stride K instead of N: right whenever K == N (every square size)
TILED_SGEMM(sgemm_stride_k, C[(size_t)r * K + c] = s)
// one element 5e-4 off (relative): under the seed's 1e-3, diluted in the normwise error
TILED_SGEMM(sgemm_one_off, C[(size_t)r * N + c] = (r == M / 2 && c == N / 3) ? s * 1.0005f : s)
