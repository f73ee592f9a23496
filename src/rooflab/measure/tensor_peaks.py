"""The tensor-core roofs as measured: the MMA-chain kernels of ceilings/tensor_peak.cu,
each sized to about target_ms, timed like every ceiling, with the SM clock they ran at, so the
report can put them beside the published dense rates and the clock those rates imply (P2)."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from rooflab import ceilings
from rooflab.ceilings import TensorPeak
from rooflab.cuda.compile import get_kernel
from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.gpu import cupy
from rooflab.cuda.timing import time_kernel
from rooflab.errors import RooflabError
from rooflab.model.floor import floor_check, floor_error, unit_floor
from rooflab.model.limits import compute_limit

PROBE_ITERS = 2000


def skip_reason(peak: TensorPeak, cc: tuple[int, int]) -> str | None:
    need = f"sm_{peak.requires_cc[0]}{peak.requires_cc[1]}"
    if peak.exact_cc and tuple(cc) != peak.requires_cc:
        return f"{peak.unit} needs {need}a exactly"
    if tuple(cc) < peak.requires_cc:
        return f"{peak.unit} {peak.precision.upper()} needs {need} or newer"
    return None


def measure(peak: TensorPeak, device: DeviceInfo, *, target_ms: float = 10.0, reps: int = 20) -> dict:
    row: dict = {"kernel": peak.kernel, "unit": peak.unit, "precision": peak.precision}
    reason = skip_reason(peak, device.cc)
    if reason:
        return {**row, "skipped": reason}
    cp = cupy()
    blocks = device.sm_count * peak.blocks_per_sm
    out = cp.full(blocks * peak.block, np.nan, dtype=cp.float32)
    try:
        kern = get_kernel(peak.source, peak.kernel, options=peak.options)

        def launch(iters: int):
            return lambda: kern.launch((blocks, 1, 1), (peak.block, 1, 1), (out, np.int32(iters)))

        probe = time_kernel(launch(PROBE_ITERS), label=peak.kernel, reps=1)
        iters = max(PROBE_ITERS, int(PROBE_ITERS * target_ms / max(probe.median_ms, 1e-3)))
        t = time_kernel(launch(iters), label=peak.kernel, reps=reps, pci_bus_id=device.pci_bus_id)
    except RooflabError as exc:
        return {**row, "error": str(exc)}
    floor = unit_floor(peak.flops(blocks, iters), compute_limit(asdict(device), peak.precision), "FLOP/s")
    fc = floor_check(t.median_ms * 1e-3, floor, (blocks, peak.block, iters))
    if fc is not None and not fc.passed:  # faster than the tensor cores at their maximum clock: no result
        return {**row, "verified": False, "error": floor_error(fc, floor), "proof": [fc.to_dict()]}
    tflops = peak.flops(blocks, iters) / (t.median_ms * 1e-3) / 1e12
    sm_mhz = ((t.telemetry or {}).get("sm_mhz") or {}).get("median")
    return {**row, "blocks": blocks, "block": peak.block, "iters": iters, "flops": peak.flops(blocks, iters),
            # every thread stores the sum of its accumulators: NaN left means a thread never finished
            "verified": bool(cp.all(cp.isfinite(out))), "timing": t.to_dict(), "tflops": tflops,
            "sm_mhz": sm_mhz,
            "flop_per_sm_cycle": tflops * 1e12 / (device.sm_count * sm_mhz * 1e6) if sm_mhz else None}


def run(device: DeviceInfo, progress=None, **kw) -> list[dict]:
    say = progress or (lambda _m: None)
    rows = []
    for p in ceilings.TENSOR.peaks:
        say(f"tensor peak {p.kernel}")
        rows.append(measure(p, device, **kw))
    return rows
