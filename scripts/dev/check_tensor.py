"""Standalone check of the tensor-core rungs on a GPU (written for the H200; any sm_80+ runs).

Usage (repo root): PYTHONPATH=src python3 scripts/dev/check_tensor.py [--quick]

For every kernel (the rungs' kernels and their variants, each an extern "C" entry point of
its .cu file): NVRTC compile (cupy.RawModule, one module per file and architecture), then
for each shape a guarded launch (C NaN-filled, 1024 sentinel floats before and after it,
all verified untouched), the normwise error ||C - ref||_F / ||ref||_F against
  - its own precision's reference: float64 product of the inputs ROUNDED as the kernel
    rounds them (TF32: round to nearest, ties away, 10 mantissa bits = cvt.rna;
    BF16: the inputs are BF16 already), tolerance 1e-5 (FP32 accumulation),
  - the FP32 reference: float64 product of the original FP32 inputs (for 3xTF32 this is
    its own reference, tolerance 1e-5),
a bitwise determinism check (two launches, same bits), then CUDA-event timing (1 warm-up,
20 reps, median) at N = 4096 and 8192 beside its cuBLAS peer: SGEMM (FP32, the project's
launcher, CUBLAS_DEFAULT_MATH) for 3xTF32, gemmEx TF32 for TF32, gemmEx BF16 for BF16.
Then the peak kernels, and a GOALS section: 3xTF32 error <= cuBLAS SGEMM's and >= 1.5x its
speed at 4096; BF16 / TF32 >= 0.9x cuBLAS at 8192.
A kernel that fails to compile or launch prints FAILED and the script goes on.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[2] / "src" / "rooflab"
INCLUDE = f"-I{SRC / 'include'}"  # include/ptx.cuh
GUARD = 1024
SENTINEL = np.float32(-7.25e33)
TOL = 1e-5


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def kernel_list() -> tuple[list[dict], list[dict]]:
    """The kernels to check, straight from the rung records (rooflab/rungs/tensor.py): each
    source rung's kernel, or each of its variants, with the block, grid, shared memory and
    options the harness will launch it with; plus the diagnostics below. Returns (kernels for
    any sm_80+ device, kernels that need sm_90a)."""
    sys.path.insert(0, str(SRC.parent))
    from rooflab.rungs.tensor import TENSOR_RUNGS

    plain, sm90a = [], []
    for rung in TENSOR_RUNGS:
        if rung.source is None:
            continue  # cuBLAS: the peers below
        if rung.staging:
            continue  # a pre-pass stages its operands: scripts/dev/check_nt.py runs it through the harness
        for v in rung.variants or (None,):
            r = rung.with_variant(v) if v else rung
            meta = {"name": r.kernel, "file": r.source, "prec": "fp32" if r.precision == "3xtf32" else r.precision,
                    "block": r.block, "grid": r.grid, "smem": r.shared_mem, "rung": rung.name,
                    "arch": "sm_90a" if "-arch=sm_90a" in r.options else None}
            (sm90a if meta["arch"] else plain).append(meta)
    # diagnostics, not rung variants: no proxy fence between cp.async and wgmma (see wgmma_bf16.cu)
    for name, threads, bm, smem in (("mm_wgmma_bf16_nofence", 256, 128, 4 * 49152 + 1024),
                                    ("mm_wgmma_bf16_wg3_nofence", 384, 192, 4 * 57344 + 1024)):
        sm90a.append({"name": name, "file": "rungs/wgmma_bf16.cu", "prec": "bf16", "block": (threads, 1, 1),
                      "grid": lambda m, n, k, bm=bm: (cdiv(m, bm) * cdiv(n, 256), 1, 1), "smem": smem,
                      "rung": "diagnostic", "arch": "sm_90a"})
    return plain, sm90a


KERNELS, KERNELS_90A = kernel_list()


# ------------------------------------------------------------------------------- helpers
def tf32_rna(cp, x):
    """cvt.rna.tf32.f32 on float32 bits: + 0x1000, low 13 bits cleared (ties away from zero)."""
    b = x.view(cp.uint32)
    return ((b + cp.uint32(0x1000)) & cp.uint32(0xFFFFE000)).view(cp.float32)


def to_bf16_bits(cp, x):
    """float32 -> BF16 bits (uint16), round to nearest even (finite inputs)."""
    b = x.view(cp.uint32)
    r = (b + cp.uint32(0x7FFF) + ((b >> 16) & cp.uint32(1))) >> 16
    return r.astype(cp.uint16)


def bf16_to_f32(cp, h):
    return (h.astype(cp.uint32) << 16).view(cp.float32)


def normwise(cp, c, ref):
    return float(cp.linalg.norm((c.astype(cp.float64) - ref).ravel()) / cp.linalg.norm(ref.ravel()))


class Problem:
    """Inputs and references for one shape (references only when asked: 8192 is timing only)."""

    def __init__(self, cp, m, n, k, refs: bool, seed=0):
        self.m, self.n, self.k = m, n, k
        rs = cp.random.RandomState(seed)
        self.a32 = (rs.random_sample((m, k), dtype=cp.float32) * 2 - 1).astype(cp.float32)
        self.b32 = (rs.random_sample((k, n), dtype=cp.float32) * 2 - 1).astype(cp.float32)
        self.a16 = to_bf16_bits(cp, self.a32)
        self.b16 = to_bf16_bits(cp, self.b32)
        self.ref = {}
        if refs:
            f64 = cp.float64
            self.ref["fp32"] = self.a32.astype(f64) @ self.b32.astype(f64)
            self.ref["tf32"] = tf32_rna(cp, self.a32).astype(f64) @ tf32_rna(cp, self.b32).astype(f64)
            self.ref["bf16"] = bf16_to_f32(cp, self.a16).astype(f64) @ bf16_to_f32(cp, self.b16).astype(f64)

    def inputs(self, prec):
        return (self.a16, self.b16) if prec == "bf16" else (self.a32, self.b32)


def guarded_c(cp, m, n):
    buf = cp.full(m * n + 2 * GUARD, SENTINEL, dtype=cp.float32)
    buf[GUARD:GUARD + m * n] = cp.nan
    return buf, buf[GUARD:GUARD + m * n].reshape(m, n)


def guard_ok(cp, buf, m, n):
    g = cp.concatenate([buf[:GUARD], buf[GUARD + m * n:]])
    return bool(cp.all(g.view(cp.uint32) == SENTINEL.view(np.uint32)))


def time_ms(cp, fn, reps=20):
    fn()  # warm-up
    cp.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(times))


# ------------------------------------------------------------------------------- kernels
_MODULES: dict = {}


class Compiled:
    def __init__(self, cp, meta, arch):
        self.meta = meta
        target = meta["arch"] or arch
        key = (meta["file"], target)
        if key not in _MODULES:
            code = (SRC / meta["file"]).read_text()
            mod = cp.RawModule(code=code, options=("-std=c++17", INCLUDE, f"-arch={target}"))
            mod.compile()
            _MODULES[key] = mod
        self.fn = _MODULES[key].get_function(meta["name"])
        self.smem = meta["smem"]
        if self.smem > 48 * 1024:
            self.fn.max_dynamic_shared_size_bytes = self.smem
        self.label = meta["name"]

    def launcher(self, m, n, k):
        grid = tuple(self.meta["grid"](m, n, k))
        block = tuple(self.meta["block"])

        def launch(a, b, c):
            self.fn(grid, block, (a, b, c, np.int32(m), np.int32(n), np.int32(k)), shared_mem=self.smem)

        return launch

    def attr(self, name):
        try:
            return self.fn.attributes.get(name)
        except Exception:  # noqa: BLE001
            return None


ROWS: list[str] = []


def row(*cols):
    line = "  ".join(str(c) for c in cols)
    ROWS.append(line)
    print(line, flush=True)


HEADER = (f"{'kernel':26s} {'M x N x K':>20s} {'err(own)':>9s} {'err(fp32)':>9s} {'tol':>5s} "
          f"{'guard':>5s} {'det':>3s} {'ok':>4s} {'ms':>9s} {'TFLOP/s':>8s} {'vs peer':>8s}")


def fmt_row(label, shape, e_own, e_fp32, guard, det, passed, ms, tfl, ratio):
    f = lambda v, spec: (format(v, spec) if v is not None else "-")
    return (f"{label:26s} {shape:>20s} {f(e_own, '9.2e')} {f(e_fp32, '9.2e')} {TOL:5.0e} "
            f"{f(guard, '>5')} {f(det, '>3')} {f(passed, '>4')} {f(ms, '9.3f')} {f(tfl, '8.1f')} {f(ratio, '8.3f')}")


def correctness(cp, name, prec, launch, prob, check_det=True):
    m, n = prob.m, prob.n
    a, b = prob.inputs(prec)
    buf, c = guarded_c(cp, m, n)
    launch(a, b, c)
    cp.cuda.get_current_stream().synchronize()
    g = guard_ok(cp, buf, m, n)
    own = "fp32" if prec == "fp32" else prec
    finite = bool(cp.all(cp.isfinite(c)))
    e_own = normwise(cp, c, prob.ref[own]) if finite else float("inf")
    e_fp32 = normwise(cp, c, prob.ref["fp32"]) if finite else float("inf")
    det = None
    if check_det:
        buf2, c2 = guarded_c(cp, m, n)
        launch(a, b, c2)
        cp.cuda.get_current_stream().synchronize()
        det = "yes" if bool(cp.all(c.view(cp.uint32) == c2.view(cp.uint32))) else "NO"
        del buf2, c2
    passed = g and finite and e_own <= TOL and det != "NO"
    return e_own, e_fp32, ("ok" if g else "BAD"), det, ("PASS" if passed else "FAIL")


def error_pattern(cp, prec, launch, prob):
    """Where a failing kernel is wrong: how many elements, the first few, and which row / column
    residues mod 16 they fall on (a layout or descriptor mistake shows up as a pattern)."""
    a, b = prob.inputs(prec)
    _buf, c = guarded_c(cp, prob.m, prob.n)  # _buf keeps the guard zones alive
    launch(a, b, c)
    cp.cuda.get_current_stream().synchronize()
    ref = prob.ref["fp32" if prec == "fp32" else prec]
    scale = float(cp.abs(ref).max()) or 1.0
    bad = ~(cp.abs(c.astype(cp.float64) - ref) <= 1e-4 * scale)  # NaN counts as bad
    rows, cols = (x.get() if hasattr(x, "get") else x for x in cp.nonzero(bad))
    print(f"    error pattern: {len(rows)} of {prob.m * prob.n} elements off by > 1e-4 x max|ref|"
          f" (NaN: {int(cp.isnan(c).sum())}); first: {list(zip(rows[:6].tolist(), cols[:6].tolist()))}")
    if len(rows):
        print(f"    rows mod 16: {sorted(set((rows % 16).tolist()))}; cols mod 16: {sorted(set((cols % 16).tolist()))};"
              f" rows {rows.min()}..{rows.max()}, cols {cols.min()}..{cols.max()}")


def peer_of(prec):
    return {"fp32": "cublas_sgemm", "tf32": "cublas_tf32", "bf16": "cublas_bf16"}[prec]


SHAPES = [(1, 1, 1), (45, 33, 70), (1000, 777, 1234), (1000, 776, 1232), (4096, 4096, 4096)]
CHILD_TIMEOUT = 60  # seconds per kernel (compile, 5 shapes, timing); a hang is killed and reported


def device(cp):
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return dev.compute_capability, props, name


def child(name: str, peer_ms: dict, sizes: list[int]) -> int:
    """One kernel, in its own process (a crash or hang cannot take the others down): compile,
    correctness on every shape, timing; the last line is RESULT {json} for the parent."""
    import json

    import cupy as cp

    cc, _props, _name = device(cp)
    arch = f"sm_{cc}"
    meta = next(k for k in KERNELS + KERNELS_90A if k["name"] == name)
    res = {"name": name, "rung": meta["rung"], "prec": meta["prec"], "compiled": False, "pass": False,
           "err4096": None, "ms": {}}
    t0 = time.time()
    try:
        kern = Compiled(cp, meta, arch)
    except Exception as exc:  # noqa: BLE001
        print(f"{name}: FAILED to compile: {exc.__class__.__name__}: {str(exc)[:2000]}")
        print("RESULT " + json.dumps(res))
        return 1
    res["compiled"] = True
    print(f"compiled {name:22s} in {time.time() - t0:5.1f} s, {kern.attr('num_regs')} registers, "
          f"{kern.attr('local_size_bytes')} B local, {kern.smem} B dynamic shared, block {meta['block'][0]}, "
          f"grid at 4096^3 {meta['grid'](4096, 4096, 4096)[0]} ({meta['rung']})")
    all_pass = True
    for (m, n, k) in SHAPES:
        prob = Problem(cp, m, n, k, refs=True)
        try:
            r = correctness(cp, name, meta["prec"], kern.launcher(m, n, k), prob)
            all_pass &= r[4] == "PASS"
            row(fmt_row(name, f"{m}x{n}x{k}", *r, None, None, None))
            if r[4] != "PASS":
                try:
                    error_pattern(cp, meta["prec"], kern.launcher(m, n, k), prob)
                except Exception as exc:  # noqa: BLE001
                    print(f"    error pattern: FAILED {exc.__class__.__name__}: {str(exc)[:200]}")
            if (m, n, k) == (4096, 4096, 4096):
                res["err4096"] = r[0]
        except Exception as exc:  # noqa: BLE001
            all_pass = False
            row(f"{name:26s} {m}x{n}x{k}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
            traceback.print_exc(limit=2)
            print("RESULT " + json.dumps(res))
            return 1  # a failed launch may have left the context unusable
        del prob
        cp.get_default_memory_pool().free_all_blocks()
    res["pass"] = all_pass
    for n in sizes:
        prob = Problem(cp, n, n, n, refs=False)
        try:
            a, b = prob.inputs(meta["prec"])
            c = cp.empty((n, n), dtype=cp.float32)
            launch = kern.launcher(n, n, n)
            ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
            res["ms"][str(n)] = ms
            pm = peer_ms.get(f"{peer_of(meta['prec'])}:{n}")
            row(fmt_row(name, f"{n}^3", None, None, None, None, None, ms, 2.0 * n ** 3 / ms / 1e9,
                        pm / ms if pm else None))
        except Exception as exc:  # noqa: BLE001
            row(f"{name:26s} {n}^3: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
        del prob
        cp.get_default_memory_pool().free_all_blocks()
    print("RESULT " + json.dumps(res))
    return 0 if all_pass else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="time at 4096 only")
    ap.add_argument("--kernel", help=argparse.SUPPRESS)  # child mode
    ap.add_argument("--peer-ms", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--only", default="", help="comma-separated kernel names (default: all)")
    args = ap.parse_args()
    sizes = [4096] if args.quick else [4096, 8192]

    import json
    import subprocess

    sys.path.insert(0, str(SRC.parent))
    if args.kernel:
        return child(args.kernel, json.loads(args.peer_ms), sizes)

    import cupy as cp

    from rooflab.cuda import cublas

    t_start = time.time()
    cc, props, name = device(cp)
    arch = f"sm_{cc}"
    print(f"device: {name}, cc {cc}, {props['multiProcessorCount']} SMs; CuPy {cp.__version__}; "
          f"kernels compiled with -arch={arch} (sm_90a for the wgmma ones); each kernel runs in its own process")
    kernels = list(KERNELS)
    if cc == "90":
        kernels += KERNELS_90A
    else:
        print(f"{', '.join(k['name'] for k in KERNELS_90A)}: skipped (need sm_90a, device is {arch})")
    if args.only:
        kernels = [k for k in kernels if k["name"] in args.only.split(",")]

    peers = {
        "cublas_sgemm": ("fp32", cublas.sgemm),
        "cublas_tf32": ("tf32", cublas.gemm_tf32),
        "cublas_bf16": ("bf16", cublas.gemm_bf16),
    }

    # ---------------------------------------------------------------- the cuBLAS peers
    print("\n== cuBLAS peers: errors at 4096^3, timing (CUDA events, 1 warm-up + 20 reps, median)")
    print(HEADER)
    peer_err: dict[str, float] = {}
    prob = Problem(cp, 4096, 4096, 4096, refs=True)
    for pname, (prec, make) in peers.items():
        try:
            r = correctness(cp, pname, prec, make(4096, 4096, 4096), prob, check_det=False)
            peer_err[pname] = r[0]
            row(fmt_row(pname, "4096x4096x4096", *r[:2], r[2], r[3], "-", None, None, None))
        except Exception as exc:  # noqa: BLE001
            row(f"{pname:26s} 4096^3: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
    del prob
    peer_ms: dict[str, float] = {}
    for n in sizes:
        prob = Problem(cp, n, n, n, refs=False)
        for pname, (prec, make) in peers.items():
            try:
                a, b = prob.inputs(prec)
                c = cp.empty((n, n), dtype=cp.float32)
                launch = make(n, n, n)
                ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
                peer_ms[f"{pname}:{n}"] = ms
                row(fmt_row(pname, f"{n}^3", None, None, None, None, None, ms, 2.0 * n ** 3 / ms / 1e9, 1.0))
            except Exception as exc:  # noqa: BLE001
                row(f"{pname:26s} {n}^3: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
        del prob
    cp.get_default_memory_pool().free_all_blocks()

    # ---------------------------------------------------------------- peaks
    print("\n== peak kernels (register-only MMA chains)")
    peak_code = (SRC / "ceilings" / "tensor_peak.cu").read_text()
    try:
        pmod = cp.RawModule(code=peak_code, options=("-std=c++17", INCLUDE, f"-arch={arch}"))
        pmod.compile()
        blocks = 8 * props["multiProcessorCount"]
        out = cp.empty(blocks * 256, dtype=cp.float32)
        for kname, flop_mma in (("mma_peak_bf16", 4096), ("mma_peak_tf32", 2048)):
            try:
                fn = pmod.get_function(kname)
                iters = 20000
                ms = time_ms(cp, lambda: fn((blocks,), (256,), (out, np.int32(iters))), reps=5)  # noqa: B023
                flop = iters * 32.0 * flop_mma * blocks * 256 / 32
                ok = bool(cp.all(cp.isfinite(out)))
                print(f"{kname:16s} {ms:8.3f} ms  {flop / ms / 1e9:8.1f} TFLOP/s  (output finite: {ok})")
            except Exception as exc:  # noqa: BLE001
                print(f"{kname}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
    except Exception as exc:  # noqa: BLE001
        print(f"tensor_peak.cu: FAILED to compile: {exc.__class__.__name__}: {str(exc)[:2000]}")
    if "wgmma_peak_bf16" in peak_code and cc == "90":
        try:
            wmod = cp.RawModule(code=peak_code, options=("-std=c++17", INCLUDE, "-arch=sm_90a"))
            wmod.compile()
            blocks = 2 * props["multiProcessorCount"]
            out = cp.empty(blocks * 128, dtype=cp.float32)
            iters = 20000
            # 8 wgmma per iteration per block (one warpgroup): m64n256k16 BF16 or m64n256k8 TF32
            for kname, flop_wgmma in (("wgmma_peak_bf16", 2 * 64 * 256 * 16), ("wgmma_peak_tf32", 2 * 64 * 256 * 8)):
                if kname not in peak_code:
                    continue
                try:
                    fn = wmod.get_function(kname)
                    ms = time_ms(cp, lambda: fn((blocks,), (128,), (out, np.int32(iters))), reps=5)  # noqa: B023
                    flop = iters * 8.0 * flop_wgmma * blocks
                    print(f"{kname:16s} {ms:8.3f} ms  {flop / ms / 1e9:8.1f} TFLOP/s  "
                          f"(output finite: {bool(cp.all(cp.isfinite(out)))})")
                except Exception as exc:  # noqa: BLE001
                    print(f"{kname}: FAILED {exc.__class__.__name__}: {str(exc)[:600]}")
        except Exception as exc:  # noqa: BLE001
            print(f"wgmma peaks: FAILED {exc.__class__.__name__}: {str(exc)[:600]}")

    # ---------------------------------------------------------------- our kernels, one process each
    print("\n== kernels: correctness (own = reference with inputs rounded as the kernel does), then timing")
    print(HEADER)
    sys.stdout.flush()
    results = []
    all_pass = True
    for meta in kernels:
        if time.time() - t_start > 200:
            print(f"{meta['name']}: skipped (time budget)")
            all_pass = False
            continue
        cmd = [sys.executable, str(Path(__file__).resolve()), "--kernel", meta["name"], "--peer-ms",
               json.dumps(peer_ms)] + (["--quick"] if args.quick else [])
        try:
            proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                      x for x in (str(SRC.parent), os.environ.get("PYTHONPATH")) if x)})
            out_lines = proc.stdout.splitlines()
            for line in out_lines:
                if not line.startswith("RESULT "):
                    print(line)
            if proc.returncode not in (0, 1) or proc.stderr.strip():
                print(f"{meta['name']}: exit {proc.returncode}; stderr tail:\n{proc.stderr[-1500:]}")
            res = next((json.loads(x[7:]) for x in out_lines if x.startswith("RESULT ")), None)
        except subprocess.TimeoutExpired as exc:
            print(f"{meta['name']}: HANG/TIMEOUT after {CHILD_TIMEOUT} s (killed); output so far:\n"
                  f"{(exc.stdout or b'').decode(errors='replace') if isinstance(exc.stdout, bytes) else exc.stdout}")
            res = None
        sys.stdout.flush()
        if res is None or not res["pass"]:
            all_pass = False
        if res is not None:
            results.append(res)

    # ---------------------------------------------------------------- goals
    print("\n== goals")
    sg_err, sg_ms = peer_err.get("cublas_sgemm"), peer_ms.get("cublas_sgemm:4096")
    for r in results:
        if not r["compiled"]:
            continue
        ms = r["ms"]
        if r["prec"] == "fp32":  # 3xTF32
            speed = sg_ms / ms["4096"] if sg_ms and "4096" in ms else None
            acc_ok = r["err4096"] is not None and sg_err is not None and r["err4096"] <= sg_err
            print(f"3xTF32 {r['name']:22s} err(4096) {r['err4096'] if r['err4096'] is not None else float('nan'):.2e}"
                  f" vs SGEMM {sg_err if sg_err else float('nan'):.2e}: {'OK' if acc_ok else 'NOT MET'};  "
                  f"speed vs SGEMM at 4096 {speed if speed else float('nan'):.2f}x (need 1.5): "
                  f"{'OK' if speed and speed >= 1.5 else 'NOT MET'}")
        else:
            peer = peer_of(r["prec"])
            for n in ("4096", "8192"):
                pm = peer_ms.get(f"{peer}:{n}")
                if pm and n in ms:
                    ratio = pm / ms[n]
                    need = " (goal at 8192: 0.9)" if n == "8192" and r["rung"] in ("wgmma_bf16", "wgmma_tf32") else ""
                    print(f"{r['prec'].upper():6s} {r['name']:22s} {n}^3 {2.0 * int(n) ** 3 / ms[n] / 1e9:7.1f} TFLOP/s"
                          f" = {ratio:.3f}x {peer}{need}")

    print(f"\nall kernel correctness checks passed: {all_pass}; total {time.time() - t_start:.1f} s")
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
