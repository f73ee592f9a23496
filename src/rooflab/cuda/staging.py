"""Operand staging: a pre-pass that hands a rung's kernel its operands in the layout it reads.

TF32 wgmma reads both operands K-major from shared memory, and the harness's row-major B
(K x N) is N-major. A rung that declares `staging` gets, before each launch of its kernel,
the stage kernels of its own .cu file run on the same stream:
    stage_a_<scheme>(A, A', M, K, Kp)   A  (M x K)  -> A'  (parts x M x Kp), rows rounded / split
    stage_bt_<scheme>(B, B', K, N, Kp)  B  (K x N)  -> B'  (parts x N x Kp), transposed as well
and the kernel is called as kernel(A', B', C, M, N, Kp). Kp is K rounded up to STAGE_K (the
pad zero-filled), so the kernel needs no K predicate. The scratch arrays come from CuPy's pool
inside each launch: a launch on another stream (the concurrent replicas) gets its own, and
the pool reuses a block only on the stream that freed it, after that stream's work.
The rung's time includes the pre-pass: it is part of the GEMM.

Schemes "tma" and "tma_fp8" (rooflab.cuda.tma) run no stage kernels: the kernel gets tensor maps of
A and B in place of the operands (BF16; or e4m3 with B already transposed), and K as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rooflab.cuda import tma
from rooflab.cuda.compile import get_kernel
from rooflab.cuda.gpu import cupy

STAGE_K = 32  # one 128-byte row of FP32: a k-tile of the wgmma kernels
SCHEMES = {"tf32": 1, "3xtf32": 2}  # parts per operand: TF32-rounded, or big + small
TMA = "tma"  # tensor maps of the operands, no pre-pass
TMA_STORE = "tma_store"  # ... and of C, after B's, for the kernels whose epilogue stores through TMA
TMA_FP8 = "tma_fp8"  # the same for e4m3 operands, B handed over as B^T


def takes_c(scheme: str | None) -> bool:
    """The scheme's stage function also needs the output (to map it)."""
    return scheme == TMA_STORE


def staged_k(k: int) -> int:
    return -(-k // STAGE_K) * STAGE_K


def stager(source: str, options: tuple[str, ...], scheme: str, m: int, n: int, k: int,
           label: str) -> tuple[Callable, int]:
    """stage(a, b) -> (a', b') for one problem shape, and the K the kernel is called with."""
    if scheme == TMA_STORE:
        return tma.stager(m, n, k, label, with_c=True)
    if scheme in tma.LAYOUTS:
        return tma.stager(m, n, k, label, tma.LAYOUTS[scheme])
    if scheme not in SCHEMES:
        raise ValueError(f"unknown staging {scheme!r}; known: {', '.join((*SCHEMES, *tma.LAYOUTS, TMA_STORE))}")
    cp = cupy()
    parts, kp = SCHEMES[scheme], staged_k(k)
    ka = get_kernel(source, f"stage_a_{scheme}", options=options, label=f"{label} (stage A)")
    kb = get_kernel(source, f"stage_bt_{scheme}", options=options, label=f"{label} (stage B)")
    grid_a = (-(-m * kp // 4 // 256), 1, 1)
    grid_b = (-(-n // 32), kp // 32, 1)
    m32, n32, k32, kp32 = np.int32(m), np.int32(n), np.int32(k), np.int32(kp)

    def stage(a, b):
        a2 = cp.empty(parts * m * kp, dtype=cp.float32)
        b2 = cp.empty(parts * n * kp, dtype=cp.float32)
        ka.launch(grid_a, (256, 1, 1), (a, a2, m32, k32, kp32))
        kb.launch(grid_b, (32, 8, 1), (b, b2, k32, n32, kp32))
        return a2, b2

    return stage, kp
