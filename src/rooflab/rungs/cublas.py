"""Stage 3, the ceiling: cublasSgemm in pure FP32 (no TF32); see rooflab.cuda.cublas."""

from rooflab.rungs.record import Rung


RUNG = Rung(
    name="cublas",
    title="cuBLAS SGEMM (FP32)",
    stage="stage 3 (ceiling)",
    library="cublas",
    loads_per_fma=None,
    block=(0, 0, 0),
    explain=(
        "NVIDIA's hand-tuned SGEMM, called in pure FP32 (CUBLAS_DEFAULT_MATH: no TF32 tensor cores) "
        "with the column-major trick (C^T = B^T·A^T, B passed first). Its kernels keep a large output "
        "tile per thread in registers, load with wide vectors, and overlap the next tile's loads with "
        "the current tile's math."
    ),
    compare=("pipelined", "tiled32"),
    ratios=(("tiled32", "time_tiled(32) / time_cuBLAS (G8)"),
            ("naive", "time_naive / time_cuBLAS"),
            ("regtile", "time_register-tiled / time_cuBLAS (G12)"),
            ("pipelined", "time_pipelined / time_cuBLAS (G12)")),
)
