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
A and B in place of the operands (BF16; or e4m3 with B already transposed), and K as it is;
every layout of rooflab.cuda.tma with "_store" after its name ("tma_store", "tma_fp8_store",
"tma_fp8_b224_store" ...) adds C's map after B's; "tma_f32_store" maps FP32 A and B where they are (B as
it lies, for the kernels that compute C^T = B^T A^T) and C. "tma_3xtf32" runs the 3xTF32 pre-pass, then
hands the kernel maps of its outputs (and of C) with Kp; "tma_tf32t" only transposes B
(the bits as they are) and maps A where it is, with K as it is.
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
STORE_SUFFIX = "_store"  # a layout's name and this: its maps and C's, for the kernels that store C through TMA
TMA_STORE = "tma_store"  # ... and of C, after B's, for the kernels whose epilogue stores through TMA
TMA_FP8 = "tma_fp8"  # the same for e4m3 operands, B handed over as B^T
TMA_FP8_STORE = "tma_fp8_store"  # ... and C's map after B's
TMA_F32_STORE = "tma_f32_store"  # FP32 operands as they lie (rooflab.cuda.tma's "tma_f32"), and C's map
# the TF32 pre-pass, then tensor maps of its outputs and of C (the persistent TF32 and 3xTF32 kernels)
TMA_PREPASS = {"tma_3xtf32": "3xtf32"}
# B transposed as it is, A in place, both truncated by the tensor core: maps of A, B^T and C, K as it is;
# each scheme's boxes (the second: A in one box of a 128-row tile, B^T in one of 256 rows)
TMA_TRANSPOSE = "tma_tf32t"
TRANSPOSE_LAYOUTS = {TMA_TRANSPOSE: tma.STAGED_F32[1], "tma_tf32t_a128_b256": tma.STAGED_F32_ONE_BOX}


def takes_c(scheme: str | None) -> bool:
    """The scheme's stage function also needs the output (to map it)."""
    return _stored_layout(scheme) is not None or scheme in (*TRANSPOSE_LAYOUTS, *TMA_PREPASS)


def _stored_layout(scheme: str | None) -> tma.Layout | None:
    """The layout a "<layout>_store" scheme maps A and B in (C's map after them); None for the others."""
    if scheme is None or not scheme.endswith(STORE_SUFFIX):
        return None
    return tma.LAYOUTS.get(scheme.removesuffix(STORE_SUFFIX))


def known() -> tuple[str, ...]:
    return (*SCHEMES, *tma.LAYOUTS, *(name + STORE_SUFFIX for name in tma.LAYOUTS), *TRANSPOSE_LAYOUTS, *TMA_PREPASS)


def staged_k(k: int) -> int:
    return -(-k // STAGE_K) * STAGE_K


def stager(source: str, options: tuple[str, ...], scheme: str, m: int, n: int, k: int,
           label: str) -> tuple[Callable, int]:
    """stage(a, b) -> (a', b') for one problem shape, and the K the kernel is called with."""
    if (stored := _stored_layout(scheme)) is not None:
        return tma.stager(m, n, k, label, stored, with_c=True)
    if scheme in tma.LAYOUTS:
        return tma.stager(m, n, k, label, tma.LAYOUTS[scheme])
    if scheme in TRANSPOSE_LAYOUTS:
        return _transposed_b(source, options, m, n, k, label, TRANSPOSE_LAYOUTS[scheme]), k
    if scheme in TMA_PREPASS:
        prepass, kp = _prepass(source, options, TMA_PREPASS[scheme], m, n, k, label)
        layout = tma.STAGED_F32[SCHEMES[TMA_PREPASS[scheme]]]

        def stage_maps(a, b, c):
            a2, b2 = prepass(a, b)
            # the scratch goes back to the pool when this returns, before the kernel that reads it is
            # enqueued: safe, as the pool hands a block out again only on this stream, after that kernel
            return tma.operand_maps(a2, b2, m, n, kp, label, layout=layout, c=c)

        return stage_maps, kp
    if scheme not in SCHEMES:
        raise ValueError(f"unknown staging {scheme!r}; known: {', '.join(known())}")
    return _prepass(source, options, scheme, m, n, k, label)


def _transposed_b(source: str, options: tuple[str, ...], m: int, n: int, k: int, label: str,
                  layout: tma.Layout) -> Callable:
    """stage(a, b, c) -> maps of A (in place), B^T (written by stage_bt_transpose) and C, in `layout`'s boxes."""
    cp = cupy()
    kb = get_kernel(source, "stage_bt_transpose", options=options, label=f"{label} (transpose B)")
    grid = (-(-n // 32), -(-k // 32), 1)
    k32, n32 = np.int32(k), np.int32(n)

    def stage(a, b, c):
        bt = cp.empty((n, k), dtype=cp.float32)
        kb.launch(grid, (32, 8, 1), (b, bt, k32, n32))
        # the scratch goes back to the pool when this returns, before the kernel that reads it is
        # enqueued: safe, as the pool hands a block out again only on this stream, after that kernel
        return tma.operand_maps(a, bt, m, n, k, label, layout=layout, c=c)

    return stage


def _prepass(source: str, options: tuple[str, ...], scheme: str, m: int, n: int, k: int,
             label: str) -> tuple[Callable, int]:
    """The TF32 pre-pass of `scheme` ("tf32" or "3xtf32"): stage(a, b) -> (A', B'), and Kp."""
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
