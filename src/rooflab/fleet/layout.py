"""Where a fleet run keeps its files (one directory, shared between nodes when there
are several):

    DIR/gpus/HOST__gpuN.json     one results document per GPU (N: nvidia-smi index)
    DIR/gpus/HOST__gpuN/         that GPU's own report (report.md, roofline.png, CSVs)
    DIR/nodes/HOST.json          the node's links, all-reduce and inventory
    DIR/ranks/rankR.json         launcher runs only: what rank R measured (the barrier)
    DIR/run.json                 launcher runs only: rank 0's token for this run
    DIR/logs/*.log               every subprocess's output
    DIR/fleet.json, fleet.md     the merged document and its report
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from rooflab.errors import RooflabError

GPUS, NODES, RANKS, LOGS = "gpus", "nodes", "ranks", "logs"
MERGED_JSON, MERGED_MD, MERGED_CSV, RUN_JSON = "fleet.json", "fleet.md", "fleet_gpus.csv", "run.json"


class FleetError(RooflabError):
    """A fleet run could not finish (a rank never reported, a node step failed)."""


def hostname() -> str:
    return socket.gethostname() or "localhost"


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def gpu_stem(host: str, index) -> str:
    return f"{safe(host)}__gpu{index}"


def gpu_json(root, host: str, index) -> Path:
    return Path(root) / GPUS / f"{gpu_stem(host, index)}.json"


def gpu_report_dir(root, host: str, index) -> Path:
    return Path(root) / GPUS / gpu_stem(host, index)


def node_json(root, host: str) -> Path:
    return Path(root) / NODES / f"{safe(host)}.json"


def rank_json(root, rank: int) -> Path:
    return Path(root) / RANKS / f"rank{rank}.json"


def log_path(root, name: str) -> Path:
    return Path(root) / LOGS / f"{safe(name)}.log"
