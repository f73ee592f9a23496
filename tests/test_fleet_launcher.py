"""Launcher environments (torchrun, srun, mpirun) and GPU selection."""

from __future__ import annotations

import pytest

from rooflab.cuda import inventory
from rooflab.errors import UsageError
from rooflab.fleet import launcher


# ---------------------------------------------------------------- launchers

def test_no_launcher_is_one_process():
    info = launcher.detect({})
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.distributed) == ("none", 0, 1, 0, False)


def test_torchrun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1",
           "TORCHELASTIC_RUN_ID": "abc", "MASTER_ADDR": "n0", "MASTER_PORT": "29500",
           "SLURM_PROCID": "0", "SLURM_STEP_ID": "0", "SLURM_NTASKS": "4"}  # torchrun inside srun: torchrun wins
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size, info.node_rank) == \
        ("torchrun", 3, 8, 1, 2, 1)
    assert info.run_id == "torchrun:abc:n0:29500" and info.distributed
    # without --standalone/--rdzv-id every launch is "none": no token from the launcher
    assert launcher.detect({**env, "TORCHELASTIC_RUN_ID": "none"}).run_id is None


def test_srun_step_and_batch_script():
    env = {"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "6", "SLURM_NTASKS": "12", "SLURM_LOCALID": "2",
           "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "3(x2)", "SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0"}
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size, info.node_rank) == \
        ("slurm", 5, 6, 2, 3, 1)
    assert info.run_id == "slurm:77.0"
    # a batch script's own environment (no srun step) is one process, not SLURM_NTASKS of them
    assert launcher.detect({"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_JOB_ID": "77"}).launcher == "none"
    assert launcher._slurm_tasks_on_node("2(x3),1", 3) == 1 and launcher._slurm_tasks_on_node("4", 0) == 4


def test_mpirun_open_mpi_wins_over_inherited_slurm():
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_NAMESPACE": "prterun-x-123@1",
           "SLURM_PROCID": "0", "SLURM_STEP_ID": "4", "SLURM_NTASKS": "1"}
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size) == \
        ("openmpi", 1, 2, 1, 2)
    assert info.run_id == "openmpi:prterun-x-123@1"


def test_mpich_pmi_fallback():
    info = launcher.detect({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"})
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size) == ("mpich", 2, 4, 0, 2)


@pytest.mark.parametrize("env", [{"RANK": "x", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
                                 {"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
                                 {"PMI_RANK": "0", "PMI_SIZE": "0"}])
def test_bad_launcher_values_are_usage_errors(env):
    with pytest.raises(UsageError):
        launcher.detect(env)


def test_pick_gpu_by_local_rank():
    info = launcher.detect({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"})
    assert launcher.pick_gpu(info, ["g0", "g1"]) == (1, None)
    assert launcher.pick_gpu(info, ["only"]) == (0, None)  # srun --gpus-per-task=1: the one it sees
    many = launcher.detect({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4"})
    pos, note = launcher.pick_gpu(many, ["g0", "g1"])
    assert pos == 1 and "same GPU" in note
    with pytest.raises(UsageError):
        launcher.pick_gpu(info, [])


def test_visible_and_select_follow_cuda_visible_devices():
    inv = [{"index": i, "uuid": f"GPU-{i}{i}{i}{i}-x"} for i in range(4)]
    assert [g["index"] for g in inventory.visible(inv, None, use_env=False)] == [0, 1, 2, 3]
    assert [g["index"] for g in inventory.visible(inv, "2,GPU-0000", use_env=False)] == [2, 0]
    assert inventory.visible(inv, "", use_env=False) == []
    assert [g["index"] for g in inventory.select(inv, "0,2", "1,2,3", use_env=False)] == [1, 3]
    assert [g["index"] for g in inventory.select(inv, "all", None, use_env=False)] == [0, 1, 2, 3]
    assert [g["index"] for g in inventory.select(inv, "GPU-3333", None, use_env=False)] == [3]
    for bad in ("7", "0,0", "GPU-9", ","):
        with pytest.raises(UsageError):
            inventory.select(inv, bad, None, use_env=False)
    assert inventory.normalize_bus_id("00000000:1A:00.0") == inventory.normalize_bus_id("0000:1a:00.0")
