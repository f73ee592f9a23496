// Stage 2, the seed's shared-memory tiled SGEMM, templated on TILE (16 or 32).
// A TILE x TILE block stages one tile of A and one of B in shared memory; each
// element loaded from global memory is then used TILE times, cutting global
// traffic by TILE. Out-of-range elements load as 0 so any M, N, K works.
// Planted bugs, for tests that prove the checker catches them (never defined in normal builds):
// PLANT_MISSING_BARRIER drops the second __syncthreads (a race); PLANT_ROW_PAST stores one
// row past the end of C (row <= M), which no value check can see, only the guard zones.
template <int TILE>
__global__ void mm_tiled(const float* A,
                         const float* B,
                         float* C,
                         int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    int numTiles = (K + TILE - 1) / TILE;
    for (int t = 0; t < numTiles; t++) {
        int aCol = t * TILE + tx;
        int bRow = t * TILE + ty;
        As[ty][tx] = (row < M && aCol < K) ? A[(size_t)row * K + aCol] : 0.0f;
        Bs[ty][tx] = (bRow < K && col < N) ? B[(size_t)bRow * N + col] : 0.0f;
        __syncthreads();  // the tile is fully loaded before anyone reads it
        for (int k = 0; k < TILE; k++)
            sum += As[ty][k] * Bs[k][tx];
#ifndef PLANT_MISSING_BARRIER
        __syncthreads();  // everyone is done with the tile before it is overwritten
#endif
    }
#ifdef PLANT_ROW_PAST
    if (row <= M && col < N) C[(size_t)row * N + col] = sum;
#else
    if (row < M && col < N) C[(size_t)row * N + col] = sum;
#endif
}

// Explicit instantiations so nvcc -cubin (CI's compile check) emits both.
template __global__ void mm_tiled<16>(const float*, const float*, float*, int, int, int);
template __global__ void mm_tiled<32>(const float*, const float*, float*, int, int, int);
