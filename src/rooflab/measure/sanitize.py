"""compute-sanitizer over each selected kernel (`rooflab gemm --sanitize`, `rooflab bench --sanitize`).

Values, guard zones and repeated runs miss some bugs that only a sanitizer sees: a cp.async pipeline
that waits one stage short can produce the right values at every size and still race. Each kernel
runs in a process of rooflab's own (rooflab.measure.sanitize_target: its checks, no timing) under
memcheck (CuPy's memory pool off, so a write past C inside a pooled block is seen), racecheck and
synccheck, at a small odd shape. A reported error becomes a FAILED check on that kernel's record
(apply): the kernel gets no throughput.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rooflab.errors import ToolError
from rooflab.model.check import Check

TOOLS = ("memcheck", "racecheck", "synccheck")
NO_POOL = {"ROOFLAB_NO_POOL": "1", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
SHAPE = (67, 45, 70)  # M, N, K: odd, pairwise distinct, a partial tile in every dimension
CHECK_N = 64
STREAM_N = 4099
TIMEOUT_S = 900
MARK = "ROOFLAB-SANITIZE "  # the target's one result line on its standard output


def find_sanitizer() -> str:
    path = shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer", "/opt/cuda/bin/compute-sanitizer")
         if os.path.exists(p)), None)
    if not path:
        raise ToolError("compute-sanitizer not found on PATH; install the CUDA toolkit's compute-sanitizer "
                        "or run without --sanitize")
    return path


def shape_for(aligned: int) -> tuple[int, int, int]:
    """SHAPE, or for a kernel that needs multiples of `aligned`, the smallest odd multiples of it."""
    return SHAPE if aligned <= 1 else (3 * aligned, aligned, 5 * aligned)


def summary(log: str) -> tuple[int, int, str]:
    """(errors, warnings, the first reported problem) from a compute-sanitizer log."""
    errors = warnings = 0
    for m in re.finditer(r"ERROR SUMMARY: (\d+) error", log):
        errors = max(errors, int(m.group(1)))
    for m in re.finditer(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", log):
        errors, warnings = max(errors, int(m.group(1))), max(warnings, int(m.group(2)))
    first = ""
    for line in log.splitlines():
        text = line.removeprefix("=========").strip()
        if re.match(r"(Invalid|Race|Barrier|Error|Warning|Program hit|Uninitialized|Misaligned)", text) \
                and "SUMMARY" not in text:
            first = text[:200]
            break
    return errors, warnings, first


def last_line(output: str) -> str:
    """The line that says what went wrong in a child's output, never a traceback's frame lines."""
    from rooflab.measure.profiling import error_line  # noqa: PLC0415

    return error_line(output)


def run_one(spec: dict, tool: str, sanitizer: str, timeout: float = TIMEOUT_S) -> dict:
    """One kernel under one tool: {"errors", "warnings", "first", "skipped"}."""
    with tempfile.TemporaryDirectory(prefix="rooflab-sanitize-") as tmp:
        spec_path, log_path = Path(tmp) / "spec.json", Path(tmp) / "sanitizer.log"
        spec_path.write_text(json.dumps(spec))
        cmd = [sanitizer, "--tool", tool, "--log-file", str(log_path), "--print-limit", "20",
               sys.executable, "-m", "rooflab.measure.sanitize_target", str(spec_path)]
        env = {**os.environ, **(NO_POOL if tool == "memcheck" else {})}
        # the child imports this rooflab, wherever it was imported from (a checkout, an install)
        here = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        if tool != "memcheck":
            env.pop("ROOFLAB_NO_POOL", None)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise ToolError(f"compute-sanitizer {tool} on {spec['name']} took longer than {timeout:.0f} s") from None
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
    errors, warnings, first = summary(log + proc.stdout)
    result = next((json.loads(ln[len(MARK):]) for ln in proc.stdout.splitlines() if ln.startswith(MARK)), None)
    if result is None and not errors:  # the target itself could not run: not a hazard, and not silent
        raise ToolError(f"compute-sanitizer {tool} on {spec['name']} did not run it (exit {proc.returncode}): "
                        f"{last_line(proc.stdout + proc.stderr + log)}")
    return {"errors": errors, "warnings": warnings, "first": first,
            "skipped": (result or {}).get("skipped"), "target_error": (result or {}).get("error")}


def run(specs: list[dict], progress: Callable[[str], None] | None = None, runner=None) -> dict:
    """The 'sanitize' section: every spec (rooflab.measure.sanitize_target) under every tool."""
    say = progress or (lambda _m: None)
    runner = runner or run_one
    sanitizer = find_sanitizer()
    kernels = []
    for spec in specs:
        checks, skipped = [], None
        for tool in TOOLS:
            say(f"compute-sanitizer {tool}: {spec['name']}")
            r = runner(spec, tool, sanitizer)
            if r.get("skipped"):
                skipped = r["skipped"]
                break
            text = r["first"] or (f"{r['warnings']} warnings" if r["warnings"] else "")
            checks.append(Check(tool, tuple(spec["shape"]), text, "compute-sanitizer", float(r["errors"]), 0.0,
                                r["errors"] == 0).to_dict())
        kernels.append({"kernel": spec["name"], "checks": checks, "skipped": skipped,
                        "passed": skipped is None and all(c["passed"] for c in checks)})
    return {"tools": list(TOOLS), "memcheck_pool": "off (ROOFLAB_NO_POOL=1)", "kernels": kernels}


def apply(doc: dict) -> None:
    """Add each kernel's sanitizer checks to its record; a reported error FAILS it (no throughput)."""
    by_kernel = {k["kernel"]: k for k in (doc.get("sanitize") or {}).get("kernels", [])}
    recs = (doc.get("gemm") or {}).get("rungs", []) + (doc.get("bench") or {}).get("rows", [])
    for rec in recs:
        found = by_kernel.get(rec["kernel"])
        if not found or rec.get("skipped"):
            continue
        rec["checks"] = [*rec.get("checks", []), *found["checks"]]
        if not found["passed"] and not found.get("skipped"):
            rec["passed"] = False
            rec["timing"] = None
            for key in ("gbs", "gflops"):
                rec.pop(key, None)


def rung_spec(name: str, aligned: int = 1) -> dict:
    # an aligned rung's check size must be a multiple of its alignment too
    return {"kind": "rung", "name": name, "op": "gemm", "shape": list(shape_for(aligned)),
            "check_n": CHECK_N if aligned <= 1 else aligned}


def target_spec(target, op: str, *, expr: str = "x", flops_per_element: float = 0.0,
                op_module: str | None = None) -> dict:
    """A user's kernel (rooflab.targets) as the target process rebuilds it: op "gemm", "stream"
    (with expr, flops_per_element) or "custom" (OP from op_module)."""
    from rooflab.targets import Callable as PyCallable  # noqa: PLC0415
    from rooflab.targets import CudaKernel  # noqa: PLC0415

    if isinstance(target, CudaKernel):
        if callable(target.grid):
            raise ToolError("--sanitize rebuilds the kernel in another process: give the grid as an expression "
                            "or a tuple, not a function")
        spec = {"kind": "cuda", "name": target.label or target.name, "path": target.path, "kernel": target.name,
                "block": list(target.block) if target.block else None,
                "grid": list(target.grid) if isinstance(target.grid, tuple) else target.grid,
                "options": list(target.options), "shared_mem": target.shared_mem}
    elif isinstance(target, PyCallable):
        if not target.import_path:
            raise ToolError("--sanitize rebuilds the callable in another process: it needs an import path "
                            "(module:function or file.py:function)")
        spec = {"kind": "callable", "name": target.name, "callable": target.import_path,
                "framework": target.framework, "precision": target.precision}
    else:
        raise ToolError(f"--sanitize cannot rebuild {target!r} in another process")
    if op == "gemm":
        spec.update(op="gemm", shape=list(SHAPE), check_n=CHECK_N)
    else:
        spec.update(op=op, shape=[STREAM_N], expr=expr, flops_per_element=flops_per_element, op_module=op_module)
    return spec
