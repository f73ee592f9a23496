"""The Triton rungs: records without triton or torch, the skip where they are missing,
the configuration the launcher is given, and the kernels themselves under Triton's interpreter.

The interpreter tests need triton and torch (CPU tensors are enough) and skip where either is
missing; they run tests/triton_interpret.py in a subprocess because TRITON_INTERPRET=1 must be set
before the kernels' module is imported. On the GPU machine they run as they are (the interpreter
ignores the GPU): `python3 -m pytest -q tests/test_triton.py`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from rooflab import rungs
from rooflab.measure import gemm
from rooflab.rungs.triton import TRITON_RUNGS, Config, parse

HERE = Path(__file__).resolve().parent
NAMES = ["triton_fp32", "triton_tf32", "triton_tf32x3", "triton_bf16"]


def test_the_four_rungs_sit_at_the_end_of_the_ladder_with_their_roofs():
    names = rungs.names()
    assert names[-4:] == NAMES
    by = rungs.by_name()
    assert [by[n].precision for n in NAMES] == ["fp32", "tf32", "3xtf32", "bf16"]
    assert [by[n].rounding for n in NAMES] == ["fp32", "tf32_trunc", "fp32", "bf16"]
    assert by["triton_bf16"].inputs == "bf16" and by["triton_tf32"].inputs == "fp32"
    # FP32-accurate: FP32's tolerance on FP32 inputs
    assert by["triton_tf32x3"].normwise_tolerance(4096) == by["triton_fp32"].normwise_tolerance(4096)
    for r in TRITON_RUNGS:
        assert r.needs == ("triton", "torch")
        assert r.source is None and r.library == "triton"
        assert r.config == r.variants[0].config  # the default is the first variant


def test_the_peers_ratios_and_paragraphs_point_at_real_rungs():
    names = set(rungs.names())
    for r in TRITON_RUNGS:
        for after in r.compare:
            assert after in names
        for other, _label in r.ratios:
            assert other in names
    by = rungs.by_name()
    assert [o for o, _ in by["triton_bf16"].ratios] == ["cublas_bf16"]
    assert [o for o, _ in by["triton_tf32"].ratios] == ["cublas_tf32"]


def test_a_configuration_label_round_trips():
    c = Config("tf32", 128, 256, 32, 8, 3, group=8, tma=True, trans=True, bt=True)
    assert c.label == "128x256x32 w8 s3 g8 tma trans bt"
    assert parse(f"tf32 {c.label}") == c
    p = Config("bf16", 128, 256, 64, 8, 4, tma=True, persist=True)
    assert p.label.endswith(" tma persist") and parse(f"bf16 {p.label}") == p
    assert c.input_precision == "tf32" and parse("fp32 64x64x32 w4 s3 g8").input_precision == "ieee"
    assert parse("3xtf32 64x64x32 w4 s3 g8").input_precision == "tf32x3"
    with pytest.raises(ValueError):
        parse("fp64 64x64x32 w4 s3 g8")
    for r in TRITON_RUNGS:
        labels = [v.label for v in r.variants]
        assert len(set(labels)) == len(labels)
        for v in r.variants:
            cfg = parse(v.config)
            assert cfg.label == v.label and cfg.precision == r.precision


def test_a_library_variant_replaces_the_rungs_configuration():
    r = rungs.get("triton_bf16")
    v = r.variants[2]
    assert r.with_variant(v).config == v.config != r.config
    # a CUDA variant still replaces the kernel, as before
    p = rungs.get("pipelined")
    assert p.with_variant(p.variants[1]).kernel == p.variants[1].kernel


def test_the_library_registry_hands_triton_the_rungs_configuration(monkeypatch):
    from rooflab.cuda import triton_gemm
    from rooflab.measure import libraries

    seen = []

    def launcher(spec, m, n, k):
        seen.append((spec, m, n, k))
        return "launch"

    launcher.__module__ = triton_gemm.__name__
    monkeypatch.setattr(triton_gemm, "launcher", launcher)
    r = rungs.get("triton_tf32").with_variant(rungs.get("triton_tf32").variants[1])
    launch, info = gemm.prepare(r, 300, 200, 100)
    assert launch == "launch" and seen == [(r.variants[1].config, 300, 200, 100)]
    # recorded as the function and its argument, as the results documents have it
    assert info == {"library": f"rooflab.cuda.triton_gemm:launcher:{r.variants[1].config}"}
    assert libraries.LIBRARIES.keys() >= {r.library for r in rungs.LADDER if r.library}


def test_a_missing_package_skips_the_rung_saying_which():
    ghost = replace(rungs.get("triton_fp32"), needs=("no_such_package_rooflab",))
    assert gemm.missing_modules(ghost) == ["no_such_package_rooflab"]
    reason = gemm.skip_reason(ghost, gemm.GemmConfig(), _device())
    assert reason and "no_such_package_rooflab" in reason and "not installed" in reason
    have = all(importlib.util.find_spec(m) for m in ("triton", "torch"))
    for r in TRITON_RUNGS:
        assert (gemm.skip_reason(r, gemm.GemmConfig(), _device()) is None) == have


def _device():
    from rooflab.cuda.device import DeviceInfo  # a dataclass: no CUDA import

    return DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=132, fp32_cores_per_sm=128,
                      sm_clock_max_mhz=1980, mem_clock_max_mhz=3201, bus_width_bits=6144, l2_bytes=60 << 20,
                      memory_bytes=141 << 30)


def test_the_records_import_no_triton_or_torch():
    code = ("import sys; import rooflab.rungs, rooflab.measure.gemm, rooflab.cli; "
            "bad = [m for m in ('triton', 'torch', 'cupy') if m in sys.modules]; print(bad)")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ the kernels, under the interpreter
def _interpret(shape, specs) -> dict:
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run([sys.executable, str(HERE / "triton_interpret.py"), *map(str, shape), *specs],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_precision_matches_numpy_at_an_odd_shape():
    """33x17x45: no dimension a multiple of any tile; pointer loads with masks, rows and columns past
    the edge never stored. The interpreter computes in FP32 (BF16 widened exactly), so each result is
    within FP32 rounding of the float64 product of its inputs."""
    specs = ["fp32 32x32x16 w4 s2 g8", "tf32 32x32x16 w4 s2 g8", "tf32 32x32x16 w4 s2 g8 trans",
             "tf32 32x16x16 w4 s2 g8 bt", "3xtf32 16x32x16 w4 s2 g2", "3xtf32 16x32x16 w4 s2 g2 bt",
             "bf16 32x16x16 w4 s2 g8", "bf16 16x16x32 w4 s2 g1 trans"]
    res = _interpret((33, 17, 45), specs)
    for spec in specs:
        r = res[spec]
        assert r["unwritten"] == 0, spec
        assert r["path"] == "pointers"
        assert r["error"] < 1e-6, (spec, r)


def test_the_tma_kernel_where_rows_are_aligned_and_the_fallback_where_not():
    specs = ["fp32 32x32x16 w4 s2 g8 tma", "tf32 32x32x16 w4 s2 g8 tma trans", "tf32 32x16x16 w4 s2 g8 tma bt",
             "bf16 32x32x16 w4 s2 g8 tma"]
    res = _interpret((64, 48, 40), specs)  # 40 and 48 FP32/BF16 elements: 16-byte rows
    for spec in specs:
        assert res[spec]["path"] == "tma" and res[spec]["unwritten"] == 0
        assert res[spec]["error"] < 1e-6, (spec, res[spec])
    res = _interpret((20, 13, 9), specs[:1])  # 9 FP32 elements: 36-byte rows
    assert res[specs[0]]["path"] == "pointers" and res[specs[0]]["error"] < 1e-6


def test_the_persistent_kernel_walks_every_tile_once():
    """100x72 in 32x16 (or 32x32) tiles over 3 programs: each program walks several tiles, the last
    ones partial; a tile skipped leaves NaN, a tile done twice with a stale accumulator breaks the error."""
    specs = ["tf32 32x16x16 w4 s2 g8 tma bt persist", "tf32 32x32x16 w4 s2 g8 tma trans persist",
             "3xtf32 32x32x16 w4 s2 g8 tma bt persist", "bf16 32x32x16 w4 s2 g2 tma persist"]
    res = _interpret((100, 72, 40), specs)
    for spec in specs:
        assert res[spec]["path"] == "tma persistent" and res[spec]["unwritten"] == 0, spec
        assert res[spec]["error"] < 1e-6, (spec, res[spec])


# ------------------------------------------------------------------ on a GPU, through the harness
@pytest.mark.gpu
def test_the_harness_checks_and_times_every_triton_rung():
    """CuPy arrays through the DLPack/stream glue: the odd-shape checks, guard zones, and 3 runs + 8
    concurrent replicas on CuPy streams of their own, bitwise equal."""
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    from rooflab.cuda.device import detect
    from rooflab.measure.gemm import GemmConfig, run

    sec = run(GemmConfig(m=300, n=200, k=100, reps=2, check_n=64, kernels=NAMES), detect())
    for rec in sec["rungs"]:
        assert rec["passed"], (rec["kernel"], rec["error"], rec["checks"])
        assert rec["launch"]["library"].startswith("rooflab.cuda.triton_gemm:launcher:")
        assert any(c["name"] == "deterministic" and c["passed"] for c in rec["checks"])
