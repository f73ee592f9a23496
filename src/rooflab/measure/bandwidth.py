"""The memory roof: device-to-device copy bandwidth and its launch sweep (P3, P4).

bytes = 2 * n * 4 (each float read once and written once). Every configuration
first runs once on a NaN-poisoned output and must copy the input exactly before
it is timed. The sweep runs `rounds` times, interleaved, so the table can show
how much a figure moves from one round to the next.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from rooflab import ceilings
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cuda_call, cupy, synchronize
from rooflab.cuda.timing import time_kernel
from rooflab.measure.proven import time_proven
from rooflab.errors import KernelError, UsageError
from rooflab.measure import read_stream
from rooflab.measure.guards import Guarded
from rooflab.measure.streams import launcher
from rooflab.rungs.record import cdiv

_MAX_THREADS_PER_SM_ATTR = 39  # cudaDevAttrMaxThreadsPerMultiProcessor
_D2D = 3  # cudaMemcpyDeviceToDevice



@dataclass
class BandwidthConfig:
    n: int = 256 * 2**20  # floats per array: 1 GiB
    reps: int = 50
    warmup: int = 1
    blocks: tuple[int, ...] = (128, 256, 512, 1024)
    rounds: int = 2
    sweep: bool = True

    def validate(self) -> None:
        if self.n < 1024:
            raise UsageError(f"--size must be at least 1K floats, got {self.n}")
        if self.reps < 50:
            raise UsageError(f"--reps must be at least 50 for bandwidth (seed 002), got {self.reps}")
        if any(b < 32 or b > 1024 or b % 32 for b in self.blocks):
            raise UsageError("block sizes must be multiples of 32 between 32 and 1024")


def grids_for(device: DeviceInfo, block: int, per_thread: int, n: int, threads_per_sm: int) -> dict[str, int]:
    """Grid sizes from one resident wave up to one grid-stride step per thread."""
    wave = ceilings.resident_wave(device.sm_count, threads_per_sm, block)
    full = cdiv(cdiv(n, per_thread), block)
    grids = {"1 wave": wave, "4 waves": 4 * wave, "1 step/thread": full}
    return {k: v for k, v in grids.items() if v <= full or k == "1 step/thread"}


def _gbs(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def _measure(label: str, launch: Callable[[], None], verify: Callable[[], bool], nbytes: float,
             cfg: BandwidthConfig, device: DeviceInfo, poison: Callable[[], None] | None = None,
             flops: float = 0.0) -> dict:
    """Checked run first (the caller poisoned the output), then the timed reps; with `poison`, the
    last timed launch is checked too and the median held against the roofline floor."""
    launch()
    synchronize(label)
    if not verify():
        return {"label": label, "verified": False, "timing": None}
    if poison is None:
        t = time_kernel(launch, label=label, reps=cfg.reps, warmup=cfg.warmup, pci_bus_id=device.pci_bus_id)
        proof = []
    else:
        p = time_proven(launch, label=label, reps=cfg.reps, device=device, poison=poison,
                        recheck=lambda: 0 if verify() else 1, shape=(int(nbytes), 1, 1), precision="fp32",
                        flops=flops, nbytes=nbytes, footprint_bytes=nbytes, warmup=cfg.warmup)
        proof = [c.to_dict() for c in p.checks]
        if not p.passed:
            return {"label": label, "verified": False, "timing": None, "error": p.error, "proof": proof}
        t = p.timing
    return {"label": label, "verified": True, "timing": t.to_dict(), "bytes": nbytes,
            "gbs": _gbs(nbytes, t.median_ms), "gbs_best": _gbs(nbytes, t.min_ms), "proof": proof}


def _copy_measure(label, launch, guarded: Guarded, src, cfg, device) -> dict:
    """The destination is poisoned between guard zones: a copy must match the input exactly and
    write nothing outside it."""
    cp = cupy()
    guarded.poison()
    touched = {}

    def verify():
        touched["n"] = guarded.touched()
        return touched["n"] == 0 and bool(cp.array_equal(guarded.array, src))

    r = _measure(label, launch, verify, ceilings.COPY_FLOAT4.bytes(cfg.n), cfg, device, poison=guarded.poison)
    r["guard_touched"] = touched.get("n")
    return r


def _directions(src, out, cfg: BandwidthConfig, device: DeviceInfo, threads_per_sm: int) -> dict:
    """Read-only and write-only float4 passes: what each direction alone reaches."""
    cp = cupy()
    n = cfg.n
    rd, wr = ceilings.READ, ceilings.WRITE  # the read writes one partial sum per thread
    rgrid = rd.grid(n)
    partial = cp.empty(rgrid * rd.block, dtype=cp.float32)
    want = float(cp.sum(src, dtype=cp.float64))

    def read_ok():
        got = float(cp.sum(partial, dtype=cp.float64))
        return abs(got - want) <= 1e-4 * float(cp.sum(cp.abs(src), dtype=cp.float64))

    partial.fill(np.nan)
    read = _measure(rd.kernel, launcher(rd, (src, partial, np.uint64(n)), grid=rgrid),
                    read_ok, rd.bytes(n) + partial.size * 4.0, cfg, device,
                    poison=lambda: partial.fill(np.nan))
    out.fill(np.nan)
    write = _measure(wr.kernel, launcher(wr, (out, np.float32(3.0), np.uint64(n)), grid=wr.grid(n)),
                     lambda: bool(cp.all(out == np.float32(3.0))), wr.bytes(n), cfg, device,
                     poison=lambda: out.fill(np.nan))
    def measure(label, launch, verify, nbytes, poison):
        return _measure(label, launch, verify, nbytes, cfg, device, poison=poison)

    def guarded(label, fn, *args):
        try:
            return fn(*args)
        except KernelError as exc:  # one failed witness or variant keeps the section
            return {"label": label, "verified": False, "error": str(exc), "timing": None}

    variants = guarded("read variants", read_stream.read_variants, src, n, threads_per_sm, device.sm_count, measure)
    variants = variants if isinstance(variants, list) else [variants]
    cub = guarded("CUB DeviceReduce::Sum", read_stream.cub_reduce, src, measure)
    memset = guarded("cudaMemsetAsync", read_stream.memset, out, measure)
    return {"read": read, "write": write, "read_variants": variants, "read_cub": cub, "write_memset": memset,
            "note": f"read: float4 grid-stride sum, {rd.per_thread // 4} float4 per thread, block {rd.block} (bytes "
                    f"include the 1/{rd.per_thread} partial-sum write); write: float4 fill, one float4 per thread, "
                    f"block {wr.block}; read variants: "
                    "4-16 float4 loads in flight per thread, grids of 1, 2 and 4 full-occupancy waves, bytes "
                    "include the partial sums; witnesses: CUB DeviceReduce::Sum (read), cudaMemsetAsync (write)"}


def run(cfg: BandwidthConfig, device: DeviceInfo, progress: Callable[[str], None] | None = None) -> dict:
    cfg.validate()
    cp = cupy()
    say = progress or (lambda _m: None)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    n = cfg.n
    with cuda_call("copy", "cudaMalloc (2 arrays)"):
        src = cp.random.RandomState(7).uniform(-1.0, 1.0, n, dtype=cp.float32)
        guarded = Guarded((n,))
        out = guarded.array
    threads_per_sm = int(cp.cuda.runtime.deviceGetAttribute(_MAX_THREADS_PER_SM_ATTR, device.index))
    nbytes = n * 4
    stream = cp.cuda.get_current_stream()

    def memcpy():
        with cuda_call("cudaMemcpyAsync", "cudaMemcpyAsync(DeviceToDevice)"):
            cp.cuda.runtime.memcpyAsync(out.data.ptr, src.data.ptr, nbytes, _D2D, stream.ptr)

    configs: list[tuple[ceilings.Stream, str, int, int]] = []  # (entry, grid label, block, grid)
    if cfg.sweep:
        for entry in ceilings.SWEEP:
            for block in cfg.blocks:
                for glabel, grid in grids_for(device, block, entry.per_thread, n, threads_per_sm).items():
                    configs.append((entry, glabel, block, grid))
    else:  # the seed's scalar loop at 4 waves, the float4 copy at one grid-stride step per thread
        scalar, vec = ceilings.COPY_SCALAR, ceilings.COPY_FLOAT4
        wave = ceilings.resident_wave(device.sm_count, threads_per_sm, scalar.block)
        configs = [(scalar, "4 waves", scalar.block, 4 * wave), (vec, "1 step/thread", vec.block, vec.grid(n))]

    rows: dict[tuple, dict] = {}
    memcpy_runs: list[dict] = []
    for rnd in range(cfg.rounds):
        say(f"round {rnd + 1}/{cfg.rounds}: cudaMemcpy device-to-device")
        memcpy_runs.append(_copy_measure("cudaMemcpy D2D", memcpy, guarded, src, cfg, device))
        for i, (entry, glabel, block, grid) in enumerate(configs):
            kname = entry.kernel
            say(f"round {rnd + 1}/{cfg.rounds}: {kname} block {block} grid {grid} ({i + 1}/{len(configs)})")
            launch = launcher(entry, (src, out, np.uint64(n)), grid=grid, block=block)
            key = (kname, block, grid)
            r = _copy_measure(kname, launch, guarded, src, cfg, device)
            row = rows.setdefault(key, {"kernel": kname, "description": entry.what, "block": block,
                                        "grid": grid, "grid_label": glabel, "runs": []})
            row["runs"].append(r)

    # the seed's y = a*x at the best float4 geometry: the P5 kernel at AI = 0.125
    say("scale y = a*x (AI 0.125)")
    sc = ceilings.SCALE
    out.fill(np.nan)
    two = src * np.float32(2.0)
    scale = _measure(sc.kernel, launcher(sc, (src, out, np.float32(2.0), np.uint64(n)), grid=sc.grid(n)),
                     lambda: bool(cp.array_equal(out, two)), sc.bytes(n), cfg, device,
                     poison=lambda: out.fill(np.nan), flops=sc.flops(n))
    del two
    scale["flops"] = sc.flops(n)
    if scale.get("gbs"):
        scale["gflops"] = sc.flops(n) / (scale["timing"]["median_ms"] * 1e-3) / 1e9
    say("read-only and write-only passes")
    directions = _directions(src, out, cfg, device, threads_per_sm)

    return {
        "config": {**asdict(cfg), "blocks": list(cfg.blocks), "bytes_per_array": nbytes,
                   "bytes_moved": 2 * nbytes, "threads_per_sm": threads_per_sm},
        "method": {"timer": "CUDA events per launch", "reps": cfg.reps, "warmup": cfg.warmup,
                   "bytes": "2 * n * 4 (read + write)", "l2_flushed": False,
                   "l2_note": f"arrays of {nbytes / 2**30:.2f} GiB vs an L2 of {device.l2_bytes / 2**20:.0f} MiB: "
                              "the L2 cannot hold them, so no flush is needed",
                   "verified": "output poisoned with NaN, copy compared element-wise to the input"},
        "started": started,
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s,
        "memcpy": memcpy_runs,
        "sweep": list(rows.values()),
        "scale": scale,
        "directions": directions,
    }
