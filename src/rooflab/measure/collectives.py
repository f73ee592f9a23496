"""All-reduce bus bandwidth against message size, through NCCL (issue 12).

nccl-tests' definitions (fleet.nccl_math): algbw = bytes / time, busbw = algbw x
2(n-1)/n. float32 sum, out of place. Each rank's send buffer holds (rank + 1) +
(i mod 7) at element i, so the sum is n(n+1)/2 + n (i mod 7) exactly (small integers
in float32); the receive buffers are poisoned with NaN, and every size is checked
element by element on every GPU before it is timed and again after. Warm-up, then
CUDA events around each all-reduce on every rank's stream; a rep's time is the
slowest rank's; figures are medians.

Backends, in order: CuPy's NCCL binding with one process driving every GPU here
(ncclCommInitAll, calls between ncclGroupStart/End); else torch.distributed's NCCL
backend, one subprocess per GPU; else a section that says NCCL is not available.
NCCL_NVLS_ENABLE=0 is forced before any communicator exists (fleet.safety).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import glob
import importlib
import os
import socket
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rooflab.errors import RooflabError, UsageError
from rooflab.fleet import nccl_math
from rooflab.fleet.safety import SAFE_ENV, apply_safe_env

_NCCL_FLOAT32, _NCCL_SUM = 7, 0  # ncclFloat32, ncclSum


class NcclUnavailable(RooflabError):
    """No usable NCCL binding here."""


@dataclass
class AllreduceConfig:
    min_bytes: int = 1024
    max_bytes: int = 2**30
    factor: int = 2
    reps: int = 20
    warmup: int = 5

    def validate(self) -> None:
        if not 4 <= self.min_bytes <= self.max_bytes:
            raise UsageError(f"all-reduce sizes: need 4 <= min ({self.min_bytes}) <= max ({self.max_bytes})")
        if self.factor < 2:
            raise UsageError("all-reduce size factor must be at least 2")
        if self.reps < 1 or self.warmup < 0:
            raise UsageError("all-reduce reps must be at least 1 and warm-up not negative")

    def sizes(self) -> list[int]:
        return nccl_math.sizes(self.min_bytes, self.max_bytes, self.factor)


def _env() -> dict:
    return {k: os.environ.get(k) for k in SAFE_ENV}


def _libnccl_candidates() -> list[str]:
    out: list[str] = []
    for base in sys.path:
        for sub in ("nvidia/nccl/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"):
            out += sorted(glob.glob(os.path.join(base or ".", sub, "libnccl.so*")))
    return out


def load_nccl():
    """CuPy's NCCL binding (raises NcclUnavailable). Where CuPy cannot find libnccl by
    itself, a pip-installed one (nvidia-nccl-cu12/13, e.g. torch's) is loaded first."""
    apply_safe_env()
    from rooflab.cuda.gpu import cupy

    cupy()
    reason = "cupy.cuda.nccl reports NCCL unavailable"
    try:
        from cupy.cuda import nccl

        if getattr(nccl, "available", False) and hasattr(nccl, "NcclCommunicator"):
            return nccl
    except Exception as exc:  # noqa: BLE001
        reason = f"cupy.cuda.nccl: {exc.__class__.__name__}: {exc}"
    for lib in _libnccl_candidates():
        try:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            mod = importlib.import_module("cupy_backends.cuda.libs.nccl")
        except Exception:  # noqa: BLE001,S112
            continue
        if hasattr(mod, "NcclCommunicator"):
            return mod
    raise NcclUnavailable(f"NCCL not available through CuPy ({reason})")


def _row(size: int, n: int, times_ms: list[float], ok: bool, ok_after: bool | None) -> dict:
    med, best = statistics.median(times_ms), min(times_ms)
    return {"bytes": size, "count": size // 4, "dtype": "float32", "op": "sum", "verified": ok,
            "verified_after": ok_after, "time_us": med * 1e3, "min_us": best * 1e3,
            "algbw_gbs": nccl_math.algbw_gbs(size, med * 1e-3),
            "busbw_gbs": nccl_math.busbw_gbs(size, med * 1e-3, n),
            "busbw_best_gbs": nccl_math.busbw_gbs(size, best * 1e-3, n),
            "times_us": [t * 1e3 for t in times_ms]}


def _method(cfg: AllreduceConfig, backend: str) -> dict:
    return {"backend": backend, "op": "all-reduce, float32 sum, out of place",
            "algbw": "bytes / time", "busbw": "algbw x 2(n-1)/n (nccl-tests)",
            "timer": "CUDA events around each all-reduce on every rank's stream; a rep's time is the slowest rank's",
            "statistic": "median of reps", "warmup": cfg.warmup, "reps": cfg.reps,
            "verified": "receive buffers poisoned with NaN; result compared element-wise with n(n+1)/2 + n (i mod 7) "
                        "on every GPU, before and after the timed reps"}


def run(cfg: AllreduceConfig, progress: Callable[[str], None] | None = None) -> dict:
    """All-reduce over every GPU this process sees, one process (CuPy + NCCL)."""
    apply_safe_env()
    cfg.validate()
    say = progress or (lambda _m: None)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    try:
        nccl = load_nccl()
    except NcclUnavailable as exc:
        return {"available": False, "reason": str(exc), "backend": "cupy.cuda.nccl", "env": _env()}
    from rooflab.cuda.gpu import cupy
    from rooflab.measure.links import describe_devices

    cp = cupy()
    n = cp.cuda.runtime.getDeviceCount()
    if n < 2:
        return {"available": False, "reason": f"{n} GPU visible: all-reduce needs at least 2",
                "backend": "cupy.cuda.nccl", "env": _env()}
    f32 = getattr(nccl, "NCCL_FLOAT32", _NCCL_FLOAT32)
    op_sum = getattr(nccl, "NCCL_SUM", _NCCL_SUM)
    devs = list(range(n))
    max_count = max(cfg.sizes()) // 4
    send, recv, streams = [], [], []
    for d in devs:
        with cp.cuda.Device(d):
            send.append((cp.arange(max_count, dtype=cp.int64) % 7).astype(cp.float32) + cp.float32(d + 1))
            recv.append(cp.empty(max_count, dtype=cp.float32))
            streams.append(cp.cuda.Stream(non_blocking=True))
            cp.cuda.Device(d).synchronize()
    say(f"NCCL communicators over {n} GPUs")
    comms = nccl.NcclCommunicator.initAll(devs)
    rows, errors = [], []

    def once(count: int) -> None:
        nccl.groupStart()
        try:
            for d in devs:
                with cp.cuda.Device(d):
                    comms[d].allReduce(send[d].data.ptr, recv[d].data.ptr, count, f32, op_sum, streams[d].ptr)
        finally:
            nccl.groupEnd()

    def sync() -> None:
        for d in devs:
            with cp.cuda.Device(d):
                streams[d].synchronize()

    def correct(count: int) -> bool:
        ok = True
        for d in devs:
            with cp.cuda.Device(d):
                want = (cp.arange(count, dtype=cp.int64) % 7).astype(cp.float32) * cp.float32(n) + \
                    cp.float32(n * (n + 1) / 2)
                ok = ok and bool(cp.array_equal(recv[d][:count], want))
                del want
        return ok

    try:
        for size in cfg.sizes():
            count = size // 4
            say(f"all-reduce {size} bytes")
            try:
                for d in devs:
                    with cp.cuda.Device(d):
                        recv[d][:count].fill(cp.nan)
                        cp.cuda.Device(d).synchronize()
                once(count)
                sync()
                if not correct(count):
                    rows.append({"bytes": size, "count": count, "verified": False, "busbw_gbs": None,
                                 "error": "wrong sum"})
                    continue
                for _ in range(cfg.warmup):
                    once(count)
                sync()
                evs = []
                for _ in range(cfg.reps):
                    pair = []
                    for d in devs:
                        with cp.cuda.Device(d):
                            pair.append((cp.cuda.Event(), cp.cuda.Event()))
                    evs.append(pair)
                for pair in evs:
                    for d in devs:
                        with cp.cuda.Device(d):
                            pair[d][0].record(streams[d])
                    once(count)
                    for d in devs:
                        with cp.cuda.Device(d):
                            pair[d][1].record(streams[d])
                sync()
                times = []
                for pair in evs:
                    t = 0.0
                    for d in devs:
                        with cp.cuda.Device(d):
                            t = max(t, cp.cuda.get_elapsed_time(pair[d][0], pair[d][1]))
                    times.append(t)
                rows.append(_row(size, n, times, True, correct(count)))
            except Exception as exc:  # noqa: BLE001 (an NCCL or CUDA failure ends the sweep; keep what was measured)
                errors.append(f"{size} bytes: {exc.__class__.__name__}: {' '.join(str(exc).split())}")
                break
    finally:
        for c in comms:
            with contextlib.suppress(Exception):
                c.destroy()
    version = None
    with contextlib.suppress(Exception):
        version = int(nccl.get_version())
    return {"available": True, "backend": "cupy.cuda.nccl", "nccl_version": version, "ranks": n,
            "devices": [{k: v for k, v in x.items() if k != "inventory"} for x in describe_devices(cp, n)],
            "env": _env(), "config": asdict(cfg), "method": _method(cfg, "CuPy NCCL, ncclCommInitAll in one process"),
            "started": started, "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "rows": rows, "errors": errors}


# ---------------------------------------------------------------- torch.distributed fallback

def torch_reason() -> str | None:
    """None where torch with CUDA and NCCL is importable, else why not."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # noqa: BLE001
        return f"torch not importable ({exc.__class__.__name__}: {exc})"
    if not torch.cuda.is_available():
        return "torch sees no GPU"
    if not dist.is_available() or not dist.is_nccl_available():
        return "torch.distributed has no NCCL backend"
    return None


def run_torch_rank(cfg: AllreduceConfig, rank: int, world: int, port: int) -> dict | None:
    """One rank of the torch.distributed fallback (GPU `rank` of those visible).
    Rank 0 returns the section, the others None."""
    apply_safe_env()
    cfg.validate()
    import torch
    import torch.distributed as dist

    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    rows, errors = [], []
    try:
        for size in cfg.sizes():
            count = size // 4
            base = (torch.arange(count, device=dev) % 7).to(torch.float32)
            buf = base + float(rank + 1)
            dist.all_reduce(buf)
            torch.cuda.synchronize()
            ok = torch.equal(buf, base * world + world * (world + 1) / 2)
            flag = torch.tensor([1 if ok else 0], device=dev)
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            if not int(flag.item()):
                rows.append({"bytes": size, "count": count, "verified": False, "busbw_gbs": None,
                             "error": "wrong sum"})
                continue
            z = torch.zeros(count, device=dev)
            for _ in range(cfg.warmup):
                dist.all_reduce(z)
            torch.cuda.synchronize()
            dist.barrier()
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(cfg.reps)]
            for a, b in evs:
                a.record()
                dist.all_reduce(z)
                b.record()
            torch.cuda.synchronize()
            times = torch.tensor([a.elapsed_time(b) for a, b in evs], device=dev, dtype=torch.float64)
            dist.all_reduce(times, op=dist.ReduceOp.MAX)
            rows.append(_row(size, world, times.tolist(), True, None))
    except Exception as exc:  # noqa: BLE001
        errors.append(f"{exc.__class__.__name__}: {' '.join(str(exc).split())}")
    finally:
        with contextlib.suppress(Exception):
            dist.destroy_process_group()
    if rank != 0:
        return None
    version = None
    with contextlib.suppress(Exception):
        v = torch.cuda.nccl.version()
        version = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    return {"available": True, "backend": "torch.distributed", "torch_version": torch.__version__,
            "nccl_version": version,
            "ranks": world, "env": _env(), "config": asdict(cfg),
            "method": _method(cfg, "torch.distributed NCCL backend, one process per GPU (in place; timed on a "
                                   "zero buffer, checked on the patterned one)"),
            "started": started, "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "rows": rows, "errors": errors}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_torch_group(cfg: AllreduceConfig, n: int, out_json: str, log_dir: str, timeout_s: float) -> dict:
    """Start `n` torch ranks (python -m rooflab.cli_fleet torch-allreduce-rank), wait,
    and return rank 0's section (or why there is none)."""
    from rooflab.fleet import spawn

    port = free_port()
    Path(out_json).unlink(missing_ok=True)
    args = ["--world", str(n), "--port", str(port), "--out", out_json, "--min", str(cfg.min_bytes),
            "--max", str(cfg.max_bytes), "--factor", str(cfg.factor), "--reps", str(cfg.reps),
            "--warmup", str(cfg.warmup)]
    kids = [spawn.start(f"torch-rank{r}", spawn.rooflab_cmd("torch-allreduce-rank", "--rank", str(r), *args),
                        log=Path(log_dir) / f"torch_allreduce_rank{r}.log") for r in range(n)]
    spawn.wait_all(kids, timeout_s)
    if Path(out_json).is_file():
        import json

        return json.loads(Path(out_json).read_text(encoding="utf-8"))
    why = "; ".join(f"rank {i}: rc {k.rc}{' (timed out)' if k.timed_out else ''}: "
                    f"{spawn.log_tail(k.log, 2)}" for i, k in enumerate(kids))
    return {"available": False, "backend": "torch.distributed", "reason": f"torch ranks failed: {why}", "env": _env()}
