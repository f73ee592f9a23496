"""measure.memory's pure helpers: footprints, and the emulations the GPU results are checked against,
held to brute-force versions of the kernels' loops; the config's validation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rooflab.errors import UsageError

from memory_fixtures import MiB


def test_footprints():
    from rooflab.measure.memory import copy_footprint, l2_footprints

    assert [f // MiB for f in l2_footprints(60 * MiB)] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256]
    assert max(l2_footprints(40 * MiB)) == 256 * MiB and 44 * MiB in l2_footprints(40 * MiB)
    assert l2_footprints(60 * MiB, max_bytes=100 * MiB)[-1] == 96 * MiB
    assert all(f % 1024 == 0 for f in l2_footprints(6 * MiB))
    assert copy_footprint(60 * MiB) == 16 * MiB and copy_footprint(40 * MiB) == 8 * MiB


def _l2_walk(threads: int, iters: int, n4: int) -> np.ndarray:
    """l2_read's index walk, literally: how often each float4 is read."""
    count = np.zeros(n4, dtype=np.int64)
    step = threads % n4
    for t in range(threads):
        i0 = t % n4
        for _ in range(iters):
            idx = [i0]
            for _u in range(3):
                nxt = idx[-1] + step
                idx.append(nxt - n4 if nxt >= n4 else nxt)
            for i in idx:
                count[i] += 1
            nxt = idx[-1] + step
            i0 = nxt - n4 if nxt >= n4 else nxt
    return count


@pytest.mark.parametrize(("threads", "iters", "n4"), [(64, 3, 32), (96, 5, 160), (256, 2, 64), (32, 7, 1024)])
def test_l2_expected_sum_matches_the_walk(threads, iters, n4):
    from rooflab.measure.memory import l2_visit_counts

    counts = _l2_walk(threads, iters, n4)
    q, r = l2_visit_counts(threads, iters, n4)
    want = np.full(n4, q)
    want[:r] += 1
    assert np.array_equal(counts, want)


def _smem_kernel(lane_stride: int, step: int, mask: int, iters: int) -> np.ndarray:
    """smem_read's loop for one block, literally, in 32-bit arithmetic."""
    from rooflab.measure.memory import SMEM_UNROLL, smem_words

    words = smem_words()
    u_stride = 32 if lane_stride == 1 else 1
    out = np.zeros(256, dtype=np.uint32)
    for t in range(256):
        acc0 = acc1 = 0
        b = 0
        for _ in range(iters):
            for u in range(SMEM_UNROLL):
                x, y, z, w = (int(v) for v in words[(t & 31) * lane_stride + b + u * u_stride])
                acc0 = (acc0 + x + y) & 0xFFFFFFFF
                acc1 = (acc1 + z + w) & 0xFFFFFFFF
            b = (b + step) & mask
        out[t] = (acc0 + acc1) & 0xFFFFFFFF
    return out


@pytest.mark.parametrize("variant", ["conflict-free", "32-way conflict"])
def test_smem_emulation_matches_the_loop(variant):
    from rooflab.measure.memory import SMEM_VARIANTS, smem_emulate

    stride, step, mask, _w, _how = SMEM_VARIANTS[variant]
    assert np.array_equal(smem_emulate(stride, step, mask, 7), _smem_kernel(stride, step, mask, 7))
    big = smem_emulate(stride, step, mask, 123_457)  # the timed counts are checked as cheaply
    assert big.dtype == np.uint32 and len(set(big.tolist())) > 1


def test_smem_banks():
    """Conflict-free: each quarter-warp's 8 lanes cover the 32 banks once; stride 8: one bank group."""
    from rooflab.measure.memory import SMEM_F4, SMEM_VARIANTS

    for name, (stride, step, mask, wavefronts, _how) in SMEM_VARIANTS.items():
        for b in range(0, mask + 1, step):
            for u in range(4):
                u_stride = 32 if stride == 1 else 1
                f4 = [lane * stride + b + u * u_stride for lane in range(32)]
                assert max(f4) < SMEM_F4
                banks = [(4 * i + c) % 32 for i in f4 for c in range(4)]
                rows = {}
                for i in f4:
                    for c in range(4):
                        rows.setdefault((4 * i + c) % 32, set()).add((4 * i + c) // 32)
                assert max(len(r) for r in rows.values()) * 1 == wavefronts, name
                assert len(set(banks)) == (32 if stride == 1 else 4)


def test_dfma_emulation_is_exact():
    """With x = 0.5 numpy's a*x + y is a correctly rounded fused multiply-add."""
    from rooflab.measure.memory import DFMA_X, DFMA_Y, dfma_emulate

    def fma(a, x, y):
        return float(Fraction(a) * Fraction(x) + Fraction(y))

    t = np.arange(8, dtype=np.float64)
    accs = [t * 0.0009765625 + j for j in range(8)]
    for _ in range(2 * 16):
        accs = [np.array([fma(a, DFMA_X, DFMA_Y) for a in acc]) for acc in accs]
    s = np.zeros(8)
    for a in accs:
        s = s + a
    assert np.array_equal(dfma_emulate(256, 2)[:8], s)
    with pytest.raises(ValueError):
        dfma_emulate(8, 1, x=0.75)


def test_hfma2_emulation_is_exact():
    """Each step: the float64 value of a*x + y is exact (halves have 11 significant bits), so one
    rounding to float16 is the fused result; check against exact rationals."""
    from rooflab.measure.memory import HFMA_X, HFMA_Y, hfma2_emulate

    x, y = Fraction(float(np.float16(HFMA_X))), Fraction(float(np.float16(HFMA_Y)))
    a = np.float16(0.4921875)
    for _ in range(40):
        exact = Fraction(float(a)) * x + y
        assert Fraction(float(np.float64(a) * float(x) + float(y))) == exact
        a = np.float16(float(exact))
    out = hfma2_emulate(256, 4)
    assert out.shape == (256, 2) and out.dtype == np.float16 and np.all(np.isfinite(out))
    assert len({tuple(r) for r in out.view(np.uint16).tolist()}) > 32  # threads differ


def test_half2_bits():
    from rooflab.measure.memory import HFMA_X, half2_bits

    b = int(half2_bits(HFMA_X))
    assert b & 0xFFFF == b >> 16 == int(np.float16(HFMA_X).view(np.uint16)) == 0x3BFE  # 1 - 2^-10, exact


def test_memory_config_validate():
    from rooflab.measure.memory import MemoryConfig

    MemoryConfig().validate()
    for bad in (MemoryConfig(rounds=0), MemoryConfig(reps=1), MemoryConfig(target_ms=0.0),
                MemoryConfig(parts=("l3",)), MemoryConfig(footprints=(1000,))):
        with pytest.raises(UsageError):
            bad.validate()
