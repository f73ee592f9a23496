"""The process Nsight Compute profiles: sets one kernel up, then launches it exactly
once between cudaProfilerStart and cudaProfilerStop (ncu runs with
--profile-from-start off), so input generation and references stay out of the profile.

    python -m rooflab.measure.profile_target copy|copy_scalar|fma|l2_read|read_stream|<gemm rung>
        [--m M] [--n 4096] [--k K]
        [--size FLOATS] [--spec user.json]

GEMM labels get the M, N and K the harness timed (M and K default to N), so the profile describes
the timed run.
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
    from rooflab import ceilings  # noqa: PLC0415
    from rooflab.cuda.device import detect  # noqa: PLC0415
    from rooflab.cuda.gpu import cupy  # noqa: PLC0415

    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--m", type=int, default=None)
    ap.add_argument("--k", type=int, default=None)
    ap.add_argument("--size", type=int, default=256 * 2**20)
    ap.add_argument("--variant", default=None, help="a rung's variant, by its kernel's entry name (as `rooflab tune` lists)")
    ap.add_argument("--spec", default=None, help="a user's kernel, as rooflab.measure.profiling.user_spec wrote it")
    a = ap.parse_args(argv)
    m, n, k = a.m or a.n, a.n, a.k or a.n
    cp = cupy()
    dev = detect()
    if a.label in ("copy", "copy_scalar"):  # at the geometry the copy records give Nsight Compute
        from rooflab.measure.streams import launcher  # noqa: PLC0415

        entry = ceilings.COPY_FLOAT4 if a.label == "copy" else ceilings.COPY_SCALAR
        src = cp.random.RandomState(7).uniform(-1, 1, a.size, dtype=cp.float32)
        out = cp.empty_like(src)
        grid = entry.profile_grid(a.size, dev.sm_count)
        _profiled(cp, launcher(entry, (src, out, np.uint64(a.size)), grid=grid), a.label)
    elif a.label == "l2_read":  # the memory section's L2 read over a footprint of --size bytes
        _l2_read(cp, dev, a.size)
    elif a.label == "read_stream":  # the bandwidth section's read-only pass over --size floats
        from rooflab.measure.streams import launcher  # noqa: PLC0415

        rd = ceilings.READ
        src = cp.random.RandomState(7).uniform(-1, 1, a.size, dtype=cp.float32)
        grid = rd.grid(a.size)
        partial = cp.empty(grid * rd.block, dtype=cp.float32)
        _profiled(cp, launcher(rd, (src, partial, np.uint64(a.size)), grid=grid), a.label)
        print(f"bytes={rd.bytes(a.size):.0f}")
    elif a.label == "fma":  # the FMA record's profiled launch
        from rooflab.measure import flops  # noqa: PLC0415

        rec = ceilings.FMA
        p = rec.profile
        grid = dev.sm_count * p.blocks_per_sm
        out = cp.empty(grid * p.block, dtype=cp.float32)
        _profiled(cp, flops.launcher(p.acc, grid, p.block, p.iters, out), "fma")
        print(f"flops={rec.flops(grid * p.block, p.iters, p.acc):.0f}")
    elif a.spec:
        _user(cp, a.label, (m, n, k), a.spec, dev)
    else:
        from rooflab import rungs  # noqa: PLC0415
        from rooflab.measure.gemm import prepare  # noqa: PLC0415

        if rungs.get(a.label) is None:
            print(f"unknown profile target {a.label}", file=sys.stderr)
            return 2
        A, B, C = _gemm_operands(cp, m, n, k)
        rung = rungs.get(a.label)
        if a.variant:
            chosen = [v for v in rung.variants if v.kernel == a.variant]
            if not chosen:
                print(f"{a.label} has no variant {a.variant}", file=sys.stderr)
                return 2
            rung = rung.with_variant(chosen[0])
        from rooflab.model.check import operands  # noqa: PLC0415

        A, B = operands(cp, A, B, rung.inputs)  # what the rung reads, as the harness gives it
        launch, _ = prepare(rung, m, n, k)
        _profiled(cp, lambda: launch(A, B, C), a.label)
    return 0


def _l2_read(cp, dev, footprint: int) -> None:
    """One launch of the L2 sweep's kernel at `footprint` bytes, about as long as the sweep's."""
    from rooflab import ceilings  # noqa: PLC0415
    from rooflab.measure import memory  # noqa: PLC0415

    rec = ceilings.L2
    grid = ceilings.resident_wave(dev.sm_count, memory.threads_per_sm(dev), rec.block)
    threads = grid * rec.block
    n4 = footprint // 16
    buf = cp.random.RandomState(11).uniform(0.0, 1.0, footprint // 4, dtype=cp.float32)
    partial = cp.empty(threads, dtype=cp.float32)
    walk = memory.l2_walk(rec.read, buf, partial, grid)

    def make(iters):
        return walk(n4, threads % n4, iters)

    iters = memory._fit_iters(make, rec.read, memory.MemoryConfig().target_ms)
    _profiled(cp, make(iters), rec.read)
    print(f"bytes={rec.read_bytes(threads, iters):.0f}")


def _gemm_operands(cp, m: int, n: int, k: int):
    rs = cp.random.RandomState(11)
    A = rs.uniform(-1, 1, (m, k), dtype=cp.float32)
    B = rs.uniform(-1, 1, (k, n), dtype=cp.float32)
    return A, B, cp.empty((m, n), dtype=cp.float32)


def _user(cp, label: str, shape: tuple[int, int, int], spec_path: str, dev) -> None:
    """A user's kernel, rebuilt from its spec: a GEMM at (M, N, K), or another op at its size."""
    import json  # noqa: PLC0415

    spec = json.loads(open(spec_path, encoding="utf-8").read())
    if spec.get("op"):
        _user_op(cp, label, spec)
        return
    m, n, k = shape
    A, B, C = _gemm_operands(cp, m, n, k)
    if "callable" in spec:
        from rooflab.targets import Callable, load_callable  # noqa: PLC0415

        fn = Callable(load_callable(spec["callable"]), framework=spec["framework"]).wrap()
        _profiled(cp, lambda: fn(A, B, C), label)
        return
    from rooflab.cuda.compile import get_kernel  # noqa: PLC0415

    kern = get_kernel(spec["source"], spec["kernel"], options=tuple(spec["options"]), label=label)
    kern.allow_shared(spec["shared_mem"])
    args = (A, B, C, np.int32(m), np.int32(n), np.int32(k))
    _profiled(cp, lambda: kern.launch(spec["grid"], spec["block"], args, shared_mem=spec["shared_mem"]), label)


def _user_op(cp, label: str, spec: dict) -> None:
    """A stream op (rooflab.ops.stream) kernel or callable, launched as the bench harness does."""
    from rooflab.measure.bench import _launcher  # noqa: PLC0415
    from rooflab.ops.stream import stream  # noqa: PLC0415
    from rooflab.targets import Callable, CudaKernel, load_callable  # noqa: PLC0415

    op = stream(spec["expr"], spec.get("flops_per_element", 0.0))
    n = tuple(spec["n"])
    if "callable" in spec:
        target = Callable(load_callable(spec["callable"]), framework=spec["framework"])
    else:
        target = CudaKernel(spec["source"], spec["kernel"], block=tuple(spec["block"]), grid=tuple(spec["grid"]),
                            options=tuple(spec["options"]), shared_mem=spec["shared_mem"])
    launch, _ = _launcher(target, op, n)
    ins = op.inputs(cp, n, 11)
    out = cp.empty(tuple(op.out_shape(n)), dtype=cp.float32)
    _profiled(cp, lambda: launch(ins, out), label)


if __name__ == "__main__":
    sys.exit(main())
