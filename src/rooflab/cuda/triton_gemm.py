"""Triton GEMMs inside rooflab's harness: CuPy arrays in, the launch on CuPy's current stream.

The harness times on CuPy's current stream and runs concurrent replicas on CuPy streams of their
own; Triton launches on torch's current stream. So each launch makes torch's current stream the
CuPy stream (torch.cuda.ExternalStream on the same handle; CuPy's null stream is torch's default
stream, the legacy default stream of both) and hands the arrays over with DLPack (no copies).
BF16 arrives as uint16 bit patterns and is viewed as torch.bfloat16.
"""

from __future__ import annotations

from rooflab.cuda.gpu import cupy
from rooflab.errors import KernelError
from rooflab.rungs.triton import parse


def launcher(spec: str, m: int, n: int, k: int):
    """launch(a, b, c) for one configuration ("<precision> <label>", rooflab.rungs.triton.Config)."""
    cfg = parse(spec)
    cp = cupy()
    name = f"triton {cfg.precision} {cfg.label}"
    try:
        import torch  # noqa: PLC0415

        from rooflab.cuda import triton_kernels  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a torch/triton that fails to load
        raise KernelError(name, "import torch, triton", f"{exc.__class__.__name__}: {exc}") from None
    dev = cp.cuda.Device().id
    streams: dict[int, object] = {}

    def torch_stream(ptr: int):
        s = streams.get(ptr)
        if s is None:
            s = torch.cuda.default_stream(dev) if ptr == 0 else torch.cuda.ExternalStream(ptr, device=dev)
            streams[ptr] = s
        return s

    def tensor(x):
        t = torch.from_dlpack(x)
        return t.view(torch.bfloat16) if t.dtype == torch.uint16 else t

    def launch(a, b, c):
        try:
            with torch.cuda.device(dev), torch.cuda.stream(torch_stream(cp.cuda.get_current_stream().ptr)):
                triton_kernels.matmul(tensor(a), tensor(b), tensor(c), cfg)
        except KernelError:
            raise
        except Exception as exc:  # Triton's compile errors, out of resources, launch failures
            text = " ".join(str(exc).split())[:600]
            raise KernelError(name, "Triton compile and launch", f"{exc.__class__.__name__}: {text}") from exc

    return launch
