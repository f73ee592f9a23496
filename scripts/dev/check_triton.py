"""Standalone check of the Triton rungs on a GPU (written for the H200): every configuration the
records declare (rooflab/rungs/triton.py), beside its cuBLAS peer.

Usage (repo root): PYTHONPATH=src python3 scripts/dev/check_triton.py [--quick] [--only PREC,...]

1. Compile every configuration in parallel worker processes (Triton's on-disk cache then serves the
   main process), at the specialisations the checks use: 1x1x1, odd shapes, sizes divisible by 16.
2. Per configuration, through the harness's own glue (rooflab.cuda.triton_gemm: CuPy arrays, CuPy's
   stream): guarded, NaN-poisoned launches at 1x1x1, 45x33x70, 1000x777x1234 (odd shapes first),
   then 4096 and 8192; normwise errors against float64 products of the FP32 inputs, of TF32 inputs
   rounded to nearest (cvt.rna) and truncated, and of BF16 inputs; two runs bitwise equal; CUDA-event
   timing (1 warm-up, 20 reps, median) at 4096 and 8192 beside the cuBLAS peer.
3. For the best configuration per precision: the harness's timer (rooflab.cuda.timing) against CUDA
   events around one synchronous launch on a non-default CuPy stream (a launch that landed on another
   stream would time as ~0 there), 8 concurrent replicas on their own streams bitwise equal, and the
   host time per launch of the glue.
A configuration that fails to compile or launch prints FAILED and the script goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[2] / "src"
sys.path.insert(0, str(SRC))

GUARD = 1024
SENTINEL = np.float32(-7.25e33)
ODD = [(1, 1, 1), (45, 33, 70), (1000, 777, 1234)]
BIG = [4096, 8192]
T0 = time.time()
BUDGET_S = 160  # no new configuration after this many seconds (the device call's limit is 240 s)


def configs(only: set[str] | None):
    from rooflab.rungs.triton import TRITON_RUNGS, parse

    out = []
    for rung in TRITON_RUNGS:
        for v in rung.variants:
            cfg = parse(v.config)
            if not only or cfg.precision in only:
                out.append((rung, cfg))
    first = {"bf16": 0, "tf32": 1, "3xtf32": 2, "fp32": 3}  # the acceptance lines first, in case time runs out
    return sorted(out, key=lambda rc: first[rc[1].precision])


# ----------------------------------------------------------------------------- 1. parallel compile
def worker(specs: list[str]) -> None:
    """Compile (by launching once) each configuration at each specialisation; print one JSON line each."""
    import torch

    from rooflab.cuda import triton_kernels
    from rooflab.rungs.triton import parse

    for spec in specs:
        cfg = parse(spec)
        dt = torch.bfloat16 if cfg.precision == "bf16" else torch.float32
        t = time.time()
        res = {"spec": spec, "ok": True, "error": None}
        try:
            for m, n, k in [(1, 1, 1), (45, 33, 70), (256, 256, 256)]:
                a = torch.ones((m, k), device="cuda", dtype=dt)
                b = torch.ones((k, n), device="cuda", dtype=dt)
                c = torch.empty((m, n), device="cuda", dtype=torch.float32)
                triton_kernels.matmul(a, b, c, cfg)
                torch.cuda.synchronize()
                if not bool(torch.all(c == k)):
                    res["ok"], res["error"] = False, f"wrong result at {m}x{n}x{k} (all-ones inputs)"
        except Exception as exc:  # noqa: BLE001
            res["ok"], res["error"] = False, f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:400]}"
        res["s"] = round(time.time() - t, 1)
        print("RESULT " + json.dumps(res), flush=True)


def precompile(specs: list[str], workers: int) -> dict[str, dict]:
    chunks = [specs[i::workers] for i in range(workers)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (str(SRC), os.environ.get("PYTHONPATH")) if x)}
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(ch)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for ch in chunks if ch]
    out: dict[str, dict] = {}
    for p in procs:
        try:
            so, se = p.communicate(timeout=max(10, 100 - (time.time() - T0)))
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            print(f"compile worker timed out; stderr tail: {se[-500:]}")
        for line in so.splitlines():
            if line.startswith("RESULT "):
                r = json.loads(line[7:])
                out[r["spec"]] = r
        if p.returncode not in (0, None, -9) and se.strip():
            print(f"compile worker exit {p.returncode}: {se[-800:]}")
    return out


# ----------------------------------------------------------------------------- helpers
def normwise(cp, c, ref):
    return float(cp.linalg.norm((c.astype(cp.float64) - ref).ravel()) / cp.linalg.norm(ref.ravel()))


class Problem:
    def __init__(self, cp, m, n, k, seed=0):
        from rooflab.model.check import bf16_bits, round_inputs

        rs = cp.random.RandomState(seed)
        self.m, self.n, self.k = m, n, k
        self.a = rs.uniform(-1, 1, (m, k), dtype=cp.float32)
        self.b = rs.uniform(-1, 1, (k, n), dtype=cp.float32)
        self.a16, self.b16 = bf16_bits(cp, self.a), bf16_bits(cp, self.b)
        f64 = cp.float64
        self.ref = {}
        for name in ("fp32", "tf32", "tf32_trunc", "bf16"):
            ra, rb = round_inputs(cp, self.a, name), round_inputs(cp, self.b, name)
            self.ref[name] = ra.astype(f64) @ rb.astype(f64)
        cp.cuda.Device().synchronize()

    def inputs(self, prec):
        return (self.a16, self.b16) if prec == "bf16" else (self.a, self.b)


def guarded(cp, m, n):
    buf = cp.full(m * n + 2 * GUARD, SENTINEL, dtype=cp.float32)
    buf[GUARD:GUARD + m * n] = cp.nan
    return buf, buf[GUARD:GUARD + m * n].reshape(m, n)


def guard_ok(cp, buf, m, n):
    g = cp.concatenate([buf[:GUARD], buf[GUARD + m * n:]])
    return bool(cp.all(g.view(cp.uint32) == SENTINEL.view(np.uint32)))


def time_ms(cp, fn, reps=20):
    """Median of event pairs around each launch, queued back to back as the harness does: a host sync
    per rep would count Triton's ~70-110 us of host launch overhead into every rep (the first run's
    4096 figures did: 0.29 ms for a 0.19 ms BF16 kernel)."""
    fn()
    cp.cuda.get_current_stream().synchronize()
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for s, e in events:
        s.record()
        fn()
        e.record()
    events[-1][1].synchronize()
    return float(np.median([cp.cuda.get_elapsed_time(s, e) for s, e in events]))


def own_ref(prec):
    return {"fp32": "fp32", "3xtf32": "fp32", "tf32": "tf32_trunc", "bf16": "bf16"}[prec]


def check(cp, launch, prob, prec):
    """-> dict: errors against every reference, guard, finite, deterministic."""
    m, n = prob.m, prob.n
    a, b = prob.inputs(prec)
    buf, c = guarded(cp, m, n)
    launch(a, b, c)
    cp.cuda.get_current_stream().synchronize()
    res = {"guard": guard_ok(cp, buf, m, n), "nan": int(cp.count_nonzero(~cp.isfinite(c)))}
    if res["nan"] == 0:
        for name, ref in prob.ref.items():
            res[name] = normwise(cp, c, ref)
    buf2, c2 = guarded(cp, m, n)
    launch(a, b, c2)
    cp.cuda.get_current_stream().synchronize()
    res["det"] = bool(cp.all(c.view(cp.uint32) == c2.view(cp.uint32)))
    return res




def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="time at 4096 only")
    ap.add_argument("--only", default="", help="precisions, e.g. bf16,tf32")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--precompile-only", action="store_true", help="fill Triton's cache in parallel, then stop")
    ap.add_argument("--verify", action="store_true",
                    help="timing and replica checks of each rung's configuration as the harness picks it")
    args = ap.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    sizes = [4096] if args.quick else BIG
    only = set(args.only.split(",")) if args.only else None
    todo = configs(only)
    if args.precompile_only:
        t = time.time()
        comp = precompile([f"{c.precision} {c.label}" for _, c in todo], args.workers)
        print(f"compiled {len(comp)} of {len(todo)} configurations in {time.time() - t:.0f} s")
        for s, r in comp.items():
            if not r["ok"]:
                print(f"  FAILED {s}: {r['error']}")
        return 0
    if args.verify:
        return verify(args.only)

    import cupy as cp
    import torch
    import triton

    from rooflab.cuda import cublas, triton_gemm
    from rooflab.cuda.device import detect
    from rooflab.cuda.timing import time_launches

    pci = detect().pci_bus_id

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"device {name}, {props['multiProcessorCount']} SMs; CuPy {cp.__version__}, torch {torch.__version__}, "
          f"Triton {triton.__version__}; {len(todo)} configurations", flush=True)

    t = time.time()
    comp = precompile([f"{c.precision} {c.label}" for _, c in todo], args.workers)
    bad = {s: r for s, r in comp.items() if not r["ok"]}
    print(f"\n== compile: {len(comp)} of {len(todo)} configurations in {time.time() - t:.0f} s "
          f"(parallel, {args.workers} workers); slowest {max((r['s'] for r in comp.values()), default=0)} s; "
          f"failed: {len(bad)}", flush=True)
    for s, r in bad.items():
        print(f"  FAILED {s}: {r['error']}")

    # cuBLAS peers
    peers = {"fp32": cublas.sgemm, "3xtf32": cublas.sgemm, "tf32": cublas.gemm_tf32, "bf16": cublas.gemm_bf16}
    peer_ms: dict[tuple[str, int], float] = {}
    peer_err: dict[str, float] = {}
    print("\n== cuBLAS peers (CUDA events, 1 warm-up + 20 reps, median)")
    probs = {n: Problem(cp, n, n, n, seed=n) for n in sizes}
    for key, prec in (("sgemm", "fp32"), ("tf32", "tf32"), ("bf16", "bf16")):
        for n in sizes:
            p = probs[n]
            make = peers[prec]
            launch = make(n, n, n)
            a, b = p.inputs(prec)
            c = cp.empty((n, n), dtype=cp.float32)
            ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
            peer_ms[(key, n)] = ms
            r = check(cp, launch, p, prec)
            peer_err[f"{key}:{n}"] = r.get(own_ref(prec) if prec != "tf32" else "tf32")
            print(f"cublas {key:6s} {n:5d}^3 {ms:8.3f} ms {2 * n ** 3 / ms / 1e9:7.1f} TFLOP/s  err vs fp32 "
                  f"{r.get('fp32', float('inf')):.2e}  vs tf32 RN {r.get('tf32', float('inf')):.2e}  vs tf32 trunc "
                  f"{r.get('tf32_trunc', float('inf')):.2e}  vs bf16 {r.get('bf16', float('inf')):.2e}", flush=True)

    print("\n== Triton configurations: own = reference of the inputs as the rung declares them rounded "
          "(tf32: truncated); odd = worst over 1x1x1, 45x33x70, 1000x777x1234")
    hdr = (f"{'prec':6s} {'config':30s} {'odd':>8s} {'err4096':>8s} {'err8192':>8s} {'vsRN':>8s} {'vsTrunc':>8s} "
           f"{'vsFP32':>8s} {'det':>3s} " + " ".join(f"{'ms' + str(n):>8s} {'TF/s':>6s} {'xpeer':>6s}" for n in sizes))
    print(hdr, flush=True)
    odd_probs = {s: Problem(cp, *s, seed=1) for s in ODD}
    results = []
    for rung, cfg in todo:
        spec = f"{cfg.precision} {cfg.label}"
        if time.time() - T0 > BUDGET_S:
            print(f"{cfg.precision:6s} {cfg.label:30s} SKIPPED (time budget)")
            continue
        if spec in bad:
            print(f"{cfg.precision:6s} {cfg.label:30s} FAILED to compile")
            continue
        res = {"spec": spec, "prec": cfg.precision, "rung": rung.name, "ms": {}, "err": {}}
        try:
            own = own_ref(cfg.precision)
            odd_err, ok = 0.0, True
            for s, p in odd_probs.items():
                r = check(cp, triton_gemm.launcher(spec, *s), p, cfg.precision)
                e = r.get(own, float("inf"))
                odd_err = max(odd_err, e)
                ok &= r["guard"] and r["det"] and r["nan"] == 0
            for n in sizes:
                r = check(cp, triton_gemm.launcher(spec, n, n, n), probs[n], cfg.precision)
                res["err"][n] = r
                ok &= r["guard"] and r["det"] and r["nan"] == 0
            for n in sizes:
                launch = triton_gemm.launcher(spec, n, n, n)
                a, b = probs[n].inputs(cfg.precision)
                c = cp.empty((n, n), dtype=cp.float32)
                res["ms"][n] = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
            res["ok"] = ok
            res["odd"] = odd_err
            big = res["err"][sizes[-1]]
            pk = {"fp32": "sgemm", "3xtf32": "sgemm", "tf32": "tf32", "bf16": "bf16"}[cfg.precision]
            cols = " ".join(f"{res['ms'][n]:8.3f} {2 * n ** 3 / res['ms'][n] / 1e9:6.1f} "
                            f"{peer_ms[(pk, n)] / res['ms'][n]:6.3f}" for n in sizes)
            f = lambda d, key: f"{d.get(key, float('inf')):8.1e}"  # noqa: E731
            print(f"{cfg.precision:6s} {cfg.label:30s} {odd_err:8.1e} {f(res['err'][sizes[0]], own)} "
                  f"{f(big, own) if len(sizes) > 1 else '-':>8s} {f(big, 'tf32')} {f(big, 'tf32_trunc')} "
                  f"{f(big, 'fp32')} {'yes' if ok else 'NO':>3s} {cols}", flush=True)
            results.append(res)
        except Exception as exc:  # noqa: BLE001
            print(f"{cfg.precision:6s} {cfg.label:30s} FAILED {exc.__class__.__name__}: {' '.join(str(exc).split())[:300]}",
                  flush=True)
        cp.get_default_memory_pool().free_all_blocks()

    # best per precision
    print("\n== best per precision (at the largest size), timing checks")
    n0 = sizes[0]
    for prec in ("fp32", "tf32", "3xtf32", "bf16"):
        cand = [r for r in results if r["prec"] == prec and r["ok"]]
        if not cand:
            continue
        best = min(cand, key=lambda r: r["ms"][sizes[-1]])
        spec = best["spec"]
        pk = {"fp32": "sgemm", "3xtf32": "sgemm", "tf32": "tf32", "bf16": "bf16"}[prec]
        line = " ".join(f"{n}: {2 * n ** 3 / best['ms'][n] / 1e9:.1f} TFLOP/s = {peer_ms[(pk, n)] / best['ms'][n]:.3f}x "
                        f"cuBLAS {pk}" for n in sizes)
        print(f"{prec:6s} best {spec!r}: {line}")
        try:
            p = probs[n0]
            a, b = p.inputs(prec)
            c = cp.empty((n0, n0), dtype=cp.float32)
            launch = triton_gemm.launcher(spec, n0, n0, n0)
            harness = time_launches(lambda: launch(a, b, c), label=spec, reps=20, warmup=1,  # noqa: B023
                                     pci_bus_id=pci)
            side = cp.cuda.Stream(non_blocking=True)
            sync = []
            with side:
                for _ in range(10):
                    side.synchronize()
                    s, e = cp.cuda.Event(), cp.cuda.Event()
                    s.record(side)
                    launch(a, b, c)
                    e.record(side)
                    e.synchronize()
                    sync.append(cp.cuda.get_elapsed_time(s, e))
            cp.cuda.Device().synchronize()
            print(f"       timing at {n0}: harness median {harness.median_ms:.4f} ms; events around one synchronous "
                  f"launch on a non-default CuPy stream {float(np.median(sync)):.4f} ms "
                  f"(ratio {harness.median_ms / float(np.median(sync)):.3f})")
            # replicas
            first = cp.empty((n0, n0), dtype=cp.float32)
            launch(a, b, first)
            cp.cuda.Device().synchronize()
            outs = [cp.full((n0, n0), cp.nan, dtype=cp.float32) for _ in range(8)]
            cp.cuda.Device().synchronize()  # the fills ran on the null stream, which non-blocking streams skip
            streams = [cp.cuda.Stream(non_blocking=True) for _ in outs]
            for o, s in zip(outs, streams):
                with s:
                    launch(a, b, o)
            cp.cuda.Device().synchronize()
            differ = sum(int(cp.count_nonzero(first.view(cp.uint32) != o.view(cp.uint32))) for o in outs)
            print(f"       8 concurrent replicas on their own streams: {differ} elements differ from the first run")
            small = Problem(cp, 256, 256, 256, seed=3)
            sa, sb = small.inputs(prec)
            sc = cp.empty((256, 256), dtype=cp.float32)
            ls = triton_gemm.launcher(spec, 256, 256, 256)
            ls(sa, sb, sc)
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            for _ in range(200):
                ls(sa, sb, sc)
            host = (time.perf_counter() - t) / 200 * 1e6
            cp.cuda.Device().synchronize()
            print(f"       host time per launch through the glue (256^3, no sync): {host:.1f} us")
        except Exception as exc:  # noqa: BLE001
            print(f"       timing checks FAILED {exc.__class__.__name__}: {' '.join(str(exc).split())[:300]}")

    print("\n== goals (N=8192)")
    for prec, pk, need in (("bf16", "bf16", 0.90), ("tf32", "tf32", 0.90)):
        cand = [r for r in results if r["prec"] == prec and r["ok"] and 8192 in r["ms"]]
        if cand:
            best = min(cand, key=lambda r: r["ms"][8192])
            ratio = peer_ms[(pk, 8192)] / best["ms"][8192]
            print(f"Triton {prec} {best['spec']!r}: {ratio:.3f}x cuBLAS {pk} (need {need}): "
                  f"{'MET' if ratio >= need else 'NOT MET'}")
    x3 = [r for r in results if r["prec"] == "3xtf32" and r["ok"]]
    if x3:
        best = min(x3, key=lambda r: r["ms"][n0])
        print(f"tf32x3 {best['spec']!r} at {n0}: {peer_ms[('sgemm', n0)] / best['ms'][n0]:.2f}x SGEMM; error vs FP32 "
              f"{best['err'][n0]['fp32']:.2e} (SGEMM {peer_err.get(f'sgemm:{n0}', float('nan')):.2e})")
    print(f"\ntotal {time.time() - T0:.0f} s")
    return 0


SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
"""


def verify(only: str) -> int:
    """For each Triton rung as `rooflab gemm` would run it (tune cache winner, else the default):
    the harness's timer against CUDA events around one launch queued behind a 2 ms spin kernel on the
    same non-default CuPy stream (the start event fires when the spin ends, so host launch overhead is
    not counted; a launch that landed on another stream would overlap the spin and time near 0), and
    8 concurrent replicas on their own streams (outputs poisoned and synchronised first)."""
    import cupy as cp

    from rooflab import rungs
    from rooflab.cuda import triton_gemm
    from rooflab.cuda.device import detect
    from rooflab.cuda.timing import time_launches
    from rooflab.measure import tune

    dev = detect()
    spin = cp.RawKernel(SPIN, "spin")
    n = 4096
    p = Problem(cp, n, n, n, seed=5)
    for name in ("triton_fp32", "triton_tf32", "triton_tf32x3", "triton_bf16"):
        rung, info = tune.choose(rungs.get(name), dev)
        if only and rung.precision not in only.split(","):
            continue
        spec = rung.config
        try:
            launch = triton_gemm.launcher(spec, n, n, n)
            a, b = p.inputs(rung.precision)
            c = cp.empty((n, n), dtype=cp.float32)
            harness = time_launches(lambda: launch(a, b, c), label=name, reps=20, warmup=1,  # noqa: B023
                                    pci_bus_id=dev.pci_bus_id)
            side = cp.cuda.Stream(non_blocking=True)
            behind = []
            with side:
                for _ in range(10):
                    spin((1,), (1,), (np.int64(int(2e-3 * dev.sm_clock_max_mhz * 1e6)),))
                    s, e = cp.cuda.Event(), cp.cuda.Event()
                    s.record(side)
                    launch(a, b, c)
                    e.record(side)
                    e.synchronize()
                    behind.append(cp.cuda.get_elapsed_time(s, e))
            ref = cp.empty((n, n), dtype=cp.float32)
            launch(a, b, ref)
            outs = [cp.full((n, n), cp.nan, dtype=cp.float32) for _ in range(8)]
            cp.cuda.Device().synchronize()
            streams = [cp.cuda.Stream(non_blocking=True) for _ in outs]
            for o, st in zip(outs, streams):
                with st:
                    launch(a, b, o)
            cp.cuda.Device().synchronize()
            nan = [int(cp.count_nonzero(cp.isnan(o))) for o in outs]
            diff = [int(cp.count_nonzero(ref.view(cp.uint32) != o.view(cp.uint32))) for o in outs]
            print(f"{name:14s} {spec!r} ({'tuned' if info.get('tuned') else 'default'}): harness median "
                  f"{harness.median_ms:.4f} ms, events behind a spin on a side stream {float(np.median(behind)):.4f} ms "
                  f"(ratio {harness.median_ms / float(np.median(behind)):.3f}); 8 replicas: differing elements {diff}, "
                  f"NaN {nan}", flush=True)
        except Exception as exc:  # noqa: BLE001
            print(f"{name}: FAILED {exc.__class__.__name__}: {' '.join(str(exc).split())[:300]}", flush=True)
        cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
