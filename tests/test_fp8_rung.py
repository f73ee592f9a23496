"""The FP8 rung (rungs/wgmma_fp8.cu) and its cuBLASLt peer with no GPU: e4m3 rounding, the operands
as both take them, the FP8 error model, the records and skip reasons, the tensor maps of A and B^T,
the peer's call of torch._scaled_mm (torch faked), the kernels as the compiler built them, the ring
protocol with a slot released after its own tile, and the data path replayed in numpy through the
kernels' TMA boxes and wgmma descriptors. GPU tests: tests/test_gpu_fp8.py."""

from __future__ import annotations

import contextlib
import math
import re
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest

from rooflab.cuda import staging, tma
from rooflab.model import e4m3, tolerance
from rooflab.model.check import operands, round_inputs
from rooflab.rungs import wgmma_fp8 as rec
from rooflab.rungs.wgmma_fp8 import CUBLASLT_FP8, FP8_RUNGS, WGMMA_FP8

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rooflab" / "rungs" / "wgmma_fp8.cu"
INCLUDE = ROOT / "src" / "rooflab" / "include"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH")
SMEM_LIMIT = 227 * 1024
FP8 = tma.LAYOUTS["tma_fp8"]


def _bf16_tma_tests():
    """The BF16 TMA rungs' test helpers (a numpy stand-in for CuPy, the ring's replay, the tensor-core
    emulator), shared rather than copied."""
    import test_tma_rungs  # noqa: PLC0415

    return test_tma_rungs


# -- e4m3 ------------------------------------------------------------------------------------------

KNOWN = [  # value, its e4m3 bits (OCP FP8 e4m3fn: bias 7, no infinities, S.1111.111 NaN)
    (0.0, 0x00), (-0.0, 0x80), (1.0, 0x38), (1.125, 0x39), (-1.5, 0xBC), (0.3125, 0x2A), (240.0, 0x77),
    (256.0, 0x78), (288.0, 0x79), (448.0, 0x7E), (-448.0, 0xFE), (2.0**-6, 0x08), (2.0**-9, 0x01), (7 * 2.0**-9, 0x07),
    # ties go to the even mantissa
    (1.0625, 0x38), (1.1875, 0x3A), (272.0, 0x78), (2.0**-10, 0x00), (1.5 * 2.0**-9, 0x02), (7.5 * 2.0**-9, 0x08),
    # past the largest finite value: saturated, not NaN
    (464.0, 0x7E), (1e6, 0x7E), (-1e30, 0xFE), (np.inf, 0x7E), (-np.inf, 0xFE),
    # nearest, not a tie
    (0.3, 0x2A), (-0.3, 0xAA), (1.06, 0x38), (1.07, 0x39), (1e-4, 0x00), (449.0, 0x7E),
]


def test_e4m3_bits_of_known_values():
    x = np.array([v for v, _ in KNOWN], dtype=np.float32)
    got = e4m3.to_bits(np, x)
    want = np.array([b for _, b in KNOWN], dtype=np.uint8)
    bad = [(v, hex(g), hex(w)) for v, g, w in zip(x, got, want) if g != w]
    assert not bad, bad
    assert e4m3.to_bits(np, np.array([np.nan], np.float32))[0] == 0x7F
    assert np.isnan(e4m3.round_e4m3(np, np.array([np.nan], np.float32))[0])


def test_e4m3_values_are_the_format():
    v = e4m3.values()
    finite = v[np.isfinite(v)]
    assert len(finite) == 254 and np.isnan(v[0x7F]) and np.isnan(v[0xFF])
    assert finite.max() == 448.0 and finite.min() == -448.0
    assert v[0x01] == 2.0**-9 and v[0x08] == 2.0**-6 and v[0x07] == 7 * 2.0**-9 and v[0x38] == 1.0
    assert np.all(np.diff(v[:0x7F]) > 0)  # the positive codes in order of value


def test_every_e4m3_value_round_trips_and_rounding_is_nearest():
    v = e4m3.values()
    codes = np.arange(256, dtype=np.uint8)
    ok = np.isfinite(v) & (codes != 0x80)  # -0 reads back as -0 too, but compares equal to +0
    assert np.array_equal(e4m3.to_bits(np, v[ok]), codes[ok])
    assert np.array_equal(e4m3.from_bits(np, codes[ok]), v[ok])
    x = np.random.default_rng(1).uniform(-460, 460, 200_000).astype(np.float32)
    x = np.concatenate([x, x * 2.0**-8, x * 2.0**-14])
    r = e4m3.round_e4m3(np, x)
    grid = np.unique(v[np.isfinite(v)])
    i = np.clip(np.searchsorted(grid, x), 1, len(grid) - 1)
    nearest = np.minimum(np.abs(grid[i] - x), np.abs(grid[i - 1] - x))
    assert np.all(np.abs(r - x) <= nearest * (1 + 1e-6))  # no value of the format is closer
    assert np.all(np.isin(r, grid))


def test_e4m3_rounding_matches_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    rng = np.random.default_rng(2)
    v = e4m3.values()
    grid = np.unique(v[np.isfinite(v)])
    ties = ((grid[1:] + grid[:-1]) / 2).astype(np.float32)
    # below 464 saturating and overflowing conversions agree
    x = np.concatenate([rng.uniform(-463, 463, 100_000), rng.uniform(-1, 1, 100_000), ties[np.abs(ties) < 464]])
    x = x.astype(np.float32)
    theirs = torch.from_numpy(x).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    assert np.array_equal(e4m3.to_bits(np, x), theirs)


def test_the_harness_rounds_and_hands_over_fp8_operands():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (5, 7)).astype(np.float32), rng.uniform(-1, 1, (7, 3)).astype(np.float32)
    assert np.array_equal(round_inputs(np, a, "e4m3"), e4m3.round_e4m3(np, a))
    qa, qbt = operands(np, a, b, "fp8")
    assert qa.dtype == qbt.dtype == np.uint8 and qa.shape == (5, 7) and qbt.shape == (3, 7)
    assert qbt.flags.c_contiguous  # B^T stored N x K: K-major, as FP8 wgmma and cuBLASLt read it
    assert np.array_equal(e4m3.from_bits(np, qbt), round_inputs(np, b, "e4m3").T)
    assert operands(np, a, b, "fp32") == (a, b)


# -- the error model -------------------------------------------------------------------------------

def _truncating_fp8_gemm(a, b, step=32, bits=13, promote=None):
    """The product as an accumulator of `bits` mantissa bits computes it, truncating after each `step`
    products; promote=T: each T-long run of k summed from zero and added in FP32."""
    k = a.shape[1]
    run = promote or k
    return _runs_fp8_gemm(a, b, [(t0, min(k, t0 + run)) for t0 in range(0, k, run)], step, bits)


def _runs_fp8_gemm(a, b, runs, step=32, bits=13):
    """The same for the given runs of k (k0, k1), each summed from zero in the short accumulator and
    added in FP32, in the order given."""
    m, n = a.shape[0], b.shape[1]
    total = np.zeros((m, n), np.float32)
    for t0, t1 in runs:
        acc = np.zeros((m, n), np.float32)
        for k0 in range(t0, t1, step):
            s = (acc.astype(np.float64) + a[:, k0:min(t1, k0 + step)] @ b[k0:min(t1, k0 + step)]).astype(np.float32)
            acc = (s.view(np.uint32) & np.uint32((0xFFFFFFFF << (23 - bits)) & 0xFFFFFFFF)).view(np.float32)
        total = (total + acc).astype(np.float32)
    return total.astype(np.float64)


def _rounded(rng, m, n, k, lo):
    a = e4m3.round_e4m3(np, rng.uniform(lo, 1, (m, k)).astype(np.float32)).astype(np.float64)
    b = e4m3.round_e4m3(np, rng.uniform(lo, 1, (k, n)).astype(np.float32)).astype(np.float64)
    return a, b


@pytest.mark.parametrize("k", [7, 257, 1234])
def test_the_fp8_tolerance_holds_the_accumulator_and_fails_a_dropped_step(k):
    """The tensor core's 13-bit truncating accumulation passes the normwise tolerance with room; a
    kernel that skips one k32 step does not."""
    rng = np.random.default_rng(k)
    a, b = _rounded(rng, 48, 40, k, -1.0)
    ref = a @ b
    tol = tolerance.normwise("fp8", k, rounded_reference=True)
    err = np.linalg.norm(_truncating_fp8_gemm(a, b) - ref) / np.linalg.norm(ref)
    assert err < tol / 2, (err, tol)
    if k > 32:
        a2 = a.copy()
        a2[:, 32:64] = 0  # one k32 step never issued
        dropped = np.linalg.norm(a2 @ b - ref) / np.linalg.norm(ref)
        assert dropped > 4 * tol, (dropped, tol)


def test_the_promoted_accumulation_meets_the_seed_check_on_positive_inputs():
    """At the check size (K = 512) on [0, 1) inputs the max-relative error of k-tiles summed from zero
    and added in FP32 stays under the seed's 1e-3; the rung's default accumulates that way."""
    rng = np.random.default_rng(5)
    a, b = _rounded(rng, 32, 32, 512, 0.0)
    ref = a @ b
    got = _truncating_fp8_gemm(a, b, promote=128)
    assert np.max(np.abs(got - ref) / np.abs(ref)) < 1e-3
    assert "accurate accumulation" in WGMMA_FP8.variants[0].label


@pytest.mark.parametrize("k", [257, 512, 1234, 4097])
def test_the_overlapped_promotion_is_the_promoted_accumulation(k):
    """The overlapped kernels (PROMOTE / FLUSH -1, include/overlap.cuh) add the k-tile partials in the
    order the replay of their schedule gives (tests/test_overlap_promotion.py): each 128-k tile alone,
    in order, as PROMOTE 1 does. So the model gives the same bits, and the error model's bounds of
    the promoted accumulation (the seed check's, the normwise one) hold for them unchanged."""
    from test_overlap_promotion import play, schedule  # noqa: PLC0415

    kt = -(-k // 128)
    groups = play(schedule(kt, 1), kt)
    runs = [(g[0] * 128, min(k, (g[-1] + 1) * 128)) for g in groups]
    rng = np.random.default_rng(k)
    a, b = _rounded(rng, 24, 40, k, 0.0)
    ref = a @ b
    got = _runs_fp8_gemm(a, b, runs)
    assert got.tobytes() == _truncating_fp8_gemm(a, b, promote=128).tobytes()
    assert np.max(np.abs(got - ref) / np.abs(ref)) < tolerance.seed_max_rel("fp8", k) / 2
    a, b = _rounded(rng, 24, 40, k, -1.0)
    ref = a @ b
    err = np.linalg.norm(_runs_fp8_gemm(a, b, runs) - ref) / np.linalg.norm(ref)
    assert err < tolerance.normwise("fp8", k, rounded_reference=True) / 4
    assert all(rec.OVERLAPPED in v.label and "accurate accumulation" in v.label
               for r in FP8_RUNGS for v in r.variants if v.kernel.endswith("_overlap"))


def test_the_fp8_componentwise_bound_allows_subnormal_inputs():
    """An input under 2^-6 keeps an absolute precision of 2^-10: at K = 1 a product may be off by up to
    1.125 of itself, which the bound allows; past K = 14 the (K + 4) u term rules."""
    worst = 0.0
    for x in np.linspace(2.0**-10 * 1.0001, 2.0**-6, 2000, dtype=np.float32):
        y = np.float32(1.0625 * 1.0001)  # rounds down by almost 2^-4 of itself
        got = float(e4m3.round_e4m3(np, np.array([x]))[0]) * float(e4m3.round_e4m3(np, np.array([y]))[0])
        worst = max(worst, abs(got - float(x) * float(y)) / (float(x) * float(y)))
    assert 0.9 < worst <= tolerance.componentwise("fp8", 1)
    assert tolerance.componentwise("fp8", 1) == tolerance.FP8_SUBNORMAL_FLOOR
    assert tolerance.componentwise("fp8", 512) == (512 + 4) * 2.0**-4
    assert WGMMA_FP8.normwise_tolerance(4097) == tolerance.normwise("fp8", 4097, rounded_reference=True)
    assert tolerance.normwise("fp8", 4097, rounded_reference=True) > math.ceil(4097 / 32) * 2.0**-13


# -- records ---------------------------------------------------------------------------------------

def _instances() -> dict[str, tuple[int, ...]]:
    """kernel -> the template arguments of fp8_gemm::body in its entry point."""
    found = re.findall(r'extern "C" __global__ void __launch_bounds__\((\d+), 1\)\s*\n(\w+)\([^)]*\)\s*\{'
                       r'(?:(?!extern "C").)*?fp8_gemm::body<([-\d, ]+)>', SRC.read_text(), flags=re.S)
    return {name: (int(t), *(int(x) for x in args.split(","))) for t, name, args in found}


def test_the_fp8_rungs_sit_after_cublas_bf16():
    from rooflab import rungs

    names = rungs.names()
    i = names.index("cublas_bf16")
    assert names[i + 1:i + 4] == ["wgmma_fp8", "wgmma_fp8_persistent", "cublaslt_fp8"]


def test_every_variant_launches_its_kernel_as_the_kernel_is_built():
    inst = _instances()
    assert set(inst) == {v.kernel for v in WGMMA_FP8.variants}
    assert (WGMMA_FP8.kernel, WGMMA_FP8.shared_mem) == (WGMMA_FP8.variants[0].kernel, WGMMA_FP8.variants[0].shared_mem)
    for v in WGMMA_FP8.variants:
        threads, consumers, bn, stages, promote, producer_regs, consumer_regs = inst[v.kernel]
        assert v.block == (threads, 1, 1) and threads == 128 * (consumers + 1), v.label
        assert 128 * (producer_regs + consumers * consumer_regs) <= 65536 and producer_regs <= 168 <= consumer_regs
        assert v.shared_mem == rec.smem_bytes(consumers, bn, stages) and v.shared_mem + 1024 <= SMEM_LIMIT, v.label
        assert v.grid(1000, 777, 1234) == (-(-1000 // (64 * consumers)) * -(-777 // bn), 1, 1), v.label
        assert f"{64 * consumers}x{bn}x128" in v.label and f"stages {stages}" in v.label
        assert (rec.FAST in v.label) == (promote == 0), v.label
        assert (v.label.endswith(rec.OVERLAPPED)) == (promote < 0) and promote in (0, 1, -1), v.label


def test_the_records_are_fp8_and_say_what_they_need():
    for r in FP8_RUNGS:
        assert (r.precision, r.inputs, r.rounding) == ("fp8", "fp8", "e4m3")
        assert r.normwise_tol is None  # the FP8 error model's, not a number of its own
        assert r.model(4096, 4096, 4096)["bytes"] == 1.0 * r.model(4096, 4096, 4096)["global_loads"] + 4.0 * 4096**2
    assert WGMMA_FP8.exact_cc and WGMMA_FP8.requires_cc == (9, 0) and "-arch=sm_90a" in WGMMA_FP8.options
    assert WGMMA_FP8.staging == staging.TMA_FP8 and WGMMA_FP8.staging in tma.LAYOUTS
    assert CUBLASLT_FP8.requires_cc == (8, 9) and not CUBLASLT_FP8.exact_cc and CUBLASLT_FP8.needs == ("torch",)
    assert [v.config for v in CUBLASLT_FP8.variants] == ["accurate", "fast"] and CUBLASLT_FP8.library == "cublaslt_fp8"
    assert CUBLASLT_FP8.config == CUBLASLT_FP8.variants[0].config
    assert "B^T" in WGMMA_FP8.explain and "timed for neither" in WGMMA_FP8.explain


def _device(cc):
    from rooflab.cuda.device import DeviceInfo

    return DeviceInfo(**{name: (cc if name == "cc" else None) for name in DeviceInfo.__dataclass_fields__})


def test_gpus_without_fp8_skip_the_rungs_saying_why(monkeypatch):
    from rooflab.measure import gemm
    from rooflab.measure.gemm import GemmConfig, skip_reason

    monkeypatch.setattr(gemm, "missing_modules", lambda rung: [])
    for cc in ((7, 5), (8, 0), (8, 6)):
        assert skip_reason(CUBLASLT_FP8, GemmConfig(), _device(cc)) == (
            f"needs sm_89 or newer for FP8 tensor cores (this GPU is sm_{cc[0]}{cc[1]})")
    for cc in ((8, 9), (9, 0), (10, 0)):
        assert skip_reason(CUBLASLT_FP8, GemmConfig(), _device(cc)) is None
    for cc in ((8, 0), (8, 9), (10, 0), (12, 0)):
        assert skip_reason(WGMMA_FP8, GemmConfig(), _device(cc)) == (
            f"architecture-specific code for sm_90a for FP8 wgmma (this GPU is sm_{cc[0]}{cc[1]})")
    assert skip_reason(WGMMA_FP8, GemmConfig(), _device((9, 0))) is None
    monkeypatch.setattr(gemm, "missing_modules", lambda rung: list(rung.needs))
    assert skip_reason(CUBLASLT_FP8, GemmConfig(), _device((9, 0))) == (
        "needs the Python package torch (not installed here)")


# -- paragraphs ------------------------------------------------------------------------------------

def _step(prev_ms, this_ms, prev_config="", this_config="", norms=(1e-4, 2e-4)):
    from rooflab.report.climb.step import Share, Step

    def m(ms):
        return {"ms": ms, "gflops": 2 * 8192**3 / ms / 1e6, "pct_peak": Share(60.0), "speedup": 1.0}

    def r(kernel, config, norm):
        return {"kernel": kernel, "tuning": {"config": config},
                "checks": [{"name": "normwise", "value": norm}]}

    return Step(m(prev_ms), m(this_ms), r("cublaslt_fp8", prev_config, norms[0]), r("wgmma_fp8", this_config, norms[1]),
                {})


def test_the_paragraphs_follow_the_run():
    from rooflab.report import climb

    paras = {after: fn for after, _h, fn in climb.steps(WGMMA_FP8)}
    assert set(paras) == {"wgmma_bf16_tma_ws", "cublaslt_fp8"}
    text = paras["cublaslt_fp8"](_step(1.0, 1.05, "accurate accumulation", WGMMA_FP8.variants[1].label))
    assert "0.952× cuBLASLt's speed" in text
    assert "ours with the tensor core's own accumulation, cuBLASLt's with use_fast_accum=False" in text
    text = paras["cublaslt_fp8"](_step(1.0, 1.0, "fast accumulation", WGMMA_FP8.variants[0].label))
    assert "ours with FP32 adds of each k-tile's partial sums, cuBLASLt's with use_fast_accum=True" in text
    assert "2.0e-04 for ours, 1.0e-04 for cuBLASLt" in text and "Run with profiling" in text
    assert "1.90× the BF16 rung's speed" in paras["wgmma_bf16_tma_ws"](_step(1.9, 1.0))
    assert {a for a, _ in WGMMA_FP8.ratios} == set(paras)


# -- tensor maps -----------------------------------------------------------------------------------

def test_the_fp8_maps_are_the_kernels_layout():
    """A: dims {K, M}; B^T: dims {K, N}; byte pitches; boxes of 128 k x 64 rows (128 bytes, one swizzle
    row); UINT8 (TMA moves bytes); 128-byte swizzle and zero fill as for BF16."""
    sa, sb = tma.operand_specs(1000, 776, 1232, layout=FP8)
    a, b = tma.encode_args(sa), tma.encode_args(sb)
    assert a["dims"] == (1232, 1000) and a["strides"] == (1232,)
    assert b["dims"] == (1232, 776) and b["strides"] == (1232,)
    for args in (a, b):
        assert args["box"] == (128, 64) and (args["data_type"], args["swizzle"], args["oob_fill"]) == (0, 3, 0)
    assert tma.E4M3.inner_box * tma.E4M3.bytes == 128 == rec.BOX_BYTES // 64
    assert tma.encode_args(tma.operand_specs(1000, 776, 1232)[1])["dims"] == (776, 1232)  # BF16's B as before
    assert [tma.padded_pitch(c, tma.E4M3) for c in (1, 16, 17, 4097, 8190)] == [16, 16, 32, 4112, 8192]
    assert any("pitch 4097" in p for p in tma.MapSpec(5, 4097, 4097, tma.E4M3).problems(0x1000))


def test_the_fp8_padded_layout_pads_k_for_both_operands():
    for m, n, k in ((1, 1, 1), (1000, 777, 1234), (7, 8190, 4097)):
        lay = tma.padded_layout(m, n, k, False, False, FP8)
        assert lay["a_pitch"] == lay["b_pitch"] == tma.padded_pitch(k, tma.E4M3)
        assert lay["b_at"] >= lay["a_at"] + m * lay["a_pitch"] and lay["bytes"] == lay["b_at"] + n * lay["b_pitch"]


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (45, 33, 70), (64, 128, 256), (3, 8190, 4097)])
def test_fp8_operands_are_mapped_where_tma_can_read_them_and_padded_otherwise(monkeypatch, m, n, k):
    cp = _bf16_tma_tests()._FakeCupy()  # numpy standing in for CuPy, as for the BF16 maps
    monkeypatch.setattr(tma, "cupy", lambda: cp)
    monkeypatch.setattr(tma, "_cache", type(tma._cache)())
    encoded = []
    monkeypatch.setattr(tma, "encode", lambda spec, addr, via=None: encoded.append((spec, addr)) or bytes(128))
    rng = np.random.default_rng(m + n + k)
    a, bt = cp.empty(m * k, np.uint8).reshape(m, k), cp.empty(n * k, np.uint8).reshape(n, k)
    a.a[:], bt.a[:] = rng.integers(0, 255, (m, k)), rng.integers(0, 255, (n, k))
    maps = tma.operand_maps(a, bt, m, n, k, "t", layout=FP8)  # the padded copies live as long as the maps
    (sa, addr_a), (sb, addr_b) = encoded
    assert (sa.rows, sa.cols, sb.rows, sb.cols) == (m, k, n, k) and sa.element is sb.element is tma.E4M3
    for spec, addr, x in ((sa, addr_a, a), (sb, addr_b, bt)):
        assert not spec.problems(addr)
        if k % 16 == 0:
            assert addr == x.data.ptr and spec.pitch == k
            continue
        import ctypes

        assert spec.pitch == tma.padded_pitch(k, tma.E4M3) and addr != x.data.ptr
        got = np.frombuffer(ctypes.string_at(addr, spec.rows * spec.pitch), np.uint8).reshape(spec.rows, -1)[:, :k]
        assert np.array_equal(got, x.a)
    assert len(maps) == 2


def test_the_staging_hook_gives_the_fp8_layout(monkeypatch):
    seen = []
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, layout=tma.DEFAULT:
                        seen.append((m, n, k, layout)) or ("MA", "MB"))
    stage, kk = staging.stager(WGMMA_FP8.source, WGMMA_FP8.options, WGMMA_FP8.staging, 45, 33, 70, "x")
    assert kk == 70 and stage("A", "BT") == ("MA", "MB") and seen == [(45, 33, 70, FP8)]
    with pytest.raises(ValueError, match="tma_fp8"):
        staging.stager(WGMMA_FP8.source, WGMMA_FP8.options, "fp8", 1, 1, 1, "x")


def test_prepare_launches_the_fp8_kernel_on_the_maps(monkeypatch):
    from rooflab.measure import gemm

    calls = []
    monkeypatch.setattr(gemm, "get_kernel", lambda *a, **k: _bf16_tma_tests().recording_kernel(calls, 168))
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, layout=tma.DEFAULT: ("MA", "MB"))
    launch, info = gemm.prepare(WGMMA_FP8, 1000, 777, 4097)
    launch("A", "BT", "C")
    assert calls[1] == ("kernel", (8 * 7, 1, 1), (384, 1, 1), ("MA", "MB"), (1000, 777, 4097), WGMMA_FP8.shared_mem)
    assert info["staging"] == {"scheme": "tma_fp8", "k": 4097}


# -- the peer, on a fake torch ---------------------------------------------------------------------

class _T:
    """A numpy-backed stand-in for a torch tensor: what cublaslt_fp8 uses of one."""

    def __init__(self, a, dtype="uint8"):
        self.a, self.dtype = a, dtype

    shape = property(lambda self: self.a.shape)

    def view(self, dtype):
        return _T(self.a, dtype)

    def t(self):
        return _T(self.a.T, self.dtype)

    def __getitem__(self, i):
        return _T(self.a[i], self.dtype)

    def __setitem__(self, i, v):
        self.a[i] = v.a

    def copy_(self, other):
        self.a[...] = other.a


def _fake_torch(calls):
    def scaled_mm(a, b, *, scale_a, scale_b, out_dtype, use_fast_accum, out):
        assert a.dtype == b.dtype == "float8_e4m3fn" and out_dtype == "float32" and out.dtype == "float32"
        assert scale_a.a == scale_b.a == 1.0
        assert a.shape[1] % 16 == 0 and b.shape[0] % 16 == 0 and b.shape[1] % 16 == 0  # cuBLASLt's rule
        assert not b.a.flags.c_contiguous or b.shape[1] == 1  # mat2 column-major: B^T's transposed view
        va, vb = e4m3.values()[a.a], e4m3.values()[b.a]
        out.a[...] = (va.astype(np.float64) @ vb).astype(np.float32)
        calls.append({"a": a.shape, "b": b.shape, "out": out.shape, "fast": use_fast_accum})

    cuda = types.SimpleNamespace(device=lambda d: contextlib.nullcontext(), stream=lambda s: contextlib.nullcontext(),
                                 default_stream=lambda d: "default", ExternalStream=lambda p, device: f"ext{p}",
                                 synchronize=lambda: None)
    return types.SimpleNamespace(
        float8_e4m3fn="float8_e4m3fn", float32="float32", uint8="uint8", __version__="fake", cuda=cuda,
        _scaled_mm=scaled_mm, from_dlpack=lambda x: _T(x, "float32" if x.dtype == np.float32 else "uint8"),
        ones=lambda shape, dtype, device: _T(np.ones(shape, np.float32), "float32"),
        zeros=lambda shape, dtype, device: _T(np.zeros(shape, np.uint8)),
        empty=lambda shape, dtype, device: _T(np.full(shape, np.nan, np.float32), "float32"))


@pytest.mark.parametrize("mode", ["accurate", "fast"])
@pytest.mark.parametrize("m,n,k", [(64, 128, 256), (1, 1, 1), (45, 33, 70), (17, 8190, 48), (16, 100, 4097)])
def test_the_peer_calls_scaled_mm_on_the_harness_operands(monkeypatch, mode, m, n, k):
    """FP32 out into C, scales 1, B^T's transposed view as mat2; shapes off the 16-grid through
    zero-padded copies, C's M x N corner copied back."""
    from rooflab.cuda import cublaslt_fp8

    calls = []
    stream = types.SimpleNamespace(ptr=0)
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda: types.SimpleNamespace(id=0),
                                                          get_current_stream=lambda: stream))
    monkeypatch.setattr(cublaslt_fp8, "cupy", lambda: cp)
    monkeypatch.setattr(cublaslt_fp8, "_torch", lambda label: _fake_torch(calls))
    rng = np.random.default_rng(m * n + k)
    a32, b32 = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    qa, qbt = operands(np, a32, b32, "fp8")
    c = np.full((m, n), np.nan, np.float32)
    cublaslt_fp8.gemm_fp8(mode, m, n, k)(qa, qbt, c)
    (call,) = calls
    aligned = m % 16 == 0 and n % 16 == 0 and k % 16 == 0
    p = cublaslt_fp8.padded
    assert call == {"a": (p(m), p(k)), "b": (p(k), p(n)), "out": (p(m), p(n)), "fast": mode == "fast"}
    assert aligned == (call["a"] == (m, k) and call["out"] == (m, n))
    ref = round_inputs(np, a32, "e4m3").astype(np.float64) @ round_inputs(np, b32, "e4m3")
    assert np.allclose(c, ref, rtol=1e-6, atol=1e-6)


def test_the_peer_refuses_an_unknown_accumulation():
    from rooflab.cuda import cublaslt_fp8

    with pytest.raises(ValueError, match="accurate, fast"):
        cublaslt_fp8.gemm_fp8("slow", 16, 16, 16)


# -- what the compiler made of the kernels ---------------------------------------------------------

@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> dict[str, str]:
    if NVCC is None:
        pytest.skip("nvcc is not on PATH")
    out = tmp_path_factory.mktemp("ptx") / "k.ptx"
    subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-ptx", f"-I{INCLUDE}", "-o",
                    str(out), str(SRC)], check=True, capture_output=True, text=True, timeout=120)
    parts = re.split(r"\.visible \.entry (\w+)\(", out.read_text())[1:]
    return dict(zip(parts[::2], parts[1::2]))


@pytest.mark.parametrize("v", WGMMA_FP8.variants, ids=lambda v: v.kernel)
def test_the_kernels_load_by_tma_and_multiply_fp8_by_wgmma(ptx, v):
    body = ptx[v.kernel]
    inst = _instances()[v.kernel]
    bn, promote = inst[2], inst[4]
    assert body.count(f"wgmma.mma_async.sync.aligned.m64n{bn}k32.f32.e4m3.e4m3") >= 4, v.kernel
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in body
    assert "mbarrier.arrive.expect_tx" in body and "mbarrier.try_wait.parity" in body
    assert "fence.proxy.tensormap::generic.acquire" in body
    assert "cp.async.cg" not in body and "ld.global" not in body  # every operand byte by TMA
    assert "%globaltimer" in body and "trap;" not in body  # a stage that never lands ends the wait
    consumer_regs = inst[6]
    assert "setmaxnreg.dec.sync.aligned.u32 40" in body and f"setmaxnreg.inc.sync.aligned.u32 {consumer_regs}" in body
    # the flushed path waits for all; the chain and the overlapped promotion for all but the newest k-tile
    assert ("wgmma.wait_group.sync.aligned 1" in body) == (promote != 1)


@needs_nvcc
def test_ptxas_keeps_setmaxnreg_and_spills_nothing(tmp_path):
    r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", "-Xptxas", "-v",
                        f"-I{INCLUDE}", "-o", str(tmp_path / "k.cubin"), str(SRC)], capture_output=True, text=True,
                       timeout=120, check=False)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "warning" not in log.lower(), log
    kernels = re.findall(r'extern "C" __global__', SRC.read_text())
    assert len(re.findall(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", log)) == len(kernels), log
    regs = dict(re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", log, flags=re.S))
    for name, (threads, consumers, _bn, _stages, _promote, producer_regs, consumer_regs) in _instances().items():
        at_launch = int(regs[name])
        assert 128 * (producer_regs + consumers * consumer_regs) <= threads * at_launch, (name, at_launch)
        assert producer_regs <= at_launch <= consumer_regs, (name, at_launch)


@needs_nvcc
def test_the_smem_formula_is_the_kernels_and_the_planted_hang_compiles(tmp_path):
    lines = [f'#include "{SRC}"']
    for consumers, bn, stages in ((2, 128, 6), (2, 256, 4), (2, 128, 3)):
        lines.append(f"static_assert(MM_FP8_SMEM({consumers}, {bn}, {stages}) == "
                     f"{rec.smem_bytes(consumers, bn, stages)}, \"smem\");")
    src = tmp_path / "smem.cu"
    src.write_text("\n".join(lines) + "\n")
    for path, opts in ((src, ()), (SRC, ("-DPLANT_SHORT_TX", "-DMBAR_TIMEOUT_NS=200000000ull"))):
        r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", f"-I{INCLUDE}",
                            *opts, "-o", str(tmp_path / "k.cubin"), str(path)], capture_output=True, text=True,
                           timeout=120, check=False)
        assert r.returncode == 0, r.stdout + r.stderr


# -- the ring protocol with a slot released after its own tile -------------------------------------



def _promoting_consumer(ring, w):
    """consume<..., LAG = 0>: wait for the slot, the k-tile's MMAs, wait_group 0, release the same slot."""
    S, KT = ring.S, ring.KT
    for kt in range(KT):
        s = kt % S
        yield lambda s=s, kt=kt: ring.full[s].ready((kt // S) & 1)
        ring.batches[w].append((s, kt))
        yield lambda: not ring.batches[w]
        ring.empty[s].arrive()


@pytest.mark.parametrize("stages", [4, 6])
def test_the_promoting_consumers_follow_the_ring_protocol(stages):
    replay = _bf16_tma_tests()._replay
    for kt_total in (1, 2, 5, 6, 7, 13):
        for seed in range(60):
            replay(2, stages, kt_total, True, seed, consumer=_promoting_consumer)


# -- the data path, replayed in numpy through the TMA boxes and wgmma descriptors -------------------

def _emulator():
    return _bf16_tma_tests()._emulator()


def _tma_box8(mem, dst, src, rows, cols, c0, c1):
    """cp.async.bulk.tensor.2d, SWIZZLE_128B, box {128, 64} of bytes at (c0 inner, c1 row): box row r at
    dst + 128 r, 16-byte chunk c at c ^ (r & 7), zeros out of bounds (dst 1024-byte aligned)."""
    assert dst % 1024 == 0
    r, e = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    y, x = c1 + r, c0 + e
    inside = (y < rows) & (x < cols)
    vals = np.where(inside, src[np.minimum(y, rows - 1), np.minimum(x, cols - 1)], 0)
    byte = r * 128 + e
    mem[dst + (byte ^ (((byte >> 7) & 7) << 4))] = vals


def _read_kmajor8(em, mem, desc, rows):
    """CUTLASS canonical K-major SW128 for 8-bit elements (T = 16): ((8,m),(T,2)):((8T,SBO),(1,T)), one k32."""
    start, _lbo, sbo = em.decode_desc(desc)
    m, k = np.meshgrid(np.arange(rows), np.arange(32), indexing="ij")
    byte = start + (m % 8) * 128 + (m // 8) * sbo + (k // 16) * 16 + (k % 16)
    return e4m3.values()[mem[em.swz128(byte)]].astype(np.float64)


def _replay_kernel(em, qa, qbt, M, N, K, bn, stages, b_step=32):
    """The blocks of wgmma_fp8.cu one after another: Tile (grouped order, boxes inside A and B^T),
    issue_stage's placement, mma_stage's descriptors, the predicated store. Slots start as e4m3 NaN
    (0x7F), so a box skipped that fed a stored element would show."""
    BM, BK, box = 128, 128, rec.BOX_BYTES
    stage_bytes = (2 + bn // 64) * box
    C = np.full((M, N), np.nan)
    grid_m, grid_n = -(-M // BM), -(-N // bn)
    ring = 1024
    for pid in range(grid_m * grid_n):
        pm, pn = em.raster(pid, grid_m, grid_n, group_m=16)
        bm, b0n = pm * BM, pn * bn
        a_boxes, b_boxes = min(2, -(-(M - bm) // 64)), min(bn // 64, -(-(N - b0n) // 64))
        mem = np.full(ring + stages * stage_bytes, 0x7F, dtype=np.uint8)
        acc = np.zeros((2, 64, bn))
        for kt in range(-(-K // BK)):
            slot, k0 = ring + (kt % stages) * stage_bytes, kt * BK
            for w in range(a_boxes):
                _tma_box8(mem, slot + w * box, qa, M, K, k0, bm + 64 * w)
            for p in range(b_boxes):
                _tma_box8(mem, slot + BM * 128 + p * box, qbt, N, K, k0, b0n + 64 * p)
            for cw in range(2):
                a0, b0 = slot + cw * 64 * 128, slot + BM * 128
                for kk in range(BK // 32):
                    at = _read_kmajor8(em, mem, em.make_desc(a0 + kk * 32, 16, 1024), 64)
                    bt = _read_kmajor8(em, mem, em.make_desc(b0 + kk * b_step, 16, 1024), bn)
                    with np.errstate(invalid="ignore"):
                        acc[cw] += at @ bt.T
        for cw in range(2):
            r0 = bm + cw * 64
            rows, cols = min(64, max(0, M - r0)), min(bn, N - b0n)
            C[r0:r0 + rows, b0n:b0n + cols] = acc[cw][:rows, :cols]
    return C


@pytest.mark.parametrize("bn", [128, 256])
@pytest.mark.parametrize("shape", [(45, 33, 70), (200, 300, 136), (130, 64, 257)])
def test_the_fp8_data_path_computes_the_product(shape, bn):
    """e4m3 boxes of A and B^T, swizzled as TMA lands them and read through mma_stage's descriptors with
    CUTLASS's canonical K-major layout, give the product of the rounded inputs at odd shapes."""
    em = _emulator()
    m, n, k = shape
    rng = np.random.default_rng(m * n + k)
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    qa, qbt = operands(np, a, b, "fp8")
    ref = e4m3.values()[qa].astype(np.float64) @ e4m3.values()[qbt].astype(np.float64).T
    got = _replay_kernel(em, qa, qbt, m, n, k, bn, stages=6 if bn == 128 else 4)
    assert not np.isnan(got).any()
    assert np.allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_the_data_path_replay_catches_a_wrong_k_step():
    """The replay can fail: B^T's descriptor advanced 64 bytes per k32 step (two steps at a time) in
    place of 32 reads the wrong k-slices, and the product is off."""
    em = _emulator()
    rng = np.random.default_rng(9)
    m, n, k = 64, 64, 128
    qa, qbt = operands(np, rng.uniform(-1, 1, (m, k)).astype(np.float32),
                       rng.uniform(-1, 1, (k, n)).astype(np.float32), "fp8")
    ref = e4m3.values()[qa].astype(np.float64) @ e4m3.values()[qbt].astype(np.float64).T
    assert np.allclose(_replay_kernel(em, qa, qbt, m, n, k, 128, 6), ref, rtol=1e-12, atol=1e-12)
    wrong = _replay_kernel(em, qa, qbt, m, n, k, 128, 6, b_step=64)
    assert not np.allclose(wrong, ref, rtol=1e-3, atol=1e-3)
