"""Nsight Compute's output (P8): parse its CSV and judge a kernel by the speed-of-light rule.
Running ncu lives in rooflab.measure.profiling.

ncu is always run with --clock-control none (the card's clocks are left as they
are), --profile-from-start off (only the launch between cudaProfilerStart/Stop
in rooflab.measure.profile_target is profiled) and --csv --page raw (one row per kernel,
one column per metric; the second row holds the units).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
DURATION = "gpu__time_duration.sum"
# bytes through each level of the hierarchy: the L1TEX tag stage (global and local
# traffic; shared-memory accesses do not pass it) and the L2 slices; DRAM is read + write above
L1_BYTES = "l1tex__t_bytes.sum"
L2_BYTES = "lts__t_bytes.sum"
LEVEL_METRICS = (L1_BYTES, L2_BYTES)
# why a kernel is where it is (the transition paragraphs): the WarpStateStats stall reasons (warps stalled
# per issued instruction), issue-slot use, achieved occupancy, registers, shared-memory bank conflicts
STALLS = {reason: f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
          for reason in ("barrier", "long_scoreboard", "short_scoreboard", "mio_throttle", "math_pipe_throttle",
                         "wait", "not_selected", "lg_throttle")}
ISSUE_PCT = "smsp__issue_active.avg.pct_of_peak_sustained_active"
OCCUPANCY_PCT = "sm__warps_active.avg.pct_of_peak_sustained_active"
REGISTERS = "launch__registers_per_thread"
BANK_CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_WAVEFRONTS_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
INSTRUCTIONS = "smsp__inst_executed.sum"  # warp instructions issued, every pipe
STATE_METRICS = (*STALLS.values(), ISSUE_PCT, OCCUPANCY_PCT, REGISTERS, BANK_CONFLICTS_LD, SHARED_WAVEFRONTS_LD,
                 INSTRUCTIONS)
METRICS = (DRAM_PCT, SM_PCT, MEM_PCT, DRAM_READ, DRAM_WRITE, FADD, FMUL, FFMA, DURATION, *LEVEL_METRICS,
           *STATE_METRICS)
# Tensor-core work, which the FP32 instruction counters above do not see (HMMA/HGMMA are no FFMA):
# the tensor-pipe operation counters Nsight Compute's hierarchical tensor roofline section reads,
# one operation per FLOP. The per-source totals, and the same split by instruction (mma.sync's
# HMMA, wgmma's HGMMA); a kernel's tensor FLOPs are the larger of the two sums, so neither family
# missing an instruction loses work. Collected in a pass of their own (profiling.py): a metric a
# chip lacks fails that pass only.
TENSOR_SRC = tuple(f"sm__ops_path_tensor_src_{s}.sum" for s in (
    "bf16_dst_fp32", "fp16", "tf32_dst_fp32", "fp64", "fp8_sparsity_off", "int8"))
TENSOR_OP = tuple(f"sm__ops_path_tensor_op_{op}_src_{s}_sparsity_off.sum" for op, s in (
    ("hmma", "bf16_dst_fp32"), ("hmma", "fp16_dst_fp32"), ("hmma", "fp16_dst_fp16"), ("hmma", "tf32_dst_fp32"),
    ("hgmma", "bf16_dst_fp32"), ("hgmma", "fp16"), ("hgmma", "tf32_dst_fp32")))
TENSOR_METRICS = (*TENSOR_SRC, *TENSOR_OP, DURATION)


def warp_state(metrics: dict) -> dict:
    """The figures a transition paragraph quotes, from one kernel's metrics (absent ones left out):
    issue_pct, occupancy_pct, registers, bank_conflicts, shared_wavefronts, instructions,
    stalls {reason: warps per issue}."""
    out = {k: metrics[m] for k, m in (("issue_pct", ISSUE_PCT), ("occupancy_pct", OCCUPANCY_PCT),
                                        ("registers", REGISTERS), ("bank_conflicts", BANK_CONFLICTS_LD),
                                        ("shared_wavefronts", SHARED_WAVEFRONTS_LD),
                                        ("instructions", INSTRUCTIONS)) if m in metrics}
    stalls = {r: metrics[m] for r, m in STALLS.items() if m in metrics}
    if stalls:
        out["stalls"] = dict(sorted(stalls.items(), key=lambda kv: -kv[1]))
    return out

# Nsight Compute's SOL rule: below 60% of peak on both, latency (not a roof) limits the kernel.
SOL_THRESHOLD = 60.0


@dataclass
class KernelProfile:
    label: str
    kernels: list[str] = field(default_factory=list)  # kernel names ncu saw for this label
    metrics: dict[str, float] = field(default_factory=dict)  # summed over kernels (pct: time-weighted)

    @property
    def dram_pct(self) -> float:
        return self.metrics.get(DRAM_PCT, float("nan"))

    @property
    def sm_pct(self) -> float:
        return self.metrics.get(SM_PCT, float("nan"))

    @property
    def dram_bytes(self) -> float:
        return self.metrics.get(DRAM_READ, 0.0) + self.metrics.get(DRAM_WRITE, 0.0)

    @property
    def fp32_flops(self) -> float:
        m = self.metrics
        return m.get(FADD, 0.0) + m.get(FMUL, 0.0) + 2.0 * m.get(FFMA, 0.0)

    @property
    def tensor_flops(self) -> float | None:
        """FLOPs on the tensor pipe, or None where the profile has no tensor counters."""
        src = [self.metrics[k] for k in TENSOR_SRC if k in self.metrics]
        op = [self.metrics[k] for k in TENSOR_OP if k in self.metrics]
        if not src and not op:
            return None
        return max(sum(src), sum(op))

    @property
    def flops(self) -> float:
        """Every FLOP ncu counted: FP32 instructions plus tensor-pipe operations."""
        return self.fp32_flops + (self.tensor_flops or 0.0)

    @property
    def ai(self) -> float | None:
        """Measured arithmetic intensity: FP32 FLOPs per DRAM byte."""
        return self.fp32_flops / self.dram_bytes if self.dram_bytes else None

    @property
    def ai_all(self) -> float | None:
        """FP32 and tensor FLOPs per DRAM byte."""
        return self.flops / self.dram_bytes if self.dram_bytes else None

    @property
    def l1_bytes(self) -> float | None:
        """Bytes through the L1TEX tag stage; None where the profile predates the metric."""
        return self.metrics.get(L1_BYTES)

    @property
    def shared_bytes(self) -> float | None:
        """Bytes read from shared memory, as wavefronts × 128 B (a wavefront moves at most one 128-byte
        row of the banks: an upper bound, exact for conflict-free 16-byte loads); None where not profiled.
        l1tex__t_bytes leaves shared memory out, yet it is what the tiled kernels' FMAs are fed from."""
        wf = self.metrics.get(SHARED_WAVEFRONTS_LD)
        return None if wf is None else 128.0 * wf

    @property
    def l1_shared_bytes(self) -> float | None:
        """The L1/shared level of the hierarchical roofline: global/local bytes through L1 plus shared reads."""
        if self.l1_bytes is None:
            return None
        return self.l1_bytes + (self.shared_bytes or 0.0)

    @property
    def l2_bytes(self) -> float | None:
        """Bytes through the L2 slices; None where the profile predates the metric."""
        return self.metrics.get(L2_BYTES)

    @property
    def ai_l1(self) -> float | None:
        return self.fp32_flops / self.l1_bytes if self.l1_bytes else None

    @property
    def ai_l2(self) -> float | None:
        return self.fp32_flops / self.l2_bytes if self.l2_bytes else None

    @property
    def ai_dram(self) -> float | None:
        return self.ai

    @property
    def duration_s(self) -> float | None:
        return self.metrics.get(DURATION)

    def verdict(self) -> str:
        return verdict(self.dram_pct, self.sm_pct)

    def to_dict(self) -> dict:
        return {"label": self.label, "kernels": self.kernels, "metrics": self.metrics,
                "dram_pct": self.dram_pct, "sm_pct": self.sm_pct, "dram_bytes": self.dram_bytes,
                "fp32_flops": self.fp32_flops, "ai": self.ai, "verdict": self.verdict(),
                "l1_bytes": self.l1_bytes, "l2_bytes": self.l2_bytes,
                "ai_l1": self.ai_l1, "ai_l2": self.ai_l2, "ai_dram": self.ai_dram,
                "tensor_flops": self.tensor_flops}

    @classmethod
    def from_dict(cls, d: dict) -> KernelProfile:
        return cls(d["label"], list(d.get("kernels", [])), dict(d.get("metrics", {})))


def verdict(dram_pct: float, sm_pct: float) -> str:
    """Which roof the kernel is against, by Nsight Compute's speed-of-light reading."""
    if not (dram_pct == dram_pct and sm_pct == sm_pct):
        return "unknown"
    if max(dram_pct, sm_pct) < SOL_THRESHOLD:
        return "latency-bound (neither roof reached)"
    return "memory-bound" if dram_pct >= sm_pct else "compute-bound"


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    if not t or t == "n/a":
        return None
    try:
        return float(t)
    except ValueError:
        return None


# ncu picks a prefix per value; both spellings have been seen across versions
_UNIT_SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
               "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
               "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0,
               "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
               "inst": 1, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9}


_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _unit_scale(unit: str) -> float:
    """The factor to base units; a count with a metric prefix ncu chose ("Gop", "Minst") too."""
    if unit in _UNIT_SCALE:
        return _UNIT_SCALE[unit]
    if len(unit) > 1 and unit[0] in _PREFIX and unit[1:].isalpha() and unit[1:].islower():
        return _PREFIX[unit[0]]
    return 1.0


def parse_csv(text: str) -> list[dict]:
    """Rows of `ncu --csv --page raw`: [{'name': kernel, 'metrics': {metric: value in base units}}].

    ncu interleaves '==PROF==' log lines with the CSV on stdout; they are skipped.
    Byte, time and instruction counts are scaled to base units (bytes, seconds, count)
    whatever prefix ncu chose; percentages stay percentages.
    """
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    reader = list(csv.reader(io.StringIO("\n".join(lines))))
    header, rest = reader[0], reader[1:]
    units = rest[0] if rest and not _number(rest[0][0] if rest[0] else "") and rest[0][0] == "" else None
    if units is not None:
        rest = rest[1:]
    name_col = header.index("Kernel Name") if "Kernel Name" in header else None
    shape_cols = {k: header.index(col) for k, col in (("grid", "Grid Size"), ("block", "Block Size")) if col in header}
    rows = []
    for r in rest:
        metrics = {}
        for i, col in enumerate(header):
            if col in METRICS or "__" in col:
                v = _number(r[i]) if i < len(r) else None
                if v is None:
                    continue
                unit = units[i] if units and i < len(units) else ""
                metrics[col] = v * _unit_scale(unit)
        row = {"name": r[name_col] if name_col is not None else "?", "metrics": metrics}
        row.update({k: r[i] for k, i in shape_cols.items() if i < len(r)})
        rows.append(row)
    return rows


def combine(label: str, rows: list[dict]) -> KernelProfile:
    """Several kernels under one label (a library call): sum counts, weight % by duration."""
    prof = KernelProfile(label, [r["name"] for r in rows])
    total_t = sum(r["metrics"].get(DURATION, 0.0) for r in rows) or 1.0
    for r in rows:
        w = r["metrics"].get(DURATION, 0.0) / total_t if len(rows) > 1 else 1.0
        for k, v in r["metrics"].items():
            scale = w if "pct" in k else 1.0
            prof.metrics[k] = prof.metrics.get(k, 0.0) + v * scale
    return prof
