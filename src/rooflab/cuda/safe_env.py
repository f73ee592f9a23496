"""NVLink multicast (NVLS) stays off, in this process and in every process it starts.

On shared NVSwitch machines multicast objects are a shared resource: NCCL's NVLS
algorithms, torch's symmetric-memory multicast and NVSHMEM's NVLS path would all
create them. rooflab never calls cuMulticastCreate or any multimem API itself, and
forces the three switches below off: `apply_safe_env` overwrites them in
os.environ (not setdefault: a user's NCCL_NVLS_ENABLE=1 is overridden), and
`child_env` builds the environment of every subprocess with them set last, so no
caller-supplied value can turn them back on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

SAFE_ENV: dict[str, str] = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def apply_safe_env(environ: MutableMapping[str, str] | None = None) -> None:
    """Force the NVLS switches off in `environ` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    for k, v in SAFE_ENV.items():
        env[k] = v


def package_root() -> str:
    """The directory holding the `rooflab` package this process runs (for children's PYTHONPATH)."""
    return str(Path(__file__).resolve().parents[2])


def child_env(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a subprocess: base (default os.environ) + extra, then the NVLS
    switches (last, so they always win), and PYTHONPATH led by this rooflab's source root
    so `python -m rooflab...` in the child imports the same code."""
    env = dict(os.environ if base is None else base)
    env.update(extra or {})
    root = package_root()
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in parts:
        env["PYTHONPATH"] = os.pathsep.join([root, *parts])
    env["PYTHONUNBUFFERED"] = "1"
    apply_safe_env(env)
    return env


def unsafe_keys(env: Mapping[str, str]) -> list[str]:
    """The NVLS switches that `env` lacks or sets to anything but the safe value."""
    return [k for k, v in SAFE_ENV.items() if env.get(k) != v]
