"""NVLS staying off in every process the fleet code starts; the whole `--devices all` and launcher
paths end to end with a fake Popen, and a fleet of one GPU (gpu-check's fleet1 step); processes start
only through fleet.spawn."""

from __future__ import annotations

import ast
import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rooflab.cuda import safe_env as safety
from rooflab.fleet import allreduce, launcher, layout, orchestrate

from fleet_fixtures import FAKE_GPUS, SRC, fake_node, h200, shape_of  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- NVLS off, and the whole flow with a fake Popen

def test_safe_env_overrides_and_children_cannot_turn_it_back_on(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    safety.apply_safe_env()
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"
    env = safety.child_env({"NCCL_NVLS_ENABLE": "1", "NVSHMEM_DISABLE_NVLS": "0", "X": "y"},
                           base={"TORCH_SYMM_MEM_DISABLE_MULTICAST": "0"})
    assert safety.unsafe_keys(env) == [] and env["X"] == "y"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(SRC.parent)


def test_devices_all_end_to_end_and_every_child_has_nvls_off(fake_node, tmp_path):
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path / "fleet"), devices="0,1", quick=True)
    doc = orchestrate.run_devices(cfg)
    steps = [c[0][3] for c in fake_node.calls]
    assert sorted(steps) == ["node-allreduce", "node-links", "node-torch-peer", "worker", "worker"]
    for cmd, env in fake_node.calls:
        assert env.get("NCCL_NVLS_ENABLE") == "0", cmd
        assert env.get("TORCH_SYMM_MEM_DISABLE_MULTICAST") == "1" and env.get("NVSHMEM_DISABLE_NVLS") == "1"
    workers = [env["CUDA_VISIBLE_DEVICES"] for cmd, env in fake_node.calls if cmd[3] == "worker"]
    assert sorted(workers) == ["GPU-fake-0", "GPU-fake-1"]  # one GPU per measuring process, by UUID
    node_env = next(env for cmd, env in fake_node.calls if cmd[3] == "node-links")
    assert node_env["CUDA_VISIBLE_DEVICES"] == "GPU-fake-0,GPU-fake-1"
    f = doc["fleet"]
    assert list(f["gpus"]) == ["GPU-fake-0", "GPU-fake-1"] and f["errors"] == []
    assert "node-a" in f["links"] and f["allreduce"]["node-a"]["available"]
    assert (tmp_path / "fleet" / "fleet.json").is_file() and (tmp_path / "fleet" / "fleet.md").is_file()
    assert {o["uuid"] for o in f["outliers"]} == {"GPU-fake-1"}  # 10% low of two: 5.3% below their median


def test_launcher_path_gives_the_same_document(fake_node, tmp_path):
    devices = orchestrate.run_devices(orchestrate.FleetConfig(out_dir=str(tmp_path / "dev"), devices="0,1",
                                                              quick=True))
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path / "tr"), quick=True, poll_s=0.01, wait_timeout_s=30)
    base = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "t1", "MASTER_ADDR": "h",
            "MASTER_PORT": "1"}
    r1 = launcher.detect({**base, "RANK": "1", "LOCAL_RANK": "1"})
    r0 = launcher.detect({**base, "RANK": "0", "LOCAL_RANK": "0"})
    got: dict = {}
    t = threading.Thread(target=lambda: got.setdefault("r1", orchestrate.run_rank(cfg, r1)))
    t.start()
    doc = orchestrate.run_rank(cfg, r0)
    t.join(10)
    assert got["r1"] is None  # only rank 0 merges
    assert shape_of(doc) == shape_of(devices)
    assert doc["fleet"]["launch"]["mode"] == "launcher" and doc["fleet"]["launch"]["launcher"] == "torchrun"
    for cmd, env in fake_node.calls:
        assert safety.unsafe_keys(env) == [], cmd
    assert len(list((tmp_path / "tr" / "ranks").glob("rank*.json"))) == 2


def test_launcher_without_a_run_id_agrees_through_run_json(fake_node, tmp_path):
    """MPICH gives no job id: rank 0's run.json carries the token the others use."""
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path), quick=True, poll_s=0.01, wait_timeout_s=30,
                                  torch_peer=False)
    r0 = launcher.detect({"PMI_RANK": "0", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"})
    r1 = launcher.detect({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"})
    assert r0.run_id is None
    t = threading.Thread(target=orchestrate.run_rank, args=(cfg, r1))
    t.start()
    doc = orchestrate.run_rank(cfg, r0)
    t.join(10)
    token = json.loads((tmp_path / "run.json").read_text())["token"]
    assert doc["fleet"]["launch"]["token"] == token and len(doc["fleet"]["gpus"]) == 2
    assert doc["fleet"]["torch_peer"] == {}


def test_torch_fallback_ranks_also_start_with_nvls_off(fake_node, tmp_path):
    from rooflab.measure import collectives

    cfg = collectives.AllreduceConfig(min_bytes=1024, max_bytes=4096, factor=4, reps=2)
    sec = allreduce.run_torch_group(cfg, 4, str(tmp_path / "ar.json"), str(tmp_path / "logs"), timeout_s=5)
    assert sec == {"available": False, "reason": "fake"}  # what the fake rank 0 wrote
    ranks = [(c, e) for c, e in fake_node.calls if c[3] == "torch-allreduce-rank"]
    assert sorted(int(c[c.index("--rank") + 1]) for c, _ in ranks) == [0, 1, 2, 3]
    assert all(safety.unsafe_keys(e) == [] for _, e in ranks)


def test_stale_rank_files_are_ignored(fake_node, tmp_path):
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path), quick=True, poll_s=0.01, wait_timeout_s=0.2)
    stale = layout.rank_json(tmp_path, 1)
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"token": "old-run", "rank": 1, "host": "node-a", "gpu": {}}))
    info = launcher.detect({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "TORCHELASTIC_RUN_ID": "new"})
    with pytest.raises(layout.FleetError, match="waiting for all 2 ranks"):
        orchestrate.run_rank(cfg, info)


# ---------------------------------------------------------------- a fleet of one GPU

def _gpu_check_fleet1(out_dir: Path) -> list[str]:
    """The arguments of scripts/gpu-check's fleet1 step, with its log folder at out_dir."""
    line = next(x for x in (SRC.parents[1] / "scripts" / "gpu-check").read_text().splitlines()
                if "step fleet1 " in x)
    words = shlex.split(line.split("$R ", 1)[1].replace("$L", str(out_dir)))
    assert words[:2] == ["fleet", "report"], line
    return words[1:]


def test_gpu_check_fleet1_makes_a_fleet_of_one_that_loads_back(fake_node, tmp_path, monkeypatch):
    """The one-GPU machine's fleet report: that GPU's quick report in its worker and the node's host links;
    no peer copy or all-reduce is started; fleet.json validates and fleet.md says there is one GPU."""
    from click.testing import CliRunner

    from rooflab import results
    from rooflab.cli import fleet as cli_fleet

    monkeypatch.setattr(orchestrate, "inventory_here", lambda: (FAKE_GPUS[:1], None))
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
        monkeypatch.delenv(k, raising=False)
    res = CliRunner().invoke(cli_fleet.fleet, _gpu_check_fleet1(tmp_path))
    assert res.exit_code == 0, res.output
    assert [c[3] for c, _ in fake_node.calls] == ["worker", "node-links"]
    worker = fake_node.calls[0][0]
    assert {"--quick", "--no-render"} <= set(worker) and worker[worker.index("--n") + 1] == "1024"
    assert fake_node.calls[1][1]["CUDA_VISIBLE_DEVICES"] == "GPU-fake-0"
    doc = results.load(tmp_path / "fleet1" / "fleet.json")  # against the schema
    f = doc["fleet"]
    assert list(f["gpus"]) == ["GPU-fake-0"] and f["errors"] == [] and f["outliers"] == []
    assert f["allreduce"] == {} and f["torch_peer"] == {}
    links = f["links"]["node-a"]
    assert len(links["devices"]) == 1 and links["pairs"] == [] and links["ce_uni"] == []
    assert [h["device"] for h in links["host"]] == [0]
    assert f["medians"]["copy_gbs"] == f["gpus"]["GPU-fake-0"]["summary"]["copy_gbs"]
    assert "One GPU: nothing to compare it with." in (tmp_path / "fleet1" / "fleet.md").read_text()


def test_one_gpu_starts_no_pair_step_even_when_asked(fake_node, tmp_path, monkeypatch):
    monkeypatch.setattr(orchestrate, "inventory_here", lambda: (FAKE_GPUS[:1], None))
    doc = orchestrate.run_devices(orchestrate.FleetConfig(out_dir=str(tmp_path), quick=True))
    assert [c[3] for c, _ in fake_node.calls] == ["worker", "node-links"]  # all-reduce and torch peer are on
    node = json.loads(layout.node_json(tmp_path, "node-a").read_text())
    assert node["notes"] == ["one GPU on this node: no GPU-to-GPU links or all-reduce to measure"]
    assert doc["fleet"]["errors"] == [] and list(doc["fleet"]["gpus"]) == ["GPU-fake-0"]


# the fleet code starts processes in exactly one place, and never touches multicast
FLEET_FILES = [*sorted((SRC / "fleet").glob("*.py")), *sorted((SRC / "model" / "fleet").glob("*.py")),
               SRC / "cli" / "fleet.py", SRC / "cuda" / "inventory.py", SRC / "cuda" / "safe_env.py",
               SRC / "measure" / "links.py", SRC / "measure" / "collectives.py", SRC / "report" / "fleet.py"]


@pytest.mark.parametrize("path", FLEET_FILES, ids=lambda p: p.name)
def test_processes_start_only_through_spawn(path):
    tree = ast.parse(path.read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if (node.value.id in ("subprocess", "multiprocessing", "mp") or name in
                    ("os.system", "os.popen", "os.fork", "os.posix_spawn", "os.posix_spawnp")
                    or (node.value.id == "os" and node.attr.startswith(("exec", "spawn")))):
                bad.append(name)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(m and m.split(".")[0] in ("subprocess", "multiprocessing", "pty") for m in mods):
                bad.append("import " + ",".join(filter(None, mods)))
        if isinstance(node, (ast.Name, ast.Attribute)):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            assert "multicast" not in ident.lower() and "multimem" not in ident.lower(), ident
    if path.name == "spawn.py":
        assert bad and all(b.startswith(("subprocess.", "import subprocess")) for b in bad)
        assert "child_env(" in path.read_text() and "env=env" in path.read_text()
    else:
        assert bad == [], f"{path.name} starts processes itself: {bad}"


def test_no_kernel_uses_multimem_or_multicast():
    for cu in SRC.glob("**/*.cu"):
        text = cu.read_text()
        assert "multimem" not in text and "cuMulticast" not in text, cu


def test_check_script_exports_nvls_off():
    text = (SRC.parents[1] / "scripts" / "dev" / "check_fleet.sh").read_text()
    for k, v in safety.SAFE_ENV.items():
        assert f"{k}={v}" in text


def test_the_worker_process_loads_no_command_line_module():
    """What every process a fleet run starts imports: the worker's steps, and none of rooflab.cli."""
    code = ("import sys, rooflab.fleet.worker, rooflab.fleet.orchestrate, rooflab.fleet.allreduce; "
            "print(sorted(m for m in sys.modules if m == 'rooflab.cli' or m.startswith('rooflab.cli.')))")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
