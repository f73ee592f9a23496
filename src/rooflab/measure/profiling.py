"""Run the copy, FMA (and optionally every GEMM rung) under Nsight Compute (P8)."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rooflab.errors import ToolError
from rooflab.measure.gemm import missing_modules
from rooflab.model.ncu import DURATION, METRICS, TENSOR_METRICS, KernelProfile, combine, parse_csv
from rooflab.rungs import LADDER

CEILING_LABELS = ("copy", "copy_scalar", "fma")


def ncu_version() -> str:
    try:
        out = subprocess.run([find_ncu(), "--version"], capture_output=True, text=True, timeout=30).stdout
    except Exception:
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def user_spec(rung, m: int, n: int, k: int) -> dict | None:
    """What profile_target needs to rebuild a user's GEMM kernel in ncu's process at the timed
    M, N, K, or None if it cannot (a Python callable with no import path)."""
    if rung.source:
        return {"source": rung.source, "kernel": rung.kernel, "block": list(rung.block),
                "grid": list(rung.grid(m, n, k)), "options": list(rung.options), "shared_mem": rung.shared_mem}
    path = getattr(rung.launcher, "import_path", None)
    return {"callable": path, "framework": getattr(rung.launcher, "framework", "cupy")} if path else None


def op_spec(target, op_name: str, expr: str, flops_per_element: float, n: tuple[int, ...]) -> dict | None:
    """What profile_target needs to rebuild a user's stream-op kernel at the timed size, or None
    (an op other than stream, or a callable with no import path)."""
    from rooflab.targets import CudaKernel, grid_function  # noqa: PLC0415

    if op_name != "stream":
        return None
    base = {"op": "stream", "expr": expr, "flops_per_element": flops_per_element, "n": list(n)}
    if isinstance(target, CudaKernel):
        block = target.block_for("stream")
        grid = grid_function(target.grid, block, "stream")(1, n[0], 1)  # other ops' grids see n as n
        return {**base, "source": target.path, "kernel": target.name, "block": list(block),
                "grid": list(grid), "options": list(target.options), "shared_mem": target.shared_mem}
    path = getattr(target, "import_path", None)
    return {**base, "callable": path, "framework": target.framework} if path else None


def run_op(target, spec: dict | None, *, progress: Callable[[str], None] | None = None) -> dict:
    """Profile one user kernel of a non-GEMM op at the size it was timed (the 'profile' section)."""
    say = progress or (lambda _m: None)
    find_ncu()
    kernels, skipped = [], []
    if spec is None:
        skipped.append(f"{target.name}: only stream ops, and callables with an import path, can be profiled")
    else:
        say(f"ncu: {target.name}")
        kernels.append(_profile_spec(target.name, [], spec)[0].to_dict())
    return section({"op": spec.get("op") if spec else None, "n": (spec or {}).get("n")}, kernels, skipped)


def _profile_spec(label: str, args: list[str], spec: dict,
                  metrics: tuple[str, ...] = METRICS) -> tuple[KernelProfile, str]:
    import json  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(spec, fh)
    try:
        return profile(label, [*args, "--spec", fh.name], metrics=metrics)
    finally:
        Path(fh.name).unlink(missing_ok=True)


def level_targets(l2_bytes: int, read_floats: int) -> list[dict]:
    """The launches that prove the memory levels: the L2 read at the one-partition and whole-L2
    footprints (the figures the hierarchy draws) and the read-only stream far beyond the L2."""
    from rooflab.measure.memory import l2_footprints  # noqa: PLC0415
    from rooflab.model.hierarchy import WHOLE_L2_SHARE  # noqa: PLC0415

    fps = l2_footprints(l2_bytes)
    out = []
    for what, share in (("one partition", 0.5), ("whole L2", WHOLE_L2_SHARE)):
        fit = [f for f in fps if f <= share * l2_bytes]
        if fit:
            out.append({"level": "L2", "what": f"{what} ({fit[-1] / 2**20:g} MiB)", "label": "l2_read",
                        "footprint_bytes": fit[-1], "args": ["--size", str(fit[-1])]})
    out.append({"level": "DRAM", "what": f"read_float4, one pass over {read_floats * 4 / 2**30:g} GiB",
                "label": "read_stream", "footprint_bytes": read_floats * 4, "args": ["--size", str(read_floats)]})
    return out


def run_levels(l2_bytes: int, read_floats: int, progress: Callable[[str], None] | None = None) -> list[dict]:
    """Profile each level target: ncu's bytes per level, DRAM bytes, the L2 hit rate, the duration,
    and the bytes the kernel read (it prints them)."""
    import re  # noqa: PLC0415

    from rooflab.model.level_evidence import LEVEL_METRICS  # noqa: PLC0415

    say = progress or (lambda _m: None)
    out = []
    for t in level_targets(l2_bytes, read_floats):
        say(f"ncu: {t['label']} {t['what']}")
        try:
            prof, raw = profile(t["label"], t["args"], metrics=(*METRICS, *LEVEL_METRICS))
        except ToolError as exc:
            out.append({**{k: t[k] for k in ("level", "what", "footprint_bytes")}, "error": str(exc)})
            continue
        found = re.search(r"^bytes=(\d+)", raw, re.M)
        out.append({**{k: t[k] for k in ("level", "what", "footprint_bytes")},
                    "kernel_bytes": float(found.group(1)) if found else None, "metrics": prof.metrics})
    return out


def run(*, with_gemm: bool, n: int, size: int, progress: Callable[[str], None] | None = None,
        raw_dir: str | None = None, extra: list | None = None, labels: list[str] | None = None,
        m: int | None = None, k: int | None = None, l2_bytes: int | None = None) -> dict:
    """Profile the ceilings and (with_gemm) the ladder, or exactly `labels`; `extra` are user rungs.
    GEMMs are profiled at the M, N, K given (M and K default to N): the shape that was timed. With
    `l2_bytes`, the memory levels' evidence too (the "levels" list)."""
    find_ncu()
    m, k = m or n, k or n
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
        args = (["--m", str(m), "--n", str(n), "--k", str(k)] if label not in CEILING_LABELS
                else ["--size", str(size)])
        if label in users:
            spec = user_spec(users[label], m, n, k)
            if spec is None:
                skipped.append(f"{label}: a Python callable needs an import path (module:function) to be profiled")
                continue
            prof, raw = _profile_spec(label, args, spec)
        else:
            prof, raw = profile(label, args)
        tensor_error = None
        owner = users.get(label) or rung
        if owner is not None and owner.precision != "fp32":  # tensor-core work: count it on the tensor pipe
            say(f"ncu: {label} (tensor pipe)")
            tensor_error = _add_tensor_counts(prof, label, args, spec if label in users else None)
        if raw_dir:
            Path(raw_dir).mkdir(parents=True, exist_ok=True)
            (Path(raw_dir) / f"ncu_{label}.csv").write_text(raw, encoding="utf-8")
        kernels.append({**prof.to_dict(), **({"tensor_error": tensor_error} if tensor_error else {})})
    return {**section({"m": m, "n": n, "k": k, "size": size, "gemm": with_gemm}, kernels, skipped),
            **({"levels": run_levels(l2_bytes, size, say)} if l2_bytes else {})}


def section(config: dict, kernels: list[dict], skipped: list[str]) -> dict:
    """A 'profile' section: what ran it (ncu's version and command line), the metrics asked for, the
    configuration, and its kernels; also where nothing was profiled (every kernel FAILED), so that the
    document still loads back."""
    try:
        ncu = find_ncu()
    except ToolError:  # nothing was profiled, and no ncu is here to profile with
        ncu = "ncu"
    return {"ncu_version": ncu_version(), "command": " ".join(command("<label>", ncu=ncu)[:-3]),
            "metrics": list(METRICS), "config": config,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "kernels": kernels,
            "skipped": skipped}


def error_line(output: str) -> str:
    """What a failed child process said went wrong, in one line: its `rooflab: error:` line, else a
    Python exception's last line, else its last line of output; never a traceback's frames."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    mine = [ln for ln in lines if ln.startswith("rooflab: error: ")]
    if mine:
        return mine[-1].removeprefix("rooflab: error: ")
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        exc = [ln for ln in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b.*", ln)]
        if exc:
            return exc[-1]
    frames = re.compile(r'^(Traceback \(most recent call last\)|File "|\^+$|~+$)')
    rest = [ln for ln in lines if not frames.match(ln) and not ln.startswith("==PROF==")]
    return rest[-1] if rest else "no output"


def _add_tensor_counts(prof: KernelProfile, label: str, args: list[str], spec: dict | None) -> str | None:
    """A second pass for the tensor-pipe counters, merged into the profile; the error, if it failed
    (a chip without some of them), leaves the first pass as it was."""
    try:
        extra, _raw = (_profile_spec(label, args, spec, metrics=TENSOR_METRICS) if spec
                       else profile(label, args, metrics=TENSOR_METRICS))
    except ToolError as exc:
        return str(exc)
    prof.metrics.update({k: v for k, v in extra.metrics.items() if k != DURATION})
    return None


def find_ncu() -> str:
    path = shutil.which("ncu") or next(
        (p for p in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu") if os.path.exists(p)), None)
    if not path:
        raise ToolError("Nsight Compute (ncu) not found on PATH; install it or skip profiling (--no-profile)")
    return path


def command(label: str, extra: list[str] | None = None, ncu: str | None = None,
            metrics: tuple[str, ...] = METRICS) -> list[str]:
    return [ncu or find_ncu(), "--clock-control", "none", "--profile-from-start", "off",
            "--csv", "--page", "raw", "--metrics", ",".join(metrics),
            sys.executable, "-m", "rooflab.measure.profile_target", label, *(extra or [])]


def profile(label: str, extra: list[str] | None = None, timeout: float = 300,
            metrics: tuple[str, ...] = METRICS) -> tuple[KernelProfile, str]:
    """Profile one label; returns the profile and ncu's raw stdout (kept for the record)."""
    cmd = command(label, extra, metrics=metrics)
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
        raise ToolError(f"ncu on {label} failed (exit {proc.returncode}): {error_line(out)}")
    return combine(label, rows), proc.stdout
