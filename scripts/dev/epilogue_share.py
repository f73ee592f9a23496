"""The C store's share of each persistent TMA rung's time: every kernel timed as it is and again built with
-DTMA_SKIP_C_STORE (include/tma_persistent.cuh leaves C unwritten), at 4096 and 8192. A diagnostic, never a
rung: the second kernel computes nothing anyone reads. SKIP=TP_SKIP_PROMOTION measures the FP32 adds of the
accurate accumulation instead (each k-tile's partial left unadded: C stays zero); SKIP=TP_IDLE_WAIT times the cluster
kernels with the producer warpgroup's idle threads kept waiting at the closing cluster barrier, as they once were
(the "share" is then 1 - waiting / leaving: negative by what leaving early saves).

    PYTHONPATH=src python3 scripts/dev/epilogue_share.py [N ...]
"""

import dataclasses
import os
import sys

from cases import cases, rung_of, square_inputs

SKIP = os.environ.get("SKIP", "TMA_SKIP_C_STORE")
# CASES=rung[:kernel],... picks others (scripts/dev/cases.py)
CASES = cases([("wgmma_bf16_tma_store", None), ("wgmma_tf32_tma", None), ("wgmma_tf32_swap", None),
               ("wgmma_3xtf32_tma", None), ("wgmma_3xtf32_swap", None), ("wgmma_fp8_persistent", None),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_overlap"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_c4"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_defer"),
               ("wgmma_fp8_persistent", "mm_wgmma_fp8_persistent_direct"),
               ("wgmma_3xtf32_tma", "mm_wgmma_3xtf32_tma_defer")])


def main(sizes: list[int]) -> None:
    from rooflab.cuda.gpu import cupy
    from rooflab.cuda.timing import time_launches
    from rooflab.measure.gemm import prepare
    from rooflab.model.check import operands

    cp = cupy()
    for n in sizes:
        a0, b0, c = square_inputs(cp, n)
        for name, kernel in CASES:
            r = rung_of(name, kernel)
            a, b = operands(cp, a0, b0, r.inputs)
            ms = []
            for opts in (r.options, (*r.options, f"-D{SKIP}")):
                launch, _ = prepare(dataclasses.replace(r, options=tuple(opts)), n, n, n)
                ms.append(time_launches(lambda: launch(a, b, c), label=name, reps=20, warmup=2).median_ms)
            print(f"{n} {r.kernel:42s} with C {ms[0]:.4f} ms  without {ms[1]:.4f} ms  "
                  f"{SKIP} share {1 - ms[1] / ms[0]:.1%}", flush=True)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [4096, 8192])
