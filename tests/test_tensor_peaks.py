"""The measured tensor-core roofs: records, skips by architecture, and the table beside the published rates."""

import copy
import json
from pathlib import Path

import pytest

from rooflab.ceilings import TENSOR_PEAKS
from rooflab.measure.tensor_peaks import skip_reason
from rooflab.report.ceilings import tensor_peak_table

DATA = Path(__file__).parent / "data"


def test_flops_per_launch_follow_the_mma_shapes():
    by = {p.kernel: p for p in TENSOR_PEAKS}
    # 8 warps x 32 m16n8k16 MMAs (2*16*8*16 FLOP) per block per iteration
    assert by["mma_peak_bf16"].flops(10, 3) == 10 * 3 * 8 * 32 * 2 * 16 * 8 * 16
    assert by["mma_peak_tf32"].flop_per_block_iter * 2 == by["mma_peak_bf16"].flop_per_block_iter
    # one warpgroup x 8 m64n256k16 per iteration
    assert by["wgmma_peak_bf16"].flops(1, 1) == 8 * 2 * 64 * 256 * 16
    kernels = set(Path(__file__).parents[1].joinpath("src/rooflab/ceilings/tensor_peak.cu").read_text().split())
    assert all(any(p.kernel + "(" in w for w in kernels) for p in TENSOR_PEAKS)


@pytest.mark.parametrize("cc, runs", [((7, 5), set()), ((8, 0), {"mma_peak_bf16", "mma_peak_tf32"}),
                                      ((8, 9), {"mma_peak_bf16", "mma_peak_tf32"}),
                                      ((9, 0), {p.kernel for p in TENSOR_PEAKS}),
                                      ((10, 0), {"mma_peak_bf16", "mma_peak_tf32"})])
def test_each_kernel_runs_where_its_instructions_exist(cc, runs):
    assert {p.kernel for p in TENSOR_PEAKS if skip_reason(p, cc) is None} == runs
    wg = next(p for p in TENSOR_PEAKS if p.unit == "wgmma")
    if cc != (9, 0):
        assert "sm_90a" in skip_reason(wg, cc)


def _doc(rows):
    doc = json.loads((DATA / "h200_report_levels.json").read_text())
    doc = copy.deepcopy(doc)
    doc["flops"]["tensor"] = rows
    return doc


def test_the_table_puts_measured_beside_published_and_per_cycle_beside_nominal():
    # 947 TFLOP/s at 1980 MHz on 132 SMs: 3,623 FLOP/SM/cycle against Hopper's nominal 4,096 (88.5%)
    fpc = 947e12 / (132 * 1980e6)
    rows = [{"kernel": "wgmma_peak_bf16", "unit": "wgmma", "precision": "bf16", "tflops": 947.0, "sm_mhz": 1980.0,
             "flop_per_sm_cycle": fpc, "verified": True},
            {"kernel": "mma_peak_tf32", "unit": "mma.sync", "precision": "tf32", "skipped": "mma.sync TF32 needs sm_80"}]
    t = tensor_peak_table(_doc(rows))
    got = dict(zip(t.columns, t.rows[0], strict=True))
    assert got["published"] == "989" and got["% of published"] == "95.8%"
    assert got["nominal"] == "4,096" and got["% of nominal"] == f"{100 * fpc / 4096:.1f}%"
    assert got["verified"] == "yes"
    assert t.rows[1][-1] == "mma.sync TF32 needs sm_80" and t.rows[1][3] is None


def test_no_table_without_tensor_rows():
    doc = _doc([])
    assert tensor_peak_table(doc) is None
    del doc["flops"]["tensor"]
    assert tensor_peak_table(doc) is None


@pytest.mark.gpu
def test_the_tensor_roofs_measure_on_this_gpu():
    pytest.importorskip("cupy")
    from rooflab.cuda.device import detect
    from rooflab.measure import tensor_peaks

    dev = detect()
    rows = tensor_peaks.run(dev, target_ms=2.0, reps=3)
    ran = [r for r in rows if "skipped" not in r]
    assert ran or dev.cc < (8, 0)
    for r in ran:
        assert "error" not in r, r
        assert r["verified"] and r["tflops"] > 0
        # no chain beats the tensor core's nominal work per cycle by more than a rounding margin
        from rooflab.model.peaks import nominal_tensor_fma

        nominal = nominal_tensor_fma(dev.cc, r["precision"])
        if nominal and r["flop_per_sm_cycle"]:
            assert r["flop_per_sm_cycle"] <= 2 * nominal[0] * 1.02, r


def test_the_tensor_records_constants_reach_the_kernels_and_the_flop_count(monkeypatch):
    """NACC, UNROLL, MMA_BLOCK and WG_UNROLL are the record's: changed there, every peak kernel is
    built with the new -D options and its FLOPs per launch follow."""
    import numpy as np

    from rooflab import ceilings
    from rooflab.cuda.device import DeviceInfo
    from rooflab.cuda.timing import Timing
    from rooflab.measure import tensor_peaks

    builds, launches = [], []

    class Kernel:
        def launch(self, grid, block, args):
            launches.append((grid, block))

    def get_kernel(source, name, options=()):
        builds.append((source, name, options))
        return Kernel()

    fake_cp = type("cp", (), {"float32": np.float32, "full": staticmethod(lambda n, v, dtype: np.full(n, 1.0)),
                              "all": staticmethod(np.all), "isfinite": staticmethod(np.isfinite)})
    monkeypatch.setattr(tensor_peaks, "cupy", lambda: fake_cp)
    monkeypatch.setattr(tensor_peaks, "get_kernel", get_kernel)
    monkeypatch.setattr(tensor_peaks, "time_kernel", lambda launch, **_k: (launch(), Timing([50.0], 0, False))[1])
    monkeypatch.setattr(ceilings, "TENSOR", ceilings.TENSOR.with_defines(NACC=4, MMA_BLOCK=128, WG_UNROLL=2))
    dev = DeviceInfo(index=0, name="NVIDIA H200", cc=(9, 0), arch="Hopper", sm_count=132, fp32_cores_per_sm=128,
                     sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=60 << 20,
                     memory_bytes=141 << 30)
    rows = {r["kernel"]: r for r in tensor_peaks.run(dev, target_ms=1.0, reps=1)}
    assert {b[1] for b in builds} == {p.kernel for p in TENSOR_PEAKS}
    assert all(("-DNACC=4" in o and "-DMMA_BLOCK=128" in o and "-DWG_UNROLL=2" in o) for _s, _n, o in builds)
    bf16 = rows["mma_peak_bf16"]
    assert bf16["block"] == 128 and ((bf16["blocks"], 1, 1), (128, 1, 1)) in launches
    # 4 warps x (4 x 4) MMAs of 4096 FLOP per block per iteration: a quarter of the shipped record's
    assert bf16["flops"] == bf16["blocks"] * bf16["iters"] * 4 * 4 * 4 * 4096
    wg = rows["wgmma_peak_bf16"]
    assert wg["block"] == 128 and wg["flops"] == wg["blocks"] * wg["iters"] * 2 * 2 * 64 * 256 * 16
