"""One GPU call's worth of the TF32 push (issue 10: own TF32 >= 0.90x cuBLAS TF32 at N=8192).

Usage (repo root, on the GPU): PYTHONPATH=src python3 scripts/dev/check_tf32_push.py [--n 8192]

1. The K-major B^T copy alone (it is timed inside every TF32 launch): Triton's transpose kernel at
   a few tile sizes and warps, CuPy's ascontiguousarray(b.T), and a plain copy for the roof, in GB/s
   (read + write).
2. Every TF32 and BF16 Triton variant with "persist" beside the record's default, each through the
   harness's own prepare() and timer, interleaved with its cuBLAS peer for ROUNDS rounds (kernel,
   cuBLAS, kernel, ...): medians of 20 reps each, the ratio of medians per round, and a normwise
   check at N against a GPU float64 product of the inputs as the rung rounds them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

import numpy as np  # noqa: E402

ROUNDS = 3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    args = ap.parse_args()
    import cupy as cp
    import torch

    from rooflab import rungs
    from rooflab.cuda import triton_kernels
    from rooflab.cuda.timing import time_kernel
    from rooflab.measure.gemm import prepare
    from rooflab.model.check import bf16_bits, round_inputs

    n = args.n
    t0 = time.time()
    rng = cp.random.default_rng(3)
    a = rng.uniform(-1, 1, (n, n), dtype=cp.float32)
    b = rng.uniform(-1, 1, (n, n), dtype=cp.float32)
    c = cp.empty((n, n), dtype=cp.float32)

    # 1. the transpose
    print(f"== B^T copy, {n}x{n} FP32 ({2 * n * n * 4 / 1e6:.0f} MB moved)")
    bt = cp.empty_like(b)
    tb, tbt = torch.from_dlpack(b), torch.from_dlpack(bt)
    moved = 2 * n * n * 4

    def show(label, fn):
        t = time_kernel(fn, label=label, reps=20)
        print(f"  {label:34s} {t.median_ms:7.4f} ms  {moved / t.median_ms / 1e6:7.0f} GB/s")

    show("copy (roof)", lambda: cp.copyto(bt, b))
    show("cupy ascontiguousarray(b.T)", lambda: cp.ascontiguousarray(b.T))
    for blk, warps in ((32, 4), (64, 4), (64, 8), (128, 8), (128, 16)):
        def tr(blk=blk, warps=warps):
            ptr = cp.cuda.get_current_stream().ptr
            # the harness glue's mapping (rooflab.cuda.triton_gemm); run 1, through ExternalStream(0), timed an
            # impossible 15 TB/s, cause not established
            with torch.cuda.stream(torch.cuda.default_stream() if ptr == 0 else torch.cuda.ExternalStream(ptr)):
                triton_kernels.transpose[(triton_cdiv(n, blk), triton_cdiv(n, blk))](tb, tbt, n, n, BLOCK=blk,
                                                                                      num_warps=warps)
        try:
            show(f"triton transpose BLOCK={blk} w{warps}", tr)
            ok = bool(cp.array_equal(bt, b.T))
            print(f"    equal to b.T: {ok}")
        except Exception as exc:  # noqa: BLE001
            print(f"  triton transpose BLOCK={blk} w{warps}: FAILED {type(exc).__name__}: {str(exc)[:200]}")

    # 2. variants vs peers, interleaved
    by = rungs.by_name()
    ab = {"fp32": (a, b), "bf16": None}
    ab["bf16"] = (bf16_bits(cp, a), bf16_bits(cp, b))
    for name, peer in (("triton_tf32", "cublas_tf32"), ("triton_bf16", "cublas_bf16")):
        rung = by[name]
        inputs = "bf16" if rung.inputs == "bf16" else "fp32"
        x, y = ab[inputs]
        ra = round_inputs(cp, a, rung.rounding).astype(cp.float64)
        rb = round_inputs(cp, b, rung.rounding).astype(cp.float64)
        ref = ra @ rb
        del ra, rb
        peer_launch, _ = prepare(by[peer], n, n, n)
        cands = [v for v in rung.variants if "persist" in v.label or v is rung.variants[0]]
        print(f"== {name} vs {peer} at {n} ({time.time() - t0:.0f} s)")
        for v in cands:
            try:
                launch, _ = prepare(rung.with_variant(v), n, n, n)
                c.fill(np.nan)
                launch(x, y, c)
                cp.cuda.Device().synchronize()
                err = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
                ratios, ours, theirs = [], [], []
                for _ in range(args.rounds):
                    t1 = time_kernel(lambda: launch(x, y, c), label=v.label, reps=20).median_ms
                    t2 = time_kernel(lambda: peer_launch(x, y, c), label=peer, reps=20).median_ms
                    ours.append(t1)
                    theirs.append(t2)
                    ratios.append(t2 / t1)
                print(f"  {v.label:36s} err {err:.2e}  ours {statistics.median(ours):.3f} ms  "
                      f"peer {statistics.median(theirs):.3f} ms  ratio/round "
                      + " ".join(f"{r:.3f}" for r in ratios) + f"  median {statistics.median(ratios):.3f}")
            except Exception as exc:  # noqa: BLE001
                print(f"  {v.label:36s} FAILED {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        del ref
    print(f"done in {time.time() - t0:.0f} s")


def triton_cdiv(x: int, y: int) -> int:
    return -(-x // y)


if __name__ == "__main__":
    main()
