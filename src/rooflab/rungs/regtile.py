from rooflab.rungs.record import Rung, Step, cdiv


def _from_tiled(s: Step) -> str:
    c, r = s.prev, s.this
    model = s.this_rec["model"]
    return (
        f"Register tiling ran {s.ratio:.1f}× faster than the TILE=32 kernel ({c['ms']:.2f} → "
        f"{r['ms']:.2f} ms, {r['pct_peak']:.1f}% of peak). The seed's tiled kernel needs two shared-memory loads "
        f"for every FMA, so shared-memory bandwidth, not the FMA units, sets its pace. Giving each thread an "
        f"8×8 block of outputs turns 16 shared loads into 64 FMAs (a quarter load per FMA), and the 128×128 "
        f"block tile lifts the modelled intensity to {model['flop_per_load']:.0f} FLOP per "
        f"global load ({model['ai_flop_per_byte']:.0f} FLOP/byte)."
        + s.evidence("prev") + s.evidence()
    )


RUNG = Rung(
    name="regtile",
    title="register-tiled 8×8 (G12)",
    stage="stage 4 (beyond the seed)",
    source="rungs/regtile.cu",
    kernel="mm_regtile",
    block=(256, 1, 1),
    grid=lambda m, n, k: (cdiv(n, 128), cdiv(m, 128), 1),
    # per BK slice: (128 + 128) x 8 global loads for 128 x 128 x 8 FMAs
    loads_per_fma=(128 + 128) / (128 * 128),
    explain=(
        "The first step of the course's project 9.3: a 256-thread block computes a 128×128 tile of C and "
        "each thread keeps an 8×8 block of outputs in registers. Per k-step a thread reads 8 values of A "
        "and 8 of B from shared memory (as 16-byte vectors) and performs 64 FMAs with them, a quarter of a "
        "shared load per FMA instead of two; each global load now serves 128 FLOP."
    ),
    paragraphs=(("tiled32", "tiled → register-tiled (G12)", _from_tiled),),
    ratios=(("tiled32", "time_tiled(32) / time_register-tiled (G12)"),),
)
