"""cuBLASLt's FP8 GEMM (e4m3 x e4m3 -> FP32 accumulate) through torch._scaled_mm: the FP8 rung's peer.

torch._scaled_mm calls cublasLtMatmul on FP8 A and B with FP32 compute and scale types; here with
FP32 output (out_dtype=torch.float32: cuBLASLt writes D as CUDA_R_32F, the FP8 rung's output),
tensor-wise scales of 1.0 and no bias, written straight into the harness's C (out=). The harness's
FP8 operands (rooflab.model.check.operands) are A, M x K e4m3 bits row-major, and B as B^T, N x K
row-major; torch wants mat2 as a K x N column-major matrix, which is B^T's transposed view, so
nothing is copied. Two accumulations (the rung's variants): "accurate" (use_fast_accum=False,
torch's default: cuBLASLt adds the tensor core's partial sums into FP32 at intervals) and "fast"
(use_fast_accum=True: the tensor core's own accumulator throughout).

cuBLASLt's FP8 GEMMs need K and N (and torch's checks M too, for the output) in multiples of 16:
where a shape is not, the operands are copied into zero-padded buffers and the M x N corner of
the padded result into C, inside the launch (timed with it, as the TMA rungs' padded copies are).
"""

from __future__ import annotations

from rooflab.cuda.gpu import cupy
from rooflab.cuda.torch_interop import CupyStreams
from rooflab.errors import KernelError

MODES = {"accurate": False, "fast": True}  # mode -> use_fast_accum
ALIGN = 16


def padded(x: int) -> int:
    return -(-x // ALIGN) * ALIGN


def title(mode: str) -> str:
    return f"cuBLASLt FP8 ({mode} accumulation)"


def _torch(label: str):
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a torch that fails to load its CUDA libraries
        raise KernelError(label, "import torch", f"{exc.__class__.__name__}: {exc}") from None
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        raise KernelError(label, "torch._scaled_mm", f"torch {torch.__version__} has no FP8 matmul")
    return torch


def gemm_fp8(mode: str, m: int, n: int, k: int):
    """launch(a, b, c): a (M x K) and b (B^T, N x K) e4m3 bit patterns (uint8), c float32 M x N."""
    if mode not in MODES:
        raise ValueError(f"unknown accumulation {mode!r}; known: {', '.join(MODES)}")
    label = title(mode)
    cp = cupy()
    torch = _torch(label)
    streams = CupyStreams(torch, cp)
    dev = f"cuda:{streams.device}"
    with torch.cuda.device(streams.device):
        one = torch.ones((), dtype=torch.float32, device=dev)
        torch.cuda.synchronize()  # written before any stream's launch reads it
    mp, np_, kp = padded(m), padded(n), padded(k)
    fast = MODES[mode]

    def operand(x, rows: int, cols: int):
        t = torch.from_dlpack(x)
        if t.shape != (rows, cols):  # zero-padded: the pad adds nothing to the products
            z = torch.zeros((rows, cols), dtype=torch.uint8, device=dev)
            z[:t.shape[0], :t.shape[1]] = t
            t = z
        return t.view(torch.float8_e4m3fn)

    def launch(a, b, c):
        try:
            with streams.current():
                ta, tb, tc = operand(a, mp, kp), operand(b, np_, kp), torch.from_dlpack(c)
                out = tc if (mp, np_) == (m, n) else torch.empty((mp, np_), dtype=torch.float32, device=dev)
                torch._scaled_mm(ta, tb.t(), scale_a=one, scale_b=one, out_dtype=torch.float32,
                                 use_fast_accum=fast, out=out)
                if out is not tc:
                    tc.copy_(out[:m, :n])
        except KernelError:
            raise
        except Exception as exc:  # an unsupported shape, type or GPU: the rung FAILS, saying why
            text = " ".join(str(exc).split())[:600]
            raise KernelError(label, "torch._scaled_mm", f"{exc.__class__.__name__}: {text}") from exc

    return launch
