"""Numpy emulation of the tensor-core rungs' data paths (no GPU needed).

It replays, lane by lane, what mma_tf32.cu / mma_3xtf32.cu / mma_bf16.cu do with their
index formulas: the loader's chunk plan into the padded shared ring (with zero fill out of
range), ldmatrix (plain and .trans, emulated on the b16 view of shared memory as the PTX ISA
defines it), the 32-bit B-fragment loads, mma.sync from the PTX ISA fragment tables, and the
predicated epilogue. The result must equal the matrix product of the (rounded) inputs, for
odd shapes that exercise every edge predicate. It also checks bank conflicts of every
fragment load, the grouped rasterization (every tile exactly once), and the 3xTF32 split.

PTX ISA tables used (g = lane / 4, t = lane % 4):
  mma.m16n8k8 .tf32:  a_i: row g + 8*(i%2), col t + 4*(i//2)     (i = 0..3)
                      b_i: row t + 4*i,      col g               (i = 0..1)
  mma.m16n8k16 .bf16: a_i: row g + 8*((i//2)%2), col 2t + i%2 + 8*(i//4)   (i = 0..7)
                      b_i: row 2t + i%2 + 8*(i//2), col g                  (i = 0..3)
                      element 2r in the low half of register r, 2r+1 in the high half
  C/D (both):         c_i: row g + 8*(i//2), col 2t + i%2        (i = 0..3)
  ldmatrix .x4:       lane 8j + r supplies the address of row r of matrix j; register j of
                      lane l holds row l//4, b16 columns 2(l%4), 2(l%4)+1 (low, high);
                      with .trans it holds rows 2(l%4), 2(l%4)+1 of column l//4.
The checks that run these replays: tests/test_rungs_tensor_emulated.py (and the TMA data path in
tests/test_tma_rungs.py).
"""

from __future__ import annotations

import numpy as np

LANE = np.arange(32)
G, T = LANE // 4, LANE % 4


# ---------------------------------------------------------------- PTX ISA instruction models
def ldmatrix_x4(mem16: np.ndarray, addr: np.ndarray, trans: bool = False) -> np.ndarray:
    """mem16: shared memory as uint16; addr: 32 byte addresses -> regs[32, 4] uint32."""
    assert addr.shape == (32,) and np.all(addr % 16 == 0), "ldmatrix rows must be 16-byte aligned"
    out = np.zeros((32, 4), dtype=np.uint32)
    for j in range(4):
        rows = addr[8 * j:8 * j + 8] // 2  # u16 index of each row's first element
        if not trans:
            lo = mem16[rows[LANE // 4] + 2 * (LANE % 4)]
            hi = mem16[rows[LANE // 4] + 2 * (LANE % 4) + 1]
        else:
            lo = mem16[rows[2 * (LANE % 4)] + LANE // 4]
            hi = mem16[rows[2 * (LANE % 4) + 1] + LANE // 4]
        out[:, j] = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
    return out


def tf32_value(bits: np.ndarray) -> np.ndarray:
    """What the tensor core reads from a .tf32 register: the top 19 bits."""
    return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


def bf16_value(bits16: np.ndarray) -> np.ndarray:
    return (bits16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def mma_tf32(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """d[32,4] float64, a[32,4], b[32,2] uint32 -> D = A*B + C per the m16n8k8 tables."""
    A = np.full((16, 8), np.nan)
    B = np.full((8, 8), np.nan)
    for i in range(4):
        A[G + 8 * (i % 2), T + 4 * (i // 2)] = tf32_value(a[:, i])
    for i in range(2):
        B[T + 4 * i, G] = tf32_value(b[:, i])
    return _mma_cd(d, A, B)


def mma_bf16(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """d[32,4] float64, a[32,4], b[32,2] uint32 (two bf16 each) per the m16n8k16 tables."""
    A = np.full((16, 16), np.nan)
    B = np.full((16, 8), np.nan)
    for i in range(8):
        half = (a[:, i // 2] >> (16 * (i % 2))) & 0xFFFF
        A[G + 8 * ((i // 2) % 2), 2 * T + i % 2 + 8 * (i // 4)] = bf16_value(half)
    for i in range(4):
        half = (b[:, i // 2] >> (16 * (i % 2))) & 0xFFFF
        B[2 * T + i % 2 + 8 * (i // 2), G] = bf16_value(half)
    return _mma_cd(d, A, B)


def _mma_cd(d, A, B):
    assert not np.isnan(A).any() and not np.isnan(B).any(), "fragment table leaves a hole"
    Cm = np.full((16, 8), np.nan)
    for i in range(4):
        Cm[G + 8 * (i // 2), 2 * T + i % 2] = d[:, i]
    assert not np.isnan(Cm).any()
    Dm = A @ B + Cm
    out = np.empty_like(d)
    for i in range(4):
        out[:, i] = Dm[G + 8 * (i // 2), 2 * T + i % 2]
    return out


# ---------------------------------------------------------------- bank-conflict bookkeeping
CONFLICTS: dict[str, int] = {}


def note_ldmatrix(name: str, addr: np.ndarray) -> None:
    """Each 8-address phase reads 8 x 16 B: conflict-free iff 8 distinct 16 B bank groups."""
    worst = max(8 - len(set(((addr[8 * j:8 * j + 8] // 16) % 8).tolist())) for j in range(4))
    CONFLICTS[name] = max(CONFLICTS.get(name, 0), worst)


def note_lds32(name: str, addr: np.ndarray) -> None:
    words = addr // 4
    banks = {}
    for w in set(words.tolist()):  # same word = broadcast, no conflict
        banks.setdefault(w % 32, set()).add(w)
    worst = max(len(v) for v in banks.values()) - 1
    CONFLICTS[name] = max(CONFLICTS.get(name, 0), worst)


# ---------------------------------------------------------------- rounding helpers
def tf32_rna(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32 as bits (low 13 bits cleared): round half away from zero."""
    b = x.astype(np.float32).view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16  # round to nearest even
    return b.astype(np.uint16)


def raster(pid: int, grid_m: int, grid_n: int, group_m: int = 8) -> tuple[int, int]:
    in_group = group_m * grid_n
    first_m = (pid // in_group) * group_m
    rows = min(grid_m - first_m, group_m)
    return first_m + (pid % in_group) % rows, (pid % in_group) // rows


# ---------------------------------------------------------------- the TF32 / 3xTF32 kernels
class TF32Cfg:
    """mma_tf32.cu: 128 x 256 x 32 block tile, 8 warps 2 x 4 of 64 x 64."""
    BM, BN, BK, STAGES, WARPS_N, WM, WN = 128, 256, 32, 3, 4, 64, 64
    A_LD, B_LD = BK + 4, BN + 8
    A_STAGE, B_STAGE = BM * A_LD, BK * B_LD
    A_ROWS_PER_PASS, B_ROWS_PER_PASS = 32, 4  # loader: 256 threads per pass


class X3Cfg:
    """mma_3xtf32.cu: 128 x 128 x 32 block tile, 8 warps 2 x 4 of 64 x 32, per-k-tile flush."""
    BM, BN, BK, STAGES, WARPS_N, WM, WN = 128, 128, 32, 4, 4, 64, 32
    A_LD, B_LD = BK + 4, BN + 8
    A_STAGE, B_STAGE = BM * A_LD, BK * B_LD
    A_ROWS_PER_PASS, B_ROWS_PER_PASS = 32, 8


def run_tf32_kernel(A: np.ndarray, B: np.ndarray, M: int, N: int, K: int, mode: str,
                    C: np.ndarray) -> None:
    """mode 'tf32' (mma_tf32.cu: cvt.rna both operands) or '3x' (mma_3xtf32.cu: split, three
    MMAs per tile into a partial that starts from zero every k-tile, then added to the
    accumulator). A, B float32 flat."""
    c = TF32Cfg if mode == "tf32" else X3Cfg
    mt, nt = c.WM // 16, c.WN // 8
    grid_m, grid_n = -(-M // c.BM), -(-N // c.BN)
    vec = K % 4 == 0 and N % 4 == 0
    KT = -(-K // c.BK)
    for pid in range(grid_m * grid_n):
        pm, pn = raster(pid, grid_m, grid_n)
        bm, bn = pm * c.BM, pn * c.BN
        # the whole ring, float32 (NaN: a fragment read from a never-written slot shows up)
        smem = np.full(c.STAGES * (c.A_STAGE + c.B_STAGE), np.nan, dtype=np.float32)
        acc = np.zeros((8, mt, nt, 32, 4))  # warp, mi, nj, lane, reg
        for kt in range(KT):
            s = kt % c.STAGES
            load_tile_tf32(c, smem, A, B, M, N, K, bm, bn, kt, s, vec)
            mem16 = smem.view(np.uint16)
            for warp in range(8):
                wm, wn = warp // c.WARPS_N, warp % c.WARPS_N
                a_off = (wm * c.WM + LANE % 16) * c.A_LD + (LANE // 16) * 4
                b_off = T * c.B_LD + wn * c.WN + G
                as_, bs_ = s * c.A_STAGE, c.STAGES * c.A_STAGE + s * c.B_STAGE
                part = np.full((mt, nt, 32, 4), np.nan)
                for kk in range(c.BK // 8):
                    af = []
                    for i in range(mt):
                        addr = (as_ + a_off + i * 16 * c.A_LD + kk * 8) * 4
                        note_ldmatrix(f"{mode} A ldmatrix", addr)
                        af.append(ldmatrix_x4(mem16, addr))
                    bf = []
                    for j in range(nt):
                        i0 = bs_ + b_off + kk * 8 * c.B_LD + j * 8
                        i1 = bs_ + b_off + (kk * 8 + 4) * c.B_LD + j * 8
                        note_lds32(f"{mode} B lds32", i0 * 4)
                        bf.append(np.stack([smem[i0], smem[i1]], axis=1).view(np.uint32))
                    for i in range(mt):
                        for j in range(nt):
                            if mode == "tf32":
                                acc[warp, i, j] = mma_tf32(acc[warp, i, j], rna_bits(af[i]), rna_bits(bf[j]))
                            else:
                                ab, as3 = split_bits(af[i])
                                bb, bs3 = split_bits(bf[j])
                                start = np.zeros((32, 4)) if kk == 0 else part[i, j]
                                d = mma_tf32(start, as3, bb)
                                d = mma_tf32(d, ab, bs3)
                                part[i, j] = mma_tf32(d, ab, bb)
                if mode != "tf32":
                    acc[warp] += part  # the flush: one FADD per output per k-tile
        store_c(C, acc, M, N, bm, bn, c.WARPS_N, c.WM, c.WN)


def rna_bits(r: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32 as the SASS does it: + 0x1000 (finite inputs), low bits left for the MMA to drop."""
    return r + np.uint32(0x1000)


def split_bits(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    big = (r + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    rest = (r.view(np.float32) - big.view(np.float32)).astype(np.float32)
    small = (rest.view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return big, small


def load_tile_tf32(c, smem, A, B, M, N, K, bm, bn, kt, s, vec):
    k0 = kt * c.BK
    a_base, b_base = s * c.A_STAGE, c.STAGES * c.A_STAGE + s * c.B_STAGE
    for tid in range(256):
        if vec:
            ar, ac = tid // (c.BK // 4), (tid % (c.BK // 4)) * 4
            br, bc = tid // (c.BN // 4), (tid % (c.BN // 4)) * 4
            ra, rb = c.A_ROWS_PER_PASS, c.B_ROWS_PER_PASS
            for i in range(c.BM // ra):
                ok = k0 + ac < K and bm + ar + i * ra < M
                dst = a_base + (ar + i * ra) * c.A_LD + ac
                src = (bm + ar + i * ra) * K + k0 + ac
                smem[dst:dst + 4] = A[src:src + 4] if ok else 0.0
            for i in range(c.BK // rb):
                ok = bn + bc < N and k0 + br + i * rb < K
                dst = b_base + (br + i * rb) * c.B_LD + bc
                src = (k0 + br + i * rb) * N + bn + bc
                smem[dst:dst + 4] = B[src:src + 4] if ok else 0.0
        else:
            for e in range(tid, c.BM * c.BK, 256):
                r, col = e // c.BK, e % c.BK
                ok = bm + r < M and k0 + col < K
                smem[a_base + r * c.A_LD + col] = A[(bm + r) * K + k0 + col] if ok else 0.0
            for e in range(tid, c.BK * c.BN, 256):
                r, col = e // c.BN, e % c.BN
                ok = k0 + r < K and bn + col < N
                smem[b_base + r * c.B_LD + col] = B[(k0 + r) * N + bn + col] if ok else 0.0


def store_c(C, acc, M, N, bm, bn, warps_n, WM, WN):
    """The epilogue's predicates; C is guarded (NaN-filled with sentinels around it)."""
    assert acc.shape[1:3] == (WM // 16, WN // 8)
    for warp in range(8):
        wm, wn = warp // warps_n, warp % warps_n
        for i in range(WM // 16):
            for h in range(2):
                r = bm + wm * WM + i * 16 + G + h * 8
                for j in range(WN // 8):
                    col = bn + wn * WN + j * 8 + 2 * T
                    for e in range(2):
                        ok = (r < M) & (col + e < N)
                        C[(r * N + col + e)[ok]] = acc[warp, i, j][ok, 2 * h + e]


# ---------------------------------------------------------------- the BF16 kernel
class BF16Cfg:
    BM, BN, BK, STAGES, WARPS_N, WM, WN = 128, 256, 32, 4, 4, 64, 64
    A_LD, B_LD = BK + 8, BN + 8
    A_STAGE, B_STAGE = BM * A_LD, BK * B_LD


def run_bf16_kernel(A16, B16, M, N, K, C):
    c = BF16Cfg
    grid_m, grid_n = -(-M // c.BM), -(-N // c.BN)
    vec = K % 8 == 0 and N % 8 == 0
    KT = -(-K // c.BK)
    for pid in range(grid_m * grid_n):
        pm, pn = raster(pid, grid_m, grid_n)
        bm, bn = pm * c.BM, pn * c.BN
        smem = np.full(c.STAGES * (c.A_STAGE + c.B_STAGE), 0x7FC1, dtype=np.uint16)  # bf16 NaN
        acc = np.zeros((8, 4, 8, 32, 4))
        for kt in range(KT):
            s = kt % c.STAGES
            load_tile_bf16(smem, A16, B16, M, N, K, bm, bn, kt, s, vec)
            for warp in range(8):
                wm, wn = warp // c.WARPS_N, warp % c.WARPS_N
                a_lane = ((wm * c.WM + LANE % 16) * c.A_LD + (LANE // 16) * 8) * 2
                b_lane = (c.STAGES * c.A_STAGE + (LANE % 16) * c.B_LD + wn * c.WN + (LANE // 16) * 8) * 2
                as_, bs_ = a_lane + s * c.A_STAGE * 2, b_lane + s * c.B_STAGE * 2
                for kk in range(c.BK // 16):
                    af = []
                    for i in range(4):
                        addr = as_ + (i * 16 * c.A_LD + kk * 16) * 2
                        note_ldmatrix("bf16 A ldmatrix", addr)
                        af.append(ldmatrix_x4(smem, addr))
                    bf = []
                    for p in range(4):
                        addr = bs_ + (kk * 16 * c.B_LD + p * 16) * 2
                        note_ldmatrix("bf16 B ldmatrix.trans", addr)
                        bf.append(ldmatrix_x4(smem, addr, trans=True))
                    for i in range(4):
                        for j in range(8):
                            b = bf[j // 2][:, [(j % 2) * 2, (j % 2) * 2 + 1]]
                            acc[warp, i, j] = mma_bf16(acc[warp, i, j], af[i], b)
        store_c(C, acc, M, N, bm, bn, c.WARPS_N, c.WM, c.WN)


def load_tile_bf16(smem, A16, B16, M, N, K, bm, bn, kt, s, vec):
    c = BF16Cfg
    k0 = kt * c.BK
    a_base, b_base = s * c.A_STAGE, c.STAGES * c.A_STAGE + s * c.B_STAGE
    for tid in range(256):
        if vec:
            ar, ac = tid // (c.BK // 8), (tid % (c.BK // 8)) * 8
            br, bc = tid // (c.BN // 8), (tid % (c.BN // 8)) * 8
            for i in range(2):
                ok = k0 + ac < K and bm + ar + i * 64 < M
                dst = a_base + (ar + i * 64) * c.A_LD + ac
                src = (bm + ar + i * 64) * K + k0 + ac
                smem[dst:dst + 8] = A16[src:src + 8] if ok else 0
            for i in range(4):
                ok = bn + bc < N and k0 + br + i * 8 < K
                dst = b_base + (br + i * 8) * c.B_LD + bc
                src = (k0 + br + i * 8) * N + bn + bc
                smem[dst:dst + 8] = B16[src:src + 8] if ok else 0
        else:
            for e in range(tid, c.BM * c.BK, 256):
                r, col = e // c.BK, e % c.BK
                ok = bm + r < M and k0 + col < K
                smem[a_base + r * c.A_LD + col] = A16[(bm + r) * K + k0 + col] if ok else 0
            for e in range(tid, c.BK * c.BN, 256):
                r, col = e // c.BN, e % c.BN
                ok = k0 + r < K and bn + col < N
                smem[b_base + r * c.B_LD + col] = B16[(k0 + r) * N + bn + col] if ok else 0


# ---------------------------------------------------------------- the wgmma BF16 kernel (sm_90a)
class WGCfg:
    BM, BN, BK, WGS, STAGES, THREADS = 128, 256, 64, 2, 4, 256
    A_BYTES, B_BYTES, PANEL = 128 * 64 * 2, 64 * 256 * 2, 64 * 128


def swz128(byte):
    """Swizzle<3,4,3> on byte addresses: bits [4,7) ^= bits [7,10)."""
    return byte ^ (((byte >> 7) & 7) << 4)


def make_desc(addr, lbo, sbo):
    return ((addr & 0x3FFFF) >> 4) | (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32) | (1 << 62)


def decode_desc(d):
    assert d >> 62 == 1, "not a 128B-swizzle descriptor"
    return (d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4


def read_kmajor_sw128(mem16, desc, rows=64):
    """CUTLASS canonical K-major SW128 (elements, T = 8): ((8,m),(T,2)):((8T,SBO),(1,T))."""
    start, _lbo, sbo = decode_desc(desc)
    m, k = np.meshgrid(np.arange(rows), np.arange(16), indexing="ij")
    byte = start + (m % 8) * 128 + (m // 8) * sbo + (k // 8) * 16 + (k % 8) * 2
    return bf16_value(mem16[swz128(byte) // 2])


def read_mnmajor_sw128(mem16, desc, cols=256):
    """CUTLASS canonical MN-major SW128 (elements, T = 8): ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))."""
    start, lbo, sbo = decode_desc(desc)
    k, n = np.meshgrid(np.arange(16), np.arange(cols), indexing="ij")
    byte = start + (n % 64) * 2 + (n // 64) * lbo + (k % 8) * 128 + (k // 8) * sbo
    return bf16_value(mem16[swz128(byte) // 2])


def clayout_64xN(t, v):
    """CUTLASS GMMA::CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) -> (m, n)."""
    t0, t1, t2 = t % 4, (t // 4) % 8, t // 32
    v0, v1, v2 = v % 2, (v // 2) % 2, v // 4
    idx = 128 * t0 + t1 + 16 * t2 + 64 * v0 + 8 * v1 + 512 * v2
    return idx % 64, idx // 64


def load_tile_wg(mem16, slot, A16, B16, M, N, K, bm, bn, kt, vec, wgs=2, threads=None):
    """The loader of THREADS threads (default 128 * wgs; the warp-specialized kernel: 128)."""
    c = WGCfg
    BM = 64 * wgs
    threads = threads or 128 * wgs
    a_bytes = BM * c.BK * 2
    k0 = kt * c.BK
    sa, sb = slot, slot + a_bytes
    rpp = threads // 32  # B k-rows per pass; 3 warpgroups: 5 full passes and a partial one
    for tid in range(threads):
        if vec:
            cc = tid % 8
            for i in range(BM * 8 // threads):
                m = tid // 8 + i * (threads // 8)
                ok = k0 + cc * 8 < K and bm + m < M
                dst = (sa + m * 128 + ((cc ^ (m & 7)) << 4)) // 2
                src = (bm + m) * K + k0 + cc * 8
                mem16[dst:dst + 8] = A16[src:src + 8] if ok else 0
            cn = tid % 32
            pnl, c8 = cn // 8, cn % 8
            for i in range(-(-c.BK // rpp)):
                r = tid // 32 + i * rpp
                if (i + 1) * rpp > c.BK and r >= c.BK:
                    break
                ok = bn + cn * 8 < N and k0 + r < K
                dst = (sb + pnl * c.PANEL + r * 128 + ((c8 ^ (r & 7)) << 4)) // 2
                src = (k0 + r) * N + bn + cn * 8
                mem16[dst:dst + 8] = B16[src:src + 8] if ok else 0
        else:
            for e in range(tid, BM * c.BK, threads):
                m, kc = e // c.BK, e % c.BK
                ok = bm + m < M and k0 + kc < K
                mem16[(sa + m * 128 + (((kc // 8) ^ (m & 7)) << 4) + (kc % 8) * 2) // 2] = \
                    A16[(bm + m) * K + k0 + kc] if ok else 0
            for e in range(tid, c.BK * c.BN, threads):
                r, n = e // c.BN, e % c.BN
                ok = k0 + r < K and bn + n < N
                mem16[(sb + (n // 64) * c.PANEL + r * 128 + ((((n % 64) // 8) ^ (r & 7)) << 4) + (n % 8) * 2) // 2] = \
                    B16[(k0 + r) * N + bn + n] if ok else 0


def run_wgmma_kernel(A16, B16, M, N, K, C, wgs=2, stages=4, loader_threads=None):
    """mm_wgmma_bf16 (wgs 2), mm_wgmma_bf16_wg3* (wgs 3): BM = 64 * wgs, GROUP_M 16;
    mm_wgmma_bf16_ws: wgs 2 consumer warpgroups, the tile loaded by 128 producer threads."""
    c = WGCfg
    BM = 64 * wgs
    a_bytes = BM * c.BK * 2
    stage_bytes = a_bytes + c.B_BYTES
    assert a_bytes % 1024 == 0 and stage_bytes % 1024 == 0, "slots and B panels must stay 1024-aligned"
    grid_m, grid_n = -(-M // BM), -(-N // c.BN)
    vec = K % 8 == 0 and N % 8 == 0
    KT = -(-K // c.BK)
    ring = 1024  # any 1024-aligned shared address
    for pid in range(grid_m * grid_n):
        pm, pn = raster(pid, grid_m, grid_n, group_m=16)
        bm, bn = pm * BM, pn * c.BN
        mem16 = np.full((ring + stages * stage_bytes) // 2, 0x7FC1, dtype=np.uint16)
        D = np.zeros((wgs, 64, 256))
        for kt in range(KT):
            slot = ring + (kt % stages) * stage_bytes
            load_tile_wg(mem16, slot, A16, B16, M, N, K, bm, bn, kt, vec, wgs, loader_threads)
            for wg in range(wgs):
                a0, b0 = slot + wg * 64 * 128, slot + a_bytes
                for kk in range(c.BK // 16):
                    At = read_kmajor_sw128(mem16, make_desc(a0 + kk * 32, 16, 1024))
                    Bt = read_mnmajor_sw128(mem16, make_desc(b0 + kk * 2048, c.PANEL, 1024))
                    D[wg] += At @ Bt
        # accumulators per thread per the CUTLASS C layout, then the kernel's epilogue formula
        for wg in range(wgs):
            for t in range(128):
                warp, lane = t // 32, t % 32
                for v in range(128):
                    m, n = clayout_64xN(t, v)
                    j, h, e = v // 4, (v // 2) % 2, v % 2
                    # the kernel's formula must name the same element
                    assert (m, n) == (warp * 16 + lane // 4 + 8 * h, 8 * j + 2 * (lane % 4) + e)
                    r, col = bm + wg * 64 + m, bn + n
                    if r < M and col < N:
                        C[r * N + col] = D[wg, m, n]
