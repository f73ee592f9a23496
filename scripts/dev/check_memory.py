#!/usr/bin/env python3
"""GPU smoke check for the memory hierarchy: runs the memory section with its defaults
and prints one line per figure, then the acceptance checks. Under 40 s on an H200.

    PYTHONPATH=src python3 scripts/dev/check_memory.py [--json memory.json] [--rounds 3] [--reps 10] [-v]

Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time

MiB = 2**20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="also write the results document (device + memory section) here")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("-v", "--verbose", action="store_true", help="progress messages on stderr")
    a = ap.parse_args(argv)

    from rooflab import results
    from rooflab.cuda.device import detect, document_entry
    from rooflab.measure.memory import MemoryConfig, run

    dev = detect()
    print(f"{dev.name}: {dev.sm_count} SMs, {dev.sm_clock_max_mhz:.0f} MHz, L2 {dev.l2_bytes / MiB:g} MiB, "
          f"cc {dev.cc[0]}.{dev.cc[1]}, CuPy {dev.cupy_version}")
    say = (lambda m: print(f"  … {m}", file=sys.stderr, flush=True)) if a.verbose else None
    t0 = time.perf_counter()
    sec = run(MemoryConfig(rounds=a.rounds, reps=a.reps), dev, say)
    wall = time.perf_counter() - t0
    theo, s = sec["theoretical"], sec["summary"]

    def line(what: str, r: dict, scale: float, unit: str, ref: float | None = None, ref_name: str = "") -> None:
        if r.get("error"):
            print(f"{what:<34} ERROR {r['error']}")
            return
        if not r.get("verified"):
            print(f"{what:<34} FAILED its check: {r.get('check')}")
            return
        v = r["rate"] / scale
        pct = f"  {100 * r['rate'] / ref:5.1f}% of {ref_name}{ref / scale:,.2f}" if ref else ""
        print(f"{what:<34} {v:10,.2f} {unit}{pct}  spread {r['spread_pct']:.2f}%  iters {r.get('iters')}")

    for part in ("l2_sweep", "shared"):  # a part that failed as a whole (compile, allocation)
        if (sec.get(part) or {}).get("error"):
            print(f"{part:<34} ERROR {sec[part]['error']}")
    for r in sorted(sec.get("l2_sweep", {}).get("rows", []), key=lambda r: r.get("footprint_bytes", 0)):
        line(f"L2 read {r['footprint_bytes'] / MiB:g} MiB ({r['footprint_bytes'] / dev.l2_bytes:.2f}x L2)", r,
             1e9, "GB/s", theo.get("hbm_bytes_per_s"), "HBM peak ")
    if sec.get("l2_copy"):
        line(f"L2 copy {sec['l2_copy'].get('footprint_bytes', 0) / MiB:g} MiB", sec["l2_copy"], 1e9, "GB/s")
    for r in sec.get("shared", {}).get("rows", []):
        line(f"shared {r.get('variant', r.get('label'))}", r, 1e12, "TB/s", theo.get("shared_bytes_per_s"))
    for p in ("fp64", "fp16"):
        if sec.get(p):
            line(f"{p.upper()} {sec[p].get('kernel', '')}", sec[p], 1e12, "TFLOP/s", theo.get(f"{p}_flops"))
    print(f"in-L2 best / beyond-L2: {s.get('l2_over_beyond') or float('nan'):.2f}x; shared conflict slowdown: "
          f"{s.get('shared_conflict_slowdown') or float('nan'):.2f}x; section {sec['elapsed_s']:.1f} s, "
          f"wall {wall:.1f} s")

    rows = [*sec.get("l2_sweep", {}).get("rows", []), sec.get("l2_copy") or {}, *sec.get("shared", {}).get("rows", []),
            sec.get("fp64") or {}, sec.get("fp16") or {}]
    sweep = {r.get("footprint_bytes"): r for r in sec.get("l2_sweep", {}).get("rows", [])}
    headline = [r for r in (sweep.get(s.get("l2_footprint_bytes")), sweep.get(s.get("beyond_l2_footprint_bytes")),
                            sec.get("l2_copy"), *sec.get("shared", {}).get("rows", []), sec.get("fp64"),
                            sec.get("fp16")) if r and r.get("verified")]
    worst = max(sweep.values(), key=lambda r: r.get("spread_pct") or 0, default=None)
    if worst and worst.get("spread_pct") is not None:
        print(f"largest spread in the L2 sweep: {worst['spread_pct']:.2f}% at {worst['footprint_bytes'] / MiB:g} MiB")
    checks = {
        "every configuration verified": all(r.get("verified") and not r.get("error") for r in rows)
        and not any((sec.get(p) or {}).get("error") for p in ("l2_sweep", "shared")),
        "in-L2 > 1.5x beyond-L2": (s.get("l2_over_beyond") or 0) > 1.5,
        "shared conflict-free > 4x conflicted": (s.get("shared_conflict_slowdown") or 0) > 4,
        "shared >= 90% of theoretical": (s.get("shared_pct_of_theoretical") or 0) >= 90,
        "spread < 1% on the headline figures": all((r.get("spread_pct") or 0) < 1.0 for r in headline),
        "memory section < 30 s": sec["elapsed_s"] < 30,
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if a.json:
        doc = results.new_document("scripts/dev/check_memory.py", document_entry(dev))
        doc["memory"] = sec
        results.write_atomic(a.json, results.dumps(doc))
        print(f"wrote {a.json}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
