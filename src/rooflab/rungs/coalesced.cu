// Stage 1, the seed's coalesced SGEMM: threadIdx.x -> COLUMN.
// For one k a warp (32 consecutive columns of one row) reads A[row*K + k] as one
// broadcast address, B[k*N + col .. col+31] as 128 contiguous bytes, and writes
// C[row*N + col ..] contiguously: every memory transaction is fully used.
extern "C" __global__ void mm_coalesced(const float* A,
                                        const float* B,
                                        float* C,
                                        int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;  // x -> column
    int row = blockIdx.y * blockDim.y + threadIdx.y;  // y -> row
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = sum;
    }
}
