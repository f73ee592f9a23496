"""The processes a fleet run starts: `python -m rooflab.fleet.worker STEP ...`.

One GPU's lab report, a node's links, its all-reduce, torch's peer copy and one torch
all-reduce rank. Each step writes its section as JSON to --out (or, where it fails, a
section saying why) and its progress to stderr, which the parent keeps in a log file.
These steps are for rooflab's own orchestration, not a command line for people.
"""

from __future__ import annotations

import os
import sys

import click

from rooflab.cuda.safe_env import apply_safe_env

apply_safe_env()  # before anything here can load NCCL


def _say(msg: str) -> None:
    print(f"… {msg}", file=sys.stderr, flush=True)


def _write(path: str, section: dict) -> None:
    from rooflab import results  # noqa: PLC0415

    results.write_atomic(path, results.dumps(section))


def _guarded(path: str, fn) -> None:
    """Run a node step; its section (or its error) goes to `path`."""
    try:
        section = fn()
    except Exception as exc:
        _write(path, {"available": False, "error": f"{exc.__class__.__name__}: {' '.join(str(exc).split())}"})
        raise
    _write(path, section)


def measure_one(*, out_json: str, report_dir: str, host: str, index: int | None, uuid: str | None, quick: bool,
                n: int, profile: bool, render: bool) -> dict:
    """One GPU's part of a fleet run: the lab report (lab.run) on the one GPU this process
    sees (the parent set CUDA_VISIBLE_DEVICES to it), plus who the GPU is (UUID, serial,
    PCI bus id from NVML) and where it sits (host, nvidia-smi index). Writes out_json,
    then (best effort) the GPU's own report in report_dir."""
    from rooflab import lab, results  # noqa: PLC0415
    from rooflab.cuda import inventory  # noqa: PLC0415
    from rooflab.errors import NoGPUError  # noqa: PLC0415

    before = inventory.read_one(uuid=uuid) if uuid else None
    doc = lab.run(lab.ReportConfig(out_dir=report_dir, n=n, quick=quick, profile=profile),
                  on_step=lambda s: _say(f"step {s}"), progress=_say)
    dev = doc.get("device") or {}
    if dev.get("spec_only"):  # lab.run falls back to the spec-only report where it finds no GPU
        raise NoGPUError(f"GPU {index} ({uuid}): {(doc.get('report') or {}).get('no_gpu') or 'no GPU found'}")
    after = inventory.read_one(uuid=uuid, pci_bus_id=dev.get("pci_bus_id"))
    inv = after or before or {}
    doc["fleet_gpu"] = {
        "uuid": uuid or inv.get("uuid"), "host": host, "index": index if index is not None else inv.get("index"),
        "serial": inv.get("serial"),
        "pci_bus_id": inv.get("pci_bus_id") or inventory.normalize_bus_id(dev.get("pci_bus_id")),
        "name": inv.get("name") or dev.get("name"), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "nvml": inventory.nvml_status() or "ok", "inventory_before": before, "inventory_after": after,
        "config": {"quick": quick, "n": n, "profile": profile, "report_dir": report_dir},
    }
    results.write_atomic(out_json, results.dumps(doc))
    if render:
        try:
            doc["fleet_gpu"]["report_files"] = lab.write_outputs(doc, report_dir)
        except Exception as exc:  # noqa: BLE001 (the report is a convenience; the document is the result)
            doc["fleet_gpu"]["render_error"] = f"{exc.__class__.__name__}: {exc}"
            _say(f"per-GPU report not rendered: {doc['fleet_gpu']['render_error']}")
        results.write_atomic(out_json, results.dumps(doc))
    return doc


@click.group()
def worker() -> None:
    """Steps of a fleet run, started by rooflab itself."""


@worker.command("worker")
@click.option("--out", "out_json", required=True)
@click.option("--report-dir", required=True)
@click.option("--host", required=True)
@click.option("--index", type=int, default=None)
@click.option("--uuid", default=None)
@click.option("--quick", is_flag=True)
@click.option("--n", type=int, default=4096)
@click.option("--profile", is_flag=True)
@click.option("--no-render", is_flag=True)
def gpu_cmd(out_json, report_dir, host, index, uuid, quick, n, profile, no_render):
    """One GPU's lab report (CUDA_VISIBLE_DEVICES names the GPU)."""
    measure_one(out_json=out_json, report_dir=report_dir, host=host, index=index, uuid=uuid, quick=quick, n=n,
                profile=profile, render=not no_render)
    _say(f"wrote {out_json}")


@worker.command("node-links")
@click.option("--out", "out_json", required=True)
@click.option("--size", type=int, required=True)
@click.option("--reps", type=int, default=20)
def node_links_cmd(out_json, size, reps):
    from rooflab.measure import links  # noqa: PLC0415

    _guarded(out_json, lambda: links.run(links.LinksConfig(nbytes=size, reps=reps), _say))


@worker.command("node-allreduce")
@click.option("--out", "out_json", required=True)
@click.option("--min", "min_bytes", type=int, required=True)
@click.option("--max", "max_bytes", type=int, required=True)
@click.option("--factor", type=int, default=2)
@click.option("--reps", type=int, default=20)
def node_allreduce_cmd(out_json, min_bytes, max_bytes, factor, reps):
    from rooflab.fleet import allreduce  # noqa: PLC0415
    from rooflab.measure import collectives  # noqa: PLC0415

    cfg = collectives.AllreduceConfig(min_bytes=min_bytes, max_bytes=max_bytes, factor=factor, reps=reps)
    logs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(out_json))), "logs")
    _guarded(out_json, lambda: allreduce.measure_with_fallback(cfg, _say, logs, out_hint=out_json))


@worker.command("node-torch-peer")
@click.option("--out", "out_json", required=True)
@click.option("--size", type=int, required=True)
@click.option("--reps", type=int, default=20)
def node_torch_peer_cmd(out_json, size, reps):
    from rooflab.measure import links  # noqa: PLC0415

    _guarded(out_json, lambda: links.torch_peer(size, reps))


@worker.command("torch-allreduce-rank")
@click.option("--rank", type=int, required=True)
@click.option("--world", type=int, required=True)
@click.option("--port", type=int, required=True)
@click.option("--out", "out_json", required=True)
@click.option("--min", "min_bytes", type=int, required=True)
@click.option("--max", "max_bytes", type=int, required=True)
@click.option("--factor", type=int, default=2)
@click.option("--reps", type=int, default=20)
@click.option("--warmup", type=int, default=5)
def torch_rank_cmd(rank, world, port, out_json, min_bytes, max_bytes, factor, reps, warmup):
    from rooflab.measure import collectives  # noqa: PLC0415

    cfg = collectives.AllreduceConfig(min_bytes=min_bytes, max_bytes=max_bytes, factor=factor, reps=reps,
                                      warmup=warmup)
    sec = collectives.run_torch_rank(cfg, rank, world, port)
    if sec is not None:
        _write(out_json, sec)


def main() -> None:
    from rooflab.errors import RooflabError  # noqa: PLC0415

    try:
        worker.main(standalone_mode=False, prog_name="rooflab.fleet.worker")
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except RooflabError as exc:
        print(f"rooflab: error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        print("rooflab: error: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
