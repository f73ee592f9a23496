"""Reference figures for a 2×H200 NVLink machine, measured there through PyTorch before
rooflab's fleet code existed. The fleet report prints them beside rooflab's own figures as
same-machine peers; they are context, not pass/fail limits."""

from __future__ import annotations

TORCH_2XH200 = {
    "source": "PyTorch on a lent 2×H200 NVLink machine (tensor.copy_ between GPUs, pinned-memory "
              "copies, torch.distributed NCCL all-reduce), recorded by the rooflab team",
    "date": "before 2026-11-30 (the record gives no date)",
    "peer_ce_uni_gbs": 393.0,
    "peer_ce_bidir_gbs": 764.0,
    "pinned_h2d_d2h_gbs": 55.0,
    "allreduce_busbw_gbs": {str(16 * 2**20): 220.0, str(2**30): 330.0},
}


# what every fleet document carries under "references", the merged one and a single node's alike
REFERENCES = {"torch_2xh200": TORCH_2XH200}
