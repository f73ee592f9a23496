"""Tables for the device, the spec table (P1, P2, P10) and ridge points (P5)."""

from __future__ import annotations

from rooflab.model.peaks import fp32_peak, spec_peaks, tensor_arithmetic
from rooflab.model.ridge import (
    SCALE_AI,
    all_ridges,
    classify,
    present_device_ridges,
    seed_ridges,
    trend_paragraph,
)
from rooflab.model.specs import SPECS, GpuSpec
from rooflab.report.table import Table, fmt


def device_table(d: dict) -> Table:
    p1 = fp32_peak(d["sm_count"], d["fp32_cores_per_sm"] or 0, d["sm_clock_max_mhz"] * 1e6)
    hbm = d.get("hbm_peak_bytes_per_s")
    rows = [
        ["GPU", d["name"]],
        ["compute capability", f"{d['cc'][0]}.{d['cc'][1]} ({d['arch']})"],
        ["SMs", d["sm_count"]],
        ["FP32 cores / SM", f"{d['fp32_cores_per_sm']} (per-architecture table)"],
        ["SM clock (max)", f"{d['sm_clock_max_mhz']:.0f} MHz ({d['sources'].get('sm_clock')})"],
        ["memory clock (max)", f"{d['mem_clock_max_mhz']:.0f} MHz ({d['sources'].get('mem_clock')})"],
        ["memory bus", f"{d['bus_width_bits']} bit"],
        ["L2", f"{d['l2_bytes'] / 2**20:.0f} MiB"],
        ["memory", f"{d['memory_bytes'] / 2**30:.1f} GiB"],
        ["FP32 peak (P1)", p1.formula if d["fp32_cores_per_sm"] else "unknown architecture"],
        ["  forgot FMA = 2", f"{p1.flops_forgot_fma / 1e12:.2f} TFLOP/s ({p1.error_pct:.0f}% too low)"],
        ["HBM peak (P3)", f"2 × {d['mem_clock_max_mhz']:.0f} MHz × {d['bus_width_bits']} bit / 8 = "
                          f"{hbm / 1e9:,.0f} GB/s" if hbm else "unknown"],
        ["tensor peaks (published)", ", ".join(f"{p.upper()} {v / 1e12:,.0f}" for p, v in d["tensor_peaks"].items())
         + " TFLOP/s dense" if d.get("tensor_peaks") else "no spec-table entry"],
        ["driver / CUDA runtime / CuPy", f"{d.get('driver_version')} / {d.get('cuda_runtime_version')} / "
                                         f"{d.get('cupy_version')}"],
    ]
    return Table("Device", ["", "value"], rows, key="device")


def specs_table(specs: list[GpuSpec]) -> Table:
    rows = []
    for s in specs:
        sp = spec_peaks(s)
        rows.append([s.key, s.sms, s.fp32_cores_per_sm, f"{s.boost_clock_mhz:.0f}", f"{s.mem_bandwidth_gbs:,.0f}",
                     f"{sp.fp32.flops / 1e12:.1f}", f"{sp.fp32.flops_forgot_fma / 1e12:.1f}",
                     ", ".join(f"{p.upper()} {v:,.0f}" for p, v in s.tensor_tflops.items())])
    notes = ["FP32 = SMs × cores/SM × 2 (FMA = 2 FLOP) × boost clock; 'forgot FMA' drops the 2 and is 50% low.",
             "Tensor rates are dense (no 2:4 sparsity), TFLOP/s."]
    notes += [f"{s.key}: P1 {spec_peaks(s).fp32.formula}. Source: {s.source}" for s in specs]
    return Table("Published specs (P1, P10)", ["GPU", "SMs", "FP32/SM", "boost MHz", "GB/s", "FP32 TFLOP/s",
                                               "forgot FMA", "tensor TFLOP/s (dense)"], rows, notes, key="specs")


def tensor_table(specs: list[GpuSpec]) -> Table:
    rows = []
    for s in specs:
        sp = spec_peaks(s)
        t = sp.tensor
        if t is None:
            continue
        rows.append([s.key, t.precision.upper(), f"{t.rate_flops / 1e12:,.0f}", f"{t.flop_per_cycle:,.0f}",
                     f"{t.flop_per_sm_per_cycle:,.0f}", f"{t.fma_per_sm_per_cycle:,.0f}",
                     t.cuda_core_fma_per_sm_per_cycle, f"{t.ratio:.1f}×",
                     fmt(t.implied_clock_hz / 1e6 if t.implied_clock_hz else None, ".0f", " MHz")])
    notes = ["P2: FLOP/cycle = rate ÷ boost clock; ÷ SMs; ÷ 2 for FMA. CUDA-core FMA/SM/cycle = FP32 lanes per SM.",
             "implied clock: the clock at which the architecture's nominal dense tensor FMA/SM/cycle gives the "
             "published rate; on Hopper it is ~1.83 GHz, not the 1.98 GHz boost, so per-cycle figures computed "
             "at the boost clock come out lower than the hardware's."]
    return Table("Tensor-core arithmetic (P2)", ["GPU", "precision", "TFLOP/s", "FLOP/cycle", "FLOP/SM/cycle",
                                                 "FMA/SM/cycle", "CUDA-core FMA/SM/cycle", "ratio", "implied clock"],
                 rows, notes, key="tensor")


def device_tensor_rows(d: dict) -> list[list]:
    rows = []
    for p, rate in d.get("tensor_peaks", {}).items():
        t = tensor_arithmetic(rate, d["sm_count"], d["sm_clock_max_mhz"] * 1e6, d["fp32_cores_per_sm"] or 1, p,
                              cc=tuple(d["cc"]), key=d.get("spec_key"))
        rows.append([f"{d['name']} (this device)", p.upper(), f"{rate / 1e12:,.0f}", f"{t.flop_per_cycle:,.0f}",
                     f"{t.flop_per_sm_per_cycle:,.0f}", f"{t.fma_per_sm_per_cycle:,.0f}",
                     t.cuda_core_fma_per_sm_per_cycle, f"{t.ratio:.1f}×",
                     fmt(t.implied_clock_hz / 1e6 if t.implied_clock_hz else None, ".0f", " MHz")])
    return rows


def ridge_tables(device: dict | None = None) -> tuple[list[Table], str]:
    seed = seed_ridges()
    rows = [[r.label, f"{r.flops / 1e12:,.0f}", f"{r.bw / 1e12:.3f}", f"{r.ridge:,.1f}",
             classify(SCALE_AI, r.ridge)] for r in seed]
    notes = [f"ridge = peak FLOP/s ÷ bytes/s = FLOP/byte. Last column: the scalar×vector kernel y = a·x "
             f"(AI {SCALE_AI}) against each ridge."] + [f"{r.label}: {r.note}" for r in seed if r.note]
    tables = [Table("The seed's four ridge points, ascending (P5)", ["GPU, precision", "TFLOP/s", "TB/s",
                                                                      "ridge FLOP/B", "y = a·x is"], rows, notes,
                    key="ridge_seed")]
    everything = all_ridges()
    if device and device.get("fp32_peak_flops") and device.get("hbm_peak_bytes_per_s"):
        everything = present_device_ridges(device["fp32_peak_flops"], device["hbm_peak_bytes_per_s"],
                                           {p: v / 1e12 for p, v in device.get("tensor_peaks", {}).items()},
                                           name=f"{device['name']} (this device)") + everything
    rows = [[r.label, f"{r.flops / 1e12:,.1f}", f"{r.bw / 1e12:.3f}", f"{r.ridge:,.1f}"] for r in everything]
    tables.append(Table("Ridge points per GPU and precision (P5)", ["GPU, roof", "TFLOP/s", "TB/s",
                                                                    "ridge FLOP/B"], rows, key="ridge_all"))
    return tables, trend_paragraph(seed)


def specs_for(key: str | None) -> list[GpuSpec]:
    from rooflab.model.specs import find_spec  # noqa: PLC0415

    return [find_spec(key)] if key else list(SPECS)
