"""One training step of a small transformer block in PyTorch, forward and backward, for
`rooflab trace`:

    rooflab trace --range step -- python examples/transformer_step.py              # BF16
    rooflab trace --range step -- python examples/transformer_step.py --dtype fp32

Warm-up steps run first (cuBLAS heuristics, allocator, autotuning); the step that counts runs
inside `torch.profiler.record_function("step")`, timed with CUDA events. Where rooflab asks for it
(ROOFLAB_TRACE_STEP_FILE), the step's time is written there, so `rooflab trace` can compare the
traced step with an untraced one.
"""

from __future__ import annotations

import argparse
import json
import os

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 means FP32 (cuBLAS SGEMM), not TF32
    torch.backends.cudnn.allow_tf32 = False
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    torch.manual_seed(0)
    model = Block(a.dim, a.heads).cuda().to(dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(a.batch, a.seq, a.dim, device="cuda", dtype=dtype)
    target = torch.randn_like(x)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.profiler.record_function("step"):
        start.record()
        step()
        end.record()
    torch.cuda.synchronize()
    step_s = start.elapsed_time(end) / 1e3
    print(f"{a.dtype} step: {step_s * 1e3:.3f} ms (batch {a.batch}, seq {a.seq}, dim {a.dim})")
    if os.environ.get("ROOFLAB_TRACE_STEP_FILE"):
        with open(os.environ["ROOFLAB_TRACE_STEP_FILE"], "w") as fh:
            json.dump({"step_s": step_s, "dtype": a.dtype}, fh)


if __name__ == "__main__":
    main()
