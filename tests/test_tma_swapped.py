"""The swapped TF32 product of the persistent TMA body (SWAP_AB: C^T = B^T A^T, Tf32SwapOp in
rungs/wgmma_tf32_tma.cu) replayed lane by lane in numpy, no GPU. The replay follows the index formulas
of include/tma_persistent.cuh and include/wgmma_store.cuh (test_the_replayed_formulas_are_the_kernels
holds it to their text): issue_stage's boxes on the swapped problem (B as it lies in 32 k x 32 n boxes,
A K-major in 64 x 32 boxes, 128-byte swizzle, zero fill), load_bt_fragments' two ld.shared.v2 a k8
step, the register-A wgmma m64n256k8 .tf32 read through CUTLASS's ALayout_64x8 and B through its
descriptor, CUTLASS's CLayout_64x256 accumulator, and both epilogues (store_acc_tma_t's swizzled boxes
and their clipped TMA stores; store_wgmma_acc_t's predicated stores). On integer-valued inputs the
replay must give A @ B exactly, every element of C written once. It also counts the wavefronts of
every shared access of the fragment loads and of the epilogue's staging, and the barrier bytes of
every stage against the boxes issued. Each check is shown to fail on a perturbed replay. GPU checks of
the same kernels: tests/test_gpu_tma.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
import tensor_emulator as em

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "src" / "rooflab" / "include"
RUNG = ROOT / "src" / "rooflab" / "rungs" / "wgmma_tf32_tma.cu"

# Tf32SwapOp on body<>: the tile's 128 rows of the swapped product (C's columns) x 256 columns (C's rows)
BM, BN, BK, PARTS, NACC = 128, 256, 32, 1, 128
BOX = 64 * 128  # TP_BOX_BYTES
C_BOX = 64 * 128  # TP_C_BOX_BYTES
STAGE = PARTS * (BM + BN) * 128  # STAGE_BYTES: 128-byte rows of A and B
RING = 1024  # any 1024-aligned shared address: where body's aligned ring starts
POISON = np.uint32(0x7FC00001)  # a NaN (also after TF32 truncation): what no box wrote
LANE = np.arange(32)
G, T = LANE // 4, LANE % 4


@dataclass(frozen=True)
class Variant:
    """The kernel's formulas (the defaults), or one of them perturbed for the self-tests."""
    odd_rows: bool = True  # load_bt_fragments: odd-t lanes load row t + 4 first ...
    odd_select: bool = True  # ... and take a[0], a[1] from their second load
    pair_2g: bool = True  # D rows g, g + 8 of a warp <-> C columns 2g, 2g + 1 (else g, g + 8)
    zero_fill: bool = True  # TMA fills out-of-bounds elements with zeros (else NaN)
    c_swizzle: bool = True  # store_acc_tma_t's XOR of the chunk with the row
    a_box_bytes: int = BOX // 2  # issue_stage's A_BOX for SWAP_AB: a 32 k x 32 n box of B
    short_tx: int = 0  # PLANT_SHORT_TX's extra bytes
    b_one_box: bool = False  # B_ONE_BOX: B's BM / 32 chunks in one rank-3 box (chunks past N land as zeros)
    a_rows: int = 64  # b_box_rows<Op> of the swapped policy: the rows of a box of A (256: one box, _a1 / _ab1)


KERNEL = Variant()


def _swap_kernels() -> dict[str, tuple[int, int, bool]]:
    """kernel -> (cluster, stages, TMA_STORE) of the Tf32SwapOp entry points."""
    found = re.findall(r"\n(mm_wgmma_tf32_swap\w*)\([^{]*\{[^}]*?tma_persistent::body<tf32_tma::Tf32SwapOp, "
                       r"(\d+), (\d+), \d+, \d+, (true|false)>", RUNG.read_text())
    return {name: (int(c), int(s), flag == "true") for name, c, s, flag in found}


def _c_div(a: int, b: int) -> int:
    """C's integer / (toward zero), as issue_stage's box counts divide."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------- layouts (CUTLASS cute/atom/mma_traits_sm90_gmma.hpp)
def alayout_64x8(t: int, v: int) -> tuple[int, int]:
    """GMMA::ALayout_64x8, register A of 32-bit types: ((4,8,4),(2,2)):((64,1,16),(8,256)) -> (m, k)."""
    t0, t1, t2 = t % 4, (t // 4) % 8, t // 32
    idx = 64 * t0 + t1 + 16 * t2 + 8 * (v % 2) + 256 * (v // 2)
    return idx % 64, idx // 64


ALAYOUT = np.array([[alayout_64x8(t, v) for v in range(4)] for t in range(128)])  # [thread, reg, (m, k)]
CLAYOUT = np.array([[em.clayout_64xN(t, v) for v in range(NACC)] for t in range(128)])  # [thread, reg, (m, n)]


# ---------------------------------------------------------------- shared memory, TMA, barriers
class Barrier:
    """One phase of a full barrier: the bytes armed by expect_tx and the bytes the copies complete."""

    def __init__(self):
        self.expected = 0
        self.landed = 0


class Cta:
    def __init__(self, stages: int, stage: int = STAGE):
        self.mem = np.full((RING + stages * stage + 4 * C_BOX) // 4, POISON, dtype=np.uint32)
        self.cbufs = RING + stages * stage  # consumer cw's two C boxes at cbufs + 2 cw C_BOX
        self.bar = Barrier()


def tma_load(ctas: list[Cta], dst: int, tensor: np.ndarray, c0: int, c1: int, rows: int, v: Variant) -> None:
    """cp.async.bulk.tensor.2d, CU_TENSOR_MAP_SWIZZLE_128B, into each CTA of `ctas` (multicast: all of
    them): a box of `rows` rows x 32 FP32 at (c0 inner, c1 rows) of the row-major tensor lands as row r
    at dst + 128 r, its 16-byte chunk c at c ^ (r & 7) (dst 1024-aligned, so it is the swizzle of the
    address); out-of-bounds elements arrive as zeros and count toward each barrier like the rest."""
    assert dst % 1024 == 0
    r, e = np.meshgrid(np.arange(rows), np.arange(32), indexing="ij")
    y, x = c1 + r, c0 + e
    inside = (y < tensor.shape[0]) & (x < tensor.shape[1])
    vals = np.full(r.shape, 0.0 if v.zero_fill else np.nan, dtype=np.float32)
    vals[inside] = tensor[y[inside], x[inside]]
    words = em.swz128(dst + r * 128 + e * 4) // 4
    for cta in ctas:
        cta.mem[words] = vals.view(np.uint32)
        cta.bar.landed += vals.nbytes


def tma_store(mem: np.ndarray, src: int, C: np.ndarray, written: np.ndarray, c0: int, c1: int) -> None:
    """cp.async.bulk.tensor.2d.global.shared of a 64 x 32 FP32 box (C's map: dims {N, M}, box {32, 64},
    128-byte swizzle) to (c0 inner, c1 rows); what falls outside C is not written."""
    assert src % 1024 == 0
    r, e = np.meshgrid(np.arange(64), np.arange(32), indexing="ij")
    y, x = c1 + r, c0 + e
    inside = (y < C.shape[0]) & (x < C.shape[1])
    vals = mem[em.swz128(src + r * 128 + e * 4) // 4].view(np.float32)
    C[y[inside], x[inside]] = vals[inside]
    written[y[inside], x[inside]] += 1


def lds_v2(mem: np.ndarray, at: np.ndarray, log: list | None) -> np.ndarray:
    assert at.shape == (32,) and np.all(at % 8 == 0), "ld.shared.v2 needs 8-byte alignment"
    if log is not None:
        log.append(("lds", at.copy()))
    return np.stack([mem[at // 4], mem[at // 4 + 1]], axis=1)


def sts(mem: np.ndarray, at: np.ndarray, vals: list[np.ndarray], log: list | None) -> None:
    assert np.all(at % (4 * len(vals)) == 0), "a vector store must be aligned to its size"
    if log is not None:
        log.append(("sts", at.copy(), 4 * len(vals)))
    for i, x in enumerate(vals):
        mem[at // 4 + i] = x.astype(np.float32).view(np.uint32)


def wavefronts(at: np.ndarray, nbytes: int) -> int:
    """Shared-memory wavefronts of one warp access: the most distinct 4-byte words any of the 32 banks
    serves (a word several lanes touch counts once; an 8-byte access touches 2 consecutive banks)."""
    words = {int(a) // 4 + i for a in at for i in range(nbytes // 4)}
    per_bank: dict[int, int] = {}
    for w in words:
        per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
    return max(per_bank.values())


# ---------------------------------------------------------------- the producer: issue_stage<Tf32SwapOp, 128, CLUSTER>
def issue_stage(ctas: list[Cta], rank: int, A: np.ndarray, B: np.ndarray, bm: int, bn: int, slot: int, kt: int,
                v: Variant = KERNEL, tile_n: int = BN) -> tuple[int, int]:
    """As body calls it on the swapped problem: tmR = B's map (dims {N, K}, box {32, 32}), tmS = A's
    (dims {K, M}, box {32, 64}), (M, N) of the call = (N, M) of C; tile_n: the policy's BN. Returns (B
    boxes, A boxes) issued."""
    Mr, Nr = B.shape[1], A.shape[0]
    a_rows, a_box = (BM, BM * 128) if v.b_one_box else (32, v.a_box_bytes)
    k0 = kt * BK
    a_boxes = max(0, min(BM // a_rows, _c_div(Mr - bm + a_rows - 1, a_rows)))
    br = v.a_rows  # b_box_rows<Op>: 64 rows of A per box by default
    b_boxes = min(tile_n // br, _c_div(Nr - bn + br - 1, br))
    me = ctas[rank]
    me.bar.expected += PARTS * (a_boxes * a_box + b_boxes * br * 128) + v.short_tx
    for w in range(a_boxes):  # B (K x N) as it lies: 32 k-rows x 32 n of it, c0 along n, c1 along k
        if v.b_one_box:  # tma_load_3d(slot, tmR, 0, k0, bm / 32): its chunks one after another, each 32 n x 32 k
            for c in range(BM // 32):
                tma_load([me], slot + c * (BOX // 2), B, bm + 32 * c, k0, 32, v)
        else:
            tma_load([me], slot + w * (BOX // 2), B, bm + 32 * w, k0, 32, v)
    sb = slot + PARTS * BM * 128
    share = len(ctas)  # CTAs that split the boxes: the swapped policy multicasts (no NO_MULTICAST)
    for q in range(rank if share > 1 else 0, b_boxes, share):  # A K-major: 64 rows of A, c0 along k
        tma_load(ctas, sb + q * br * 128, A, k0, bn + br * q, br, v)
    return a_boxes, b_boxes


def schedule_at(t: int, rank: int, Mr: int, Nr: int, cluster: int, group: int = 16,
                tile_n: int = BN) -> tuple[int, int]:
    """Schedule<128, tile_n, CLUSTER>::at on the swapped problem."""
    grid_n, rows_c = _cdiv(Nr, tile_n), _cdiv(_cdiv(Mr, BM), cluster)
    g = max(group // cluster, 1)
    in_group = g * grid_n
    first = (t // in_group) * g
    group_rows = min(rows_c - first, g)
    return ((first + (t % in_group) % group_rows) * cluster + rank) * BM, ((t % in_group) // group_rows) * tile_n


# ---------------------------------------------------------------- the consumers: consume_tile_swapped
def load_bt_fragments(mem: np.ndarray, box: int, w: int, v: Variant = KERNEL, log: list | None = None) -> np.ndarray:
    """Warp w's f[16] (-> [32 lanes, 16] uint32): B^T's 64 rows of the warpgroup from two 32 k x 32 n
    boxes at `box`, 4 k8 steps x 4 registers."""
    base = box + (w >> 1) * (BOX // 2)
    chunk, lo = 4 * (w & 1) + G // 2, 8 * (G & 1)
    odd = (T & 1).astype(bool)
    first_high, take_second = odd & v.odd_rows, odd & v.odd_select
    f = np.zeros((32, 16), dtype=np.uint32)
    for kk in range(4):
        r0 = 8 * kk + T + np.where(first_high, 4, 0)
        r1 = 8 * kk + T + np.where(first_high, 0, 4)
        x = lds_v2(mem, base + r0 * 128 + (((chunk ^ (r0 & 7)) << 4) | lo), log)
        y = lds_v2(mem, base + r1 * 128 + (((chunk ^ (r1 & 7)) << 4) | lo), log)
        f[:, 4 * kk + 0] = np.where(take_second, y[:, 0], x[:, 0])
        f[:, 4 * kk + 1] = np.where(take_second, y[:, 1], x[:, 1])
        f[:, 4 * kk + 2] = np.where(take_second, x[:, 0], y[:, 0])
        f[:, 4 * kk + 3] = np.where(take_second, x[:, 1], y[:, 1])
    return f


def read_kmajor_sw128_tf32(mem: np.ndarray, desc: int, rows: int = 256) -> np.ndarray:
    """A k8 TF32 operand through its descriptor, CUTLASS's canonical K-major SW128 for 32-bit elements:
    row n at start + 128 (n % 8) + SBO (n // 8), element k 4k bytes on, the address 128-byte swizzled
    -> [rows, 8], the values the tensor core reads (TF32: the top 19 bits)."""
    start, _lbo, sbo = em.decode_desc(desc)
    n, k = np.meshgrid(np.arange(rows), np.arange(8), indexing="ij")
    return em.tf32_value(mem[em.swz128(start + (n % 8) * 128 + (n // 8) * sbo + k * 4) // 4])


def wgmma_m64n256k8_tf32_rs(D: np.ndarray, a: np.ndarray, mem: np.ndarray, desc_b: int, scale_d: bool) -> np.ndarray:
    """wgmma.mma_async m64n256k8 .f32.tf32.tf32, A from registers (a: [128 threads, 4] uint32, placed
    by ALayout_64x8), B (8 x 256) K-major through desc_b; D [64, 256] float64 (scale_d false: D = A B)."""
    A = np.full((64, 8), np.nan)
    hits = np.zeros((64, 8), dtype=int)
    A[ALAYOUT[..., 0], ALAYOUT[..., 1]] = em.tf32_value(a)
    np.add.at(hits, (ALAYOUT[..., 0], ALAYOUT[..., 1]), 1)
    assert (hits == 1).all(), "ALayout_64x8 places every element of A once"
    prod = A @ read_kmajor_sw128_tf32(mem, desc_b).T
    return D + prod if scale_d else prod


def mma_k_tile(mem: np.ndarray, slot: int, cw: int, kt: int, D: np.ndarray, v: Variant, log: list | None) -> np.ndarray:
    """One step of consume_tile_swapped for consumer warpgroup cw: its fragments, then Tf32SwapOp::mma."""
    a_off, b_off = cw * 64 * 128, BM * 128
    f = np.concatenate([load_bt_fragments(mem, slot + a_off, w, v, log) for w in range(4)])  # [thread, 16]
    for kk in range(BK // 8):
        D = wgmma_m64n256k8_tf32_rs(D, f[:, 4 * kk:4 * kk + 4], mem, em.make_desc(slot + b_off + kk * 32, 16, 1024),
                                    kt > 0 or kk > 0)
    return D


# ---------------------------------------------------------------- the epilogues
def _write(C: np.ndarray, written: np.ndarray, m: np.ndarray, n: np.ndarray, vals: np.ndarray) -> None:
    assert np.all((m >= 0) & (m < C.shape[0]) & (n >= 0) & (n < C.shape[1])), "a store outside C"
    C[m, n] = vals
    written[m, n] += 1


def _columns(n0: int, w: int, v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """C's columns of a warp's D rows g (h = 0) and g + 8 (h = 1) as lanes."""
    if v.pair_2g:
        return n0 + 16 * w + 2 * G, n0 + 16 * w + 2 * G + 1
    return n0 + 16 * w + G, n0 + 16 * w + G + 8


def store_wgmma_acc_t(acc: np.ndarray, C: np.ndarray, written: np.ndarray, n0: int, m0: int, v: Variant) -> None:
    """acc: [128 threads, NACC] FP32 (CLayout_64xN, N = 2 NACC). C is 8-byte aligned here: pairs where N is
    even."""
    M, N = C.shape
    pair = N % 2 == 0
    for w in range(4):
        a = acc[32 * w:32 * w + 32]
        n, n1 = _columns(n0, w, v)
        live = n < N  # if (n >= N) return;
        for j in range(acc.shape[1] // 4):
            for e in range(2):
                m = m0 + 8 * j + 2 * T + e
                ok = live & (m < M)
                if pair:  # one float2: n + 1 < N follows from N and n even (_write checks it)
                    _write(C, written, m[ok], n[ok], a[ok, 4 * j + e])
                    _write(C, written, m[ok], n1[ok], a[ok, 4 * j + 2 + e])
                else:
                    _write(C, written, m[ok], n[ok], a[ok, 4 * j + e])
                    ok1 = ok & (n1 < N)
                    _write(C, written, m[ok1], n1[ok1], a[ok1, 4 * j + 2 + e])


def store_acc_tma_t(acc: np.ndarray, cta: Cta, cw: int, C: np.ndarray, written: np.ndarray, n0: int, m0: int,
                    v: Variant, log: list | None) -> None:
    """The warpgroup's two 64 x 32 boxes a 64-row block, then their TMA stores. The buffers are poisoned
    before each block (the kernel leaves the last block's bytes): every element stored must be one the
    block's st.shared wrote."""
    M, N = C.shape
    bufs = cta.cbufs + cw * 2 * C_BOX
    for mb in range(acc.shape[1] // 32):
        cta.mem[bufs // 4:(bufs + 2 * C_BOX) // 4] = POISON
        for w in range(4):
            a = acc[32 * w:32 * w + 32]
            buf = bufs + (w >> 1) * C_BOX
            byte = 64 * (w & 1) + 8 * G
            for jj in range(8):
                for e in range(2):
                    r, j = 8 * jj + 2 * T + e, 8 * mb + jj
                    if v.pair_2g:
                        chunk = ((byte >> 4) ^ (r & 7)) if v.c_swizzle else byte >> 4
                        at = buf + r * 128 + ((chunk << 4) | (byte & 15))
                        sts(cta.mem, at, [a[:, 4 * j + e], a[:, 4 * j + 2 + e]], log)
                    else:  # D rows g, g + 8 as columns g, g + 8: two scalar stores
                        for h, col in enumerate(_columns(0, w & 1, v)):
                            b = 4 * col
                            at = buf + r * 128 + ((((b >> 4) ^ (r & 7)) << 4) | (b & 15))
                            sts(cta.mem, at, [a[:, 4 * j + 2 * h + e]], log)
        if m0 + 64 * mb < M:
            if n0 < N:
                tma_store(cta.mem, bufs, C, written, n0, m0 + 64 * mb)
            if n0 + 32 < N:
                tma_store(cta.mem, bufs + C_BOX, C, written, n0 + 32, m0 + 64 * mb)


# ---------------------------------------------------------------- the kernel
def run_swapped(A: np.ndarray, B: np.ndarray, epilogue: str = "tma", cluster: int = 1, stages: int = 4,
                v: Variant = KERNEL, log: list | None = None, group: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """body<Tf32SwapOp, CLUSTER, STAGES, .., TMA_STORE> over every tile, one cluster tile after another
    (the producer fills a stage, then the consumers run on it). epilogue "tma": store_acc_tma_t where
    body takes it (N % 4 == 0, C 16-byte aligned), else store_wgmma_acc_t; "direct": always the latter.
    Returns C (NaN where never written) and how often each element was written."""
    M, K = A.shape
    N = B.shape[1]
    Mr, Nr = N, M
    C = np.full((M, N), np.nan)
    written = np.zeros((M, N), dtype=int)
    ctas = [Cta(stages) for _ in range(cluster)]
    tiles = _cdiv(_cdiv(Mr, BM), cluster) * _cdiv(Nr, BN)
    KT = _cdiv(K, BK)
    it = 0
    for tile in range(tiles):
        at = [schedule_at(tile, rank, Mr, Nr, cluster, group) for rank in range(cluster)]
        D = [[np.full((64, 256), np.nan) for _cw in range(2)] for _r in range(cluster)]  # acc is never zeroed
        for kt in range(KT):
            slot = RING + (it % stages) * STAGE
            for cta in ctas:  # the slot as a stale ring would hold it: nothing a box did not write is readable
                cta.bar = Barrier()
                cta.mem[slot // 4:(slot + STAGE) // 4] = POISON
            for rank, (bm, bn) in enumerate(at):
                issue_stage(ctas, rank, A, B, bm, bn, slot, kt, v)
            for cta in ctas:
                assert cta.bar.landed == cta.bar.expected, "the full barrier's phase would not complete as armed"
            for rank, cta in enumerate(ctas):
                for cw in range(2):
                    D[rank][cw] = mma_k_tile(cta.mem, slot, cw, kt, D[rank][cw], v, log)
            it += 1
        for rank, (bm, bn) in enumerate(at):
            for cw in range(2):
                n0 = bm + cw * 64
                if n0 >= N:
                    continue
                acc = D[rank][cw][CLAYOUT[..., 0], CLAYOUT[..., 1]].astype(np.float32)
                if epilogue == "tma" and N % 4 == 0:
                    store_acc_tma_t(acc, ctas[rank], cw, C, written, n0, bn, v, log)
                else:
                    store_wgmma_acc_t(acc, C, written, n0, bn, v)
    return C, written


def _operands(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small integers: exact in TF32, and every product and sum exact in FP32."""
    rng = np.random.default_rng(7 * m + 5 * n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    b = rng.integers(-3, 4, (k, n)).astype(np.float32)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _exact(m, n, k, **kw) -> bool:
    a, b, ref = _operands(m, n, k)
    got, written = run_swapped(a, b, **kw)
    return bool(np.array_equal(got, ref) and (written == 1).all())


# ---------------------------------------------------------------- tests
def test_the_layout_tables_are_the_ones_the_kernel_comments_give():
    """ALayout_64x8 as ptx.cuh states it for wgmma_m64n256k8_tf32_rs, and CLayout_64x256 as the
    epilogues index the accumulator (acc[4j + 2h + e] = row 16w + g + 8h, column 8j + 2t + e)."""
    for t in range(128):
        w, g, tt = t // 32, (t % 32) // 4, t % 4
        assert [tuple(x) for x in ALAYOUT[t]] == [(16 * w + g, tt), (16 * w + g + 8, tt), (16 * w + g, tt + 4),
                                                   (16 * w + g + 8, tt + 4)]
        for v in range(NACC):
            j, h, e = v // 4, (v // 2) % 2, v % 2
            assert tuple(CLAYOUT[t, v]) == (16 * w + g + 8 * h, 8 * j + 2 * tt + e)


def test_the_replayed_kernels_are_the_entry_points():
    assert _swap_kernels() == {"mm_wgmma_tf32_swap": (1, 4, True), "mm_wgmma_tf32_swap_cluster": (2, 4, True),
                               "mm_wgmma_tf32_swap_direct": (1, 4, False)}
    src = " ".join(RUNG.read_text().split())
    assert ("struct Tf32SwapOp { static constexpr int BK = TF_BK, BN = 256, NACC = 128, PARTS = 1, FLUSH = 0; "
            "static constexpr bool B_KMAJOR = true, SWAP_AB = true;") in src


# the kernel's text of every formula the replay re-derives (whitespace collapsed): a changed formula
# fails here, and the replay above is to be re-derived with it
FORMULAS = {
    "tma_persistent.cuh": [
        # issue_stage
        "constexpr bool ONE = SW && b_one_box<Op>::value;",
        "constexpr int A_ROWS = ONE ? BM : SW ? 32 : a_box_rows<Op>::value, A_BOX = A_ROWS * 128;",
        "const int a_boxes = max(0, min(BM / A_ROWS, (M - bm + A_ROWS - 1) / A_ROWS));",
        "if constexpr (ONE) tma_load_3d(slot, tmA, 0, k0, bm / 32, full);",
        "constexpr int BR = ONE_B ? Op::BN : b_box_rows<Op>::value, B_BOX = BR * 128;",
        "const int b_boxes = min(Op::BN / BR, (N - bn + BR - 1) / BR);",
        "mbar_arrive_expect_tx(full, Op::PARTS * (a_boxes * A_BOX + b_boxes * B_BOX) + 16);",
        "mbar_arrive_expect_tx(full, Op::PARTS * (a_boxes * A_BOX + b_boxes * B_BOX));",
        "else if constexpr (SW) tma_load_2d(slot + w * A_BOX, tmA, bm + 32 * w, k0, full);",
        "const unsigned sb = slot + Op::PARTS * BM * 128;",
        "constexpr int SHARE = skips_multicast<Op>::value ? 1 : CLUSTER;",
        "for (int q = SHARE > 1 ? (int)rank : 0; q < b_boxes; q += SHARE) {",
        "const unsigned dst = sb + (p * (Op::BN / BR) + q) * B_BOX;",
        "const int c0 = Op::B_KMAJOR ? k0 : bn + BR * q, c1 = Op::B_KMAJOR ? p * N + bn + BR * q : k0;",
        # load_bt_fragments
        "const int lane = threadIdx.x % 32, w = (threadIdx.x % 128) / 32, g = lane / 4, t = lane % 4;",
        "const unsigned base = box + (w >> 1) * (TP_BOX_BYTES / 2);",
        "const int chunk = 4 * (w & 1) + g / 2, lo = 8 * (g & 1);",
        "const bool odd = t & 1;",
        "const int r0 = 8 * kk + t + (odd ? 4 : 0), r1 = 8 * kk + t + (odd ? 0 : 4);",
        ': "r"(base + r0 * 128 + (((chunk ^ (r0 & 7)) << 4) | lo)));',
        ': "r"(base + r1 * 128 + (((chunk ^ (r1 & 7)) << 4) | lo)));',
        "f[4 * kk + 0] = odd ? y[0] : x[0]; f[4 * kk + 1] = odd ? y[1] : x[1]; "
        "f[4 * kk + 2] = odd ? x[0] : y[0]; f[4 * kk + 3] = odd ? x[1] : y[1];",
        # consume_tile_swapped
        "const unsigned a_off = cw * 64 * 128, b_off = BM * 128;",
        "load_bt_fragments(cur, slot + a_off);",
        "Op::mma(acc, cur, slot + b_off, kt > 0);",
        # store_acc_tma_t
        "const unsigned buf = bufs + (w >> 1) * TP_C_BOX_BYTES;",
        "const int byte = 64 * (w & 1) + 8 * (lane / 4);",
        "for (int mb = 0; mb < NACC / 32; mb++) {",
        "const int r = 8 * jj + 2 * (lane % 4) + e, j = 8 * mb + jj;",
        "const unsigned at = buf + r * 128 + ((((byte >> 4) ^ (r & 7)) << 4) | (byte & 15));",
        '"f"(acc[4 * j + e]), "f"(acc[4 * j + 2 + e])',
        "if (m0 + 64 * mb < M) { if (n0 < N) tma_store_2d(tmC, bufs, n0, m0 + 64 * mb); "
        "if (n0 + 32 < N) tma_store_2d(tmC, bufs + TP_C_BOX_BYTES, n0 + 32, m0 + 64 * mb); }",
        # body
        "constexpr int STAGE_BYTES = (Op::PARTS * (BM + Op::BN) + (SPLIT ? Op::BN : 0)) * 128;",
        "const int Mr = SW ? N : M, Nr = SW ? M : N;",
        "const void* tmR = SW ? tmB : tmA; const void* tmS = SW ? tmA : tmB;",
        "const Schedule<BM, Op::BN, CLUSTER, GROUP> sch(Mr, Nr);",
        "const bool c_by_tma = TMA_STORE && N % 4 == 0 && (reinterpret_cast<size_t>(C) & 15) == 0;",
        "const unsigned cbufs = base + STAGES * STAGE_BYTES + cw * CBUFS * TP_C_BOX_BYTES;",
        "if (bm + cw * 64 >= N) { } else if (TMA_STORE && c_by_tma) { "
        "store_acc_tma_t<Op::NACC>(acc, tmC, cbufs, bm + cw * 64, bn, M, N, cw); } else { "
        "store_wgmma_acc_t(acc, C, M, N, bm + cw * 64, bn); }",
        # Schedule
        "constexpr int G = GROUP / CLUSTER > 0 ? GROUP / CLUSTER : 1;",
        "const int in_group = G * grid_n, first = (t / in_group) * G;",
        "const int group_rows = min(rows_c - first, G);",
        "bm = ((first + (t % in_group) % group_rows) * CLUSTER + (int)rank) * BM;",
        "bn = ((t % in_group) / group_rows) * BN;",
    ],
    "wgmma_store.cuh": [
        "const int n = n0 + warp_in_wg * 16 + 2 * (lane / 4);",
        "const bool pair = (N % 2 == 0) && ((reinterpret_cast<size_t>(C) & 7) == 0);",
        "if (n >= N) return;",
        "for (int j = 0; j < NACC / 4; j++) {",
        "const int m = m0 + 8 * j + 2 * (lane % 4) + e; if (m >= M) continue; float* p = C + (size_t)m * N + n;",
        "*reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + e], acc[4 * j + 2 + e]);",
        "p[0] = acc[4 * j + e]; if (n + 1 < N) p[1] = acc[4 * j + 2 + e];",
    ],
}
OP_FORMULAS = [
    "wgmma_m64n256k8_tf32_rs(d, *reinterpret_cast<const unsigned(*)[4]>(&f[4 * kk]), "
    "make_desc(b0 + kk * 32, 16, 1024), accumulate || kk > 0);",
]


def test_the_replayed_formulas_are_the_kernels():
    for name, lines in FORMULAS.items():
        src = " ".join((INCLUDE / name).read_text().split())
        missing = [line for line in lines if line not in src]
        assert not missing, (name, missing)
    src = " ".join(RUNG.read_text().split())
    assert all(line in src for line in OP_FORMULAS)


# (M, N, K): one k-tile (K 32, and K 20: zero fill in it), then K loops with a tail; M and N past the
# tile edges, N off multiples of 32 (and of 4: the direct epilogue, N odd and even)
ONE_K_TILE = [(64, 96, 32), (45, 36, 20)]
K_LOOPS = [(300, 200, 100), (260, 76, 33), (45, 33, 70), (257, 130, 64), (20, 264, 47)]


@pytest.mark.parametrize("epilogue", ["tma", "direct"])
@pytest.mark.parametrize("shape", ONE_K_TILE + K_LOOPS, ids=lambda s: "x".join(map(str, s)))
def test_the_swapped_data_path_computes_the_product(shape, epilogue):
    """TMA's boxes placed as issue_stage places them, B^T's fragments as load_bt_fragments loads them,
    the register-A wgmma, and either epilogue: C == A @ B exactly, every element once."""
    m, n, k = shape
    a, b, ref = _operands(m, n, k)
    got, written = run_swapped(a, b, epilogue=epilogue)
    assert (written == 1).all(), f"{(written == 0).sum()} elements unwritten, {(written > 1).sum()} written twice"
    assert np.array_equal(got, ref), np.argwhere(got != ref)[:8]


@pytest.mark.parametrize("shape", [(300, 200, 100), (45, 33, 70), (600, 330, 40)], ids=lambda s: "x".join(map(str, s)))
def test_the_cluster_variant_computes_the_product(shape):
    """mm_wgmma_tf32_swap_cluster: 2 CTAs along C's columns, A's boxes split between them and multicast
    into both, a spare CTA past N loading no B (and storing nothing)."""
    assert _exact(*shape, cluster=2)


ONE_BOX = {"_a1": replace(KERNEL, a_rows=256), "_ab1": replace(KERNEL, a_rows=256, b_one_box=True)}


@pytest.mark.parametrize("name", sorted(ONE_BOX))
@pytest.mark.parametrize("shape", ONE_K_TILE + K_LOOPS + [(600, 330, 40)], ids=lambda s: "x".join(map(str, s)))
def test_the_one_box_variants_compute_the_product(shape, name):
    """mm_wgmma_tf32_swap_a1 and _ab1: A in one 256-row box, and for _ab1 B's four chunks in one rank-3 box (a chunk
    wholly past N lands as zeros, counted on the barrier): every barrier completes and C == A @ B exactly."""
    assert _exact(*shape, v=ONE_BOX[name])


def test_the_one_box_kernels_are_the_replayed_ones():
    src = " ".join(RUNG.read_text().split())
    assert ("template <bool B_ONE> struct Tf32SwapBoxOp : Tf32SwapOp { static constexpr int B_BOX_ROWS = 256; "
            "static constexpr bool B_ONE_BOX = B_ONE; };") in src
    for name, one in (("_a1", "false"), ("_ab1", "true")):
        assert (f"mm_wgmma_tf32_swap{name}(const void* tmA, const void* tmB, float* C, int M, int N, int K) {{ "
                f"#if defined(__CUDA_ARCH_FEAT_SM90_ALL) tma_persistent::body<tf32_tma::Tf32SwapBoxOp<{one}>, 1, 4, "
                "40, 232, true>") in src


def test_a_group_of_one_row_tile_walks_every_tile_too():
    assert _exact(300, 520, 40, group=1) and _exact(300, 520, 40, cluster=2, group=1)


@pytest.mark.parametrize("flip", [{"odd_select": False}, {"pair_2g": False}, {"zero_fill": False},
                                  {"c_swizzle": False}], ids=lambda f: next(iter(f)))
def test_the_replay_catches_a_perturbed_formula(flip):
    """The odd-t lanes keeping their first load in a[0], a[1]; C's columns g, g + 8 for D's rows g,
    g + 8 where the loads paired 2g, 2g + 1; no zero fill of the K tail and the edges; the epilogue's
    boxes written unswizzled: each breaks the product (the TMA epilogue where it stores)."""
    v = replace(KERNEL, **flip)
    assert _exact(260, 76, 33)  # the shape passes as the kernel has it
    assert not _exact(260, 76, 33, v=v)
    if "pair_2g" in flip:
        assert not _exact(45, 33, 70, v=v)  # the direct epilogue too


def _log(v: Variant = KERNEL) -> list:
    log: list = []
    a, b, ref = _operands(300, 200, 40)
    got, _w = run_swapped(a, b, epilogue="tma", v=v, log=log)
    assert np.array_equal(got, ref)
    return log


def test_every_fragment_load_and_epilogue_store_takes_two_wavefronts():
    """A warp's ld.shared.v2 (32 x 8 bytes) and st.shared.v2 need at least 2 wavefronts; the swizzle
    XOR and the odd-t row order make each of them take exactly that."""
    log = _log()
    lds = [at for kind, at, *_ in log if kind == "lds"]
    sts_ = [(e[1], e[2]) for e in log if e[0] == "sts"]
    # 4 tiles x 2 k-tiles x 2 consumers x 4 warps x 4 k8 steps x 2 loads; 8 warpgroups store, each
    # 4 blocks x 4 warps x 16
    assert len(lds) == 4 * 2 * 2 * 4 * 4 * 2 and len(sts_) == 8 * 4 * 4 * 16
    assert {wavefronts(at, 8) for at in lds} == {2}
    assert {wavefronts(at, n) for at, n in sts_} == {2} and {n for _a, n in sts_} == {8}


def test_the_bank_model_sees_the_conflicts_the_order_and_the_swizzle_avoid():
    """Without the odd-t order (rows t of one k8 step, all 4 in one bank half) the loads take 4
    wavefronts, the product still right; unswizzled staging rows would take 4 too."""
    v = replace(KERNEL, odd_rows=False, odd_select=False)
    lds = [at for kind, at, *_ in _log(v) if kind == "lds"]
    assert max(wavefronts(at, 8) for at in lds) == 4
    unswizzled = [buf + (2 * T + e) * 128 + 64 * (w & 1) + 8 * G
                  for buf in (0, C_BOX) for w in range(4) for e in range(2)]
    assert {wavefronts(at, 8) for at in unswizzled} == {4}
    assert wavefronts(np.zeros(32, dtype=int), 8) == 1  # one word every lane reads: a broadcast


@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("shape", [(300, 200), (260, 76), (45, 33), (20, 264), (1, 1), (512, 256)],
                         ids=lambda s: "x".join(map(str, s)))
def test_each_stage_arms_its_barrier_with_the_bytes_of_the_boxes_issued(shape, cluster):
    """Every CTA of every tile: expect_tx == the bytes its boxes (and its partner's multicast ones)
    complete; the boxes skipped are exactly those wholly past N (B's) or M (A's)."""
    m, n = shape
    a, b = np.zeros((m, 40), np.float32), np.zeros((40, n), np.float32)
    for tile in range(_cdiv(_cdiv(n, BM), cluster) * _cdiv(m, BN)):
        ctas = [Cta(1) for _ in range(cluster)]
        at = [schedule_at(tile, rank, n, m, cluster) for rank in range(cluster)]
        for rank, (bm, bn) in enumerate(at):
            b_boxes, a_boxes = issue_stage(ctas, rank, a, b, bm, bn, RING, 1)
            assert b_boxes == sum(bm + 32 * w < n for w in range(4))
            assert a_boxes == sum(bn + 64 * q < m for q in range(4))
        for (bm, bn), cta in zip(at, ctas):
            assert cta.bar.expected == cta.bar.landed
            assert cta.bar.expected == 4096 * max(0, min(4, _cdiv(n - bm, 32))) + 8192 * min(4, _cdiv(m - bn, 64))


@pytest.mark.parametrize("flip", [{"short_tx": 16}, {"a_box_bytes": BOX}], ids=lambda f: next(iter(f)))
def test_the_byte_check_catches_a_miscounted_barrier(flip):
    """PLANT_SHORT_TX's 16 bytes too many, or B's boxes counted as 8 KB: the phase never completes."""
    ctas = [Cta(1)]
    issue_stage(ctas, 0, np.zeros((45, 40), np.float32), np.zeros((40, 33), np.float32), 0, 0, RING, 0,
                replace(KERNEL, **flip))
    assert ctas[0].bar.expected != ctas[0].bar.landed
    with pytest.raises(AssertionError, match="full barrier"):
        _exact(45, 33, 40, v=replace(KERNEL, **flip))
