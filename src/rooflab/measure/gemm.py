"""The GEMM harness, one straight path per rung: select -> compile -> check -> time -> record.
The built-in ladder and a user's kernel (rooflab.api) go through the same path.

Checks, in order (any failure stops the rung: no time is ever taken for it). Every checked
output is poisoned with NaN and sits between two guard zones of sentinel words:
1. at the check size (default 512) against a CPU float64 reference: the seed's
   max-relative check on [0,1) inputs, and the normwise check on [-1,1) inputs;
2. at the timed size against a GPU float64 product, normwise, [-1,1) inputs
   (skipped when the timed size is the check size) -- a missing barrier can pass at
   small sizes and fail only here;
3. guard zones after every checked run: a write outside C fails the rung;
4. determinism at the timed size: three runs in a row, then concurrent replicas on
   separate streams (blocks of different launches share SMs, so warps drift apart and a
   missing barrier shows), all bitwise identical to the first run.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import importlib.util
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from rooflab import rungs
from rooflab.cuda import staging
from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cuda_call, cupy, synchronize
from rooflab.cuda.timing import l2_flusher
from rooflab.errors import KernelError, UsageError
from rooflab.measure import tune
from rooflab.measure.guards import Guarded
from rooflab.measure.proven import time_proven
from rooflab.model.check import (
    MIXED,
    POSITIVE,
    SEED_RTOL,
    Check,
    bf16_bits,
    make_check,
    round_inputs,
)
from rooflab.rungs.record import Rung

Progress = Callable[[str], None]
INT_MAX = 2**31 - 1  # kernels take int sizes
SEQUENTIAL_RUNS = 3
REPLICA_BYTES = 1 << 30  # memory the concurrent replicas may take together

CHECKS_TEXT = (
    "the seed's max-relative check on [0,1) inputs and a normwise check on [-1,1) inputs at the check size "
    "against a CPU float64 product; a normwise check at the timed size against a GPU float64 product; guard "
    "zones around C after every checked run; three runs plus concurrent replicas bitwise identical"
)


@dataclass
class GemmConfig:
    m: int = 4096
    n: int = 4096
    k: int = 4096
    kernels: list[str] = field(default_factory=rungs.names)
    reps: int = 20
    warmup: int = 1
    check_n: int = 512
    flush_l2: bool = False
    seed: int | None = None
    timing: str = "events"  # "events" (a pair per launch), "batched" (many launches per pair), "graph", "auto"
    replicas: int = 8  # concurrent copies in the determinism check
    budget_s: float | None = None  # time each rung until its median is known to 0.5%, or this many seconds

    def validate(self, known: list[str] | None = None) -> None:
        for name, v in (("N", self.n), ("M", self.m), ("K", self.k), ("check size", self.check_n)):
            if not isinstance(v, int) or v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
            if v > INT_MAX:
                raise UsageError(f"{name}={v} is more than the kernels' int index allows ({INT_MAX})")
        if self.reps < 1:
            raise UsageError(f"--reps must be at least 1, got {self.reps}")
        if self.timing not in ("events", "batched", "graph", "auto"):
            raise UsageError(f"timing must be events, batched, graph or auto, got {self.timing!r}")
        if self.budget_s is not None and not self.budget_s > 0:
            raise UsageError(f"the timing budget must be a positive number of seconds, got {self.budget_s}")
        if not self.kernels:
            raise UsageError("no kernels given; choose from " + ", ".join(rungs.names()))
        known = rungs.names() if known is None else known
        unknown = [k for k in self.kernels if k not in known]
        if unknown:
            raise UsageError(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(known)}")


def bytes_needed(m: int, n: int, k: int) -> int:
    """Device memory for one run: A, B, C, the float64 product and the float64 copies it is made from."""
    return 4 * (m * k + k * n + m * n) + 8 * (m * n + m * k + k * n)


def check_fits(cfg: GemmConfig, device: DeviceInfo) -> None:
    need = bytes_needed(cfg.m, cfg.n, cfg.k)
    have = device.memory_bytes
    if have and need > 0.9 * have:
        size = f"N={cfg.n}" if cfg.m == cfg.n == cfg.k else f"{cfg.m}×{cfg.n}×{cfg.k}"
        raise UsageError(f"{size} needs {_human(need)} (A, B, C and the float64 reference); this GPU has "
                         f"{_human(have)}")


def _human(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} bytes"


def _resolve(launcher):
    """A launcher record -> make(m, n, k); "module:function:argument" binds the argument first."""
    if callable(launcher):
        return launcher
    module, _, name = launcher.partition(":")
    name, sep, arg = name.partition(":")
    fn = getattr(importlib.import_module(module), name)
    return functools.partial(fn, arg) if sep else fn


def missing_modules(rung: Rung) -> list[str]:
    """The Python modules a rung needs (Rung.needs) that this interpreter cannot import."""
    return [m for m in rung.needs if importlib.util.find_spec(m) is None]


def prepare(rung: Rung, m: int, n: int, k: int):
    """Compile (cached) and return launch(a, b, c) for one problem shape, and what to record of it."""
    if rung.launcher is not None:
        make = _resolve(rung.launcher)
        return make(m, n, k), {"library": rung.launcher if isinstance(rung.launcher, str) else rung.name}
    kern = get_kernel(rung.source, rung.kernel, options=rung.options, label=rung.name)
    kern.allow_shared(rung.shared_mem)
    grid, block, smem = tuple(rung.grid(m, n, k)), tuple(rung.block), rung.shared_mem
    stage, kk = None, k
    if rung.staging:  # a pre-pass hands the kernel its operands in the layout it reads
        stage, kk = staging.stager(rung.source, rung.options, rung.staging, m, n, k, rung.name)

    def launch(a, b, c):
        if stage is not None:
            a, b = stage(a, b)
        kern.launch(grid, block, (a, b, c, np.int32(m), np.int32(n), np.int32(kk)), shared_mem=smem)

    info = {"grid": list(grid), "block": list(block), "dynamic_shared_bytes": smem, **kern.resources()}
    if stage is not None:
        info["staging"] = {"scheme": rung.staging, "k": kk}
    return launch, info


class _Inputs:
    """Inputs and float64 references shared by every rung of one run."""

    def __init__(self, cfg: GemmConfig, seed: int):
        cp = cupy()
        self.cfg = cfg
        rng = np.random.default_rng(seed)
        cm, cn, ck = (min(cfg.m, cfg.check_n), min(cfg.n, cfg.check_n), min(cfg.k, cfg.check_n))
        self.check_shape = (cm, cn, ck)
        self.small_host = []
        for label, lo in ((POSITIVE, 0.0), (MIXED, -1.0)):
            a = rng.uniform(lo, 1.0, (cm, ck)).astype(np.float32)
            b = rng.uniform(lo, 1.0, (ck, cn)).astype(np.float32)
            self.small_host.append((label, a, b))
        self.small = [(label, cp.asarray(a), cp.asarray(b), cp.asarray(a.astype(np.float64) @ b.astype(np.float64)))
                      for label, a, b in self.small_host]
        m, n, k = cfg.m, cfg.n, cfg.k
        if (m, n, k) == self.check_shape:  # the timed size is the check size: reuse its [-1,1) inputs
            _, self.a, self.b, self.ref = self.small[1]
        else:
            with cuda_call("inputs", "curand uniform / float64 reference GEMM"):
                rs = cp.random.RandomState(seed + 1)
                self.a = rs.uniform(-1.0, 1.0, (m, k), dtype=cp.float32)
                self.b = rs.uniform(-1.0, 1.0, (k, n), dtype=cp.float32)
                self.ref = self.a.astype(cp.float64) @ self.b.astype(cp.float64)
                synchronize("float64 reference")
        self.c = Guarded((m, n))
        self._variants: dict = {}

    def variant(self, rung: Rung) -> _Variant:
        """The inputs as this rung takes them, and the reference of its rounded inputs (cached)."""
        key = (rung.inputs, rung.rounding)
        if key not in self._variants:
            self._variants[key] = _Variant(self, *key)
        return self._variants[key]


class _Variant:
    """One input format and rounding: small [(label, a, b, ref, ref_fp32)], and a, b, ref, ref_fp32
    at the timed size. For fp32 inputs with no rounding these are the shared arrays themselves."""

    def __init__(self, inp: _Inputs, inputs: str, rounding: str):
        cp = cupy()
        self.rounding = rounding

        def convert(xp, x):
            return bf16_bits(xp, x) if inputs == "bf16" else x

        self.small = []
        for (label, a, b), (_, da, db, ref32) in zip(inp.small_host, inp.small):
            if rounding == "fp32" and inputs == "fp32":
                self.small.append((label, da, db, ref32, ref32))
                continue
            ra, rb = round_inputs(np, a, rounding), round_inputs(np, b, rounding)
            ref = cp.asarray(ra.astype(np.float64) @ rb.astype(np.float64))
            self.small.append((label, convert(cp, da), convert(cp, db), ref, ref32))
        if rounding == "fp32" and inputs == "fp32":
            self.a, self.b, self.ref, self.ref32 = inp.a, inp.b, inp.ref, inp.ref
            return
        with cuda_call("inputs", f"{rounding} rounding / float64 reference GEMM"):
            ra, rb = round_inputs(cp, inp.a, rounding), round_inputs(cp, inp.b, rounding)
            self.ref = ra.astype(cp.float64) @ rb.astype(cp.float64)
            self.a, self.b, self.ref32 = convert(cp, inp.a), convert(cp, inp.b), inp.ref
            synchronize("float64 reference")


def skip_reason(rung: Rung, cfg: GemmConfig, device: DeviceInfo) -> str | None:
    """Why a rung cannot run here, or None."""
    missing = missing_modules(rung)
    if missing:
        return f"needs the Python package{'s' if len(missing) > 1 else ''} {', '.join(missing)} (not installed here)"
    if rung.exact_cc and tuple(device.cc) != tuple(rung.requires_cc):
        return (f"architecture-specific code for sm_{rung.requires_cc[0]}{rung.requires_cc[1]}a "
                f"(this GPU is sm_{device.cc[0]}{device.cc[1]})")
    if tuple(device.cc) < tuple(rung.requires_cc):
        return (f"needs sm_{rung.requires_cc[0]}{rung.requires_cc[1]} or newer "
                f"(this GPU is sm_{device.cc[0]}{device.cc[1]})")
    if rung.aligned > 1:
        shapes = {(cfg.m, cfg.n, cfg.k), (min(cfg.m, cfg.check_n), min(cfg.n, cfg.check_n), min(cfg.k, cfg.check_n))}
        if any(x % rung.aligned for shape in shapes for x in shape):
            return f"needs M, N and K multiples of {rung.aligned}"
    return None


def _checked_run(launch, a, b, out: Guarded, label: str) -> int:
    """Poison, launch, wait; returns how many guard words the kernel wrote."""
    out.poison()
    launch(a, b, out.array)
    synchronize(label)
    return out.touched()


def _guard_check(touched: int, shape) -> Check:
    return Check("guard zones", tuple(shape), "", "sentinel", float(touched), 0.0, touched == 0)


def _determinism(launch, var: _Variant, inp: _Inputs, rung: Rung, shape) -> Check:
    """Three runs in a row, then replicas at once on their own streams, all equal to the first."""
    cp = cupy()
    first = inp.c.array.copy()
    differ = 0
    for _ in range(SEQUENTIAL_RUNS - 1):
        touched = _checked_run(launch, var.a, var.b, inp.c, rung.name)
        differ += int(cp.count_nonzero(first.view(cp.uint32) != inp.c.array.view(cp.uint32))) + touched
    count = max(0, min(inp.cfg.replicas, REPLICA_BYTES // max(1, 4 * shape[0] * shape[1])))
    outs = [Guarded(inp.c.shape) for _ in range(count)]
    streams = [cp.cuda.Stream(non_blocking=True) for _ in outs]
    for out in outs:
        out.poison()
    synchronize(rung.name)
    for out, stream in zip(outs, streams):
        with stream:
            launch(var.a, var.b, out.array)
    with cuda_call(rung.name, "cudaDeviceSynchronize (replicas)"):
        cp.cuda.Device().synchronize()  # a library or framework may have used a stream of its own
    for out in outs:
        differ += int(cp.count_nonzero(first.view(cp.uint32) != out.array.view(cp.uint32))) + out.touched()
    runs = f"{SEQUENTIAL_RUNS} runs + {count} concurrent"
    return Check("deterministic", tuple(shape), MIXED, runs, float(differ), 0.0, differ == 0)


def _rounding_checks(rung: Rung, cp, out, ref, ref32, shape, inputs: str, reference: str) -> list[Check]:
    """Normwise against the rounded inputs' reference (the check), and against the FP32 inputs
    (reported beside it: what the input rounding costs)."""
    checks = [make_check("normwise", cp, out, ref, shape=shape, inputs=inputs, reference=reference,
                         tol=rung.normwise_tol)]
    if rung.rounding != "fp32" or rung.inputs != "fp32":
        checks[0].reference = f"{reference} of {rung.rounding}-rounded inputs"
        beside = make_check("normwise", cp, out, ref32, shape=shape, inputs=inputs, reference=reference, tol=1.0)
        beside.name = "error vs FP32 inputs"
        checks.append(beside)
    return checks


def check_rung(rung: Rung, inp: _Inputs) -> list[Check]:
    """Run every check; stop at the first failure."""
    cp = cupy()
    var = inp.variant(rung)
    checks: list[Check] = []
    cm, cn, ck = inp.check_shape
    launch, _ = prepare(rung, cm, cn, ck)
    small_out = Guarded((cm, cn))
    for label, a, b, ref, ref32 in var.small:
        touched = _checked_run(launch, a, b, small_out, rung.name)
        if label == POSITIVE:
            checks.append(make_check("seed max-rel", cp, small_out.array, ref, shape=inp.check_shape, inputs=label,
                                     reference="CPU float64", tol=SEED_RTOL))
        checks += _rounding_checks(rung, cp, small_out.array, ref, ref32, inp.check_shape, label, "CPU float64")
        checks.append(_guard_check(touched, inp.check_shape))
        if not all(ch.passed for ch in checks):
            return checks
    shape = (inp.cfg.m, inp.cfg.n, inp.cfg.k)
    launch, _ = prepare(rung, *shape)
    touched = _checked_run(launch, var.a, var.b, inp.c, rung.name)
    if shape != inp.check_shape:
        checks += _rounding_checks(rung, cp, inp.c.array, var.ref, var.ref32, shape, MIXED, "GPU float64")
        checks.append(_guard_check(touched, shape))
        if not all(ch.passed for ch in checks):
            return checks
    checks.append(_determinism(launch, var, inp, rung, shape))
    return checks


def rung_record(rung: Rung, cfg: GemmConfig, device: DeviceInfo) -> dict:
    m, n, k = cfg.m, cfg.n, cfg.k
    return {
        "kernel": rung.name, "title": rung.title, "stage": rung.stage, "precision": rung.precision,
        "inputs": rung.inputs, "rounding": rung.rounding,
        "explain": rung.explain, "device": device.name, "m": m, "n": n, "k": k, "flops": rung.flops(m, n, k),
        "model": rung.model(m, n, k), "launch": None, "checks": [], "passed": False, "error": None,
        "timing": None,
    }


def run_rung(rung: Rung, inp: _Inputs, device: DeviceInfo, progress: Progress | None = None) -> dict:
    cfg = inp.cfg
    rec = rung_record(rung, cfg, device)
    say = progress or (lambda _msg: None)
    rec["skipped"] = skip_reason(rung, cfg, device)
    if rec["skipped"]:
        return rec
    try:
        say(f"{rung.name}: compile")
        launch, rec["launch"] = prepare(rung, cfg.m, cfg.n, cfg.k)
        say(f"{rung.name}: check")
        checks = check_rung(rung, inp)
        rec["checks"] = [c.to_dict() for c in checks]
        rec["passed"] = bool(checks) and all(c.passed for c in checks)
        if not rec["passed"]:
            return rec
        say(f"{rung.name}: time {cfg.reps} reps")
        flush = l2_flusher(device.l2_bytes) if cfg.flush_l2 else None
        var, c = inp.variant(rung), inp.c.array
        checked = c.copy()  # the determinism runs left the checked output here

        def recheck():
            cp = cupy()
            return int(cp.count_nonzero(checked.view(cp.uint32) != c.view(cp.uint32))) + inp.c.touched()

        nbytes = var.a.nbytes + var.b.nbytes + c.nbytes  # compulsory: A and B read, C written once
        proof = time_proven(lambda: launch(var.a, var.b, c), label=rung.name, reps=cfg.reps, device=device,
                            poison=inp.c.poison, recheck=recheck, shape=(cfg.m, cfg.n, cfg.k),
                            precision=rung.precision, flops=rec["flops"], nbytes=nbytes, footprint_bytes=nbytes,
                            warmup=cfg.warmup, flush=flush, method=cfg.timing, budget_s=cfg.budget_s)
        rec["checks"] += [ch.to_dict() for ch in proof.checks]
        if not proof.passed:
            rec["passed"], rec["error"] = False, proof.error
            return rec
        rec["timing"] = proof.timing.to_dict()
    except KernelError as exc:
        rec["error"] = str(exc)
        rec["passed"] = False
    return rec


def run(cfg: GemmConfig, device: DeviceInfo, progress: Progress | None = None,
        extra: list[Rung] | None = None) -> dict:
    """Run the selected rungs (and `extra` records: a user's kernels); the 'gemm' section of a document."""
    extra = list(extra or [])
    cfg.validate(known=rungs.names() + [r.name for r in extra])
    check_fits(cfg, device)
    seed = cfg.seed if cfg.seed is not None else random.SystemRandom().randrange(2**31)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    if progress:
        progress("inputs and float64 references")
    inp = _Inputs(cfg, seed)
    table = {**rungs.by_name(), **{r.name: r for r in extra}}
    recs = []
    for name in cfg.kernels:
        rung, tuning = tune.choose(table[name], device)  # a tunable rung runs its cached winner
        rec = run_rung(rung, inp, device, progress)
        if tuning:
            rec["tuning"] = tuning
        recs.append(rec)
    return {
        "config": {**asdict(cfg), "seed": seed},
        "method": {
            "timer": "CUDA events around each launch, same stream, no host sync between reps"
            if cfg.timing == "events" else f"CUDA events, timing method {cfg.timing!r} (see each rung's timing)",
            "warmup": cfg.warmup, "reps": cfg.reps, "l2_flushed": cfg.flush_l2,
            "statistic": "median (mean and min also reported)",
            "checks": CHECKS_TEXT,
        },
        "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rungs": recs,
    }


def tune_rungs(cfg: GemmConfig, device: DeviceInfo, progress: Progress | None = None) -> dict:
    """Search every variant of the selected tunable rungs at cfg's size; cache the winners."""
    cfg.validate()
    check_fits(cfg, device)
    seed = cfg.seed if cfg.seed is not None else random.SystemRandom().randrange(2**31)
    inp = _Inputs(cfg, seed)

    def median(rung: Rung) -> float | None:
        rec = run_rung(rung, inp, device)
        return rec["timing"]["median_ms"] if rec["passed"] and rec["timing"] else None

    out = [tune.search(rungs.get(name), device, median, progress, n=cfg.n)
           for name in cfg.kernels if rungs.get(name) and rungs.get(name).variants]
    return {"config": {**asdict(cfg), "seed": seed}, "cache": str(tune.cache_path()), "rungs": out}
