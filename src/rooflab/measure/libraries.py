"""The library calls that run a library rung (Rung.library): a rung record names its library, this
registry holds the functions, so the records stay free of CUDA imports and the imports stay where
the import linter sees them. Each entry: make(rung, m, n, k) -> (launch(a, b, c), the function's
name as the results document records it)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from rooflab.cuda import cublas, cublaslt_fp8, triton_gemm
from rooflab.rungs.record import Rung

Launch = Callable
Make = Callable[[Rung, int, int, int], tuple[Launch, str]]

# cuBLAS's entry per precision: FP32 stays FP32, TF32 and BF16 on the tensor cores
_CUBLAS = {"fp32": cublas.sgemm, "tf32": cublas.gemm_tf32, "bf16": cublas.gemm_bf16}


def _named(fn: Callable, config: str | None = None) -> str:
    return f"{fn.__module__}:{fn.__name__}" + (f":{config}" if config is not None else "")


def _cublas(rung: Rung, m: int, n: int, k: int) -> tuple[Launch, str]:
    fn = _CUBLAS[rung.precision]
    return fn(m, n, k), _named(fn)


def _triton(rung: Rung, m: int, n: int, k: int) -> tuple[Launch, str]:
    fn = functools.partial(triton_gemm.launcher, rung.config)
    return fn(m, n, k), _named(triton_gemm.launcher, rung.config)


def _cublaslt_fp8(rung: Rung, m: int, n: int, k: int) -> tuple[Launch, str]:
    return cublaslt_fp8.gemm_fp8(rung.config, m, n, k), _named(cublaslt_fp8.gemm_fp8, rung.config)


LIBRARIES: dict[str, Make] = {"cublas": _cublas, "triton": _triton, "cublaslt_fp8": _cublaslt_fp8}


def library_launch(rung: Rung, m: int, n: int, k: int) -> tuple[Launch, str]:
    """launch(a, b, c) for a library rung at one shape, and the call's name."""
    return LIBRARIES[rung.library](rung, m, n, k)
