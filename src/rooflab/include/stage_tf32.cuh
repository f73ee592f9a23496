// The TF32 pre-pass of the wgmma TF32 and 3xTF32 rungs (rungs/wgmma_tf32.cu, rungs/wgmma_tf32_tma.cu):
// TF32 wgmma reads both operands K-major, and row-major B is N-major, so each launch first writes
//   TF32:   A' = tf32_rna(A)  (M x Kp),  B' = tf32_rna(B)^T  (N x Kp);
//   3xTF32: A' = [A_big; A_small], B' = [B_big^T; B_small^T]  (each part M x Kp / N x Kp),
//           x = big + small, big = tf32_rna(x), small = tf32_rna(x - big) (x - big is exact),
// Kp = K rounded up to a multiple of 32, the pad zero-filled. Each rung's .cu defines the entry points
// stage_a_<scheme> and stage_bt_<scheme> on these bodies (rooflab.cuda.staging launches them).
#pragma once

// round to TF32, nearest, ties away from zero (cvt.rna.tf32.f32), low 13 bits cleared
__device__ __forceinline__ float nt_rna(float x) { return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u); }

template <int PARTS>
__device__ __forceinline__ void nt_put(float* out, size_t part, size_t at, float x)
{
    const float big = nt_rna(x);
    out[at] = big;
    if (PARTS == 2) out[part + at] = nt_rna(x - big);
}

// X (R x K, row-major, already K-major) -> out (PARTS x R x Kp); one thread per 4 outputs
template <int PARTS>
__device__ __forceinline__ void stage_rows(const float* __restrict__ X, float* __restrict__ out, int R, int K, int Kp)
{
    const size_t q = (size_t)blockIdx.x * blockDim.x + threadIdx.x, per_row = Kp / 4;
    if (q >= (size_t)R * per_row) return;
    const size_t r = q / per_row;
    const int k = (int)(q % per_row) * 4;
    float v[4];
    if ((K % 4 == 0) && ((reinterpret_cast<size_t>(X) & 15) == 0)) {  // a whole float4 in or out of range
        const float4 x = k < K ? __ldg(reinterpret_cast<const float4*>(X + r * K + k)) : make_float4(0.f, 0.f, 0.f, 0.f);
        v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) v[i] = k + i < K ? __ldg(X + r * K + k + i) : 0.0f;
    }
    float4 big, small;
    float* b = &big.x;
    float* s = &small.x;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        b[i] = nt_rna(v[i]);
        s[i] = nt_rna(v[i] - b[i]);
    }
    *reinterpret_cast<float4*>(out + r * Kp + k) = big;
    if (PARTS == 2) *reinterpret_cast<float4*>(out + (size_t)R * Kp + r * Kp + k) = small;
}

// X (K x N, row-major: N-major) -> out (PARTS x N x Kp): out[n][k] = X[k][n], through a 32 x 32
// shared tile (padded: conflict-free both ways). Block (32, 8), grid (cdiv(N, 32), Kp / 32).
template <int PARTS>
__device__ __forceinline__ void stage_cols(const float* __restrict__ X, float* __restrict__ out, int K, int N, int Kp)
{
    __shared__ float tile[32][33];
    const int n0 = blockIdx.x * 32, k0 = blockIdx.y * 32, tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int k = k0 + ty + 8 * j, n = n0 + tx;
        tile[ty + 8 * j][tx] = (k < K && n < N) ? __ldg(X + (size_t)k * N + n) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int n = n0 + ty + 8 * j;
        if (n < N) nt_put<PARTS>(out, (size_t)N * Kp, (size_t)n * Kp + k0 + tx, tile[tx][ty + 8 * j]);
    }
}

// X (K x N, row-major) -> out (N x K, row-major): out[n][k] = X[k][n], the bits as they are (the tensor
// core truncates them to TF32 when it reads them), through a 32 x 32 shared tile (padded: conflict-free
// both ways). Block (32, 8), grid (cdiv(N, 32), cdiv(K, 32)).
__device__ __forceinline__ void transpose_rows(const float* __restrict__ X, float* __restrict__ out, int K, int N)
{
    __shared__ float tile[32][33];
    const int n0 = blockIdx.x * 32, k0 = blockIdx.y * 32, tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int k = k0 + ty + 8 * j, n = n0 + tx;
        if (k < K && n < N) tile[ty + 8 * j][tx] = __ldg(X + (size_t)k * N + n);
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int n = n0 + ty + 8 * j, k = k0 + tx;
        if (n < N && k < K) out[(size_t)n * K + k] = tile[tx][ty + 8 * j];
    }
}
