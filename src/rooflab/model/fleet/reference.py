"""Reference figures for the 2×H200 NVLink machine, measured there through PyTorch
before this code existed (issue 12, "same-run peers"). The fleet report prints them
beside rooflab's own figures; they are context, not pass/fail limits."""

from __future__ import annotations

TORCH_2XH200 = {
    "source": "PyTorch on the 2×H200 NVLink machine used for issue 12 (tensor.copy_ between GPUs, "
              "pinned-memory copies, torch.distributed NCCL all-reduce), as recorded in issue 12",
    "date": "before issue 12 (the issue gives no date)",
    "peer_ce_uni_gbs": 393.0,
    "peer_ce_bidir_gbs": 764.0,
    "pinned_h2d_d2h_gbs": 55.0,
    "allreduce_busbw_gbs": {str(16 * 2**20): 220.0, str(2**30): 330.0},
}

