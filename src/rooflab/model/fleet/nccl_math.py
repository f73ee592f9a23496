"""nccl-tests' bandwidth definitions (doc/PERFORMANCE.md in NVIDIA/nccl-tests), pure.

algbw = bytes / time, where bytes is the message size (count x element size).
busbw = algbw x factor, the factor making figures comparable with the hardware's
link speed whatever the rank count: all-reduce moves 2(n-1)/n of the data over the
slowest link (reduce-scatter then all-gather), all-gather and reduce-scatter (n-1)/n,
broadcast and reduce 1.
"""

from __future__ import annotations

_FACTORS = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


def busbw_factor(op: str, n: int) -> float:
    if n < 1:
        raise ValueError(f"rank count must be at least 1, got {n}")
    try:
        return _FACTORS[op](n)
    except KeyError:
        raise ValueError(f"unknown collective {op!r}; known: {', '.join(_FACTORS)}") from None


def algbw_gbs(nbytes: float, seconds: float) -> float:
    """GB/s (1e9 bytes/s)."""
    return nbytes / seconds / 1e9


def busbw_gbs(nbytes: float, seconds: float, n: int, op: str = "allreduce") -> float:
    return algbw_gbs(nbytes, seconds) * busbw_factor(op, n)


def sizes(min_bytes: int, max_bytes: int, factor: int = 2, elem: int = 4) -> list[int]:
    """Message sizes min, min*factor, ... up to max (each a whole number of elements)."""
    if factor < 2:
        raise ValueError("factor must be at least 2")
    if min_bytes < elem or max_bytes < min_bytes:
        raise ValueError(f"bad size range {min_bytes}..{max_bytes}")
    out, s = [], min_bytes
    while s <= max_bytes:
        out.append(s - s % elem)
        s *= factor
    return out
