"""The read-only HBM ceiling and its witnesses: rooflab's unrolled read streams (ceilings/copy.cu,
each variant at grids of whole full-occupancy waves), CUB's DeviceReduce::Sum through CuPy, and
cudaMemsetAsync for the write direction. Every run is checked before it is timed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rooflab import ceilings
from rooflab.cuda.gpu import cuda_call, cupy
from rooflab.measure.streams import launcher


def _sum_check(src) -> Callable[[float], bool]:
    """A float32 sum of the array agrees with the float64 one within the float32 rounding of its terms."""
    cp = cupy()
    want = float(cp.sum(src, dtype=cp.float64))
    scale = float(cp.sum(cp.abs(src), dtype=cp.float64))
    return lambda got: abs(got - want) <= 1e-4 * scale


def read_variants(src, n: int, threads_per_sm: int, sm_count: int, measure) -> list[dict]:
    """Each unrolled read variant at 1, 2 and 4 full-occupancy waves (grid-stride); `measure` is the
    bandwidth harness's checked-then-timed run (label, launch, verify, bytes, poison)."""
    cp = cupy()
    ok = _sum_check(src)
    out = []
    for c in ceilings.READ_VARIANTS:
        wave = ceilings.resident_wave(sm_count, threads_per_sm, c.block)
        for waves in ceilings.COPY.read_waves:
            grid = min(waves * wave, c.grid(n))
            partial = cp.empty(grid * c.block, dtype=cp.float32)
            partial.fill(np.nan)
            launch = launcher(c, (src, partial, np.uint64(n)), grid=grid)

            def verify(partial=partial):
                return ok(float(cp.sum(partial, dtype=cp.float64)))

            r = measure(c.kernel, launch, verify, c.bytes(n) + partial.size * 4.0, lambda p=partial: p.fill(np.nan))
            r.update(kernel=c.kernel, description=c.what, block=c.block, grid=grid, waves=waves)
            out.append(r)
    return out


def cub_reduce(src, measure) -> dict:
    """CUB's DeviceReduce::Sum (CuPy's sum with its CUB routine accelerator): the vendor's read path."""
    cp = cupy()
    try:
        from cupy._core import _accelerator
    except ImportError as exc:  # a CuPy without accelerator switches
        return {"label": "CUB DeviceReduce::Sum", "verified": False, "error": f"CuPy has no CUB switch: {exc}"}
    ok = _sum_check(src)
    res = cp.empty((), dtype=cp.float32)
    try:
        before = _accelerator.get_routine_accelerators()
        _accelerator.set_routine_accelerators(["cub"])
    except (AttributeError, ValueError) as exc:
        return {"label": "CUB DeviceReduce::Sum", "verified": False, "error": f"CuPy's CUB switch failed: {exc}"}
    try:
        def launch():
            with cuda_call("cub", "cupy.sum (CUB DeviceReduce::Sum)"):
                cp.sum(src, out=res)

        r = measure("CUB DeviceReduce::Sum", launch, lambda: ok(float(res)), ceilings.READ.bytes(src.size),
                    lambda: res.fill(np.nan))
    finally:
        _accelerator.set_routine_accelerators(before)
    r["witness"] = "CUB DeviceReduce::Sum (cupy.sum, CUB routine accelerator)"
    return r


def memset(out, measure) -> dict:
    """cudaMemsetAsync over the whole array: the vendor's write path."""
    cp = cupy()
    stream = cp.cuda.get_current_stream()
    nbytes = out.size * 4
    out.fill(np.nan)

    def launch():
        with cuda_call("cudaMemsetAsync", "cudaMemsetAsync"):
            cp.cuda.runtime.memsetAsync(out.data.ptr, 0, nbytes, stream.ptr)

    r = measure("cudaMemsetAsync", launch, lambda: not bool(cp.any(out != 0)), float(nbytes),
                lambda: out.fill(np.nan))
    r["witness"] = "cudaMemsetAsync"
    return r
