"""The GEMM harness, one straight path per rung: select -> compile -> check -> time -> record.
The built-in ladder and a user's kernel (rooflab.api) go through the same path.

Checks, in order (any failure stops the rung: no time is ever taken for it). Every checked
output is poisoned with NaN and sits between two guard zones of sentinel words:
1. at the check size (default 512) against a CPU float64 reference: the seed's
   max-relative check on [0,1) inputs, the componentwise bound
   |C - C64| <= c (K + 4) u (|A|·|B|) on [0,1) and [-1,1) inputs and the normwise check
   on [-1,1) inputs, with tolerances from the precision's error model at that K
   (rooflab.model.tolerance);
   then the same at 509x383x257 for a kernel that takes any shape, unless a checked
   shape is already non-square and odd -- a stride taken from the wrong dimension
   passes at every square size;
2. at the timed size against a GPU float64 product, normwise and componentwise,
   [-1,1) inputs (skipped when the timed size is the check size) -- a missing barrier
   can pass at small sizes and fail only here;
3. guard zones after every checked run: a write outside C fails the rung;
4. determinism at the timed size: three runs in a row, then concurrent replicas on
   separate streams (blocks of different launches share SMs, so warps drift apart and a
   missing barrier shows), all bitwise identical to the first run.
"""

from __future__ import annotations

import datetime as dt
import functools
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
from rooflab.cuda.timing import l2_flusher, merge_rounds
from rooflab.errors import CallableError, KernelError, RooflabError, UsageError
from rooflab.measure import tune
from rooflab.measure.guards import Guarded
from rooflab.measure.libraries import library_launch
from rooflab.measure.proven import Proven, time_proven
from rooflab.model.check import (
    MIXED,
    POSITIVE,
    Check,
    make_check,
    operands,
    round_inputs,
)
from rooflab.model import tolerance
from rooflab.rungs.record import Rung, launch_grid

Progress = Callable[[str], None]
INT_MAX = 2**31 - 1  # kernels take int sizes
SEQUENTIAL_RUNS = 3
REPLICA_BYTES = 1 << 30  # memory the concurrent replicas may take together

CHECKS_TEXT = (
    "the seed's max-relative check on [0,1) inputs, a componentwise error bound on [0,1) and [-1,1) inputs and a "
    "normwise check on [-1,1) inputs (tolerances from the precision's error model at each K) at the check size and "
    "at 509x383x257 against a CPU float64 product; normwise and componentwise at the timed size against a GPU "
    "float64 product; guard zones around C after every checked run; three runs plus concurrent replicas bitwise "
    "identical"
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
    rounds: int = 1  # interleaved timing rounds: every rung's reps, then again, so peers see the same clock states

    def validate(self, known: list[str] | None = None) -> None:
        for name, v in (("N", self.n), ("M", self.m), ("K", self.k), ("check size", self.check_n)):
            if not isinstance(v, int) or v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
            if v > INT_MAX:
                raise UsageError(f"{name}={v} is more than the kernels' int index allows ({INT_MAX})")
        if self.reps < 1:
            raise UsageError(f"--reps must be at least 1, got {self.reps}")
        if not isinstance(self.rounds, int) or self.rounds < 1:
            raise UsageError(f"--rounds must be at least 1, got {self.rounds}")
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
    """Device memory for one run: A, B, C, the float64 products (of the inputs and of their absolute
    values) and the float64 copies they are made from."""
    return 4 * (m * k + k * n + m * n) + 8 * (2 * m * n + m * k + k * n)


def check_fits(cfg: GemmConfig, device: DeviceInfo) -> None:
    need = bytes_needed(cfg.m, cfg.n, cfg.k)
    have = device.memory_bytes
    if have and need > 0.9 * have:
        size = f"N={cfg.n}" if cfg.m == cfg.n == cfg.k else f"{cfg.m}×{cfg.n}×{cfg.k}"
        raise UsageError(f"{size} needs {_human(need)} (A, B, C and the float64 references); this GPU has "
                         f"{_human(have)}")


def _human(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} bytes"


@functools.cache
def _sm_count() -> int:
    return int(cupy().cuda.Device().attributes["MultiProcessorCount"])


def missing_modules(rung: Rung) -> list[str]:
    """The Python modules a rung needs (Rung.needs) that this interpreter cannot import."""
    return [m for m in rung.needs if importlib.util.find_spec(m) is None]


def prepare(rung: Rung, m: int, n: int, k: int):
    """Compile (cached) and return launch(a, b, c) for one problem shape, and what to record of it."""
    if rung.library is not None:
        launch, name = library_launch(rung, m, n, k)
        return launch, {"library": name}
    if rung.launcher is not None:  # a user's Python callable
        return rung.launcher(m, n, k), {"library": rung.name}
    kern = get_kernel(rung.source, rung.kernel, options=rung.options, label=rung.name)
    kern.allow_shared(rung.shared_mem)
    try:  # a user's grid function may raise: that kernel FAILS
        grid = launch_grid(rung.grid, m, n, k, sms=_sm_count)
    except RooflabError:
        raise
    except Exception as exc:
        raise CallableError(f"{rung.name}'s grid function", exc) from exc
    block, smem = tuple(rung.block), rung.shared_mem
    stage, kk = None, k
    if rung.staging:  # a pre-pass hands the kernel its operands in the layout it reads
        stage, kk = staging.stager(rung.source, rung.options, rung.staging, m, n, k, rung.name)

    def launch(a, b, c):
        if stage is not None:
            a, b = stage(a, b, c) if staging.takes_c(rung.staging) else stage(a, b)
        kern.launch(grid, block, (a, b, c, np.int32(m), np.int32(n), np.int32(kk)), shared_mem=smem)

    info = {"grid": list(grid), "block": list(block), "dynamic_shared_bytes": smem, **kern.resources()}
    if stage is not None:
        info["staging"] = {"scheme": rung.staging, "k": kk}
    return launch, info


ODD_SHAPE = (509, 383, 257)  # M, N, K: odd and pairwise distinct, so a swapped stride or edge cannot pass


def needs_odd_check(*shapes: tuple[int, int, int]) -> bool:
    """Square sizes hide a stride taken from the wrong dimension (C indexed with K for N): unless a
    checked shape is already non-square with an odd size, an extra check runs at ODD_SHAPE."""
    return not any(len(set(s)) == 3 and any(x % 2 for x in s) for s in shapes)


@dataclass
class _Set:
    """One checked problem: host inputs (for the rounded variants), device inputs, the float64
    product of the FP32 inputs and the float64 product of their absolute values."""

    shape: tuple[int, int, int]
    label: str
    a_host: np.ndarray | None
    b_host: np.ndarray | None
    a: object
    b: object
    ref: object
    absprod: object


def _host_set(cp, rng, shape, label: str, lo: float) -> _Set:
    m, n, k = shape
    a = rng.uniform(lo, 1.0, (m, k)).astype(np.float32)
    b = rng.uniform(lo, 1.0, (k, n)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return _Set(shape, label, a, b, cp.asarray(a), cp.asarray(b), cp.asarray(a64 @ b64),
                cp.asarray(np.abs(a64) @ np.abs(b64)))


class _Inputs:
    """Inputs and float64 references shared by every rung of one run."""

    def __init__(self, cfg: GemmConfig, seed: int):
        cp = cupy()
        self.cfg = cfg
        rng = np.random.default_rng(seed)
        cm, cn, ck = (min(cfg.m, cfg.check_n), min(cfg.n, cfg.check_n), min(cfg.k, cfg.check_n))
        self.check_shape = (cm, cn, ck)
        m, n, k = cfg.m, cfg.n, cfg.k
        self.small = [_host_set(cp, rng, self.check_shape, label, lo) for label, lo in ((POSITIVE, 0.0), (MIXED, -1.0))]
        # the odd shape's inputs come from their own generator: the check size's stay as they were
        odd_rng = np.random.default_rng([seed, 509])
        self.odd = ([_host_set(cp, odd_rng, ODD_SHAPE, label, lo) for label, lo in ((POSITIVE, 0.0), (MIXED, -1.0))]
                    if needs_odd_check(self.check_shape, (m, n, k)) else [])
        if (m, n, k) == self.check_shape:  # the timed size is the check size: reuse its [-1,1) inputs
            self.timed = self.small[1]
        else:
            with cuda_call("inputs", "curand uniform / float64 reference GEMM"):
                rs = cp.random.RandomState(seed + 1)
                a = rs.uniform(-1.0, 1.0, (m, k), dtype=cp.float32)
                b = rs.uniform(-1.0, 1.0, (k, n), dtype=cp.float32)
                a64, b64 = a.astype(cp.float64), b.astype(cp.float64)
                ref = a64 @ b64
                absprod = cp.abs(a64) @ cp.abs(b64)
                del a64, b64
                synchronize("float64 reference")
            self.timed = _Set((m, n, k), MIXED, None, None, a, b, ref, absprod)
        self.a, self.b, self.ref = self.timed.a, self.timed.b, self.timed.ref
        self.c = Guarded((m, n))
        self._variants: dict = {}

    def variant(self, rung: Rung) -> _Variant:
        """The inputs as this rung takes them, and the reference of its rounded inputs (cached)."""
        key = (rung.inputs, rung.rounding)
        if key not in self._variants:
            self._variants[key] = _Variant(self, *key)
        return self._variants[key]


@dataclass
class _Checked:
    """One checked problem as a rung takes it: its inputs, the reference of its rounded inputs, and
    the FP32 inputs' own references (ref32, absprod) for the componentwise bound."""

    shape: tuple[int, int, int]
    label: str
    a: object
    b: object
    ref: object
    ref32: object
    absprod: object


class _Variant:
    """One input format and rounding: the check-size and odd-shape problems (small, odd) and the
    timed one (timed). For fp32 inputs with no rounding these are the shared arrays themselves."""

    def __init__(self, inp: _Inputs, inputs: str, rounding: str):
        self.rounding = rounding
        self.small = [self._host(s, inputs, rounding) for s in inp.small]
        self.odd = [self._host(s, inputs, rounding) for s in inp.odd]
        self.timed = (self.small[1] if inp.timed is inp.small[1] else self._device(inp.timed, inputs, rounding))
        self.a, self.b, self.ref, self.ref32 = self.timed.a, self.timed.b, self.timed.ref, self.timed.ref32

    def _host(self, s: _Set, inputs: str, rounding: str) -> _Checked:
        cp = cupy()
        if rounding == "fp32" and inputs == "fp32":
            return _Checked(s.shape, s.label, s.a, s.b, s.ref, s.ref, s.absprod)
        ra, rb = round_inputs(np, s.a_host, rounding), round_inputs(np, s.b_host, rounding)
        ref = cp.asarray(ra.astype(np.float64) @ rb.astype(np.float64))
        return _Checked(s.shape, s.label, *operands(cp, s.a, s.b, inputs), ref, s.ref, s.absprod)

    def _device(self, s: _Set, inputs: str, rounding: str) -> _Checked:
        cp = cupy()
        if rounding == "fp32" and inputs == "fp32":
            return _Checked(s.shape, s.label, s.a, s.b, s.ref, s.ref, s.absprod)
        with cuda_call("inputs", f"{rounding} rounding / float64 reference GEMM"):
            ra, rb = round_inputs(cp, s.a, rounding), round_inputs(cp, s.b, rounding)
            ref = ra.astype(cp.float64) @ rb.astype(cp.float64)
            checked = _Checked(s.shape, s.label, *operands(cp, s.a, s.b, inputs), ref, s.ref, s.absprod)
            synchronize("float64 reference")
        return checked


def skip_reason(rung: Rung, cfg: GemmConfig, device: DeviceInfo) -> str | None:
    """Why a rung cannot run here, or None."""
    missing = missing_modules(rung)
    if missing:
        return f"needs the Python package{'s' if len(missing) > 1 else ''} {', '.join(missing)} (not installed here)"
    what = f" for {rung.requires_what}" if rung.requires_what else ""
    if rung.exact_cc and tuple(device.cc) != tuple(rung.requires_cc):
        return (f"architecture-specific code for sm_{rung.requires_cc[0]}{rung.requires_cc[1]}a{what} "
                f"(this GPU is sm_{device.cc[0]}{device.cc[1]})")
    if tuple(device.cc) < tuple(rung.requires_cc):
        return (f"needs sm_{rung.requires_cc[0]}{rung.requires_cc[1]} or newer{what} "
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


def _value_checks(rung: Rung, cp, out, p: _Checked, reference: str) -> list[Check]:
    """Componentwise against the FP32 inputs' error bound; on [-1,1) inputs also normwise against the
    rounded inputs' reference, and normwise against the FP32 inputs (reported beside them: what the
    input rounding costs)."""
    k = p.shape[2]
    checks = [make_check("componentwise", cp, out, p.ref32, shape=p.shape, inputs=p.label, reference=reference,
                         tol=rung.componentwise_tolerance(k), absprod=p.absprod)]
    if p.label != MIXED:  # the normwise model is a random walk of mixed-sign errors
        return checks
    checks.insert(0, make_check("normwise", cp, out, p.ref, shape=p.shape, inputs=p.label, reference=reference,
                                tol=rung.normwise_tolerance(k)))
    if rung.rounding != "fp32" or rung.inputs != "fp32":
        checks[0].reference = f"{reference} of {rung.rounding}-rounded inputs"
        beside = make_check("normwise", cp, out, p.ref32, shape=p.shape, inputs=p.label, reference=reference,
                            tol=1.0)
        beside.name = "error vs FP32 inputs"
        checks.append(beside)
    return checks


def _small_checks(rung: Rung, cp, problems: list[_Checked], checks: list[Check]) -> bool:
    """The CPU-referenced checks of one shape (the check size, or the odd shape); False at a failure."""
    shape = problems[0].shape
    launch, _ = prepare(rung, *shape)
    out = Guarded(shape[:2])
    for p in problems:
        touched = _checked_run(launch, p.a, p.b, out, rung.name)
        if p.label == POSITIVE:
            checks.append(make_check("seed max-rel", cp, out.array, p.ref, shape=shape, inputs=p.label,
                                     reference="CPU float64", tol=tolerance.seed_max_rel(rung.precision, shape[2])))
        checks += _value_checks(rung, cp, out.array, p, "CPU float64")
        checks.append(_guard_check(touched, shape))
        if not all(ch.passed for ch in checks):
            return False
    return True


def check_rung(rung: Rung, inp: _Inputs) -> list[Check]:
    """Run every check; stop at the first failure."""
    cp = cupy()
    var = inp.variant(rung)
    checks: list[Check] = []
    if not _small_checks(rung, cp, var.small, checks):
        return checks
    if var.odd and rung.aligned == 1 and not _small_checks(rung, cp, var.odd, checks):
        return checks
    shape = (inp.cfg.m, inp.cfg.n, inp.cfg.k)
    launch, _ = prepare(rung, *shape)
    touched = _checked_run(launch, var.a, var.b, inp.c, rung.name)
    if shape != inp.check_shape:
        checks += _value_checks(rung, cp, inp.c.array, var.timed, "GPU float64")
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


Timer = Callable[[], Proven]


def ready_rung(rung: Rung, inp: _Inputs, device: DeviceInfo, progress: Progress | None = None) \
        -> tuple[dict, Timer | None]:
    """Compile and check one rung: its record, and what takes one proven timing of it (None where it is
    skipped or failed). The timer recompares each timed run's last output with the checked one."""
    cfg = inp.cfg
    rec = rung_record(rung, cfg, device)
    say = progress or (lambda _msg: None)
    rec["skipped"] = skip_reason(rung, cfg, device)
    if rec["skipped"]:
        return rec, None
    try:
        say(f"{rung.name}: compile")
        launch, rec["launch"] = prepare(rung, cfg.m, cfg.n, cfg.k)
        say(f"{rung.name}: check")
        checks = check_rung(rung, inp)
    except KernelError as exc:
        rec["error"], rec["passed"] = str(exc), False
        return rec, None
    rec["checks"] = [c.to_dict() for c in checks]
    rec["passed"] = bool(checks) and all(c.passed for c in checks)
    if not rec["passed"]:
        return rec, None
    flush = l2_flusher(device.l2_bytes) if cfg.flush_l2 else None
    var, c = inp.variant(rung), inp.c.array
    checked = c.copy()  # the determinism runs left the checked output here

    def recheck():
        cp = cupy()
        return int(cp.count_nonzero(checked.view(cp.uint32) != c.view(cp.uint32))) + inp.c.touched()

    nbytes = var.a.nbytes + var.b.nbytes + c.nbytes  # compulsory: A and B read, C written once

    def timer() -> Proven:
        say(f"{rung.name}: time {cfg.reps} reps")
        return time_proven(lambda: launch(var.a, var.b, c), label=rung.name, reps=cfg.reps, device=device,
                           poison=inp.c.poison, recheck=recheck, shape=(cfg.m, cfg.n, cfg.k),
                           precision=rung.precision, flops=rec["flops"], nbytes=nbytes, footprint_bytes=nbytes,
                           warmup=cfg.warmup, flush=flush, method=cfg.timing, budget_s=cfg.budget_s)

    return rec, timer


def time_rung(rec: dict, timer: Timer, proofs: list[Proven]) -> bool:
    """Take one more proven timing into `proofs` and `rec`; False (the rung FAILED) where it does not stand."""
    try:
        proof = timer()
    except KernelError as exc:
        rec["error"], rec["passed"], rec["timing"] = str(exc), False, None
        return False
    rec["checks"] += [ch.to_dict() for ch in proof.checks]
    if not proof.passed:
        rec["passed"], rec["error"], rec["timing"] = False, proof.error, None
        return False
    proofs.append(proof)
    rec["timing"] = merge_rounds([p.timing for p in proofs]).to_dict()
    return True


def run_rung(rung: Rung, inp: _Inputs, device: DeviceInfo, progress: Progress | None = None) -> dict:
    rec, timer = ready_rung(rung, inp, device, progress)
    if timer is not None:
        time_rung(rec, timer, [])
    return rec


def _run_all(rungs_: list[Rung], inp: _Inputs, device: DeviceInfo, progress: Progress | None,
             labels: list[str] | None = None) -> list[dict]:
    """Every rung's record. One round: each rung checked and timed before the next is compiled (one checked C
    held at a time). More: every rung checked first, then timed in cfg.rounds interleaved rounds (one rung's
    reps after the other's, round after round), so peers share the clock and power states of the run.
    `labels` name the rungs in progress lines (variants of one rung share its name)."""
    say = progress or (lambda _msg: None)

    def told(i: int) -> Progress | None:
        return progress if labels is None or progress is None else (lambda msg: progress(f"{labels[i]}: {msg}"))

    if inp.cfg.rounds == 1:
        return [run_rung(r, inp, device, told(i)) for i, r in enumerate(rungs_)]
    ready = [ready_rung(r, inp, device, told(i)) for i, r in enumerate(rungs_)]
    proofs: list[list[Proven]] = [[] for _ in ready]
    live = [i for i, (_rec, timer) in enumerate(ready) if timer is not None]
    for rnd in range(inp.cfg.rounds):
        say(f"round {rnd + 1}/{inp.cfg.rounds}")
        live = [i for i in live if time_rung(ready[i][0], ready[i][1], proofs[i])]
    return [rec for rec, _timer in ready]


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
    chosen = [tune.choose(table[name], device) for name in cfg.kernels]  # a tunable rung runs its cached winner
    recs = _run_all([rung for rung, _tuning in chosen], inp, device, progress)
    for rec, (_rung, tuning) in zip(recs, chosen):
        if tuning:
            rec["tuning"] = tuning
    return {
        "config": {**asdict(cfg), "seed": seed},
        "method": {
            "timer": "CUDA events around each launch, same stream, no host sync between reps"
            if cfg.timing == "events" else f"CUDA events, timing method {cfg.timing!r} (see each rung's timing)",
            "warmup": cfg.warmup, "reps": cfg.reps, "rounds": cfg.rounds, "l2_flushed": cfg.flush_l2,
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

    def medians(cands: list[tuple[str, Rung]]) -> list[float | None]:
        recs = _run_all([r for _label, r in cands], inp, device, progress, [label for label, _r in cands])
        return [rec["timing"]["median_ms"] if rec["passed"] and rec["timing"] else None for rec in recs]

    out = [tune.search(rungs.get(name), device, progress=progress, n=cfg.n, measure_all=medians)
           for name in cfg.kernels if rungs.get(name) and rungs.get(name).variants]
    return {"config": {**asdict(cfg), "seed": seed}, "cache": str(tune.cache_path()), "rungs": out}
