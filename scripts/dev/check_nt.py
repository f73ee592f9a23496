"""GPU check of the staged TF32 / 3xTF32 wgmma rungs, one process, through the harness's
own launch path (rooflab.measure.gemm.prepare: pre-pass + main kernel, as `rooflab gemm` runs them).

Usage (repo root): PYTHONPATH=src python3 scripts/dev/check_nt.py [--small] [--only a,b] [--sizes 4096,8192]

For every variant of wgmma_tf32 and wgmma_3xtf32: correctness at odd shapes and 4096 (guarded C,
NaN-poisoned; normwise error against the float64 product of the inputs rounded as the rung reads
them, and against the FP32 inputs; the rung's own tolerance; determinism: 2 more runs + 4
concurrent replicas on their own streams, bitwise equal), then CUDA-event timing (1 warm-up, 20
reps, median) beside cuBLAS SGEMM and cuBLAS TF32 measured in the same process; the pre-pass and
the main kernel are also timed apart. Ends with a GOALS table.
--small: every variant once at 67x45x70 and 45x33x70 (what compute-sanitizer runs).
A variant that fails to compile or launch prints FAILED and the script goes on.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

import numpy as np

ODD = [(1, 1, 1), (67, 67, 67), (45, 33, 70), (1000, 777, 1234), (129, 257, 96)]
SMALL = [(67, 45, 70), (45, 33, 70)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--err8192", action="store_true", help="also the error of each rung's default at 8192")
    ap.add_argument("--profile", default="", help="launch this kernel twice at --n (for ncu), nothing else")
    ap.add_argument("--n", type=int, default=4096)
    args = ap.parse_args()

    from rooflab.cuda import cublas
    from rooflab.cuda.gpu import cupy
    from rooflab.measure.gemm import prepare
    from rooflab.measure.guards import Guarded
    from rooflab.model.check import round_inputs
    from rooflab.rungs.tensor import WGMMA_3XTF32, WGMMA_TF32

    cp = cupy()
    t0 = time.time()
    variants = [(r, r.with_variant(v), v.label) for r in (WGMMA_TF32, WGMMA_3XTF32) for v in r.variants]
    if args.only:
        keep = set(args.only.split(","))
        variants = [x for x in variants if x[1].kernel in keep]

    refs: dict = {}

    def problem(m, n, k, seed=0):
        key = (m, n, k)
        if key not in refs:
            refs.clear()
            rs = cp.random.RandomState(seed)
            a = rs.uniform(-1, 1, (m, k), dtype=cp.float32)
            b = rs.uniform(-1, 1, (k, n), dtype=cp.float32)
            f64 = cp.float64
            r32 = a.astype(f64) @ b.astype(f64)
            rtf = round_inputs(cp, a, "tf32").astype(f64) @ round_inputs(cp, b, "tf32").astype(f64)
            refs[key] = (a, b, {"fp32": r32, "tf32": rtf})
        return refs[key]

    def nw(c, ref):
        c64 = c.astype(cp.float64)
        if not bool(cp.all(cp.isfinite(c64))):
            return float("inf")
        return float(cp.linalg.norm((c64 - ref).ravel()) / cp.linalg.norm(ref.ravel()))

    def check(rung, m, n, k, det=True):
        a, b, ref = problem(m, n, k)
        launch, info = prepare(rung, m, n, k)
        out = Guarded((m, n))
        out.poison()
        launch(a, b, out.array)
        cp.cuda.Device().synchronize()
        touched = out.touched()
        e_own, e32 = nw(out.array, ref[rung.rounding]), nw(out.array, ref["fp32"])
        differ = None
        if det:
            first = out.array.copy()
            differ = 0
            out.poison()
            launch(a, b, out.array)
            cp.cuda.Device().synchronize()
            differ += int(cp.count_nonzero(first.view(cp.uint32) != out.array.view(cp.uint32))) + out.touched()
            reps = [Guarded((m, n)) for _ in range(4)]
            streams = [cp.cuda.Stream(non_blocking=True) for _ in reps]
            for o in reps:
                o.poison()
            cp.cuda.Device().synchronize()
            for o, s in zip(reps, streams):
                with s:
                    launch(a, b, o.array)
            cp.cuda.Device().synchronize()
            for o in reps:
                differ += int(cp.count_nonzero(first.view(cp.uint32) != o.array.view(cp.uint32))) + o.touched()
        tol = rung.normwise_tolerance(k)
        ok = touched == 0 and e_own <= tol and (differ in (None, 0))
        print(f"  {rung.kernel:24s} {m}x{n}x{k:<6d} err(own) {e_own:9.2e} err(fp32) {e32:9.2e} tol "
              f"{tol:.1e} guard {touched} det {differ} regs {info.get('registers')} "
              f"local {info.get('local_bytes')} {'PASS' if ok else 'FAIL'}", flush=True)
        return ok, e_own, e32

    def time_ms(fn, reps=20):
        fn()
        cp.cuda.Device().synchronize()
        ts = []
        for _ in range(reps):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(cp.cuda.get_elapsed_time(s, e))
        return float(np.median(ts))

    if args.profile:
        rung = next(r for _b, r, _l in variants if r.kernel == args.profile)
        n = args.n
        rs = cp.random.RandomState(1)
        a = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        b = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        c = cp.empty((n, n), dtype=cp.float32)
        launch, _ = prepare(rung, n, n, n)
        for _ in range(2):
            launch(a, b, c)
        cp.cuda.Device().synchronize()
        return 0
    print(f"device {cp.cuda.runtime.getDeviceProperties(0)['name']}; {len(variants)} variants", flush=True)
    shapes = SMALL if args.small else ODD + [(4096, 4096, 4096)]
    results: dict = {}
    for rung_base, rung, label in variants:
        res = results.setdefault(rung.kernel, {"rung": rung_base.name, "label": label, "pass": True})
        print(f"== {rung.kernel} ({rung_base.name}: {label})", flush=True)
        for (m, n, k) in shapes:
            try:
                ok, e_own, e32 = check(rung, m, n, k, det=not args.small or m == 67)
                res["pass"] &= ok
                if (m, n, k) == (4096, 4096, 4096):
                    res["err4096"], res["err4096_fp32"] = e_own, e32
            except Exception as exc:  # noqa: BLE001
                res["pass"] = False
                print(f"  {rung.kernel} {m}x{n}x{k}: FAILED {exc.__class__.__name__}: {str(exc)[:400]}", flush=True)
                traceback.print_exc(limit=3)
                break
    if args.small:
        print(f"all passed: {all(r['pass'] for r in results.values())}; {time.time() - t0:.0f} s")
        return 0 if all(r["pass"] for r in results.values()) else 1

    peer_err = {}
    for name, make, rnd in (("sgemm", cublas.sgemm, "fp32"), ("tf32", cublas.gemm_tf32, "tf32")):
        a, b, ref = problem(4096, 4096, 4096)
        c = cp.empty((4096, 4096), dtype=cp.float32)
        make(4096, 4096, 4096)(a, b, c)
        cp.cuda.Device().synchronize()
        peer_err[name] = (nw(c, ref[rnd]), nw(c, ref["fp32"]))
        print(f"cuBLAS {name}: err(own) {peer_err[name][0]:.2e} err(fp32) {peer_err[name][1]:.2e}")
    if args.err8192:
        for r in (WGMMA_TF32, WGMMA_3XTF32):
            try:
                check(r, 8192, 8192, 8192, det=False)
            except Exception as exc:  # noqa: BLE001
                print(f"  8192 error check of {r.name}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
    refs.clear()
    cp.get_default_memory_pool().free_all_blocks()

    sizes = [int(x) for x in args.sizes.split(",")]
    peer_ms: dict = {}
    for n in sizes:
        rs = cp.random.RandomState(1)
        a = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        b = rs.uniform(-1, 1, (n, n), dtype=cp.float32)
        c = cp.empty((n, n), dtype=cp.float32)
        for name, make in (("sgemm", cublas.sgemm), ("tf32", cublas.gemm_tf32)):
            launch = make(n, n, n)
            peer_ms[(name, n)] = time_ms(lambda: launch(a, b, c))  # noqa: B023
            print(f"cuBLAS {name:6s} {n}: {peer_ms[(name, n)]:.3f} ms {2 * n**3 / peer_ms[(name, n)] / 1e9:7.1f} "
                  f"TFLOP/s", flush=True)
        for _base, rung, _label in variants:
            res = results[rung.kernel]
            try:
                launch, _ = prepare(rung, n, n, n)
                ms = time_ms(lambda: launch(a, b, c))  # noqa: B023
                # the two parts apart: the pre-pass alone, the main kernel on staged operands
                from rooflab.cuda.staging import stager
                stage, kp = stager(rung.source, rung.options, rung.staging, n, n, n, rung.name)
                pre = time_ms(lambda: stage(a, b))  # noqa: B023
                a2, b2 = stage(a, b)
                from rooflab.cuda.compile import get_kernel
                kern = get_kernel(rung.source, rung.kernel, options=rung.options)
                kern.allow_shared(rung.shared_mem)
                grid = rung.grid(n, n, n)
                main_ms = time_ms(lambda: kern.launch(grid, rung.block, (a2, b2, c, np.int32(n), np.int32(n),  # noqa: B023
                                                                           np.int32(kp)), shared_mem=rung.shared_mem))
                peer = "sgemm" if rung.precision == "3xtf32" else "tf32"
                res[n] = ms
                print(f"  {rung.kernel:24s} {n}: {ms:.3f} ms {2 * n**3 / ms / 1e9:7.1f} TFLOP/s = "
                      f"{peer_ms[(peer, n)] / ms:.3f}x cuBLAS {peer}; pre-pass {pre:.3f} ms, main {main_ms:.3f} ms "
                      f"({2 * n**3 / main_ms / 1e9:.1f} TFLOP/s)", flush=True)
                a2 = b2 = None
            except Exception as exc:  # noqa: BLE001
                print(f"  {rung.kernel} {n}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}", flush=True)
        a = b = c = None
        cp.get_default_memory_pool().free_all_blocks()

    print("\n== GOALS")
    print(f"{'kernel':24s} {'rung':13s} {'pass':5s} {'err4096':>9s} {'4096 x':>7s} {'8192 x':>7s}  goal")
    for kname, r in results.items():
        peer = "sgemm" if r["rung"] == "wgmma_3xtf32" else "tf32"
        x = {n: (peer_ms.get((peer, n)) / r[n] if n in r and peer_ms.get((peer, n)) else float("nan")) for n in (4096, 8192)}
        if r["rung"] == "wgmma_3xtf32":
            met = r["pass"] and x[4096] >= 1.5 and r.get("err4096", 1) <= peer_err["sgemm"][1]
            goal = f">=1.5x SGEMM @4096, err <= {peer_err['sgemm'][1]:.2e}: {'MET' if met else 'NOT MET'}"
        else:
            met = r["pass"] and x[8192] >= 0.9
            goal = f">=0.90x cuBLAS TF32 @8192: {'MET' if met else 'NOT MET'}"
        print(f"{kname:24s} {r['rung']:13s} {str(r['pass']):5s} {r.get('err4096', float('nan')):9.2e} "
              f"{x[4096]:7.3f} {x[8192]:7.3f}  {goal}")
    print(f"total {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
