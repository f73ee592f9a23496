"""GPU-to-GPU and host↔device copy bandwidth on one node.

For every ordered pair of GPUs (i→j), one direction and both directions at once:

- copy engine: cudaMemcpyPeerAsync on a stream of the source GPU;
- SM copy: a uint4 copy kernel (ceilings/peer_copy.cu) launched on the destination
  GPU, reading the source GPU's memory over the link (peer access on), as
  nvbandwidth's SM read copies do;

and for every GPU, pinned host memory → device and device → pinned host memory.

Every copy runs once on a poisoned destination and must reproduce the source's
pattern exactly (compared on the destination, element by element) before it is
timed; it is compared again after the timed reps. Timing: CUDA events on the issuing
stream around each rep, after warm-up; both-direction reps put one start event on
the first stream, make the second stream wait for it, and end on the first stream
after it has waited for the second: the time of the slower direction. Figures are
medians; GB/s = bytes moved (both directions counted) / time, 1e9 bytes/s.

The link kind and its theoretical rate come from NVML (cuda.inventory, model.fleet.topology).
Run with CUDA_VISIBLE_DEVICES naming the node's GPUs; device ordinals in the
section are this process's.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from rooflab import ceilings
from rooflab.cuda import inventory
from rooflab.cuda.safe_env import apply_safe_env
from rooflab.errors import UsageError
from rooflab.model.fleet import topology

_H2D, _D2H = 1, 2  # cudaMemcpyKind
_ALREADY_ENABLED = 704  # cudaErrorPeerAccessAlreadyEnabled
_SM_COUNT = 16  # cudaDevAttrMultiProcessorCount
_THREADS_PER_SM = 39  # cudaDevAttrMaxThreadsPerMultiProcessor
_GOLDEN = 2654435761
_POISON = 0xFFFFFFFF
MiB = 2**20


@dataclass
class LinksConfig:
    nbytes: int = 256 * MiB
    reps: int = 20
    warmup: int = 2
    host: bool = True
    sm_copy: bool = True
    bidirectional: bool = True
    block: int = 512

    def validate(self) -> None:
        if self.nbytes < MiB or self.nbytes % 16:
            raise UsageError(f"link copy size must be at least 1 MiB and a multiple of 16 bytes, got {self.nbytes}")
        if self.reps < 1 or self.warmup < 0:
            raise UsageError("reps must be at least 1 and warm-up not negative")
        if self.block % 32 or not 32 <= self.block <= 1024:
            raise UsageError("block must be a multiple of 32 between 32 and 1024")


def pattern(xp, count: int, seed: int):
    """uint32 values that depend on the index and the seed (numpy or cupy as xp)."""
    idx = xp.arange(count, dtype=xp.uint32)
    return idx * xp.uint32(_GOLDEN) + xp.uint32((seed * 0x9E3779B9 + 0x7F4A7C15) & 0xFFFFFFFF)


def _stats(times_ms: list[float], warmup: int) -> dict:
    return {"times_ms": times_ms, "reps": len(times_ms), "warmup": warmup, "median_ms": statistics.median(times_ms),
            "min_ms": min(times_ms), "max_ms": max(times_ms), "mean_ms": statistics.fmean(times_ms)}


def result(nbytes: float, times_ms: list[float], warmup: int, verified_after: bool | None) -> dict:
    st = _stats(times_ms, warmup)
    return {"verified": True, "verified_after": verified_after, "bytes": nbytes,
            "gbs": nbytes / (st["median_ms"] * 1e-3) / 1e9, "gbs_best": nbytes / (st["min_ms"] * 1e-3) / 1e9,
            "timing": st}


class _Node:
    """Buffers, streams and the timing loop over this process's GPUs."""

    def __init__(self, cfg: LinksConfig):
        from rooflab.cuda.gpu import cupy

        self.cp = cp = cupy()
        self.cfg = cfg
        self.count = cfg.nbytes // 4
        self.n = cp.cuda.runtime.getDeviceCount()
        self.src, self.dst, self.streams, self.grid = [], [], [], []
        for d in range(self.n):
            with cp.cuda.Device(d):
                self.src.append(pattern(cp, self.count, d))
                self.dst.append(cp.empty(self.count, dtype=cp.uint32))
                self.streams.append(cp.cuda.Stream(non_blocking=True))
                sms = int(cp.cuda.runtime.deviceGetAttribute(_SM_COUNT, d))
                tps = int(cp.cuda.runtime.deviceGetAttribute(_THREADS_PER_SM, d))
                self.grid.append(ceilings.PEER_COPY.grid(sms, tps, cfg.block))
                cp.cuda.Device(d).synchronize()  # the pattern was written on the default stream

    def sync(self, devs) -> None:
        for d in devs:
            with self.cp.cuda.Device(d):
                self.streams[d].synchronize()

    def poison(self, devs) -> None:
        for d in devs:
            with self.cp.cuda.Device(d):
                self.dst[d].fill(np.uint32(_POISON))
                self.cp.cuda.Device(d).synchronize()

    def holds(self, d: int, seed: int) -> bool:
        """Does dst[d] hold exactly the pattern of GPU `seed`'s source?"""
        cp = self.cp
        with cp.cuda.Device(d):
            want = pattern(cp, self.count, seed)
            ok = bool(cp.array_equal(self.dst[d], want))
            del want
        return ok

    def ce(self, i: int, j: int, on: int) -> None:
        """Copy engine: src[i] -> dst[j], issued on GPU `on`'s stream."""
        cp = self.cp
        with cp.cuda.Device(on):
            cp.cuda.runtime.memcpyPeerAsync(self.dst[j].data.ptr, j, self.src[i].data.ptr, i, self.cfg.nbytes,
                                            self.streams[on].ptr)

    def sm(self, i: int, j: int) -> None:
        """SM copy: kernel on GPU j reads src[i] over the link, writes dst[j]."""
        from rooflab.cuda.compile import get_kernel

        cp, rec = self.cp, ceilings.PEER_COPY
        kern = get_kernel(rec.source, rec.entry, rec.options)
        with cp.cuda.Device(j), self.streams[j]:
            kern.launch((self.grid[j], 1, 1), (self.cfg.block, 1, 1),
                        (np.uint64(self.src[i].data.ptr), np.uint64(self.dst[j].data.ptr),
                         np.uint64(rec.elements(self.cfg.nbytes))))

    def time(self, enqueue: Callable[[], None], lanes: list[int]) -> list[float]:
        """Median-ready times (ms) of `enqueue`, which issues work on the streams of `lanes`
        (lanes[0] carries the events; the others join it)."""
        cp, cfg = self.cp, self.cfg
        for _ in range(cfg.warmup):
            enqueue()
        self.sync(lanes)
        first, rest = lanes[0], lanes[1:]
        evs = []
        for _ in range(cfg.reps):
            with cp.cuda.Device(first):
                start, stop = cp.cuda.Event(), cp.cuda.Event()
            joins = []
            for d in rest:
                with cp.cuda.Device(d):
                    joins.append(cp.cuda.Event(disable_timing=True))
            evs.append((start, stop, joins))
        for start, stop, joins in evs:
            with cp.cuda.Device(first):
                start.record(self.streams[first])
            for d in rest:
                with cp.cuda.Device(d):
                    self.streams[d].wait_event(start)
            enqueue()
            for d, ev in zip(rest, joins, strict=True):
                with cp.cuda.Device(d):
                    ev.record(self.streams[d])
            with cp.cuda.Device(first):
                for ev in joins:
                    self.streams[first].wait_event(ev)
                stop.record(self.streams[first])
        self.sync(lanes)
        with cp.cuda.Device(first):
            return [cp.cuda.get_elapsed_time(a, b) for a, b, _ in evs]

    def measure(self, enqueue: Callable[[], None], lanes: list[int], checks: list[tuple[int, int]],
                nbytes: float) -> dict:
        """Poison the destinations, run once, check, time, check again."""
        dests = [d for d, _ in checks]
        self.poison(dests)
        enqueue()
        self.sync(lanes)
        if not all(self.holds(d, seed) for d, seed in checks):
            return {"verified": False, "bytes": nbytes, "gbs": None,
                    "error": "the destination does not hold the source's bytes after the copy"}
        times = self.time(enqueue, lanes)
        return result(nbytes, times, self.cfg.warmup, all(self.holds(d, seed) for d, seed in checks))


def _guard(errors: list[str], label: str, fn: Callable[[], dict]) -> dict:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 (one failing copy must not lose the rest)
        msg = f"{label}: {exc.__class__.__name__}: {' '.join(str(exc).split())}"
        errors.append(msg)
        return {"verified": False, "gbs": None, "error": msg}


def _enable_peers(cp, n: int) -> list[list[bool | None]]:
    """Enable peer access for every pair that supports it; tolerate 'already enabled'."""
    access: list[list[bool | None]] = [[None] * n for _ in range(n)]
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            can = bool(cp.cuda.runtime.deviceCanAccessPeer(a, b))
            if can:
                with cp.cuda.Device(a):
                    try:
                        cp.cuda.runtime.deviceEnablePeerAccess(b)
                    except cp.cuda.runtime.CUDARuntimeError as exc:
                        if getattr(exc, "status", None) != _ALREADY_ENABLED and "already" not in str(exc).lower():
                            raise
            access[a][b] = can
    return access


def describe_devices(cp, n: int) -> list[dict]:
    """This process's ordinals matched to NVML's view (UUID, nvidia-smi index) by PCI bus id."""
    inv = inventory.read_all()
    out = []
    for d in range(n):
        bus = inventory.normalize_bus_id(cp.cuda.Device(d).pci_bus_id)
        e = next((g for g in inv if g.get("pci_bus_id") == bus), None) or {}
        props = cp.cuda.runtime.getDeviceProperties(d)
        name = props.get("name", b"")
        out.append({"ordinal": d, "uuid": e.get("uuid"), "index": e.get("index", d), "pci_bus_id": bus,
                    "name": name.decode() if isinstance(name, bytes) else str(name),
                    "cc_major": int(props.get("major", 0)) or None, "inventory": e or None})
    return out


def run(cfg: LinksConfig, progress: Callable[[str], None] | None = None) -> dict:
    """Measure every link this process can see; returns the links section."""
    apply_safe_env()
    cfg.validate()
    say = progress or (lambda _m: None)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    node = _Node(cfg)
    cp, n, nb = node.cp, node.n, cfg.nbytes
    devices = describe_devices(cp, n)
    errors: list[str] = []
    access = _enable_peers(cp, n) if n > 1 else [[None]]
    pairs = []
    for i in range(n):
        for j in range(n):
            if i != j:
                p2p = inventory.p2p_status(devices[i]["pci_bus_id"], devices[j]["pci_bus_id"])
                link = topology.classify_pair(devices[i]["inventory"], devices[j]["inventory"],
                                              cc_major=devices[i]["cc_major"], p2p=p2p)
                pairs.append({"src": i, "dst": j, "link": link, "p2p": p2p, "peer_access": access[i][j]})
    ce_uni, ce_bi, sm_uni, sm_bi = [], [], [], []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            say(f"copy engine GPU{devices[i]['index']} → GPU{devices[j]['index']}")
            r = _guard(errors, f"CE {i}->{j}", lambda i=i, j=j: node.measure(
                lambda: node.ce(i, j, on=i), [i], [(j, i)], nb))
            ce_uni.append({"src": i, "dst": j, **r})
            if cfg.sm_copy:
                if access[j][i]:
                    say(f"SM copy GPU{devices[i]['index']} → GPU{devices[j]['index']} (kernel on the destination)")
                    r = _guard(errors, f"SM {i}->{j}", lambda i=i, j=j: node.measure(
                        lambda: node.sm(i, j), [j], [(j, i)], nb))
                else:
                    r = {"verified": False, "gbs": None, "error": "no peer access: a kernel cannot read the peer"}
                sm_uni.append({"src": i, "dst": j, **r})
    if cfg.bidirectional:
        for i in range(n):
            for j in range(i + 1, n):
                say(f"copy engine GPU{devices[i]['index']} ↔ GPU{devices[j]['index']}")

                def both_ce(i=i, j=j):
                    node.ce(i, j, on=i)
                    node.ce(j, i, on=j)

                r = _guard(errors, f"CE {i}<->{j}", lambda i=i, j=j, f=both_ce: node.measure(
                    f, [i, j], [(j, i), (i, j)], 2 * nb))
                ce_bi.append({"a": i, "b": j, **r})
                if cfg.sm_copy:
                    if access[i][j] and access[j][i]:
                        def both_sm(i=i, j=j):
                            node.sm(i, j)
                            node.sm(j, i)

                        r = _guard(errors, f"SM {i}<->{j}", lambda i=i, j=j, f=both_sm: node.measure(
                            f, [j, i], [(j, i), (i, j)], 2 * nb))
                    else:
                        r = {"verified": False, "gbs": None, "error": "no peer access both ways"}
                    sm_bi.append({"a": i, "b": j, **r})
    host = []
    if cfg.host:
        host = _host_copies(node, devices, errors, say)
    peer = ceilings.PEER_COPY
    return {
        "config": asdict(cfg),
        "method": {
            "timer": "CUDA events on the issuing stream, per rep, after warm-up; both-direction reps end on the "
                     "first stream after it waited for the second (time of the slower direction)",
            "statistic": "median (min, max, mean and every rep also stored)",
            "bytes": "copy size per direction; both-direction figures count both directions",
            "gbs": "1e9 bytes per second",
            "verified": "destination poisoned, one copy, compared element-wise with the source's index/seed "
                        "pattern on the destination GPU, before and after the timed reps",
            "ce": "cudaMemcpyPeerAsync on a non-blocking stream of the source GPU, peer access enabled",
            "sm": f"{peer.entry} ({peer.source}) on the destination GPU reading the source over the link; grid = "
                  f"one resident wave of {cfg.block}-thread blocks, {peer.unroll} x 16-byte loads in flight per "
                  "thread",
            "host": "cudaMemcpyAsync with pinned host memory (cupy.cuda.alloc_pinned_memory), one GPU at a time",
        },
        "started": started,
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "devices": [{k: v for k, v in d.items() if k != "inventory"} for d in devices],
        "peer_access": access,
        "pairs": pairs,
        "ce_uni": ce_uni, "ce_bidir": ce_bi, "sm_uni": sm_uni, "sm_bidir": sm_bi,
        "host": host,
        "errors": errors,
    }


def _host_copies(node: _Node, devices: list[dict], errors: list[str], say) -> list[dict]:
    cp, nb, count = node.cp, node.cfg.nbytes, node.count
    out = []
    for d in range(node.n):
        say(f"pinned host ↔ GPU{devices[d]['index']}")
        with cp.cuda.Device(d):
            pinned = cp.cuda.alloc_pinned_memory(nb)
        host = np.frombuffer(pinned, dtype=np.uint32, count=count)
        stream = node.streams[d]

        def h2d(d=d, pinned=pinned, stream=stream):
            with cp.cuda.Device(d):
                cp.cuda.runtime.memcpyAsync(node.dst[d].data.ptr, pinned.ptr, nb, _H2D, stream.ptr)

        def d2h(d=d, pinned=pinned, stream=stream):
            with cp.cuda.Device(d):
                cp.cuda.runtime.memcpyAsync(pinned.ptr, node.src[d].data.ptr, nb, _D2H, stream.ptr)

        seed = 1000 + d
        host[:] = pattern(np, count, seed)
        up = _guard(errors, f"H2D {d}", lambda d=d, f=h2d, seed=seed: node.measure(f, [d], [(d, seed)], nb))

        def d2h_measure(d=d, f=d2h, host=host):
            want = pattern(np, count, d)
            host.fill(np.uint32(_POISON))
            f()
            node.sync([d])
            if not np.array_equal(host, want):
                return {"verified": False, "bytes": nb, "gbs": None,
                        "error": "host memory does not hold the GPU's bytes after the copy"}
            times = node.time(f, [d])
            return result(nb, times, node.cfg.warmup, bool(np.array_equal(host, want)))

        down = _guard(errors, f"D2H {d}", d2h_measure)
        link = topology.host_link(devices[d]["inventory"])
        out.append({"device": d, "h2d": up, "d2h": down, "link": link})
        del host, pinned
    return out


# ---------------------------------------------------------------- torch, for comparison

def torch_peer(nbytes: int, reps: int = 20, warmup: int = 2, batch: int = 5) -> dict:
    """PyTorch's own GPU-to-GPU copy (tensor.copy_), as a peer figure beside rooflab's.

    Timed on the host (torch.cuda.synchronize on both GPUs around `batch` copies), since
    which stream torch issues a cross-device copy on is its own business. Checked like
    rooflab's copies. Returns {"available": False, "reason"} where torch is missing."""
    apply_safe_env()
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"torch not importable ({exc.__class__.__name__}: {exc})"}
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        return {"available": False, "reason": "torch sees fewer than 2 GPUs"}
    n = torch.cuda.device_count()
    count = nbytes // 4

    def pat(dev: int, seed: int):
        return torch.arange(count, dtype=torch.int32, device=f"cuda:{dev}") * 7 + seed

    def sync(*devs):
        for d in devs:
            torch.cuda.synchronize(d)

    def timed(fn, devs) -> list[float]:
        for _ in range(warmup):
            fn()
        sync(*devs)
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            sync(*devs)
            out.append((time.perf_counter() - t0) * 1e3 / batch)
        return out

    src = [pat(d, d) for d in range(n)]
    dst = [torch.empty(count, dtype=torch.int32, device=f"cuda:{d}") for d in range(n)]
    uni, bidir = [], []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            dst[j].fill_(-1)
            dst[j].copy_(src[i])
            sync(i, j)
            if not torch.equal(dst[j], pat(j, i)):
                uni.append({"src": i, "dst": j, "verified": False, "gbs": None})
                continue
            times = timed(lambda i=i, j=j: dst[j].copy_(src[i], non_blocking=True), [i, j])
            uni.append({"src": i, "dst": j, **result(nbytes, times, warmup, bool(torch.equal(dst[j], pat(j, i))))})
    for i in range(n):
        for j in range(i + 1, n):
            def both(i=i, j=j):
                dst[j].copy_(src[i], non_blocking=True)
                dst[i].copy_(src[j], non_blocking=True)

            dst[i].fill_(-1)
            dst[j].fill_(-1)
            both()
            sync(i, j)
            if not (torch.equal(dst[j], pat(j, i)) and torch.equal(dst[i], pat(i, j))):
                bidir.append({"a": i, "b": j, "verified": False, "gbs": None})
                continue
            times = timed(both, [i, j])
            bidir.append({"a": i, "b": j, **result(2 * nbytes, times, warmup, True)})
    return {"available": True, "torch_version": torch.__version__, "nbytes": nbytes, "uni": uni, "bidir": bidir,
            "method": f"tensor.copy_(non_blocking=True) between cuda:i and cuda:j; host-timed, {batch} copies "
                      "between torch.cuda.synchronize calls on both GPUs; median of reps"}
