"""Standalone check of the tensor-core rungs on a GPU (written for the H200; any sm_80+ runs).

Usage (repo root): PYTHONPATH=src python3 scripts/dev/check_tensor.py [--quick] [--no-variants]

For every kernel: NVRTC compile (cupy.RawModule), then for each shape a guarded launch
(C NaN-filled, 1024 sentinel floats before and after it, all verified untouched), the
normwise error ||C - ref||_F / ||ref||_F against
  - its own precision's reference: float64 product of the inputs ROUNDED as the kernel
    rounds them (TF32: round to nearest, ties away, 10 mantissa bits = cvt.rna;
    BF16: the inputs are BF16 already), tolerance 1e-5 (FP32 accumulation),
  - the FP32 reference: float64 product of the original FP32 inputs (for 3xTF32 this is
    its own reference, tolerance 1e-5),
a bitwise determinism check (two launches, same bits), then CUDA-event timing (1 warm-up,
20 reps, median) at N = 4096 and 8192 beside its cuBLAS peer: SGEMM (FP32, the project's
rungs/cublas.py launcher, CUBLAS_DEFAULT_MATH) for 3xTF32, gemmEx TF32 for TF32, gemmEx BF16
for BF16. Then the mma.sync peak kernels, and STAGES / GROUP_M variants of each kernel
(compiled with -D) at N = 8192 so one run also says which setting to keep.
A kernel that fails to compile or launch prints FAILED and the script goes on.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[2] / "src" / "rooflab"
GUARD = 1024
SENTINEL = np.float32(-7.25e33)
TOL = 1e-5


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# name, file, precision, block, (BM, BN), smem bytes as a function of the -D overrides, arch
def smem_tf32(stages=3, **_):
    return stages * (128 * 36 + 32 * 264) * 4


def smem_bf16(stages=4, **_):
    return stages * (128 * 40 + 32 * 264) * 2


KERNELS = [
    {"name": "mm_tf32", "file": "rungs/mma_tf32.cu", "prec": "tf32", "block": 256, "tile": (128, 256),
     "smem": smem_tf32, "defaults": {"stages": 3}, "variants": [{"stages": 4}, {"group_m": 16}]},
    {"name": "mm_3xtf32", "file": "rungs/mma_3xtf32.cu", "prec": "fp32", "block": 256, "tile": (128, 256),
     "smem": smem_tf32, "defaults": {"stages": 3}, "variants": [{"acc_flush": 1}, {"stages": 4}, {"group_m": 16}]},
    {"name": "mm_bf16", "file": "rungs/mma_bf16.cu", "prec": "bf16", "block": 256, "tile": (128, 256),
     "smem": smem_bf16, "defaults": {"stages": 4}, "variants": [{"stages": 3}, {"stages": 5}, {"group_m": 16}]},
]


def load_wgmma_meta():
    """wgmma_bf16.cu (sm_90a only); launch constants as in its header comment."""
    f = SRC / "rungs" / "wgmma_bf16.cu"
    if not f.is_file():
        return None
    return {"name": "mm_wgmma_bf16", "file": "rungs/wgmma_bf16.cu", "prec": "bf16", "block": 256,
            "tile": (128, 256), "smem": lambda stages=4, **_: stages * (128 * 64 + 64 * 256) * 2 + 1024,
            "defaults": {"stages": 4}, "variants": [{"inflight": 0}, {"inflight": 0, "stages": 3}, {"group_m": 16}],
            "arch": "sm_90a"}


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
class Compiled:
    def __init__(self, cp, meta, arch, overrides=None):
        self.meta = meta
        overrides = overrides or {}
        params = {**meta["defaults"], **overrides}
        self.params = params
        defs = tuple(f"-D{k.upper()}={v}" for k, v in overrides.items())
        opts = ("-std=c++17", f"-arch={meta.get('arch', arch)}", *defs)
        code = (SRC / meta["file"]).read_text()
        mod = cp.RawModule(code=code, options=opts)
        mod.compile()
        self.fn = mod.get_function(meta["name"])
        self.smem = meta["smem"](**params)
        if self.smem > 48 * 1024:
            self.fn.max_dynamic_shared_size_bytes = self.smem
        self.label = meta["name"] + "".join(f" {k}={v}" for k, v in overrides.items())

    def launcher(self, m, n, k):
        bm, bn = self.meta["tile"]
        grid = (cdiv(m, bm) * cdiv(n, bn), 1, 1)
        block = (self.meta["block"], 1, 1)

        def launch(a, b, c):
            self.fn(grid, block, (a, b, c, np.int32(m), np.int32(n), np.int32(k)), shared_mem=self.smem)

        return launch

    def regs(self):
        try:
            return self.fn.attributes.get("num_regs")
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


def peer_of(prec):
    return {"fp32": "cublas_sgemm", "tf32": "cublas_tf32", "bf16": "cublas_bf16"}[prec]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip 8192 and the variants")
    ap.add_argument("--no-variants", action="store_true")
    args = ap.parse_args()

    import cupy as cp

    sys.path.insert(0, str(SRC.parent))
    from rooflab.cuda import cublas as cublas_fp32
    from rooflab.cuda import cublas as cublas_tensor

    t_start = time.time()
    dev = cp.cuda.Device()
    cc = dev.compute_capability
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    arch = f"sm_{cc}"
    print(f"device: {name}, cc {cc}, {props['multiProcessorCount']} SMs; CuPy {cp.__version__}; "
          f"kernels compiled with -arch={arch}")
    kernels = list(KERNELS)
    wg = load_wgmma_meta()
    if wg is not None:
        if cc == "90":
            kernels.append(wg)
        else:
            print(f"{wg['name']}: skipped (needs sm_90a, device is {arch})")

    compiled = {}
    for meta in kernels:
        t0 = time.time()
        try:
            compiled[meta["name"]] = Compiled(cp, meta, arch)
            print(f"compiled {meta['name']:16s} in {time.time() - t0:5.1f} s, "
                  f"{compiled[meta['name']].regs()} registers, {compiled[meta['name']].smem} B dynamic shared")
        except Exception as exc:  # noqa: BLE001
            print(f"{meta['name']}: FAILED to compile: {exc.__class__.__name__}: {str(exc)[:2000]}")

    peers = {
        "cublas_sgemm": ("fp32", cublas_fp32.sgemm),
        "cublas_tf32": ("tf32", cublas_tensor.gemm_tf32),
        "cublas_bf16": ("bf16", cublas_tensor.gemm_bf16),
    }

    # ---------------------------------------------------------------- correctness
    print("\n== correctness (normwise errors; own = reference with inputs rounded as the kernel does)")
    print(HEADER)
    shapes = [(1, 1, 1), (45, 33, 70), (1000, 777, 1234), (1000, 776, 1232), (4096, 4096, 4096)]
    all_pass = True
    for (m, n, k) in shapes:
        prob = Problem(cp, m, n, k, refs=True)
        for pname, (prec, make) in peers.items():
            if (m, n, k) != (4096, 4096, 4096):
                continue  # cuBLAS: only the big shape, as a yardstick for the errors
            try:
                res = correctness(cp, pname, prec, make(m, n, k), prob, check_det=False)
                row(fmt_row(pname, f"{m}x{n}x{k}", *res[:2], res[2], res[3], "-", None, None, None))
            except Exception as exc:  # noqa: BLE001
                row(f"{pname:26s} {m}x{n}x{k}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
        for kname, kern in compiled.items():
            try:
                res = correctness(cp, kname, kern.meta["prec"], kern.launcher(m, n, k), prob)
                all_pass &= res[4] == "PASS"
                row(fmt_row(kname, f"{m}x{n}x{k}", *res, None, None, None))
            except Exception as exc:  # noqa: BLE001
                all_pass = False
                row(f"{kname:26s} {m}x{n}x{k}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
                traceback.print_exc(limit=2)
        del prob
        cp.get_default_memory_pool().free_all_blocks()

    # ---------------------------------------------------------------- timing
    print("\n== timing (CUDA events, 1 warm-up + 20 reps, median; ratio vs the cuBLAS peer)")
    print(HEADER)
    sizes = [4096] if args.quick else [4096, 8192]
    peer_ms: dict[tuple[str, int], float] = {}
    for n in sizes:
        prob = Problem(cp, n, n, n, refs=False)
        flop = 2.0 * n ** 3
        for pname, (prec, make) in peers.items():
            try:
                a, b = prob.inputs(prec)
                c = cp.empty((n, n), dtype=cp.float32)
                launch = make(n, n, n)
                ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
                peer_ms[(pname, n)] = ms
                row(fmt_row(pname, f"{n}^3", None, None, None, None, None, ms, flop / ms / 1e9, 1.0))
            except Exception as exc:  # noqa: BLE001
                row(f"{pname:26s} {n}^3: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
        for kname, kern in compiled.items():
            try:
                prec = kern.meta["prec"]
                a, b = prob.inputs(prec)
                c = cp.empty((n, n), dtype=cp.float32)
                launch = kern.launcher(n, n, n)
                ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
                pm = peer_ms.get((peer_of(prec), n))
                row(fmt_row(kname, f"{n}^3", None, None, None, None, None, ms, flop / ms / 1e9,
                            pm / ms if pm else None))
            except Exception as exc:  # noqa: BLE001
                row(f"{kname:26s} {n}^3: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
        del prob
        cp.get_default_memory_pool().free_all_blocks()

    # ---------------------------------------------------------------- peaks
    print("\n== peak kernels (register-only MMA chains; block 256, grid 8 x SMs)")
    try:
        peak_code = (SRC / "ceilings" / "tensor_peak.cu").read_text()
        pmod = cp.RawModule(code=peak_code, options=("-std=c++17", f"-arch={arch}"))
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
    if (SRC / "ceilings" / "tensor_peak.cu").read_text().find("wgmma_peak_bf16") >= 0 and cc == "90":
        try:
            wmod = cp.RawModule(code=(SRC / "ceilings" / "tensor_peak.cu").read_text(),
                                options=("-std=c++17", "-arch=sm_90a"))
            wmod.compile()
            fn = wmod.get_function("wgmma_peak_bf16")
            blocks = 2 * props["multiProcessorCount"]
            out = cp.empty(blocks * 128, dtype=cp.float32)
            iters = 20000
            ms = time_ms(cp, lambda: fn((blocks,), (128,), (out, np.int32(iters))), reps=5)
            # 8 wgmma m64n256k16 per iteration per block (one warpgroup), 2 * 64 * 256 * 16 FLOP each
            flop = iters * 8.0 * 2 * 64 * 256 * 16 * blocks
            print(f"{'wgmma_peak_bf16':16s} {ms:8.3f} ms  {flop / ms / 1e9:8.1f} TFLOP/s  "
                  f"(output finite: {bool(cp.all(cp.isfinite(out)))})")
        except Exception as exc:  # noqa: BLE001
            print(f"wgmma_peak_bf16: FAILED {exc.__class__.__name__}: {str(exc)[:600]}")

    # ---------------------------------------------------------------- variants
    if not (args.quick or args.no_variants):
        print("\n== tuning variants (-D overrides): correctness at 1000x776x1232 and 4096^3, timing at 4096^3, 8192^3")
        print(HEADER)
        small = Problem(cp, 1000, 776, 1232, refs=True)
        big = {n: Problem(cp, n, n, n, refs=(n == 4096)) for n in (4096, 8192)}
        for meta in kernels:
            if meta["name"] not in compiled:
                continue
            for ov in meta["variants"]:
                if time.time() - t_start > 100:
                    print("(time budget reached: remaining variants skipped)")
                    break
                try:
                    kern = Compiled(cp, meta, arch, ov)
                    res = correctness(cp, kern.label, meta["prec"], kern.launcher(1000, 776, 1232), small)
                    row(fmt_row(kern.label, "1000x776x1232", *res, None, None, None))
                    res = correctness(cp, kern.label, meta["prec"], kern.launcher(4096, 4096, 4096), big[4096],
                                      check_det=False)
                    row(fmt_row(kern.label, "4096x4096x4096", *res, None, None, None))
                    for n, prob in big.items():
                        a, b = prob.inputs(meta["prec"])
                        c = cp.empty((n, n), dtype=cp.float32)
                        launch = kern.launcher(n, n, n)
                        ms = time_ms(cp, lambda: launch(a, b, c))  # noqa: B023
                        pm = peer_ms.get((peer_of(meta["prec"]), n))
                        row(fmt_row(kern.label, f"{n}^3", None, None, None, None, None, ms,
                                    2.0 * n ** 3 / ms / 1e9, pm / ms if pm else None))
                except Exception as exc:  # noqa: BLE001
                    row(f"{meta['name']} {ov}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")

    print(f"\nall kernel correctness checks passed: {all_pass}; total {time.time() - t_start:.1f} s")
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
