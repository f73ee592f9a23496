"""Run the copy, FMA (and optionally every GEMM rung) under Nsight Compute (P8)."""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Callable
from pathlib import Path

from rooflab import ncu
from rooflab.rungs import LADDER

CEILING_LABELS = ("copy", "copy_scalar", "fma")


def ncu_version() -> str:
    try:
        out = subprocess.run([ncu.find_ncu(), "--version"], capture_output=True, text=True, timeout=30).stdout
    except Exception:
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def run(*, with_gemm: bool, n: int, size: int, progress: Callable[[str], None] | None = None,
        raw_dir: str | None = None) -> dict:
    ncu.find_ncu()
    say = progress or (lambda _m: None)
    labels = list(CEILING_LABELS) + ([r.name for r in LADDER] if with_gemm else [])
    kernels = []
    for label in labels:
        say(f"ncu: {label}")
        extra = ["--n", str(n)] if label not in CEILING_LABELS else ["--size", str(size)]
        prof, raw = ncu.profile(label, extra)
        if raw_dir:
            Path(raw_dir).mkdir(parents=True, exist_ok=True)
            (Path(raw_dir) / f"ncu_{label}.csv").write_text(raw)
        kernels.append(prof.to_dict())
    return {
        "ncu_version": ncu_version(),
        "command": " ".join(ncu.command("<label>")[:-3]),
        "metrics": list(ncu.METRICS),
        "config": {"n": n, "size": size, "gemm": with_gemm},
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kernels": kernels,
    }
