"""A fake CuPy for the harnesses' host code on a machine with no GPU: NumPy arrays, streams and
synchronisation that do nothing, a virtual clock for timing. Kernels are Python launchers (a
rung's `launcher`, a Callable) so the checks, records and error paths run exactly as on a GPU."""

from __future__ import annotations

import types

import numpy as np

from rooflab.cuda.device import DeviceInfo
from rooflab.cuda.timing import Timing


class _RandomState:
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def uniform(self, lo, hi, size, dtype=np.float64):
        return self.rs.uniform(lo, hi, size).astype(dtype)


class _Stream:
    def __init__(self, non_blocking=False):
        pass

    def synchronize(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CudaFailure(Exception):
    pass


def make() -> types.ModuleType:
    cp = types.ModuleType("cupy")
    for name in dir(np):
        if not name.startswith("_"):
            setattr(cp, name, getattr(np, name))
    errs = types.SimpleNamespace(CUDADriverError=CudaFailure, CUDARuntimeError=CudaFailure,
                                 CompileException=CudaFailure, OutOfMemoryError=MemoryError)
    cp.cuda = types.SimpleNamespace(
        Stream=_Stream, get_current_stream=lambda: _Stream(),
        Device=lambda *_a: types.SimpleNamespace(synchronize=lambda: None),
        driver=errs, runtime=errs, compiler=errs, memory=errs)
    cp.random = types.SimpleNamespace(RandomState=_RandomState)
    cp.asnumpy = np.asarray
    cp.__version__ = "fake"
    return cp


def fake_time_launches(launch, *, label, reps=20, warmup=1, flush=None, pci_bus_id="", method="events",
                       before_last=None):
    for i in range(warmup + reps):
        if before_last is not None and i == warmup + reps - 1:
            before_last()
        launch()
    return Timing(times_ms=[1.0] * reps, warmup=warmup, l2_flushed=flush is not None)


def install(monkeypatch) -> types.ModuleType:
    """Every `cupy()` of the GEMM and stream harnesses returns the fake; timing runs on it too."""
    import rooflab.cuda.gpu as gpu_mod
    import rooflab.measure.bench as bench_mod
    import rooflab.measure.gemm as gemm_mod
    import rooflab.measure.guards as guards_mod
    import rooflab.measure.proven as proven_mod

    cp = make()
    for mod in (gpu_mod, gemm_mod, guards_mod, bench_mod):
        monkeypatch.setattr(mod, "cupy", lambda cp=cp: cp)
    monkeypatch.setattr(proven_mod, "time_launches", fake_time_launches)
    monkeypatch.setattr(gpu_mod, "_cuda_error_types", lambda: (CudaFailure,))
    return cp


def device() -> DeviceInfo:
    return DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=2, fp32_cores_per_sm=128,
                      sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=2**20,
                      memory_bytes=16 * 2**30)
