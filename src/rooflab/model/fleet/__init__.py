"""The pure side of many-GPU runs: NCCL's bus-bandwidth arithmetic, per-GPU summaries, outliers,
the link topology, whether a node's copies and all-reduce passed their checks, and the recorded
reference figures. No CUDA, no processes."""
