"""The wgmma rungs fed by TMA: for BF16 the cp.async ring to TMA loads, TMA to warp specialisation, to
persistent blocks, to 2-CTA clusters with multicast, to the TMA-store epilogue, each against cuBLAS
BF16; TF32 and 3xTF32 from their cp.async rungs to the same persistent body, then to the swapped product
that needs no pre-pass, against cuBLAS TF32 and SGEMM; where the run was profiled, Nsight Compute's
figures of both rungs."""

from __future__ import annotations

from rooflab.report.climb.step import Paragraph, Step, change


def _figures(s: Step, roof: str = "BF16") -> str:
    """The step's change and the two rungs' figures: "1.27× as fast (1.780 → 1.406 ms, 782 TFLOP/s, 79%
    of the BF16 roof)"."""
    return (f"{change(s.ratio)} ({s.prev['ms']:.3f} → {s.this['ms']:.3f} ms, {s.this['gflops'] / 1e3:,.0f} TFLOP/s, "
            f"{s.this['pct_peak']:.0f}% of the {roof} roof)")


def cp_async_to_tma(s: Step) -> str:
    return (f"TMA loads in place of the cp.async ring: {_figures(s)}. One thread issues a "
            f"stage as a few 64×64 boxes and an mbarrier counts their bytes, where every thread of the cp.async "
            f"rung computed an address and a predicate for each 16-byte chunk, fenced the async proxy and met the "
            f"block at a barrier every k-tile; the warps now only wait on a barrier's phase and issue wgmma."
            + s.evidence_or_hint())


def tma_to_ws(s: Step) -> str:
    return (f"Warp specialisation: {_figures(s)}. A producer "
            f"warpgroup, its registers given to the consumers with setmaxnreg, keeps up to a whole ring of "
            f"stages in flight and waits only for a slot to be released; in the TMA rung one consumer thread "
            f"issued the loads between its own wgmma, so a refill waited until that thread's warpgroup had "
            f"finished the previous k-tile." + s.evidence_or_hint())


def ws_to_persistent(s: Step) -> str:
    return (f"Persistent blocks: {_figures(s)}. One block an SM walks "
            f"the tiles in grouped order and its producer runs the ring on from one tile into the next, so the next "
            f"tile's first stages load while the consumers store this tile's C; a block a tile paid the ring's fill "
            f"and its launch at every tile." + s.evidence_or_hint())


def persistent_to_cluster(s: Step) -> str:
    return (f"2-CTA clusters with TMA multicast: {_figures(s)}. The two blocks of a "
            f"cluster hold vertically adjacent tiles that read the same 256 columns of B: each loads half of B's "
            f"panels once and multicasts them into both blocks' shared memory, so B crosses from L2 once per pair "
            f"(a third less L2-to-SM traffic for this tile shape); a slot is released on both blocks' barriers."
            + s.evidence_or_hint())


def to_tma_store(s: Step) -> str:
    return (f"The epilogue through shared memory and TMA stores: {_figures(s)}. "
            f"Each consumer warpgroup writes its 64×256 FP32 accumulators into shared memory a 64×32 box at a time "
            f"and one thread hands each box to a TMA store, so the warpgroup starts the next tile's wgmma while C "
            f"goes out to memory; before, the tensor cores waited for every thread's 64 global stores, and C is "
            f"4 bytes an element here, as much as both BF16 operands of a 128-row tile at K = 128." + s.evidence_or_hint())


def vs_cublas(what: str, library: str = "cuBLAS BF16", roof: str = "BF16") -> Paragraph:
    """On a TMA record, after its cuBLAS peer: prev is cuBLAS, this is ours."""
    def para(s: Step) -> str:
        lib, ours = s.prev, s.this
        return (f"{what} against {library} in the same run: {ours['ms']:.3f} ms ({ours['gflops'] / 1e3:,.0f} "
                f"TFLOP/s, {ours['pct_peak']:.0f}% of the {roof} roof) against {lib['ms']:.3f} ms "
                f"({lib['gflops'] / 1e3:,.0f} TFLOP/s): {s.ratio:.3f}× cuBLAS's speed." + s.evidence_or_hint())
    return para


def ring_to_persistent_tf32(s: Step) -> str:
    return (f"TF32 from its cp.async ring to the BF16 climb's persistent TMA body: {_figures(s, 'TF32')}. The "
            f"pre-pass now only transposes B (its bits as they are) and A is read where it lies: half the bytes "
            f"of rounding and copying both, the tensor core truncating to TF32 as it reads (normwise error "
            f"{s.norm_text('prev')} → {s.norm_text('this')}). After it, TMA boxes counted by an mbarrier replace every "
            f"thread's 16-byte cp.async chunks and a block barrier per k-tile, a producer warpgroup runs the ring "
            f"ahead, one block an SM walks all its tiles, and C leaves through TMA stores while the next tile "
            f"starts." + s.evidence_or_hint())


def transpose_to_swap(s: Step) -> str:
    return (f"TF32 without the transpose: {_figures(s, 'TF32')}. The kernel computes C^T = B^T A^T: B's boxes land "
            f"as B lies and each consumer warpgroup loads its 64 rows of B^T into registers, the operand wgmma may "
            f"take from registers in any layout, while A, K-major as it lies, stays the shared-memory operand; so "
            f"the pre-pass that wrote B^T (a read and a write of all of B, timed with the GEMM) is gone, and the "
            f"tile's C^T leaves transposed through shared memory. Normwise error {s.norm_text('prev')} → "
            f"{s.norm_text('this')}." + s.evidence_or_hint())


def ring_to_persistent_3xtf32(s: Step) -> str:
    return (f"3xTF32 from its cp.async ring to the persistent TMA body: {_figures(s, 'TF32÷3')}. Each stage "
            f"carries both parts of both operands in TMA boxes (the high parts and the residuals stacked in one "
            f"tensor map each), the partial accumulator is flushed into the FP32 one as before, and the block stays "
            f"resident over its tiles, storing C through TMA while the next tile's products start. Normwise error "
            f"{s.norm_text('prev')} → {s.norm_text('this')}." + s.evidence_or_hint())


def prepass_to_split(s: Step) -> str:
    return (f"3xTF32 without the pre-pass: {_figures(s, 'TF32÷3')}. The kernel computes C^T = B^T A^T as the "
            f"swapped TF32 rung does, so A and B are each loaded once as they lie, and splits them where they are "
            f"read: each consumer warpgroup its B^T fragments in registers, two otherwise idle producer warps each "
            f"stage's A residual into a buffer beside it, which a third barrier of the stage hands to the "
            f"consumers. The pre-pass that read both operands and wrote both parts of each (timed with the GEMM) "
            f"is gone, and a stage carries half the bytes. Normwise error {s.norm_text('prev')} → "
            f"{s.norm_text('this')}." + s.evidence_or_hint())


def vs_sgemm_of(what: str) -> Paragraph:
    """On a 3xTF32 record, after cuBLAS SGEMM: prev is SGEMM, this is ours."""
    def para(s: Step) -> str:
        lib, ours = s.prev, s.this
        return (f"{what} against cuBLAS SGEMM in the same run: {ours['ms']:.3f} ms "
                f"({ours['gflops'] / 1e3:,.1f} TFLOP/s, {ours['pct_peak']:.0f}% of the TF32÷3 roof) against "
                f"{lib['ms']:.3f} ms ({lib['gflops'] / 1e3:,.1f} TFLOP/s on the FP32 CUDA cores): {s.ratio:.2f}× "
                f"SGEMM's speed, normwise error {s.norm_text('this')} against SGEMM's {s.norm_text('prev')}, both on "
                f"FP32 inputs." + s.evidence_or_hint())
    return para


vs_sgemm = vs_sgemm_of("wgmma 3xTF32 on TMA")


# (rung, the earlier rung it is compared with) -> (heading, paragraph)
PARAGRAPHS = {
    ("wgmma_bf16_tma", "wgmma_bf16"): ("cp.async ring → TMA loads (BF16)", cp_async_to_tma),
    ("wgmma_bf16_tma", "cublas_bf16"): ("wgmma BF16 TMA vs cuBLAS BF16", vs_cublas("wgmma BF16 on TMA")),
    ("wgmma_bf16_tma_ws", "wgmma_bf16_tma"): ("TMA → warp specialisation (BF16)", tma_to_ws),
    ("wgmma_bf16_tma_ws", "cublas_bf16"): ("wgmma BF16 warp-specialised vs cuBLAS BF16",
                                           vs_cublas("wgmma BF16, TMA + warp specialisation")),
    ("wgmma_bf16_persistent", "wgmma_bf16_tma_ws"): ("warp specialisation → persistent blocks (BF16)", ws_to_persistent),
    ("wgmma_bf16_persistent", "cublas_bf16"): ("wgmma BF16 persistent vs cuBLAS BF16",
                                               vs_cublas("wgmma BF16, persistent")),
    ("wgmma_bf16_cluster", "wgmma_bf16_persistent"): ("persistent → 2-CTA clusters with multicast (BF16)",
                                                      persistent_to_cluster),
    ("wgmma_bf16_cluster", "cublas_bf16"): ("wgmma BF16 clusters vs cuBLAS BF16",
                                            vs_cublas("wgmma BF16, clusters + multicast")),
    ("wgmma_bf16_tma_store", "wgmma_bf16_cluster"): ("registers → TMA-store epilogue (BF16)", to_tma_store),
    ("wgmma_bf16_tma_store", "cublas_bf16"): ("wgmma BF16 TMA-store epilogue vs cuBLAS BF16",
                                              vs_cublas("wgmma BF16, persistent + TMA-store epilogue")),
    ("wgmma_tf32_tma", "wgmma_tf32"): ("cp.async ring → persistent TMA body (TF32)", ring_to_persistent_tf32),
    ("wgmma_tf32_tma", "cublas_tf32"): ("wgmma TF32 on TMA vs cuBLAS TF32",
                                        vs_cublas("wgmma TF32, persistent on TMA", "cuBLAS TF32", "TF32")),
    ("wgmma_tf32_swap", "wgmma_tf32_tma"): ("transposed B → B^T through registers (TF32)", transpose_to_swap),
    ("wgmma_tf32_swap", "cublas_tf32"): ("wgmma TF32 C^T = B^T A^T vs cuBLAS TF32",
                                         vs_cublas("wgmma TF32, C^T = B^T A^T with no pre-pass", "cuBLAS TF32",
                                                   "TF32")),
    ("wgmma_3xtf32_tma", "wgmma_3xtf32"): ("cp.async ring → persistent TMA body (3xTF32)", ring_to_persistent_3xtf32),
    ("wgmma_3xtf32_tma", "cublas"): ("wgmma 3xTF32 on TMA vs cuBLAS SGEMM", vs_sgemm),
    ("wgmma_3xtf32_swap", "wgmma_3xtf32_tma"): ("pre-pass → split where read (3xTF32)", prepass_to_split),
    ("wgmma_3xtf32_swap", "cublas"): ("wgmma 3xTF32 C^T = B^T A^T vs cuBLAS SGEMM",
                                      vs_sgemm_of("wgmma 3xTF32, C^T = B^T A^T with no pre-pass")),
}
