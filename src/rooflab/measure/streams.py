"""copy.cu's entries launched as their records say (rooflab.ceilings.COPY): block, grid and
build options. The bandwidth harness, the read-stream variants and the profiled launch all go
through `launcher`, so none keeps a grid of its own."""

from __future__ import annotations

from collections.abc import Callable

from rooflab import ceilings
from rooflab.ceilings import Stream
from rooflab.cuda.compile import get_kernel


def launcher(entry: Stream, args: tuple, *, grid: int, block: int | None = None) -> Callable[[], None]:
    """One launch of `entry` at `grid` blocks of `block` threads (the entry's block by default)."""
    rec = ceilings.COPY
    kern = get_kernel(rec.source, entry.kernel, rec.options)
    block = block or entry.block
    return lambda: kern.launch((grid, 1, 1), (block, 1, 1), args)
