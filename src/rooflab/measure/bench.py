"""The open harness for ops other than GEMM (rooflab.ops): check -> time -> record, for any
kernel record (rooflab.targets). GEMM goes through rooflab.measure.gemm, the ladder's harness.

Checks, in order (a failure stops the kernel; no time is taken for it): the output poisoned
with NaN between guard zones, one run against the op's float64 reference at the timed size
(normwise, the op's tolerance for the precision), the guard zones intact, then three runs
bitwise identical.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

import numpy as np

from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cupy, synchronize
from rooflab.errors import CallableError, KernelError, RooflabError, UsageError
from rooflab.measure.guards import Guarded
from rooflab.measure.proven import time_proven
from rooflab.model.check import Check, make_check
from rooflab.ops.record import Op
from rooflab.targets import Callable as PyCallable
from rooflab.targets import CudaKernel, coverage_warning, grid_function

RUNS = 3


def _launcher(target, op: Op, n: tuple[int, ...]):
    """launch(inputs, out), what to record of it, and warnings about the launch."""
    if isinstance(target, CudaKernel):
        kern = get_kernel(target.path, target.name, options=tuple(target.options), label=target.name)
        kern.allow_shared(target.shared_mem)
        block = target.block_for(op.name)
        count = int(np.prod(n))
        try:  # the element count is n; a grid function of the user's may raise
            grid = grid_function(target.grid, block, op.name)(1, count, 1)
        except RooflabError:
            raise
        except Exception as exc:
            raise CallableError(f"{target.name}'s grid function", exc) from exc
        info = {"grid": list(grid), "block": list(block), **kern.resources()}
        warnings = []
        if op.name == "stream":  # one output per element: more threads than that write twice
            warnings = [w for w in [coverage_warning(grid, block, count)] if w]
        return (lambda ins, out: kern.launch(grid, block, _op_call(op, "args", op.args, ins, out, n),
                                             shared_mem=target.shared_mem)), info, warnings
    if isinstance(target, PyCallable):
        call = target.wrap()
        return (lambda ins, out: call(*ins, out)), {"callable": target.name}, []
    raise UsageError(f"not a kernel rooflab can run: {target!r}")


def _op_call(op: Op, what: str, fn, *args):
    """An Op's own functions are the user's code (--op custom): what they raise FAILS the kernel."""
    try:
        return fn(*args)
    except RooflabError:
        raise
    except Exception as exc:
        raise CallableError(f"the op {op.name!r} ({what})", exc) from exc


def run_one(target, op: Op, n: tuple[int, ...], device: DeviceInfo, *, reps: int, seed: int,
            timing: str = "auto", progress: Callable[[str], None] | None = None) -> dict:
    cp = cupy()
    say = progress or (lambda _m: None)
    name = target.name
    precision = getattr(target, "precision", "fp32")
    rec = {"kernel": name, "title": getattr(target, "title", None) or name, "op": op.name, "n": list(n),
           "precision": precision, "flops": None, "bytes": None, "checks": [], "passed": False,
           "error": None, "timing": None, "launch": None, "warnings": []}
    try:
        rec["flops"], rec["bytes"] = _op_call(op, "flops", op.flops, n), _op_call(op, "bytes", op.bytes, n)
        say(f"{name}: compile")
        launch, rec["launch"], rec["warnings"] = _launcher(target, op, n)
        say(f"{name}: check")
        ins = _op_call(op, "inputs", op.inputs, cp, n, seed)
        ref = _op_call(op, "reference", op.reference, cp, *ins)
        out = Guarded(tuple(_op_call(op, "out_shape", op.out_shape, n)))
        shape = (int(np.prod(n)), 1, 1)
        checks = []
        results = []
        for i in range(RUNS):
            out.poison()
            launch(ins, out.array)
            synchronize(name)
            touched = out.touched()
            if i == 0:
                checks.append(make_check("normwise", cp, out.array, ref, shape=shape, inputs="uniform [-1,1)",
                                         reference="GPU float64", tol=op.tolerance(precision)))
                checks.append(Check("guard zones", shape, "", "sentinel", float(touched), 0.0, touched == 0))
                if not all(c.passed for c in checks):
                    break
            results.append(out.array.copy())
        if len(results) == RUNS:
            differ = sum(int(cp.count_nonzero(results[0].view(cp.uint32) != r.view(cp.uint32))) for r in results[1:])
            checks.append(Check("deterministic", shape, "uniform [-1,1)", f"{RUNS} runs", float(differ), 0.0,
                                differ == 0))
        rec["checks"] = [c.to_dict() for c in checks]
        rec["passed"] = all(c.passed for c in checks)
        if not rec["passed"]:
            return rec
        say(f"{name}: time {reps} reps")
        arr, checked = out.array, results[0]

        def recheck():
            return int(cp.count_nonzero(checked.view(cp.uint32) != arr.view(cp.uint32))) + out.touched()

        proof = time_proven(lambda: launch(ins, arr), label=name, reps=reps, device=device, poison=out.poison,
                            recheck=recheck, shape=shape, precision=precision, flops=rec["flops"] or 0.0,
                            nbytes=rec["bytes"] or 0.0, footprint_bytes=rec["bytes"] or 0.0, method=timing)
        rec["checks"] += [c.to_dict() for c in proof.checks]
        if not proof.passed:
            rec["passed"], rec["error"] = False, proof.error
            return rec
        t = proof.timing
        rec["timing"] = t.to_dict()
        s = t.median_ms * 1e-3
        rec["gbs"] = rec["bytes"] / s / 1e9
        rec["gflops"] = rec["flops"] / s / 1e9 if rec["flops"] else None
    except KernelError as exc:
        rec["error"] = str(exc)
    return rec


def run(targets: list, op: Op, n: tuple[int, ...], device: DeviceInfo, *, reps: int = 20, seed: int | None = None,
        timing: str = "auto", progress: Callable[[str], None] | None = None) -> dict:
    """The 'bench' section of a results document: one row per kernel."""
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = [run_one(t, op, n, device, reps=reps, seed=seed, timing=timing, progress=progress) for t in targets]
    return {"op": op.name, "describe": op.describe, "n": list(n), "seed": seed, "started": started,
            "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s,
            "method": {"checks": "normwise against the op's float64 reference at the timed size, guard zones, "
                                 f"{RUNS} runs bitwise identical", "reps": reps, "timing": timing},
            "rows": rows}
