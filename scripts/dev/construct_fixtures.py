"""Write the CONSTRUCTED (not recorded) test fixtures for the memory hierarchy.

No ncu and no GPU were available when these were made, so they are built, not measured:
- tests/data/ncu_<label>_levels_constructed.csv: `ncu --csv --page raw` files in the exact format of
  the recorded tests/data/ncu_copy.csv (same columns, units row, number formatting), with the two
  level metrics added (l1tex__t_bytes, lts__t_bytes, as avg/max/min/sum in ncu's column order).
  Every other value is the recorded H200 profile of that kernel (tests/data/h200_results.json);
  the L1 and L2 byte counts are worked out from each kernel's access pattern (comments below).
- tests/data/h200_memory_constructed.json: a "memory" section in the schema measure/memory.py
  writes, with rates predicted for an H200 (not measured).

    python3 scripts/dev/construct_fixtures.py      # from the repository root

tests/test_scripts_dev.py checks that the files in tests/data are what this writes.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "src"))

from rooflab.model.hierarchy import memory_summary, rate_spread  # noqa: E402 (this tree's rooflab first)

N = 4096
WARPS = N * N // 32
# Bytes through the L1 tag stage (32-byte sectors touched by each warp-wide access) and the L2.
LEVELS = {
    # threadIdx.x -> row, 16x16 blocks: a warp is 16 rows x 2 columns. Per k: A touches 16 sectors
    # (one per row), B one sector (2 adjacent columns); C: 16 sectors per warp at the end.
    # L2: the 16 A sectors are reused for 8 consecutive k and shared by the block's 8 warps, B's 2
    # sectors per k by the block: ~9% of the L1 traffic misses (constructed).
    "naive": (WARPS * N * (16 + 1) * 32 + WARPS * 16 * 32, 96_636_764_160),
    # threadIdx.x -> column: a warp is 2 rows x 16 columns. Per k: A 2 sectors, B 2 sectors; C 4.
    # L2: about a fifth of the L1 traffic (constructed).
    "coalesced": (WARPS * N * (2 + 2) * 32 + WARPS * 4 * 32, 55_834_574_848),
    # 32x32 tiles: each block loads 2 x 4 KB per tile, 128 tiles, 16384 blocks; C once. Almost all of
    # it misses L1 (each tile element is loaded once per block).
    "tiled32": (16384 * 128 * 8192 + N * N * 4, 16_911_433_728),
    # copy_float4 over 256M floats: 1 GiB read + 1 GiB written through L1 and L2.
    "copy": (2 * 2**30, 2_151_677_952),
}
INSTANCES = {"l1tex__t_bytes": 132, "lts__t_bytes": 96}  # per-SM L1s; L2 slices (nominal)


def _fmt(v: float) -> str:
    return f"{round(v):,}" if v == round(v) else f"{v:,.2f}"


def level_csvs(out_dir: Path = DATA) -> None:
    template = (DATA / "ncu_copy.csv").read_text().splitlines()
    head = [ln for ln in template if not ln.startswith('"')]
    table = list(csv.reader(io.StringIO("\n".join(ln for ln in template if ln.startswith('"')))))
    cols, units, tvals = table[0], table[1], table[2]
    doc = json.loads((DATA / "h200_results.json").read_text())
    recorded = {k["label"]: k for k in doc["profile"]["kernels"]}
    # insert the level metrics where ncu sorts them: l1tex__ before launch__, lts__ after it
    new_cols, new_units = list(cols), list(units)
    i = new_cols.index("launch__barrier_count")
    for stat in ("avg", "max", "min", "sum")[::-1]:
        new_cols.insert(i, f"l1tex__t_bytes.{stat}")
        new_units.insert(i, "byte")
    j = next(k for k, c in enumerate(new_cols) if c.startswith("numa__"))
    for stat in ("avg", "max", "min", "sum")[::-1]:
        new_cols.insert(j, f"lts__t_bytes.{stat}")
        new_units.insert(j, "byte")
    for label, (l1, l2) in LEVELS.items():
        rec = recorded[label]
        m = dict(rec["metrics"])
        for name, total in (("l1tex__t_bytes", l1), ("lts__t_bytes", l2)):
            avg = total / INSTANCES[name]
            m.update({f"{name}.sum": total, f"{name}.avg": avg, f"{name}.max": avg * 1.02, f"{name}.min": avg * 0.97})
        row = []
        for c, u, tv in zip(new_cols, new_units, tvals + [""] * (len(new_cols) - len(tvals)), strict=False):
            if c in m and m[c] is not None:
                row.append(_fmt(m[c]))  # the results file kept ncu's numbers in ncu's units
            elif c == "Kernel Name":
                row.append(rec["kernels"][0])
            elif c == "Block Size":
                row.append(f"({int(m['launch__block_dim_x'])}, {int(m['launch__block_dim_y'])}, "
                           f"{int(m['launch__block_dim_z'])})")
            elif c == "Grid Size":
                row.append(f"({int(m['launch__grid_dim_x'])}, {int(m['launch__grid_dim_y'])}, "
                           f"{int(m['launch__grid_dim_z'])})")
            else:
                row.append(tvals[cols.index(c)] if c in cols else "")
        out = io.StringIO()
        w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerows([new_cols, new_units, row])
        (out_dir / f"ncu_{label}_levels_constructed.csv").write_text("\n".join(head) + "\n" + out.getvalue())


def memory_section() -> dict:
    """Predicted H200 rates in the schema of measure/memory.run (constructed, not measured)."""
    sms, mhz, l2 = 132, 1980.0, 60 * 2**20
    clock = mhz * 1e6
    theo = {"shared_bytes_per_s": sms * 128 * clock, "shared_basis": f"{sms} SMs × 128 B/clk (32 banks × 4 B) × 1980 MHz",
            "l2_bytes_per_s": None, "l2_basis": "no published L2 bandwidth for this architecture",
            "hbm_bytes_per_s": 4814304000000.0, "fp32_flops": 66908160000000.0,
            "fp64_flops": sms * 64 * 2 * clock, "fp64_basis": f"{sms} SMs × 64 FP64 FMA/clk × 2 × 1980 MHz",
            "fp16_flops": sms * 256 * 2 * clock, "fp16_basis": f"{sms} SMs × 256 FP16 FMA/clk (two per half2 lane) × 2 × 1980 MHz"}

    def rounds(tbs: list[float], unit: float = 1e12) -> list[dict]:
        return [{"median_ms": 2.0, "min_ms": 1.99, "max_ms": 2.02, "reps": 10, "rate": v * unit, "sm_mhz": 1980,
                 "throttled": False, "telemetry": None} for v in tbs]

    sweep = {1: 7.05, 2: 7.31, 4: 7.48, 8: 7.58, 16: 7.61, 24: 7.35, 32: 6.62, 40: 5.81, 48: 5.22, 56: 4.93,
             64: 4.71, 96: 4.52, 128: 4.41, 256: 4.33}
    rows = []
    for mib, tbs in sweep.items():
        r = rounds([tbs * 0.998, tbs, tbs * 1.003])
        rows.append({"label": f"l2_read {mib} MiB", "footprint_bytes": mib * 2**20, "n4": mib * 2**16, "step": 0,
                     "iters": 1000, "bytes": tbs * 2e9, "verified": True,
                     "check": {"what": "constructed", "rel_err": 1e-7, "tol": 1e-4}, "rounds": r,
                     **rate_spread([x["rate"] for x in r])})
    def row(label: str, tbs: float, **extra) -> dict:
        r = rounds([tbs * 0.997, tbs, tbs * 1.002])
        return {"label": label, "verified": True, "rounds": r, **extra, **rate_spread([x["rate"] for x in r])}

    sec = {
        "l2_sweep": {"kernel": "l2_read", "grid": 1056, "block": 256, "rows": rows,
                     "bytes": "16 x threads x 4 x iters (reads only)"},
        "l2_copy": row("l2_copy 16 MiB", 6.21, footprint_bytes=16 * 2**20, n4=2**19, iters=800, bytes=1.2e10),
        "shared": {"rows": [
            row("shared conflict-free", 31.2, variant="conflict-free", kernel="smem_read<1>", lane_stride_bytes=16,
                wavefronts_per_lds128=4, how="lanes 16 B apart: each quarter-warp covers the 32 banks once"),
            row("shared 32-way conflict", 3.95, variant="32-way conflict", kernel="smem_read<8>",
                lane_stride_bytes=128, wavefronts_per_lds128=32,
                how="lanes 128 B apart: all 32 lanes in banks 0-3, 32 rows")],
            "bytes": "16 x threads x 4 x iters", "buffer_bytes": 8192},
        "fp64": row("dfma_chain<8>", 32.6, precision="fp64", kernel="dfma_chain<8>", accumulators=8),
        "fp16": row("hfma2_chain<8>", 130.1, precision="fp16", kernel="hfma2_chain<8>", accumulators=8),
        "config": {"rounds": 3, "reps": 10, "warmup": 1, "target_ms": 2.0, "footprints": [m * 2**20 for m in sweep],
                   "copy_footprint": 16 * 2**20, "parts": ["l2", "l2_copy", "shared", "fp64", "fp16"]},
        "method": {"timer": "CUDA events per launch", "reps": 10, "warmup": 1, "rounds": 3, "launch_ms": 2.0,
                   "block": 256, "grid": 1056, "threads_per_sm": 2048,
                   "constructed": "NOT MEASURED: predicted H200 figures for tests"},
        "device": {"name": "NVIDIA H200", "cc": [9, 0], "sm_count": sms, "sm_clock_max_mhz": mhz, "l2_bytes": l2},
        "theoretical": theo,
        "started": "2026-11-30T00:00:00+00:00", "finished": "2026-11-30T00:00:09+00:00", "elapsed_s": 9.0,
    }
    sec["summary"] = memory_summary(sec)
    return sec


if __name__ == "__main__":
    level_csvs()
    (DATA / "h200_memory_constructed.json").write_text(json.dumps(memory_section(), indent=1, ensure_ascii=False) + "\n")
    print("wrote", ", ".join(sorted(p.name for p in DATA.glob("*constructed*"))))
