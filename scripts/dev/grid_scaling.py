"""What bounds a persistent kernel: each kernel run on fewer blocks than the GPU has SMs (its grid function asked
for a GPU of G SMs), timed at N. A block's time per round of tiles that stays the same as blocks are taken away
is bound inside the SM (its issue, its pipes, its own port); one that falls is bound by something the SMs share
(the L2's bandwidth, the power limit). C is compared with the full grid's, bit for bit. A diagnostic, never a rung.

    PYTHONPATH=src python3 scripts/dev/grid_scaling.py [N] [G ...]     (CASES=rung[:kernel],...: scripts/dev/cases.py)
"""

import dataclasses
import sys

from cases import cases, rung_of, square_inputs

CASES = cases([("wgmma_bf16_tma_store", None), ("wgmma_fp8_persistent", None), ("wgmma_bf16_cluster", None)])


def main(n: int, sms: list[int]) -> None:
    from rooflab.cuda.gpu import cupy
    from rooflab.cuda.timing import time_launches
    from rooflab.measure.gemm import prepare
    from rooflab.model.check import operands

    cp = cupy()
    a0, b0, _ = square_inputs(cp, n)
    for name, kernel in CASES:
        r = rung_of(name, kernel)
        a, b = operands(cp, a0, b0, r.inputs)
        full = r.grid(n, n, n, sms=132)
        cluster = r.grid(1, 1, 1, sms=132)[0]
        tiles = r.grid(n, n, n, sms=10**9)[0] // cluster  # cluster tiles (every one its own cluster)
        ref = None
        for g in sms:
            grid = r.grid(n, n, n, sms=g)
            rr = dataclasses.replace(r, grid=lambda m, nn, k, sms, f=r.grid, g=g: f(m, nn, k, sms=g))
            launch, _ = prepare(rr, n, n, n)
            c = cp.full((n, n), cp.nan, dtype=cp.float32)
            launch(a, b, c)
            same = "" if ref is None else ("same C" if bool(cp.array_equal(c, ref)) else "C DIFFERS")
            ref = c if ref is None else ref
            ms = time_launches(lambda: launch(a, b, c), label=name, reps=10, warmup=2).median_ms
            rounds = -(-tiles // (grid[0] // cluster))
            print(f"{n} {r.kernel:44s} blocks {grid[0]:3d} (full {full[0]}) rounds {rounds:3d}  {ms:.4f} ms  "
                  f"{1000 * ms / rounds:7.2f} µs a round  {same}", flush=True)


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(args[0] if args else 8192, args[1:] or [132, 96, 66, 33])
