"""The one place that imports CuPy, and the translation of its errors.

Everything that touches the GPU goes through `cupy()` so that a machine with no
CuPy, no driver or no GPU gets one clear NoGPUError instead of an ImportError
deep inside a measurement. CUDA failures become KernelError naming the kernel,
the call and the CUDA error string (the seed's CUDA_CHECK).
"""

from __future__ import annotations

import contextlib
import functools
import os

from rooflab.errors import KernelError, NoGPUError


@functools.cache
def cupy():
    try:
        import cupy as cp  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a CUDA library that fails to load
        raise NoGPUError(
            f"CuPy is not usable here ({exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
            "install rooflab[cuda12] or rooflab[cuda13] on a machine with an NVIDIA GPU"
        ) from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise NoGPUError(f"no NVIDIA GPU or driver found ({_cuda_message(exc)})") from None
    if count < 1:
        raise NoGPUError("no NVIDIA GPU found (the CUDA driver reports 0 devices)")
    if os.environ.get("ROOFLAB_NO_POOL") == "1":
        # under compute-sanitizer memcheck: an out-of-bounds write that lands inside
        # CuPy's pooled block would go unseen, so allocate every array separately
        cp.cuda.set_allocator(None)
        cp.cuda.set_pinned_memory_allocator(None)
    return cp


def gpu_available() -> bool:
    try:
        cupy()
    except NoGPUError:
        return False
    return True


def _cuda_message(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return " ".join(text.split())


def _cuda_error_types() -> tuple[type[BaseException], ...]:
    cp = cupy()
    types: list[type[BaseException]] = [
        cp.cuda.driver.CUDADriverError,
        cp.cuda.runtime.CUDARuntimeError,
        cp.cuda.compiler.CompileException,
    ]
    with contextlib.suppress(Exception):
        from cupy_backends.cuda.libs import cublas  # noqa: PLC0415

        types.append(cublas.CUBLASError)
    with contextlib.suppress(Exception):
        types.append(cp.cuda.memory.OutOfMemoryError)
    return tuple(types)


@contextlib.contextmanager
def cuda_call(kernel: str, call: str):
    """Run a CUDA call; on failure raise KernelError(kernel, call, CUDA error string)."""
    try:
        yield
    except KernelError:
        raise
    except _cuda_error_types() as exc:
        raise KernelError(kernel, call, _cuda_message(exc)) from exc


def synchronize(kernel: str) -> None:
    """Wait for the current stream; asynchronous kernel faults surface here, named."""
    cp = cupy()
    with cuda_call(kernel, "cudaStreamSynchronize (after launch)"):
        cp.cuda.get_current_stream().synchronize()


def torch_reason() -> str | None:
    """None where torch is importable and sees a CUDA GPU, else why not (one line)."""
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:  # noqa: BLE001 (any import failure is a reason, not a crash)
        return f"torch not importable ({exc.__class__.__name__}: {exc})"
    if not torch.cuda.is_available():
        return "torch sees no GPU"
    return None
