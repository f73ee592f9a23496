"""The SASS instructions where a kernel's warps were sampled most, from Nsight Compute's source page as CSV
(`ncu --section SourceCounters --page source --csv --print-source sass ...`) on stdin: the top N by all
warp-stall samples, each with its largest stall-reason columns. Usage: ... | python3 stall_top.py [N]"""

import csv
import sys


def _num(x: str) -> float:
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def main(n: int) -> int:
    lines = [line for line in sys.stdin if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith('"Address"') or line.startswith("Address")), None)
    if start is None:
        print("stall_top: no source table in the input", file=sys.stderr)
        return 2
    rows = list(csv.DictReader(lines[start:]))
    key = next((k for k in rows[0] if "Warp Stall Sampling (All" in k), None)
    if key is None:
        print("stall_top: no warp-stall sampling column; columns: " + ", ".join(rows[0]), file=sys.stderr)
        return 2
    total = sum(_num(r[key]) for r in rows) or 1.0
    reasons = [k for k in rows[0] if "stall" in k.lower() and k != key and "Not-issued" not in k]
    print(f"{len(rows)} instructions, {total:.0f} samples; columns with reasons: {len(reasons)}")
    for r in sorted(rows, key=lambda r: -_num(r[key]))[:n]:
        top = sorted(((k, _num(r[k])) for k in reasons), key=lambda kv: -kv[1])[:3]
        why = ", ".join(f"{k.split('(')[0].strip()[-28:]} {v:.0f}" for k, v in top if v)
        print(f"{100 * _num(r[key]) / total:5.1f}%  {r.get('Address', '')[:8]:>8}  {r.get('Source', '')[:60]:<60}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
