#!/usr/bin/env python3
"""Check and time the pipelined rung's instances (rooflab.rungs.pipelined.CONFIGS, in that order)
and the regtile baseline beside cuBLAS.

Run on the GPU machine from the repo root:  PYTHONPATH=src python3 scripts/dev/check_climb.py
Options: --quick (no 8192), --kernels SUBSTR[,SUBSTR] (filter by label), --reps 20, --rounds 3,
--flush-n N (also time every kernel and cuBLAS at N^3 with L2 flushed before each launch),
--odd-only (correctness at the small odd shapes only: for compute-sanitizer runs),
--profile LABEL|cublas (set up N=4096, launch it once between cudaProfilerStart/Stop: for
ncu --profile-from-start off). CHECK_CLIMB_CONFIGS (JSON list of config tuples) replaces
pipelined.CONFIGS as the list of instances.

For every kernel: compile with CuPy RawModule (NVRTC, -std=c++17; one module per template
instance, through name_expressions), report registers / local (spill) bytes / static and dynamic
shared bytes of the NVRTC build (dynamic shared memory above 48 KB is opted into), then
  - correctness on odd shapes and 2048^3 / 4096^3: inputs uniform [-1, 1) float32, C
    pre-filled with NaN inside a buffer with 1024 sentinel floats before and after;
    normwise ||C - ref||_F / ||ref||_F <= 1e-5 against a float64 product, guards intact;
  - bitwise determinism: one shape run twice, compared bit for bit;
  - timing at N = 2048, 4096, 8192: 1 warm-up, 20 timed launches (CUDA events around
    each), median; cuBLAS SGEMM (cupy.matmul, FP32: CUPY_TF32 is removed from the
    environment) timed the same way on the same inputs.
A kernel that fails to compile or launch prints FAILED and the script goes on (after a
sticky CUDA error the script re-executes itself for the kernels not yet done).
At the end: the best instance per size, and for the two best at N=4096 a spread estimate:
--rounds interleaved rounds (kernel, cuBLAS, kernel, cuBLAS, ...), each a median of --reps
launches, with the per-round ratios and the ratio of the medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

if os.environ.pop("CUPY_TF32", None) is not None:
    print("note: CUPY_TF32 was set; removed so that cuBLAS stays pure FP32", flush=True)

import cupy as cp
import numpy as np

if os.environ.get("ROOFLAB_NO_POOL") == "1":  # under compute-sanitizer: every array its own allocation
    cp.cuda.set_allocator(None)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNGS = os.path.join(ROOT, "src", "rooflab", "rungs")
sys.path.insert(0, os.path.join(ROOT, "src"))  # this tree's rooflab, whatever is installed

from rooflab.rungs import pipelined  # pure data: no CUDA import

GUARD = 1024
SENTINEL_BITS = np.uint32(0x7FC0DEAD)  # a NaN with a payload no kernel produces


def cdiv(a, b):
    return -(-a // b)


# label, file, kernel name (template instance = name expression), threads, (BM, BN), dynamic smem bytes
def _pipe(c):
    bm, bn, bk, wm, wn, tm, tn, st, v, gm = (*c, 0, 1)[:10]
    kind = "regpf" if st == 2 and not v else f"cp.async{st}"
    label = f"pipe {bm}x{bn}x{bk} w{wm}x{wn} t{tm}x{tn} {kind}" + (f" v{v}" if v else "") + (f" g{gm}" if gm > 1 else "")
    return (label, "pipelined.cu", pipelined.kernel_name(c), pipelined.threads(c), (bm, bn), pipelined.dynamic_smem(c))


CONFIGS = [tuple(c) for c in json.loads(os.environ["CHECK_CLIMB_CONFIGS"])] \
    if os.environ.get("CHECK_CLIMB_CONFIGS") else pipelined.CONFIGS
KERNELS = [("regtile (baseline)", "regtile.cu", "mm_regtile", 256, (128, 128), 0)] + [
    _pipe(c) for c in CONFIGS]

ODD_SHAPES = [(1, 1, 1), (67, 67, 67), (45, 33, 70)]
CHECK_SHAPES = [(1, 1, 1), (67, 67, 67), (45, 33, 70), (1000, 777, 1234), (4097, 4097, 4097), (1, 4096, 7), (3, 5000, 2),
                (2048, 2048, 2048), (4096, 4096, 4096)]
DET_SHAPE = (1000, 777, 1234)
SIZES = [2048, 4096, 8192]
if os.environ.get("CHECK_CLIMB_SMALL"):  # smoke test of this script itself (tiny shapes)
    CHECK_SHAPES = [(1, 1, 1), (45, 33, 70), (3, 50, 2), (64, 64, 64)]
    DET_SHAPE = (45, 33, 70)
    SIZES = [128, 256, 384]


class Inputs:
    """Inputs and float64 references, made once per shape and shared by all kernels."""

    def __init__(self):
        self.cache = {}

    def get(self, m, n, k):
        key = (m, n, k)
        if key not in self.cache:
            rs = cp.random.RandomState((m * 1000003 + n * 1009 + k) % 2**31)
            a = rs.uniform(-1.0, 1.0, (m, k), dtype=cp.float32)
            b = rs.uniform(-1.0, 1.0, (k, n), dtype=cp.float32)
            ref = a.astype(cp.float64) @ b.astype(cp.float64)
            self.cache[key] = (a, b, ref, float(cp.linalg.norm(ref)))
        return self.cache[key]


_modules = {}


def get_kernel(fname, name):
    """One NVRTC compile per kernel (a template instance alone, as rooflab compiles it); a
    failure is remembered, so it is not compiled again."""
    key = (fname, name)
    if key not in _modules:
        try:
            with open(os.path.join(RUNGS, fname)) as f:
                code = f.read()
            mod = cp.RawModule(code=code, options=("-std=c++17",),
                               name_expressions=[name] if "<" in name else None)
            mod.compile()
            _modules[key] = mod.get_function(name)
        except Exception as e:  # noqa: BLE001
            _modules[key] = e
    fn = _modules[key]
    if isinstance(fn, Exception):
        raise fn
    return fn


def make_launch(spec, m, n, k):
    _, fname, name, nt, (bm, bn), dyn = spec
    kern = get_kernel(fname, name)
    if dyn > 48 * 1024:  # opt in (an attribute of the function: idempotent)
        kern.max_dynamic_shared_size_bytes = dyn
    grid = (cdiv(n, bn), cdiv(m, bm), 1)

    def launch(a, b, c):
        kern(grid, (nt, 1, 1), (a, b, c, np.int32(m), np.int32(n), np.int32(k)), shared_mem=dyn)

    return kern, launch


def guarded_run(launch, a, b, m, n):
    buf = cp.empty(m * n + 2 * GUARD, dtype=cp.float32)
    buf.view(cp.uint32)[:] = SENTINEL_BITS
    c = buf[GUARD:GUARD + m * n]
    c.fill(np.nan)
    launch(a, b, c)
    cp.cuda.runtime.deviceSynchronize()
    bits = buf.view(cp.uint32)
    guard_ok = bool((bits[:GUARD] == SENTINEL_BITS).all()) and bool((bits[GUARD + m * n:] == SENTINEL_BITS).all())
    return c.reshape(m, n), guard_ok


def normwise(c, ref, refnorm):
    if bool(cp.isnan(c).any()):
        return float("inf")
    d = float(cp.linalg.norm(c.astype(cp.float64) - ref))
    return d / refnorm if refnorm else d


_flush_buf = []


def flush_l2():
    """Write 512 MiB (8x the H200's 60 MB L2): nothing the previous launch left stays cached."""
    if not _flush_buf:
        _flush_buf.append(cp.empty(128 * 2**20, dtype=cp.float32))
    _flush_buf[0].fill(1.0)


def time_it(fn, reps, flush=False):
    fn()  # warm-up
    cp.cuda.runtime.deviceSynchronize()
    evs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for s, e in evs:
        if flush:
            flush_l2()
        s.record()
        fn()
        e.record()
    evs[-1][1].synchronize()
    return float(np.median([cp.cuda.get_elapsed_time(s, e) for s, e in evs]))


def profile_one(label, kernels, rooflab_cublas, nn=4096):
    """One launch at nn^3 between cudaProfilerStart and Stop (after a warm-up launch)."""
    inputs = Inputs()
    a, b, _, _ = inputs.get(nn, nn, nn)
    c = cp.empty((nn, nn), dtype=cp.float32)
    if label == "cublas":
        lc = rooflab_cublas(nn, nn, nn) if rooflab_cublas is not None else None
        fn = (lambda: lc(a, b, c)) if lc is not None else (lambda: cp.matmul(a, b, out=c))
    else:
        spec = next((k for k in kernels if k[0] == label), None) or next(k for k in kernels if label in k[0])
        _, launch = make_launch(spec, nn, nn, nn)
        fn = lambda: launch(a, b, c)  # noqa: E731
    fn()
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStart()
    fn()
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStop()
    print(f"profiled {label} at N={nn}", flush=True)


def row(label, shape, err, guard, ms=None, tflops=None, ratio=None, extra=""):
    m, n, k = shape
    e = "-" if err is None else f"{err:.1e}"
    g = "-" if guard is None else ("ok" if guard else "BAD")
    t = "" if ms is None else f"{ms:8.3f} {tflops:7.2f} {ratio:6.3f}"
    if err is not None and not err <= 1e-5:
        extra = ("WRONG " + extra).strip()
    print(f"{label:46s} {m:>5}x{n:>5}x{k:>5} {e:>8} {g:>5} {t} {extra}".rstrip(), flush=True)


def is_sticky(exc):
    s = str(exc)
    return any(w in s for w in ("illegal", "ILLEGAL", "misaligned", "MISALIGNED", "launch failure",
                                "LAUNCH_FAILED", "unspecified", "HARDWARE", "exception"))


def cublas_timers(nn, a, b, rooflab_cublas):
    """[(label, fn)] timing cuBLAS SGEMM at nn^3 on a, b: cupy.matmul, and rooflab's cublasSgemm rung."""
    c = cp.empty((nn, nn), dtype=cp.float32)
    out = [("cuBLAS (cupy.matmul FP32)", lambda: cp.matmul(a, b, out=c), c)]
    if rooflab_cublas is not None:
        try:
            lc = rooflab_cublas(nn, nn, nn)
            c2 = cp.empty((nn, nn), dtype=cp.float32)
            out.append(("cuBLAS (rooflab rung, cublasSgemm)", lambda: lc(a, b, c2), c2))
        except Exception as e:  # noqa: BLE001
            print(f"rooflab cuBLAS rung unavailable: {type(e).__name__}: {e}", flush=True)
    return out


def interleaved(spec, nn, inputs, rooflab_cublas, reps, rounds):
    """Rounds of (kernel, cuBLAS) medians back to back: the spread of the ratio."""
    a, b, _, _ = inputs.get(nn, nn, nn)
    _, launch = make_launch(spec, nn, nn, nn)
    c = cp.empty((nn, nn), dtype=cp.float32)
    timers = cublas_timers(nn, a, b, rooflab_cublas)
    ks, cs = [], []
    for _ in range(rounds):
        ks.append(time_it(lambda: launch(a, b, c), reps))
        cs.append(min(time_it(fn, reps) for _, fn, _ in timers))
    ratios = [cm / km for km, cm in zip(ks, cs)]
    med = float(np.median(cs)) / float(np.median(ks))
    print(f"interleaved N={nn} {spec[0]}: kernel ms {' '.join(f'{x:.3f}' for x in ks)} | cuBLAS ms "
          f"{' '.join(f'{x:.3f}' for x in cs)} | ratios {' '.join(f'{r:.3f}' for r in ratios)} | "
          f"ratio of medians {med:.3f}x (min {min(ratios):.3f}, max {max(ratios):.3f})", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="time 2048 and 4096 only")
    ap.add_argument("--kernels", default="", help="comma-separated substrings of labels to run")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved kernel/cuBLAS rounds at N=4096 (0: none)")
    ap.add_argument("--flush-n", type=int, default=0, help="also time with L2 flushed at this N (0: no)")
    ap.add_argument("--odd-only", action="store_true", help="correctness at the small odd shapes only")
    ap.add_argument("--profile", default="", help="label substring or 'cublas': one launch for ncu")
    ap.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)  # used on re-exec
    ap.add_argument("--state", default="", help=argparse.SUPPRESS)  # results of the processes before
    args = ap.parse_args()
    t_start = time.time()
    kernels = [k for k in KERNELS if not args.kernels or any(s in k[0] for s in args.kernels.split(","))]
    if args.profile:
        try:
            from rooflab.cuda.cublas import sgemm as rc
        except Exception:  # noqa: BLE001
            rc = None
        profile_one(args.profile, kernels, rc)
        return
    if args.odd_only:  # under compute-sanitizer: small shapes, no timing
        inputs = Inputs()
        for spec in kernels:
            try:
                for m, n, k in ODD_SHAPES:
                    a, b, ref, rn = inputs.get(m, n, k)
                    _, launch = make_launch(spec, m, n, k)
                    c, gok = guarded_run(launch, a, b, m, n)
                    row(spec[0], (m, n, k), normwise(c, ref, rn), gok)
            except Exception as e:  # noqa: BLE001
                print(f"{spec[0]:46s} FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
        return
    sizes = SIZES[:2] if args.quick else SIZES

    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    if args.skip == 0:
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        print(f"{name}  SMs {props['multiProcessorCount']}  CUDA runtime "
              f"{cp.cuda.runtime.runtimeGetVersion()}  driver {cp.cuda.runtime.driverGetVersion()}  "
              f"NVRTC {cp.cuda.nvrtc.getVersion()}  CuPy {cp.__version__}", flush=True)
    inputs = Inputs()

    # cuBLAS reference timings (pure FP32: CUPY_TF32 unset): cupy.matmul, and rooflab's own
    # cuBLAS rung (cublasSgemm, CUBLAS_DEFAULT_MATH) when importable; ratios use the faster.
    try:
        from rooflab.cuda.cublas import sgemm as rooflab_cublas
    except Exception:  # noqa: BLE001
        rooflab_cublas = None
    cublas_ms = {}
    if args.skip == 0:
        print(f"{'kernel':46s} {'shape':>17} {'error':>8} {'guard':>5} {'ms':>8} {'TFLOP/s':>7} {'xcuBLAS':>6}")
    for nn in sizes:
        a, b, ref, rn = inputs.get(nn, nn, nn)
        timings = []
        for lab, fn, c in cublas_timers(nn, a, b, rooflab_cublas):
            ms = time_it(fn, args.reps)
            timings.append((lab, ms, normwise(c, ref, rn)))
        cublas_ms[nn] = min(t[1] for t in timings)
        if args.skip == 0:
            for lab, t, e in timings:
                row(lab, (nn, nn, nn), e, None, t, 2 * nn**3 / t / 1e9, cublas_ms[nn] / t)

    best = {}  # N -> [(label, ratio, TFLOP/s, spec)] of the kernels that passed
    if args.state:
        with open(args.state) as f:
            for nn, rows in json.load(f).items():
                best[int(nn)] = [(lab, r, tf, kernels[i]) for lab, r, tf, i in rows]
    for idx, spec in enumerate(kernels):
        if idx < args.skip:
            continue
        label = spec[0]
        try:
            kern, _ = make_launch(spec, 64, 64, 64)
            res = (f"NVRTC build: regs {kern.num_regs}, local (spill) bytes {kern.local_size_bytes}, "
                   f"static smem {kern.shared_size_bytes}, dynamic smem {spec[5]}")
        except Exception as e:  # noqa: BLE001
            print(f"{label:46s} FAILED to compile/load: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                  flush=True)
            continue
        try:
            # correctness
            fails, worst = [], 0.0
            for m, n, k in CHECK_SHAPES:
                a, b, ref, rn = inputs.get(m, n, k)
                _, launch = make_launch(spec, m, n, k)
                c, gok = guarded_run(launch, a, b, m, n)
                err = normwise(c, ref, rn)
                worst = max(worst, err)
                if not (err <= 1e-5 and gok):
                    fails.append(f"{m}x{n}x{k}: err {err:.1e} guard {'ok' if gok else 'BAD'}")
            m, n, k = DET_SHAPE
            a, b, _, _ = inputs.get(m, n, k)
            _, launch = make_launch(spec, m, n, k)
            c1, _ = guarded_run(launch, a, b, m, n)
            c2, _ = guarded_run(launch, a, b, m, n)
            det = bool((c1.view(cp.uint32) == c2.view(cp.uint32)).all())
            status = "checks ok" if not fails and det else "CHECKS FAILED"
            print(f"{label:46s} {status}: {len(CHECK_SHAPES)} shapes, max err {worst:.1e}, "
                  f"deterministic {'yes' if det else 'NO'}; {res}"
                  + ("" if not fails else " | " + "; ".join(fails)), flush=True)
            # timing
            for nn in sizes:
                a, b, ref, rn = inputs.get(nn, nn, nn)
                _, launch = make_launch(spec, nn, nn, nn)
                c, gok = guarded_run(launch, a, b, nn, nn)
                err = normwise(c, ref, rn)
                ms = time_it(lambda launch=launch, a=a, b=b, c=c: launch(a, b, c), args.reps)
                tf = 2 * nn**3 / ms / 1e9
                ratio = cublas_ms[nn] / ms
                row(label, (nn, nn, nn), err, gok, ms, tf, ratio)
                if err <= 1e-5 and gok and not fails and det:
                    best.setdefault(nn, []).append((label, ratio, tf, spec))
        except Exception as e:  # noqa: BLE001
            print(f"{label:46s} FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
            if is_sticky(e):
                # the context is unusable: continue with the next kernels in a fresh process
                rest = [a for a in sys.argv[1:] if not a.startswith(("--skip", "--state"))]
                print("(sticky CUDA error: re-running the remaining kernels in a new process)", flush=True)
                fd, state = tempfile.mkstemp(prefix="check_climb_", suffix=".json")
                with os.fdopen(fd, "w") as f:
                    json.dump({nn: [(lab, r, tf, kernels.index(sp)) for lab, r, tf, sp in rows]
                               for nn, rows in best.items()}, f)
                sys.stdout.flush()
                os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), *rest,
                                          f"--skip={idx + 1}", f"--state={state}"])
    if args.flush_n:
        nn = args.flush_n
        a, b, _, _ = inputs.get(nn, nn, nn)
        cf = min(time_it(fn, args.reps, flush=True) for _, fn, _ in cublas_timers(nn, a, b, rooflab_cublas))
        print(f"flushed L2, N={nn}: cuBLAS {cf:.3f} ms", flush=True)
        for lab, _, _, spec in best.get(nn, []):
            try:
                _, launch = make_launch(spec, nn, nn, nn)
                c = cp.empty((nn, nn), dtype=cp.float32)
                ms = time_it(lambda launch=launch, c=c: launch(a, b, c), args.reps, flush=True)
                print(f"flushed L2 {lab:46s} N={nn} {ms:8.3f} ms {2 * nn**3 / ms / 1e9:7.2f} TFLOP/s "
                      f"{cf / ms:6.3f}x cuBLAS", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"flushed L2 {lab}: FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
    pipes = {nn: sorted((x for x in v if x[0].startswith("pipe")), key=lambda x: -x[1]) for nn, v in best.items()}
    if any(pipes.values()):
        print("best per size: " + "; ".join(
            f"N={nn}: {v[0][0]} {v[0][1]:.3f}x cuBLAS ({v[0][2]:.1f} TFLOP/s)" for nn, v in sorted(pipes.items()) if v))
    nn = 4096 if 4096 in pipes else max(pipes, default=None)
    if args.rounds > 0 and nn is not None and pipes[nn]:
        for lab, _, _, spec in pipes[nn][:2]:
            try:
                interleaved(spec, nn, inputs, rooflab_cublas, args.reps, args.rounds)
            except Exception as e:  # noqa: BLE001
                print(f"interleaved {lab}: FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
    print(f"total {time.time() - t_start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
