"""The Triton GEMM kernels of the Python-native rungs (records: rooflab/rungs/triton.py).

C (M x N, FP32) = A (M x K) · B (K x N), row-major, A and B FP32 or BF16, FP32 accumulation. One
kernel body, two ways to load tiles: pointer loads (any shape) or Hopper TMA tensor descriptors
(rows 16-byte aligned). Imports triton, and nothing of CUDA or CuPy, so the interpreter tests
(TRITON_INTERPRET=1, set before this module is imported) run it on CPU torch tensors.
`matmul` launches on torch's current stream; rooflab.cuda.triton_gemm puts that on CuPy's.
"""

# no `from __future__ import annotations`: Triton reads the tl.constexpr annotations as objects
import triton
import triton.language as tl

from rooflab.rungs.triton import Config


@triton.jit
def _block(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """This program's (block row, block column) in a grouped order: GROUP_M block rows at a time walk
    the block columns, so the B tiles they share stay in L2."""
    return _tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)


@triton.jit
def _tile(t, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Tile t's (block row, block column) in the grouped order."""
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = (t // per_group) * GROUP_M
    rows = min(grid_m - first_m, GROUP_M)
    return first_m + (t % per_group) % rows, (t % per_group) // rows


@triton.jit
def _mma(a, b, acc, PRECISION: tl.constexpr, TRANS: tl.constexpr):
    """acc += a·b, or acc^T += b^T·a^T with TRANS (then acc is BLOCK_N x BLOCK_M)."""
    if TRANS:
        acc = tl.dot(tl.trans(b), tl.trans(a), acc, input_precision=PRECISION)
    else:
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    return acc


@triton.jit
def gemm_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             PRECISION: tl.constexpr, TRANS: tl.constexpr, BT: tl.constexpr):
    """BT: b_ptr holds B^T (N x K, row stride stride_b), so B's tiles are K-major in memory."""
    pid_m, pid_n = _block(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # rows and columns past the edge re-read rows/columns inside it (never stored): no M/N masks on loads
    am = rm % M
    bn = rn % N
    a_ptrs = a_ptr + am[:, None] * stride_a + rk[None, :]
    if BT:
        b_ptrs = b_ptr + bn[None, :] * stride_b + rk[:, None]  # the [BLOCK_K, BLOCK_N] tile of B, read from B^T
    else:
        b_ptrs = b_ptr + rk[:, None] * stride_b + bn[None, :]
    if TRANS:
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = _mma(a, b, acc, PRECISION, TRANS)
        a_ptrs += BLOCK_K
        if BT:
            b_ptrs += BLOCK_K
        else:
            b_ptrs += BLOCK_K * stride_b
    _store(c_ptr, acc, M, N, stride_c, pid_m, pid_n, BLOCK_M, BLOCK_N, TRANS)


@triton.jit
def _store(c_ptr, acc, M, N, stride_c, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
           TRANS: tl.constexpr):
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if TRANS:
        tl.store(c_ptr + rm[None, :] * stride_c + rn[:, None], acc, mask=(rm[None, :] < M) & (rn[:, None] < N))
    else:
        tl.store(c_ptr + rm[:, None] * stride_c + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_tma(a_desc, b_desc, c_ptr, M, N, K, stride_c,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             PRECISION: tl.constexpr, TRANS: tl.constexpr, BT: tl.constexpr):
    """The same GEMM with A and B on TMA tensor descriptors: the copy engine fetches whole tiles
    (zero-filled past the edges). C leaves through plain masked stores (a TMA store would stage a
    whole 128x256 FP32 tile, 128 KB, in shared memory)."""
    pid_m, pid_n = _block(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    if TRANS:
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        if BT:
            b = tl.trans(b_desc.load([off_n, k * BLOCK_K]))
        else:
            b = b_desc.load([k * BLOCK_K, off_n])
        acc = _mma(a, b, acc, PRECISION, TRANS)
    _store(c_ptr, acc, M, N, stride_c, pid_m, pid_n, BLOCK_M, BLOCK_N, TRANS)


@triton.jit
def gemm_tma_persistent(a_desc, b_desc, c_ptr, M, N, K, stride_c,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                        PRECISION: tl.constexpr, TRANS: tl.constexpr, BT: tl.constexpr, PROGRAMS: tl.constexpr):
    """gemm_tma as a persistent kernel: one program per SM walks the tiles PROGRAMS apart, and the
    flattened tile/k loop lets the next tile's first loads start during this tile's epilogue (one
    wave: no tail of idle SMs on the last partial wave, no launch per tile)."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for t in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True):
        pid_m, pid_n = _tile(t, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        if TRANS:
            acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
        else:
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, k_tiles):
            a = a_desc.load([off_m, k * BLOCK_K])
            if BT:
                b = tl.trans(b_desc.load([off_n, k * BLOCK_K]))
            else:
                b = b_desc.load([k * BLOCK_K, off_n])
            acc = _mma(a, b, acc, PRECISION, TRANS)
        _store(c_ptr, acc, M, N, stride_c, pid_m, pid_n, BLOCK_M, BLOCK_N, TRANS)


@triton.jit
def transpose(x_ptr, y_ptr, R, C, BLOCK: tl.constexpr):
    """y (C x R) = x (R x C)^T, both row-major."""
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None] * R + r[None, :], tl.trans(tile), mask=(c[:, None] < C) & (r[None, :] < R))


def tma_fits(cfg: Config, m: int, n: int, k: int, elem_bytes: int) -> bool:
    """TMA needs every row of A and B to start 16-byte aligned (the base pointers are: CuPy and
    torch allocate 256-byte aligned)."""
    return cfg.tma and (k * elem_bytes) % 16 == 0 and (n * elem_bytes) % 16 == 0


def _programs(a, sms: int | None) -> int:
    if sms is not None:
        return sms
    if a.is_cuda:
        import torch  # noqa: PLC0415

        return torch.cuda.get_device_properties(a.device).multi_processor_count
    return 3


def grid(cfg: Config, m: int, n: int) -> tuple[int]:
    return (triton.cdiv(m, cfg.bm) * triton.cdiv(n, cfg.bn),)


def matmul(a, b, c, cfg: Config, sms: int | None = None) -> str:
    """c = a·b for torch tensors (CUDA, or CPU under the interpreter) on torch's current stream;
    returns which kernel ran ("tma", "tma persistent" or "pointers"). sms: programs of a persistent
    kernel (default: the device's SM count; 3 on the CPU, so the interpreter walks several tiles each)."""
    m, k = a.shape
    n = b.shape[1]
    consts = dict(BLOCK_M=cfg.bm, BLOCK_N=cfg.bn, BLOCK_K=cfg.bk, GROUP_M=cfg.group, PRECISION=cfg.input_precision,
                  TRANS=cfg.trans, BT=cfg.bt, num_warps=cfg.warps, num_stages=cfg.stages)
    if cfg.bt:
        # a K-major copy of B, this launch's own (torch's allocator hands each stream its own blocks, and
        # gives this one back to the stream only after the GEMM below, in stream order)
        bt = b.new_empty((n, k))
        transpose[(triton.cdiv(k, 64), triton.cdiv(n, 64))](b, bt, k, n, BLOCK=64, num_warps=4)
        b = bt
    if tma_fits(cfg, m, n, k, a.element_size()):
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: PLC0415

        a_desc = TensorDescriptor.from_tensor(a, [cfg.bm, cfg.bk])
        b_desc = TensorDescriptor.from_tensor(b, [cfg.bn, cfg.bk] if cfg.bt else [cfg.bk, cfg.bn])
        if cfg.persist:
            programs = min(_programs(a, sms), grid(cfg, m, n)[0])
            gemm_tma_persistent[(programs,)](a_desc, b_desc, c, m, n, k, c.stride(0), PROGRAMS=programs, **consts)
            return "tma persistent"
        gemm_tma[grid(cfg, m, n)](a_desc, b_desc, c, m, n, k, c.stride(0), **consts)
        return "tma"
    gemm_ptr[grid(cfg, m, n)](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), **consts)
    return "pointers"
