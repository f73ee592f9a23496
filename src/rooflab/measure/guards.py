"""Outputs with guard zones: a band of sentinel words before and after every checked output.

A kernel that stores one row past C (or one element before it) passes every value check,
since C itself is right; only the memory next to it changes. Every checked output is
therefore the middle of a larger allocation whose two bands hold a sentinel bit pattern,
verified after each checked run.
"""

from __future__ import annotations

import numpy as np

from rooflab.cuda.gpu import cupy

SENTINEL = np.uint32(0x7FBADBAD)  # a signalling-NaN bit pattern no float kernel writes by accident
ALIGN = 64  # words: C starts 256-byte aligned, as cudaMalloc'd memory does


def guard_words(row: int) -> int:
    """At least one row (a matrix's last dimension) and 4096 words on each side, a multiple of ALIGN."""
    g = max(4096, row + ALIGN)
    return -(-g // ALIGN) * ALIGN


class Guarded:
    """A float32 array of `shape` inside a sentinel band; `.array` is what the kernel gets."""

    def __init__(self, shape: tuple[int, ...], dtype=np.float32):
        cp = cupy()
        self.shape = tuple(shape)
        self.count = int(np.prod(self.shape))
        self.guard = guard_words(self.shape[-1] if len(self.shape) >= 2 else 0)
        self._buf = cp.empty(self.count + 2 * self.guard, dtype=dtype)
        self._bits = self._buf.view(cp.uint32)
        self.array = self._buf[self.guard:self.guard + self.count].reshape(self.shape)

    def poison(self) -> None:
        """NaN in the output (an unwritten element fails every check), sentinels in the bands."""
        self._bits[:self.guard] = SENTINEL
        self._bits[self.guard + self.count:] = SENTINEL
        self.array.fill(np.nan)

    def touched(self) -> int:
        """How many guard words the last run changed."""
        cp = cupy()
        before = int(cp.count_nonzero(self._bits[:self.guard] != SENTINEL))
        after = int(cp.count_nonzero(self._bits[self.guard + self.count:] != SENTINEL))
        return before + after
