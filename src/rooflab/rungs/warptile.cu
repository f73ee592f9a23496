// Stage 6 (G12): vec.cu plus warp tiling. Same 128 x 128 block tile, 256 threads,
// 8 x 8 outputs per thread, BK = 8, two barriers per slice, float4 global loads,
// padded transposed A. What changes is which outputs a thread owns:
//   block tile 128 x 128 -> 8 warp tiles of 32 x 64 (4 down, 2 across)
//   warp tile 32 x 64    -> 32 lanes as 4 x 8, each owning 2 x 2 sub-tiles of 4 x 4,
//                           the sub-tiles 16 rows / 32 columns apart.
// Per k-step a lane reads As[k][wm + 16*ii + 4*ty .. +3] (ii = 0, 1) and
// Bs[k][wn + 32*jj + 4*tx .. +3] (jj = 0, 1): each LDS.128 of a warp touches 4
// (A) or 8 (B) consecutive float4s, 64 or 128 contiguous bytes, one conflict-free
// wavefront with broadcast. In vec.cu a warp's B read spans 16 float4s 32 bytes
// apart, 512 bytes over 4 banks groups: 4 wavefronts instead of 2.
// C: a row of a sub-tile is one float4, and the 8 lanes of a row write 8
// consecutive float4s (128 contiguous bytes per row per store).
// Shared loads per FMA: 4 LDS.128 per 64 FFMAs. Global loads per FMA: 1/64.
// Same run-time switch as vec.cu: 16-byte paths when K % 4 == 0, N % 4 == 0 and
// A, B, C are 16-byte aligned, single floats otherwise; any M, N, K.
// Launch: block 256, grid (cdiv(N, 128), cdiv(M, 128)), static shared memory.
#define BM 128
#define BN 128
#define BK 8
#define WM 32   // warp tile
#define WN 64
#define TM 8    // thread tile, as (TM/4) x (TN/4) sub-tiles of 4 x 4
#define TN 8
#define WTR (WM / TM)  // 4 lanes down a warp tile
#define WTC (WN / TN)  // 8 lanes across it
#define LDA (BM + 4)

extern "C" __global__ void __launch_bounds__(256, 2)
mm_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[BK][LDA];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = (warp / (BN / WN)) * WM;  // warp tile origin in the block tile
    const int wn = (warp % (BN / WN)) * WN;
    const int ty = lane / WTC, tx = lane % WTC;
    const int bm = blockIdx.y * BM;
    const int bn = blockIdx.x * BN;
    const bool vec = ((K | N) & 3) == 0 &&
                     ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                       reinterpret_cast<unsigned long long>(C)) & 15) == 0;

    // staging map as vec.cu: one float4 of A (row tid/2) and one of B (row tid/32)
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const bool a_in = bm + a_row < M;
    const float* a_src = A + (size_t)(a_in ? bm + a_row : 0) * K + a_col;  // + k0
    const int a_klim = a_in ? K - a_col : 0;   // column k0 + a_col + j is in if k0 + j < a_klim
    const int b_nlim = N - (bn + b_col);       // column j of the float4 is in if j < b_nlim
    const int b_klim = b_nlim > 0 ? K - b_row : 0;  // row k0 + b_row is in if k0 < b_klim

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        const float* ap = a_src + k0;
        const float* bp = B + (size_t)(k0 + b_row) * N + bn + b_col;
        float4 a, b;
        if (vec) {
            a = k0 < a_klim ? *reinterpret_cast<const float4*>(ap) : make_float4(0.f, 0.f, 0.f, 0.f);
            b = k0 < b_klim ? *reinterpret_cast<const float4*>(bp) : make_float4(0.f, 0.f, 0.f, 0.f);
        } else {
            a.x = k0 + 0 < a_klim ? ap[0] : 0.0f;
            a.y = k0 + 1 < a_klim ? ap[1] : 0.0f;
            a.z = k0 + 2 < a_klim ? ap[2] : 0.0f;
            a.w = k0 + 3 < a_klim ? ap[3] : 0.0f;
            const bool kin = k0 < b_klim;
            b.x = (kin && 0 < b_nlim) ? bp[0] : 0.0f;
            b.y = (kin && 1 < b_nlim) ? bp[1] : 0.0f;
            b.z = (kin && 2 < b_nlim) ? bp[2] : 0.0f;
            b.w = (kin && 3 < b_nlim) ? bp[3] : 0.0f;
        }
        As[a_col + 0][a_row] = a.x;
        As[a_col + 1][a_row] = a.y;
        As[a_col + 2][a_row] = a.z;
        As[a_col + 3][a_row] = a.w;
        *reinterpret_cast<float4*>(&Bs[b_row][b_col]) = b;
        __syncthreads();  // the slice is staged before anyone reads it
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float av[TM], bv[TN];
#pragma unroll
            for (int ii = 0; ii < TM / 4; ii++) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k][wm + ii * WTR * 4 + ty * 4]);
                av[ii * 4 + 0] = v.x; av[ii * 4 + 1] = v.y; av[ii * 4 + 2] = v.z; av[ii * 4 + 3] = v.w;
            }
#pragma unroll
            for (int jj = 0; jj < TN / 4; jj++) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][wn + jj * WTC * 4 + tx * 4]);
                bv[jj * 4 + 0] = v.x; bv[jj * 4 + 1] = v.y; bv[jj * 4 + 2] = v.z; bv[jj * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();  // everyone is done with the slice before it is overwritten
    }

    // acc[4*ii + ri][4*jj + rj] is C[bm + wm + 16*ii + 4*ty + ri][bn + wn + 32*jj + 4*tx + rj]
#pragma unroll
    for (int ii = 0; ii < TM / 4; ii++) {
#pragma unroll
        for (int ri = 0; ri < 4; ri++) {
            const int row = bm + wm + ii * WTR * 4 + ty * 4 + ri;
            if (row >= M) continue;
            float* crow = C + (size_t)row * N;
#pragma unroll
            for (int jj = 0; jj < TN / 4; jj++) {
                const int col = bn + wn + jj * WTC * 4 + tx * 4;
                const int i = ii * 4 + ri, j = jj * 4;
                if (vec) {
                    if (col < N)
                        *reinterpret_cast<float4*>(crow + col) =
                            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
                } else {
#pragma unroll
                    for (int rj = 0; rj < 4; rj++)
                        if (col + rj < N) crow[col + rj] = acc[i][j + rj];
                }
            }
        }
    }
}
