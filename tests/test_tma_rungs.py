"""The TMA-fed BF16 wgmma rungs (rungs/wgmma_bf16_tma.cu, rooflab.cuda.tma) with no GPU: the
records launch the kernels as they are built, the tensor maps are encoded with the parameters the
kernels' shared layouts assume (the driver call faked), the host path pads what TMA cannot read,
the kernels' PTX holds the instructions the rungs are about, and the ring protocol the kernels
follow neither deadlocks nor overwrites a slot that is still being read. GPU tests:
tests/test_gpu_tma.py."""

from __future__ import annotations

import ctypes
import random
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from rooflab.cuda import staging, tma
from rooflab.errors import KernelError
from rooflab.rungs import wgmma_bf16_tma as rec
from rooflab.rungs.wgmma_bf16_tma import TMA_RUNGS, WGMMA_BF16_TMA, WGMMA_BF16_TMA_WS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rooflab" / "rungs" / "wgmma_bf16_tma.cu"
INCLUDE = ROOT / "src" / "rooflab" / "include"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH")
SMEM_LIMIT = 227 * 1024  # per block on sm_90, dynamic + static


def _instances(src: Path = SRC) -> dict[str, tuple[int, str, tuple[int, ...]]]:
    """kernel -> (launch-bound threads, body, template arguments), from the .cu's entry points; the
    persistent body (include/tma_persistent.cuh) as "body_persistent", its operand policy dropped."""
    found = re.findall(r'extern "C" __global__ void (?:\w+_CLUSTER_DIMS_\d+ )?__launch_bounds__\((\d+), 1\)'
                       r'\s*\n(\w+)\(.*?\n\{.*?(tma_gemm::body(?:_ws)?|tma_persistent::body)<((?:\w+::)*\w+(?:<[\d, ]+>)?,'
                       r'[\w, ]+)>\(', src.read_text(), flags=re.S)
    flag = {"true": 1, "false": 0}
    out = {}
    for t, name, body, args in found:
        if body == "tma_persistent::body":
            body, args = "body_persistent", re.sub(r"^(?:\w+::)*\w+(?:<[\d, ]+>)?,", "", args)
        else:
            body = body.split("::")[1]
        out[name] = (int(t), body, tuple(flag[x.strip()] if x.strip() in flag else int(x) for x in args.split(",")))
    return out


# -- records ---------------------------------------------------------------------------------------

def test_the_rungs_sit_in_the_tensor_ladder_after_wgmma_bf16():
    from rooflab import rungs

    names = rungs.names()
    i = names.index("wgmma_bf16")
    assert names[i + 1:i + 6] == ["wgmma_bf16_tma", "wgmma_bf16_tma_ws", "wgmma_bf16_persistent", "wgmma_bf16_cluster",
                                  "wgmma_bf16_tma_store"]
    assert names.index("cublas_bf16") > i + 5


@pytest.mark.parametrize("rung", TMA_RUNGS, ids=lambda r: r.name)
def test_every_variant_launches_its_kernel_as_the_kernel_is_built(rung):
    """Block, shared memory and tile of each variant follow from the kernel's template arguments: a
    record that asked for less shared memory than the ring, or tiled the grid differently, would
    fault or leave C partly unwritten."""
    inst = _instances()
    assert rung.variants and rung.kernel == rung.variants[0].kernel
    assert (rung.block, rung.grid, rung.shared_mem) == (rung.variants[0].block, rung.variants[0].grid,
                                                         rung.variants[0].shared_mem)
    for v in rung.variants:
        threads, body, args = inst[v.kernel]
        if body == "body_persistent":
            cluster, stages, producer_regs, consumer_regs, store, *rest = args
            # a pair launched as a cluster with each CTA on its own: the grid of the launch, the body's schedule alone
            launched = 2 if "each CTA on its own" in v.label else cluster
            group, c_bufs = rest[0] if rest else 16, rest[1] if len(rest) > 1 else 2
            assert group in (8, 16, 32) and (f"groups of {group}" in v.label) == (group != 16), v.label
            # C boxes a consumer stages at once: the label names any but the default 2
            assert 2 <= c_bufs <= 8 and (f"{c_bufs} of 8 C boxes staged" in v.label) == (c_bufs != 2), v.label
            assert store or c_bufs == 2, v.label
            smem = rec.store_smem_bytes(stages, c_bufs) if store else rec.smem_bytes(2, stages)
            assert bool(store) == (rung.staging == "tma_store")  # C's map is there only then
            assert 128 * (producer_regs + 2 * consumer_regs) <= 65536
            assert v.block == (384, 1, 1) == (threads, 1, 1) and v.shared_mem == smem, v.label
            assert smem + 1024 <= SMEM_LIMIT, v.label
            assert f"stages {stages}" in v.label and "128x256x64" in v.label
            tiles = -(-(-(-1000 // 128)) // launched) * -(-777 // 256)  # cluster tiles
            assert v.grid(1000, 777, 1234, sms=132) == (launched * tiles, 1, 1), v.label
            # the fewest blocks for the same rounds (2048 tiles: 16 rounds on 128 as on 132)
            assert v.grid(8192, 8192, 8192, sms=132) == (128, 1, 1) and v.grid(4096, 4096, 64, sms=132)[0] == 128
            assert v.grid(8192, 8192, 64, sms=114)[0] == 114 and v.grid(6144, 4096, 64, sms=132)[0] == 128
            assert v.grid(1, 1, 1, sms=132) == (launched, 1, 1)
            entry = re.search(rf'(\w+) __launch_bounds__\(384, 1\)\s*\n{v.kernel}\(', SRC.read_text()).group(1)
            assert (entry == f"TP_CLUSTER_DIMS_{launched}") == (launched > 1), (v.kernel, entry)
            assert (launched > 1) == ("clusters" in v.label) and cluster in (1, launched), v.label
            assert "#define TP_CLUSTER_DIMS_2 __cluster_dims__(2, 1, 1)" in (INCLUDE / "tma_persistent.cuh").read_text()
            continue
        if body == "body":
            wgs, stages = args
            block = 128 * wgs
        else:
            wgs, stages, producer_regs, consumer_regs = args
            block = 128 * (wgs + 1)
            assert 128 * (producer_regs + wgs * consumer_regs) <= 65536
            assert producer_regs % 8 == 0 and consumer_regs % 8 == 0 and 24 <= producer_regs <= consumer_regs <= 256
        assert v.block == (block, 1, 1) and threads == block, v.label
        assert v.shared_mem == rec.smem_bytes(wgs, stages) and v.shared_mem + 1024 <= SMEM_LIMIT, v.label
        assert v.grid(1000, 777, 1234) == (-(-1000 // (64 * wgs)) * -(-777 // 256), 1, 1), v.label
        assert f"{64 * wgs}x256x64" in v.label and f"stages {stages}" in v.label


@pytest.mark.parametrize("rung", TMA_RUNGS, ids=lambda r: r.name)
def test_the_rungs_are_bf16_sm90a_and_staged_through_tensor_maps(rung):
    assert (rung.precision, rung.inputs, rung.rounding) == ("bf16", "bf16", "bf16")
    assert rung.exact_cc and rung.requires_cc == (9, 0) and "-arch=sm_90a" in rung.options
    from rooflab.rungs.tensor import WGMMA_BF16

    assert rung.staging == (staging.TMA_STORE if rung.name == "wgmma_bf16_tma_store" else staging.TMA)
    assert rung.normwise_tol == WGMMA_BF16.normwise_tol  # the BF16 tolerance, not one of its own
    assert rung.model(4096, 4096, 4096)["bytes"] == 2.0 * rung.model(4096, 4096, 4096)["global_loads"] + 4.0 * 4096**2


def test_a_gpu_other_than_sm90_skips_the_rungs_saying_why():
    from rooflab.cuda.device import DeviceInfo
    from rooflab.measure.gemm import GemmConfig, skip_reason

    fields = DeviceInfo.__dataclass_fields__
    for cc in ((8, 0), (10, 0), (12, 0)):
        dev = DeviceInfo(**{name: (cc if name == "cc" else None) for name in fields})
        for rung in TMA_RUNGS:
            assert "sm_90a" in skip_reason(rung, GemmConfig(), dev)


def test_the_record_smem_formula_is_the_kernels(tmp_path):
    """MM_TMA_SMEM in the .cu and rec.smem_bytes agree (checked by the compiler)."""
    if NVCC is None:
        pytest.skip("nvcc is not on PATH")
    lines = [f'#include "{SRC}"']
    for wgs, stages in ((2, 4), (3, 4), (2, 3)):
        lines.append(f"static_assert(MM_TMA_SMEM({wgs}, {stages}) == {rec.smem_bytes(wgs, stages)}, \"smem\");")
    for stages, c_bufs in ((4, 2), (3, 5), (2, 8), (3, 2)):
        lines.append(f"static_assert(TP_STORE_SMEM_BUFS(1, 256, {stages}, {c_bufs}) == "
                     f"{rec.store_smem_bytes(stages, c_bufs)}, \"smem\");")
    lines.append(f"static_assert(MM_TMA_STORE_SMEM(4) == {rec.store_smem_bytes(4)}, \"smem\");")
    src = tmp_path / "smem.cu"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run([NVCC, "-arch=sm_90", "-std=c++17", "-cubin", f"-I{INCLUDE}", "-o", str(tmp_path / "s.cubin"),
                        str(src)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


# -- paragraphs ------------------------------------------------------------------------------------

def _step(prev_ms, this_ms, profile=None):
    from rooflab.report.climb.step import Share, Step

    def m(ms):
        return {"ms": ms, "gflops": 2 * 8192**3 / ms / 1e6, "pct_peak": Share(50.0), "speedup": 1.0}

    return Step(m(prev_ms), m(this_ms), {"kernel": "a", "checks": []}, {"kernel": "b", "checks": []}, profile or {})


def test_the_paragraphs_follow_the_run():
    """The direction and size of the change come from the two times, the counters from ncu where the
    run was profiled: a faster, an unchanged and a slower step read differently."""
    from rooflab.report import climb

    _, para = climb.PARAGRAPHS[("wgmma_bf16_tma", "wgmma_bf16")]
    assert "1.25× as fast" in para(_step(1.25, 1.0))
    assert "no faster" in para(_step(1.005, 1.0))
    assert "slower (0.80×" in para(_step(0.8, 1.0))
    assert "Run with profiling" in para(_step(1.25, 1.0))
    prof = {"b": {"issue_pct": 61.0, "registers": 168, "stalls": {"long_scoreboard": 0.5}}}
    text = para(_step(1.25, 1.0, prof))
    assert "Nsight Compute on b: issue slots 61% busy" in text and "Run with profiling" not in text
    ws = {after: fn for after, _h, fn in climb.steps(WGMMA_BF16_TMA_WS)}
    assert set(ws) == {"wgmma_bf16_tma", "cublas_bf16"}
    assert "1.022× cuBLAS's speed" in ws["cublas_bf16"](_step(1.022, 1.0))


# -- tensor maps -----------------------------------------------------------------------------------

def test_tensor_map_parameters_are_the_kernels_layout():
    """A: dims {K, M}; B: dims {N, K} (innermost first), byte pitches, 64 x 64 boxes of 128-byte rows,
    128-byte swizzle, BF16, zero fill: the shared layout the wgmma descriptors read."""
    sa, sb = tma.operand_specs(1000, 776, 1232)
    a, b = tma.encode_args(sa), tma.encode_args(sb)
    assert a["dims"] == (1232, 1000) and a["strides"] == (2464,)
    assert b["dims"] == (776, 1232) and b["strides"] == (1552,)
    for args in (a, b):
        assert args["box"] == (64, 64) and args["element_strides"] == (1, 1) and args["rank"] == 2
        assert (args["data_type"], args["swizzle"], args["interleave"], args["oob_fill"]) == (9, 3, 0, 0)
        assert args["l2_promotion"] == 3
    assert tma.BOX * tma.ELEMENT_BYTES == 128 == rec.BOX_BYTES // 64


def test_the_16_byte_pitch_rule():
    assert [tma.padded_pitch(c) for c in (1, 7, 8, 9, 4097, 8190)] == [16, 16, 16, 32, 8208, 16384]
    good = tma.MapSpec(rows=5, cols=8, pitch=16)
    assert good.problems(0x1000) == []
    assert any("aligned" in p for p in good.problems(0x1008))
    assert any("pitch 14" in p for p in tma.MapSpec(rows=5, cols=7, pitch=14).problems(0x1000))
    assert any("shorter" in p for p in tma.MapSpec(rows=5, cols=9, pitch=16).problems(0x1000))
    # a box spans at most 256 elements a side: a whole 224-row FP8 tile of B^T is one box, 257 rows are refused
    fp8 = tma.LAYOUTS["tma_fp8"].element
    assert tma.MapSpec(rows=4096, cols=4096, pitch=4096, element=fp8, box_rows=224).problems(0x1000) == []
    assert any("outside 1..256" in p for p in
               tma.MapSpec(rows=4096, cols=4096, pitch=4096, element=fp8, box_rows=257).problems(0x1000))


def test_a_map_tma_would_misread_is_never_encoded(monkeypatch):
    called = []
    monkeypatch.setitem(tma.ENCODERS, "ctypes", lambda spec, addr: called.append(1) or bytes(128))
    with pytest.raises(KernelError, match="not a multiple of 16"):
        tma.encode(tma.MapSpec(rows=3, cols=7, pitch=14), 0x1000, via="ctypes")
    assert not called


class _FakeLibcuda:
    def __init__(self, result=0):
        self.calls, self.result = [], result

    def cuTensorMapEncodeTiled(self, *args):  # noqa: N802 (the driver's name)
        at = args[0].value
        self.calls.append({"at": at, "data_type": args[1], "rank": args[2], "address": args[3].value,
                           "dims": tuple(args[4]), "strides": tuple(args[5]), "box": tuple(args[6]),
                           "element_strides": tuple(args[7]), "rest": args[8:]})
        ctypes.memmove(at, bytes(range(128)), 128)
        return self.result


def test_the_ctypes_encoder_passes_the_parameters_to_libcuda(monkeypatch):
    fake = _FakeLibcuda()
    monkeypatch.setattr(tma, "_libcuda", fake)
    spec = tma.operand_specs(64, 128, 4096)[1]
    out = tma.encode(spec, 0x7F0000001000, via="ctypes")
    (c,) = fake.calls
    assert out == bytes(range(128))
    assert c["at"] % 64 == 0  # the driver wants the map 64-byte aligned
    assert (c["data_type"], c["rank"], c["address"]) == (9, 2, 0x7F0000001000)
    assert (c["dims"], c["strides"], c["box"], c["element_strides"]) == ((128, 4096), (256,), (64, 64), (1, 1))
    assert c["rest"] == (0, 3, 3, 0)  # interleave, swizzle, L2 promotion, OOB fill


def test_a_driver_refusal_is_a_kernel_error(monkeypatch):
    monkeypatch.setattr(tma, "_libcuda", _FakeLibcuda(result=1))
    with pytest.raises(KernelError, match="cuTensorMapEncodeTiled failed: CUresult 1"):
        tma.encode(tma.operand_specs(64, 64, 64)[0], 0x1000, via="ctypes")


def _fake_bindings(monkeypatch, fail: type[Exception] | None = None):
    calls = []
    keep = (ctypes.c_ubyte * 128)(*range(128, 256))

    class Wrapped(int):
        pass

    def encode(*args):
        if fail:
            raise fail("signature changed")
        calls.append(args)
        return 0, types.SimpleNamespace(getPtr=lambda: ctypes.addressof(keep))

    driver = types.SimpleNamespace(
        cuuint64_t=type("cuuint64_t", (Wrapped,), {}), cuuint32_t=type("cuuint32_t", (Wrapped,), {}),
        CUtensorMapDataType=int, CUtensorMapInterleave=int, CUtensorMapSwizzle=int, CUtensorMapL2promotion=int,
        CUtensorMapFloatOOBfill=int, cuTensorMapEncodeTiled=encode)
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    monkeypatch.setitem(sys.modules, "cuda", cuda)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", driver)
    tma.encoder_name.cache_clear()
    return calls


def _no_libcuda(name, *a, **k):
    raise OSError(f"{name}: cannot open shared object file")


def test_ctypes_is_the_default_encoder_where_libcuda_loads(monkeypatch):
    _fake_bindings(monkeypatch)
    monkeypatch.setattr(tma.ctypes, "CDLL", lambda name, *a, **k: object())
    try:
        assert tma.encoder_name() == "ctypes"
    finally:
        tma.encoder_name.cache_clear()


def test_the_bindings_encoder_is_the_default_where_libcuda_does_not_load(monkeypatch):
    calls = _fake_bindings(monkeypatch)
    monkeypatch.setattr(tma.ctypes, "CDLL", _no_libcuda)
    try:
        assert tma.encoder_name() == "cuda.bindings"
        out = tma.encode(tma.operand_specs(256, 8192, 4096)[0], 0x2000)
    finally:
        tma.encoder_name.cache_clear()
    (args,) = calls
    assert out == bytes(range(128, 256))
    assert args[:3] == (9, 2, 0x2000)
    assert [int(x) for x in args[3]] == [4096, 256] and [int(x) for x in args[4]] == [8192]
    assert [int(x) for x in args[5]] == [64, 64] and [int(x) for x in args[6]] == [1, 1]
    assert type(args[3][0]).__name__ == "cuuint64_t" and type(args[5][0]).__name__ == "cuuint32_t"
    assert args[7:] == (0, 3, 3, 0)


def test_bindings_with_another_python_signature_fall_back_to_ctypes(monkeypatch):
    _fake_bindings(monkeypatch, fail=TypeError)
    monkeypatch.setattr(tma.ctypes, "CDLL", _no_libcuda)
    fake = _FakeLibcuda()
    monkeypatch.setattr(tma, "_libcuda", fake)
    try:
        assert tma.encode(tma.operand_specs(64, 64, 64)[0], 0x1000) == bytes(range(128))
    finally:
        tma.encoder_name.cache_clear()
    assert len(fake.calls) == 1


def test_the_padded_layout():
    for m, n, k in ((1, 1, 1), (1000, 777, 1234), (7, 8190, 4097), (33, 16, 7)):
        for a_ok, b_ok in ((False, False), (True, False), (False, True)):
            lay = tma.padded_layout(m, n, k, a_ok, b_ok)
            assert lay["a_pitch"] % 16 == 0 or a_ok
            assert lay["b_pitch"] % 16 == 0 or b_ok
            assert lay["a_pitch"] >= 2 * k and lay["b_pitch"] >= 2 * n
            assert lay["a_at"] >= 2 * tma.MAP_BYTES and lay["a_at"] % 256 == 0 and lay["b_at"] % 256 == 0
            a_end = lay["a_at"] + (0 if a_ok else m * lay["a_pitch"])
            assert lay["b_at"] >= a_end
            assert lay["bytes"] == lay["b_at"] + (0 if b_ok else k * lay["b_pitch"])


# -- the host path on a numpy stand-in for CuPy ----------------------------------------------------

class _Ptr:
    def __init__(self, arr):
        self.arr = arr

    @property
    def ptr(self):
        return self.arr.ctypes.data

    def copy_from_host_async(self, src, nbytes, stream=None):
        assert stream is not None, "the maps must be copied on the launch's stream"
        ctypes.memmove(self.ptr, src.value, nbytes)


class _Arr:
    """Just enough of cupy.ndarray over a numpy array (views share memory, so pointers are real)."""

    def __init__(self, a):
        self.a = a

    data = property(lambda self: _Ptr(self.a))
    flags = property(lambda self: self.a.flags)
    shape = property(lambda self: self.a.shape)

    def __getitem__(self, i):
        return _Arr(self.a[i])

    def __setitem__(self, i, v):
        self.a[i] = v.a if isinstance(v, _Arr) else v

    def view(self, dtype):
        return _Arr(self.a.view(dtype))

    def reshape(self, *s):
        return _Arr(self.a.reshape(*s))


class _FakeCupy:
    uint8, uint16, uint32 = np.uint8, np.uint16, np.uint32

    def __init__(self):
        self.syncs = 0
        fake = self

        class Stream:
            def synchronize(self):
                fake.syncs += 1

        self.cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(id=0), get_current_stream=Stream)

    def empty(self, n, dtype):
        buf = np.full(n + 512, 0xA5, dtype=np.uint8)  # 512-byte aligned like CuPy's pool; stale bytes, not zeros
        off = (-buf.ctypes.data) % 512
        return _Arr(buf[off:off + n].view(dtype))


def _bf16(rows, cols, seed):
    return np.random.default_rng(seed).integers(0, 2**16, (rows, cols), dtype=np.uint16)


@pytest.fixture
def host(monkeypatch):
    """operand_maps on the stand-in; every encode recorded as (spec, address) and returned as bytes
    that name the call."""
    cp = _FakeCupy()
    monkeypatch.setattr(tma, "cupy", lambda: cp)
    monkeypatch.setattr(tma, "_cache", type(tma._cache)())
    encoded = []

    def fake_encode(spec, address, via=None):
        assert not spec.problems(address)
        encoded.append((spec, address))
        return bytes([len(encoded)]) * tma.MAP_BYTES

    monkeypatch.setattr(tma, "encode", fake_encode)
    return cp, encoded


def _aligned(rows, cols, seed):
    x = _FakeCupy().empty(rows * cols * 2, np.uint8).view(np.uint16).reshape(rows, cols)
    x.a[:] = _bf16(rows, cols, seed)
    return x


def test_aligned_operands_are_mapped_where_they_are_and_cached(host):
    cp, encoded = host
    a, b = _aligned(64, 128, 1), _aligned(128, 256, 2)
    ma, mb = tma.operand_maps(a, b, 64, 256, 128, "t")
    assert [(s.rows, s.cols, s.pitch, addr) for s, addr in encoded] == [(64, 128, 256, a.data.ptr),
                                                                      (128, 256, 512, b.data.ptr)]
    assert bytes(ma.a) == bytes([1]) * 128 and bytes(mb.a) == bytes([2]) * 128
    assert mb.data.ptr - ma.data.ptr == 128 and ma.data.ptr % 64 == 0
    assert cp.syncs == 1  # the cached maps are complete before another stream can read them
    ma2, _ = tma.operand_maps(a, b, 64, 256, 128, "t")
    assert len(encoded) == 2 and ma2.data.ptr == ma.data.ptr  # cached per pointers and shape
    tma.operand_maps(a, b, 32, 256, 128, "t")  # another shape at the same pointers: its own maps
    assert len(encoded) == 4


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 16, 7), (5, 9, 8), (3, 8190, 17)])
def test_operands_tma_cannot_read_go_through_a_padded_copy(host, m, n, k):
    """K or N not a multiple of 8: that operand is copied with its rows padded to 16 bytes, the map
    names its true size and the copy's pitch; the other operand is mapped where it is."""
    _, encoded = host
    a, b = _arr(m, k, 3), _arr(k, n, 4)
    ma, mb = tma.operand_maps(a, b, m, n, k, "t")
    (sa, addr_a), (sb, addr_b) = encoded
    assert (sa.rows, sa.cols, sb.rows, sb.cols) == (m, k, k, n)
    base = ma.data.ptr
    for spec, addr, x, cols in ((sa, addr_a, a, k), (sb, addr_b, b, n)):
        if tma.usable_as_is(x, cols):
            assert addr == x.data.ptr and spec.pitch == 2 * cols
            continue
        assert spec.pitch == tma.padded_pitch(cols) and base < addr and addr % 256 == base % 256
        rows = ctypes.string_at(addr, spec.rows * spec.pitch)
        got = np.frombuffer(rows, dtype=np.uint16).reshape(spec.rows, spec.pitch // 2)[:, :cols]
        assert np.array_equal(got, x.a)
    assert bytes(ma.a) == bytes([1]) * 128 and bytes(mb.a) == bytes([2]) * 128


@pytest.mark.parametrize("n", [64, 36, 8190])
def test_a_chunked_b_is_read_in_whole_128_byte_chunks(host, n):
    """The chunked FP32 map reads B's rows in 32-column chunks up to the next multiple of 128 bytes: B is used
    where it lies when its rows are whole chunks (N a multiple of 32), else copied with its pitch so padded and
    the pad zeroed, as the last chunk reads it; A keeps the 16-byte rule."""
    _, encoded = host
    layout = tma.LAYOUTS["tma_f32_ab256"]
    m, k = 8, 12
    a, b = _FakeCupy().empty(m * k * 4, np.uint8).view(np.uint32).reshape(m, k), \
        _FakeCupy().empty(k * n * 4, np.uint8).view(np.uint32).reshape(k, n)
    b.a[:] = np.random.default_rng(7).integers(1, 2**32, (k, n), dtype=np.uint32)
    maps = tma.operand_maps(a, b, m, n, k, "t", layout=layout)  # they hold the copy's buffer
    (sa, addr_a), (sb, addr_b) = encoded
    assert addr_a == a.data.ptr and (sa.box, sa.chunks) == ((32, 256), 0)
    assert sb.dims == (32, k, -(-n // 32)) and sb.strides == (sb.pitch, 128) and sb.box == (32, 32, 4)
    assert sb.pitch % 128 == 0 and sb.pitch >= 4 * n
    if n % 32 == 0:
        assert addr_b == b.data.ptr and sb.pitch == 4 * n
        return
    rows = np.frombuffer(ctypes.string_at(addr_b, k * sb.pitch), dtype=np.uint32).reshape(k, sb.pitch // 4)
    assert np.array_equal(rows[:, :n], b.a) and not rows[:, n:].any() and maps[0].data.ptr < addr_b


def test_a_chunked_map_names_rank_3_and_refuses_a_pitch_of_part_chunks():
    spec = tma.MapSpec(rows=100, cols=8190, pitch=32768, element=tma.F32, box_rows=32, chunks=4)
    args = tma.encode_args(spec)
    assert args["rank"] == 3 and args["dims"] == (32, 100, 256) and args["element_strides"] == (1, 1, 1)
    assert spec.problems(0x1000) == []
    assert any("128-byte chunks" in p for p in tma.MapSpec(100, 8190, 32768 - 16, tma.F32, 32, 4).problems(0x1000))
    assert tma.encode_args(tma.MapSpec(100, 8190, 32768, tma.F32, 32))["rank"] == 2  # unchunked: as before
    # BF16's B as it lies: chunks of 64 columns, a box of four 64 x 64 panels
    bf16 = tma.operand_specs(100, 8190, 300, layout=tma.LAYOUTS["tma_ab1"], b_pitch=16384)
    assert (bf16[0].box, bf16[1].dims, bf16[1].strides, bf16[1].box) == ((64, 128), (64, 300, 128), (16384, 128),
                                                                         (64, 64, 4))
    assert tma.padded_pitch(8190, tma.BF16, tma.LAYOUTS["tma_ab1"].b_pitch_align) == 16384


def _arr(rows, cols, seed):
    """An operand as the harness makes it: a packed array from the pool."""
    return _aligned(rows, cols, seed)


def test_a_misaligned_view_is_copied_too(host):
    _, encoded = host
    big = _aligned(65, 64, 5)
    a = _Arr(big.a.reshape(-1)[1:1 + 64 * 64].reshape(64, 64))  # 2 bytes off: not 16-byte aligned
    b = _aligned(64, 64, 6)
    tma.operand_maps(a, b, 64, 64, 64, "t")
    (_, addr_a), (_, addr_b) = encoded
    assert addr_a != a.data.ptr and addr_b == b.data.ptr


def test_c_is_mapped_as_the_tma_store_epilogue_writes_it():
    """FP32, dims {N, M}, 128-byte rows of 32 columns, 64 rows a box, 128-byte swizzle; mapped only
    where the kernel will use it (N a multiple of 4, a 16-byte-aligned base), the rule the kernel
    tests before it stores through TMA."""
    spec = tma.c_spec(1000, 776)
    args = tma.encode_args(spec)
    assert args["data_type"] == tma.DATA_TYPE_FLOAT32 and args["dims"] == (776, 1000)
    assert args["strides"] == (776 * 4,) and args["box"] == (32, 64) and args["swizzle"] == tma.SWIZZLE_128B
    assert spec.problems(0x1000) == []
    ptr = lambda p: types.SimpleNamespace(data=types.SimpleNamespace(ptr=p))  # noqa: E731
    assert tma.c_mappable(ptr(0x1000), 776) and not tma.c_mappable(ptr(0x1000), 777)
    assert not tma.c_mappable(ptr(0x1004), 776)
    assert tma.operand_specs(64, 64, 64)[0].box == (64, 64)  # the BF16 operands keep their boxes
    body = (INCLUDE / "tma_persistent.cuh").read_text()
    assert "TMA_STORE && N % 4 == 0 && (reinterpret_cast<size_t>(C) & 15) == 0" in body


def test_the_staging_hook_hands_the_kernel_maps_and_k_as_it_is(monkeypatch):
    seen = []
    monkeypatch.setattr(tma, "operand_maps",
                        lambda a, b, m, n, k, label, c=None: seen.append((a, b, m, n, k, c)) or ("MA", "MB"))
    stage, kk = staging.stager(WGMMA_BF16_TMA.source, WGMMA_BF16_TMA.options, "tma", 45, 33, 70, "x")
    assert kk == 70 and stage("A", "B") == ("MA", "MB") and seen == [("A", "B", 45, 33, 70, None)]
    # the TMA-store scheme maps C too; the plain one never does, whatever it is handed
    assert stage("A", "B", "C") == ("MA", "MB") and seen[-1][-1] is None
    stage, _ = staging.stager(WGMMA_BF16_TMA.source, WGMMA_BF16_TMA.options, "tma_store", 45, 33, 70, "x")
    assert stage("A", "B", "C") == ("MA", "MB") and seen[-1] == ("A", "B", 45, 33, 70, "C")
    assert staging.takes_c("tma_store") and not staging.takes_c("tma") and not staging.takes_c(None)


def recording_kernel(calls: list, registers: int):
    """A compiled kernel stand-in that records its shared-memory request and each launch (grid, block,
    the first two arguments, the integer ones, dynamic shared memory)."""
    class FakeKernel:
        def allow_shared(self, n):
            calls.append(("smem", n))

        def launch(self, grid, block, args, shared_mem=0):
            calls.append(("kernel", grid, block, args[:2], tuple(int(x) for x in args[3:]), shared_mem))

        def resources(self):
            return {"registers": registers}

    return FakeKernel()


def test_prepare_launches_the_kernel_on_the_maps(monkeypatch):
    from rooflab.measure import gemm

    calls = []
    monkeypatch.setattr(gemm, "get_kernel", lambda *a, **k: recording_kernel(calls, 154))
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, c=None: ("MA", "MB"))
    launch, info = gemm.prepare(WGMMA_BF16_TMA_WS, 1000, 777, 4097)
    launch("A", "B", "C")
    assert calls[0] == ("smem", WGMMA_BF16_TMA_WS.shared_mem)
    assert calls[1] == ("kernel", (8 * 4, 1, 1), (384, 1, 1), ("MA", "MB"), (1000, 777, 4097),
                        WGMMA_BF16_TMA_WS.shared_mem)
    assert info["staging"] == {"scheme": "tma", "k": 4097}


# -- what the compiler made of the kernels ---------------------------------------------------------

@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> dict[str, str]:
    if NVCC is None:
        pytest.skip("nvcc is not on PATH")
    out = tmp_path_factory.mktemp("ptx") / "k.ptx"
    subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-ptx", f"-I{INCLUDE}", "-o",
                    str(out), str(SRC)], check=True, capture_output=True, text=True, timeout=120)
    text = out.read_text()
    parts = re.split(r"\.visible \.entry (\w+)\(", text)[1:]
    return dict(zip(parts[::2], parts[1::2]))


@pytest.mark.parametrize("rung", TMA_RUNGS, ids=lambda r: r.name)
def test_the_kernels_load_by_tma_and_multiply_by_wgmma(ptx, rung):
    for v in rung.variants:
        body = ptx[v.kernel]
        assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in body, v.kernel
        assert "mbarrier.arrive.expect_tx" in body and "mbarrier.try_wait.parity" in body, v.kernel
        assert "fence.proxy.tensormap::generic.acquire" in body, v.kernel
        assert body.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") >= 4, v.kernel
        assert "cp.async.cg" not in body and "ld.global" not in body, v.kernel  # every operand byte by TMA
        # a stage that never lands ends the wait (C left unwritten) instead of spinning forever
        assert "%globaltimer" in body and "trap;" not in body, v.kernel
        specialised = "setmaxnreg" in body
        assert specialised == (rung is not WGMMA_BF16_TMA), v.kernel
        if specialised:
            _threads, body_fn, args = _instances()[v.kernel]
            producer_regs, consumer_regs = args[2:4] if body_fn == "body_persistent" else args[-2:]
            assert f"setmaxnreg.dec.sync.aligned.u32 {producer_regs}" in body
            assert f"setmaxnreg.inc.sync.aligned.u32 {consumer_regs}" in body
        multicast = v.kernel in ("mm_wgmma_bf16_cluster", "mm_wgmma_bf16_tma_store_cluster",
                                 "mm_wgmma_bf16_tma_store_cluster_s3", "mm_wgmma_bf16_tma_store_cluster_relay")
        # slots released on the partner's barriers too: with the multicast, and without it in the lock-step twin
        clustered = multicast or v.kernel == "mm_wgmma_bf16_tma_store_cluster_ownb"
        assert ("multicast::cluster" in body) == multicast and ("mapa.shared::cluster" in body) == clustered
        stores = rung.name == "wgmma_bf16_tma_store"  # C through shared memory and TMA stores
        assert ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in body) == stores, v.kernel
        assert ("cp.async.bulk.wait_group.read" in body) == stores, v.kernel
        if clustered:  # no block leaves while its partner may still arrive on its barriers
            assert "barrier.cluster.arrive" in body and "barrier.cluster.wait" in body


@needs_nvcc
def test_ptxas_keeps_setmaxnreg_and_spills_nothing(tmp_path):
    """ptxas drops setmaxnreg it cannot place (warning C7508) and says so only as a warning: fail on it."""
    r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", "-Xptxas", "-v",
                        f"-I{INCLUDE}", "-o", str(tmp_path / "k.cubin"), str(SRC)], capture_output=True, text=True,
                       timeout=120, check=False)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "C7508" not in log and "warning" not in log.lower(), log
    kernels = re.findall(r'extern "C" __global__', SRC.read_text())
    assert len(re.findall(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", log)) == len(kernels), log
    regs = dict(re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", log, flags=re.S))
    inst = _instances()
    for name, (threads, body, args) in inst.items():
        if body == "body":
            continue
        producer_regs, consumer_regs = args[2:4] if body == "body_persistent" else args[-2:]
        consumers = 2 if body == "body_persistent" else args[0]
        at_launch = int(regs[name])
        # setmaxnreg.inc waits for registers the block's pool must hold, and may not shrink a warp
        assert 128 * (producer_regs + consumers * consumer_regs) <= threads * at_launch, (name, at_launch)
        assert producer_regs <= at_launch <= consumer_regs, (name, at_launch)


# -- the ring protocol, replayed under random schedules --------------------------------------------

class _Barrier:
    """An mbarrier: `count` arrivals and zero outstanding transaction bytes complete a phase."""

    def __init__(self, count):
        self.count, self.pending, self.tx, self.phases = count, count, 0, 0

    def arrive(self, expect_tx=0):
        self.tx += expect_tx
        self.pending -= 1
        assert self.pending >= 0, "more arrivals than the barrier's count in one phase"
        self._maybe_complete()

    def complete_tx(self, n):
        self.tx -= n
        self._maybe_complete()

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phases += 1
            self.pending = self.count

    def ready(self, parity):
        """mbarrier.try_wait.parity: true once the phase of that parity has completed."""
        return self.phases % 2 != parity


class _Ring:
    """Shared state of one block: slots, barriers, copies and wgmma batches in flight."""

    def __init__(self, stages, consumers, kt_total):
        self.S, self.KT = stages, kt_total
        self.full = [_Barrier(1) for _ in range(stages)]
        self.empty = [_Barrier(consumers) for _ in range(stages)]
        self.slot = [None] * stages  # the tile a slot holds
        self.copies = []  # (slot, tile) in flight
        self.batches = {w: [] for w in range(consumers)}  # per consumer: (slot, tile) in flight
        self.consumed = {w: [] for w in range(consumers)}

    def issue(self, tile, s):
        for w, inflight in self.batches.items():  # nobody may still read the slot's previous tile
            assert all(bs != s for bs, _ in inflight), f"tile {tile} overwrites slot {s} under consumer {w}"
            if tile >= self.S:
                assert tile - self.S in self.consumed[w], f"slot {s} refilled before consumer {w} used it"
        self.full[s].arrive(expect_tx=8192)
        self.copies.append((s, tile))

    def land(self, i):
        s, tile = self.copies.pop(i)
        for w, inflight in self.batches.items():
            assert all(bs != s for bs, _ in inflight), f"a copy into slot {s} landed under consumer {w}"
        self.slot[s] = tile
        self.full[s].complete_tx(8192)

    def retire(self, w):
        s, tile = self.batches[w].pop(0)  # wgmma batches of one warpgroup complete in order
        assert self.slot[s] == tile, f"consumer {w} read tile {self.slot[s]} as tile {tile}"
        self.consumed[w].append(tile)


def _consumer(ring, w, produce_inline):
    S, KT = ring.S, ring.KT
    if produce_inline and w == 0:
        for s in range(min(S, KT)):
            ring.issue(s, s)
    for kt in range(KT):
        s = kt % S
        yield lambda s=s, kt=kt: ring.full[s].ready((kt // S) & 1)
        ring.batches[w].append((s, kt))
        yield lambda: len(ring.batches[w]) <= 1  # wgmma.wait_group 1
        if kt >= 1:
            ps, nk = (kt - 1) % S, kt - 1 + S
            ring.empty[ps].arrive()
            if produce_inline and w == 0 and nk < KT:
                yield lambda ps=ps, kt=kt: ring.empty[ps].ready(((kt - 1) // S) & 1)
                ring.issue(nk, ps)
    yield lambda: not ring.batches[w]


def _producer(ring):
    S, KT = ring.S, ring.KT
    for kt in range(KT):
        s = kt % S
        if kt >= S:
            yield lambda s=s, kt=kt: ring.empty[s].ready((kt // S - 1) & 1)
        ring.issue(kt, s)
    for kt in range(max(0, KT - S), KT):
        yield lambda kt=kt: ring.full[kt % S].ready((kt // S) & 1)


def _replay(consumers, stages, kt_total, specialised, seed, consumer=None):
    rng = random.Random(seed)
    ring = _Ring(stages, consumers, kt_total)
    consumer = consumer or (lambda ring, w: _consumer(ring, w, not specialised))
    actors = [consumer(ring, w) for w in range(consumers)]
    if specialised:
        actors.append(_producer(ring))
    waiting = {i: next(a, None) for i, a in enumerate(actors)}
    waiting = {i: c for i, c in waiting.items() if c is not None}
    while waiting or ring.copies:
        moves = [("actor", i) for i, cond in waiting.items() if cond()]
        moves += [("land", i) for i in range(len(ring.copies))]
        moves += [("retire", w) for w, b in ring.batches.items() if b]
        assert moves, f"deadlock: actors {sorted(waiting)} wait, nothing in flight"
        kind, i = rng.choice(moves)
        if kind == "land":
            ring.land(i)
        elif kind == "retire":
            ring.retire(i)
        else:
            nxt = next(actors[i], None)
            if nxt is None:
                del waiting[i]
            else:
                waiting[i] = nxt
    for w in range(consumers):
        assert ring.consumed[w] == list(range(kt_total))
    return ring


@pytest.mark.parametrize("specialised", [False, True], ids=["inline producer", "producer warpgroup"])
@pytest.mark.parametrize("consumers", [2, 3])
def test_the_ring_protocol_under_random_schedules(specialised, consumers):
    """Every consumer reads every k-tile in order from a slot that holds it, no copy lands in a slot
    a wgmma may still read, nothing deadlocks, no copy is left in flight: over K from one k-tile to
    several laps of the ring, under 200 random interleavings each."""
    for kt_total in (1, 2, 3, 4, 5, 8, 9, 17):
        for seed in range(200 if kt_total < 9 else 40):
            _replay(consumers, 4, kt_total, specialised, seed)


def test_the_replay_catches_a_slot_released_one_k_tile_early():
    """The check can fail: release a slot right after issuing its wgmma (no wait_group 1 first) and a
    refill lands under a batch still reading it."""
    def early(ring, w):
        S, KT = ring.S, ring.KT
        for kt in range(KT):
            s = kt % S
            yield lambda s=s, kt=kt: ring.full[s].ready((kt // S) & 1)
            ring.batches[w].append((s, kt))
            ring.empty[s].arrive()  # released while the batch may still run
            yield lambda: len(ring.batches[w]) <= 1
        yield lambda: not ring.batches[w]

    failures = 0
    for seed in range(200):
        try:
            _replay(2, 4, 9, True, seed, consumer=early)
        except AssertionError:
            failures += 1
    assert failures > 0


class _ClusterRing:
    """The persistent kernels' rings, one a CTA of a cluster: each slot's parts (A, and B's panels
    split between the CTAs, each multicast into all of them), the copies in flight, the batches."""

    def __init__(self, cluster, consumers, stages, kt_per_tile, tiles):
        self.C, self.W, self.S, self.KT, self.total = cluster, consumers, stages, kt_per_tile, kt_per_tile * tiles
        self.parts = ["A"] + [f"B{p}" for p in range(4)]
        self.full = [[_Barrier(1) for _ in range(stages)] for _ in range(cluster)]
        self.empty = [[_Barrier(consumers * cluster) for _ in range(stages)] for _ in range(cluster)]
        self.slot = [[{} for _ in range(stages)] for _ in range(cluster)]  # part -> k-tile it holds
        self.copies = []  # (cta, slot, k-tile, part)
        self.batches = {(c, w): [] for c in range(cluster) for w in range(consumers)}
        self.consumed = {(c, w): [] for c in range(cluster) for w in range(consumers)}

    def issue(self, r, it):
        s = it % self.S
        self.full[r][s].arrive(expect_tx=len(self.parts))
        self.copies.append((r, s, it, "A"))
        for p in range(r, 4, self.C):  # this CTA's share of B, into every CTA
            self.copies += [(c, s, it, f"B{p}") for c in range(self.C)]

    def land(self, i):
        c, s, it, part = self.copies.pop(i)
        for w in range(self.W):
            assert all(bs != s for bs, _ in self.batches[c, w]), f"a copy into CTA {c} slot {s} landed under a wgmma"
            if it >= self.S:
                assert it - self.S in self.consumed[c, w], f"CTA {c} slot {s} refilled before consumer {w} used it"
        self.slot[c][s][part] = it
        self.full[c][s].complete_tx(1)

    def retire(self, c, w):
        s, it = self.batches[c, w].pop(0)
        held = self.slot[c][s]
        assert all(held.get(p) == it for p in self.parts), f"CTA {c} consumer {w} read {held} as k-tile {it}"
        self.consumed[c, w].append(it)

    def release(self, s):
        for c in range(self.C):  # one thread of the warpgroup, on every CTA's empty barrier
            self.empty[c][s].arrive()


def _persistent_producer(ring, r):
    S = ring.S
    for it in range(ring.total):
        s = it % S
        if it >= S:
            yield lambda r=r, s=s, it=it: ring.empty[r][s].ready((it // S - 1) & 1)
        ring.issue(r, it)
    for j in range(max(0, ring.total - S), ring.total):
        yield lambda r=r, j=j: ring.full[r][j % S].ready((j // S) & 1)


def _persistent_consumer(ring, c, w):
    S, KT = ring.S, ring.KT
    it = 0
    for _tile in range(ring.total // KT):
        for kt in range(KT):
            s = it % S
            yield lambda s=s, it=it: ring.full[c][s].ready((it // S) & 1)
            ring.batches[c, w].append((s, it))
            yield lambda: len(ring.batches[c, w]) <= 1  # wgmma.wait_group 1
            if kt >= 1:
                ring.release((it - 1) % S)
            it += 1
        yield lambda: not ring.batches[c, w]  # wgmma.wait_group 0, then the C stores
        ring.release((it - 1) % S)


def _replay_cluster(cluster, stages, kt_per_tile, tiles, seed, consumer=_persistent_consumer):
    rng = random.Random(seed)
    ring = _ClusterRing(cluster, 2, stages, kt_per_tile, tiles)
    actors = [_persistent_producer(ring, r) for r in range(cluster)]
    actors += [consumer(ring, c, w) for c in range(cluster) for w in range(2)]
    waiting = {i: next(a) for i, a in enumerate(actors)}
    while waiting or ring.copies:
        moves = [("actor", i) for i, cond in waiting.items() if cond()]
        moves += [("land", i) for i in range(len(ring.copies))]
        moves += [("retire", key) for key, b in ring.batches.items() if b]
        assert moves, f"deadlock: actors {sorted(waiting)} wait, nothing in flight"
        kind, i = rng.choice(moves)
        if kind == "land":
            ring.land(i)
        elif kind == "retire":
            ring.retire(*i)
        else:
            nxt = next(actors[i], None)
            if nxt is None:
                del waiting[i]
            else:
                waiting[i] = nxt
    for key, done in ring.consumed.items():
        assert done == list(range(ring.total)), key
    return ring


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("cluster", [1, 2])
def test_the_persistent_ring_protocol_under_random_schedules(cluster, stages):
    """The persistent kernels' ring runs on across tiles and, in a cluster, a partner's multicast
    writes into this CTA's slots: every consumer of every CTA still reads every k-tile whole from its
    slot, no copy lands in a slot a wgmma of any CTA may still read, nothing deadlocks; at every ring
    depth a variant builds."""
    assert stages in {args[1] for _t, body, args in _instances().values() if body == "body_persistent"}
    for kt_per_tile, tiles in ((1, 1), (1, 5), (2, 3), (3, 3), (4, 2), (5, 3), (9, 2)):
        for seed in range(60 if stages == 4 else 30):
            _replay_cluster(cluster, stages, kt_per_tile, tiles, seed)


def test_the_cluster_replay_catches_a_release_on_this_cta_only():
    """The check can fail: a consumer that releases the slot on its own CTA's empty barrier only lets
    the partner's producer multicast into a slot this CTA's wgmma still reads."""
    def local_only(ring, c, w):
        S, KT = ring.S, ring.KT
        ring.empty = [[_Barrier(ring.W) for _ in range(S)] for _ in range(ring.C)] if (c, w) == (0, 0) else ring.empty
        it = 0
        for _tile in range(ring.total // KT):
            for kt in range(KT):
                s = it % S
                yield lambda s=s, it=it: ring.full[c][s].ready((it // S) & 1)
                ring.batches[c, w].append((s, it))
                yield lambda: len(ring.batches[c, w]) <= 1
                if kt >= 1:
                    ring.empty[c][(it - 1) % S].arrive()
                it += 1
            yield lambda: not ring.batches[c, w]
            ring.empty[c][(it - 1) % S].arrive()

    failures = 0
    for seed in range(100):
        try:
            _replay_cluster(2, 4, 3, 4, seed, consumer=local_only)
        except AssertionError:
            failures += 1
    assert failures > 0


@needs_nvcc
def test_the_planted_hang_compiles(tmp_path):
    """The GPU tests plant a stage that never completes (-DPLANT_SHORT_TX) to see the wait give up."""
    assert "PLANT_SHORT_TX" in SRC.read_text()
    r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", f"-I{INCLUDE}",
                        "-DPLANT_SHORT_TX", "-DMBAR_TIMEOUT_NS=200000000ull", "-o", str(tmp_path / "k.cubin"),
                        str(SRC)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


# -- the data path, replayed in numpy through the wgmma descriptors --------------------------------

def _emulator():
    import tensor_emulator

    return tensor_emulator


def _tma_box(mem16, dst, src16, rows, cols, c0, c1):
    """cp.async.bulk.tensor.2d with CU_TENSOR_MAP_SWIZZLE_128B: box {64, 64} at (c0 inner, c1 row) of a
    rows x cols tensor lands as box row r at dst + 128 r, its 16-byte chunk c at c ^ (r & 7); elements
    out of bounds are zeros. dst is 1024-byte aligned, so the swizzle of the byte offset is that of
    the address."""
    assert dst % 1024 == 0
    for r in range(64):
        for e in range(64):
            y, x = c1 + r, c0 + e
            v = src16[y * cols + x] if y < rows and x < cols else 0
            byte = r * 128 + e * 2
            mem16[(dst + (byte ^ (((byte >> 7) & 7) << 4))) // 2] = v


def _replay_kernel(em, A16, B16, M, N, K, wgs, stages=4):
    """One block after another as wgmma_bf16_tma.cu computes it: Tile (grouped rasterisation, boxes
    inside A and B), issue_stage's placement, mma_stage's descriptors, store_c's predicate. Slots
    start as BF16 NaN (0x7FC1), so a skipped box that fed a stored element would show."""
    BM, BN, BK = 64 * wgs, 256, 64
    stage_bytes = (wgs + 4) * rec.BOX_BYTES
    C = np.full(M * N, np.nan)
    grid_m, grid_n = -(-M // BM), -(-N // BN)
    ring = 1024
    for pid in range(grid_m * grid_n):
        pm, pn = em.raster(pid, grid_m, grid_n, group_m=16)
        bm, bn = pm * BM, pn * BN
        a_boxes, b_panels = min(wgs, -(-(M - bm) // 64)), min(4, -(-(N - bn) // 64))
        mem16 = np.full((ring + stages * stage_bytes) // 2, 0x7FC1, dtype=np.uint16)
        acc = np.zeros((wgs, 64, 256))
        for kt in range(-(-K // BK)):
            slot, k0 = ring + (kt % stages) * stage_bytes, kt * BK
            for w in range(a_boxes):
                _tma_box(mem16, slot + w * rec.BOX_BYTES, A16, M, K, k0, bm + 64 * w)
            for p in range(b_panels):
                _tma_box(mem16, slot + BM * 128 + p * rec.BOX_BYTES, B16, K, N, bn + 64 * p, k0)
            for cw in range(wgs):
                a0, b0 = slot + cw * 64 * 128, slot + BM * 128
                for kk in range(BK // 16):
                    at = em.read_kmajor_sw128(mem16, em.make_desc(a0 + kk * 32, 16, 1024))
                    bt = em.read_mnmajor_sw128(mem16, em.make_desc(b0 + kk * 2048, rec.BOX_BYTES, 1024))
                    acc[cw] += at @ bt
        for cw in range(wgs):
            rows = np.arange(64)[:, None] + bm + cw * 64
            cols = np.arange(256)[None, :] + bn
            keep = (rows < M) & (cols < N)
            C[(rows * N + cols)[keep]] = acc[cw][keep]
    return C


@pytest.mark.parametrize("wgs", [2, 3])
@pytest.mark.parametrize("shape", [(45, 33, 70), (200, 264, 136), (130, 300, 65)])
def test_the_tma_data_path_computes_the_product(shape, wgs):
    """TMA's 128-byte-swizzled boxes, placed as issue_stage places them and read through mma_stage's
    descriptors with CUTLASS's canonical layouts (tests/tensor_emulator.py), give A @ B at odd
    shapes: zero fill at the edges, boxes past M or N skipped, every element of C written once."""
    em = _emulator()
    m, n, k = shape
    rng = np.random.default_rng(m * n + k)
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    a16, b16 = em.f32_to_bf16_bits(a).ravel(), em.f32_to_bf16_bits(b).ravel()
    ref = em.bf16_value(a16).reshape(m, k) @ em.bf16_value(b16).reshape(k, n)
    got = _replay_kernel(em, a16, b16, m, n, k, wgs).reshape(m, n)
    assert not np.isnan(got).any()
    assert np.allclose(got, ref, rtol=1e-12, atol=1e-12)
