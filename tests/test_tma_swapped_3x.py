"""The 3xTF32 product with no pre-pass (SPLIT_A on the swapped persistent TMA body: X3SwapOp in
rungs/wgmma_tf32_tma.cu, split_a_ring / split_a_tile / consume_tile_split in include/tma_persistent.cuh)
replayed lane by lane in numpy, no GPU, on the helpers of tests/test_tma_swapped.py (TMA's boxes, the
fragment loads, the epilogues): the producer's boxes, then the two splitting producer warps' 16-byte
passes over the stage's A (the residual at the same offset of the stage's residual buffer), each
consumer's B^T fragments split in registers, the three register-A wgmma m64n128k8 a k8 step (big_b x
small_a, small_b x big_a, big_b x big_a; the tensor core reading the staged A truncated) into a partial
accumulator flushed into FP32 every FLUSH k-tiles, and the epilogue. The tensor core's sums are taken
exact (float64) and its partial rounded to FP32 at each flush; on inputs of one binade every sum is then
exact, so the replay must equal a numpy emulation of the same split arithmetic bit for bit, and on
[-1, 1) inputs meet the rung's FP32 tolerances against the float64 product. test_the_replayed_formulas_
are_the_kernels holds the replay to the kernel's text; every check is shown to fail on a perturbed
replay. The ring with its third barrier is replayed under random schedules. GPU checks: tests/test_gpu_tma.py."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

import numpy as np
import pytest
import tensor_emulator as em
import test_tma_swapped as sw

from rooflab.rungs.wgmma_tf32_tma import WGMMA_3XTF32_SWAP

# X3SwapOp on body<>: 128 rows of the swapped product (C's columns) x 128 columns (C's rows)
BM, BN, BK, NACC, SPLIT_WARPS = 128, 128, 32, 64, 2
A_OFF = BM * 128  # A's boxes in the stage, after B's
R_OFF = A_OFF + BN * 128  # A's residual
STAGE = R_OFF + BN * 128
CLAYOUT = np.array([[em.clayout_64xN(t, v) for v in range(NACC)] for t in range(128)])  # [thread, reg, (m, n)]
HIGH = np.uint32(0xFFFFE000)


@dataclass(frozen=True)
class Split:
    """The kernel's split (flush and REWRITE_A: its variants), or one formula perturbed."""
    flush: int = 1
    rewrite_a: bool = False  # A's high part rounded and written back over the staged A
    residual_at: int = R_OFF  # where the splitting warps write the residual
    read_residual_at: int = R_OFF  # where the consumers' descriptors read it
    chunk_stride: int = 16 * 32 * SPLIT_WARPS  # bytes between a thread's 16-byte chunks (THREADS chunks)
    products: tuple[str, ...] = ("bs", "sb", "bb")  # big_b x small_a, small_b x big_a, big_b x big_a
    round_small: bool = True  # the residuals rounded to nearest TF32 (else left to the tensor core's truncation)


KERNEL = Split()


def _entries() -> dict[str, tuple[int, bool, int, int, bool]]:
    """kernel -> (FLUSH, REWRITE_A, cluster, stages, TMA_STORE) of the X3SwapOp entry points."""
    found = re.findall(r"\n(mm_wgmma_3xtf32_swap\w*)\([^{]*\{[^}]*?tma_persistent::body<tf32_tma::X3SwapOp<(\d+), "
                       r"(true|false)>, (\d+), (\d+), \d+, \d+, (true|false)>", sw.RUNG.read_text())
    return {name: (int(f), r == "true", int(c), int(s), t == "true") for name, f, r, c, s, t in found}


# ---------------------------------------------------------------- the split arithmetic (nt_rna, X3SwapOp)
def rna(bits: np.ndarray) -> np.ndarray:
    """nt_rna on the bits: round to TF32, nearest, ties away from zero."""
    return (bits.astype(np.uint32) + np.uint32(0x1000)) & HIGH


def _minus(x: np.ndarray, big: np.ndarray) -> np.ndarray:
    """The FP32 difference x - big (exact here) as bits."""
    return (x.view(np.float32) - big.view(np.float32)).astype(np.float32).view(np.uint32)


def split_b(x: np.ndarray, v: Split = KERNEL) -> tuple[np.ndarray, np.ndarray]:
    """X3SwapOp::split_b: (big, small) bits of FP32 bits x."""
    big = rna(x)
    rest = _minus(x, big)
    return big, rna(rest) if v.round_small else rest


def split_a(x: np.ndarray, v: Split = KERNEL) -> tuple[np.ndarray, np.ndarray]:
    """X3SwapOp::split_a: (the high part as the tensor core reads it, the residual's bits). Without
    REWRITE_A the high part is the staged bits, which the tensor core truncates."""
    big = rna(x) if v.rewrite_a else x & HIGH
    rest = _minus(x, big)
    return big, rna(rest) if v.round_small else rest


# ---------------------------------------------------------------- the splitting warps: split_a_tile
def split_a_tile(mem: np.ndarray, slot: int, v: Split = KERNEL, log: list | None = None,
                 seen: np.ndarray | None = None) -> None:
    """Warps 1 .. SPLIT_WARPS of the producer warpgroup on one stage: thread j (0 .. 63) splits the
    16-byte chunks j + THREADS i of the A tile, its residual at the same offset of the residual buffer."""
    threads = 32 * SPLIT_WARPS
    a, r = slot + A_OFF, slot + v.residual_at
    for i in range(BN * 128 // 16 // threads):
        for w in range(SPLIT_WARPS):
            at = 16 * (32 * w + sw.LANE) + v.chunk_stride * i
            assert np.all(at < BN * 128), "a chunk past the A tile"
            if log is not None:
                log.append(("split", a + at))
            if seen is not None:
                np.add.at(seen, at // 16, 1)
            words = (a + at)[:, None] // 4 + np.arange(4)
            big, small = split_a(mem[words], v)
            mem[(r + at)[:, None] // 4 + np.arange(4)] = small
            if v.rewrite_a:
                mem[words] = big


# ---------------------------------------------------------------- the consumers: consume_tile_split
def wgmma_m64n128k8_tf32_rs(D: np.ndarray, a: np.ndarray, mem: np.ndarray, desc_b: int, scale_d: bool) -> np.ndarray:
    """wgmma.mma_async m64n128k8 .f32.tf32.tf32, A from registers (ALayout_64x8), B (8 x 128) K-major
    through desc_b; the sum exact (float64). scale_d false: D = A B."""
    A = np.full((64, 8), np.nan)
    A[sw.ALAYOUT[..., 0], sw.ALAYOUT[..., 1]] = em.tf32_value(a)
    prod = A @ sw.read_kmajor_sw128_tf32(mem, desc_b, rows=128).T
    return D + prod if scale_d else prod


def mma_k_tile(mem: np.ndarray, slot: int, cw: int, part: np.ndarray, first: bool, v: Split,
               log: list | None) -> np.ndarray:
    """One k-tile of consume_tile_split for consumer warpgroup cw: its B^T fragments, split, then
    X3SwapOp::mma into the partial (a flush group's first k-tile starts it from zero)."""
    f_off, a_off, r_off = cw * 64 * 128, A_OFF, v.read_residual_at
    raw = np.concatenate([sw.load_bt_fragments(mem, slot + f_off, w, sw.KERNEL, log) for w in range(4)])
    big, small = split_b(raw, v)
    for kk in range(BK // 8):
        ab, as_ = em.make_desc(slot + a_off + kk * 32, 16, 1024), em.make_desc(slot + r_off + kk * 32, 16, 1024)
        operands = {"bs": (big, as_), "sb": (small, ab), "bb": (big, ab)}
        for n, p in enumerate(v.products):
            f, desc = operands[p]
            part = wgmma_m64n128k8_tf32_rs(part, f[:, 4 * kk:4 * kk + 4], mem, desc, not first or kk > 0 or n > 0)
    return part


# ---------------------------------------------------------------- the kernel
def run_split(A: np.ndarray, B: np.ndarray, v: Split = KERNEL, epilogue: str = "tma", stages: int = 4,
              log: list | None = None, seen: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """body<X3SwapOp<FLUSH, REWRITE_A>, 1, STAGES, .., true> over every tile (the producer fills a stage,
    the splitting warps split it, then the consumers run on it). Returns C (NaN where never written) and
    how often each element was written."""
    M, K = A.shape
    N = B.shape[1]
    Mr, Nr = N, M
    C = np.full((M, N), np.nan)
    written = np.zeros((M, N), dtype=int)
    cta = sw.Cta(stages, STAGE)
    KT = sw._cdiv(K, BK)
    it = 0
    for tile in range(sw._cdiv(Mr, BM) * sw._cdiv(Nr, BN)):
        bm, bn = sw.schedule_at(tile, 0, Mr, Nr, 1, tile_n=BN)
        acc = [np.zeros((64, 128), np.float32) for _cw in range(2)]
        part = [np.full((64, 128), np.nan) for _cw in range(2)]
        for kt in range(KT):
            slot = sw.RING + (it % stages) * STAGE
            cta.bar = sw.Barrier()
            cta.mem[slot // 4:(slot + STAGE) // 4] = sw.POISON  # a stale ring: what nothing wrote is unreadable
            sw.issue_stage([cta], 0, A, B, bm, bn, slot, kt, tile_n=BN)
            assert cta.bar.landed == cta.bar.expected, "the full barrier's phase would not complete as armed"
            split_a_tile(cta.mem, slot, v, log, seen)
            for cw in range(2):
                part[cw] = mma_k_tile(cta.mem, slot, cw, part[cw], kt % v.flush == 0, v, log)
                if kt == KT - 1 or (kt + 1) % v.flush == 0:
                    acc[cw] = acc[cw] + part[cw].astype(np.float32)  # FP32 adds, round to nearest
            it += 1
        for cw in range(2):
            n0 = bm + cw * 64
            if n0 >= N:
                continue
            regs = acc[cw][CLAYOUT[..., 0], CLAYOUT[..., 1]]
            if epilogue == "tma" and N % 4 == 0:
                sw.store_acc_tma_t(regs, cta, cw, C, written, n0, bn, sw.KERNEL, log)
            else:
                sw.store_wgmma_acc_t(regs, C, written, n0, bn, sw.KERNEL)
    return C, written


def emulate(A: np.ndarray, B: np.ndarray, flush: int = 1, rewrite_a: bool = False) -> np.ndarray:
    """The same split arithmetic on whole matrices: per flush group of k-tiles the three products summed
    exactly, rounded to FP32 and added to the FP32 accumulator."""
    xa, xb = A.view(np.uint32), B.view(np.uint32)
    ab, sa = split_a(xa, replace(KERNEL, rewrite_a=rewrite_a))
    bb, sb = split_b(xb)
    ab, sa, bb, sb = (em.tf32_value(x) for x in (ab, sa, bb, sb))
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for k0 in range(0, A.shape[1], BK * flush):
        ks = slice(k0, k0 + BK * flush)
        part = ab[:, ks] @ sb[ks] + sa[:, ks] @ bb[ks] + ab[:, ks] @ bb[ks]
        acc = acc + part.astype(np.float32)
    return acc


def one_binade(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """FP32 inputs of either sign in [1, 2), every mantissa bit random: each part's product a multiple
    of 2^-33 below 4, so float64 sums of them (K < 2^10) are exact whatever their order."""
    rng = np.random.default_rng(seed + 11 * m + 7 * n + k)

    def draw(shape):
        return (rng.choice([-1.0, 1.0], shape) * (1 + rng.integers(0, 2**23, shape) / 2**23)).astype(np.float32)

    return draw((m, k)), draw((k, n))


def uniform(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed + 3 * m + n + 5 * k)
    return rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)


def errors(C: np.ndarray, A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    """(normwise, componentwise) errors against the float64 product of the FP32 inputs, as the harness
    measures them (rooflab.model.tolerance)."""
    a, b = A.astype(np.float64), B.astype(np.float64)
    ref = a @ b
    return (float(np.linalg.norm(C - ref) / np.linalg.norm(ref)),
            float(np.max(np.abs(C - ref) / (np.abs(a) @ np.abs(b)))))


# ---------------------------------------------------------------- tests
def test_the_replayed_kernels_are_the_entry_points():
    assert _entries() == {"mm_wgmma_3xtf32_swap": (1, False, 1, 4, True),
                          "mm_wgmma_3xtf32_swap_f2": (2, False, 1, 4, True),
                          "mm_wgmma_3xtf32_swap_rna": (1, True, 1, 4, True),
                          "mm_wgmma_3xtf32_swap_f2_direct": (2, False, 1, 4, False)}
    # ... and the one-box twin of the flush-2 direct kernel (its boxes replayed in tests/test_tma_swapped.py)
    one_box = re.findall(r"\n(mm_wgmma_3xtf32_swap\w*)\([^{]*\{[^}]*?tma_persistent::body<tf32_tma::X3SwapOneBoxOp<(\d+)>, "
                         r"(\d+), (\d+), \d+, \d+, (true|false)>", sw.RUNG.read_text())
    assert one_box == [("mm_wgmma_3xtf32_swap_f2_direct_ab1", "2", "1", "4", "false")]
    assert sorted(v.kernel for v in WGMMA_3XTF32_SWAP.variants) == sorted([*_entries(), one_box[0][0]])  # by speed
    src = " ".join(sw.RUNG.read_text().split())
    assert ("struct X3SwapOp { static constexpr int BK = TF_BK, BN = 128, NACC = 64, PARTS = 1, FLUSH = FLUSH_, "
            "SPLIT_WARPS = 2; static constexpr bool B_KMAJOR = true, SWAP_AB = true, SPLIT_A = true, "
            "REWRITE_A = REWRITE_A_;") in src


# the kernel's text of every formula the replay re-derives (whitespace collapsed)
FORMULAS = {
    "tma_persistent.cuh": [
        "#define TP_SPLIT_STORE_SMEM(bn, stages) "
        "(TP_STORE_SMEM(1, bn, stages) + (stages) * ((bn) / 64) * TP_BOX_BYTES)",
        # split_a_tile
        "constexpr int THREADS = 32 * Op::SPLIT_WARPS, PER = BYTES / 16 / THREADS, BATCH = 4;",
        "const unsigned at = a + 16 * (j + THREADS * (i0 + b));",
        "const unsigned at = 16 * (j + THREADS * (i0 + b)); unsigned small[4]; Op::split_a(x[b], small);",
        '::"r"(r + at), "r"(small[0]), "r"(small[1]), "r"(small[2]), "r"(small[3])',
        'if constexpr (Op::REWRITE_A) asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\\n" ::"r"(a + at), '
        '"r"(x[b][0]), "r"(x[b][1]), "r"(x[b][2]), "r"(x[b][3])',
        # split_a_ring
        "const int j = threadIdx.x - 32, lane = threadIdx.x % 32;",
        "if (!mbar_wait_bounded(bars + 8 * s, (it / STAGES) & 1)) return;",
        "const unsigned a = base + s * STAGE_BYTES + BM * 128; split_a_tile<Op, Op::BN * 128>(a, a + Op::BN * 128, j); "
        "fence_proxy_async(); __syncwarp(); if (lane == 0) mbar_arrive(bars + 8 * (2 * STAGES + s));",
        # consume_tile_split
        "const unsigned f_off = cw * 64 * 128, a_off = BM * 128, r_off = a_off + Op::BN * 128;",
        "if (!(ok = mbar_wait_bounded(bars + 8 * s, parity) && "
        "mbar_wait_bounded(bars + 8 * (2 * STAGES + s), parity)))",
        "load_bt_fragments(*reinterpret_cast<unsigned(*)[16]>(&f[0]), slot + f_off);",
        "for (int e = 0; e < 16; e++) Op::split_b(f[e], f[16 + e]);",
        "Op::mma(part, f, slot + a_off, slot + r_off, kt % F != 0); wgmma_commit(); wgmma_wait<0>(); fence_acc(part); "
        "fence_regs(f); if (signals) release<CLUSTER>(bars + 8 * (STAGES + s)); "
        "if (kt == KT - 1 || (kt + 1) % F == 0) {",
        "for (int e = 0; e < NACC; e++) acc[e] += part[e];",
        # body
        "constexpr int STAGE_BYTES = (Op::PARTS * (BM + Op::BN) + (SPLIT ? Op::BN : 0)) * 128;",
        "__shared__ __align__(8) unsigned long long bars[(SPLIT || RELAY ? 3 : 2) * STAGES + (HOLD ? 1 : 0)];",
        "if constexpr (SPLIT) mbar_init(bar0 + 8 * (2 * STAGES + s), Op::SPLIT_WARPS);",
        "const int kts = first < sch.tiles ? ((sch.tiles - 1 - first) / stride + 1) * KT : 0;",
        "if (tid >= 32 && tid < 32 * (1 + Op::SPLIT_WARPS)) split_a_ring<Op, STAGES, STAGE_BYTES, BM>(base, bar0, kts);",
        "if constexpr (SPLIT) { if (!consume_tile_split<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, "
        "cw, signals)) break; } else if constexpr (SW) {",
    ],
    "stage_tf32.cuh": [
        "__device__ __forceinline__ float nt_rna(float x) { return __uint_as_float((__float_as_uint(x) + 0x1000u) "
        "& 0xffffe000u); }",
    ],
}
OP_FORMULAS = [
    "const float v = __uint_as_float(x), big = nt_rna(v); small = __float_as_uint(nt_rna(v - big));",
    "x = __float_as_uint(big); }",
    "const float v = __uint_as_float(x[i]), big = REWRITE_A ? nt_rna(v) : __uint_as_float(x[i] & 0xffffe000u); "
    "small[i] = __float_as_uint(nt_rna(v - big)); if (REWRITE_A) x[i] = __float_as_uint(big);",
    "const unsigned(&big)[4] = *reinterpret_cast<const unsigned(*)[4]>(&f[4 * kk]); "
    "const unsigned(&small)[4] = *reinterpret_cast<const unsigned(*)[4]>(&f[16 + 4 * kk]); "
    "const auto ab = make_desc(a_big + kk * 32, 16, 1024), as = make_desc(a_small + kk * 32, 16, 1024); "
    "wgmma_m64n128k8_tf32_rs(d, big, as, accumulate || kk > 0); wgmma_m64n128k8_tf32_rs(d, small, ab, 1); "
    "wgmma_m64n128k8_tf32_rs(d, big, ab, 1);",
]


def test_the_replayed_formulas_are_the_kernels():
    for name, lines in FORMULAS.items():
        src = " ".join((sw.INCLUDE / name).read_text().split())
        missing = [line for line in lines if line not in src]
        assert not missing, (name, missing)
    src = " ".join(sw.RUNG.read_text().split())
    missing = [line for line in OP_FORMULAS if line not in src]
    assert not missing, missing
    ptx = " ".join((sw.INCLUDE / "ptx.cuh").read_text().split())
    assert ('"wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" WGMMA_D64_REGS "}, {%64, %65, %66, %67}, %68, '
            'p, 1, 1;\\n"') in ptx and 'setp.ne.b32 p, %69, 0;' in ptx


def test_the_split_is_exact_where_it_should_be():
    """Both splits' high parts are TF32 and x - big is exact in FP32; the residual keeps 11 bits of at
    most 12 (A rounded) or 13 (A truncated): within 1 or 2 FP32 ulps of x, as X3SwapOp's comment says."""
    x = uniform(1, 1, 20000, seed=1)[0].view(np.uint32).ravel()
    for rewrite, ulps in ((True, 1), (False, 2)):
        big, small = split_a(x, replace(KERNEL, rewrite_a=rewrite))
        assert not (big & ~HIGH).any() and not (small & ~HIGH).any()
        v, b = x.view(np.float32).astype(np.float64), big.view(np.float32).astype(np.float64)
        assert np.array_equal(_minus(x, big).view(np.float32).astype(np.float64), v - b)  # exact
        ulp = np.spacing(np.abs(x.view(np.float32))).astype(np.float64)
        err = np.abs(v - b - small.view(np.float32))
        assert np.all(err <= ulps * ulp) and np.any(err > (ulps - 1) * ulp)


# (M, N, K): one k-tile (K 32, K 20: zero fill in it), then K loops with tails, M and N past the tile
# edges, N off multiples of 32 and of 4 (the direct epilogue, N odd and even)
SHAPES = [(64, 96, 32), (45, 36, 20), (300, 200, 100), (260, 76, 33), (45, 33, 70), (130, 257, 64)]


@pytest.mark.parametrize("v", [KERNEL, Split(flush=2), Split(rewrite_a=True)], ids=["f1", "f2", "rna"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_split_data_path_is_the_split_arithmetic(shape, v):
    """TMA's boxes, the splitting warps' residual, the split fragments, the three products and the
    flushes, through either epilogue: bit for bit the emulation of the same arithmetic, every element
    of C written once."""
    a, b = one_binade(*shape)
    want = emulate(a, b, v.flush, v.rewrite_a)
    for epilogue in ("tma", "direct"):
        got, written = run_split(a, b, v, epilogue)
        assert (written == 1).all(), f"{(written == 0).sum()} elements unwritten, {(written > 1).sum()} twice"
        assert np.array_equal(got, want), np.argwhere(got != want)[:8]


@pytest.mark.parametrize("v", [KERNEL, Split(flush=2), Split(rewrite_a=True)], ids=["f1", "f2", "rna"])
def test_the_replay_meets_the_rungs_fp32_tolerances(v):
    """On [-1, 1) inputs (the harness's), the replayed kernel against the float64 product of the FP32
    inputs: within the rung's normwise and componentwise tolerances, by far, where TF32 alone is not."""
    for m, n, k in ((130, 140, 257), (70, 64, 1), (64, 70, 9)):
        a, b = uniform(m, n, k)
        got, _w = run_split(a, b, v)
        norm, comp = errors(got, a, b)
        assert norm <= WGMMA_3XTF32_SWAP.normwise_tolerance(k) / 2, (m, n, k, norm)
        assert comp <= WGMMA_3XTF32_SWAP.componentwise_tolerance(k) / 1.5, (m, n, k, comp)
        tf32 = em.tf32_value(a.view(np.uint32)) @ em.tf32_value(b.view(np.uint32))  # one product, truncated
        assert errors(tf32, a, b)[0] > 10 * WGMMA_3XTF32_SWAP.normwise_tolerance(k)


def test_the_variants_differ_as_their_splits_do():
    """The emulation pins the split down: A's high part truncated and rounded give different C (the
    rounded one on the rewritten variant only), and so do one and two k-tiles a flush."""
    a, b = one_binade(130, 96, 96)
    trunc, rounded, f2 = emulate(a, b), emulate(a, b, rewrite_a=True), emulate(a, b, flush=2)
    assert not np.array_equal(trunc, rounded) and not np.array_equal(trunc, f2)
    assert np.array_equal(run_split(a, b, Split(rewrite_a=True))[0], rounded)
    assert not np.array_equal(run_split(a, b)[0], rounded)


@pytest.mark.parametrize("flip", [{"residual_at": R_OFF + 1024}, {"read_residual_at": A_OFF},
                                  {"chunk_stride": 16 * 32}, {"products": ("sb", "bb")}, {"products": ("bs", "bb")},
                                  {"round_small": False}],
                         ids=["residual written elsewhere", "residual read from A", "chunks overlap",
                              "no big_b x small_a", "no small_b x big_a", "residual truncated"])
def test_the_replay_catches_a_perturbed_formula(flip):
    """A residual written one 8-row group off (or read where A lies), threads whose chunks overlap (the
    tile's last 480 chunks never split), a correction product left out, the residuals left for the tensor core to
    truncate: each breaks the bit-for-bit match; the first four also the FP32 tolerance."""
    v = replace(KERNEL, **flip)
    shape = (130, 96, 70)
    a, b = one_binade(*shape)
    want = emulate(a, b)
    assert np.array_equal(run_split(a, b)[0], want)  # the shape passes as the kernel has it
    got = run_split(a, b, v)[0]
    assert not np.array_equal(got, want)
    if "round_small" not in flip:
        ua, ub = uniform(*shape)
        uc = run_split(ua, ub, v)[0]
        assert not errors(uc, ua, ub)[0] <= WGMMA_3XTF32_SWAP.normwise_tolerance(shape[2])


def test_every_chunk_is_split_once_with_the_fewest_wavefronts():
    """The splitting warps' chunks cover the stage's A tile once; each warp's 16-byte loads and stores
    span 512 consecutive bytes: 4 wavefronts, the least (and the fragment loads and epilogue stores keep
    their 2)."""
    log: list = []
    seen = np.zeros(BN * 128 // 16, dtype=int)
    a, b = one_binade(128, 128, 32)
    run_split(a, b, log=log, seen=seen)
    assert (seen == 1).all()
    split = [at for kind, at, *_ in log if kind == "split"]
    assert len(split) == 16 * SPLIT_WARPS and {sw.wavefronts(at, 16) for at in split} == {4}
    assert {sw.wavefronts(at, 8) for kind, at, *_ in log if kind == "lds"} == {2}
    assert {sw.wavefronts(at, n) for kind, at, n in (e for e in log if e[0] == "sts")} == {2}
    seen[:] = 0
    run_split(a, b, replace(KERNEL, chunk_stride=16 * 32), seen=seen)
    assert seen.max() == 2 and (seen == 0).sum() == seen.size - 17 * 32  # chunks j + 32 i: 0 .. 543


# ---------------------------------------------------------------- the ring with the residual, under random schedules
class _Barrier:
    """An mbarrier: `count` arrivals (and no transaction bytes outstanding) complete a phase."""

    def __init__(self, count: int):
        self.count, self.pending, self.tx, self.phases = count, count, 0, 0

    def arrive(self, expect_tx: int = 0) -> None:
        self.tx += expect_tx
        self.pending -= 1
        assert self.pending >= 0, "more arrivals than the barrier's count in one phase"
        self._complete()

    def complete_tx(self, n: int) -> None:
        self.tx -= n
        self._complete()

    def _complete(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.phases += 1
            self.pending = self.count

    def ready(self, parity: int) -> bool:
        """mbarrier.try_wait.parity: true once the phase of that parity has completed."""
        return self.phases % 2 != parity


class _Ring:
    """One CTA: per slot the k-tile its A and B hold and the k-tile its residual was split from, the
    three barriers, the copies, splits and wgmma groups in flight."""

    def __init__(self, stages: int, kts: int):
        self.S, self.KT = stages, kts
        self.full = [_Barrier(1) for _ in range(stages)]
        self.empty = [_Barrier(2) for _ in range(stages)]
        self.ready = [_Barrier(SPLIT_WARPS) for _ in range(stages)]
        self.slot = [None] * stages
        self.residual = [None] * stages
        self.copies: list[tuple[int, int]] = []
        self.splitting: dict[int, tuple[int, int]] = {}  # warp -> (slot, k-tile) it reads and writes
        self.groups: dict[int, list[tuple[int, int]]] = {0: [], 1: []}  # consumer -> (slot, k-tile) in flight
        self.consumed: dict[int, list[int]] = {0: [], 1: []}

    def _readers(self, s: int) -> list[str]:
        return ([f"consumer {w}" for w, g in self.groups.items() if any(gs == s for gs, _ in g)]
                + [f"split warp {w}" for w, (gs, _k) in self.splitting.items() if gs == s])

    def land(self, i: int) -> None:
        s, kt = self.copies.pop(i)
        assert not self._readers(s), f"k-tile {kt}'s copy landed in slot {s} under {self._readers(s)}"
        self.slot[s] = kt
        self.full[s].complete_tx(1)

    def split_begin(self, w: int, s: int, kt: int) -> None:
        assert self.slot[s] == kt, f"split warp {w} read slot {s} holding k-tile {self.slot[s]} as {kt}"
        busy = [c for c, g in self.groups.items() if any(gs == s for gs, _ in g)]
        assert not busy, f"split warp {w} overwrites slot {s}'s residual under consumer {busy}"
        self.splitting[w] = (s, kt)

    def split_end(self, w: int) -> None:
        s, kt = self.splitting.pop(w)
        assert self.slot[s] == kt, f"slot {s} refilled while split warp {w} was splitting it"
        self.residual[s] = kt

    def retire(self, w: int) -> None:
        s, kt = self.groups[w].pop(0)
        assert self.slot[s] == kt and self.residual[s] == kt, (
            f"consumer {w} read k-tile {kt} from slot {s} holding {self.slot[s]}, residual of {self.residual[s]}")
        self.consumed[w].append(kt)


def _producer(ring: _Ring):
    for it in range(ring.KT):
        s = it % ring.S
        if it >= ring.S:
            yield lambda s=s, it=it: ring.empty[s].ready((it // ring.S - 1) & 1)
        ring.full[s].arrive(expect_tx=1)
        ring.copies.append((s, it))


def _split_warp(ring: _Ring, w: int, wait_full: bool = True):
    for it in range(ring.KT):
        s = it % ring.S
        if wait_full:
            yield lambda s=s, it=it: ring.full[s].ready((it // ring.S) & 1)
        ring.split_begin(w, s, it)
        yield lambda: True  # the chunks take a while: anything may happen meanwhile
        ring.split_end(w)
        ring.ready[s].arrive()  # after the warp's fence and __syncwarp: its writes are visible


def _consumer(ring: _Ring, w: int, wait_ready: bool = True, release_early: bool = False):
    for it in range(ring.KT):
        s, parity = it % ring.S, (it // ring.S) & 1
        yield lambda s=s, parity=parity: ring.full[s].ready(parity) and (not wait_ready or ring.ready[s].ready(parity))
        ring.groups[w].append((s, it))
        if release_early:
            ring.empty[s].arrive()
        yield lambda: not ring.groups[w]  # wgmma.wait_group 0
        if not release_early:
            ring.empty[s].arrive()


def _replay(stages: int, kts: int, seed: int, **mutations) -> _Ring:
    rng = random.Random(seed)
    ring = _Ring(stages, kts)
    consumer = {k: mutations[k] for k in ("wait_ready", "release_early") if k in mutations}
    actors = ([_producer(ring)] + [_split_warp(ring, w, mutations.get("wait_full", True)) for w in range(SPLIT_WARPS)]
              + [_consumer(ring, w, **consumer) for w in range(2)])
    waiting = {i: c for i, a in enumerate(actors) if (c := next(a, None)) is not None}
    while waiting or ring.copies:
        moves = [("actor", i) for i, cond in waiting.items() if cond()]
        moves += [("land", i) for i in range(len(ring.copies))]
        moves += [("retire", w) for w, g in ring.groups.items() if g]
        assert moves, f"deadlock: actors {sorted(waiting)} wait, nothing in flight"
        kind, i = rng.choice(moves)
        if kind == "land":
            ring.land(i)
        elif kind == "retire":
            ring.retire(i)
        elif (nxt := next(actors[i], None)) is None:
            del waiting[i]
        else:
            waiting[i] = nxt
    assert ring.consumed == {0: list(range(kts)), 1: list(range(kts))}
    return ring


def test_the_ring_with_the_residual_under_random_schedules():
    """Each consumer reads every k-tile in order from a slot holding it and its residual; no split
    starts before its stage landed, none overwrites a residual a wgmma group may read, no copy lands
    under a split or a group; nothing deadlocks. Over K from one k-tile to several laps of the ring."""
    for kts in (1, 2, 4, 5, 9, 13):
        for seed in range(150):
            _replay(4, kts, seed)


@pytest.mark.parametrize("mutation", [{"wait_ready": False}, {"wait_full": False}, {"release_early": True}],
                         ids=["consumers skip the ready barrier", "split warps skip the full barrier",
                              "slots released before their groups retire"])
def test_the_ring_replay_catches_a_missing_wait(mutation):
    caught = 0
    for seed in range(150):
        try:
            _replay(4, 9, seed, **mutation)
        except AssertionError:
            caught += 1
    assert caught > 0
