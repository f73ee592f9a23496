"""Run the copy, FMA (and optionally every GEMM rung) under Nsight Compute (P8)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rooflab.errors import ToolError
from rooflab.model.ncu import METRICS, KernelProfile, combine, parse_csv
from rooflab.rungs import LADDER

CEILING_LABELS = ("copy", "copy_scalar", "fma")


def ncu_version() -> str:
    try:
        out = subprocess.run([find_ncu(), "--version"], capture_output=True, text=True, timeout=30).stdout
    except Exception:
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def run(*, with_gemm: bool, n: int, size: int, progress: Callable[[str], None] | None = None,
        raw_dir: str | None = None, extra: list | None = None) -> dict:
    find_ncu()
    say = progress or (lambda _m: None)
    labels = list(CEILING_LABELS) + ([r.name for r in LADDER] if with_gemm else [])
    kernels = []
    for label in labels:
        say(f"ncu: {label}")
        extra = ["--n", str(n)] if label not in CEILING_LABELS else ["--size", str(size)]
        prof, raw = profile(label, extra)
        if raw_dir:
            Path(raw_dir).mkdir(parents=True, exist_ok=True)
            (Path(raw_dir) / f"ncu_{label}.csv").write_text(raw)
        kernels.append(prof.to_dict())
    return {
        "ncu_version": ncu_version(),
        "command": " ".join(command("<label>")[:-3]),
        "metrics": list(METRICS),
        "config": {"n": n, "size": size, "gemm": with_gemm},
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kernels": kernels,
    }


def find_ncu() -> str:
    path = shutil.which("ncu") or next(
        (p for p in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu") if os.path.exists(p)), None)
    if not path:
        raise ToolError("Nsight Compute (ncu) not found on PATH; install it or skip profiling (--no-profile)")
    return path


def command(label: str, extra: list[str] | None = None, ncu: str | None = None) -> list[str]:
    return [ncu or find_ncu(), "--clock-control", "none", "--profile-from-start", "off",
            "--csv", "--page", "raw", "--metrics", ",".join(METRICS),
            sys.executable, "-m", "rooflab.measure.profile_target", label, *(extra or [])]


def profile(label: str, extra: list[str] | None = None, timeout: float = 300) -> tuple[KernelProfile, str]:
    """Profile one label; returns the profile and ncu's raw stdout (kept for the record)."""
    cmd = command(label, extra)
    env = dict(os.environ)
    env["CUPY_CACHE_SAVE_CUDA_SOURCE"] = "0"
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ToolError(f"ncu on {label} took longer than {timeout:.0f} s") from None
    out = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in out:
        raise ToolError("ncu: access to GPU performance counters is denied (ERR_NVGPUCTRPERM); "
                        "ask an administrator to allow profiling, or use --no-profile")
    rows = parse_csv(proc.stdout)
    if proc.returncode != 0 or not rows:
        tail = " | ".join(ln for ln in out.strip().splitlines()[-3:])
        raise ToolError(f"ncu on {label} failed (exit {proc.returncode}): {tail}")
    return combine(label, rows), proc.stdout
