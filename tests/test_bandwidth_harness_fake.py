"""The bandwidth section's host code end to end against a fake CuPy (NumPy arrays, the copy and read
kernels as NumPy transcriptions, CUDA events on a virtual clock that runs at a plausible bandwidth):
argument lists, the checked-then-proven timing of every configuration, the read variants and their
witnesses, and that the renderers accept what run() writes. A kernel that stops copying once timed
is FAILED. The real kernels run in tests/test_gpu_roofs.py."""

from __future__ import annotations

import ctypes
import re
import types

import numpy as np
import pytest

from rooflab import ceilings
from rooflab.cuda.device import DeviceInfo

RATE = 4.0e12  # bytes/s the fake device moves: below the 4.81 TB/s pin rate


class _Clock:
    ms = 0.0


class _Event:
    def __init__(self):
        self.t = 0.0

    def record(self, stream=None):
        self.t = _Clock.ms

    def synchronize(self):
        pass


class _Ptr:
    def __init__(self, arr):
        self.ptr = arr.ctypes.data


class Arr(np.ndarray):
    """A NumPy array with CuPy's .data.ptr."""

    @property
    def data(self):  # noqa: D401
        return _Ptr(self)


def _arr(x) -> Arr:
    return np.asarray(x).view(Arr)


def _advance(nbytes: float) -> None:
    _Clock.ms += nbytes / RATE * 1e3


def _kernels(broken: set[str], state: dict):
    def copy(grid, block, args):
        src, out, n = args
        if "copy_float4" in broken and state["launches"] > 3:
            return  # copies on its first launches, then stops
        out[: int(n)] = src[: int(n)]
        _advance(8.0 * int(n))

    def scale(grid, block, args):
        x, y, a, n = args
        y[: int(n)] = x[: int(n)] * a
        _advance(8.0 * int(n))

    def read(grid, block, args):
        src, partial, n = args
        partial[:] = 0.0
        partial[0] = np.float32(np.sum(src[: int(n)], dtype=np.float64))
        _advance(4.0 * int(n))

    def write(grid, block, args):
        out, value, n = args
        out[: int(n)] = value
        _advance(4.0 * int(n))

    table = {"copy_scalar": copy, "copy_float4": copy, "scale_float4": scale, "read_float4": read,
             "write_float4": write}

    def lookup(name):
        if name in table:
            return table[name]
        if re.fullmatch(r"copy_float4_unroll<\d+>", name):
            return copy
        if re.fullmatch(r"read_float4_(unroll|batched)<\d+, \d>", name):
            return read
        raise KeyError(name)
    return lookup


def make_fake(broken=()):
    state = {"launches": 0, "log": []}  # log: (kernel, grid, block) of every launch
    lookup = _kernels(set(broken), state)

    class Function:
        def __init__(self, name):
            self.name = name
            self.attributes = {"num_regs": 30, "shared_size_bytes": 0, "local_size_bytes": 0,
                               "max_threads_per_block": 1024}

        def __call__(self, grid, block, args, shared_mem=0):
            for a in args:
                assert isinstance(a, (np.ndarray, np.generic)), (self.name, type(a))
            if self.name == "copy_float4":
                state["launches"] += 1
            state["log"].append((self.name, grid[0], block[0]))
            lookup(self.name)(grid[0], block[0], args)

    class Module:
        def __init__(self, code, options, name_expressions):
            pass

        def compile(self):
            pass

        def get_function(self, name):
            lookup(name)
            return Function(name)

    class RandomState:
        def __init__(self, seed):
            self.rs = np.random.RandomState(seed)

        def uniform(self, lo, hi, n, dtype):
            return _arr(self.rs.uniform(lo, hi, n).astype(dtype))

    def memcpy(dst, src, nbytes, kind, stream):
        ctypes.memmove(dst, src, nbytes)
        _advance(2.0 * nbytes)

    def memset(ptr, value, nbytes, stream):
        ctypes.memset(ptr, value, nbytes)
        _advance(float(nbytes))

    errs = types.SimpleNamespace(CUDADriverError=RuntimeError, CUDARuntimeError=RuntimeError,
                                 CompileException=RuntimeError, OutOfMemoryError=MemoryError)
    stream = types.SimpleNamespace(synchronize=lambda: None, ptr=0)
    cuda = types.SimpleNamespace(
        Event=_Event, get_elapsed_time=lambda a, b: b.t - a.t, get_current_stream=lambda: stream,
        runtime=types.SimpleNamespace(deviceGetAttribute=lambda attr, dev: 2048, memcpyAsync=memcpy,
                                      memsetAsync=memset, CUDARuntimeError=RuntimeError),
        driver=errs, compiler=errs, memory=errs)
    return types.SimpleNamespace(
        cuda=cuda, RawModule=Module, random=types.SimpleNamespace(RandomState=RandomState),
        empty=lambda n, dtype: _arr(np.empty(n, dtype)), empty_like=lambda a: _arr(np.empty_like(a)),
        sum=lambda x, dtype=None: np.sum(x, dtype=dtype), abs=np.abs, all=np.all, any=np.any,
        array_equal=np.array_equal, count_nonzero=np.count_nonzero, asnumpy=np.asarray,
        float32=np.float32, float64=np.float64, uint32=np.uint32, __version__="fake", log=state["log"])


@pytest.fixture
def fake(monkeypatch):
    import rooflab.cuda.compile as compile_mod
    import rooflab.cuda.gpu as gpu_mod
    import rooflab.cuda.timing as timing_mod
    import rooflab.measure.bandwidth as bw_mod
    import rooflab.measure.guards as guards_mod
    import rooflab.measure.read_stream as rs_mod

    def install(**kw):
        cp = make_fake(**kw)
        for mod in (gpu_mod, compile_mod, timing_mod, bw_mod, guards_mod, rs_mod):
            monkeypatch.setattr(mod, "cupy", lambda cp=cp: cp)
        compile_mod._module.cache_clear()
        _Clock.ms = 0.0
        return cp

    yield install
    compile_mod._module.cache_clear()


@pytest.fixture
def device():
    return DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=2, fp32_cores_per_sm=128,
                      sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=2**16,
                      memory_bytes=16 * 2**30)


def _cfg():
    from rooflab.measure.bandwidth import BandwidthConfig

    return BandwidthConfig(n=(1 << 16) + 3, reps=50, rounds=1, blocks=(256,), sweep=False)


def test_run_end_to_end(fake, device, capsys):
    from rooflab import results
    from rooflab.measure.bandwidth import run
    from rooflab.model.brackets import brackets
    from rooflab.report.ceilings import bandwidth_tables, bracket_table
    from rooflab.report.explain_ceilings import bandwidth_paragraphs

    fake()
    sec = run(_cfg(), device)
    assert capsys.readouterr() == ("", "")
    assert all(r["verified"] for r in sec["memcpy"]) and sec["scale"]["verified"] and sec["scale"]["gflops"]
    d = sec["directions"]
    assert d["read"]["verified"] and d["write"]["verified"] and d["write_memset"]["verified"]
    assert len(d["read_variants"]) == 3 * len(ceilings.READ_VARIANTS) and all(r["verified"] for r in d["read_variants"])
    assert {r["waves"] for r in d["read_variants"]} == {1, 2, 4}
    assert "error" in d["read_cub"]  # no CuPy here: the witness says why it is missing
    for r in [*sec["memcpy"], d["read"], d["write"], *d["read_variants"], sec["scale"]]:
        assert [c["name"] for c in r["proof"]] == ["last timed launch", "roofline floor"], r["label"]
        assert all(c["passed"] for c in r["proof"]), r["label"]
    dev = {"name": device.name, "sm_count": 2, "sm_clock_max_mhz": 1980.0, "mem_clock_max_mhz": 3201.0,
           "bus_width_bits": 6016, "cc": [9, 0], "l2_bytes": device.l2_bytes,
           "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s, "fp32_peak_flops": device.fp32_peak_flops}
    doc = results.new_document("test", dev)
    doc["bandwidth"] = sec
    by = {b.name: b for b in brackets(doc)}
    assert by["HBM read"].error is None and by["HBM read"].ceiling < by["HBM read"].limit.value
    assert by["HBM write"].witness_what == "cudaMemsetAsync"
    assert bandwidth_tables(doc) and bracket_table(doc) and bandwidth_paragraphs(doc)
    assert results.dumps(doc)


def test_a_copy_that_stops_once_timed_is_failed(fake, device):
    from rooflab.measure.bandwidth import run

    fake(broken=("copy_float4",))
    sec = run(_cfg(), device)
    row = next(r for r in sec["sweep"] if r["kernel"] == "copy_float4")
    run_ = row["runs"][0]
    assert not run_["verified"] and run_.get("gbs") is None
    assert run_["error"].startswith("faster than this GPU can run it")
    assert not next(c for c in run_["proof"] if c["name"] == "last timed launch")["passed"]


def test_the_stream_records_geometry_is_what_runs_and_what_is_counted(fake, device, monkeypatch):
    """The read and write passes launch at the block and elements per thread their records give, and
    the bytes counted follow the record (the read's partial sums included)."""
    import dataclasses

    from rooflab import ceilings
    from rooflab.measure.bandwidth import run

    n = _cfg().n
    read = dataclasses.replace(ceilings.READ, per_thread=128, block=512)
    write = dataclasses.replace(ceilings.WRITE, block=64, arrays=0.75)  # more would beat the pins: FAILED
    monkeypatch.setattr(ceilings, "READ", read)
    monkeypatch.setattr(ceilings, "WRITE", write)
    cp = fake()
    d = run(_cfg(), device)["directions"]
    rgrid = -(-(-(-n // 128)) // 512)
    wgrid = -(-(-(-n // 4)) // 64)
    assert ("read_float4", rgrid, 512) in cp.log and ("write_float4", wgrid, 64) in cp.log
    assert not [x for x in cp.log if x[0] in ("read_float4", "write_float4") and x not in
                (("read_float4", rgrid, 512), ("write_float4", wgrid, 64))]
    assert d["read"]["verified"] and d["read"]["bytes"] == 4.0 * n + rgrid * 512 * 4.0
    assert d["write"]["verified"] and d["write"]["bytes"] == 0.75 * 4.0 * n
    assert "16 float4 per thread" not in d["note"] and "32 float4 per thread, block 512" in d["note"]


def test_a_stream_record_added_to_the_sweep_shows_in_the_tables(fake, device, monkeypatch):
    """A copy kernel that only a record names (here the 8-deep instance copy.cu also compiles) is
    swept, checked and timed like the others and has its rows in the document's launch-sweep table
    and CSV, with no other edit."""
    from rooflab import ceilings, results
    from rooflab.cuda.device import document_entry
    from rooflab.measure.bandwidth import BandwidthConfig, run
    from rooflab.report.ceilings import bandwidth_tables

    deep = ceilings.Stream("copy_float4_unroll<8>", "float4, 8 loads in flight per thread", arrays=2, per_thread=32)
    monkeypatch.setattr(ceilings, "SWEEP", (*ceilings.SWEEP, deep))
    fake()
    sec = run(BandwidthConfig(n=(1 << 16) + 3, reps=50, rounds=1, blocks=(256,), sweep=True), device)
    mine = [r for r in sec["sweep"] if r["kernel"] == deep.kernel]
    assert mine and all(r["description"] == deep.what and r["runs"][0]["verified"] for r in mine)
    doc = results.new_document("test", document_entry(device))
    doc["bandwidth"] = sec
    sweep = next(t for t in bandwidth_tables(doc) if t.key == "bandwidth_sweep")
    assert sum(1 for row in sweep.rows if row[0] == deep.kernel) == len(mine)
    assert results.schema_problem(doc) is None
