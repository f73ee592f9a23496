"""Who am I in this job? Rank, world size and local GPU from the launcher's environment.

rooflab starts no processes across machines itself: it runs unchanged under

    torchrun   RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE / GROUP_RANK
    mpirun     OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE (Open MPI)
    MPICH      PMI_RANK / PMI_SIZE, MPI_LOCALRANKID / MPI_LOCALNRANKS (Hydra)
    srun       SLURM_PROCID / SLURM_STEP_NUM_TASKS (or SLURM_NTASKS) / SLURM_LOCALID / SLURM_NODEID

checked in that order (torchrun or mpirun inside a Slurm allocation inherit the
allocation's SLURM_* variables, so Slurm comes last, and only counts inside an srun
step: a batch script's own SLURM_PROCID=0 with SLURM_NTASKS=8 is one process, not
eight). With none of them the run is a single process. Pure: reads a mapping.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from rooflab.errors import UsageError


@dataclass(frozen=True)
class LaunchInfo:
    launcher: str  # "torchrun" | "openmpi" | "mpich" | "slurm" | "none"
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int | None = 1
    node_rank: int | None = 0
    run_id: str | None = None  # the same in every rank of one launch, where the launcher gives one

    @property
    def distributed(self) -> bool:
        return self.launcher != "none"

    def to_dict(self) -> dict:
        return asdict(self)


def _int(env: Mapping[str, str], key: str, default: int | None = None) -> int | None:
    raw = env.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw.strip())
    except ValueError:
        raise UsageError(f"launcher variable {key}={raw!r} is not an integer") from None


def _slurm_tasks_on_node(spec: str | None, node: int | None) -> int | None:
    """SLURM_STEP_TASKS_PER_NODE '2(x3),1' and node 3 -> 1."""
    if not spec or node is None:
        return None
    counts: list[int] = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not m:
            return None
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts[node] if 0 <= node < len(counts) else None


def detect(env: Mapping[str, str] | None = None) -> LaunchInfo:
    """The launcher's view of this process (LaunchInfo('none') outside any launcher)."""
    e = os.environ if env is None else env
    if all(k in e for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")):
        # --standalone (or --rdzv-id) gives each launch its own id; without one torchrun says
        # "none" and every launch looks alike, so the ranks agree on a token through run.json
        rid = e.get("TORCHELASTIC_RUN_ID")
        master = f"{e.get('MASTER_ADDR', '')}:{e.get('MASTER_PORT', '')}"
        info = LaunchInfo("torchrun", _int(e, "RANK"), _int(e, "WORLD_SIZE"), _int(e, "LOCAL_RANK"),
                          _int(e, "LOCAL_WORLD_SIZE"), _int(e, "GROUP_RANK", _int(e, "NODE_RANK")),
                          f"torchrun:{rid}:{master}" if rid and rid.lower() != "none" else None)
    elif "OMPI_COMM_WORLD_RANK" in e:
        rid = e.get("OMPI_MCA_orte_ess_jobid") or e.get("OMPI_MCA_ess_base_jobid") or e.get("PMIX_NAMESPACE")
        info = LaunchInfo("openmpi", _int(e, "OMPI_COMM_WORLD_RANK"), _int(e, "OMPI_COMM_WORLD_SIZE", 1),
                          _int(e, "OMPI_COMM_WORLD_LOCAL_RANK", 0), _int(e, "OMPI_COMM_WORLD_LOCAL_SIZE"),
                          None, f"openmpi:{rid}" if rid else None)
    elif "PMI_RANK" in e:
        info = LaunchInfo("mpich", _int(e, "PMI_RANK"), _int(e, "PMI_SIZE", 1), _int(e, "MPI_LOCALRANKID", 0),
                          _int(e, "MPI_LOCALNRANKS"), None, None)
    elif "SLURM_PROCID" in e and ("SLURM_STEP_ID" in e or "SLURM_STEPID" in e):
        node = _int(e, "SLURM_NODEID")
        local_n = _slurm_tasks_on_node(e.get("SLURM_STEP_TASKS_PER_NODE") or e.get("SLURM_TASKS_PER_NODE"), node)
        job, step = e.get("SLURM_JOB_ID") or e.get("SLURM_JOBID"), e.get("SLURM_STEP_ID") or e.get("SLURM_STEPID")
        info = LaunchInfo("slurm", _int(e, "SLURM_PROCID"),
                          _int(e, "SLURM_STEP_NUM_TASKS", _int(e, "SLURM_NTASKS", 1)),
                          _int(e, "SLURM_LOCALID", 0), local_n, node, f"slurm:{job}.{step}" if job else None)
    else:
        return LaunchInfo("none")
    if info.world_size is None or info.world_size < 1 or not 0 <= info.rank < info.world_size:
        raise UsageError(f"{info.launcher}: rank {info.rank} does not fit world size {info.world_size}")
    if info.local_rank is None or info.local_rank < 0:
        raise UsageError(f"{info.launcher}: bad local rank {info.local_rank}")
    return info


def pick_gpu(info: LaunchInfo, visible: Sequence) -> tuple[int, str | None]:
    """Which of the GPUs this process sees is this rank's: local rank modulo the count.

    Returns (position in `visible`, a note when GPUs are shared or missing)."""
    if not visible:
        raise UsageError("this process sees no GPU (CUDA_VISIBLE_DEVICES is empty or no GPU is present)")
    pos = info.local_rank % len(visible)
    note = None
    if len(visible) > 1 and info.local_world_size and info.local_world_size > len(visible):
        note = (f"{info.local_world_size} ranks on this node but {len(visible)} GPUs visible: "
                "several ranks measure the same GPU")
    # one GPU visible: the launcher bound it to this task (srun --gpus-per-task=1), or every
    # rank shares it; the merge flags the second case (two documents with one UUID)
    return pos, note
