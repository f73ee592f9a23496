"""Many GPUs: per-GPU reports merged into one fleet document, GPU-to-GPU links and
NCCL all-reduce on each node, launcher-aware (torchrun, srun, mpirun).

Importing this package forces NVLink multicast (NVLS) off in this process's
environment (see `safety`): NCCL reads NCCL_NVLS_ENABLE when a communicator is
created, so it must be set before any NCCL call, and every process rooflab starts
gets the same variables explicitly (`safety.child_env`).
"""

from rooflab.cuda.safe_env import apply_safe_env

apply_safe_env()
