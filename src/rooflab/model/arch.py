"""Per-architecture facts the driver does not report: FP32 CUDA cores per SM, and the FP64
and FP16 CUDA-core rates beside them.

Sources: the CUDA C++ Programming Guide's "Arithmetic Instructions" throughput table
(32-bit floating-point add, multiply, multiply-add results per clock per SM) and the
architecture whitepapers (Volta, Turing, Ampere GA100/GA102, Ada, Hopper, Blackwell).
"""

# (major, minor) -> (architecture name, FP32 lanes per SM)
_ARCH = {
    (6, 0): ("Pascal GP100", 64),
    (6, 1): ("Pascal", 128),
    (7, 0): ("Volta", 64),
    (7, 2): ("Volta (Xavier)", 64),
    (7, 5): ("Turing", 64),
    (8, 0): ("Ampere GA100", 64),
    (8, 6): ("Ampere GA10x", 128),
    (8, 7): ("Ampere (Orin)", 128),
    (8, 9): ("Ada Lovelace", 128),
    (9, 0): ("Hopper", 128),
    (10, 0): ("Blackwell B100/B200", 128),
    (10, 3): ("Blackwell B300", 128),
    (11, 0): ("Blackwell (Thor)", 128),
    (12, 0): ("Blackwell GB20x", 128),
    (12, 1): ("Blackwell GB10", 128),
}


def sm_name(cc) -> str:
    """``sm_90`` for compute capability 9.0, ``sm_130`` for 13.0."""
    return f"sm_{cc[0]}{cc[1]}"


def arch_name(cc: tuple[int, int]) -> str:
    return _ARCH.get(tuple(cc), (sm_name(cc), 0))[0]


def peak_unknown(cc) -> str:
    """What the report says where a peak would be, for an architecture missing from the table."""
    return f"peak unknown for {sm_name(cc)}"


def fp32_cores_per_sm(cc: tuple[int, int]) -> int | None:
    """FP32 lanes per SM for a compute capability, or None when not in the table."""
    entry = _ARCH.get(tuple(cc))
    return entry[1] if entry else None


# (major, minor) -> (FP64 results per clock per SM, FP16 results per clock per SM), from the same
# throughput table ("64-bit" and "16-bit floating-point add, multiply, multiply-add"); an FP16
# result is one half of a half2 HFMA2. Cross-checked against the whitepapers' non-tensor peaks
# (H100 SXM: FP64 33.5 = 132 x 64 x 2 x 1.98 GHz, FP16 133.8 = 132 x 256 x 2 x 1.98 GHz; A100: FP16
# 78 = 108 x 256 x 2 x 1.41 GHz; GA102 and Ada: FP16 equal to FP32). None where not established.
_FP64_FP16 = {
    (6, 0): (32, 128),
    (6, 1): (4, 2),
    (7, 0): (32, 128),
    (7, 5): (2, 128),
    (8, 0): (32, 256),
    (8, 6): (2, 128),
    (8, 7): (2, 128),
    (8, 9): (2, 128),
    (9, 0): (64, 256),
}

# Published L2 read bandwidth in bytes per SM clock: the Volta and A100 whitepapers (2048 and
# 5120 B/clk). Hopper's is not published; the L2 roof there is measured or left out.
_L2_BYTES_PER_CLK = {(7, 0): 2048, (8, 0): 5120}


def fp64_lanes_per_sm(cc: tuple[int, int]) -> int | None:
    """FP64 FMA results per clock per SM, or None when not in the table."""
    return _FP64_FP16.get(tuple(cc), (None, None))[0]


def fp16_lanes_per_sm(cc: tuple[int, int]) -> int | None:
    """FP16 FMA results per clock per SM (two per half2 lane), or None when not in the table."""
    return _FP64_FP16.get(tuple(cc), (None, None))[1]


def l2_bytes_per_clk(cc: tuple[int, int]) -> int | None:
    """Published L2 read bandwidth per SM clock, or None (not published for this architecture)."""
    return _L2_BYTES_PER_CLK.get(tuple(cc))
