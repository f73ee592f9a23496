"""A CONSTRUCTED torch.profiler (Kineto) Chrome trace and Nsight Compute rows for the trace tests:
written by hand in the formats those tools emit (event categories, args, ncu's raw-page columns),
not recorded on a GPU. Two steps of a tiny program: a BF16 GEMM (aten::mm, 4096 x 4096 x 4096), an
elementwise kernel and a small reduction; the second step runs inside record_function("step")."""

from __future__ import annotations

import json
from pathlib import Path

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_execute_kernel__5x_cublas"
EWISE_CUPTI = ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
               "std::array<char*, 3ul> >(int, at::native::AddFunctor<float>, std::array<char*, 3ul>)")
EWISE_NCU = ("void at::native::vectorized_elementwise_kernel<4, AddFunctor<float>, array<char *, 3>>"
             "(int, AddFunctor<float>, array<char *, 3>)")
REDUCE = "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp)"

GEMM_US, EWISE_US, REDUCE_US = 250.0, 60.0, 5.0
M = N = K = 4096


def _step(t0: float, ext0: int, corr0: int) -> list[dict]:
    ev = []
    t = t0
    for i, (op, dims, kname, grid, block, us) in enumerate([
        ("aten::mm", [[M, K], [K, N]], GEMM, [32, 16, 1], [384, 1, 1], GEMM_US),
        ("aten::add", [[M, N], [M, N]], EWISE_CUPTI, [16384, 1, 1], [128, 1, 1], EWISE_US),
        ("aten::add", [[M, N], [M, N]], EWISE_CUPTI, [16384, 1, 1], [128, 1, 1], EWISE_US),
        ("aten::sum", [[M, N]], REDUCE, [1, 1, 1], [512, 1, 1], REDUCE_US),
    ]):
        ext, corr = ext0 + i, corr0 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": op, "ts": t, "dur": 10.0,
                   "args": {"External id": ext, "Input Dims": dims}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 2, "dur": 3.0,
                   "args": {"correlation": corr, "External id": ext}})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "ts": t + 20, "dur": us,
                   "args": {"External id": ext, "correlation": corr, "grid": grid, "block": block, "stream": 7,
                            "device": 0}})
        t += 20 + us
    return ev


def chrome_trace() -> dict:
    warm = _step(1000.0, 1, 101)
    timed = _step(5000.0, 11, 201)
    ann = {"ph": "X", "cat": "user_annotation", "name": "step", "ts": 4990.0, "dur": 1000.0, "args": {}}
    return {"traceEvents": [*warm, ann, *timed]}


def ncu_rows() -> list[dict]:
    """parse_csv's rows for the sampled launches (metrics in base units)."""
    gemm = {"gpu__time_duration.sum": 240e-6, "dram__bytes_read.sum": 3 * 2 * M * N * 0.5,
            "dram__bytes_write.sum": 2 * M * N, "lts__t_bytes.sum": 400e6, "l1tex__t_bytes.sum": 100e6,
            "sm__inst_executed_pipe_tensor.sum": 1e6, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1e5}
    ewise = {"gpu__time_duration.sum": 58e-6, "dram__bytes_read.sum": 2 * 4 * M * N,
             "dram__bytes_write.sum": 4 * M * N, "lts__t_bytes.sum": 3 * 4 * M * N,
             "l1tex__t_bytes.sum": 3 * 4 * M * N, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": M * N}
    return [{"name": GEMM, "grid": "(32, 16, 1)", "block": "(384, 1, 1)", "metrics": gemm},
            {"name": EWISE_NCU, "grid": "(16384, 1, 1)", "block": "(128, 1, 1)", "metrics": ewise},
            {"name": EWISE_NCU, "grid": "(16384, 1, 1)", "block": "(128, 1, 1)", "metrics": ewise}]


def h200_doc() -> dict:
    """The recorded H200 device entry with constructed memory-level ceilings (their order of magnitude)."""
    recorded = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    return {"device": recorded["device"],
            "memory": {"summary": {"shared_bytes_per_s": 33e12, "l2_bytes_per_s": 9.5e12,
                                   "l2_footprint_bytes": 32 * 2**20, "beyond_l2_bytes_per_s": 4.5e12,
                                   "beyond_l2_footprint_bytes": 4 * 2**30}}}
