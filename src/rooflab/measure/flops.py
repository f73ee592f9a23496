"""The FP32 compute roof: register-only FMA chains (P6).

FLOPs = threads x iterations x FMA per iteration x 2, with FMA per iteration =
FMA_PER_CHAIN_PER_ITER x accumulators (the record rooflab.ceilings.FMA, whose constants
ceilings/fma.cu is built with). Accumulators are swept (1, 2, 4, 8) at several
occupancies: with one warp per scheduler a single dependent chain leaves the FMA pipe idle
while each result is awaited; independent chains (ILP) or more warps (TLP) fill it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from rooflab import ceilings
from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cupy, synchronize
from rooflab.cuda.timing import time_kernel
from rooflab.measure.proven import device_dict
from rooflab.model.floor import floor_check, floor_error, roofline_floor
from rooflab.errors import UsageError
from rooflab.measure import tensor_peaks

X, Y = np.float32(0.9999), np.float32(1.0e-4)  # acc -> y/(1-x) = 1: no overflow, no denormals


@dataclass
class FlopsConfig:
    accumulators: tuple[int, ...] = ceilings.FMA.accumulators  # every compiled instance
    # (blocks per SM, threads per block): the seed's 4x256, full occupancy 8x256, and one warp per scheduler
    occupancies: tuple[tuple[int, int], ...] = ((4, 256), (8, 256), (1, 128))
    target_ms: float = 10.0
    reps: int = 20
    warmup: int = 1
    tensor: bool = True  # also the tensor-core roofs (rooflab.measure.tensor_peaks)

    def validate(self) -> None:
        compiled = ceilings.FMA.accumulators
        bad = [a for a in self.accumulators if a not in compiled]
        if bad:
            raise UsageError(f"accumulators must be among {', '.join(map(str, compiled))} (compiled instances), "
                             f"got {bad}")
        if self.reps < 1:
            raise UsageError("--reps must be at least 1")


def kernel_name(acc: int) -> str:
    return ceilings.FMA.kernel(acc)


def launcher(acc: int, grid: int, block: int, iters: int, out) -> Callable[[], None]:
    """One launch of fma_chain<acc>, built with the record's constants: what the harness checks and
    times, and what Nsight Compute profiles."""
    rec = ceilings.FMA
    kern = get_kernel(rec.source, rec.kernel(acc), rec.options)
    args = (out, np.int32(iters), X, Y)
    return lambda: kern.launch((grid, 1, 1), (block, 1, 1), args)


def emulate(threads: int, acc: int, iters: int) -> np.ndarray:
    """What fma_chain computes, in float64 rounded to float32 after each FMA."""
    t = np.arange(threads, dtype=np.float32)
    accs = [(t * np.float32(1e-3) + np.float32(j)).astype(np.float32) for j in range(acc)]
    for _ in range(iters * ceilings.FMA.fma_per_chain_per_iter):
        accs = [(a.astype(np.float64) * X + Y).astype(np.float32) for a in accs]
    s = np.zeros(threads, dtype=np.float32)
    for a in accs:
        s = (s + a).astype(np.float32)
    return s


def verify(acc: int, threads: int = 256, iters: int = 64) -> float:
    """Max relative difference between the kernel and its emulation (one block)."""
    cp = cupy()
    out = cp.full(threads, np.nan, dtype=cp.float32)
    launcher(acc, 1, threads, iters, out)()
    synchronize(kernel_name(acc))
    got = cp.asnumpy(out).astype(np.float64)
    ref = emulate(threads, acc, iters).astype(np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref) / np.abs(ref)))


def run(cfg: FlopsConfig, device: DeviceInfo, progress: Callable[[str], None] | None = None) -> dict:
    cfg.validate()
    cp = cupy()
    rec = ceilings.FMA
    say = progress or (lambda _m: None)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    peak = device.fp32_peak_flops  # None where the architecture is not in model/arch.py: no % of peak
    rate = peak or device.sm_count * 128 * 2 * device.sm_clock_max_mhz * 1e6  # sizing only: a generous guess
    rows = []
    for acc in cfg.accumulators:
        say(f"verify fma_chain<{acc}>")
        err = verify(acc)
        ok = err <= 1e-5
        for per_sm, block in cfg.occupancies:
            grid = device.sm_count * per_sm
            threads = grid * block
            fma_per_iter = rec.fma_per_iter(acc)
            # size each launch to about target_ms at the peak rate
            iters = max(256, int(cfg.target_ms * 1e-3 * rate / 2 / (threads * fma_per_iter)))
            flops = rec.flops(threads, iters, acc)
            row = {"accumulators": acc, "blocks_per_sm": per_sm, "block": block, "grid": grid,
                   "threads": threads, "iters": iters, "fma_per_iter": fma_per_iter, "flops": flops,
                   "warps_per_scheduler": per_sm * block / 32 / 4, "verified": ok, "verify_rel_err": err,
                   "timing": None}
            if ok:
                say(f"fma_chain<{acc}> grid {grid} x {block}")
                launch = launcher(acc, grid, block, iters, cp.empty(threads, dtype=cp.float32))
                t = time_kernel(launch, label=kernel_name(acc), reps=cfg.reps, warmup=cfg.warmup,
                                pci_bus_id=device.pci_bus_id)
                floor = roofline_floor(device_dict(device), "fp32-simt", flops, 0.0, beyond_l2=False)
                fc = floor_check(t.median_ms * 1e-3, floor, (threads, 1, 1))
                if fc is not None:
                    row["proof"] = [fc.to_dict()]
                    if not fc.passed:
                        row.update(verified=False, error=floor_error(fc, floor))
                        rows.append(row)
                        continue
                row["timing"] = t.to_dict()
                row["tflops"] = flops / (t.median_ms * 1e-3) / 1e12
                row["pct_peak"] = 100.0 * flops / (t.median_ms * 1e-3) / peak if peak else None
            rows.append(row)
    tensor = tensor_peaks.run(device, say) if cfg.tensor else []
    return {
        "config": {**asdict(cfg), "occupancies": [list(o) for o in cfg.occupancies]},
        "method": {"flops": f"threads x iters x ({rec.fma_per_chain_per_iter} x accumulators) FMA x "
                            f"{rec.flop_per_fma} FLOP",
                   "timer": "CUDA events per launch", "reps": cfg.reps, "warmup": cfg.warmup,
                   "verified": "one block checked against a float64-rounded-to-float32 emulation"},
        "fp32_peak_flops": device.fp32_peak_flops,
        "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rows": rows,
        "tensor": tensor,
    }
