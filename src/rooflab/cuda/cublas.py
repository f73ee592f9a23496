"""cuBLAS through CuPy, with the column-major trick.

cuBLAS is column-major; a row-major M x N matrix read column-major is its
transpose. So for row-major C = A * B we ask cuBLAS for C^T = B^T * A^T:
pass B first (as cuBLAS's "A", N x K column-major, ld = N), then A (K x M, ld = K),
no transposes, and C comes back row-major (ld = N).

One cuBLAS handle per stream: cuBLAS promises bitwise-identical results only while a single stream
uses a handle (its workspace is the handle's; concurrent streams sharing it may get different
internal implementations: cuBLAS guide, "Results reproducibility"), and the harness runs
concurrent replicas on streams of their own to check determinism.
"""

from __future__ import annotations

import numpy as np

from rooflab.cuda.gpu import cuda_call, cupy

_DEFAULT_MATH = 0  # CUBLAS_DEFAULT_MATH: FP32 stays FP32 (TF32 would be 3)
_POINTER_MODE_HOST = 0
_OP_N = 0
_handles: dict[tuple[int, int], int] = {}  # (device, stream) -> handle


def _handle(cp, cublas) -> int:
    """rooflab's own handle for the current stream (not CuPy's, which follows whatever stream CuPy's
    last call used), host pointer mode, default math (FP32 stays FP32; the TF32 rung asks for TF32
    through its compute type)."""
    stream = cp.cuda.get_current_stream().ptr
    key = (cp.cuda.Device().id, stream)
    h = _handles.get(key)
    if h is None:
        with cuda_call("cublas", "cublasCreate / cublasSetStream"):
            h = cublas.create()
            cublas.setMathMode(h, _DEFAULT_MATH)
            cublas.setPointerMode(h, _POINTER_MODE_HOST)
            cublas.setStream(h, stream)
        _handles[key] = h
    return h


def sgemm(m: int, n: int, k: int):
    """launch(a, b, c) for pure-FP32 cublasSgemm on row-major float32 arrays."""
    cp = cupy()
    from cupy_backends.cuda.libs import cublas  # noqa: PLC0415

    # host scalars must outlive the asynchronous call: keep them in the closure
    alpha = np.ones(1, dtype=np.float32)
    beta = np.zeros(1, dtype=np.float32)

    def launch(a, b, c):
        with cuda_call("cublas", "cublasSgemm"):
            cublas.sgemm(_handle(cp, cublas), _OP_N, _OP_N, n, m, k,
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

    alpha = np.ones(1, dtype=np.float32)  # FP32 scale type for both compute types
    beta = np.zeros(1, dtype=np.float32)

    def launch(a, b, c):
        with cuda_call("cublas", label):
            cublas.gemmEx(_handle(cp, cublas), _OP_N, _OP_N, n, m, k, alpha.ctypes.data,
                          b.data.ptr, ab_type, n, a.data.ptr, ab_type, k,
                          beta.ctypes.data, c.data.ptr, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT)

    return launch


def gemm_tf32(m: int, n: int, k: int):
    """launch(a, b, c) on FP32 arrays with CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores, FP32 accumulation."""
    return _gemm_ex(m, n, k, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "cublasGemmEx(TF32)")


def gemm_bf16(m: int, n: int, k: int):
    """launch(a, b, c): a, b BF16 bit patterns (uint16), c float32; FP32 accumulation."""
    return _gemm_ex(m, n, k, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "cublasGemmEx(BF16)")
