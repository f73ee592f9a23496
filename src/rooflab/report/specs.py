"""Tables for the device, the spec table (P1, P2, P10) and ridge points (P5)."""

from __future__ import annotations

from rooflab.model.arch import peak_unknown, sm_name
from rooflab.model.limits import FP32_PEAK, HBM_PEAK
from rooflab.model.peaks import fp32_peak, spec_peaks, tensor_arithmetic
from rooflab.model.ridge import (
    SCALE_AI,
    all_ridges,
    classify,
    present_device_ridges,
    seed_ridges,
    trend_paragraph,
)
from rooflab.model.specs import PRECISIONS, SPECS, GpuSpec, find_spec
from rooflab.report.table import Table, Value, fmt, missing


def device_table(d: dict) -> Table:
    cores = d["fp32_cores_per_sm"]
    p1 = fp32_peak(d["sm_count"], cores, d["sm_clock_max_mhz"] * 1e6) if cores else None
    unknown = missing(peak_unknown(d["cc"]))  # where the architecture is not in model/arch.py
    hbm = d.get("hbm_peak_bytes_per_s")
    sm, mem, bus = d["sm_clock_max_mhz"], d["mem_clock_max_mhz"], d["bus_width_bits"]
    cc = f"{d['cc'][0]}.{d['cc'][1]}"
    tensor = d.get("tensor_peaks") or {}
    versions = (d.get("driver_version"), d.get("cuda_runtime_version"), d.get("cupy_version"))
    rows = [
        ["GPU", d["name"]],
        ["compute capability", Value(f"{cc} ({d['arch']})", (cc, d["arch"]))],
        ["SMs", d["sm_count"]],
        ["FP32 cores / SM", Value(f"{cores} (per-architecture table)", cores) if cores
         else missing(f"not in rooflab's per-architecture table ({sm_name(d['cc'])})")],
        ["SM clock max", Value(f"{sm:.0f} MHz ({d['sources'].get('sm_clock')})", sm, "MHz")],
        ["memory clock max", Value(f"{mem:.0f} MHz ({d['sources'].get('mem_clock')})", mem, "MHz")],
        ["memory bus", Value(f"{bus} bit", bus, "bit")],
        ["L2", Value(f"{d['l2_bytes'] / 2**20:.0f} MiB", d["l2_bytes"] / 2**20, "MiB")],
        ["memory", Value(f"{d['memory_bytes'] / 2**30:.1f} GiB", d["memory_bytes"] / 2**30, "GiB")],
        [FP32_PEAK, Value(p1.formula, p1.tflops, "TFLOP/s") if p1 else unknown],
        ["  forgot FMA = 2", Value(f"{p1.flops_forgot_fma / 1e12:.2f} TFLOP/s ({p1.error_pct:.0f}% too low)",
                                   p1.flops_forgot_fma / 1e12, "TFLOP/s") if p1 else unknown],
        [HBM_PEAK, Value(f"2 × {mem:.0f} MHz × {bus} bit / 8 = {hbm / 1e9:,.0f} GB/s", hbm / 1e9, "GB/s")
         if hbm else "unknown"],
        ["tensor peaks (published)",
         Value(", ".join(f"{p.upper()} {v / 1e12:,.0f}" for p, v in tensor.items()) + " TFLOP/s dense",
               tuple(v / 1e12 for v in tensor.values())) if tensor else "no spec-table entry"],
        ["driver / CUDA runtime / CuPy", Value(" / ".join(str(v) for v in versions), versions)],
    ]
    split = {"compute capability": ["compute capability", "architecture"],
             "driver / CUDA runtime / CuPy": ["driver", "CUDA runtime", "CuPy"]}
    if tensor:
        split["tensor peaks (published)"] = [f"{p.upper()} tensor peak, dense (TFLOP/s)" for p in tensor]
    return Table("Device", ["", "value"], rows, key="device", csv_split=split, record=True)


def specs_table(specs: list[GpuSpec]) -> Table:
    precisions = [p for p in PRECISIONS if any(p in s.tensor_tflops for s in specs)]
    rows = []
    for s in specs:
        sp = spec_peaks(s)
        rows.append([s.key, s.sms, s.fp32_cores_per_sm, fmt(s.boost_clock_mhz, ".0f"), fmt(s.mem_bandwidth_gbs, ",.0f"),
                     fmt(sp.fp32.flops / 1e12, ".1f"), fmt(sp.fp32.flops_forgot_fma / 1e12, ".1f"),
                     Value(", ".join(f"{p.upper()} {v:,.0f}" for p, v in s.tensor_tflops.items()),
                           tuple(s.tensor_tflops.get(p) for p in precisions))])
    notes = ["FP32 = SMs × cores/SM × 2 (FMA = 2 FLOP) × boost clock; 'forgot FMA' drops the 2 and is 50% low.",
             "Tensor rates are dense (no 2:4 sparsity), TFLOP/s."]
    notes += [f"{s.key}: P1 {spec_peaks(s).fp32.formula}. Source: {s.source}" for s in specs]
    return Table("Published specs (P1, P10)", ["GPU", "SMs", "FP32/SM", "boost MHz", "GB/s", "FP32 TFLOP/s",
                                               "forgot FMA", "tensor TFLOP/s (dense)"], rows, notes, key="specs",
                 csv_split={"tensor TFLOP/s (dense)": [f"{p.upper()} tensor TFLOP/s (dense)" for p in precisions]})


def _tensor_row(gpu: str, t, unknown_lanes: Value | None = None) -> list:
    """One row of the P2 table; ``unknown_lanes`` fills the CUDA-core cells where the FP32 lanes per SM
    are not known."""
    return [gpu, t.precision.upper(), fmt(t.rate_flops / 1e12, ",.0f"), fmt(t.flop_per_cycle, ",.0f"),
            fmt(t.flop_per_sm_per_cycle, ",.0f"), fmt(t.fma_per_sm_per_cycle, ",.0f"),
            unknown_lanes or t.cuda_core_fma_per_sm_per_cycle, unknown_lanes or fmt(t.ratio, ".1f", "×"),
            fmt(t.implied_clock_hz / 1e6 if t.implied_clock_hz else None, ".0f", " MHz")]


def tensor_table(specs: list[GpuSpec]) -> Table:
    rows = []
    for s in specs:
        t = spec_peaks(s).tensor
        if t is not None:
            rows.append(_tensor_row(s.key, t))
    notes = ["P2: FLOP/cycle = rate ÷ boost clock; ÷ SMs; ÷ 2 for FMA. CUDA-core FMA/SM/cycle = FP32 lanes per SM.",
             ("implied clock: the clock at which the architecture's nominal dense tensor FMA/SM/cycle gives the "
              "published rate; on Hopper it is ~1.83 GHz, not the 1.98 GHz boost, so per-cycle figures computed "
              "at the boost clock come out lower than the hardware's.")]
    return Table("Tensor-core arithmetic (P2)", ["GPU", "precision", "TFLOP/s", "FLOP/cycle", "FLOP/SM/cycle",
                                                 "FMA/SM/cycle", "CUDA-core FMA/SM/cycle", "ratio", "implied clock"],
                 rows, notes, key="tensor")


def device_tensor_rows(d: dict) -> list[list]:
    rows = []
    for p, rate in d.get("tensor_peaks", {}).items():
        t = tensor_arithmetic(rate, d["sm_count"], d["sm_clock_max_mhz"] * 1e6, d["fp32_cores_per_sm"] or 1, p,
                              cc=tuple(d["cc"]), key=d.get("spec_key"))
        unknown = None if d["fp32_cores_per_sm"] else missing(peak_unknown(d["cc"]))
        rows.append(_tensor_row(f"{d['name']} (this device)", t, unknown))
    return rows


def ridge_tables(device: dict | None = None) -> tuple[list[Table], str]:
    seed = seed_ridges()
    rows = [[r.label, fmt(r.flops / 1e12, ",.0f"), fmt(r.bw / 1e12, ".3f"), fmt(r.ridge, ",.1f"),
             classify(SCALE_AI, r.ridge)] for r in seed]
    notes = [(f"ridge = peak FLOP/s ÷ bytes/s = FLOP/byte. Last column: the scalar×vector kernel y = a·x "
              f"(AI {SCALE_AI}) against each ridge.")] + [f"{r.label}: {r.note}" for r in seed if r.note]
    tables = [Table("The seed's four ridge points, ascending (P5)", ["GPU, precision", "TFLOP/s", "TB/s",
                                                                      "ridge FLOP/B", "y = a·x is"], rows, notes,
                    key="ridge_seed")]
    everything = all_ridges()
    rows = []
    bw = (device or {}).get("hbm_peak_bytes_per_s")
    if device and bw:
        name = f"{device['name']} (this device)"
        fp32 = device.get("fp32_peak_flops")
        tensor = {p: v / 1e12 for p, v in (device.get("tensor_peaks") or {}).items()}
        if not fp32:
            unknown = missing(peak_unknown(device["cc"]))
            rows.append([f"{name} FP32 (CUDA cores)", unknown, fmt(bw / 1e12, ".3f"), unknown])
        everything = present_device_ridges(fp32, bw, tensor, name=name) + everything
    rows += [[r.label, fmt(r.flops / 1e12, ",.1f"), fmt(r.bw / 1e12, ".3f"), fmt(r.ridge, ",.1f")] for r in everything]
    tables.append(Table("Ridge points per GPU and precision (P5)", ["GPU, roof", "TFLOP/s", "TB/s",
                                                                    "ridge FLOP/B"], rows, key="ridge_all"))
    return tables, trend_paragraph(seed)


def specs_for(key: str | None) -> list[GpuSpec]:
    return [find_spec(key)] if key else list(SPECS)
