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
from rooflab.measure.gemm import missing_modules
from rooflab.model.ncu import METRICS, KernelProfile, combine, parse_csv
from rooflab.rungs import LADDER

CEILING_LABELS = ("copy", "copy_scalar", "fma")


def ncu_version() -> str:
    try:
        out = subprocess.run([find_ncu(), "--version"], capture_output=True, text=True, timeout=30).stdout
    except Exception:
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def user_spec(rung, n: int) -> dict | None:
    """What profile_target needs to rebuild a user's kernel in ncu's process, or None if it cannot
    (a Python callable with no import path)."""
    if rung.source:
        return {"source": rung.source, "kernel": rung.kernel, "block": list(rung.block),
                "grid": list(rung.grid(n, n, n)), "options": list(rung.options), "shared_mem": rung.shared_mem}
    path = getattr(rung.launcher, "import_path", None)
    return {"callable": path, "framework": getattr(rung.launcher, "framework", "cupy")} if path else None


def run(*, with_gemm: bool, n: int, size: int, progress: Callable[[str], None] | None = None,
        raw_dir: str | None = None, extra: list | None = None, labels: list[str] | None = None) -> dict:
    """Profile the ceilings and (with_gemm) the ladder, or exactly `labels`; `extra` are user rungs."""
    import json  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    find_ncu()
    say = progress or (lambda _m: None)
    users = {r.name: r for r in extra or []}
    if labels is None:
        labels = list(CEILING_LABELS) + ([r.name for r in LADDER] + list(users) if with_gemm else [])
    kernels, skipped = [], []
    for label in labels:
        rung = next((r for r in LADDER if r.name == label), None)
        missing = missing_modules(rung) if rung else []
        if missing:
            skipped.append(f"{label}: needs {', '.join(missing)} (not installed here)")
            continue
        say(f"ncu: {label}")
        args = ["--n", str(n)] if label not in CEILING_LABELS else ["--size", str(size)]
        if label in users:
            spec = user_spec(users[label], n)
            if spec is None:
                skipped.append(f"{label}: a Python callable needs an import path (module:function) to be profiled")
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
                json.dump(spec, fh)
            args += ["--spec", fh.name]
        try:
            prof, raw = profile(label, args)
        finally:
            if label in users:
                Path(fh.name).unlink(missing_ok=True)
        if raw_dir:
            Path(raw_dir).mkdir(parents=True, exist_ok=True)
            (Path(raw_dir) / f"ncu_{label}.csv").write_text(raw, encoding="utf-8")
        kernels.append(prof.to_dict())
    return {
        "ncu_version": ncu_version(),
        "command": " ".join(command("<label>")[:-3]),
        "metrics": list(METRICS),
        "config": {"n": n, "size": size, "gemm": with_gemm},
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kernels": kernels,
        "skipped": skipped,
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
