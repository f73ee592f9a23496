"""The memory harness's host code run end to end against a fake CuPy: NumPy arrays, the
kernels executed as Python transcriptions of their loops, CUDA events on a virtual clock. This
catches what a GPU run would otherwise find first: argument lists, dtypes, shapes, the checks, the
section's layout, and that the renderers accept what run() writes. Each fake kernel is built from
the -D options it is compiled with, as the real one is, so a record whose constants the harness
did not pass would fail its check. The real kernels are exercised by tests/test_gpu_memory.py."""

from __future__ import annotations

import types

import numpy as np
import pytest

from rooflab.cuda.device import DeviceInfo

MiB = 2**20
THREADS_PER_SM = 512


class _Clock:
    ms = 0.0


class _Event:
    def __init__(self):
        self.t = 0.0

    def record(self):
        self.t = _Clock.ms

    def synchronize(self):
        pass


def _l2_walk(grid, block, n4, step, iters, unroll):
    T = grid * block
    i = np.arange(T, dtype=np.int64) % n4
    for _ in range(iters):
        idx = [i]
        for _u in range(unroll - 1):
            nxt = idx[-1] + step
            idx.append(np.where(nxt >= n4, nxt - n4, nxt))
        yield idx
        nxt = idx[-1] + step
        i = np.where(nxt >= n4, nxt - n4, nxt)


def _l2_read(grid, block, args, broken, L2_UNROLL=4, **_defines):
    buf, partial, n4, step, iters = args
    f4 = buf[: int(n4) * 4].reshape(-1, 4)
    s = [np.zeros(grid * block, np.float32) for _ in range(L2_UNROLL)]
    for idx in _l2_walk(grid, block, int(n4), int(step), int(iters), L2_UNROLL):
        for u in range(L2_UNROLL):
            v = f4[idx[u]]
            s[u] = (s[u] + ((v[:, 0] + v[:, 1]) + (v[:, 2] + v[:, 3]))).astype(np.float32)
    w = 1
    while w < L2_UNROLL:  # pairwise, as l2.cu adds its accumulators: (s0 + s1) + (s2 + s3)
        for u in range(0, L2_UNROLL - w, 2 * w):
            s[u] = (s[u] + s[u + w]).astype(np.float32)
        w *= 2
    partial[:] = s[0]
    if broken:
        partial[0] = np.nan


def _l2_copy(grid, block, args, broken, L2_UNROLL=4, **_defines):
    src, out, n4, step, iters = args
    s4, o4 = src.reshape(-1, 4), out.reshape(-1, 4)
    for idx in _l2_walk(grid, block, int(n4), int(step), int(iters), L2_UNROLL):
        for u in range(L2_UNROLL):
            o4[idx[u]] = s4[idx[u]]


def _smem(stride):
    def run(grid, block, args, broken, SMEM_UNROLL=4, **_defines):
        out, iters, step, mask = args
        from rooflab.measure.memory import smem_words

        words = smem_words().astype(np.uint64)
        lane = np.arange(block) % 32
        acc0 = np.zeros(block, np.uint64)
        acc1 = np.zeros(block, np.uint64)
        b = 0
        u_stride = 32 if stride == 1 else 1
        for _ in range(int(iters)):
            for u in range(SMEM_UNROLL):
                v = words[lane * stride + b + u * u_stride]
                acc0 = (acc0 + v[:, 0] + v[:, 1]) & 0xFFFFFFFF
                acc1 = (acc1 + v[:, 2] + v[:, 3]) & 0xFFFFFFFF
            b = (b + int(step)) & int(mask)
        one = ((acc0 + acc1) & 0xFFFFFFFF).astype(np.uint32)
        if broken:
            one[5] ^= 1
        out[: grid * block] = np.tile(one, grid)
    return run


def _dfma(grid, block, args, broken, FMA_PER_CHAIN_PER_ITER=16, **_defines):
    out, iters, x, y = args
    t = np.arange(block, dtype=np.float64)
    accs = [t * 0.0009765625 + j for j in range(8)]
    for _ in range(int(iters) * FMA_PER_CHAIN_PER_ITER):
        accs = [a * float(x) + float(y) for a in accs]
    s = np.zeros(block)
    for a in accs:
        s = s + a
    out[: grid * block] = np.tile(s, grid)


def _hfma2(grid, block, args, broken, **_defines):
    out, iters, xbits, ybits = args
    from rooflab.measure.memory import hfma2_emulate

    assert isinstance(xbits, np.uint32) and isinstance(ybits, np.uint32)  # half2 bit patterns
    lo = [float(np.array([int(b) & 0xFFFF], np.uint16).view(np.float16)[0]) for b in (xbits, ybits)]
    hi = [float(np.array([int(b) >> 16], np.uint16).view(np.float16)[0]) for b in (xbits, ybits)]
    assert lo == hi
    one = hfma2_emulate(block, int(iters), x=lo[0], y=lo[1])  # the fused arithmetic, per step
    out[: grid * block] = np.tile(one.reshape(-1).view(np.uint32), grid)


KERNELS = {"l2_read": _l2_read, "l2_copy": _l2_copy, "smem_read<1>": _smem(1), "smem_read<8>": _smem(8),
           "dfma_chain<8>": _dfma, "hfma2_chain<8>": _hfma2}


class CompileError(Exception):
    pass


def make_fake(broken=(), uncompilable=()):
    builds = []  # the options of every compile

    class Function:
        def __init__(self, name, defines):
            self.name, self.defines = name, defines
            self.attributes = {"num_regs": 30, "shared_size_bytes": 0, "local_size_bytes": 0,
                               "max_threads_per_block": 1024}

        def __call__(self, grid, block, args, shared_mem=0):
            assert len(grid) == 3 and len(block) == 3 and grid[1:] == (1, 1) and block[1:] == (1, 1)
            for a in args:
                assert isinstance(a, (np.ndarray, np.generic)), (self.name, type(a))
            KERNELS[self.name](grid[0], block[0], args, self.name in broken, **self.defines)
            iters = next(int(a) for a in args if isinstance(a, np.int32))
            _Clock.ms += 1e-4 * grid[0] * block[0] * iters  # virtual time: launches ~scale with work

    class Module:
        def __init__(self, code, options, name_expressions):
            self.code = code
            self.defines = dict(o[2:].split("=") for o in options if o.startswith("-D"))
            self.defines = {k: int(v) for k, v in self.defines.items()}
            builds.append(tuple(options))

        def compile(self):
            pass

        def get_function(self, name):
            if name in uncompilable:
                raise CompileError(f"{name}: cannot open source file cuda_fp16.h")
            return Function(name, self.defines)

    class RandomState:
        def __init__(self, seed):
            self.rs = np.random.RandomState(seed)

        def uniform(self, lo, hi, n, dtype):
            return self.rs.uniform(lo, hi, n).astype(dtype)

    errs = types.SimpleNamespace(CUDADriverError=RuntimeError, CUDARuntimeError=RuntimeError,
                                 CompileException=CompileError, OutOfMemoryError=MemoryError)
    cuda = types.SimpleNamespace(
        Event=_Event, get_elapsed_time=lambda a, b: b.t - a.t,
        get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None),
        runtime=types.SimpleNamespace(deviceGetAttribute=lambda attr, dev: THREADS_PER_SM,
                                      memGetInfo=lambda: (8 * 2**30, 16 * 2**30), CUDARuntimeError=RuntimeError),
        driver=errs, compiler=errs, memory=errs)
    return types.SimpleNamespace(
        cuda=cuda, RawModule=Module, random=types.SimpleNamespace(RandomState=RandomState),
        empty=lambda n, dtype: np.empty(n, dtype), empty_like=np.empty_like, full=np.full,
        sum=lambda x, dtype=None: np.sum(x, dtype=dtype), asnumpy=np.asarray, array_equal=np.array_equal,
        float32=np.float32, float64=np.float64, uint32=np.uint32, __version__="fake", builds=builds)


@pytest.fixture
def fake(monkeypatch):
    import rooflab.cuda.compile as compile_mod
    import rooflab.cuda.gpu as gpu_mod
    import rooflab.cuda.timing as timing_mod
    import rooflab.measure.memory as mem_mod

    def install(**kw):
        fake_cp = make_fake(**kw)
        for mod in (gpu_mod, compile_mod, timing_mod, mem_mod):
            monkeypatch.setattr(mod, "cupy", lambda fake_cp=fake_cp: fake_cp)
        compile_mod._module.cache_clear()
        return fake_cp

    yield install
    compile_mod._module.cache_clear()


@pytest.fixture
def device():
    return DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=2, fp32_cores_per_sm=128,
                      sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=MiB,
                      memory_bytes=16 * 2**30)


def _cfg(**kw):
    from rooflab.measure.memory import MemoryConfig

    return MemoryConfig(rounds=2, reps=3, target_ms=2.0, footprints=(MiB // 4, 2 * MiB), copy_footprint=MiB // 4, **kw)


def test_run_end_to_end(fake, device, capsys):
    from rooflab import results
    from rooflab.measure.memory import run
    from rooflab.report.memory import memory_paragraphs, memory_tables

    fake()
    messages = []
    sec = run(_cfg(), device, messages.append)
    assert capsys.readouterr() == ("", "")  # library code prints nothing
    assert any(m.startswith("round 2/2") for m in messages)
    rows = [*sec["l2_sweep"]["rows"], sec["l2_copy"], *sec["shared"]["rows"], sec["fp64"], sec["fp16"]]
    for r in rows:
        assert r["verified"] and not r.get("error"), r
        assert len(r["rounds"]) == 2 and r["rate"] > 0 and r["iters"] >= 1
    assert sec["l2_sweep"]["rows"][0]["check"]["rel_err"] < 1e-6
    assert sec["shared"]["rows"][0]["check"]["mismatches"] == 0
    assert sec["method"]["grid"] == 2 * THREADS_PER_SM // 256
    s = sec["summary"]
    assert s["shared_bytes_per_s"] and s["fp64_flops"] and s["fp16_flops"] and s["l2_bytes_per_s"]
    assert s["l2_footprint_bytes"] == MiB // 4 and s["beyond_l2_footprint_bytes"] == 2 * MiB
    assert sec["theoretical"]["fp16_flops"] == pytest.approx(2 * 256 * 2 * 1980e6)
    doc = results.new_document("test", {"name": device.name, "fp32_peak_flops": device.fp32_peak_flops,
                                        "hbm_peak_bytes_per_s": device.hbm_peak_bytes_per_s, "sm_count": 2,
                                        "sm_clock_max_mhz": 1980.0, "cc": [9, 0]})
    doc["memory"] = sec
    assert [t.key for t in memory_tables(doc)] == ["memory_l2", "memory_shared", "memory_peaks"]
    assert memory_paragraphs(doc)
    assert results.dumps(doc)


def test_a_failed_check_gets_no_rate(fake, device):
    from rooflab.measure.memory import run

    fake(broken=("smem_read<1>", "l2_read"))
    sec = run(_cfg(), device)
    cf = next(r for r in sec["shared"]["rows"] if r["variant"] == "conflict-free")
    assert not cf["verified"] and cf["rounds"] == [] and cf.get("rate") is None
    assert cf["check"]["mismatches"] == 2 * THREADS_PER_SM // 256  # thread 5 of every block
    assert all(not r["verified"] and r["rounds"] == [] for r in sec["l2_sweep"]["rows"])
    assert "shared_bytes_per_s" not in sec["summary"] and "l2_bytes_per_s" not in sec["summary"]
    assert sec["fp64"]["verified"] and sec["fp64"]["rate"]


def test_a_part_that_does_not_compile_keeps_the_others(fake, device):
    from rooflab.measure.memory import run

    fake(uncompilable=("hfma2_chain<8>",))
    sec = run(_cfg(parts=("shared", "fp64", "fp16")), device)
    assert "cuda_fp16.h" in sec["fp16"]["error"] and not sec["fp16"]["verified"]
    assert sec["fp64"]["verified"] and all(r["verified"] for r in sec["shared"]["rows"])
    assert "l2_sweep" not in sec


def test_a_rate_above_the_units_limit_is_failed(fake, device, monkeypatch):
    """The impossible-result guard on the memory ceilings: a shared-memory stream or an FMA chain timed
    faster than the banks or lanes can run at the maximum clock gets no rate."""
    import rooflab.measure.memory as mem_mod
    from rooflab.cuda.timing import Timing
    from rooflab.measure.memory import run

    fake()
    sec = run(_cfg(parts=("shared", "fp64")), device)
    assert all(c["passed"] for r in [*sec["shared"]["rows"], sec["fp64"]] for c in r["proof"])
    # the timed rounds report a microsecond for work that takes milliseconds at the units' limit
    monkeypatch.setattr(mem_mod, "time_kernel", lambda launch, *, label, reps, warmup=1, pci_bus_id="":
                        Timing([1e-3] * reps, warmup, False))
    sec = run(_cfg(parts=("shared", "fp64")), device)
    for r in [*sec["shared"]["rows"], sec["fp64"]]:
        assert not r["verified"] and r["error"].startswith("faster than this GPU can run it"), r.get("error")
        assert r.get("rate") is None
    assert "shared_bytes_per_s" not in sec["summary"] and "fp64_flops" not in sec["summary"]


def test_the_records_constants_reach_the_kernels_and_the_model(fake, device, monkeypatch):
    """Change a ceiling record's constant and both the -D options the kernel is built with and the
    bytes or FLOPs counted follow: the fake kernels run what those options say, so the checks pass
    only if the harness built them with the record's values."""
    from rooflab import ceilings
    from rooflab.measure.memory import run

    monkeypatch.setattr(ceilings, "SHARED", ceilings.SHARED.with_defines(SMEM_UNROLL=8))
    monkeypatch.setattr(ceilings, "FMA64", ceilings.FMA64.with_defines(FMA_PER_CHAIN_PER_ITER=32))
    cp = fake()
    sec = run(_cfg(parts=("shared", "fp64")), device)
    assert any("-DSMEM_UNROLL=8" in b for b in cp.builds) and any("-DFMA_PER_CHAIN_PER_ITER=32" in b for b in cp.builds)
    threads = 2 * THREADS_PER_SM
    for r in sec["shared"]["rows"]:
        assert r["verified"] and r["check"]["mismatches"] == 0, r
        assert r["bytes"] == 16.0 * threads * 8 * r["iters"]
    assert sec["shared"]["bytes"] == "16 x threads x 8 x iters"
    fp64 = sec["fp64"]
    assert fp64["verified"] and fp64["check"]["mismatches"] == 0
    assert fp64["flops"] == float(threads) * fp64["iters"] * 32 * 8 * 2
    assert fp64["flops_basis"] == "threads x iters x 32 x 8 DFMA x 2"


def test_the_default_records_give_the_documented_bases(fake, device):
    """With the shipped records, the bases written into the section read as before."""
    from rooflab.measure.memory import run

    cp = fake()
    sec = run(_cfg(parts=("l2", "l2_copy", "shared", "fp64")), device)
    assert sec["l2_sweep"]["bytes"] == "16 x threads x 4 x iters (reads only)"
    assert sec["l2_copy"]["bytes_basis"] == "32 x threads x 4 x iters (16 read + 16 written per element visit)"
    assert sec["shared"]["bytes"] == "16 x threads x 4 x iters" and sec["shared"]["buffer_bytes"] == 8192
    assert sec["fp64"]["flops_basis"] == "threads x iters x 16 x 8 DFMA x 2"
    assert sec["method"]["l2_loads"] == "ld.global.cg (cached in L2, not L1), 4 x 16 B in flight per thread"
    assert any(b[-2:] == ("-DL2_UNROLL=4", "-DL2_BLOCK=256") for b in cp.builds)


def test_a_shared_memory_variant_added_to_the_record_shows_in_the_table(fake, device, monkeypatch):
    """A lane stride that only the record names (smem.cu's template, instantiated by NVRTC from the
    name) is checked, timed in every round and has its row in the shared-memory table, with no
    other edit."""
    import dataclasses

    from rooflab import ceilings, results
    from rooflab.cuda.device import document_entry
    from rooflab.measure.memory import run
    from rooflab.report.memory import memory_tables

    two_way = ceilings.SharedVariant(2, 64, 255, 8, "lanes 32 B apart: a 2-way conflict")
    shared = dataclasses.replace(ceilings.SHARED, variant_list=(*ceilings.SHARED.variant_list, ("2-way conflict", two_way)))
    monkeypatch.setattr(ceilings, "SHARED", shared)
    monkeypatch.setitem(KERNELS, "smem_read<2>", _smem(2))
    fake()
    sec = run(_cfg(parts=("shared",)), device)
    row = next(r for r in sec["shared"]["rows"] if r["variant"] == "2-way conflict")
    assert row["kernel"] == "smem_read<2>" and row["verified"] and len(row["rounds"]) == 2 and row["rate"] > 0
    doc = results.new_document("test", document_entry(device))
    doc["memory"] = sec
    table = next(t for t in memory_tables(doc) if t.key == "memory_shared")
    assert any(str(r[0]).startswith("2-way conflict: lanes 32 B apart") and r[3] == 8 for r in table.rows)
    assert results.schema_problem(doc) is None
