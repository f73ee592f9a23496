"""A whole program's kernels on this GPU's roofline, pure: launches grouped by kernel and launch
shape, the fewest groups that cover most of the GPU time, each group placed on the hierarchical
roofline from its profiled counters, and ranked by the time there is to win.

Headroom of a group = its GPU time x (1 - achieved / attainable), with attainable the rate its
binding level allows (hierarchy.analyse); a kernel that moves bytes but does no floating-point
work is judged by time alone: headroom = time - the time its busiest level needs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from rooflab.model import ncu
from rooflab.model.hierarchy import COMPUTE, LEVEL_NAMES, ComputeRoof, Level, analyse


@dataclass(frozen=True)
class Launch:
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    duration_s: float
    start_s: float = 0.0
    op: str | None = None  # the framework operator that launched it (torch: aten::mm, ...)
    op_flops: float | None = None  # that operator's FLOPs from its shapes, where known
    correlation: int | None = None  # CUPTI's id linking the launch to its runtime call


@dataclass
class Group:
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    launches: int = 0
    total_s: float = 0.0
    ops: dict[str, int] = field(default_factory=dict)
    op_flops: float | None = None  # per launch (mean over launches that had one)

    @property
    def key(self) -> str:
        return launch_key(self.name, self.grid, self.block)

    @property
    def mean_s(self) -> float:
        return self.total_s / self.launches if self.launches else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["grid"], d["block"], d["key"], d["mean_s"] = list(self.grid), list(self.block), self.key, self.mean_s
        return d


def launch_key(name: str, grid: Sequence[int], block: Sequence[int]) -> str:
    return f"{name} <<<{','.join(map(str, grid))} | {','.join(map(str, block))}>>>"


def dims(value) -> tuple[int, int, int]:
    """(x, y, z) from [x, y, z], '(x, y, z)', 'x,y,z' or a number; missing entries are 1."""
    if isinstance(value, (int, float)):
        parts = [int(value)]
    elif isinstance(value, str):
        parts = [int(p) for p in re.findall(r"\d+", value)]
    else:
        parts = [int(v) for v in (value or [])]
    parts = (parts + [1, 1, 1])[:3]
    return parts[0], parts[1], parts[2]


def group(launches: Iterable[Launch]) -> list[Group]:
    """One group per (kernel name, grid, block), the largest total time first."""
    out: dict[tuple, Group] = {}
    flop_sum: dict[tuple, tuple[float, int]] = {}
    for la in launches:
        k = (la.name, la.grid, la.block)
        g = out.setdefault(k, Group(la.name, la.grid, la.block))
        g.launches += 1
        g.total_s += la.duration_s
        if la.op:
            g.ops[la.op] = g.ops.get(la.op, 0) + 1
        if la.op_flops:
            s, n = flop_sum.get(k, (0.0, 0))
            flop_sum[k] = (s + la.op_flops, n + 1)
    for k, (s, n) in flop_sum.items():
        out[k].op_flops = s / n
    return sorted(out.values(), key=lambda g: (-g.total_s, g.key))


def choose(groups: Sequence[Group], coverage: float = 0.9, cap: int = 20) -> list[Group]:
    """The fewest groups, largest first, that hold at least `coverage` of the GPU time (at most `cap`)."""
    total = sum(g.total_s for g in groups)
    picked, held = [], 0.0
    for g in groups:
        if len(picked) >= cap or (total > 0 and held >= coverage * total):
            break
        picked.append(g)
        held += g.total_s
    return picked


# ---------------------------------------------------------------- flops a launch does, from its counters

FP32_FLOPS = "fp32"
FP64_FLOPS = "fp64"
FP16_FLOPS = "fp16"
DFMA = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
DADD = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"
DMUL = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
HADD = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum"
HMUL = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum"
TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
TRACE_METRICS = (ncu.DURATION, ncu.DRAM_READ, ncu.DRAM_WRITE, *ncu.LEVEL_METRICS, ncu.FFMA, ncu.FADD, ncu.FMUL,
                 DFMA, DADD, DMUL, HFMA, HADD, HMUL, TENSOR_INST, ncu.DRAM_PCT, ncu.SM_PCT)


def counted_flops(m: dict[str, float]) -> dict[str, float]:
    """FLOPs per CUDA-core precision from the SASS instruction counters (an FMA is two; HFMA2 lanes
    are counted per thread instruction as ncu's roofline sections count them)."""
    return {FP32_FLOPS: 2 * m.get(ncu.FFMA, 0.0) + m.get(ncu.FADD, 0.0) + m.get(ncu.FMUL, 0.0),
            FP64_FLOPS: 2 * m.get(DFMA, 0.0) + m.get(DADD, 0.0) + m.get(DMUL, 0.0),
            FP16_FLOPS: 2 * m.get(HFMA, 0.0) + m.get(HADD, 0.0) + m.get(HMUL, 0.0)}


@dataclass
class Work:
    flops: float
    precision: str  # which compute roof applies: fp32, fp64, fp16 or a tensor precision
    source: str  # where the FLOPs come from


def work_of(group: Group, metrics: dict[str, float], tensor_precision: str | None) -> Work:
    """The FLOPs of one launch of `group` and the roof they run against.

    The tensor pipes' instruction counters do not give FLOPs (the work per instruction depends on
    the instruction's shape), so a launch that used the tensor pipe takes its FLOPs from the
    framework operator that launched it (2·M·N·K from its shapes) where that is known; where it
    is not, its FLOPs are unattributed (0, with that said)."""
    if metrics.get(TENSOR_INST, 0.0) > 0:
        if group.op_flops:
            return Work(group.op_flops, tensor_precision or "bf16", "operator shapes (tensor pipe)")
        return Work(0.0, tensor_precision or "bf16", "unattributed: tensor-pipe work with no operator shapes")
    by_prec = counted_flops(metrics)
    prec, flops = max(by_prec.items(), key=lambda kv: kv[1])
    if flops > 0:
        return Work(flops, prec, f"ncu {prec.upper()} instruction counters")
    if group.op_flops:
        return Work(group.op_flops, FP32_FLOPS, "operator shapes")
    return Work(0.0, FP32_FLOPS, "no floating-point work counted")


def tensor_precision_of(name: str) -> str | None:
    """A tensor-core kernel's precision from its name (cuBLAS/CUTLASS spell it there), else None."""
    n = name.lower()
    for token, prec in (("bf16", "bf16"), ("f16", "fp16"), ("h16", "fp16"), ("tf32", "tf32"), ("e4m3", "fp8"),
                        ("fp8", "fp8")):
        if token in n:
            return prec
    return None


# ---------------------------------------------------------------- placement and ranking

@dataclass
class Placed:
    group: Group
    profiled: bool
    flops: float = 0.0  # per launch
    flops_source: str = ""
    precision: str = FP32_FLOPS
    level_bytes: dict[str, float] = field(default_factory=dict)  # per launch
    binding: str = "unknown"
    binding_name: str = "unknown"
    attainable: float | None = None  # FLOP/s at the binding level
    achieved: float | None = None  # FLOP/s over the traced time
    pct_of_attainable: float | None = None
    floor_s: float | None = None  # per launch: the time its busiest level (or its compute) needs
    headroom_s: float | None = None  # over all launches
    samples: int = 0

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "group"}
        d["group"] = self.group.to_dict()
        return d


def level_bytes(m: dict[str, float]) -> dict[str, float]:
    out = {}
    if ncu.L1_BYTES in m:
        out["L1"] = m[ncu.L1_BYTES]
    if ncu.L2_BYTES in m:
        out["L2"] = m[ncu.L2_BYTES]
    if ncu.DRAM_READ in m or ncu.DRAM_WRITE in m:
        out["DRAM"] = m.get(ncu.DRAM_READ, 0.0) + m.get(ncu.DRAM_WRITE, 0.0)
    return out


def mean_metrics(rows: Sequence[dict]) -> dict[str, float]:
    """The mean of each metric over a group's sampled launches."""
    keys = {k for r in rows for k in r}
    return {k: sum(r.get(k, 0.0) for r in rows) / len(rows) for k in keys} if rows else {}


def place(group: Group, samples: Sequence[dict[str, float]], levels: Sequence[Level],
          roofs: Sequence[ComputeRoof]) -> Placed:
    """One group on the hierarchical roofline, from the counters of its sampled launches (ncu)
    and its traced time (the mean launch of the trace, so the headroom is in the program's time)."""
    if not samples:
        return Placed(group, profiled=False)
    m = mean_metrics(samples)
    work = work_of(group, m, tensor_precision_of(group.name))
    peak = roof_for(work.precision, roofs)
    lb = level_bytes(m)
    k = analyse(group.key, work.flops, lb, list(levels), peak or math.inf, duration_s=group.mean_s or None,
                achieved_source="traced")
    need = [p.time_needed_s for p in k.points] + ([work.flops / peak] if peak and work.flops else [])
    floor = max(need) if need else None
    headroom = group.total_s * max(0.0, 1.0 - floor / group.mean_s) if floor and group.mean_s else None
    binding = k.binding
    if work.flops == 0 and k.points:  # no FLOPs: the busiest level binds
        binding = max(k.points, key=lambda p: p.time_needed_s).level
    name = LEVEL_NAMES.get(binding, f"{work.precision.upper()} compute" if binding == COMPUTE else binding)
    return Placed(group, True, work.flops, work.source, work.precision, lb, binding, name, k.attainable,
                  k.achieved, k.pct_of_attainable, floor, headroom, len(samples))


def roof_for(precision: str, roofs: Sequence[ComputeRoof]) -> float | None:
    for r in roofs:
        if r.precision == precision:
            return r.flops
    return None


def rank(placed: Sequence[Placed]) -> list[Placed]:
    """Profiled groups by headroom (largest first), then the rest by time."""
    return sorted(placed, key=lambda p: (not p.profiled, -(p.headroom_s or 0.0), -p.group.total_s))


# ---------------------------------------------------------------- the section

def section(groups: Sequence[Group], placed: Sequence[Placed], *, command: list[str] | None,
            levels: Sequence[Level], roofs: Sequence[ComputeRoof], ceilings_source: str,
            traced_step_s: float | None = None, untraced_step_s: float | None = None,
            collector: str = "", profiler_note: str | None = None, budget_note: str | None = None) -> dict:
    """The results document's trace section: every group, the placed ones ranked, and the limits."""
    total = sum(g.total_s for g in groups)
    by_key = {p.group.key: p for p in placed}
    ranked = rank([by_key.get(g.key) or Placed(g, profiled=False) for g in groups])
    unprofiled = [p for p in ranked if not p.profiled]
    unattributed = [p.group.key for p in ranked if p.profiled and p.flops == 0 and "unattributed" in p.flops_source]
    overhead = (traced_step_s / untraced_step_s - 1.0) if traced_step_s and untraced_step_s else None
    return {
        "command": list(command) if command else None,
        "collector": collector,
        "gpu_time_s": total,
        "launches": sum(g.launches for g in groups),
        "kernels": len(groups),
        "groups": [p.to_dict() for p in ranked],
        "levels": [lv.to_dict() for lv in levels],
        "roofs": [r.to_dict() for r in roofs],
        "ceilings_source": ceilings_source,
        "limits": {
            "unprofiled_groups": len(unprofiled),
            "unprofiled_share": (sum(p.group.total_s for p in unprofiled) / total) if total else 0.0,
            "unattributed_flops": unattributed,
            "traced_step_s": traced_step_s,
            "untraced_step_s": untraced_step_s,
            "tracing_overhead": overhead,
            "profiler_note": profiler_note,
            "budget_note": budget_note,
        },
    }


# ---------------------------------------------------------------- reading a torch.profiler trace

_GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm")


def op_flops(name: str, input_dims) -> float | None:
    """2·M·N·K (times the batch) of a matrix-product operator from its input shapes."""
    if name not in _GEMM_OPS or not input_dims:
        return None
    shapes = [d for d in input_dims if isinstance(d, list) and len(d) >= 2]
    if name in ("aten::addmm", "aten::baddbmm") and len(shapes) >= 3:
        shapes = shapes[1:]
    if len(shapes) < 2:
        return None
    a, b = shapes[0], shapes[1]
    batch = math.prod(a[:-2]) if len(a) > 2 else 1
    m, k, n = a[-2], a[-1], b[-1]
    return 2.0 * batch * m * n * k


def launches_from_chrome_trace(trace: dict | str) -> list[Launch]:
    """The kernels of a Kineto (torch.profiler) Chrome trace, each with the operator that launched it."""
    doc = json.loads(trace) if isinstance(trace, str) else trace
    events = doc.get("traceEvents", doc if isinstance(doc, list) else [])
    ops = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "operator"):
            ext = (e.get("args") or {}).get("External id")
            if ext is not None:
                args = e.get("args") or {}
                flops = args.get("flops")
                prev = ops.get(ext)
                # the innermost operator of an External id (the one whose shapes describe the launch)
                if prev is None or e.get("dur", 0) <= prev[2]:
                    ops[ext] = (e.get("name"), flops if flops else op_flops(e.get("name"), args.get("Input Dims")),
                                e.get("dur", 0))
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "Kernel"):
            continue
        args = e.get("args") or {}
        op = ops.get(args.get("External id"))
        out.append(Launch(e.get("name", "?"), dims(args.get("grid")), dims(args.get("block")),
                          float(e.get("dur", 0.0)) * 1e-6, float(e.get("ts", 0.0)) * 1e-6,
                          op[0] if op else None, float(op[1]) if op and op[1] else None, args.get("correlation")))
    return sorted(out, key=lambda la: la.start_s)


def in_window(trace: dict, launches: Sequence[Launch], name: str) -> list[Launch]:
    """The launches made inside the last range called `name` (torch.profiler.record_function or
    an NVTX range the profiler recorded): those whose runtime call falls within its span."""
    events = trace.get("traceEvents", [])
    spans = [e for e in events if e.get("ph") == "X" and e.get("name") == name
             and e.get("cat") in ("user_annotation", "cpu_op")]
    if not spans:
        return []
    last = max(spans, key=lambda e: e.get("ts", 0))
    t0, t1 = last.get("ts", 0), last.get("ts", 0) + last.get("dur", 0)
    inside = {(e.get("args") or {}).get("correlation") for e in events
              if e.get("cat") == "cuda_runtime" and t0 <= e.get("ts", -1) <= t1}
    inside.discard(None)
    return [la for la in launches if la.correlation in inside]


def base_name(name: str) -> str:
    """The kernel's function name alone: 'void ns::k<4, float>(int, float*)' -> 'k'. CUPTI (torch's
    trace) and ncu spell template arguments and parameters differently; the function name they share."""
    n = re.sub(r"^(void|__global__)\s+", "", name.strip())
    depth, cut = 0, len(n)
    for i, ch in enumerate(n):  # the first '<' or '(' outside any brackets ends the qualified name
        if ch in "<(" and depth == 0:
            cut = i
            break
        depth += ch in "[{"
        depth -= ch in "]}"
    return n[:cut].split("::")[-1].strip() or name


def ncu_samples(rows: Sequence[dict], groups: Sequence[Group],
                per_group: int = 5) -> dict[str, list[dict[str, float]]]:
    """ncu rows (parse_csv, with grid and block) sorted into the groups they sample, matched by
    function name and launch shape; at most `per_group` each."""
    by_shape = {(base_name(g.name), g.grid, g.block): g.key for g in groups}
    out: dict[str, list[dict[str, float]]] = {}
    for r in rows:
        k = by_shape.get((base_name(r["name"]), dims(r.get("grid")), dims(r.get("block"))))
        if k and len(out.setdefault(k, [])) < per_group:
            out[k].append(r["metrics"])
    return out


def ncu_name_filter(groups: Sequence[Group]) -> str:
    """ncu's --kernel-name for these groups, matched against demangled names (--kernel-name-base
    demangled): the function name after a namespace or the return type, before its template
    arguments or parameters."""
    names = sorted({re.escape(base_name(g.name)) for g in groups})
    return r"regex:(^|[\s:])(" + "|".join(names) + r")(<|\(|$)"
