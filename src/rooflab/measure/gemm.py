"""The SGEMM ladder harness, one straight path per rung:
select -> compile -> check -> time -> record. Rendering lives in rooflab.render.

Checks, in order (any failure stops the rung: no time is ever taken for it):
1. at the check size (default 512) against a CPU float64 reference: the seed's
   max-relative check on [0,1) inputs, and the normwise check on [-1,1) inputs;
2. at the timed size against a GPU float64 product, normwise, [-1,1) inputs —
   a missing barrier can pass at small sizes and fail only here;
3. the timed-size run repeated: the two outputs must be bitwise identical
   (these kernels have a fixed summation order, so a difference means a race).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cuda_call, cupy, synchronize
from rooflab.cuda.timing import l2_flusher, time_kernel
from rooflab.errors import KernelError, UsageError
from rooflab.model.check import MIXED, POSITIVE, SEED_RTOL, Check, make_check
from rooflab.rungs import BY_NAME, LADDER
from rooflab.rungs.record import Rung

Progress = Callable[[str], None]


@dataclass
class GemmConfig:
    m: int = 4096
    n: int = 4096
    k: int = 4096
    kernels: list[str] = field(default_factory=lambda: [r.name for r in LADDER])
    reps: int = 20
    warmup: int = 1
    check_n: int = 512
    flush_l2: bool = False
    seed: int | None = None

    def validate(self) -> None:
        for name, v in (("N", self.n), ("M", self.m), ("K", self.k), ("check size", self.check_n)):
            if v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
        if self.reps < 1:
            raise UsageError(f"--reps must be at least 1, got {self.reps}")
        unknown = [k for k in self.kernels if k not in BY_NAME]
        if unknown:
            raise UsageError(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(BY_NAME)}")


def select(names: list[str]) -> list[Rung]:
    return [BY_NAME[n] for n in names]


def prepare(rung: Rung, m: int, n: int, k: int, options: tuple[str, ...] = ()):
    """Compile (cached) and return launch(a, b, c) for one problem shape."""
    if rung.launcher is not None:
        return rung.launcher(m, n, k), {"library": "cuBLAS"}
    kern = get_kernel(rung.source, rung.kernel, options=rung.options + tuple(options), label=rung.name)
    grid, block = rung.grid(m, n, k), rung.block

    def launch(a, b, c):
        kern.launch(grid, block, (a, b, c, np.int32(m), np.int32(n), np.int32(k)))

    info = {"grid": list(grid), "block": list(block), **kern.resources()}
    return launch, info


class _Inputs:
    """Inputs and float64 references shared by every rung of one run."""

    def __init__(self, cfg: GemmConfig, seed: int):
        cp = cupy()
        self.cfg = cfg
        rng = np.random.default_rng(seed)
        cm, cn, ck = (min(cfg.m, cfg.check_n), min(cfg.n, cfg.check_n), min(cfg.k, cfg.check_n))
        self.check_shape = (cm, cn, ck)
        self.small = []
        for label, lo in ((POSITIVE, 0.0), (MIXED, -1.0)):
            a = rng.uniform(lo, 1.0, (cm, ck)).astype(np.float32)
            b = rng.uniform(lo, 1.0, (ck, cn)).astype(np.float32)
            ref = cp.asarray(a.astype(np.float64) @ b.astype(np.float64))
            self.small.append((label, cp.asarray(a), cp.asarray(b), ref))
        m, n, k = cfg.m, cfg.n, cfg.k
        with cuda_call("inputs", "curand uniform / float64 reference GEMM"):
            rs = cp.random.RandomState(seed + 1)
            self.a = rs.uniform(-1.0, 1.0, (m, k), dtype=cp.float32)
            self.b = rs.uniform(-1.0, 1.0, (k, n), dtype=cp.float32)
            self.ref = self.a.astype(cp.float64) @ self.b.astype(cp.float64)
            self.c = cp.empty((m, n), dtype=cp.float32)
            synchronize("float64 reference")


def _checked_run(launch, a, b, c, label: str):
    c.fill(np.nan)
    launch(a, b, c)
    synchronize(label)


def check_rung(rung: Rung, inp: _Inputs) -> list[Check]:
    """Run every check; stop at the first failure."""
    cp = cupy()
    checks: list[Check] = []
    cm, cn, ck = inp.check_shape
    launch, _ = prepare(rung, cm, cn, ck)
    for label, a, b, ref in inp.small:
        c = cp.empty((cm, cn), dtype=cp.float32)
        _checked_run(launch, a, b, c, rung.name)
        names = ["seed max-rel", "normwise"] if label == POSITIVE else ["normwise"]
        for name in names:
            tol = SEED_RTOL if name == "seed max-rel" else rung.normwise_tol
            checks.append(make_check(name, cp, c, ref, shape=inp.check_shape, inputs=label,
                                     reference="CPU float64", tol=tol))
        if not all(ch.passed for ch in checks):
            return checks
    shape = (inp.cfg.m, inp.cfg.n, inp.cfg.k)
    if shape == inp.check_shape:
        return checks  # the timed size is the check size: already covered
    launch, _ = prepare(rung, *shape)
    _checked_run(launch, inp.a, inp.b, inp.c, rung.name)
    checks.append(make_check("normwise", cp, inp.c, inp.ref, shape=shape, inputs=MIXED,
                             reference="GPU float64", tol=rung.normwise_tol))
    if not checks[-1].passed:
        return checks
    first = inp.c.copy()
    _checked_run(launch, inp.a, inp.b, inp.c, rung.name)
    same = bool(cp.array_equal(first, inp.c))
    checks.append(Check("deterministic", shape, MIXED, "previous run", 0.0 if same else 1.0, 0.0, same))
    return checks


def run_rung(rung: Rung, inp: _Inputs, device: DeviceInfo, progress: Progress | None = None) -> dict:
    cfg = inp.cfg
    m, n, k = cfg.m, cfg.n, cfg.k
    rec = {
        "kernel": rung.name, "title": rung.title, "stage": rung.stage, "precision": rung.precision,
        "device": device.name, "m": m, "n": n, "k": k, "flops": rung.flops(m, n, k),
        "model": rung.model(m, n, k), "launch": None, "checks": [], "passed": False,
        "error": None, "timing": None,
    }
    say = progress or (lambda _msg: None)
    try:
        say(f"{rung.name}: compile")
        launch, rec["launch"] = prepare(rung, m, n, k)
        say(f"{rung.name}: check")
        checks = check_rung(rung, inp)
        rec["checks"] = [c.to_dict() for c in checks]
        rec["passed"] = bool(checks) and all(c.passed for c in checks)
        if not rec["passed"]:
            return rec
        say(f"{rung.name}: time {cfg.reps} reps")
        flush = l2_flusher(device.l2_bytes) if cfg.flush_l2 else None
        timing = time_kernel(lambda: launch(inp.a, inp.b, inp.c), label=rung.name, reps=cfg.reps,
                             warmup=cfg.warmup, flush=flush, pci_bus_id=device.pci_bus_id)
        rec["timing"] = timing.to_dict()
    except KernelError as exc:
        rec["error"] = str(exc)
        rec["passed"] = False
    return rec


def run(cfg: GemmConfig, device: DeviceInfo, progress: Progress | None = None) -> dict:
    """Run the selected rungs; returns the 'gemm' section of a results document."""
    cfg.validate()
    seed = cfg.seed if cfg.seed is not None else random.SystemRandom().randrange(2**31)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    if progress:
        progress("inputs and float64 references")
    inp = _Inputs(cfg, seed)
    rungs = [run_rung(r, inp, device, progress) for r in select(cfg.kernels)]
    return {
        "config": {**asdict(cfg), "seed": seed},
        "method": {
            "timer": "CUDA events around each launch, same stream, no host sync between reps",
            "warmup": cfg.warmup, "reps": cfg.reps, "l2_flushed": cfg.flush_l2,
            "statistic": "median (mean and min also reported)",
            "checks": "seed max-rel on [0,1) + normwise on [-1,1) at the check size vs CPU float64; "
                      "normwise at the timed size vs GPU float64; bitwise determinism of two runs",
        },
        "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rungs": rungs,
    }
