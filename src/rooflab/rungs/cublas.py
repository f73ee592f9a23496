"""Stage 3, the ceiling: cublasSgemm in pure FP32 (no TF32); see rooflab.cuda.cublas."""

from rooflab.rungs.pipelined import _to_cublas as _pipelined_to_cublas
from rooflab.rungs.record import Rung, Step


def _from_tiled(s: Step) -> str:
    c, d = s.prev, s.this
    err = s.norm()
    return (
        f"cuBLAS SGEMM ran {s.ratio:.1f}× faster than the TILE=32 kernel ({c['ms']:.2f} → {d['ms']:.3f} ms) and "
        f"reached {d['pct_peak']:.1f}% of the FP32 CUDA-core peak ({d['gflops']:,.0f} GFLOP/s)"
        + (f", {d['speedup']:.0f}× the naive kernel" if d.get("speedup") else "")
        + ". The gap is the optimisations the seed's kernels lack: register "
        f"tiling (each thread keeps a block of outputs, e.g. 8×8, in registers, so 16 shared loads feed 64 FMAs "
        f"instead of 2 per FMA), 128-bit vector loads, and multistage copies that fetch the next tile while the "
        f"current one is computed. Its compulsory traffic gives {s.this_rec['model']['ai_flop_per_byte']:.0f} "
        f"FLOP/byte, far right of the ridge: it is compute-bound."
        + (f" Its normwise error {err:.1e} shows it stayed in FP32 (TF32 tensor cores would give about 1e-4)."
           if err is not None else "")
    )


RUNG = Rung(
    name="cublas",
    title="cuBLAS SGEMM (FP32)",
    stage="stage 3 (ceiling)",
    launcher="rooflab.cuda.cublas:sgemm",
    loads_per_fma=None,
    block=(0, 0, 0),
    explain=(
        "NVIDIA's hand-tuned SGEMM, called in pure FP32 (CUBLAS_DEFAULT_MATH: no TF32 tensor cores) "
        "with the column-major trick (C^T = B^T·A^T, B passed first). Its kernels keep a large output "
        "tile per thread in registers, load with wide vectors, and overlap the next tile's loads with "
        "the current tile's math."
    ),
    paragraphs=(("pipelined", "pipelined → cuBLAS: the remaining gap", _pipelined_to_cublas),
                ("tiled32", "tiled → cuBLAS", _from_tiled)),
    ratios=(("tiled32", "time_tiled(32) / time_cuBLAS (G8)"),
            ("naive", "time_naive / time_cuBLAS"),
            ("regtile", "time_register-tiled / time_cuBLAS (G12)"),
            ("pipelined", "time_pipelined / time_cuBLAS (G12)")),
)
