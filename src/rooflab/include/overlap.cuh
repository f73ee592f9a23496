// Overlapped promotion, for the accurate accumulations of the FP8 and 3xTF32 rungs (rungs/wgmma_fp8.cu,
// rungs/wgmma_tf32_tma.cu): each group of U k-tiles is summed from zero in a partial accumulator and
// then added to the FP32 accumulator with FP32 adds, as the flushed paths do, but the adds no longer
// wait for the tensor pipe to drain. Two partials take the groups in turn (p0, p1, p0, ...); every
// k-tile's MMAs are committed, then wait_group 1 retires k-tile kt - 1 while kt's run. Where kt starts
// a group, the other partial (the last group's, complete since that wait) is added under kt's MMAs;
// k-tile kt - 1's slot goes back after the same wait (the chain's release pattern, one k-tile late).
//
// ptxas follows wait_group counts along straight code only. Where a partial that may still be in
// flight reaches a merge of paths (a loop's back-edge, an exit taken after some k-tile, the two arms
// of a test of "last k-tile") and is read after a later wait_group 1, it serialises every wgmma of the
// kernel, saying so in an info line only (C7514 "wgmma.mma_async instructions are serialized due to
// non wgmma instructions reading accumulator registers ..."; tests/test_kernels_compile.py fails on
// it). So the k-tiles run in passes of PASS_KTILES (pairs of groups: p0's, then p1's), unrolled in the
// source, with no branch in them: the pass's last k-tile, once the previous partial is added under
// its MMAs, waits with wait_group 0 and adds its own, so nothing is in flight at the back-edge. This
// consumer's MMAs drain once a pass (the other consumer warpgroup's keep the tensor pipe busy
// meanwhile) where the flushed path drains every group. The k-tiles short of a whole pass (K under
// PASS_KTILES k-tiles, or not a multiple of them) run flushed one at a time.
//
// The FP32 sums: U = 1 adds every k-tile's partial in order, exactly as FLUSH / PROMOTE 1 does (the
// same partials, the same adds, so the same bits); U > 1 those of FLUSH U but for the tail's groups of 1.
// A pass of 8 k-tiles is about 1,200 SASS instructions (FP8; 3xTF32 1,850); 4 or 16 compile clean (nvcc
// 13.0: no spill, no serialisation), draining twice as often or growing the loop twice as large.
// sm_90a only.
#pragma once

#include "ptx.cuh"

#ifndef PASS_KTILES
#define PASS_KTILES 8
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace overlap {

// What one k-tile does with the state of a run (overlap::run's lambdas): issue(d, accumulate) waits
// for the k-tile's stage and issues its MMAs into d, add(part) adds a partial to the accumulator,
// give_back(k) releases k-tile k's slot; kt counts the k-tiles. Templates, not generic lambdas:
// NVRTC 13.0 takes a generic lambda's call operator for a host function.
template <class Issue, class Add, class GiveBack>
struct Steps {
    Issue& issue;
    Add& add;
    GiveBack& give_back;
    int& kt;
};

// k-tile kt into cur, the J-th of its group; AT is the group's place in the pass (0: first, its prev
// added at the last pass's end; 1: inside; 2: last, so the pass's last k-tile drains)
template <int U, int J, int AT, int NACC, class S>
__device__ __forceinline__ void step(S& s, float (&cur)[NACC], float (&prev)[NACC])
{
    constexpr bool opens = AT == 0 && J == 0, closes = AT == 2 && J == U - 1;
    s.issue(cur, J > 0);
    wgmma_wait<1>();  // k-tile kt - 1 retired: prev is complete where kt starts a group
    fence_acc(prev);
    if constexpr (J == 0 && !opens) s.add(prev);
    if constexpr (!opens) s.give_back(s.kt - 1);
    if constexpr (closes) {  // the pass's last k-tile: only its own partial's adds wait for the drain
        wgmma_wait<0>();
        fence_acc(cur);
        s.add(cur);
        s.give_back(s.kt);
    }
    s.kt++;
}

// the U k-tiles of a group, from the J-th (unrolled in the source: a loop left to the unroller may
// stay a loop, and its back-edge is a merge)
template <int U, int J, int AT, int NACC, class S>
__device__ __forceinline__ void group(S& s, float (&cur)[NACC], float (&prev)[NACC])
{
    if constexpr (J < U) {
        step<U, J, AT>(s, cur, prev);
        group<U, J + 1, AT>(s, cur, prev);
    }
}

// the pairs of groups of a pass, from the V-th: p0's group, then p1's
template <int U, int PAIRS, int V, int NACC, class S>
__device__ __forceinline__ void pass(S& s, float (&p0)[NACC], float (&p1)[NACC])
{
    if constexpr (V < PAIRS) {
        group<U, 0, V == 0 ? 0 : 1>(s, p0, p1);
        group<U, 0, V == PAIRS - 1 ? 2 : 1>(s, p1, p0);
        pass<U, PAIRS, V + 1>(s, p0, p1);
    }
}

// A consumer warpgroup's KT k-tiles into acc (zeroed here); false if a wait timed out. Then the
// k-tiles still run, on whatever their slots hold (a branch around them is a merge ptxas would
// serialise for), but no slot is released any more, and acc is not to be stored.
//   stage(kt, ok)             k-tile kt's slot, its stage waited for while ok (a wait that timed out
//                             clears ok: no later one waits)
//   mma(d, slot, accumulate)  the k-tile's MMAs into d (between the fence and the commit done here);
//                             accumulate false: the first of them starts d from zero
//   release(kt)               k-tile kt's MMAs are retired: its slot may be refilled
template <int NACC, int U, class Stage, class Mma, class Release>
__device__ __forceinline__ bool run(float (&acc)[NACC], int KT, Stage&& stage, Mma&& mma, Release&& release)
{
    static_assert(U >= 1, "a group is one k-tile or more");
    constexpr int PAIRS = PASS_KTILES / (2 * U), PASS = 2 * U * PAIRS;
    static_assert(PAIRS >= 1, "a pass holds a group of each partial");
    float p0[NACC], p1[NACC];  // a group's first MMA overwrites its partial; zeroed so no register starts undefined
#pragma unroll
    for (int e = 0; e < NACC; e++) acc[e] = p0[e] = p1[e] = 0.0f;
    bool ok = true;
    int kt = 0;
    // the fence keeps the adds where they stand: NVVM would sink them past the next stage's barrier
    // wait, so a stage that lands late would hold them back while the tensor pipe runs dry
    const auto add = [&](const float (&part)[NACC]) {
#pragma unroll
        for (int e = 0; e < NACC; e++) acc[e] += part[e];
        fence_acc(acc);
    };
    const auto give_back = [&](int k) {
        if (ok) release(k);
    };
    const auto issue = [&](float (&d)[NACC], bool accumulate) {
        const unsigned slot = stage(kt, ok);
        fence_acc(d);
        wgmma_fence();
        mma(d, slot, accumulate);
        wgmma_commit();
    };
    Steps<decltype(issue), decltype(add), decltype(give_back)> s{issue, add, give_back, kt};
    while (kt + PASS <= KT) pass<U, PAIRS, 0>(s, p0, p1);
    // the tail short of a pass, flushed k-tile by k-tile (groups of 1, never longer than U: a group
    // of U chained across this loop's back-edge has NVVM copy the partial under its MMAs, C7515)
    for (; kt < KT; kt++) {
        issue(p0, false);
        wgmma_wait<0>();
        fence_acc(p0);
        add(p0);
        give_back(kt);
    }
    wgmma_wait<0>();
    fence_acc(p0);
    fence_acc(p1);
    return ok;
}

}  // namespace overlap
#endif
