// Stage 0, the seed's naive SGEMM: one thread per output, threadIdx.x -> ROW.
// C (M x N) = A (M x K) * B (K x N), all row-major FP32.
// Inside a warp threadIdx.x runs, so 32 neighbouring threads own 32 neighbouring
// rows of one column: A[row*K + k] and C[row*N + col] stride by K and N floats
// (uncoalesced), and B[k*N + col] is one address for the whole warp (broadcast).
extern "C" __global__ void mm_naive(const float* A,
                                    const float* B,
                                    float* C,
                                    int M, int N, int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;  // x -> row (the mistake)
    int col = blockIdx.y * blockDim.y + threadIdx.y;  // y -> column
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = sum;
    }
}
