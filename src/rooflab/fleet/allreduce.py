"""All-reduce on one node with whatever NCCL there is: CuPy's NCCL in this process, else one
torch.distributed process per GPU (started through `spawn`), else a section that says why not."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

from rooflab.fleet import spawn
from rooflab.measure import collectives


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_torch_group(cfg: collectives.AllreduceConfig, n: int, out_json: str, log_dir: str, timeout_s: float) -> dict:
    """Start `n` torch ranks (the worker's torch-allreduce-rank), wait, and return rank 0's
    section (or why there is none)."""
    port = free_port()
    Path(out_json).unlink(missing_ok=True)
    args = ["--world", str(n), "--port", str(port), "--out", out_json, "--min", str(cfg.min_bytes),
            "--max", str(cfg.max_bytes), "--factor", str(cfg.factor), "--reps", str(cfg.reps),
            "--warmup", str(cfg.warmup)]
    kids = [spawn.start(f"torch-rank{r}", spawn.worker_cmd("torch-allreduce-rank", "--rank", str(r), *args),
                        log=Path(log_dir) / f"torch_allreduce_rank{r}.log") for r in range(n)]
    spawn.wait_all(kids, timeout_s)
    if Path(out_json).is_file():
        return json.loads(Path(out_json).read_text(encoding="utf-8"))
    why = "; ".join(f"rank {i}: rc {k.rc}{' (timed out)' if k.timed_out else ''}: "
                    f"{spawn.log_tail(k.log, 2)}" for i, k in enumerate(kids))
    return {"available": False, "backend": "torch.distributed", "reason": f"torch ranks failed: {why}",
            "env": collectives.env_record()}


def measure_with_fallback(cfg: collectives.AllreduceConfig, say: Callable[[str], None], log_dir: str,
                          out_hint: str | None = None) -> dict:
    """CuPy's NCCL in this process; else torch.distributed ranks; else 'not available'."""
    sec = collectives.run(cfg, say)
    if sec.get("available") or "NCCL not available" not in (sec.get("reason") or ""):
        return sec
    why_torch = collectives.torch_reason()
    if why_torch:
        sec["reason"] += f"; no torch fallback: {why_torch}"
        return sec
    import torch  # noqa: PLC0415  (present: torch_reason() found it)

    n = torch.cuda.device_count()
    if n < 2:
        sec["reason"] += f"; torch sees {n} GPU"
        return sec
    say(f"CuPy has no NCCL here: torch.distributed, {n} ranks")
    out = out_hint or os.path.join(log_dir, "torch_allreduce.json")
    return run_torch_group(cfg, n, out + ".torch.json", log_dir, timeout_s=600)
