"""The memory hierarchy's ceilings: L2 bandwidth swept past the L2 size, shared-memory
bandwidth with and without bank conflicts, and the FP64 and FP16 CUDA-core peaks.

Every configuration is checked before it is timed, on the very launch that is then timed:
- L2 read: the grid's partial sums add up (float64, on the GPU) to the sum of the elements the
  walk visits, within 1e-4 relative (inputs in [0, 1), so there is no cancellation);
- L2 copy: the output, poisoned with NaN, equals the input exactly;
- shared memory: integer sums, compared bit for bit with a NumPy emulation of one block
  (every block computes the same), at the timed iteration count;
- FP64 / FP16: one block against an emulation of the same FMA recurrence, bit for bit.
A configuration that fails gets no rate. Each launch is sized to `target_ms` by timing a
probe launch first. All configurations are timed in `rounds` interleaved rounds (medians of
`reps` launches each), so the spread between rounds shows how stable a figure is.

Pure helpers (footprints, emulations) live here too and are tested without a GPU.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from rooflab import ceilings
from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cuda_call, cupy, synchronize
from rooflab.cuda.timing import time_kernel
from rooflab.errors import KernelError, UsageError
from rooflab.model import arch
from rooflab.model.floor import floor_check, floor_error, unit_floor
from rooflab.model.hierarchy import SHARED_BYTES_PER_CLK, memory_summary, rate_spread
from rooflab.model.limits import compute_limit, l2_limit, shared_limit

MiB = 2**20
_MAX_THREADS_PER_SM_ATTR = 39  # cudaDevAttrMaxThreadsPerMultiProcessor
_INT32_MAX = 2**31 - 1

PARTS = ("l2", "l2_copy", "shared", "fp64", "fp16")

# the shared-memory record's figures under the names the tests know (the harness reads the record)
SMEM_UNROLL = ceilings.SHARED.unroll
SMEM_F4 = ceilings.SHARED.buffer_f4
SMEM_VARIANTS = ceilings.SHARED.variants  # variant -> (lane stride, base step, base mask, wavefronts, how)
DFMA_X, DFMA_Y = 0.5, 0.5  # exact products: numpy's a*x + y rounds like a fused DFMA
HFMA_X, HFMA_Y = 1.0 - 2.0**-10, 2.0**-10  # exact in half; fixed point 1, no overflow, no subnormals


@dataclass
class MemoryConfig:
    rounds: int = 3
    reps: int = 10
    warmup: int = 1
    target_ms: float = 2.0  # length of each timed launch
    footprints: tuple[int, ...] = ()  # L2 sweep, bytes; () = derived from the device's L2 size
    copy_footprint: int = 0  # bytes read + written by the L2 copy; 0 = derived
    parts: tuple[str, ...] = PARTS

    def validate(self) -> None:
        if self.rounds < 1:
            raise UsageError(f"--rounds must be at least 1, got {self.rounds}")
        if self.reps < 3:
            raise UsageError(f"--reps must be at least 3, got {self.reps}")
        if self.warmup < 0:
            raise UsageError("warm-up launches cannot be negative")
        if not 0.05 <= self.target_ms <= 200:
            raise UsageError(f"target launch length must be between 0.05 and 200 ms, got {self.target_ms}")
        bad = [p for p in self.parts if p not in PARTS]
        if bad:
            raise UsageError(f"unknown memory parts {bad}; choose from {', '.join(PARTS)}")
        for f in (*self.footprints, *((self.copy_footprint,) if self.copy_footprint else ())):
            if f < 64 * 1024 or f % 1024:
                raise UsageError(f"footprints must be multiples of 1 KiB, at least 64 KiB; got {f}")


# ----------------------------------------------------------------------------------------------
# pure helpers (no GPU)
# ----------------------------------------------------------------------------------------------


def l2_footprints(l2_bytes: int, max_bytes: int | None = None) -> list[int]:
    """Footprints for the L2 sweep: powers of two from 1 MiB to the first one at or above 4x the
    L2, steps of about L2/8 from L2/4 to just past the L2 (where the cliff is), and 1.5x the power
    of two above the L2. For a 60 MiB L2: 1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256 MiB."""
    if l2_bytes <= 0:
        pts = {MiB << k for k in range(9)}  # 1 .. 256 MiB when the L2 size is unknown
    else:
        top = MiB
        while top < 4 * l2_bytes:
            top *= 2
        pts = set()
        f = MiB
        while f <= top:
            pts.add(f)
            f *= 2
        step = max(64 * 1024, 2 ** round(math.log2(l2_bytes / 8)))
        k = math.floor(l2_bytes / 4 / step) + 1
        while k * step <= l2_bytes + step:
            pts.add(k * step)
            k += 1
        above = MiB
        while above < l2_bytes:
            above *= 2
        pts.add(above * 3 // 2)
    out = sorted(p for p in pts if p >= MiB and (max_bytes is None or p <= max_bytes))
    return out


def copy_footprint(l2_bytes: int) -> int:
    """Bytes read + written by the L2 copy: the largest power of two up to a third of the L2
    (16 MiB for 60 MiB), well inside it and below half of it."""
    f = MiB
    while l2_bytes > 0 and f * 2 <= l2_bytes / 3:
        f *= 2
    return f


def l2_visit_counts(threads: int, iters: int, n4: int) -> tuple[int, int]:
    """The L2 walk visits virtual elements 0 .. threads*4*iters-1 at address v mod n4:
    (full passes over the footprint, length of the partial pass)."""
    return divmod(ceilings.L2.visits(threads, iters), n4)


def smem_words(n: int | None = None) -> np.ndarray:
    """The shared buffer as smem.cu fills it: (n, 4) uint32, word w = w * 2654435761 mod 2^32."""
    n = n or ceilings.SHARED.buffer_f4
    w = np.arange(4 * n, dtype=np.uint64)
    return ((w * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)).astype(np.uint32).reshape(n, 4)


def smem_emulate(lane_stride: int, step: int, mask: int, iters: int, threads: int | None = None) -> np.ndarray:
    """What each thread of one block of smem_read<lane_stride> stores (uint32): the sum, modulo
    2^32, of every word it loads. Order does not matter for modular sums, so the per-iteration base
    addresses are counted once and weighted (fast at any iteration count)."""
    rec = ceilings.SHARED
    threads = threads or rec.block
    u_stride = 32 if lane_stride == 1 else 1
    words = smem_words()
    f4_sum = words.astype(np.uint64).sum(axis=1)  # x + y + z + w of each uint4
    bases = (np.arange(iters, dtype=np.int64) * step) & mask
    counts = np.bincount(bases, minlength=mask + 1).astype(np.uint64)
    lane = np.arange(threads) % 32
    total = np.zeros(threads, dtype=np.uint64)
    for b in np.nonzero(counts)[0]:
        idx = lane[:, None] * lane_stride + b + np.arange(rec.unroll)[None, :] * u_stride
        if idx.max() >= rec.buffer_f4:
            raise ValueError("shared-memory walk leaves the buffer")
        s = f4_sum[idx].sum(axis=1) & np.uint64(0xFFFFFFFF)
        total = (total + s * counts[b]) & np.uint64(0xFFFFFFFF)
    return total.astype(np.uint32)


def dfma_emulate(threads: int, iters: int, acc: int | None = None, x: float = DFMA_X, y: float = DFMA_Y) -> np.ndarray:
    """dfma_chain<acc> for one block. With x = 0.5 every product is exact, so a*x + y in float64
    rounds exactly like the fused DFMA."""
    if x not in (0.5, 1.0, 2.0, -0.5, -1.0):
        raise ValueError("the bitwise FP64 emulation needs an exact product (x a power of two)")
    rec = ceilings.FMA64
    t = np.arange(threads, dtype=np.float64)
    accs = [t * 0.0009765625 + j for j in range(acc or rec.accumulators[-1])]
    for _ in range(iters * rec.fma_per_chain_per_iter):
        accs = [a * x + y for a in accs]
    s = np.zeros(threads)
    for a in accs:
        s = s + a
    return s


def half2_bits(v: float) -> np.uint32:
    """The bits of a half2 holding v (rounded to float16) in both halves, as fma16.cu takes x and y."""
    h = int(np.float16(v).view(np.uint16))
    return np.uint32(h | (h << 16))


def hfma2_emulate(threads: int, iters: int, acc: int | None = None, x: float = HFMA_X, y: float = HFMA_Y) -> np.ndarray:
    """hfma2_chain<acc> for one block: (threads, 2) float16 (low, high halves). Each HFMA2 is
    computed exactly in float64 (two halves' product has at most 22 significant bits) and rounded
    once to float16, which is what the fused instruction does; __hadd2 likewise."""
    rec = ceilings.FMA16
    acc = acc or rec.accumulators[-1]
    xh, yh = np.float64(np.float16(x)), np.float64(np.float16(y))
    t = (np.arange(threads) % 64).astype(np.float32) * np.float32(0.0078125)
    accs = []
    for j in range(acc):
        lo = (t + np.float32(0.25 * j)).astype(np.float16)
        hi = (t + np.float32(0.25 * j) + np.float32(0.125)).astype(np.float16)
        accs.append(np.stack([lo, hi], axis=1))
    for _ in range(iters * rec.fma_per_chain_per_iter):
        accs = [(a.astype(np.float64) * xh + yh).astype(np.float16) for a in accs]
    s = accs[0]
    for a in accs[1:]:
        s = (s.astype(np.float64) + a.astype(np.float64)).astype(np.float16)
    return s


# ----------------------------------------------------------------------------------------------
# measuring
# ----------------------------------------------------------------------------------------------


@dataclass
class _Probe:
    """One verified configuration, ready to be timed in every round."""

    label: str
    launch: Callable[[], None]
    amount: float  # bytes (or FLOPs) per launch
    row: dict = field(repr=False)


def _time_once(launch: Callable[[], None], label: str) -> float:
    cp = cupy()
    with cuda_call(label, "cudaEventRecord / launch (sizing probe)"):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        launch()
        b.record()
        b.synchronize()
        return float(cp.cuda.get_elapsed_time(a, b))


def _fit_iters(make: Callable[[int], Callable[[], None]], label: str, target_ms: float, start: int = 16,
               floor: int = 1) -> int:
    """The iteration count that makes one launch last about target_ms (probe, grow, scale)."""
    iters = max(start, floor)
    make(iters)()  # first launch: module load, first touch of the data
    synchronize(label)
    ms = _time_once(make(iters), label)
    while ms < target_ms / 8 and iters * 8 <= _INT32_MAX // 8:
        iters *= 8
        ms = _time_once(make(iters), label)
    return int(min(_INT32_MAX, max(floor, round(iters * target_ms / max(ms, 1e-3)))))


def _error_row(label: str, exc: Exception) -> dict:
    return {"label": label, "verified": False, "error": str(exc), "rounds": []}


def threads_per_sm(device: DeviceInfo) -> int:
    return int(cupy().cuda.runtime.deviceGetAttribute(_MAX_THREADS_PER_SM_ATTR, device.index))


def l2_walk(kernel: str, src, dst, grid: int) -> Callable[[int, int, int], Callable[[], None]]:
    """(n4, step, iters) -> one launch of l2.cu's `kernel` over n4 float4 (l2_read: dst holds the
    partial sums; l2_copy: the copy), built with the record's constants: what the harness checks and
    times, and what Nsight Compute profiles."""
    rec = ceilings.L2
    kern = get_kernel(rec.source, kernel, rec.options)

    def launch(n4: int, step: int, iters: int) -> Callable[[], None]:
        args = (src, dst, np.uint32(n4), np.uint32(step), np.int32(iters))
        return lambda: kern.launch((grid, 1, 1), (rec.block, 1, 1), args)
    return launch


class _Runner:
    def __init__(self, cfg: MemoryConfig, device: DeviceInfo, say: Callable[[str], None]):
        self.cfg, self.dev, self.say = cfg, device, say
        self.threads_per_sm = threads_per_sm(device)
        self.probes: list[_Probe] = []

    def wave(self, block: int) -> int:
        """Blocks in one full-occupancy wave."""
        return ceilings.resident_wave(self.dev.sm_count, self.threads_per_sm, block)

    # -- L2 --------------------------------------------------------------------------------------

    def l2(self, footprints: list[int]) -> dict:
        cp = cupy()
        rec = ceilings.L2
        grid = self.wave(rec.block)
        T = grid * rec.block
        with cuda_call(rec.read, "cudaMalloc (L2 sweep input)"):
            buf = cp.random.RandomState(11).uniform(0.0, 1.0, max(footprints) // 4, dtype=cp.float32)
            partial = cp.empty(T, dtype=cp.float32)
        walk = l2_walk(rec.read, buf, partial, grid)
        rows = []
        for fp in footprints:
            n4 = fp // 16
            step = T % n4
            label = f"{rec.read} {fp / MiB:g} MiB"
            self.say(f"verify {label}")
            row = {"label": label, "footprint_bytes": fp, "n4": n4, "step": step, "rounds": []}

            def make(iters, n4=n4, step=step):
                return walk(n4, step, iters)

            try:
                iters = _fit_iters(make, label, self.cfg.target_ms)
                partial.fill(np.nan)
                make(iters)()
                synchronize(label)
                q, r = l2_visit_counts(T, iters, n4)
                x = buf[: n4 * 4]
                want = q * float(cp.sum(x, dtype=cp.float64)) + (float(cp.sum(x[: r * 4], dtype=cp.float64)) if r else 0.0)
                got = float(cp.sum(partial, dtype=cp.float64))
                err = abs(got - want) / want if want > 0 and math.isfinite(got) else math.inf
                nbytes = rec.read_bytes(T, iters)
                row.update(iters=iters, bytes=nbytes, verified=err <= 1e-4,
                           check={"what": "sum of the partial sums vs float64 sum of the visited elements",
                                  "rel_err": err, "tol": 1e-4, "full_passes": q})
                if row["verified"]:
                    self.probes.append(_Probe(label, make(iters), nbytes, row))
            except KernelError as exc:
                row.update(verified=False, error=str(exc))
            rows.append(row)
        return {"kernel": rec.read, "grid": grid, "block": rec.block, "rows": rows,
                "bytes": f"16 x threads x {rec.unroll} x iters (reads only)"}

    def l2_copy(self, fp: int) -> dict:
        cp = cupy()
        rec = ceilings.L2
        grid = self.wave(rec.block)
        T = grid * rec.block
        n4 = fp // 32  # half the footprint read, half written
        step = T % n4
        label = f"{rec.copy} {fp / MiB:g} MiB"
        with cuda_call(rec.copy, "cudaMalloc (L2 copy arrays)"):
            src = cp.random.RandomState(13).uniform(-1.0, 1.0, n4 * 4, dtype=cp.float32)
            out = cp.empty_like(src)
        self.say(f"verify {label}")
        floor = -(-n4 // rec.visits(T, 1))  # every element written at least once
        walk = l2_walk(rec.copy, src, out, grid)

        def make(iters):
            return walk(n4, step, iters)

        row = {"label": label, "footprint_bytes": fp, "n4": n4, "step": step, "rounds": []}
        iters = _fit_iters(make, label, self.cfg.target_ms, floor=floor)
        out.fill(np.nan)
        make(iters)()
        synchronize(label)
        ok = bool(cp.array_equal(out, src))
        nbytes = rec.copy_bytes(T, iters)
        row.update(iters=iters, bytes=nbytes, verified=ok, grid=grid, block=rec.block,
                   check={"what": "output (poisoned with NaN) equals the input exactly"},
                   bytes_basis=f"32 x threads x {rec.unroll} x iters (16 read + 16 written per element visit)")
        if ok:
            self.probes.append(_Probe(label, make(iters), nbytes, row))
        return row

    # -- shared memory ---------------------------------------------------------------------------

    def shared(self) -> dict:
        cp = cupy()
        rec = ceilings.SHARED
        grid = self.wave(rec.block)
        threads = grid * rec.block
        out = cp.empty(threads, dtype=cp.uint32)
        rows = []
        for name, (stride, step, mask, wavefronts, how) in rec.variants.items():
            kname = rec.kernel(stride)
            label = f"shared {name}"
            row = {"label": label, "variant": name, "kernel": kname, "lane_stride_bytes": 16 * stride,
                   "wavefronts_per_lds128": wavefronts, "how": how, "grid": grid, "block": rec.block,
                   "rounds": []}
            try:
                k = get_kernel(rec.source, kname, rec.options)
                with contextlib.suppress(Exception):  # ask for the largest shared carveout: 8 blocks per SM
                    k.fn.preferred_shared_memory_carveout = 100

                def make(iters, k=k, step=step, mask=mask):
                    args = (out, np.int32(iters), np.uint32(step), np.uint32(mask))
                    return lambda: k.launch((grid, 1, 1), (rec.block, 1, 1), args)

                self.say(f"verify {label}")
                iters = _fit_iters(make, label, self.cfg.target_ms)
                out.fill(0xDEADBEEF)  # poison: a thread that stores nothing fails the check
                make(iters)()
                synchronize(label)
                want = smem_emulate(stride, step, mask, iters)
                got = cp.asnumpy(out).reshape(grid, rec.block)
                bad = int(np.count_nonzero(got != want[None, :]))
                nbytes = rec.bytes(threads, iters)
                row.update(iters=iters, bytes=nbytes, verified=bad == 0,
                           check={"what": "every thread's 32-bit sum equals the emulation of its walk",
                                  "mismatches": bad, "threads": threads})
                if bad == 0:
                    self.probes.append(_Probe(label, make(iters), nbytes, row))
            except KernelError as exc:
                row.update(verified=False, error=str(exc))
            rows.append(row)
        return {"rows": rows, "bytes": f"16 x threads x {rec.unroll} x iters", "buffer_bytes": 16 * rec.buffer_f4}

    # -- FP64 / FP16 -----------------------------------------------------------------------------

    def fma(self, rec: ceilings.FmaChains) -> dict:
        cp = cupy()
        precision, acc, block = rec.precision, rec.accumulators[-1], rec.block
        grid = self.wave(block)
        threads = grid * block
        kname = rec.kernel(acc)
        if precision == "fp64":
            x, y, out_dtype, args_xy, check_iters = DFMA_X, DFMA_Y, cp.float64, (np.float64(DFMA_X), np.float64(DFMA_Y)), 2
        else:
            x, y, out_dtype, args_xy, check_iters = HFMA_X, HFMA_Y, cp.uint32, (half2_bits(HFMA_X), half2_bits(HFMA_Y)), 4
        label = kname
        row = {"label": label, "precision": precision, "kernel": kname, "accumulators": acc,
               "grid": grid, "block": block, "x": x, "y": y, "rounds": []}
        k = get_kernel(rec.source, kname, rec.options)
        # the check: one block at a short chain, bit for bit
        self.say(f"verify {label}")
        one = cp.full(block, np.nan, dtype=cp.float64) if precision == "fp64" else cp.full(block, 0xFFFFFFFF, cp.uint32)
        k.launch((1, 1, 1), (block, 1, 1), (one, np.int32(check_iters), *args_xy))
        synchronize(label)
        if precision == "fp64":
            got, want = cp.asnumpy(one), dfma_emulate(block, check_iters, acc)
            bad = int(np.count_nonzero(got != want))
        else:
            got = cp.asnumpy(one).view(np.float16).reshape(block, 2)
            want = hfma2_emulate(block, check_iters, acc)
            bad = int(np.count_nonzero(got.view(np.uint16) != want.view(np.uint16)))
        row["check"] = {"what": f"one block, {check_iters} iterations, bit for bit against the emulation",
                        "mismatches": bad}
        row["verified"] = bad == 0
        if bad:
            return row
        out = cp.empty(threads, dtype=out_dtype)

        def make(iters):
            a = (out, np.int32(iters), *args_xy)
            return lambda: k.launch((grid, 1, 1), (block, 1, 1), a)

        iters = _fit_iters(make, label, self.cfg.target_ms)
        flops = rec.flops(threads, iters, acc)
        unit = "DFMA" if precision == "fp64" else "HFMA2"
        row.update(iters=iters, flops=flops,
                   flops_basis=f"threads x iters x {rec.fma_per_chain_per_iter} x {acc} {unit} x {rec.flop_per_fma}")
        self.probes.append(_Probe(label, make(iters), flops, row))
        return row

    # -- the rounds ------------------------------------------------------------------------------

    def time_rounds(self) -> None:
        for rnd in range(self.cfg.rounds):
            for i, p in enumerate(self.probes):
                self.say(f"round {rnd + 1}/{self.cfg.rounds}: {p.label} ({i + 1}/{len(self.probes)})")
                t = time_kernel(p.launch, label=p.label, reps=self.cfg.reps, warmup=self.cfg.warmup,
                                pci_bus_id=self.dev.pci_bus_id)
                tel = t.telemetry or {}
                p.row["rounds"].append({"median_ms": t.median_ms, "min_ms": t.min_ms, "max_ms": t.max_ms,
                                        "reps": len(t.times_ms), "rate": p.amount / (t.median_ms * 1e-3),
                                        "sm_mhz": (tel.get("sm_mhz") or {}).get("median"),
                                        "throttled": bool(tel.get("throttled")),
                                        "telemetry": tel or None})
        for p in self.probes:
            p.row.update(rate_spread([r["rate"] for r in p.row["rounds"]]))
            self._hold_to_the_floor(p)

    def _hold_to_the_floor(self, p: _Probe) -> None:
        """A rate above the unit's physical limit (beyond noise) is no result: the row is FAILED."""
        dev = asdict(self.dev)
        prec = p.row.get("precision")
        if prec:
            limit, unit = compute_limit(dev, prec), "FLOP/s"
        elif p.row.get("variant"):
            limit, unit = shared_limit(dev), "B/s"
        else:
            limit, unit = l2_limit(dev), "B/s"
        floor = unit_floor(p.amount, limit, unit)
        med = statistics.median(r["median_ms"] for r in p.row["rounds"]) * 1e-3 if p.row["rounds"] else None
        fc = floor_check(med, floor, (1, 1, 1)) if med is not None else None
        if fc is not None:
            p.row["proof"] = [fc.to_dict()]
            if not fc.passed:
                p.row.update(verified=False, error=floor_error(fc, floor), rate=None)


def _theoretical(device: DeviceInfo) -> dict:
    clock = device.sm_clock_max_mhz * 1e6
    sms = device.sm_count
    f64, f16, l2c = arch.fp64_lanes_per_sm(device.cc), arch.fp16_lanes_per_sm(device.cc), arch.l2_bytes_per_clk(device.cc)
    mhz = f"{device.sm_clock_max_mhz:.0f} MHz"
    return {
        "shared_bytes_per_s": sms * SHARED_BYTES_PER_CLK * clock,
        "shared_basis": f"{sms} SMs × {SHARED_BYTES_PER_CLK} B/clk (32 banks × 4 B) × {mhz}",
        "l2_bytes_per_s": l2c * clock if l2c else None,
        "l2_basis": f"{l2c} B/clk (whitepaper) × {mhz}" if l2c else "no published L2 bandwidth for this architecture",
        "hbm_bytes_per_s": device.hbm_peak_bytes_per_s,
        "fp32_flops": device.fp32_peak_flops,
        "fp64_flops": sms * f64 * 2 * clock if f64 else None,
        "fp64_basis": f"{sms} SMs × {f64} FP64 FMA/clk × 2 × {mhz}" if f64 else "FP64 rate not in rooflab's table",
        "fp16_flops": sms * f16 * 2 * clock if f16 else None,
        "fp16_basis": f"{sms} SMs × {f16} FP16 FMA/clk (two per half2 lane) × 2 × {mhz}" if f16 else "FP16 rate not in rooflab's table",
    }


def run(cfg: MemoryConfig, device: DeviceInfo, progress: Callable[[str], None] | None = None) -> dict:
    """Measure the memory section; returns it as a results-document section ("memory")."""
    cfg.validate()
    cp = cupy()
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    runner = _Runner(cfg, device, say)
    free = int(cp.cuda.runtime.memGetInfo()[0])
    footprints = list(cfg.footprints) or l2_footprints(device.l2_bytes, max_bytes=free // 4)
    cfp = cfg.copy_footprint or copy_footprint(device.l2_bytes)
    sec: dict = {}
    for part in cfg.parts:
        try:
            if part == "l2":
                sec["l2_sweep"] = runner.l2(footprints)
            elif part == "l2_copy":
                sec["l2_copy"] = runner.l2_copy(cfp)
            elif part == "shared":
                sec["shared"] = runner.shared()
            else:
                sec[part] = runner.fma({"fp64": ceilings.FMA64, "fp16": ceilings.FMA16}[part])
        except KernelError as exc:  # one part failing (say, NVRTC without cuda_fp16.h) keeps the others
            sec[{"l2": "l2_sweep"}.get(part, part)] = _error_row(part, exc)
    runner.time_rounds()
    sec.update(
        config={**asdict(cfg), "footprints": footprints, "copy_footprint": cfp, "parts": list(cfg.parts)},
        method={"timer": "CUDA events per launch", "reps": cfg.reps, "warmup": cfg.warmup, "rounds": cfg.rounds,
                "launch_ms": cfg.target_ms, "block": ceilings.L2.block, "grid": runner.wave(ceilings.L2.block),
                "threads_per_sm": runner.threads_per_sm,
                "l2_loads": f"ld.global.cg (cached in L2, not L1), {ceilings.L2.unroll} x 16 B in flight per thread",
                "verified": "each configuration checked on the launch that is then timed (fp64/fp16: one block)"},
        device={"name": device.name, "cc": list(device.cc), "sm_count": device.sm_count,
                "sm_clock_max_mhz": device.sm_clock_max_mhz, "l2_bytes": device.l2_bytes},
        theoretical=_theoretical(device),
        started=started,
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    sec["elapsed_s"] = time.perf_counter() - t0
    sec["summary"] = memory_summary(sec)
    return sec
