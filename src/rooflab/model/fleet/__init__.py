"""The pure side of many-GPU runs: NCCL's bus-bandwidth arithmetic, per-GPU summaries, outliers,
the link topology and the recorded reference figures. No CUDA, no processes."""
