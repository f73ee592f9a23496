"""The impossible-result guard on the harness's own path (measure/proven.py) against a fake CuPy:
CUDA events on a virtual clock, "kernels" that are Python functions writing NumPy arrays. A kernel
that passes its checks and then skips its work, one that leaves an earlier output in place, and one
timed below the roofline floor are FAILED with no throughput; an honest one passes."""

from __future__ import annotations

import types

import numpy as np
import pytest

from rooflab.cuda.device import DeviceInfo
from rooflab.model.floor import FLOOR_NOISE, floor_check, roofline_floor
from rooflab.model.limits import fastest_limit


class _Clock:
    ms = 0.0


class _Event:
    def __init__(self):
        self.t = 0.0

    def record(self):
        self.t = _Clock.ms


def _fake_cupy():
    cuda = types.SimpleNamespace(Event=_Event, get_elapsed_time=lambda a, b: b.t - a.t,
                                 get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None),
                                 runtime=types.SimpleNamespace(CUDARuntimeError=RuntimeError),
                                 driver=types.SimpleNamespace(CUDADriverError=RuntimeError))
    return types.SimpleNamespace(cuda=cuda)


@pytest.fixture
def fake(monkeypatch):
    import rooflab.cuda.gpu as gpu_mod
    import rooflab.cuda.timing as timing_mod

    cp = _fake_cupy()
    for mod in (gpu_mod, timing_mod):
        monkeypatch.setattr(mod, "cupy", lambda: cp)
    _Clock.ms = 0.0
    return cp


@pytest.fixture
def device():
    return DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=132, fp32_cores_per_sm=128,
                      sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016,
                      l2_bytes=60 * 2**20, memory_bytes=141 * 2**30)


N = 4096
FLOPS = 2.0 * N**3
NBYTES = 3 * N * N * 4.0


def _kernel(out: np.ndarray, ms: float, honest_launches: int | None = None, write=True):
    """A 'kernel' taking `ms` of virtual time that writes 1.0 (its right answer) into out; after
    `honest_launches` launches it skips its work (a device-side launch counter)."""
    count = {"n": 0}

    def launch():
        count["n"] += 1
        if write and (honest_launches is None or count["n"] <= honest_launches):
            out[:] = 1.0
            _Clock.ms += ms
        else:
            _Clock.ms += 0.003  # an empty launch
    return launch


def _prove(device, launch, out, **kw):
    from rooflab.measure.proven import time_proven

    return time_proven(launch, label="k", reps=10, device=device, poison=lambda: out.fill(np.nan),
                       recheck=lambda: int(np.count_nonzero(out != 1.0)), shape=(N, N, N), precision="fp32",
                       flops=FLOPS, nbytes=NBYTES, footprint_bytes=NBYTES, **kw)


def test_an_honest_kernel_passes(fake, device):
    out = np.zeros(N, np.float32)
    p = _prove(device, _kernel(out, ms=2.7), out)
    assert p.passed and p.error is None
    assert [c.name for c in p.checks] == ["last timed launch", "roofline floor"]
    assert all(c.passed for c in p.checks)
    assert p.timing.median_ms == pytest.approx(2.7)


def test_a_kernel_that_skips_its_work_once_timed_fails(fake, device):
    """It passes every check (its first launches do the work), then skips on later launches."""
    out = np.zeros(N, np.float32)
    p = _prove(device, _kernel(out, ms=2.7, honest_launches=1), out)
    assert not p.passed
    last = p.checks[0]
    assert last.name == "last timed launch" and not last.passed and last.value == N
    assert not p.checks[1].passed  # and its timed launches are faster than the GPU
    assert p.error.startswith("faster than this GPU can run it: ")
    # a slow kernel that skips only its output is still caught by the last launch's check
    out[:] = 0
    _Clock.ms = 0.0
    launches = {"n": 0}

    def slow_skipper():
        launches["n"] += 1
        if launches["n"] == 1:
            out[:] = 1.0
        _Clock.ms += 2.7

    p = _prove(device, slow_skipper, out)
    assert p.checks[1].passed and not p.checks[0].passed
    assert "did not do the work while it was timed" in p.error


def test_an_output_left_from_an_earlier_call_fails(fake, device):
    """A kernel that never writes, timed after an earlier launch left the right answer in place:
    without the poison before the last sample this would look right."""
    out = np.ones(N, np.float32)
    p = _prove(device, _kernel(out, ms=2.7, write=False), out)
    assert not p.passed and not p.checks[0].passed


def test_below_the_floor_is_faster_than_this_gpu(fake, device):
    out = np.zeros(N, np.float32)
    limit = fastest_limit({"sm_count": 132, "sm_clock_max_mhz": 1980.0, "cc": [9, 0], "fp32_cores_per_sm": 128},
                          "fp32").value
    floor_ms = FLOPS / limit * 1e3
    p = _prove(device, _kernel(out, ms=0.5 * floor_ms), out)
    assert not p.passed and p.checks[0].passed  # right output, impossible time
    assert p.error.startswith("faster than this GPU can run it: ")
    assert "137.4 GFLOP ÷ 178.4 TFLOP/s" in p.error
    assert "FASTER THAN THIS GPU CAN RUN IT" in p.checks[1].line()
    # just under the floor, within noise, passes
    out[:] = 0
    _Clock.ms = 0.0
    p = _prove(device, _kernel(out, ms=(1 - FLOOR_NOISE / 2) * floor_ms), out)
    assert p.passed


def test_floor_terms():
    dev = {"sm_count": 132, "sm_clock_max_mhz": 1980.0, "cc": [9, 0], "fp32_cores_per_sm": 128,
           "mem_clock_max_mhz": 3201.0, "bus_width_bits": 6016}
    # a copy: no FLOPs, the bytes set the floor, but only beyond the L2 (the L2 has no published limit)
    f = roofline_floor(dev, "fp32", 0.0, 2 * 2**30, beyond_l2=True)
    assert f.seconds == pytest.approx(2 * 2**30 / 4.814304e12) and f.compute_s is None
    assert roofline_floor(dev, "fp32", 0.0, 2 * 2**20, beyond_l2=False) is None
    # FMA chains on the CUDA cores: held to the FP32 lanes, not the 3xTF32 tensor path
    f = roofline_floor(dev, "fp32-simt", 1e12, 0.0, beyond_l2=False)
    assert f.seconds == pytest.approx(1e12 / (132 * 128 * 2 * 1980e6))
    assert floor_check(0.9 * f.seconds, f, (1, 1, 1)).passed is False
    assert floor_check(f.seconds, f, (1, 1, 1)).passed is True
    assert floor_check(1.0, None, (1, 1, 1)) is None


def test_recorded_rungs_and_ceilings_clear_the_floor():
    """Every timed figure of the recorded H200 run sits above its floor: the guard trips on none."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "h200_report_levels.json").read_text())
    dev = doc["device"]
    for r in doc["gemm"]["rungs"]:
        if not r.get("timing"):
            continue
        f = roofline_floor(dev, r["precision"], r["flops"], 0.0, beyond_l2=False)
        assert floor_check(r["timing"]["median_ms"] * 1e-3, f, (r["m"], r["n"], r["k"])).passed, r["kernel"]
    for r in doc["flops"]["rows"]:
        f = roofline_floor(dev, "fp32-simt", r["flops"], 0.0, beyond_l2=False)
        assert floor_check(r["timing"]["median_ms"] * 1e-3, f, (1, 1, 1)).passed
    bw = doc["bandwidth"]
    for row in bw["sweep"]:
        for run in row["runs"]:
            f = roofline_floor(dev, "fp32", 0.0, run["bytes"], beyond_l2=True)
            assert floor_check(run["timing"]["median_ms"] * 1e-3, f, (1, 1, 1)).passed
