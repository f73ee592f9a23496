"""The process Nsight Compute profiles: sets one kernel up, then launches it exactly
once between cudaProfilerStart and cudaProfilerStop (ncu runs with
--profile-from-start off), so input generation and references stay out of the profile.

    python -m rooflab.measure.profile_target copy|copy_scalar|fma|<gemm rung> [--n 4096] [--size FLOATS]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _profiled(cp, launch, label: str) -> None:
    from rooflab.cuda.gpu import synchronize  # noqa: PLC0415

    launch()  # warm-up and compile outside the profiled range
    synchronize(label)
    cp.cuda.runtime.profilerStart()
    launch()
    synchronize(label)
    cp.cuda.runtime.profilerStop()


def main(argv: list[str] | None = None) -> int:
    from rooflab.cuda.compile import get_kernel  # noqa: PLC0415
    from rooflab.cuda.device import detect  # noqa: PLC0415
    from rooflab.cuda.gpu import cupy  # noqa: PLC0415
    from rooflab.rungs.record import cdiv  # noqa: PLC0415

    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--size", type=int, default=256 * 2**20)
    ap.add_argument("--spec", default=None, help="a user's kernel, as rooflab.measure.profiling.user_spec wrote it")
    a = ap.parse_args(argv)
    cp = cupy()
    dev = detect()
    if a.label in ("copy", "copy_scalar"):
        src = cp.random.RandomState(7).uniform(-1, 1, a.size, dtype=cp.float32)
        out = cp.empty_like(src)
        if a.label == "copy":
            k, grid = get_kernel("ceilings/copy.cu", "copy_float4"), cdiv(cdiv(a.size, 4), 256)
        else:  # the seed's scalar grid-stride copy, 4 blocks of 256 per SM
            k, grid = get_kernel("ceilings/copy.cu", "copy_scalar"), dev.sm_count * 4
        _profiled(cp, lambda: k.launch((grid, 1, 1), (256, 1, 1), (src, out, np.uint64(a.size))), a.label)
    elif a.label == "fma":
        from rooflab.measure.flops import FMA_PER_CHAIN_PER_ITER, X, Y  # noqa: PLC0415

        grid, block, acc = dev.sm_count * 4, 256, 8
        iters = 4096
        out = cp.empty(grid * block, dtype=cp.float32)
        k = get_kernel("ceilings/fma.cu", f"fma_chain<{acc}>")
        _profiled(cp, lambda: k.launch((grid, 1, 1), (block, 1, 1), (out, np.int32(iters), X, Y)), "fma")
        print(f"flops={grid * block * iters * FMA_PER_CHAIN_PER_ITER * acc * 2}")
    elif a.spec:
        _user_gemm(cp, a.label, a.n, a.spec)
    else:
        from rooflab import rungs  # noqa: PLC0415
        from rooflab.measure.gemm import prepare  # noqa: PLC0415

        if rungs.get(a.label) is None:
            print(f"unknown profile target {a.label}", file=sys.stderr)
            return 2
        n = a.n
        rs = cp.random.RandomState(11)
        A = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        B = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        C = cp.empty((n, n), dtype=cp.float32)
        rung = rungs.get(a.label)
        if rung.inputs == "bf16":  # what a BF16 rung reads: the bit patterns, as the harness gives them
            from rooflab.model.check import bf16_bits  # noqa: PLC0415

            A, B = bf16_bits(cp, A), bf16_bits(cp, B)
        launch, _ = prepare(rung, n, n, n)
        _profiled(cp, lambda: launch(A, B, C), a.label)
    return 0


def _user_gemm(cp, label: str, n: int, spec_path: str) -> None:
    import json  # noqa: PLC0415

    spec = json.loads(open(spec_path, encoding="utf-8").read())
    rs = cp.random.RandomState(11)
    A = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
    B = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
    C = cp.empty((n, n), dtype=cp.float32)
    if "callable" in spec:
        from rooflab.targets import Callable, load_callable  # noqa: PLC0415

        fn = Callable(load_callable(spec["callable"]), framework=spec["framework"]).wrap()
        _profiled(cp, lambda: fn(A, B, C), label)
        return
    from rooflab.cuda.compile import get_kernel  # noqa: PLC0415

    k = get_kernel(spec["source"], spec["kernel"], options=tuple(spec["options"]), label=label)
    k.allow_shared(spec["shared_mem"])
    args = (A, B, C, np.int32(n), np.int32(n), np.int32(n))
    _profiled(cp, lambda: k.launch(spec["grid"], spec["block"], args, shared_mem=spec["shared_mem"]), label)


if __name__ == "__main__":
    sys.exit(main())
