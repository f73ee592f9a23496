"""The ring of a persistent TMA kernel, step by step: each kernel built with -DTP_TRACE (include/tma_persistent.cuh
stamps the SM clock at every step of the first blocks' rings), launched once at N after a warm-up, and the stamps
read back. Prints, per traced block, where a k-tile's time goes (consumers waiting for data, the producer waiting
for a slot, a box's flight from issue to landing, the epilogue) and, in a cluster, how far its two blocks run
apart; the stamps are saved as .npz beside it. A diagnostic, never a rung: the traced kernel also writes the stamps.

    PYTHONPATH=src python3 scripts/dev/ring_trace.py OUT_DIR [N]     (CASES=rung[:kernel],...: scripts/dev/cases.py)
    python3 scripts/dev/ring_trace.py --read FILE.npz ...           (the summary again, from saved stamps)
"""

import dataclasses
import os
import sys

import numpy as np
from cases import cases, rung_of, square_inputs

CTAS, KTS, EVENTS = 4, 512, 10  # TP_TRACE_CTAS, TP_TRACE_KT, TP_TRACE_EVENTS
FREE, ISSUED, READY, GOT, MMA, RELEASED = range(6)  # + 4 x consumer for READY .. RELEASED
# CASES=rung[:kernel],... picks others (scripts/dev/cases.py); the ring is stamped in the plain and flushed bodies only
CASES = cases([("wgmma_fp8_persistent", None), ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144_cluster"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n144_cluster_relay"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_n192_cluster_ownb"),
               ("wgmma_bf16_tma_store", None), ("wgmma_bf16_tma_store", "mm_wgmma_bf16_tma_store_cluster_ownb")])


def _med(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(np.median(x)) if x.size else float("nan")


def summary(ev: np.ndarray, clocks: np.ndarray, stages: int, kt_per_tile: int) -> list[str]:
    """ev: (CTAS, KTS, EVENTS) SM clocks (0: not stamped); clocks: (CTAS, 5) start ns, start clock, end ns, end
    clock, SM. Times in ns of each block's own clock."""
    lines = []
    got_ns = {}
    for b in range(ev.shape[0]):
        e = ev[b].astype(np.float64)
        ghz = (clocks[b, 3] - clocks[b, 1]) / max(1, clocks[b, 2] - clocks[b, 0])
        n = int(np.max(np.nonzero(np.all(e[:, [RELEASED, GOT, GOT + 4]] > 0, axis=1))[0], initial=-1)) + 1
        if n <= kt_per_tile + stages + 1:
            lines.append(f"block {b}: {n} k-tiles stamped, too few")
            continue
        lo = kt_per_tile  # the first tile fills the ring from empty: left out
        r = slice(lo, n - stages)
        ns = lambda x: x / ghz  # noqa: E731
        per = np.diff(e[lo:n, GOT]) / ghz
        parts = [f"block {b} (SM {int(clocks[b, 4])}, {ghz:.2f} GHz, {n} k-tiles): k-tile {_med(per):.0f} ns"]
        for c in range(2):
            o = 4 * c
            wait = ns(e[r, GOT + o] - e[r, READY + o])
            mma_to_rel = ns(e[r, RELEASED + o] - e[r, MMA + o])
            got_to_mma = ns(e[r, MMA + o] - e[r, GOT + o])
            parts.append(f"c{c}: waits for data {_med(wait):.0f} ns (mean {np.mean(wait):.0f}, "
                         f"{np.mean(wait > 100):.0%} of k-tiles > 100 ns), got→issued {_med(got_to_mma):.0f}, "
                         f"issued→released {_med(mma_to_rel):.0f}")
        idx = np.arange(r.start, r.stop)
        last_rel = np.maximum(e[idx, RELEASED], e[idx, RELEASED + 4])
        refill = ns(e[idx + stages, FREE] - last_rel)
        flight = ns(e[idx, GOT] - e[idx, ISSUED])
        late = e[idx, READY] > e[idx, ISSUED]
        lead = ns(e[idx, READY] - e[idx, ISSUED])
        parts.append(f"producer: slot free {_med(refill):.0f} ns after the later local release (p90 "
                     f"{np.percentile(refill, 90):.0f}); issue → consumer 0 has it {_med(flight):.0f} ns; issued "
                     f"{_med(lead):.0f} ns before consumer 0 asked ({np.mean(~late):.0%} of k-tiles issued after)")
        bounds = np.arange(kt_per_tile, n - 1, kt_per_tile)
        if bounds.size:
            epi = [ns(e[bounds, READY + 4 * c] - e[bounds - 1, RELEASED + 4 * c]) for c in range(2)]
            parts.append(f"epilogue (last release → next tile's first wait): c0 {_med(epi[0]):.0f} ns, "
                         f"c1 {_med(epi[1]):.0f} ns over {bounds.size} tiles; a tile's k-tiles "
                         f"{_med(per) * kt_per_tile / 1000:.1f} µs")
        lines.append("\n  ".join(parts))
        got_ns[b] = (clocks[b, 0] + (e[:n, GOT] - clocks[b, 1]) / ghz, n)
    for b0, b1 in ((0, 1), (2, 3)):
        if b0 in got_ns and b1 in got_ns:
            n = min(got_ns[b0][1], got_ns[b1][1])
            lag = got_ns[b1][0][kt_per_tile:n] - got_ns[b0][0][kt_per_tile:n]
            lines.append(f"blocks {b0}/{b1}: block {b1} has k-tile it {_med(lag):.0f} ns after block {b0} (p10 "
                         f"{np.percentile(lag, 10):.0f}, p90 {np.percentile(lag, 90):.0f}; globaltimer alignment)")
    return lines


def main(out: str, n: int) -> None:
    from rooflab.cuda.compile import _module
    from rooflab.cuda.gpu import cupy
    from rooflab.cuda.timing import time_launches
    from rooflab.measure.gemm import prepare
    from rooflab.model.check import operands

    cp = cupy()
    os.makedirs(out, exist_ok=True)
    a0, b0, c = square_inputs(cp, n)
    for name, kernel in CASES:
        r = rung_of(name, kernel)
        a, b = operands(cp, a0, b0, r.inputs)
        ms = []
        for opts in (r.options, (*r.options, "-DTP_TRACE")):
            launch, _ = prepare(dataclasses.replace(r, options=tuple(opts)), n, n, n)
            ms.append(time_launches(lambda: launch(a, b, c), label=name, reps=10, warmup=2).median_ms)
        mod = _module(r.source, (), tuple(opts))
        tr = cp.ndarray((CTAS, KTS, EVENTS), dtype=cp.int64, memptr=mod.get_global("tp_trace"))
        ck = cp.ndarray((CTAS, 5), dtype=cp.int64, memptr=mod.get_global("tp_trace_clock"))
        tr[...] = 0
        launch(a, b, c)
        cp.cuda.get_current_stream().synchronize()
        ev, clocks = tr.get(), ck.get()
        stages, bk = _ring_of(r.kernel)
        np.savez(os.path.join(out, f"{r.kernel}.npz"), ev=ev, clocks=clocks, stages=stages, kt=-(-n // bk), n=n)
        print(f"{n} {r.kernel}: {ms[0]:.4f} ms, traced {ms[1]:.4f} ms")
        print("  " + "\n  ".join(summary(ev, clocks, stages, -(-n // bk))), flush=True)


def _ring_of(kernel: str) -> tuple[int, int]:
    """The ring depth and k per stage of a kernel, read from its body<...> instance in the rung's source."""
    import re

    from rooflab.cuda.compile import read_source

    for src, bk in (("rungs/wgmma_fp8.cu", 128), ("rungs/wgmma_bf16_tma.cu", 64)):
        text = read_source(src)
        m = re.search(rf"\n{kernel}\(.*?body<(.*?)>\(", text, re.S)
        if m:
            args = [x.strip() for x in re.sub(r"<[^<>]*>", "", m.group(1)).split(",")]
            return int(args[2]), bk
    raise SystemExit(f"{kernel}: no tma_persistent::body instance found")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--read"]:
        for f in sys.argv[2:]:
            d = np.load(f)
            print(f)
            print("  " + "\n  ".join(summary(d["ev"], d["clocks"], int(d["stages"]), int(d["kt"]))))
    else:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8192)
