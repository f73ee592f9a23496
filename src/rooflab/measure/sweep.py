"""Speed against problem size: the GEMM rungs checked and timed at each N (through the GEMM
harness, every check included, at every size), and the copy's bandwidth against array size
(through the bandwidth harness: where the arrays stop fitting in the L2, the copy falls to HBM
speed).

Time is kept in bounds two ways: fewer timed reps at large N (REPS_AT), fewer still when the
previous size says a launch will be long; and a rung whose launch is predicted (from its time at
the previous size, scaled by N³) to take longer than `max_launch_s` is not run at that size or
above, and says so in its row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from rooflab import rungs
from rooflab.errors import UsageError

Progress = Callable[[str], None]
MAX_N = 32768
# at most this many timed reps up to each N: large sizes are long enough that a few reps are steady
REPS_AT = ((1024, 20), (4096, 10), (8192, 5), (MAX_N, 3))
TARGET_TIMED_S = 0.25  # timed reps per rung and size, at most about this long (from the previous size's time)
COPY_REPS = 50  # the bandwidth harness's minimum (the seed's rule)
MIN_COPY_FLOATS = 1024
MAX_COPY_BYTES = 2**36
REPORT_SIZES = [1024, 2048, 4096, 8192]  # the report's sweep: a few sizes within its time budget


def default_kernels() -> list[str]:
    """The ladder's SIMT and tensor rungs: every built-in rung but the Triton ones."""
    return [r.name for r in rungs.LADDER if not r.name.startswith("triton")]


def parse_sizes(text: str, low: int = 1, high: int = MAX_N, what: str = "size") -> list[int]:
    """'256..16384' (doubling from the first to the last), '256,1000,4096', or both mixed:
    '256..4096,6000'. K/M/G suffixes are binary (for array sizes in bytes: '1M..2G')."""
    out: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        lo_s, sep, hi_s = part.partition("..")
        lo = _count(lo_s, what)
        if not sep:
            out.append(lo)
            continue
        hi = _count(hi_s, what)
        if lo < max(1, low) or hi > high:
            raise UsageError(f"{what}s {part!r} are out of range ({low}..{high})")
        if hi < lo:
            raise UsageError(f"{what}s {part!r}: the range must go up ({lo} is above {hi})")
        v = lo
        while v <= hi:
            out.append(v)
            v *= 2
        if out[-1] != hi:
            out.append(hi)
    if not out:
        raise UsageError(f"no {what}s given (use e.g. 256..16384 or 256,1024,4096)")
    for v in out:
        if not low <= v <= high:
            raise UsageError(f"{what} {v} is out of range ({low}..{high})")
    return sorted(set(out))


def parse_bytes(text: str) -> list[int]:
    """Copy array sizes in bytes: '256K..4G' (doubling), '1M,64M', ..."""
    return parse_sizes(text, low=MIN_COPY_FLOATS * 4, high=MAX_COPY_BYTES, what="array size")


def _count(text: str, what: str) -> int:
    t = text.strip().upper()
    mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    digits = t[:-1] if mult > 1 else t
    if not digits.isdigit():
        raise UsageError(f"not a {what}: {text.strip()!r} (use e.g. 256..16384 or 256,1024,4096)")
    return int(digits) * mult


def reps_for(n: int, cap: int, predicted_ms: float | None) -> int:
    """Timed reps at size n: the schedule's cap for n (and the user's), fewer when the predicted
    launch time says the reps would run past TARGET_TIMED_S; never fewer than 3."""
    reps = min(cap, next(r for top, r in REPS_AT if n <= top))
    if predicted_ms:
        reps = min(reps, max(3, int(TARGET_TIMED_S * 1e3 / predicted_ms)))
    return max(1, reps)


@dataclass
class SweepConfig:
    sizes: list[int] = field(default_factory=lambda: parse_sizes("256..16384"))
    kernels: list[str] = field(default_factory=default_kernels)
    reps: int = 20  # the most timed reps at any size (REPS_AT lowers it at large N)
    check_n: int = 512
    max_launch_s: float = 0.5  # a rung predicted to take longer per launch stops here
    copy_sizes: list[int] = field(default_factory=lambda: parse_bytes("256K..4G"))  # bytes
    copy: bool = True
    gemm: bool = True
    seed: int | None = None

    def validate(self) -> None:
        if self.gemm:
            if not self.sizes:
                raise UsageError("no sizes to sweep")
            if not self.kernels:
                raise UsageError("no kernels to sweep")
            unknown = [k for k in self.kernels if k not in rungs.names()]
            if unknown:
                raise UsageError(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(rungs.names())}")
        if self.reps < 1:
            raise UsageError(f"--reps must be at least 1, got {self.reps}")
        if not self.max_launch_s > 0:
            raise UsageError(f"the per-launch limit must be positive, got {self.max_launch_s}")
        if self.copy:
            small = [b for b in self.copy_sizes if b < MIN_COPY_FLOATS * 4]
            if small:
                raise UsageError(f"copy array sizes must be at least {MIN_COPY_FLOATS * 4} bytes, got {small[0]}")


def _row(rec: dict, n: int, reps: int) -> dict:
    """One rung at one size, from the GEMM harness's record: what the sweep table and picture need."""
    timing = rec.get("timing") or {}
    checks = rec.get("checks") or []
    failed = [c["name"] for c in checks if not c.get("passed")]
    worst = max((c["value"] for c in checks if c.get("name") in ("normwise", "seed max-rel")
                 and isinstance(c.get("value"), (int, float))), default=None)
    ms = timing.get("median_ms") if rec.get("passed") else None
    return {
        "kernel": rec["kernel"], "title": rec.get("title", rec["kernel"]), "precision": rec.get("precision", "fp32"),
        "n": n, "flops": rec.get("flops"), "passed": bool(rec.get("passed")), "skipped": rec.get("skipped"),
        "error": rec.get("error"), "failed_checks": failed, "checks": [c["name"] for c in checks],
        "worst_error": worst, "reps": timing.get("reps", reps) if ms else None,
        "median_ms": ms, "min_ms": timing.get("min_ms") if ms else None,
        "tflops": rec["flops"] / (ms * 1e-3) / 1e12 if ms and rec.get("flops") else None,
        "tuning": (rec.get("tuning") or {}).get("config"),
    }


def _skipped_row(name: str, n: int, why: str) -> dict:
    rung = rungs.get(name)
    return {"kernel": name, "title": rung.title if rung else name, "precision": rung.precision if rung else "fp32",
            "n": n, "flops": 2.0 * n**3, "passed": False, "skipped": why, "error": None, "failed_checks": [],
            "checks": [], "worst_error": None, "reps": None, "median_ms": None, "min_ms": None, "tflops": None,
            "tuning": None}


def gemm_sweep(cfg: SweepConfig, device, progress: Progress | None = None, gemm_run=None, fits=None) -> dict:
    """Every selected rung at every size; `gemm_run(GemmConfig, device, progress)` is the GEMM harness
    (rooflab.measure.gemm.run unless a test passes its own), `fits(GemmConfig, device)` its memory check."""
    from rooflab.measure import gemm  # noqa: PLC0415

    run = gemm_run or gemm.run
    fits = fits or gemm.check_fits
    say = progress or (lambda _m: None)
    rows: list[dict] = []
    last: dict[str, tuple[int, float]] = {}  # kernel -> (N, median ms) at the last size it ran
    stopped: dict[str, str] = {}  # kernel -> why it no longer runs
    for i, n in enumerate(cfg.sizes):
        todo, predicted = [], {}
        for name in cfg.kernels:
            if name in stopped:
                rows.append(_skipped_row(name, n, stopped[name]))
                continue
            if name in last:
                n0, ms0 = last[name]
                predicted[name] = ms0 * (n / n0) ** 3
                if predicted[name] > cfg.max_launch_s * 1e3:
                    stopped[name] = (f"not run from N={n}: a launch would take about {predicted[name] / 1e3:.2g} s "
                                     f"({ms0:.3g} ms at N={n0}, times (N/{n0})³), over the sweep's "
                                     f"{cfg.max_launch_s:g} s per launch")
                    rows.append(_skipped_row(name, n, stopped[name]))
                    continue
            todo.append(name)
        if not todo:
            continue
        # the GEMM harness takes one reps count per call: rungs that want the same count go together
        groups: dict[int, list[str]] = {}
        for name in todo:
            groups.setdefault(reps_for(n, cfg.reps, predicted.get(name)), []).append(name)
        for reps, names in sorted(groups.items(), reverse=True):
            gcfg = gemm.GemmConfig(m=n, n=n, k=n, kernels=names, reps=reps, check_n=min(cfg.check_n, n),
                                   seed=cfg.seed)
            try:
                fits(gcfg, device)
            except UsageError as exc:
                rows += [_skipped_row(name, n, str(exc)) for name in names]
                continue
            say(f"N={n} ({i + 1}/{len(cfg.sizes)}): {len(names)} rungs, {reps} reps")
            section = run(gcfg, device, lambda msg, n=n: say(f"N={n}: {msg}"))
            for rec in section["rungs"]:
                row = _row(rec, n, reps)
                rows.append(row)
                if row["median_ms"]:
                    last[rec["kernel"]] = (n, row["median_ms"])
                elif not row["passed"] and not row["skipped"]:  # a failed check: not timed at larger sizes
                    stopped[rec["kernel"]] = f"not run from N={n} on: it failed at N={n}"
    return {"sizes": list(cfg.sizes), "kernels": list(cfg.kernels), "rows": rows,
            "reps_schedule": [list(x) for x in REPS_AT], "max_launch_s": cfg.max_launch_s}


def _copy_row(section: dict, nbytes: int) -> dict:
    """The float4 copy kernel and cudaMemcpy at one array size, from the bandwidth harness's section."""
    sweep = section.get("sweep") or []
    kern = next((r for r in sweep if r.get("kernel") == "copy_float4"), None)
    runs = [r for r in (kern or {}).get("runs", []) if r.get("verified")]
    best = max(runs, key=lambda r: r["gbs"], default=None)
    mc = [r for r in section.get("memcpy", []) if r.get("verified")]
    memcpy = max(mc, key=lambda r: r["gbs"], default=None)
    verified = bool(kern and kern.get("runs") and all(r.get("verified") for r in kern["runs"]))
    return {"bytes_per_array": nbytes, "floats": nbytes // 4, "verified": verified,
            "gbs": best["gbs"] if best and verified else None, "gbs_best": best["gbs_best"] if best and verified else None,
            "memcpy_gbs": memcpy["gbs"] if memcpy else None,
            "block": kern.get("block") if kern else None, "grid": kern.get("grid") if kern else None}


def copy_sweep(cfg: SweepConfig, device, progress: Progress | None = None, bandwidth_run=None) -> dict:
    """The copy at each array size, through the bandwidth harness (one checked, timed float4 copy
    and a cudaMemcpy per size; the L2 is not flushed, so arrays that fit in it are served from it)."""
    from rooflab.measure import bandwidth  # noqa: PLC0415

    run = bandwidth_run or bandwidth.run
    say = progress or (lambda _m: None)
    rows = []
    limit = 0.4 * device.memory_bytes if device.memory_bytes else None  # source, destination and guards
    for i, nbytes in enumerate(cfg.copy_sizes):
        if limit and 2 * nbytes > limit:
            rows.append({"bytes_per_array": nbytes, "floats": nbytes // 4, "verified": False, "gbs": None,
                         "gbs_best": None, "memcpy_gbs": None, "block": None, "grid": None,
                         "skipped": "two arrays of this size do not fit in this GPU's memory"})
            continue
        bcfg = bandwidth.BandwidthConfig(n=nbytes // 4, reps=COPY_REPS, rounds=1, sweep=False)
        say(f"copy {nbytes / 2**20:g} MiB per array ({i + 1}/{len(cfg.copy_sizes)})")
        rows.append(_copy_row(run(bcfg, device, None), nbytes))
    return {"sizes": list(cfg.copy_sizes), "rows": rows, "l2_bytes": device.l2_bytes,
            "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s,
            "method": "float4 grid-stride copy, block 256, one grid-stride step per thread; bytes = 2 x array "
                      f"(read + write); {COPY_REPS} reps, median; no L2 flush: an array pair that fits in the "
                      "L2 is read from it after the first rep"}


def run(cfg: SweepConfig, device, progress: Progress | None = None, gemm_run=None, bandwidth_run=None,
        fits=None) -> dict:
    """The 'sweep' section of a results document."""
    cfg.validate()
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    out: dict = {"config": asdict(cfg), "started": started}
    if cfg.gemm:
        out["gemm"] = gemm_sweep(cfg, device, progress, gemm_run, fits)
    if cfg.copy:
        out["copy"] = copy_sweep(cfg, device, progress, bandwidth_run)
    out["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return out
