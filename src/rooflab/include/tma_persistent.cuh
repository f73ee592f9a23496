// The persistent, warp-specialised TMA GEMM body of the Hopper tensor-core rungs (BF16, TF32, 3xTF32
// and FP8), one protocol for every precision; what differs per precision is an operand policy:
//   BK       k per stage: one 128-byte swizzle row of the element (BF16 64, TF32 32, e4m3 128)
//   BN       tile columns (a multiple of B's box rows); NACC = BN / 2 accumulators a consumer thread
//   PARTS    copies of each operand a stage holds (3xTF32: a TF32 high part and a residual, stacked
//            in one map: part p of row r at row p * rows + r)
//   B_KMAJOR B arrives transposed (B^T, N x K: boxes at (k, n)); else B's 64-column panels (n, k)
//   FLUSH    0: the wgmma chain keeps the accumulator; F > 0: F k-tiles' products are summed from
//            zero in a partial accumulator, which is then added to the FP32 one with FP32 adds;
//            F < 0: the same for groups of -F k-tiles, overlapped: two partials in turn, each added
//            while the next group's MMAs run (include/overlap.cuh)
//   mma(d, a, b, accumulate)  a consumer warpgroup's MMAs on one stage (a: its 64 rows of A, b: B's
//            BN rows or panels); accumulate false: the first of them starts d from zero
//   SWAP_AB  (optional, default false) the product is computed as C^T = B^T A^T, for FP32 operands
//            that TF32 wgmma cannot read as they lie: row-major B is N-major, but B^T may come from
//            registers, which any layout can fill. The tile's rows (those the consumers split) are
//            then columns of C: the stage's first operand is B as it is (32 k x 32 n boxes, 4 KB),
//            loaded into registers by the consumers (consume_tile_swapped); the second is A, K-major
//            as it lies, read by the descriptors; C^T's tile leaves transposed (store_acc_tma_t).
//   SPLIT_A  (optional, SWAP_AB only) 3xTF32 with no pre-pass: a stage also holds a residual buffer as
//            large as its A boxes, which warps 1 .. SPLIT_WARPS of the producer warpgroup fill from the
//            staged A (split_a_ring, Op::split_a: the residual at the same offset, the high part left in
//            place or rewritten there) before a third barrier of the stage lets the consumers at it;
//            the consumers split B^T's fragments in registers (Op::split_b) and sum the products in a
//            partial accumulator flushed every FLUSH k-tiles (consume_tile_split)
//   C_IN_SLOT (optional, default false; TMA_STORE, the chain, no cluster) the consumers hold the ring slot of a
//            tile's last k-tile through its epilogue and stage C there too (each its box of A and half the
//            slot's B, once both consumers' MMAs have retired), beside their own CBUFS buffers, so fewer boxes
//            wait for an earlier store to have left its buffer; the slot goes back under the next tile's first MMAs
//   RELAY_RELEASE (optional, default false; 2-CTA clusters, the plain or overlapped body) a consumer's release
//            for the partner CTA goes to a local relay barrier instead (count CONSUMERS), and warp 1 of the
//            producer warpgroup forwards one arrival a k-tile to the partner's empty barrier (count CONSUMERS +
//            1), so no consumer warp issues a remote arrive
//   CONSUMERS (optional, default 2) consumer warpgroups, 64 rows of the tile each (BM = 64 CONSUMERS); 3 lets
//            two warpgroups' MMAs cover the third's adds and waits. C then leaves from the registers (the
//            TMA-store staging is sized for 2), and the block is 128 (1 + CONSUMERS) threads
//   B_BOX_ROWS, A_BOX_ROWS (optional, default 64) the rows of a box of B and of A: up to 256, so one box
//            may hold a whole tile's B (BN rows) or A (128 rows); the host maps them with boxes as tall
//   B_ONE_BOX (optional; B as it lies, N-major: SWAP_AB, or !B_KMAJOR without a cluster) the stage's B arrives
//            in one rank-3 box of 128-byte column chunks (rooflab.cuda.tma's chunked map: the swapped product's
//            BM / 32 chunks of 32 n x 32 k, BF16's BN / 64 panels of 64 n x 64 k) instead of a box a chunk: the
//            same bytes in the same places, one TMA issue
// Every box is rows of 128 bytes, 128-byte swizzled in 8-row atoms, so boxes of any height laid one after
// another make the same operand: a stage holds PARTS x (BM / A_BOX_ROWS) boxes of A, then PARTS x
// (BN / B_BOX_ROWS) boxes of B (SWAP_AB: BM / 32 boxes of B, then BN / 64 of A; SPLIT_A: then A's residual,
// BN x 128 bytes).
//
// Persistent and warp-specialised, in clusters of CLUSTER CTAs stacked along M (1: no cluster): at
// most one CTA an SM walks the schedule's tiles (cluster c: tiles c, c + clusters, ...); the producer
// thread runs the ring through all of them, so the next tile's stages load while the consumers store
// this one's C. The ring's k-tile count `it` runs on across tiles (slot it % STAGES, phase
// (it / STAGES) & 1). Each consumer warpgroup releases a slot on the empty barrier of every CTA of the
// cluster (count CONSUMERS x CLUSTER), as a partner's multicast writes into this CTA's slot too, lane 0
// of its warp w on CTA w: one k-tile later, after the wait that retires the slot's MMAs (at once where
// every k-tile is flushed: its own wait_group 0 retired them). Both CTAs of a cluster walk the same
// tiles. Every thread of the cluster with work meets at the end, so no CTA exits while a partner may still
// arrive on its barriers; the producer warpgroup's idle threads exit at once.
// With TMA_STORE the epilogue goes through shared memory (store_acc_tma) where C's rows can be
// mapped (N a multiple of 4, C 16-byte aligned: the rule the host encodes C's map by), else directly;
// C's map sits 128 bytes after B's. CBUFS: C boxes a consumer warpgroup stages at once (2 by default;
// a shallower ring leaves room for more, up to the whole tile, so fewer boxes wait for an earlier
// one's store to have read its buffer).
//
// Every barrier wait gives up after MBAR_TIMEOUT_NS (ptx.cuh): a thread that timed out waits for
// nothing more, issues no more copies and stores nothing, so a stage whose bytes never arrive
// leaves C NaN-poisoned (the harness FAILS the rung) instead of hanging the process.
#pragma once

#include "overlap.cuh"
#include "ptx.cuh"
#include "wgmma_store.cuh"

#define TP_BOX_BYTES (64 * 128)  // one box: 64 rows of one 128-byte swizzle row
#define TP_C_BOX_BYTES (64 * 128)  // one 64 x 32 FP32 box of C in the TMA-store epilogue
#ifndef GROUP_M
#define GROUP_M 16
#endif
// the ring: per stage parts x (128 rows of A + bn rows of B) of 128 bytes, + 1024 for aligning it; + the TMA-store
// epilogue's staging: cbufs boxes (2 unless said) for each of 2 consumer warpgroups
#define TP_SMEM(parts, bn, stages) ((stages) * (parts) * (128 + (bn)) * 128 + 1024)
#define TP_STORE_SMEM_BUFS(parts, bn, stages, cbufs) (TP_SMEM(parts, bn, stages) + 2 * (cbufs) * TP_C_BOX_BYTES)
#define TP_STORE_SMEM(parts, bn, stages) TP_STORE_SMEM_BUFS(parts, bn, stages, 2)
// SPLIT_A: a residual of the stage's A (bn rows x 128 bytes) beside each stage
#define TP_SPLIT_STORE_SMEM(bn, stages) (TP_STORE_SMEM(1, bn, stages) + (stages) * ((bn) / 64) * TP_BOX_BYTES)

// 2-CTA clusters along M (the attribute exists from sm_90 on; for older targets the bodies are empty anyway)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define TP_CLUSTER_DIMS_2
#else
#define TP_CLUSTER_DIMS_2 __cluster_dims__(2, 1, 1)
#endif

// TP_TRACE (a diagnostic build, never a rung: scripts/dev/ring_trace.py): the SM clock at each step of the ring,
// for the first TP_TRACE_CTAS blocks and the first TP_TRACE_KT k-tiles of their ring, in tp_trace (read back by
// name): the producer's slot found free and its boxes issued, and for each consumer warpgroup (its thread 0) its
// arrival at the full barrier, the barrier passed, its MMAs issued and the slot released; tp_trace_clock holds
// each block's globaltimer and clock at its start and end and its SM, to put the blocks on one time line
#ifdef TP_TRACE
#define TP_TRACE_CTAS 4
#define TP_TRACE_KT 512
#define TP_TRACE_EVENTS 10
__device__ long long tp_trace[TP_TRACE_CTAS][TP_TRACE_KT][TP_TRACE_EVENTS];
__device__ long long tp_trace_clock[TP_TRACE_CTAS][5];
#define TP_MARK(cond, ev, it)                                                  \
    do {                                                                       \
        if ((cond) && blockIdx.x < TP_TRACE_CTAS && (it) < TP_TRACE_KT)        \
            tp_trace[blockIdx.x][(it)][(ev)] = clock64();                      \
    } while (0)
#else
#define TP_MARK(cond, ev, it) \
    do {                      \
    } while (0)
#endif
enum { TR_FREE = 0, TR_ISSUED = 1, TR_READY = 2, TR_GOT = 3, TR_MMA = 4, TR_RELEASED = 5 };  // + 4 x consumer

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace tma_persistent {

// name<Op>::value: Op::MEMBER where the operand policy declares it, else DEFAULT (the optional members above)
#define TP_OPTIONAL_MEMBER(name, MEMBER, T, DEFAULT)                                 \
    template <class Op, class = void>                                               \
    struct name {                                                                   \
        static constexpr T value = DEFAULT;                                         \
    };                                                                              \
    template <class Op>                                                             \
    struct name<Op, decltype(void(Op::MEMBER))> {                                   \
        static constexpr T value = Op::MEMBER;                                      \
    };

// the product computed as C^T = B^T A^T (SWAP_AB above)
TP_OPTIONAL_MEMBER(swaps_ab, SWAP_AB, bool, false)

// A's residual split in the ring (SPLIT_A above)
TP_OPTIONAL_MEMBER(splits_a, SPLIT_A, bool, false)

// each tile's C stored under the next tile's first MMAs (FLUSH > 0 only: the MMAs write the partial, so
// the accumulator still holds the last tile while the next one's first group runs)
TP_OPTIONAL_MEMBER(defers_store, DEFER_STORE, bool, false)

// the parts a tile's C is stored in from a copy of its
// accumulator, one part after each of the next tile's first k-tiles' MMAs are issued, so C's writes trickle
// out under the MMAs instead of all of them at a tile's end (C from the registers only)
TP_OPTIONAL_MEMBER(spreads_store, SPREAD_STORE, int, 0)

// in a cluster, each CTA loads all of B itself
// (no multicast), its slots still released on every CTA's empty barrier: the clusters' lock-step without
// their shared loads, to tell the two apart
TP_OPTIONAL_MEMBER(skips_multicast, NO_MULTICAST, bool, false)

// C staged in the held slot of the tile's last k-tile as well (C_IN_SLOT above)
TP_OPTIONAL_MEMBER(stages_c_in_slot, C_IN_SLOT, bool, false)

// the partner's releases relayed by an idle producer warp (RELAY_RELEASE above)
TP_OPTIONAL_MEMBER(relays_release, RELAY_RELEASE, bool, false)

// how far past the empty barriers the relay barriers lie: STAGES where the policy relays, else 0 (no relay)
template <class Op, int STAGES>
__host__ __device__ constexpr int relay_stages()
{
    return relays_release<Op>::value ? STAGES : 0;
}

// the consumer warpgroups (CONSUMERS above)
TP_OPTIONAL_MEMBER(consumers, CONSUMERS, int, 2)

// the rows of one box of B (a stage's B is BN / B_BOX_ROWS
// of them, one after another: the same K-major swizzled operand whatever their height)
TP_OPTIONAL_MEMBER(b_box_rows, B_BOX_ROWS, int, 64)

// the rows of one box of A (BM / A_BOX_ROWS a part and stage;
// 128 rows of a 128-row tile in one box lie as two 64-row boxes do)
TP_OPTIONAL_MEMBER(a_box_rows, A_BOX_ROWS, int, 64)

// B as it lies in one rank-3 box a stage (B_ONE_BOX above)
TP_OPTIONAL_MEMBER(b_one_box, B_ONE_BOX, bool, false)

// the schedule: a cluster tile is CLUSTER row tiles stacked over one BN-column tile, numbered in
// grouped order (GROUP row tiles a group); cluster c takes tiles c, c + clusters, ...
template <int BM, int BN, int CLUSTER, int GROUP = GROUP_M>
struct Schedule {
    int grid_n, rows_c, tiles;
    __device__ __forceinline__ Schedule(int M, int N)
    {
        grid_n = (N + BN - 1) / BN;
        rows_c = ((M + BM - 1) / BM + CLUSTER - 1) / CLUSTER;
        tiles = rows_c * grid_n;
    }
    __device__ __forceinline__ void at(int t, unsigned rank, int& bm, int& bn) const
    {
        constexpr int G = GROUP / CLUSTER > 0 ? GROUP / CLUSTER : 1;
        const int in_group = G * grid_n, first = (t / in_group) * G;
        const int group_rows = min(rows_c - first, G);
        bm = ((first + (t % in_group) % group_rows) * CLUSTER + (int)rank) * BM;
        bn = ((t % in_group) / group_rows) * BN;
    }
};

// one stage of the tile at (bm, bn): arm the slot's full barrier with the bytes to come, then issue
// the boxes. Boxes wholly past M or N are not issued (they would only feed rows or columns of C that
// are never stored); a cluster's spare CTA past M loads no A. In a cluster each CTA loads its own A,
// and B's boxes, the same for every CTA of the cluster, are split between them, each multicast into
// every CTA; each CTA's barrier expects its A and all of B (a partner's box may land before this CTA
// armed the barrier: the phase cannot complete before this CTA's own arrival).
template <class Op, int BM, int CLUSTER>
__device__ __forceinline__ void issue_stage(const void* tmA, const void* tmB, int M, int N, int bm, int bn,
                                            unsigned slot, unsigned full, int kt, unsigned rank)
{
    constexpr bool SW = swaps_ab<Op>::value;
    static_assert(!SW || Op::PARTS == 1, "the swapped product loads one part of B");
    constexpr bool ONE = SW && b_one_box<Op>::value;  // BM / 32 chunks of 32 n in one box
    constexpr bool ONE_B = !SW && b_one_box<Op>::value;  // BN / 64 panels of 64 n in one box
    static_assert(!ONE_B || (!Op::B_KMAJOR && CLUSTER == 1 && Op::PARTS == 1), "one box of B as it lies, alone");
    constexpr int A_ROWS = ONE ? BM : SW ? 32 : a_box_rows<Op>::value, A_BOX = A_ROWS * 128;  // SW: 32 k x 32 n
    static_assert(BM % A_ROWS == 0, "a tile's A is whole boxes");
    const int k0 = kt * Op::BK;
    const int a_boxes = max(0, min(BM / A_ROWS, (M - bm + A_ROWS - 1) / A_ROWS));
    constexpr int BR = ONE_B ? Op::BN : b_box_rows<Op>::value, B_BOX = BR * 128;
    static_assert(Op::BN % BR == 0, "a tile's B is whole boxes");
    const int b_boxes = min(Op::BN / BR, (N - bn + BR - 1) / BR);
#ifdef PLANT_SHORT_TX  // a planted bug for the GPU tests: the barrier waits for 16 bytes that never come
    mbar_arrive_expect_tx(full, Op::PARTS * (a_boxes * A_BOX + b_boxes * B_BOX) + 16);
#else
    mbar_arrive_expect_tx(full, Op::PARTS * (a_boxes * A_BOX + b_boxes * B_BOX));
#endif
#pragma unroll
    for (int p = 0; p < Op::PARTS; p++)
        for (int w = 0; w < a_boxes; w++) {
            if constexpr (ONE)
                tma_load_3d(slot, tmA, 0, k0, bm / 32, full);
            else if constexpr (SW)
                tma_load_2d(slot + w * A_BOX, tmA, bm + 32 * w, k0, full);
            else
                tma_load_2d(slot + (p * (BM / A_ROWS) + w) * A_BOX, tmA, k0, p * M + bm + A_ROWS * w, full);
        }
    const unsigned sb = slot + Op::PARTS * BM * 128;
    constexpr int SHARE = skips_multicast<Op>::value ? 1 : CLUSTER;  // CTAs that split B's boxes
#pragma unroll
    for (int p = 0; p < Op::PARTS; p++) {
        for (int q = SHARE > 1 ? (int)rank : 0; q < b_boxes; q += SHARE) {
            const unsigned dst = sb + (p * (Op::BN / BR) + q) * B_BOX;
            const int c0 = Op::B_KMAJOR ? k0 : bn + BR * q, c1 = Op::B_KMAJOR ? p * N + bn + BR * q : k0;
            if constexpr (ONE_B)
                tma_load_3d(dst, tmB, 0, k0, bn / 64, full);
            else if constexpr (SHARE > 1)
                tma_load_2d_multicast(dst, tmB, c0, c1, full, (unsigned short)((1u << CLUSTER) - 1));
            else
                tma_load_2d(dst, tmB, c0, c1, full);
        }
    }
}

// the threads that release a consumer warpgroup's slots: lane 0 of warps 0 .. CLUSTER - 1, one arrival each
template <int CLUSTER>
__device__ __forceinline__ bool releases_slots()
{
    const int t = threadIdx.x % 128;
    return t % 32 == 0 && t / 32 < CLUSTER;
}

// a consumer warpgroup's release of a slot, by each of its releases_slots threads: warp w on the empty barrier of
// the cluster's CTA w (its own through the local form), so no warp waits behind a remote arrival for the next;
// RELAY > 0 (RELAY_RELEASE): the partner's arrival goes to the local relay barrier RELAY barriers further on
template <int CLUSTER, int RELAY = 0>
__device__ __forceinline__ void release(unsigned empty)
{
    if constexpr (CLUSTER == 1) {
        mbar_arrive(empty);
    } else {
        const unsigned c = (threadIdx.x % 128) / 32;
        if (c == cluster_ctarank())
            mbar_arrive(empty);
        else if constexpr (RELAY > 0)
            mbar_arrive(empty + 8 * RELAY);
        else
            mbar_arrive_cluster(empty, c);
    }
}

// RELAY_RELEASE: warp 1 of the producer warpgroup (its lane 0) follows the ring through the CTA's `kts` k-tiles:
// once both local consumers released a slot (its relay barrier), one arrival on the partner's empty barrier
template <int STAGES>
__device__ __forceinline__ void relay_ring(unsigned bars, int kts, unsigned partner)
{
    for (int it = 0; it < kts; it++) {
        const int s = it % STAGES;
        if (!mbar_wait_bounded(bars + 8 * (2 * STAGES + s), (it / STAGES) & 1)) return;
        mbar_arrive_cluster(bars + 8 * (STAGES + s), partner);
    }
}

// the producer warpgroup's threads with work: the producer thread, and the helper warps of SPLIT_A or the relay
template <class Op>
__device__ __forceinline__ bool producer_works(int tid)
{
    if constexpr (splits_a<Op>::value) return tid == 0 || (tid >= 32 && tid < 32 * (1 + Op::SPLIT_WARPS));
    return tid == 0 || (relays_release<Op>::value && tid == 32);
}

// a consumer warpgroup's 128 threads meet (named barrier 1 + cw; 0 is __syncthreads)
__device__ __forceinline__ void warpgroup_sync(int cw)
{
    if (cw == 0)
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
    else
        asm volatile("bar.sync 2, 128;\n" ::: "memory");
}

// box bx (64 rows x 32 columns) of a consumer warpgroup's accumulators into the buffer at `buf`, swizzled
// as below (bx is a constant wherever this is unrolled)
template <int NACC>
__device__ __forceinline__ void write_c_box(const float (&acc)[NACC], unsigned buf, int bx)
{
    const int lane = threadIdx.x % 32, w = (threadIdx.x % 128) / 32;
#pragma unroll
    for (int jj = 0; jj < 4; jj++) {
        const int j = 4 * bx + jj;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = 16 * w + lane / 4 + 8 * h, byte = (8 * jj + 2 * (lane % 4)) * 4;
            const unsigned at = buf + r * 128 + ((((byte >> 4) ^ (r & 7)) << 4) | (byte & 15));
            asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(acc[4 * j + 2 * h]),
                         "f"(acc[4 * j + 2 * h + 1])
                         : "memory");
        }
    }
}

// The epilogue through shared memory: a consumer warpgroup's 64 x (4 NACC / 2) FP32 accumulators leave
// as TMA stores of 64 x 32 boxes (one 128-byte row each, 128-byte swizzle: chunk c of row r at
// c ^ (r & 7), so the 8 rows a warp writes at once fall in different banks), through CBUFS 8 KB
// buffers in turn (where there is one for every box: all written, then one barrier); only thread 0 of
// the warpgroup issues and waits on its bulk groups. The warpgroup goes on to the next tile as soon as
// its last box is issued, so C's writes to memory overlap the next tile's products; the more boxes
// staged, the fewer wait for a store to have left its buffer while the tensor cores idle. Rows past M
// and columns past N are clipped by TMA itself.
// SLOT_BUFS > 0 (C_IN_SLOT below): the first SLOT_BUFS buffers lie in the ring slot of the tile's last k-tile, which
// the consumers hold through the epilogue: this warpgroup's box of A, then SLOT_BUFS - 1 boxes of the slot's B
// (consumer cw's share of them; both consumers' MMAs have retired: the caller met the other warpgroup first).
template <int NACC, int CBUFS = 2, int SLOT_BUFS = 0>
__device__ __forceinline__ void store_acc_tma(const float (&acc)[NACC], const void* tmC, unsigned bufs, int row0,
                                              int bn, int N, int cw, unsigned slot = 0)
{
    constexpr int BOXES = NACC / 16, NBUF = CBUFS + SLOT_BUFS;
    static_assert(CBUFS >= 2 && NBUF <= BOXES, "C is staged in 2 to all of a warpgroup's boxes");
    const auto buf_at = [&](int b) -> unsigned {
        if (b >= SLOT_BUFS) return bufs + (b - SLOT_BUFS) * TP_C_BOX_BYTES;
        return slot + (b == 0 ? cw : 2 + (SLOT_BUFS - 1) * cw + b - 1) * TP_C_BOX_BYTES;
    };
    const bool leader = threadIdx.x % 128 == 0;
    const auto issue = [&](int bx, unsigned buf) {
        if (bn + 32 * bx < N) tma_store_2d(tmC, buf, bn + 32 * bx, row0);
        bulk_commit();  // a group for every box, stored or not: the waits below count groups
    };
    if (leader) bulk_wait_read<0>();  // the last tile's boxes have left every buffer
    warpgroup_sync(cw);
    if constexpr (NBUF == BOXES) {
        // a buffer for every box: no store has to leave early to free one, so one barrier for all
#pragma unroll
        for (int bx = 0; bx < BOXES; bx++) write_c_box<NACC>(acc, buf_at(bx), bx);
        fence_proxy_async();  // the generic-proxy writes, visible to TMA
        warpgroup_sync(cw);
        if (leader) {
#pragma unroll
            for (int bx = 0; bx < BOXES; bx++) issue(bx, buf_at(bx));
        }
    } else {
#pragma unroll
        for (int bx = 0; bx < BOXES; bx++) {
            const unsigned buf = buf_at(bx % NBUF);
            if (bx >= NBUF) {  // this buffer's previous box (bx - NBUF) has been read; later ones may not be
                if (leader) bulk_wait_read<NBUF - 1>();
                warpgroup_sync(cw);
            }
            write_c_box<NACC>(acc, buf, bx);
            fence_proxy_async();  // the generic-proxy writes, visible to TMA
            warpgroup_sync(cw);
            if (leader) issue(bx, buf);
        }
    }
}

// a flush of the partial accumulator: added to acc, or (the deferred store's first flush of a tile) acc set to it
template <int N>
__device__ __forceinline__ void flush_part(float (&acc)[N], const float (&part)[N], bool set)
{
    if (set) {
#pragma unroll
        for (int e = 0; e < N; e++) acc[e] = part[e];
    } else {
#pragma unroll
        for (int e = 0; e < N; e++) acc[e] += part[e];
    }
}

// a consumer warpgroup's k-tiles of one tile; false if a wait timed out. `it` runs on across tiles.
// pending(kt) runs once each k-tile's MMAs are issued, before the wait for them: the deferred or spread
// store of the last tile's C (a no-op otherwise). DEFER_STORE (FLUSH > 0): acc comes in holding the last
// tile, which pending(0) stores, so C's epilogue runs while the first MMAs do; the first group's flush
// then sets acc instead of adding to it. A wait that times out before that leaves the last tile unstored.
template <class Op, int CLUSTER, int STAGES, int STAGE_BYTES, int BM, class Pending>
__device__ __forceinline__ bool consume_tile(float (&acc)[Op::NACC], unsigned base, unsigned bars, int KT, int& it,
                                             int cw, bool signals, Pending&& pending)
{
    constexpr int NACC = Op::NACC;
    constexpr bool DEFER = defers_store<Op>::value;
    static_assert(!DEFER || Op::FLUSH > 0, "the deferred store needs the MMAs to write the partial");
    constexpr int RS = relay_stages<Op, STAGES>();
    const auto full = [&](int s) { return bars + 8 * s; };
    const auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
    [[maybe_unused]] const bool lead = threadIdx.x % 128 == 0 && cw < 2;
    [[maybe_unused]] const int ev = 4 * cw;  // this consumer's trace events (TP_TRACE)
    const unsigned a_off = cw * 64 * 128, b_off = Op::PARTS * BM * 128;
    if constexpr (!DEFER) {
#pragma unroll
        for (int e = 0; e < NACC; e++) acc[e] = 0.0f;
    }
    float part[Op::FLUSH ? NACC : 1];  // a group's first MMA overwrites it; zeroed so no register starts undefined
#pragma unroll
    for (int e = 0; e < (Op::FLUSH ? NACC : 1); e++) part[e] = 0.0f;
    bool ok = true;
    for (int kt = 0; kt < KT; kt++, it++) {
        const int s = it % STAGES;
        TP_MARK(lead, ev + TR_READY, it);
        if (!(ok = mbar_wait_bounded(full(s), (it / STAGES) & 1))) break;
        TP_MARK(lead, ev + TR_GOT, it);
        const unsigned slot = base + s * STAGE_BYTES;
        if constexpr (Op::FLUSH == 0) {
            fence_acc(acc);
            wgmma_fence();
            Op::mma(acc, slot + a_off, slot + b_off, 1);
            wgmma_commit();
            TP_MARK(lead, ev + TR_MMA, it);
            pending(kt);
            wgmma_wait<1>();  // tile kt - 1's products are done: its slot may be refilled
            fence_acc(acc);
        } else if constexpr (Op::FLUSH == 1) {
            // every k-tile flushed: its own wait retires it, so its slot goes back at once
            fence_acc(part);
            wgmma_fence();
            Op::mma(part, slot + a_off, slot + b_off, 0);
            wgmma_commit();
            TP_MARK(lead, ev + TR_MMA, it);
            pending(kt);
            wgmma_wait<0>();
            fence_acc(part);
            if (signals) release<CLUSTER, RS>(empty(s));
            TP_MARK(lead, ev + TR_RELEASED, it);
#ifndef TP_SKIP_PROMOTION  // measuring the FP32 adds' share of the time: never a rung (C is left zero)
            flush_part(acc, part, DEFER && kt == 0);
#endif
            continue;
        } else {
            // one flush per group: the group's last wait retires everything (the release pattern stays
            // that of the chain above, one k-tile late, so ptxas can pair every wait with its wgmma)
            const bool first = kt % Op::FLUSH == 0, last = kt == KT - 1 || (kt + 1) % Op::FLUSH == 0;
            fence_acc(part);
            wgmma_fence();
            Op::mma(part, slot + a_off, slot + b_off, !first);
            wgmma_commit();
            TP_MARK(lead, ev + TR_MMA, it);
            pending(kt);
            if (last) {
                wgmma_wait<0>();
                fence_acc(part);
                flush_part(acc, part, DEFER && kt < Op::FLUSH);
            } else {
                wgmma_wait<1>();
                fence_acc(part);
            }
        }
        if (kt > 0 && signals) release<CLUSTER, RS>(empty((it - 1) % STAGES));
        if (kt > 0) TP_MARK(lead, ev + TR_RELEASED, it - 1);
    }
    wgmma_wait<0>();  // also where a wait timed out: no MMA may still own the registers
    fence_acc(acc);
    fence_acc(part);
    if (!ok) return false;
    if constexpr (stages_c_in_slot<Op>::value) return true;  // the caller holds the last slot through its epilogue
    if (Op::FLUSH != 1 && signals) release<CLUSTER, RS>(empty((it - 1) % STAGES));
    if (Op::FLUSH != 1) TP_MARK(lead, ev + TR_RELEASED, it - 1);
    return true;
}

// consume_tile for FLUSH < 0: groups of -FLUSH k-tiles, overlapped (include/overlap.cuh); the ring's
// k-tile count `it` runs on as there, the slots released one k-tile late
template <class Op, int CLUSTER, int STAGES, int STAGE_BYTES, int BM>
__device__ __forceinline__ bool consume_tile_overlap(float (&acc)[Op::NACC], unsigned base, unsigned bars, int KT,
                                                     int& it, int cw, bool signals)
{
    const unsigned a_off = cw * 64 * 128, b_off = Op::PARTS * BM * 128;
    constexpr int RS = relay_stages<Op, STAGES>();
    const int it0 = it;
    it += KT;
    return overlap::run<Op::NACC, -Op::FLUSH>(
        acc, KT,
        [&](int kt, bool& ok) {
            const int s = (it0 + kt) % STAGES;
            ok = ok && mbar_wait_bounded(bars + 8 * s, ((it0 + kt) / STAGES) & 1);
            return base + s * STAGE_BYTES;
        },
        [&](float (&d)[Op::NACC], unsigned slot, int accumulate) { Op::mma(d, slot + a_off, slot + b_off, accumulate); },
        [&](int kt) {
            if (signals) release<CLUSTER, RS>(bars + 8 * (STAGES + (it0 + kt) % STAGES));
        });
}

// store_acc_tma for the swapped product: the warpgroup holds 64 columns (from n0) x 4 NACC / 2 rows
// (from m0) of C, transposed (store_wgmma_acc_t's mapping). C's 64 x 32 boxes go out a 64-row block
// at a time: its two boxes (columns n0.., n0 + 32..), one in each buffer, warps 0-1 writing the first
// and 2-3 the second; a row of a box is 128 bytes of one row of C, 128-byte swizzled, so of the 4 rows a
// warp's v2 store spans, two fall in each bank half: the minimum 2 wavefronts.
template <int NACC>
__device__ __forceinline__ void store_acc_tma_t(const float (&acc)[NACC], const void* tmC, unsigned bufs, int n0,
                                                int m0, int M, int N, int cw)
{
    const int lane = threadIdx.x % 32, w = (threadIdx.x % 128) / 32;
    const bool leader = threadIdx.x % 128 == 0;
    const unsigned buf = bufs + (w >> 1) * TP_C_BOX_BYTES;
    const int byte = 64 * (w & 1) + 8 * (lane / 4);
#pragma unroll
    for (int mb = 0; mb < NACC / 32; mb++) {
        if (leader) bulk_wait_read<0>();  // both buffers read (the last tile's boxes too)
        warpgroup_sync(cw);
#pragma unroll
        for (int jj = 0; jj < 8; jj++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int r = 8 * jj + 2 * (lane % 4) + e, j = 8 * mb + jj;
                const unsigned at = buf + r * 128 + ((((byte >> 4) ^ (r & 7)) << 4) | (byte & 15));
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(acc[4 * j + e]),
                             "f"(acc[4 * j + 2 + e])
                             : "memory");
            }
        }
        fence_proxy_async();
        warpgroup_sync(cw);
        if (leader) {
            if (m0 + 64 * mb < M) {
                if (n0 < N) tma_store_2d(tmC, bufs, n0, m0 + 64 * mb);
                if (n0 + 32 < N) tma_store_2d(tmC, bufs + TP_C_BOX_BYTES, n0 + 32, m0 + 64 * mb);
            }
            bulk_commit();
        }
    }
}

// The operand fragments of one k-tile for the swapped product: the warpgroup's 64 rows of B^T (= 64
// columns of B: two 32 k x 32 n boxes of the stage, from `box`) as 4 k8 steps x 4 registers. D's row
// g of a warp holds column 2g of its 16, row g + 8 column 2g + 1, so a[0], a[1] (and a[2], a[3]) are
// one 8-byte load. A warp's load spans 4 k-rows whose swizzle XOR (row & 7) must fill both bank halves:
// rows t and t + 4 differ in the half, so lanes with odd t load row t + 4 first.
__device__ __forceinline__ void load_bt_fragments(unsigned (&f)[16], unsigned box)
{
    const int lane = threadIdx.x % 32, w = (threadIdx.x % 128) / 32, g = lane / 4, t = lane % 4;
    const unsigned base = box + (w >> 1) * (TP_BOX_BYTES / 2);
    const int chunk = 4 * (w & 1) + g / 2, lo = 8 * (g & 1);
    const bool odd = t & 1;
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
        unsigned x[2], y[2];
        const int r0 = 8 * kk + t + (odd ? 4 : 0), r1 = 8 * kk + t + (odd ? 0 : 4);
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                     : "=r"(x[0]), "=r"(x[1])
                     : "r"(base + r0 * 128 + (((chunk ^ (r0 & 7)) << 4) | lo)));
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                     : "=r"(y[0]), "=r"(y[1])
                     : "r"(base + r1 * 128 + (((chunk ^ (r1 & 7)) << 4) | lo)));
        f[4 * kk + 0] = odd ? y[0] : x[0];
        f[4 * kk + 1] = odd ? y[1] : x[1];
        f[4 * kk + 2] = odd ? x[0] : y[0];
        f[4 * kk + 3] = odd ? x[1] : y[1];
    }
}

// consume_tile for the swapped product (chain accumulation, as FLUSH 0): each k-tile's fragments are
// loaded while the previous k-tile's MMAs run, into the other of two register sets, which the wait
// that retires those MMAs frees (fence_regs keeps each set alive, unmoved, until that wait).
template <class Op, int CLUSTER, int STAGES, int STAGE_BYTES, int BM>
__device__ __forceinline__ bool consume_tile_swapped(float (&acc)[Op::NACC], unsigned base, unsigned bars, int KT,
                                                     int& it, int cw, bool signals)
{
    const unsigned a_off = cw * 64 * 128, b_off = BM * 128;
    unsigned fa[16], fb[16];
#pragma unroll
    for (int e = 0; e < 16; e++) fa[e] = fb[e] = 0u;
    bool ok = true;
    const auto step = [&](unsigned (&cur)[16], unsigned (&prev)[16], int kt) {
        const int s = it % STAGES;
        if (!(ok = mbar_wait_bounded(bars + 8 * s, (it / STAGES) & 1))) return false;
        const unsigned slot = base + s * STAGE_BYTES;
        load_bt_fragments(cur, slot + a_off);
        fence_regs(cur);
        fence_acc(acc);
        wgmma_fence();
        Op::mma(acc, cur, slot + b_off, kt > 0);  // the first k-tile starts the accumulator (no zeroing:
                                                  // that would be a write ptxas sees under the last tile's MMAs)
        wgmma_commit();
        wgmma_wait<1>();  // k-tile kt - 1's MMAs are done: its slot and its registers are free
        fence_acc(acc);
        fence_regs(prev);
        if (kt > 0 && signals) release<CLUSTER>(bars + 8 * (STAGES + (it - 1) % STAGES));
        it++;
        return true;
    };
    // pairs, then an odd k-tile apart: a path skipping the second step back to the first would
    // rewrite fa under its own MMAs, and ptxas would serialise every wgmma for it
    int kt = 0;
    for (; kt + 1 < KT; kt += 2)
        if (!step(fa, fb, kt) || !step(fb, fa, kt + 1)) break;
    if (ok && kt < KT) step(fa, fb, kt);
    wgmma_wait<0>();
    fence_acc(acc);
    fence_regs(fa);
    fence_regs(fb);
    if (!ok) return false;
    if (signals) release<CLUSTER>(bars + 8 * (STAGES + (it - 1) % STAGES));
    return true;
}

// SPLIT_A: one stage's A tile (BYTES of FP32, as TMA left it) split by the producer warpgroup's warps 1 ..
// Op::SPLIT_WARPS (j: the thread's index among them). Element-wise, so the residual goes to the same
// offset in its buffer and the same descriptors read both parts (the swizzle is a function of the
// offset); the high part stays as staged unless Op::REWRITE_A. Each warp's 16-byte accesses cover 512
// consecutive bytes: 4 wavefronts, the least; a thread's loads of a batch are in flight together.
template <class Op, int BYTES>
__device__ __forceinline__ void split_a_tile(unsigned a, unsigned r, int j)
{
    constexpr int THREADS = 32 * Op::SPLIT_WARPS, PER = BYTES / 16 / THREADS, BATCH = 4;
    static_assert(BYTES % (16 * THREADS) == 0 && PER % BATCH == 0, "whole batches of 16-byte chunks a thread");
#pragma unroll
    for (int i0 = 0; i0 < PER; i0 += BATCH) {
        unsigned x[BATCH][4];
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const unsigned at = a + 16 * (j + THREADS * (i0 + b));
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(x[b][0]), "=r"(x[b][1]), "=r"(x[b][2]), "=r"(x[b][3])
                         : "r"(at)
                         : "memory");
        }
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const unsigned at = 16 * (j + THREADS * (i0 + b));
            unsigned small[4];
            Op::split_a(x[b], small);
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(r + at), "r"(small[0]), "r"(small[1]),
                         "r"(small[2]), "r"(small[3])
                         : "memory");
            if constexpr (Op::REWRITE_A)
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a + at), "r"(x[b][0]), "r"(x[b][1]),
                             "r"(x[b][2]), "r"(x[b][3])
                             : "memory");
        }
    }
}

// SPLIT_A: the splitting warps follow the ring through this CTA's `kts` k-tiles (ready: the third set of
// barriers, one arrival a warp). A stage's boxes have landed (its full barrier), its A is split, every
// thread fences its generic-proxy writes for the async proxy that wgmma reads through, and the warp's
// first lane arrives once the warp has met. The residual buffer is the stage's own: the producer refills
// a stage only after both consumers released it, so no split can overwrite a residual still being read.
template <class Op, int STAGES, int STAGE_BYTES, int BM>
__device__ __forceinline__ void split_a_ring(unsigned base, unsigned bars, int kts)
{
    const int j = threadIdx.x - 32, lane = threadIdx.x % 32;
    for (int it = 0; it < kts; it++) {
        const int s = it % STAGES;
        if (!mbar_wait_bounded(bars + 8 * s, (it / STAGES) & 1)) return;
        const unsigned a = base + s * STAGE_BYTES + BM * 128;
        split_a_tile<Op, Op::BN * 128>(a, a + Op::BN * 128, j);
        fence_proxy_async();
        __syncwarp();
        if (lane == 0) mbar_arrive(bars + 8 * (2 * STAGES + s));
    }
}

// consume_tile_swapped for SPLIT_A: a k-tile waits for its stage's residual too (the ready barrier),
// splits its B^T fragments in registers (f[0..15] the high parts, f[16..31] the residuals) and sums its
// products from zero in a partial accumulator, added to acc with FP32 adds after FLUSH k-tiles. Every
// k-tile's own wait retires it, so its slot goes back at once and one register set serves: with acc and
// the partial (128 registers) a second set, to load a k-tile under the last one's MMAs, spills even at
// 240 registers. The other consumer warpgroup's MMAs keep the tensor cores busy meanwhile.
template <class Op, int CLUSTER, int STAGES, int STAGE_BYTES, int BM>
__device__ __forceinline__ bool consume_tile_split(float (&acc)[Op::NACC], unsigned base, unsigned bars, int KT,
                                                   int& it, int cw, bool signals)
{
    constexpr int NACC = Op::NACC, F = Op::FLUSH;
    static_assert(F >= 1, "the split products are summed in a partial accumulator");
    const unsigned f_off = cw * 64 * 128, a_off = BM * 128, r_off = a_off + Op::BN * 128;
#pragma unroll
    for (int e = 0; e < NACC; e++) acc[e] = 0.0f;
    float part[NACC];  // a group's first MMA overwrites it; zeroed so no register starts undefined
#pragma unroll
    for (int e = 0; e < NACC; e++) part[e] = 0.0f;
    unsigned f[32];
    bool ok = true;
    for (int kt = 0; kt < KT; kt++, it++) {
        const int s = it % STAGES;
        const unsigned parity = (it / STAGES) & 1;
        if (!(ok = mbar_wait_bounded(bars + 8 * s, parity) && mbar_wait_bounded(bars + 8 * (2 * STAGES + s), parity)))
            break;
        const unsigned slot = base + s * STAGE_BYTES;
        load_bt_fragments(*reinterpret_cast<unsigned(*)[16]>(&f[0]), slot + f_off);
#pragma unroll
        for (int e = 0; e < 16; e++) Op::split_b(f[e], f[16 + e]);
        fence_regs(f);
        fence_acc(part);
        wgmma_fence();
        Op::mma(part, f, slot + a_off, slot + r_off, kt % F != 0);
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(part);
        fence_regs(f);
        if (signals) release<CLUSTER>(bars + 8 * (STAGES + s));
        if (kt == KT - 1 || (kt + 1) % F == 0) {
#pragma unroll
            for (int e = 0; e < NACC; e++) acc[e] += part[e];
        }
    }
    return ok;
}

// one producer warpgroup (warpgroup 0) + CONSUMERS consumer warpgroups (each 64 rows of the tile, 2 unless the
// policy says); registers move from the producer (PRODUCER_REGS) to the consumers (CONSUMER_REGS): setmaxnreg.inc
// blocks until the block's pool has them, so 128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) must fit it.
// GROUP: row tiles a group of the tile order (how many tiles of A and of B the SMs share at once);
// CBUFS: C boxes each consumer stages in the TMA-store epilogue (TP_STORE_SMEM_BUFS)
template <class Op, int CLUSTER, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS, bool TMA_STORE, int GROUP = GROUP_M,
          int CBUFS = 2>
__device__ __forceinline__ void body(const void* tmA, const void* tmB, float* C, int M, int N, int K)
{
    constexpr int CONSUMERS = consumers<Op>::value, BM = 64 * CONSUMERS;
    static_assert(CONSUMERS == 2 || (CONSUMERS == 3 && !TMA_STORE), "2 consumers, or 3 storing C from the registers");
    constexpr bool SPLIT = splits_a<Op>::value;  // SPLIT_A: + A's residual a stage, + its ready barrier
    constexpr int STAGE_BYTES = (Op::PARTS * (BM + Op::BN) + (SPLIT ? Op::BN : 0)) * 128;
    // setmaxnreg moves registers within what the block got at launch (65536 / threads a thread, rounded down to 8):
    // asking for more leaves setmaxnreg.inc blocked for good, a hang no bounded wait catches (24 + 2 x 240 fits 384
    // threads' 168 each; 32 + 2 x 240 does not)
    constexpr int THREADS = 128 * (1 + CONSUMERS), LAUNCH_REGS = (65536 / THREADS) & ~7;
    static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= THREADS * LAUNCH_REGS,
                  "more registers than the block holds at launch");
    extern __shared__ __align__(1024) unsigned char tp_smem[];
    constexpr bool HOLD = stages_c_in_slot<Op>::value;  // + the consumers' meeting barrier before C enters the slot
    static_assert(!HOLD || (TMA_STORE && CLUSTER == 1 && !SPLIT && !swaps_ab<Op>::value && Op::FLUSH == 0 &&
                            CONSUMERS == 2 && Op::PARTS == 1), "C in the slot: the plain TMA-store chain");
    constexpr bool RELAY = relays_release<Op>::value;  // + a relay barrier a stage
    static_assert(!RELAY || (CLUSTER == 2 && !SPLIT && !HOLD && !swaps_ab<Op>::value),
                  "the relayed release: 2-CTA clusters of the plain or overlapped body");
    __shared__ __align__(8) unsigned long long bars[(SPLIT || RELAY ? 3 : 2) * STAGES + (HOLD ? 1 : 0)];
    const unsigned base = (smem_u32(tp_smem) + 1023u) & ~1023u, bar0 = smem_u32(bars);
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            mbar_init(bar0 + 8 * s, 1);
            mbar_init(bar0 + 8 * (STAGES + s), RELAY ? CONSUMERS + 1 : CONSUMERS * CLUSTER);
            if constexpr (SPLIT) mbar_init(bar0 + 8 * (2 * STAGES + s), Op::SPLIT_WARPS);
            if constexpr (RELAY) mbar_init(bar0 + 8 * (2 * STAGES + s), CONSUMERS);
        }
        if constexpr (HOLD) mbar_init(bar0 + 8 * (2 * STAGES), CONSUMERS);  // each consumer's MMAs of a tile retired
        mbar_init_fence();
    }
    const unsigned rank = CLUSTER > 1 ? cluster_ctarank() : 0u;
    if (CLUSTER > 1) cluster_sync(); else __syncthreads();
#ifdef TP_TRACE
    if (tid == 0 && blockIdx.x < TP_TRACE_CTAS) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
        tp_trace_clock[blockIdx.x][0] = (long long)global_ns();
        tp_trace_clock[blockIdx.x][1] = clock64();
        tp_trace_clock[blockIdx.x][4] = sm;
    }
#endif
    // SWAP_AB: the tile's rows are C's columns; issue_stage and the schedule see the swapped problem
    constexpr bool SW = swaps_ab<Op>::value;
    static_assert(!SPLIT || SW, "the split product is the swapped one");
    const int Mr = SW ? N : M, Nr = SW ? M : N;
    const void* tmR = SW ? tmB : tmA;
    const void* tmS = SW ? tmA : tmB;
    const Schedule<BM, Op::BN, CLUSTER, GROUP> sch(Mr, Nr);
    const int first = CLUSTER > 1 ? (int)cluster_id_x() : (int)blockIdx.x;
    const int stride = CLUSTER > 1 ? (int)cluster_count_x() : (int)gridDim.x;
    const int KT = (K + Op::BK - 1) / Op::BK;

    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
#ifndef TP_IDLE_WAIT  // the idle threads kept to the closing cluster barrier: never a rung (scripts/dev A/B)
        // in a cluster the producer warpgroup's idle threads leave now, as they do alone: an exited thread does not
        // hold up barrier.cluster, and waiting at it for the whole kernel they slow the warps that share their SMs'
        // schedulers (warp 0's other 31 lanes beside the producer thread among them)
        if constexpr (CLUSTER > 1)
            if (!producer_works<Op>(tid)) return;
#endif
        if (tid == 0) {
            tensormap_acquire(tmR);
            tensormap_acquire(tmS);
            int it = 0;
            bool ok = true;
            for (int tile = first; ok && tile < sch.tiles; tile += stride) {
                int bm, bn;
                sch.at(tile, rank, bm, bn);
                for (int kt = 0; kt < KT; kt++, it++) {
                    const int s = it % STAGES;
                    if (it >= STAGES && !(ok = mbar_wait_bounded(bar0 + 8 * (STAGES + s), (it / STAGES - 1) & 1))) break;
                    TP_MARK(true, TR_FREE, it);
                    issue_stage<Op, BM, CLUSTER>(tmR, tmS, Mr, Nr, bm, bn, base + s * STAGE_BYTES, bar0 + 8 * s, kt, rank);
                    TP_MARK(true, TR_ISSUED, it);
                }
            }
            // leave no copy in flight behind this thread: the last stages issued have landed
            for (int j = max(0, it - STAGES); ok && j < it; j++) ok = mbar_wait_bounded(bar0 + 8 * (j % STAGES), (j / STAGES) & 1);
        } else if constexpr (SPLIT || RELAY) {
            // the producer warpgroup's helper warps follow the ring through the CTA's k-tiles
            const int kts = first < sch.tiles ? ((sch.tiles - 1 - first) / stride + 1) * KT : 0;
            if constexpr (SPLIT) {
                if (tid >= 32 && tid < 32 * (1 + Op::SPLIT_WARPS)) split_a_ring<Op, STAGES, STAGE_BYTES, BM>(base, bar0, kts);
            } else {
                if (tid == 32) relay_ring<STAGES>(bar0, kts, rank ^ 1u);
            }
        }
    } else {
        setmaxnreg_inc<CONSUMER_REGS>();
        const int cw = wg - 1;
        const bool leader = tid % 128 == 0, signals = releases_slots<CLUSTER>();
        const bool c_by_tma = TMA_STORE && N % 4 == 0 && (reinterpret_cast<size_t>(C) & 15) == 0;
        const void* tmC = static_cast<const char*>(tmB) + 128;
        const unsigned cbufs = base + STAGES * STAGE_BYTES + cw * CBUFS * TP_C_BOX_BYTES;
        if (c_by_tma && leader) tensormap_acquire(tmC);
        // C's epilogue of the tile at (bm, bn)
        const auto store_tile = [&](const float(&acc)[Op::NACC], int bm, int bn) {
#ifndef TMA_SKIP_C_STORE  // measuring the epilogue's share of the time: never a rung (C is left unwritten)
            if constexpr (SW) {
                if (bm + cw * 64 >= N) {
                } else if (TMA_STORE && c_by_tma) {
                    store_acc_tma_t<Op::NACC>(acc, tmC, cbufs, bm + cw * 64, bn, M, N, cw);
                } else {
                    store_wgmma_acc_t(acc, C, M, N, bm + cw * 64, bn);
                }
            } else if (TMA_STORE && c_by_tma) {
                if (bm + cw * 64 < M) store_acc_tma<Op::NACC, CBUFS>(acc, tmC, cbufs, bm + cw * 64, bn, N, cw);
            } else {
                store_wgmma_acc(acc, C, M, N, bm + cw * 64, bn);
            }
#else
            if (acc[0] == 12345.678f) C[0] = acc[1];  // keeps the products from being optimised away
#endif
        };
        int it = 0;
        if constexpr (defers_store<Op>::value) {
            // each tile's C leaves under the next tile's first MMAs; the last tile's after the loop
            static_assert(!SW && !SPLIT && Op::FLUSH > 0, "the deferred store is for the flushed, unswapped body");
            float acc[Op::NACC];
#pragma unroll
            for (int e = 0; e < Op::NACC; e++) acc[e] = 0.0f;
            int pbm = -1, pbn = 0;
            bool ok = true;
            for (int tile = first; tile < sch.tiles; tile += stride) {
                int bm, bn;
                sch.at(tile, rank, bm, bn);
                if (!(ok = consume_tile<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals,
                                                                              [&](int kt) {
                                                                                  if (kt == 0 && pbm >= 0)
                                                                                      store_tile(acc, pbm, pbn);
                                                                              })))
                    break;
                pbm = bm;
                pbn = bn;
            }
            if (ok && pbm >= 0) store_tile(acc, pbm, pbn);
        } else if constexpr (spreads_store<Op>::value > 0) {
            // each tile's C leaves from a copy (old), a part after each of the next tile's first k-tiles' MMAs
            // are issued; the parts the next tile has no k-tile for (KT < PARTS_C), and the last tile's, after it
            constexpr int PARTS_C = spreads_store<Op>::value;
            static_assert(!TMA_STORE && !SW && !SPLIT && Op::FLUSH >= 0, "the spread store: plain tiles, C from registers");
            float acc[Op::NACC], old[Op::NACC];
#pragma unroll
            for (int e = 0; e < Op::NACC; e++) old[e] = 0.0f;
            int pbm = -1, pbn = 0;
            bool ok = true;
            const auto store_part = [&](int part) {
                store_wgmma_acc_part<Op::NACC, PARTS_C>(old, C, M, N, pbm + cw * 64, pbn, part);
            };
            const auto pending = [&](int kt) {
                if (kt < PARTS_C && pbm >= 0) store_part(kt);
            };
            for (int tile = first; tile < sch.tiles; tile += stride) {
                int bm, bn;
                sch.at(tile, rank, bm, bn);
                if (!(ok = consume_tile<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals,
                                                                              pending)))
                    break;
                if (pbm >= 0)
                    for (int part = KT; part < PARTS_C; part++) store_part(part);
#pragma unroll
                for (int e = 0; e < Op::NACC; e++) old[e] = acc[e];
                pbm = bm;
                pbn = bn;
            }
            if (ok && pbm >= 0)
                for (int part = 0; part < PARTS_C; part++) store_part(part);
        } else if constexpr (HOLD) {
            // the slot of each tile's last k-tile stays this consumer's until the next tile's first MMAs are issued
            // (or the end): C is staged in it (store_acc_tma's SLOT_BUFS), and it goes back once those boxes are read
            constexpr int SLOT_BUFS = 1 + (STAGE_BYTES / TP_C_BOX_BYTES - CONSUMERS) / CONSUMERS;
            const unsigned meet = bar0 + 8 * (2 * STAGES);
            int held = -1, tiles_done = 0;
            const auto give_back = [&] {
                if (held >= 0) {
                    if (leader) bulk_wait_read<0>();  // the boxes staged in the slot have left it
                    if (signals) mbar_arrive(bar0 + 8 * (STAGES + held));
                    held = -1;
                }
            };
            for (int tile = first; tile < sch.tiles; tile += stride) {
                int bm, bn;
                sch.at(tile, rank, bm, bn);
                float acc[Op::NACC];
                if (!consume_tile<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals,
                                                                        [&](int kt) {
                                                                            if (kt == 0) give_back();
                                                                        }))
                    break;
                held = (it - 1) % STAGES;
                // the slot's B is both consumers': C goes into it once the other consumer's MMAs retired too
                if (leader) mbar_arrive(meet);
                if (!mbar_wait_bounded(meet, tiles_done++ & 1)) break;
#ifndef TMA_SKIP_C_STORE
                if (!c_by_tma) {
                    store_wgmma_acc(acc, C, M, N, bm + cw * 64, bn);
                } else if (bm + cw * 64 < M) {
                    store_acc_tma<Op::NACC, CBUFS, SLOT_BUFS>(acc, tmC, cbufs, bm + cw * 64, bn, N, cw,
                                                              base + held * STAGE_BYTES);
                }
#else
                if (acc[0] == 12345.678f) C[0] = acc[1];
#endif
            }
            give_back();
        } else {
            for (int tile = first; tile < sch.tiles; tile += stride) {
                int bm, bn;
                sch.at(tile, rank, bm, bn);
                float acc[Op::NACC];
                if constexpr (SPLIT) {
                    if (!consume_tile_split<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals))
                        break;
                } else if constexpr (SW) {
                    if (!consume_tile_swapped<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals))
                        break;
                } else if constexpr (Op::FLUSH < 0) {
                    if (!consume_tile_overlap<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals))
                        break;
                } else {
                    if (!consume_tile<Op, CLUSTER, STAGES, STAGE_BYTES, BM>(acc, base, bar0, KT, it, cw, signals,
                                                                            [](int) {}))
                        break;
                }
                store_tile(acc, bm, bn);
            }
        }
        if (TMA_STORE && c_by_tma && leader) bulk_wait_all();  // no store still reading this block's memory
    }
    if (CLUSTER > 1) cluster_sync();
#ifdef TP_TRACE
    if (CLUSTER == 1) __syncthreads();
    if (tid == 0 && blockIdx.x < TP_TRACE_CTAS) {
        tp_trace_clock[blockIdx.x][2] = (long long)global_ns();
        tp_trace_clock[blockIdx.x][3] = clock64();
    }
#endif
}

}  // namespace tma_persistent
#endif
