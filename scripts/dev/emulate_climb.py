#!/usr/bin/env python3
"""CPU emulation of the index arithmetic of the vec / warptile / pipelined SGEMM rungs.

No GPU needed. For each kernel configuration and a set of odd shapes it replays, per
block and per k-slice, exactly the integer arithmetic of the .cu files:
  - staging: which global element (pointer arithmetic as in the kernel, predicates
    as in the kernel) each thread loads into which shared slot. Checks every global
    read is inside its matrix (16-byte reads also aligned and inside one row), every
    slot of the staged tile is written exactly once per slice with the right value
    (A[m][k] or B[k][n], or 0 outside the matrix);
  - compute: which shared slots each thread's fragments read (float4-aligned) and
    the products they accumulate, so the emulated C must equal A @ B;
  - epilogue: which C elements each thread stores: every element of C written
    exactly once, nothing outside C, 16-byte stores aligned and inside one row;
  - bank behaviour of the transposing A stores and of each warp's LDS.128s;
  - the barrier / buffer schedule of each pipeline (register prefetch, cp.async
    ring, the two-barrier single buffer): no shared buffer is written while any
    thread may still read it, and every fragment read sees the slice it expects.
Run: python3 scripts/dev/emulate_climb.py  (about a minute; --quick for fewer shapes)
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Cfg:
    name: str
    BM: int
    BN: int
    BK: int
    TM: int
    TN: int
    layout: str  # "contig": regtile/vec (thread owns 8 consecutive rows/cols); "warp": 4x4 sub-tiles
    WM: int = 0
    WN: int = 0
    schedule: str = "single"  # "single" (two barriers), "regprefetch", "cpasync", "cpasync1" (V = 1)
    STAGES: int = 1
    LDA_PAD: int = 4
    GM: int = 1  # grouped rasterisation: bands of GM block-rows (pipe_origin in pipelined.cu)

    @property
    def NT(self) -> int:
        if self.layout == "contig":
            return (self.BM // self.TM) * (self.BN // self.TN)
        return (self.BM // self.WM) * (self.BN // self.WN) * 32

    @property
    def frag_db(self) -> bool:  # FRAG_DB in pipelined.cu
        return self.schedule == "cpasync1" or not (self.STAGES == 2 and self.TM * self.TN <= 64)

    # V = 1 copy maps (PipeV1 / pipe_v1 in pipelined.cu)
    @property
    def TPK(self) -> int:
        return max(1, min(2 * self.NT // self.BM, self.BK))

    @property
    def TPR(self) -> int:
        return self.NT // self.BK


def smem_bytes_v1(c: Cfg) -> int:
    """PipeV1<...>::SMEM_BYTES: STAGES x BK x (BM + 32/TPK + BN) x 4."""
    return c.STAGES * c.BK * (c.BM + 32 // c.TPK + c.BN) * 4


def pipe(bm, bn, bk, wm, wn, tm, tn, stages, v=0, gm=1):
    if v == 0:
        return Cfg(f"mm_pipe<{bm},{bn},{bk},{wm},{wn},{tm},{tn},{stages}>", bm, bn, bk, tm, tn, "warp", wm, wn,
                   "regprefetch" if stages == 2 else "cpasync", stages, GM=gm)
    nt = (bm // wm) * (bn // wn) * 32
    tpk = max(1, min(2 * nt // bm, bk))
    return Cfg(f"mm_pipe<{bm},{bn},{bk},{wm},{wn},{tm},{tn},{stages},{v},{gm}>", bm, bn, bk, tm, tn, "warp", wm, wn,
               "cpasync1", stages, LDA_PAD=32 // tpk, GM=gm)


CONFIGS = [
    Cfg("mm_vec", 128, 128, 8, 8, 8, "contig"),
    Cfg("mm_warptile", 128, 128, 8, 8, 8, "warp", 32, 64),
    pipe(128, 128, 8, 32, 64, 8, 8, 2),
    pipe(128, 128, 8, 32, 64, 8, 8, 3),
    pipe(128, 128, 8, 32, 64, 8, 8, 4),
    pipe(128, 128, 8, 64, 64, 8, 16, 2),
    pipe(128, 128, 8, 64, 64, 8, 16, 3),
    pipe(128, 128, 8, 64, 64, 8, 16, 4),
    pipe(128, 256, 8, 64, 64, 8, 16, 2),
    pipe(128, 256, 8, 64, 64, 8, 16, 3),
    pipe(128, 256, 16, 64, 64, 8, 16, 3, 1, 8),
    pipe(128, 256, 16, 64, 64, 8, 16, 4, 1, 8),
    pipe(128, 256, 8, 64, 64, 8, 16, 3, 1, 8),
    pipe(128, 256, 8, 64, 64, 8, 16, 4, 1, 8),
    pipe(128, 128, 16, 64, 64, 8, 16, 3, 1, 8),
    pipe(128, 128, 16, 64, 64, 8, 16, 4, 1, 8),
    pipe(256, 128, 16, 64, 64, 16, 8, 3, 1, 8),
    pipe(128, 256, 16, 64, 64, 8, 16, 3, 1, 1),
]


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ---------------------------------------------------------------- thread maps
def thread_maps(c: Cfg):
    """rows[t, TM], cols[t, TN]: tile-relative C rows/cols a thread owns (= its fragment
    indices into As[k][.] and Bs[k][.]), plus the float4 starts of its LDS.128s."""
    tid = np.arange(c.NT)
    if c.layout == "contig":  # vec.cu: tx = tid % 16, ty = tid / 16
        tx, ty = tid % (c.BN // c.TN), tid // (c.BN // c.TN)
        rows = ty[:, None] * c.TM + np.arange(c.TM)[None, :]
        cols = tx[:, None] * c.TN + np.arange(c.TN)[None, :]
        a_lds = ty[:, None] * c.TM + np.arange(0, c.TM, 4)[None, :]
        b_lds = tx[:, None] * c.TN + np.arange(0, c.TN, 4)[None, :]
    else:
        WTR, WTC, WARPS_N = c.WM // c.TM, c.WN // c.TN, c.BN // c.WN
        assert WTR * WTC == 32
        warp, lane = tid // 32, tid % 32
        wm, wn = (warp // WARPS_N) * c.WM, (warp % WARPS_N) * c.WN
        ty, tx = lane // WTC, lane % WTC
        i = np.arange(c.TM)
        j = np.arange(c.TN)
        rows = wm[:, None] + (i // 4)[None, :] * WTR * 4 + ty[:, None] * 4 + (i % 4)[None, :]
        cols = wn[:, None] + (j // 4)[None, :] * WTC * 4 + tx[:, None] * 4 + (j % 4)[None, :]
        a_lds = wm[:, None] + np.arange(c.TM // 4)[None, :] * WTR * 4 + ty[:, None] * 4
        b_lds = wn[:, None] + np.arange(c.TN // 4)[None, :] * WTC * 4 + tx[:, None] * 4
    return rows, cols, a_lds, b_lds


def staging_maps(c: Cfg):
    """Per float4 slot i of each thread: A-tile (row, col) and B-tile (row, col), as the
    kernels compute them (f = tid + i*NT; vec.cu/warptile.cu are the NT=256 case)."""
    KQ, NQ = c.BK // 4, c.BN // 4
    AF4, BF4 = c.BM * c.BK // 4 // c.NT, c.BK * c.BN // 4 // c.NT
    assert AF4 * c.NT * 4 == c.BM * c.BK and BF4 * c.NT * 4 == c.BK * c.BN
    f_a = np.arange(c.NT)[:, None] + np.arange(AF4)[None, :] * c.NT
    f_b = np.arange(c.NT)[:, None] + np.arange(BF4)[None, :] * c.NT
    if c.schedule == "cpasync1":  # V = 1 B map: row tid / TPR, float4s (tid % TPR) + i*TPR of it
        tid = np.arange(c.NT)[:, None]
        b_r = tid // c.TPR + 0 * np.arange(BF4)[None, :]
        b_c = (tid % c.TPR) * 4 + np.arange(BF4)[None, :] * c.TPR * 4
        assert c.TPR * c.BK == c.NT and BF4 * c.TPR * 4 == c.BN
        return (f_a // KQ, (f_a % KQ) * 4), (b_r, b_c)
    return (f_a // KQ, (f_a % KQ) * 4), (f_b // NQ, (f_b % NQ) * 4)


# ---------------------------------------------------------------- static layout checks
def check_layout(c: Cfg) -> list[str]:
    notes = []
    rows, cols, a_lds, b_lds = thread_maps(c)
    LDA = c.BM + c.LDA_PAD
    # a block's threads own every tile output exactly once
    cnt = np.zeros((c.BM, c.BN), int)
    np.add.at(cnt, (rows[:, :, None].repeat(c.TN, 2), cols[:, None, :].repeat(c.TM, 1)), 1)
    check((cnt == 1).all(), f"{c.name}: tile outputs owned {cnt.min()}..{cnt.max()} times")
    # LDS.128 alignment: float4 starts multiple of 4 floats, rows 16-byte aligned
    check((a_lds % 4 == 0).all() and (b_lds % 4 == 0).all(), "LDS.128 start not float4-aligned")
    check((LDA * 4) % 16 == 0 and (c.BN * 4) % 16 == 0, "shared row stride not 16-byte multiple")
    # per-warp LDS.128 wavefronts: distinct float4s mapped to 8 bank-quads (16 B each)
    worst = {}
    for name, starts, stride in (("A", a_lds, LDA), ("B", b_lds, c.BN)):
        w = 1
        for warp in range(c.NT // 32):
            for q in range(starts.shape[1]):
                addr = np.unique(starts[warp * 32:(warp + 1) * 32, q])  # same k row for all lanes
                quads = (addr // 4) % 8
                w = max(w, int(np.bincount(quads, minlength=8).max()))
        worst[name] = w
    notes.append(f"LDS.128 per warp: A {worst['A']} wavefront(s), B {worst['B']} (1 = conflict-free)")
    # transposing A stores, 32 lanes per STS: count distinct addresses per bank
    (a_r, a_c), (b_r, b_c) = staging_maps(c)
    wa = 1
    for warp in range(c.NT // 32):
        lanes = slice(warp * 32, (warp + 1) * 32)
        if c.schedule == "cpasync1":  # As[a_k + j*TPK][a_m + r*RSTEP], a_k = tid % TPK, a_m = tid / TPK
            tid = np.arange(c.NT)[lanes]
            tpk, rstep = c.TPK, c.NT // c.TPK
            for j in range(c.BK // tpk):
                for r in range(c.BM // rstep):
                    addr = np.unique((tid % tpk + j * tpk) * LDA + tid // tpk + r * rstep)
                    wa = max(wa, int(np.bincount(addr % 32, minlength=32).max()))
        elif c.schedule == "cpasync":  # As[c_k][c_m + q*RSTEP], c_k = tid % BK, c_m = tid / BK
            tid = np.arange(c.NT)[lanes]
            for q in range(c.BM * c.BK // c.NT):
                addr = np.unique((tid % c.BK) * LDA + tid // c.BK + q * (c.NT // c.BK))
                wa = max(wa, int(np.bincount(addr % 32, minlength=32).max()))
        else:  # As[a_c + j][a_r]
            for i in range(a_r.shape[1]):
                for j in range(4):
                    addr = np.unique((a_c[lanes, i] + j) * LDA + a_r[lanes, i])
                    wa = max(wa, int(np.bincount(addr % 32, minlength=32).max()))
    notes.append(f"A transposing STS: {wa}-way (1 = conflict-free)")
    if c.schedule == "cpasync1":  # global side: rows of A per warp copy instruction
        notes.append(f"A cp.async: {32 // c.TPK} row(s) x {c.TPK} k per warp instruction; "
                     f"dynamic smem {smem_bytes_v1(c)} B")
    if c.schedule == "cpasync":  # global side: 128-byte lines touched per 4-byte copy instruction
        tid = np.arange(c.NT)
        lines = max(len(np.unique(((tid[w * 32:(w + 1) * 32] // c.BK) * 4096 + tid[w * 32:(w + 1) * 32] % c.BK) // 32))
                    for w in range(c.NT // 32))
        notes.append(f"A cp.async: {lines} row(s) of A per warp instruction")
    # B STS.128: 32 lanes x 16 B; conflict-free means each 8-lane quarter covers 8 quads
    wb = 1
    for warp in range(c.NT // 32):
        for i in range(b_r.shape[1]):
            addr = b_r[warp * 32:(warp + 1) * 32, i] * c.BN + b_c[warp * 32:(warp + 1) * 32, i]
            for qtr in range(4):
                quads = (addr[qtr * 8:(qtr + 1) * 8] // 4) % 8
                wb = max(wb, int(np.bincount(quads, minlength=8).max()))
    notes.append(f"B STS.128: {wb} wavefront(s) per quarter-warp")
    return notes


# ---------------------------------------------------------------- schedule (race) model
def schedule_events(c: Cfg, nk: int):
    """Barrier-phase model of the kernel's loop. Returns (writes, reads):
    writes: (buf, slice, first_phase, last_phase): phases during which the buffer's
            contents for `slice` may be in the course of being written;
    reads:  (buf, slice, phase): a fragment read of `slice` from `buf`.
    A barrier ends a phase; the same program runs on every thread (uniform control)."""
    writes, reads = [], []
    ph = 0
    if c.schedule == "single":  # vec.cu / warptile.cu
        for t in range(nk):
            writes.append((0, t, ph, ph))
            ph += 1  # __syncthreads: staged
            reads.append((0, t, ph))
            ph += 1  # __syncthreads: done reading
    elif c.schedule == "regprefetch":
        writes.append((0, 0, ph, ph))
        ph += 1
        if c.frag_db:
            reads.append((0, 0, ph))  # frag(0, 0, 0)
        for t in range(nk):
            cur, more = t & 1, t + 1 < nk
            if c.frag_db:
                for k in range(c.BK):
                    if k < c.BK - 1:
                        reads.append((cur, t, ph))
                    elif more:
                        writes.append((cur ^ 1, t + 1, ph, ph))
                        ph += 1
                        reads.append((cur ^ 1, t + 1, ph))
            else:
                reads.append((cur, t, ph))
                if more:
                    writes.append((cur ^ 1, t + 1, ph, ph))
                    ph += 1
    elif c.schedule == "cpasync":
        S = c.STAGES
        pending = {}  # slice -> (buf, issue phase); completes at the wait before the barrier of iteration slice
        for s in range(S - 1):
            if s < nk:
                pending[s] = (s, ph)
        rd, wr = 0, S - 1
        for t in range(nk):
            # cp.async.wait_group S-2 then __syncthreads: slice t (and older) landed
            buf, p0 = pending.pop(t)
            check(buf == rd, f"slice {t} in buffer {buf}, read from {rd}")
            writes.append((buf, t, p0, ph))  # in flight from p0 up to this phase's end
            ph += 1
            if t + S - 1 < nk:
                pending[t + S - 1] = (wr, ph)
            wr = 0 if wr + 1 == S else wr + 1
            reads.append((rd, t, ph))
            rd = 0 if rd + 1 == S else rd + 1
        check(not pending, "copies issued but never waited for")
    elif c.schedule == "cpasync1":
        # pipe_v1: commit groups per slice (empty ones too), cp.async.wait_group S-2 = all but
        # the newest S-2 groups complete; the barrier sits before each slice's last k-step.
        S = c.STAGES
        groups, done = [], set()  # (slice or None, buf, issue phase)

        def wait(n):
            for sl, b, p0 in groups[:len(groups) - n]:
                if sl is not None and sl not in done:
                    done.add(sl)
                    writes.append((b, sl, p0, ph))  # in flight from p0 up to this phase

        for s in range(S - 1):
            groups.append((s if s < nk else None, s, ph))
        wait(S - 2)
        ph += 1  # __syncthreads
        reads.append((0, 0, ph))  # frag(0, 0, 0)
        rd, wr = 0, S - 1
        for t in range(nk):
            sl = t + S - 1
            groups.append((sl if sl < nk else None, wr, ph))  # issue (if any) + commit
            wr = 0 if wr + 1 == S else wr + 1
            reads.append((rd, t, ph))  # k-steps 1 .. BK-1 of slice t
            nx = 0 if rd + 1 == S else rd + 1
            if t + 1 < nk:
                wait(S - 2)
                ph += 1  # __syncthreads before the last k-step
                reads.append((nx, t + 1, ph))  # frag(nx, 0, 0)
            rd = nx
        check(done == set(range(nk)) or nk == 1 and done == {0}, f"slices never waited for: "
              f"{sorted(set(range(nk)) - done)}")
    return writes, reads


def check_schedule(c: Cfg):
    for nk in range(1, 9):
        writes, reads = schedule_events(c, nk)
        for buf, s, p0, p1 in writes:
            bad = [r for r in reads if r[0] == buf and p0 <= r[2] <= p1]
            check(not bad, f"{c.name} nk={nk}: buffer {buf} written (slice {s}) in phases {p0}..{p1} "
                           f"while read in {bad[:3]}")
        for buf, s, ph in reads:
            done = [w for w in writes if w[0] == buf and w[3] < ph]
            check(done, f"{c.name} nk={nk}: read of slice {s} from buffer {buf} before any write")
            last = max(done, key=lambda w: w[3])
            check(last[1] == s, f"{c.name} nk={nk}: read of slice {s} from buffer {buf} sees slice {last[1]}")
        check(sorted({r[1] for r in reads}) == list(range(nk)), f"{c.name} nk={nk}: not every slice read")



# ---------------------------------------------------------------- V = 1 staging (pipe_v1's issue())
def block_origins(c: Cfg, gx: int, gy: int) -> list[tuple[int, int]]:
    """(bm, bn) of every launched block, in linear block order, as pipe_origin computes them
    (unsigned arithmetic). Checks the grouping is a bijection onto the tiles."""
    out = []
    for by, bx in itertools.product(range(gy), range(gx)):
        if c.GM > 1:
            pid = by * gx + bx
            band = c.GM * gx
            first = (pid // band) * c.GM
            rows = min(gy - first, c.GM)
            inn = pid % band
            out.append(((first + inn % rows) * c.BM, (inn // rows) * c.BN))
        else:
            out.append((by * c.BM, bx * c.BN))
    check(sorted(out) == sorted((y * c.BM, x * c.BN) for y in range(gy) for x in range(gx)),
          f"{c.name}: grouped block order is not a permutation of the tiles ({gx}x{gy})")
    return out


class StageV1:
    """One block's copies, slice by slice, with the kernel's integer arithmetic: unchecked
    copies (s < nk_fast) from running pointers that step only then, checked copies from
    addresses computed afresh (the matrix start when the predicate is off)."""

    def __init__(self, c: Cfg, M, N, K, bm, bn, vec):
        self.c, self.M, self.N, self.K, self.bm, self.bn, self.vec = c, M, N, K, bm, bn, vec
        NT, BK = c.NT, c.BK
        self.TPK, self.TPR = c.TPK, c.TPR
        self.KA, self.RSTEP = BK // self.TPK, NT // self.TPK
        self.RA = c.BM // self.RSTEP
        self.CPT = c.BN // 4 // self.TPR
        check(self.KA * self.TPK == BK and self.RA * self.RSTEP == c.BM and self.CPT * self.TPR * 4 == c.BN,
              "V1 copy maps do not split evenly")
        tid = np.arange(NT)
        self.a_k, self.a_m = tid % self.TPK, tid // self.TPK
        self.a_rlim = np.where(self.a_m < M - bm, (M - bm - self.a_m + self.RSTEP - 1) // self.RSTEP, 0)
        self.b_k, self.b_n = tid // self.TPR, (tid % self.TPR) * 4
        self.nk_fast = K // BK if (vec and bm <= M - c.BM and bn <= N - c.BN) else 0
        # running pointers (flat indices) of the unchecked copies
        self.a_src = [(bm + self.a_m + r * self.RSTEP) * K + self.a_k for r in range(self.RA)]
        self.b_src = self.b_k * N + bn + self.b_n

    def slice(self, s, Af, Bf, A, B):
        c, M, N, K, bm, bn = self.c, self.M, self.N, self.K, self.bm, self.bn
        BK, BM, BN = c.BK, c.BM, c.BN
        As = np.full((BK, BM), np.nan)
        Bs = np.full((BK, BN), np.nan)
        cntA = np.zeros((BK, BM), int)
        cntB = np.zeros((BK, BN), int)
        k0 = s * BK
        fast = s < self.nk_fast
        for j in range(self.KA):
            for r in range(self.RA):
                row, k = bm + self.a_m + r * self.RSTEP, k0 + self.a_k + j * self.TPK
                if fast:
                    idx = self.a_src[r] + j * self.TPK
                    check((idx >= 0).all() and (idx < M * K).all(), "unchecked A copy outside A")
                    check((idx // K == row).all() and (idx % K == k).all(), "unchecked A copy hits the wrong element")
                    val = Af[idx]
                else:
                    ok = (k < K) & (r < self.a_rlim)
                    idx = np.where(ok, row * K + k, 0)
                    check((idx >= 0).all() and (idx < M * K).all(), "checked A copy address outside A")
                    val = np.where(ok, Af[idx], 0.0)
                inside = (row < M) & (k < K)
                exp = np.where(inside, A[np.minimum(row, M - 1), np.minimum(k, K - 1)], 0.0)
                check(np.array_equal(val, exp), "A staged value wrong (zero fill?)")
                dk, dm = self.a_k + j * self.TPK, self.a_m + r * self.RSTEP
                np.add.at(cntA, (dk, dm), 1)
                As[dk, dm] = val
        kb = k0 + self.b_k
        for i in range(self.CPT):
            col = bn + self.b_n + i * self.TPR * 4
            if fast:
                p = self.b_src + i * self.TPR * 4
                check((p % 4 == 0).all(), "unchecked B float4 copy misaligned")
                check(((p % N) + 3 < N).all() and (p + 3 < K * N).all() and (p >= 0).all(),
                      "unchecked B float4 copy leaves its row or B")
                check((p // N == kb).all() and (p % N == col).all(), "unchecked B copy hits the wrong element")
            for e in range(4):
                if fast:
                    val = Bf[p + e]
                elif self.vec:
                    ok = (kb < K) & (col < N)
                    q = np.where(ok, kb * N + col, 0)
                    if e == 0:
                        check((q % 4 == 0).all(), "checked B float4 copy misaligned")
                        check((q[ok] % N + 3 < N).all(), "checked B float4 copy leaves its row")
                    val = np.where(ok, Bf[q + e], 0.0)
                else:
                    ok = (kb < K) & (col + e < N)
                    q = np.where(ok, kb * N + col + e, 0)
                    check((q >= 0).all() and (q < K * N).all(), "checked B copy address outside B")
                    val = np.where(ok, Bf[q], 0.0)
                inside = (kb < K) & (col + e < N)
                exp = np.where(inside, B[np.minimum(kb, K - 1), np.minimum(col + e, N - 1)], 0.0)
                check(np.array_equal(val, exp), "B staged value wrong (zero fill?)")
                np.add.at(cntB, (self.b_k, self.b_n + i * self.TPR * 4 + e), 1)
                Bs[self.b_k, self.b_n + i * self.TPR * 4 + e] = val
        if fast:  # only unchecked slices step the pointers
            self.a_src = [p + BK for p in self.a_src]
            self.b_src = self.b_src + BK * N
        check((cntA == 1).all(), f"A tile slots written {cntA.min()}..{cntA.max()} times")
        check((cntB == 1).all(), f"B tile slots written {cntB.min()}..{cntB.max()} times")
        return As, Bs, fast

# ---------------------------------------------------------------- full emulation
def emulate(c: Cfg, M: int, N: int, K: int, vec: bool, rng) -> np.ndarray:
    A = rng.uniform(-1, 1, (M, K))
    B = rng.uniform(-1, 1, (K, N))
    Af, Bf = A.ravel(), B.ravel()
    C = np.full(M * N, np.nan)
    writes = np.zeros(M * N, int)
    rows, cols, _, _ = thread_maps(c)
    (a_r, a_c), (b_r, b_c) = staging_maps(c)
    NT, BM, BN, BK = c.NT, c.BM, c.BN, c.BK
    nk = (K + BK - 1) // BK
    gx, gy = -(-N // BN), -(-M // BM)
    fast_slices = 0
    for bm, bn in block_origins(c, gx, gy):
        # per-slot constants, as in the kernels
        a_in = bm + a_r < M
        a_klim = np.where(a_in, K - a_c, 0)
        a_p = np.where(a_in, bm + a_r, 0) * K + a_c  # flat index; += BK per slice
        b_nlim = N - (bn + b_c)
        b_klim = np.where(b_nlim > 0, K - b_r, 0)
        b_p = b_r * N + bn + b_c  # += BK*N per slice
        acc = np.zeros((NT, c.TM, c.TN))
        v1 = StageV1(c, M, N, K, bm, bn, vec) if c.schedule == "cpasync1" else None
        for t in range(nk):
            k0 = t * BK
            if v1 is not None:
                As, Bs, fast = v1.slice(t, Af, Bf, A, B)
                fast_slices += fast
                fa = As[:, rows]
                fb = Bs[:, cols]
                check(not np.isnan(fa).any() and not np.isnan(fb).any(), "fragment reads an unwritten slot")
                acc += np.einsum("kti,ktj->tij", fa, fb)
                continue
            As = np.full((BK, BM), np.nan)
            Bs = np.full((BK, BN), np.nan)
            cntA = np.zeros((BK, BM), int)
            cntB = np.zeros((BK, BN), int)
            # ---- A
            if c.schedule == "cpasync":
                # pipelined.cu cp.async path: thread copies As[c_k][c_m + q*RSTEP] from
                # c_p + q*c_step (c_p = clamped row start + c_k, += BK per slice)
                ACP, RSTEP = BM * BK // NT, NT // BK
                tid = np.arange(NT)
                c_k, c_m = tid % BK, tid // BK
                c_qlim = np.where(bm + c_m < M, (M - bm - c_m + RSTEP - 1) // RSTEP, 0)
                c_p = np.where(bm + c_m < M, bm + c_m, 0) * K + c_k + t * BK
                kin = k0 + c_k < K
                for q in range(ACP):
                    ok = kin & (q < c_qlim)
                    idx = np.where(ok, c_p + q * RSTEP * K, 0)  # clamped to A when not ok
                    check((idx >= 0).all() and (idx < max(M * K, 1)).all(), "A copy address outside A")
                    if ok.any():
                        check((idx[ok] // K == (bm + c_m + q * RSTEP)[ok]).all()
                              and (idx[ok] % K == (k0 + c_k)[ok]).all(), "A copy hits the wrong element")
                    val = np.where(ok, Af[idx], 0.0)
                    er, ec = bm + c_m + q * RSTEP, k0 + c_k
                    inside = (er < M) & (ec < K)
                    exp = np.where(inside, A[np.minimum(er, M - 1), np.minimum(ec, K - 1)], 0.0)
                    check(np.array_equal(val, exp), "A staged value wrong (zero fill?)")
                    np.add.at(cntA, (c_k, c_m + q * RSTEP), 1)
                    As[c_k, c_m + q * RSTEP] = val
            for j in range(4 if c.schedule != "cpasync" else 0):  # float4 slots (LDG.128 or 4 scalars)
                if vec:
                    ok = k0 < a_klim
                else:
                    ok = k0 + j < a_klim
                idx = a_p + j
                if vec:  # one 16-byte read at a_p: aligned, inside one row, inside A
                    okv = k0 < a_klim
                    if j == 0 and okv.any():
                        p = a_p[okv]
                        check((p % 4 == 0).all(), "A float4 read misaligned")
                        check(((p % K) + 3 < K).all() and (p + 3 < M * K).all(), "A float4 read leaves its row")
                if ok.any():
                    check((idx[ok] >= 0).all() and (idx[ok] < M * K).all(), "A read out of bounds")
                    r, col = idx[ok] // K, idx[ok] % K
                    check((r == (bm + a_r)[ok]).all() and (col == (k0 + a_c + j)[ok]).all(),
                          "A read hits the wrong element")
                val = np.where(ok, Af[np.where(ok, idx, 0)], 0.0)
                # expected: A[bm + a_r][k0 + a_c + j] or 0 outside A
                er, ec = bm + a_r, k0 + a_c + j
                inside = (er < M) & (ec < K)
                exp = np.where(inside, A[np.minimum(er, M - 1), np.minimum(ec, K - 1)], 0.0)
                check(np.array_equal(val, exp), "A staged value wrong (zero fill?)")
                np.add.at(cntA, (a_c + j, a_r), 1)
                As[a_c + j, a_r] = val
            # ---- B
            kin = k0 < b_klim
            if vec and kin.any():
                p = b_p[kin]
                check((p % 4 == 0).all(), "B float4 read misaligned")
                check(((p % N) + 3 < N).all() and (p + 3 < K * N).all(), "B float4 read leaves its row")
            for j in range(4):
                ok = kin if vec else (kin & (j < b_nlim))
                idx = b_p + j
                if ok.any():
                    check((idx[ok] >= 0).all() and (idx[ok] < K * N).all(), "B read out of bounds")
                    r, col = idx[ok] // N, idx[ok] % N
                    check((r == (k0 + b_r)[ok]).all() and (col == (bn + b_c + j)[ok]).all(),
                          "B read hits the wrong element")
                val = np.where(ok, Bf[np.where(ok, idx, 0)], 0.0)
                er, ec = k0 + b_r, bn + b_c + j
                inside = (er < K) & (ec < N)
                exp = np.where(inside, B[np.minimum(er, K - 1), np.minimum(ec, N - 1)], 0.0)
                check(np.array_equal(val, exp), "B staged value wrong (zero fill?)")
                np.add.at(cntB, (b_r, b_c + j), 1)
                Bs[b_r, b_c + j] = val
            check((cntA == 1).all(), f"A tile slots written {cntA.min()}..{cntA.max()} times")
            check((cntB == 1).all(), f"B tile slots written {cntB.min()}..{cntB.max()} times")
            a_p = a_p + BK
            b_p = b_p + BK * N
            # ---- compute: fragments As[k][rows], Bs[k][cols], k ascending
            fa = As[:, rows]  # (BK, NT, TM)
            fb = Bs[:, cols]  # (BK, NT, TN)
            check(not np.isnan(fa).any() and not np.isnan(fb).any(), "fragment reads an unwritten slot")
            acc += np.einsum("kti,ktj->tij", fa, fb)
        # ---- epilogue
        for i in range(c.TM):
            row = bm + rows[:, i]
            for jj in range(c.TN // 4):
                col = bn + cols[:, jj * 4]
                check((cols[:, jj * 4 + 1:jj * 4 + 4] == cols[:, jj * 4:jj * 4 + 1] + np.arange(1, 4)).all(),
                      "sub-tile columns not consecutive")
                if vec:
                    st = (row < M) & (col < N)
                    if st.any():
                        p = row[st] * N + col[st]
                        check((p % 4 == 0).all(), "C float4 store misaligned")
                        check((col[st] + 3 < N).all(), "C float4 store leaves its row")
                        for rj in range(4):
                            C[p + rj] = acc[st, i, jj * 4 + rj]
                            np.add.at(writes, p + rj, 1)
                else:
                    for rj in range(4):
                        st = (row < M) & (col + rj < N)
                        p = row[st] * N + col[st] + rj
                        C[p] = acc[st, i, jj * 4 + rj]
                        np.add.at(writes, p, 1)
    check((writes == 1).all(), f"C elements written {writes.min()}..{writes.max()} times")
    ref = A @ B
    err = np.abs(C.reshape(M, N) - ref).max() if M * N else 0.0
    check(err < 1e-9 * max(1, K), f"emulated C differs from A @ B by {err}")
    return fast_slices


SHAPES = [(1, 1, 1), (45, 33, 70), (3, 5000, 2), (1, 4096, 7), (130, 260, 17), (128, 128, 8),
          (200, 136, 44), (129, 132, 12), (256, 256, 64), (1000, 777, 1234), (260, 264, 36),
          (300, 520, 50), (512, 512, 48), (1157, 300, 20), (2100, 260, 16)]
QUICK = [(1, 1, 1), (45, 33, 70), (1, 4096, 7), (200, 136, 44), (129, 132, 12), (256, 256, 64), (260, 264, 36),
         (1157, 300, 20)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    failed = 0
    for c in CONFIGS:
        try:
            notes = check_layout(c)
            check_schedule(c)
            lines = []
            for M, N, K in (QUICK if args.quick else SHAPES):
                if not args.quick and (M, N, K) == (1000, 777, 1234) and c.name not in (
                        "mm_vec", "mm_warptile", "mm_pipe<128,128,8,32,64,8,8,2>",
                        "mm_pipe<128,128,8,64,64,8,16,3>", "mm_pipe<128,256,8,64,64,8,16,2>",
                        "mm_pipe<128,256,16,64,64,8,16,3,1,8>"):
                    continue  # the big odd shape on one config per layout (time)
                can_vec = (K % 4 == 0) and (N % 4 == 0)
                for vec in ([True, False] if can_vec else [False]):
                    nf = emulate(c, M, N, K, vec, rng)
                    lines.append(f"{M}x{N}x{K}{'v' if vec else 's'}" + (f"[{nf}f]" if nf else ""))
            print(f"OK   {c.name:36s} NT={c.NT:3d} {'; '.join(notes)}")
            print(f"     schedule {c.schedule}{'' if c.schedule == 'single' else f' STAGES={c.STAGES}'}"
                  f"{' frag-db' if c.schedule != 'single' and c.frag_db else ''}: race-free for 1..8 slices; "
                  f"shapes: {' '.join(lines)}")
        except Fail as e:
            failed += 1
            print(f"FAIL {c.name}: {e}")
    print("all configurations pass" if not failed else f"{failed} configuration(s) FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
