"""The pipelined, autotuned SIMT rung (G12's last step): warp tiling plus double buffering
(register prefetch, STAGES=2) or a cp.async ring (STAGES 3-4, sm_80+), over the tile shapes
`rooflab tune` searches. mm_pipe<BM, BN, BK, WM, WN, TM, TN, STAGES> in pipelined.cu."""

from rooflab.rungs.record import Rung, Step, Variant, cdiv

# (BM, BN, BK, WM, WN, TM, TN, STAGES): the instances pipelined.cu compiles; the first is the
# default until `rooflab tune` has searched this GPU (cuBLAS's sm80 FFMA kernel has the second's shape)
CONFIGS = (
    (128, 128, 8, 64, 64, 8, 16, 3),
    (128, 128, 8, 64, 64, 8, 16, 2),
    (128, 128, 8, 64, 64, 8, 16, 4),
    (128, 256, 8, 64, 64, 8, 16, 2),
    (128, 256, 8, 64, 64, 8, 16, 3),
    (128, 128, 8, 32, 64, 8, 8, 2),
    (128, 128, 8, 32, 64, 8, 8, 3),
    (128, 128, 8, 32, 64, 8, 8, 4),
)


def _variant(c) -> Variant:
    bm, bn, bk, wm, wn, tm, tn, stages = c
    threads = (bm // wm) * (bn // wn) * 32
    return Variant(label=f"{bm}x{bn}x{bk} warp {wm}x{wn} thread {tm}x{tn} stages {stages}",
                   kernel=f"mm_pipe<{bm}, {bn}, {bk}, {wm}, {wn}, {tm}, {tn}, {stages}>", block=(threads, 1, 1),
                   grid=lambda m, n, k, bm=bm, bn=bn: (cdiv(n, bn), cdiv(m, bm), 1))


VARIANTS = tuple(_variant(c) for c in CONFIGS)


def _from_warptile(s: Step) -> str:
    w, p = s.prev, s.this
    return (
        f"Pipelining ran {s.ratio:.2f}× the warp-tiled kernel ({w['ms']:.2f} → {p['ms']:.2f} ms, "
        f"{p['pct_peak']:.1f}% of peak, configuration {s.this_rec.get('tuning', {}).get('config', '?')}). The "
        f"next slice's loads are issued before the current slice's FMAs (into registers, or straight to shared "
        f"memory with cp.async), so global latency hides behind arithmetic and one barrier per slice replaces two."
        + s.evidence("prev") + s.evidence()
    )


def _to_cublas(s: Step) -> str:
    p, c = s.prev, s.this
    gap = p["ms"] / c["ms"]
    verdict = "matches" if gap <= 1.0 else f"is {gap:.2f}× slower than"
    return (
        f"The pipelined rung {verdict} cuBLAS SGEMM ({p['ms']:.3f} vs {c['ms']:.3f} ms; {p['pct_peak']:.1f}% vs "
        f"{c['pct_peak']:.1f}% of the FP32 peak). Both are now issue-bound FFMA loops: what separates them is the "
        f"share of issue slots spent on FFMA (address arithmetic, shared loads and the barrier take the rest) "
        f"and how well the shared-memory reads of the next k-step hide behind the current FMAs, which cuBLAS "
        f"schedules by hand in SASS."
        + s.evidence("prev") + s.evidence()
    )


RUNG = Rung(
    name="pipelined",
    title="pipelined, autotuned (G12)",
    stage="stage 7 (beyond the seed)",
    source="rungs/pipelined.cu",
    kernel=VARIANTS[0].kernel,
    block=VARIANTS[0].block,
    grid=VARIANTS[0].grid,
    loads_per_fma=(128 + 128) / (128 * 128),
    variants=VARIANTS,
    explain=(
        "Warp tiling plus software pipelining: while the FMAs of slice k run, slice k+1 is already on its way, "
        "parked in registers (two shared buffers, STAGES=2) or copied straight into a shared-memory ring with "
        "cp.async (STAGES 3-4); one barrier per slice, and the shared reads of the next k-step are issued "
        "before the FMAs of the current one. The tile shape is searched per GPU by `rooflab tune`."
    ),
    paragraphs=(("warptile", "warp-tiled → pipelined", _from_warptile),),
    ratios=(("warptile", "time_warp-tiled / time_pipelined"),),
)
