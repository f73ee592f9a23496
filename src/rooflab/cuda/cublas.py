"""cuBLAS through CuPy, with the column-major trick.

cuBLAS is column-major; a row-major M x N matrix read column-major is its
transpose. So for row-major C = A * B we ask cuBLAS for C^T = B^T * A^T:
pass B first (as cuBLAS's "A", N x K column-major, ld = N), then A (K x M, ld = K),
no transposes, and C comes back row-major (ld = N).
"""

from __future__ import annotations

import numpy as np

from rooflab.cuda.gpu import cuda_call, cupy

_DEFAULT_MATH = 0  # CUBLAS_DEFAULT_MATH: FP32 stays FP32 (TF32 would be 3)
_POINTER_MODE_HOST = 0
_OP_N = 0


def sgemm(m: int, n: int, k: int):
    """launch(a, b, c) for pure-FP32 cublasSgemm on row-major float32 arrays."""
    cp = cupy()
    from cupy_backends.cuda.libs import cublas  # noqa: PLC0415

    handle = cp.cuda.device.get_cublas_handle()
    with cuda_call("cublas", "cublasSetMathMode(CUBLAS_DEFAULT_MATH)"):
        cublas.setMathMode(handle, _DEFAULT_MATH)
        cublas.setPointerMode(handle, _POINTER_MODE_HOST)
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
    # host scalars must outlive the asynchronous call: keep them in the closure
    alpha = np.ones(1, dtype=np.float32)
    beta = np.zeros(1, dtype=np.float32)

    def launch(a, b, c):
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)  # the replicas run on streams of their own
        with cuda_call("cublas", "cublasSgemm"):
            cublas.sgemm(handle, _OP_N, _OP_N, n, m, k,
                         alpha.ctypes.data, b.data.ptr, n,
                         a.data.ptr, k,
                         beta.ctypes.data, c.data.ptr, n)

    return launch


# cublasGemmEx: data and compute types (cublas_api.h, library_types.h)
CUDA_R_32F = 0
CUDA_R_16BF = 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_COMPUTE_32F_FAST_TF32 = 74
CUBLAS_GEMM_DEFAULT = -1


def _gemm_ex(m: int, n: int, k: int, ab_type: int, compute: int, label: str):
    cp = cupy()
    from cupy_backends.cuda.libs import cublas  # noqa: PLC0415

    handle = cp.cuda.device.get_cublas_handle()
    with cuda_call("cublas", "cublasSetPointerMode(HOST)"):
        cublas.setPointerMode(handle, _POINTER_MODE_HOST)
    alpha = np.ones(1, dtype=np.float32)  # FP32 scale type for both compute types
    beta = np.zeros(1, dtype=np.float32)

    def launch(a, b, c):
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        with cuda_call("cublas", label):
            cublas.gemmEx(handle, _OP_N, _OP_N, n, m, k, alpha.ctypes.data,
                          b.data.ptr, ab_type, n, a.data.ptr, ab_type, k,
                          beta.ctypes.data, c.data.ptr, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT)

    return launch


def gemm_tf32(m: int, n: int, k: int):
    """launch(a, b, c) on FP32 arrays with CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores, FP32 accumulation."""
    return _gemm_ex(m, n, k, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "cublasGemmEx(TF32)")


def gemm_bf16(m: int, n: int, k: int):
    """launch(a, b, c): a, b BF16 bit patterns (uint16), c float32; FP32 accumulation."""
    return _gemm_ex(m, n, k, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "cublasGemmEx(BF16)")
