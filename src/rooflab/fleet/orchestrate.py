"""Running a fleet report: who measures what, in which process, in which order.

Per-GPU measurements are independent: each GPU gets its own process
(`python -m rooflab.fleet.worker worker`, CUDA_VISIBLE_DEVICES set to that GPU's UUID),
all at once. Link and collective measurements need every GPU of a node and run after
them, alone, each in its own process too (a hung NCCL call is ended by its timeout
and cannot take the report down with it).

- `run_devices`: one process drives one node (`fleet report --devices all`).
- `run_rank`: one process per GPU under torchrun / srun / mpirun (`--shared-dir`).
  Each rank measures its GPU and writes ranks/rankR.json; local rank 0 of each node
  waits for every rank (polling the shared directory, with a timeout), then measures
  its node's links; rank 0 waits for every node and merges. Files carry the run's
  token (the launcher's job id, else rank 0's run.json), so a reused directory's
  stale files are ignored.

Both end in the same merged document (merge.merge). Nothing here prints.
"""

from __future__ import annotations

import json
import time
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rooflab import results
from rooflab.errors import NoGPUError, UsageError
from rooflab.cuda import inventory
from rooflab.fleet import launcher, layout, merge, spawn
from rooflab.fleet.layout import FleetError

MiB = 2**20


@dataclass
class FleetConfig:
    out_dir: str = "rooflab-fleet"
    devices: str = "all"
    quick: bool = False
    n: int = 4096
    profile: bool = False
    render_gpu_reports: bool = True
    links: bool = True
    allreduce: bool = True
    torch_peer: bool = True
    link_bytes: int = 256 * MiB
    link_reps: int | None = None  # default 10 quick, 20 full
    ar_min: int = 1024
    ar_max: int = 2**30
    ar_factor: int | None = None  # default 4 quick, 2 full
    ar_reps: int | None = None  # default 10 quick, 20 full
    outlier_pct: float = 5.0
    baseline: str | None = None
    worker_timeout_s: float = 1800.0
    step_timeout_s: float = 600.0
    wait_timeout_s: float = 3600.0
    poll_s: float = 0.5

    def validate(self) -> None:
        if self.n < 1:
            raise UsageError(f"--n must be a positive integer, got {self.n}")
        if self.link_bytes < MiB or self.link_bytes % 16:
            raise UsageError(f"--link-size must be at least 1M and a multiple of 16 bytes, got {self.link_bytes}")
        if not 4 <= self.ar_min <= self.ar_max:
            raise UsageError(f"all-reduce sizes: need 4 <= min ({self.ar_min}) <= max ({self.ar_max})")
        if self.ar_factor is not None and self.ar_factor < 2:
            raise UsageError("--ar-factor must be at least 2")
        if self.outlier_pct < 0:
            raise UsageError("--outlier-pct must be positive")
        if self.baseline and not Path(self.baseline).is_file():
            raise UsageError(f"--baseline {self.baseline}: no such file")

    def worker_args(self) -> list[str]:
        a = ["--n", str(self.n)]
        a += ["--quick"] if self.quick else []
        a += ["--profile"] if self.profile else []
        a += [] if self.render_gpu_reports else ["--no-render"]
        return a

    def links_args(self) -> list[str]:
        reps = self.link_reps or (10 if self.quick else 20)
        return ["--size", str(self.link_bytes), "--reps", str(reps)]

    def allreduce_args(self) -> list[str]:
        factor = self.ar_factor or (4 if self.quick else 2)
        reps = self.ar_reps or (10 if self.quick else 20)
        return ["--min", str(self.ar_min), "--max", str(self.ar_max), "--factor", str(factor), "--reps", str(reps)]


Say = Callable[[str], None]


def _quiet(_m: str) -> None:
    pass


def inventory_here() -> tuple[list[dict], str | None]:
    """The GPUs here, from NVML; from CUDA where NVML is missing (then with a note)."""
    inv = inventory.read_all()
    if inv:
        return inv, None
    why = inventory.nvml_status() or "NVML lists no GPU"
    try:
        return inventory.cuda_inventory(), f"NVML unavailable ({why}); GPUs listed by CUDA, no serials or ECC counts"
    except NoGPUError:
        raise NoGPUError(f"no GPU found here ({why})") from None


def cuda_env(gpus: list[dict]) -> dict[str, str]:
    """CUDA_VISIBLE_DEVICES naming exactly these GPUs, in this order (by UUID where known)."""
    env = {"CUDA_VISIBLE_DEVICES": ",".join(g.get("uuid") or str(g["index"]) for g in gpus)}
    if any(not g.get("uuid") for g in gpus):
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # integers then mean nvidia-smi's order
    return env


def _brief(g: dict) -> dict:
    return {k: g.get(k) for k in ("uuid", "index", "name", "pci_bus_id", "serial")}


def start_worker(cfg: FleetConfig, host: str, gpu: dict) -> tuple[spawn.Child, Path]:
    root = Path(cfg.out_dir)
    out = layout.gpu_json(root, host, gpu["index"])
    args = ["worker", "--out", str(out), "--report-dir", str(layout.gpu_report_dir(root, host, gpu["index"])),
            "--host", host, "--index", str(gpu["index"])]
    if gpu.get("uuid"):
        args += ["--uuid", gpu["uuid"]]
    out.unlink(missing_ok=True)  # a stale document must not pass for this run's
    child = spawn.start(f"gpu{gpu['index']}", spawn.worker_cmd(*args, *cfg.worker_args()),
                        log=layout.log_path(root, layout.gpu_stem(host, gpu["index"])), env_extra=cuda_env([gpu]))
    return child, out


def worker_outcome(child: spawn.Child, out: Path) -> str | None:
    """None where the worker wrote its document, else what went wrong."""
    if child.rc == 0 and out.is_file():
        return None
    why = "timed out" if child.timed_out else f"exit code {child.rc}"
    tail = spawn.log_tail(child.log, 3).replace("\n", " | ")
    return f"{child.name}: measurement {why}" + (f": {tail}" if tail else "") + f" (log {child.log})"


def _node_step(cfg: FleetConfig, host: str, gpus: list[dict], step: str, args: list[str]) -> tuple[dict | None, dict]:
    root = Path(cfg.out_dir)
    out = Path(root) / layout.NODES / f"{layout.safe(host)}.{step}.json"
    out.unlink(missing_ok=True)
    child = spawn.run(step, spawn.worker_cmd(step, "--out", str(out), *args),
                      log=layout.log_path(root, f"{layout.safe(host)}__{step}"), timeout_s=cfg.step_timeout_s,
                      env_extra=cuda_env(gpus))
    rec = child.record()
    section = None
    if out.is_file():
        try:
            section = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            rec["error"] = f"unreadable output: {exc}"
    if (section is None or child.rc != 0) and "error" not in rec:
        why = "timed out" if child.timed_out else f"exit code {child.rc}"
        detail = (section or {}).get("error") or spawn.log_tail(child.log, 3).replace("\n", " | ")
        rec["error"] = f"{step} {why}: {detail}"
    return section, rec


def run_node(cfg: FleetConfig, host: str, gpus: list[dict], say: Say = _quiet, token: str | None = None) -> dict:
    """Links, all-reduce and (optionally) torch's peer copy over this node's GPUs, one
    process each, one after the other; writes and returns DIR/nodes/HOST.json."""
    root = Path(cfg.out_dir)
    node: dict = {"format": results.FORMAT, "kind": merge.NODE_KIND, "host": host, "token": token,
                  "gpus": [_brief(g) for g in gpus], "links": None, "allreduce": None, "torch_peer": None,
                  "steps": [], "errors": []}
    plan = []
    if cfg.links:
        plan.append(("links", "node-links", cfg.links_args()))
    if cfg.allreduce and len(gpus) >= 2:
        plan.append(("allreduce", "node-allreduce", cfg.allreduce_args()))
    if cfg.torch_peer and len(gpus) >= 2:
        plan.append(("torch_peer", "node-torch-peer", cfg.links_args()))
    if len(gpus) < 2:
        node["notes"] = ["one GPU on this node: no GPU-to-GPU links or all-reduce to measure"]
    for key, step, args in plan:
        say(f"{host}: {key} over {len(gpus)} GPU(s)")
        section, rec = _node_step(cfg, host, gpus, step, args)
        node[key] = section
        node["steps"].append(rec)
        if rec.get("error"):
            node["errors"].append(rec["error"])
    node["inventory"] = [g for g in inventory.read_all() if g.get("uuid") in {x.get("uuid") for x in gpus}]
    node["written_unix"] = time.time()
    results.write_atomic(layout.node_json(root, host), results.dumps(node))
    return node


def _load_baseline(cfg: FleetConfig) -> dict | None:
    return results.load(cfg.baseline) if cfg.baseline else None


def run_devices(cfg: FleetConfig, say: Say = _quiet) -> dict:
    """One node, one driving process: every chosen GPU measured by its own worker in
    parallel, then the node's links and all-reduce, then the merge."""
    cfg.validate()
    baseline = _load_baseline(cfg)
    root, host = Path(cfg.out_dir), layout.hostname()
    inv, note = inventory_here()
    chosen = inventory.select(inv, cfg.devices)
    say(f"measuring {len(chosen)} GPU(s) in parallel: " + ", ".join(f"GPU{g['index']}" for g in chosen))
    started = [start_worker(cfg, host, g) for g in chosen]
    spawn.wait_all([c for c, _ in started], cfg.worker_timeout_s)
    errors = [note] if note else []
    gpu_docs = []
    for c, out in started:
        problem = worker_outcome(c, out)
        if problem:
            errors.append(problem)
            continue
        gpu_docs.append((merge.read_json(out), str(out.relative_to(root))))
    node = run_node(cfg, host, chosen, say)
    say("merging")
    doc = merge.merge(gpu_docs, [node], outlier_pct=cfg.outlier_pct, baseline=baseline, baseline_path=cfg.baseline,
                      launch={"mode": "devices", "devices": cfg.devices, "host": host,
                              "gpus": [_brief(g) for g in chosen]}, errors=errors)
    doc["fleet"]["config"].update(run=asdict(cfg))
    merge.write(doc, root)
    return doc


# ---------------------------------------------------------------- launcher runs

def _read(path: Path) -> dict | None:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def _wait(what: str, check: Callable[[], object], cfg: FleetConfig):
    """Poll `check` until it returns something truthy, or give up after cfg.wait_timeout_s."""
    deadline = time.monotonic() + cfg.wait_timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise FleetError(f"gave up after {cfg.wait_timeout_s:.0f} s waiting for {what} in {cfg.out_dir} "
                             "(is the directory shared between the nodes? did a rank fail? see its logs/)")
        time.sleep(cfg.poll_s)


def _token_of_run(cfg: FleetConfig, info: launcher.LaunchInfo, me: float) -> str:
    if info.run_id:
        return info.run_id
    path = Path(cfg.out_dir) / layout.RUN_JSON

    def fresh():
        d = _read(path)
        return d["token"] if d and d.get("token") and float(d.get("started_unix", 0)) >= me - 120 else None

    return _wait("rank 0's run.json", fresh, cfg)


def _ranks(cfg: FleetConfig, token: str, world: int) -> list[dict] | None:
    out = []
    for r in range(world):
        d = _read(layout.rank_json(cfg.out_dir, r))
        if not d or d.get("token") != token:
            return None
        out.append(d)
    return out


def run_rank(cfg: FleetConfig, info: launcher.LaunchInfo, say: Say = _quiet) -> dict | None:
    """This rank's part of a launcher run; rank 0 returns the merged document, others None."""
    cfg.validate()
    baseline = _load_baseline(cfg) if info.rank == 0 else None
    me = time.time()
    root, host = Path(cfg.out_dir), layout.hostname()
    token = None
    if info.rank == 0:
        token = info.run_id or uuidlib.uuid4().hex
        results.write_atomic(root / layout.RUN_JSON, json.dumps(
            {"token": token, "started_unix": me, "launcher": info.to_dict(), "host": host}) + "\n")
    inv, note = inventory_here()
    vis = inventory.visible(inv)
    pos, share_note = launcher.pick_gpu(info, vis)
    gpu = vis[pos]
    say(f"rank {info.rank}/{info.world_size} on {host}: GPU{gpu['index']} {gpu.get('uuid') or ''}")
    child, out = start_worker(cfg, host, gpu)
    spawn.wait_all([child], cfg.worker_timeout_s)
    problem = worker_outcome(child, out)
    token = token or _token_of_run(cfg, info, me)
    mine = {"token": token, "rank": info.rank, "world_size": info.world_size, "local_rank": info.local_rank,
            "host": host, "launcher": info.launcher, "gpu": _brief(gpu),
            "gpu_file": None if problem else str(out.relative_to(root)),
            "status": "failed" if problem else "ok", "error": problem,
            "notes": [x for x in (note, share_note) if x], "written_unix": time.time()}
    results.write_atomic(layout.rank_json(root, info.rank), json.dumps(mine, indent=2) + "\n")
    if info.local_rank != 0 and info.rank != 0:
        return None
    ranks = _wait(f"all {info.world_size} ranks' ranks/rank*.json", lambda: _ranks(cfg, token, info.world_size), cfg)
    if info.local_rank == 0:
        here, seen = [], set()
        for r in sorted((r for r in ranks if r["host"] == host), key=lambda r: r["gpu"].get("index") or 0):
            if r["gpu"].get("uuid") not in seen:
                seen.add(r["gpu"].get("uuid"))
                full = next((g for g in inv if g.get("uuid") and g.get("uuid") == r["gpu"].get("uuid")), r["gpu"])
                here.append(full)
        say(f"{host}: all ranks done; node measurements over {len(here)} GPU(s)")
        run_node(cfg, host, here, say, token=token)
    if info.rank != 0:
        return None
    hosts = sorted({r["host"] for r in ranks})

    def nodes():
        got = [_read(layout.node_json(root, h)) for h in hosts]
        return got if all(d and d.get("token") == token for d in got) else None

    node_docs = _wait(f"node documents from {', '.join(hosts)}", nodes, cfg)
    errors = [f"rank {r['rank']} ({r['host']}): {r['error']}" for r in ranks if r.get("error")]
    errors += [f"rank {r['rank']}: {n}" for r in ranks for n in r.get("notes") or []]
    gpu_docs = []
    for r in ranks:
        if r.get("gpu_file"):
            d = _read(root / r["gpu_file"])
            if d is None:
                errors.append(f"rank {r['rank']}: {r['gpu_file']} is unreadable")
            else:
                gpu_docs.append((d, r["gpu_file"]))
    say("merging")
    doc = merge.merge(gpu_docs, node_docs, outlier_pct=cfg.outlier_pct, baseline=baseline,
                      baseline_path=cfg.baseline, errors=errors,
                      launch={"mode": "launcher", **info.to_dict(), "token": token,
                              "ranks": [{k: r.get(k) for k in ("rank", "local_rank", "host", "gpu", "status")}
                                        for r in ranks]})
    doc["fleet"]["config"].update(run=asdict(cfg))
    merge.write(doc, root)
    return doc


def run(cfg: FleetConfig, say: Say = _quiet, *, devices_given: bool = False) -> tuple[dict | None, launcher.LaunchInfo]:
    """`fleet report`: under a launcher, this rank's part (rank 0 returns the merged document, the
    others None); otherwise every chosen GPU of this node, driven from this process."""
    cfg.validate()
    info = launcher.detect()
    if not info.distributed:
        return run_devices(cfg, say), info
    if devices_given:
        raise UsageError(f"--devices is for one process driving a node; under {info.launcher} each rank "
                         "measures its own GPU (drop --devices)")
    return run_rank(cfg, info, say), info
