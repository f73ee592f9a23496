"""Collect a program's kernels and profile the ones that matter.

Collectors: torch.profiler (CUPTI) in this process (`TorchCollector`, behind `rooflab.trace()`),
a Python command run under `trace_runner` (the same collector in the command's own process), and
for any other command Nsight Compute's own timeline (every kernel's duration, slower). Then Nsight
Compute once more on the groups that hold most of the GPU time, a sample of launches each.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rooflab.cuda.gpu import torch_reason
from rooflab.cuda.safe_env import package_root
from rooflab.errors import (
    TRACE_NO_KERNELS,
    TRACE_NOT_FOUND,
    TRACE_OVER_BUDGET,
    TRACE_PROGRAM_FAILED,
    ToolError,
    TraceError,
)
from rooflab.measure.profiling import find_ncu
from rooflab.model import trace as model
from rooflab.model.ncu import DURATION, parse_csv

STEP_FILE_ENV = "ROOFLAB_TRACE_STEP_FILE"  # a program may write its step's GPU seconds there (JSON)


class TorchCollector:
    """torch.profiler around a block: CUDA kernels with their launching operators and shapes."""

    def __init__(self, chrome_trace_path: str | None = None):
        self.path = chrome_trace_path
        self.launches: list[model.Launch] = []
        self._prof = None

    def __enter__(self) -> TorchCollector:
        import torch  # noqa: PLC0415
        from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

        torch.cuda.synchronize()
        self._prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                             with_flops=True)
        self._prof.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        import torch  # noqa: PLC0415

        torch.cuda.synchronize()
        self._prof.__exit__(*exc)
        path = self.path or tempfile.mkstemp(prefix="rooflab-trace.", suffix=".json")[1]
        self._prof.export_chrome_trace(path)
        self.launches = model.launches_from_chrome_trace(Path(path).read_text(encoding="utf-8"))
        if not self.path:
            Path(path).unlink(missing_ok=True)


def is_python(argv: Sequence[str]) -> bool:
    return bool(argv) and re.fullmatch(r"python(\d+(\.\d+)?)?", os.path.basename(argv[0])) is not None


def check_command(argv: Sequence[str]) -> None:
    if not argv:
        raise TraceError("no command to trace: rooflab trace -- python train.py ARGS", TRACE_NOT_FOUND)
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        raise TraceError(f"command not found: {argv[0]}", TRACE_NOT_FOUND)


def _run(cmd: list[str], *, env: dict, timeout_s: float, what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace", env=env,
                              timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        raise TraceError(f"{what} ran past the {timeout_s:.0f} s budget", TRACE_OVER_BUDGET) from TimeoutError(out)
    except FileNotFoundError:
        raise TraceError(f"command not found: {cmd[0]}", TRACE_NOT_FOUND) from None


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (proc.stderr or proc.stdout or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "no output"


def _step_seconds(path: str) -> float | None:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    v = doc.get("step_s") if isinstance(doc, dict) else doc
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


@dataclass
class Collected:
    launches: list[model.Launch]
    collector: str
    wall_s: float
    step_s: float | None  # the program's own step time, where it reports one


def run_untraced(argv: Sequence[str], timeout_s: float) -> tuple[float, float | None]:
    """The command's wall time and its reported step time, with nothing attached."""
    check_command(argv)
    with tempfile.TemporaryDirectory(prefix="rooflab-trace.") as tmp:
        step_file = os.path.join(tmp, "step.json")
        t0 = time.perf_counter()
        proc = _run(list(argv), env={**os.environ, STEP_FILE_ENV: step_file}, timeout_s=timeout_s,
                    what="the untraced run")
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise TraceError(f"{argv[0]} exited with {proc.returncode}: {_last_line(proc)}", TRACE_PROGRAM_FAILED)
        return wall, _step_seconds(step_file)


def collect_command(argv: Sequence[str], timeout_s: float, window: str | None = None) -> Collected:
    """Every kernel the command launches, with its duration: through torch.profiler for a Python
    program (where torch is there), else Nsight Compute's timeline."""
    check_command(argv)
    with tempfile.TemporaryDirectory(prefix="rooflab-trace.") as tmp:
        step_file, trace_file = os.path.join(tmp, "step.json"), os.path.join(tmp, "trace.json")
        env = {**os.environ, STEP_FILE_ENV: step_file}
        use_torch = is_python(argv) and torch_reason() is None
        if use_torch:
            cmd = [argv[0], "-m", "rooflab.measure.trace_runner", "--out", trace_file, "--", *argv[1:]]
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root(), env.get("PYTHONPATH")]))
        else:
            cmd = [find_ncu(), "--clock-control", "none", "--target-processes", "all", "--csv", "--page", "raw",
                   "--print-kernel-base", "demangled", "--metrics", DURATION, *argv]
        t0 = time.perf_counter()
        proc = _run(cmd, env=env, timeout_s=timeout_s, what="the traced run")
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise TraceError(f"{argv[0]} exited with {proc.returncode}: {_last_line(proc)}", TRACE_PROGRAM_FAILED)
        if use_torch:
            text = Path(trace_file).read_text(encoding="utf-8") if os.path.isfile(trace_file) else "{}"
            launches = model.launches_from_chrome_trace(text)
            if window:
                launches = model.in_window(json.loads(text), launches, window)
            collector = "torch.profiler (CUPTI)"
        else:
            launches = [model.Launch(r["name"], model.dims(r.get("grid")), model.dims(r.get("block")),
                                     r["metrics"].get(DURATION, 0.0)) for r in parse_csv(proc.stdout)]
            collector = "Nsight Compute timeline (gpu__time_duration, kernels serialised)"
        if not launches:
            raise TraceError(f"{argv[0]} launched no GPU kernel" + (f" inside the range {window!r}" if window else ""),
                             TRACE_NO_KERNELS)
        return Collected(launches, collector, wall, _step_seconds(step_file))


def profile_groups(argv: Sequence[str], groups: Sequence[model.Group], *, per_group: int, max_launches: int,
                   timeout_s: float, progress: Callable[[str], None] | None = None
                   ) -> tuple[dict[str, list[dict]], str | None, str]:
    """Nsight Compute's counters for a sample of each group's launches (one ncu run of the command).

    Returns {group key: [metrics per sampled launch]}, a note where the budget cut it short, and
    ncu's raw output (kept for the record)."""
    if not groups:
        return {}, None, ""
    count = min(max_launches, sum(min(g.launches * 2, g.launches + per_group) for g in groups))
    cmd = [find_ncu(), "--clock-control", "none", "--target-processes", "all", "--csv", "--page", "raw",
           "--kernel-name-base", "demangled", "--print-kernel-base", "demangled",
           "--kernel-name", model.ncu_name_filter(groups), "--launch-count", str(count),
           "--metrics", ",".join(model.TRACE_METRICS), *argv]
    if progress:
        progress(f"Nsight Compute on {len(groups)} kernel groups, up to {count} launches")
    note = None
    try:
        proc = _run(cmd, env=dict(os.environ), timeout_s=timeout_s, what="Nsight Compute")
        out = proc.stdout
        if "ERR_NVGPUCTRPERM" in out + proc.stderr:
            raise ToolError("ncu: access to GPU performance counters is denied (ERR_NVGPUCTRPERM)")
    except TraceError as exc:
        if exc.exit_code != TRACE_OVER_BUDGET:
            raise
        out = str(exc.__cause__ or "")
        note = f"Nsight Compute stopped at the {timeout_s:.0f} s budget; what it had measured is kept"
    return model.ncu_samples(parse_csv(out), groups, per_group), note, out
