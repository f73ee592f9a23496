"""Per-architecture facts the driver does not report: FP32 CUDA cores per SM.

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
