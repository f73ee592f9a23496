"""The FP8 rung: from the BF16 warp-specialised TMA rung to FP8 on the same machinery, and against
cuBLASLt's FP8 GEMM, naming the accumulation each ran; Nsight Compute's figures where profiled."""

from __future__ import annotations

from rooflab.report.climb.step import Step, change
from rooflab.rungs.wgmma_fp8 import FAST


def _label(rec: dict) -> str:
    """The variant a record ran (the tuning block names it, tuned or not)."""
    return (rec.get("tuning") or {}).get("config") or ""


def _accumulation(rec: dict) -> str:
    """How a record of either rung accumulated, from the variant it recorded (its default where it
    names none)."""
    fast = FAST in _label(rec)
    if rec.get("kernel") == "cublaslt_fp8":
        return "use_fast_accum=True" if fast else "use_fast_accum=False (its accurate accumulation)"
    return "the tensor core's own accumulation" if fast else "FP32 adds of each k-tile's partial sums"


def vs_cublaslt(s: Step) -> str:
    lib, ours = s.prev, s.this
    return (f"wgmma FP8 against cuBLASLt FP8 in the same run: {ours['ms']:.3f} ms ({ours['gflops'] / 1e3:,.0f} "
            f"TFLOP/s, {ours['pct_peak']:.0f}% of the FP8 roof) against {lib['ms']:.3f} ms "
            f"({lib['gflops'] / 1e3:,.0f} TFLOP/s, {lib['pct_peak']:.0f}%): {s.ratio:.3f}× cuBLASLt's speed, ours "
            f"with {_accumulation(s.this_rec)}, cuBLASLt's with {_accumulation(s.prev_rec)}. Normwise error "
            f"against the rounded inputs' product {s.norm_text('this')} for ours, {s.norm_text('prev')} for cuBLASLt."
            + s.evidence_or_hint())


def bf16_to_fp8(s: Step) -> str:
    return (f"FP8 on the BF16 rung's machinery (the same TMA ring, producer warpgroup and setmaxnreg split): "
            f"{s.ratio:.2f}× the BF16 rung's speed ({s.prev['ms']:.3f} → {s.this['ms']:.3f} ms, "
            f"{s.this['gflops'] / 1e3:,.0f} TFLOP/s, {s.this['pct_peak']:.0f}% of the FP8 roof, which is twice the "
            f"BF16 one). An e4m3 element is one byte, so a 128-byte swizzle row holds 128 k where it held 64 and "
            f"each stage carries twice the k per byte; each m64nNk32 MMA does twice the work of a k16 BF16 one."
            + s.evidence_or_hint())


def _accumulations(s: Step) -> str:
    now, before = _accumulation(s.this_rec), _accumulation(s.prev_rec)
    return f"both with {now}" if now == before else f"with {now} against {before} before"


def to_persistent(s: Step) -> str:
    how = ("through shared memory and TMA stores" if "TMA-store" in _label(s.this_rec)
           else "from the registers straight to memory")
    return (f"FP8 on the persistent body: {change(s.ratio)} ({s.prev['ms']:.3f} → "
            f"{s.this['ms']:.3f} ms, {s.this['gflops'] / 1e3:,.0f} TFLOP/s, {s.this['pct_peak']:.0f}% of the FP8 roof), "
            f"{_accumulations(s)}. One block an SM walks its "
            f"tiles with the ring running on between them, the next tile's stages loading while C (4 bytes an "
            f"element, four times an e4m3 operand's) leaves {how}." + s.evidence_or_hint())


# (rung, the earlier rung it is compared with) -> (heading, paragraph)
PARAGRAPHS = {
    ("wgmma_fp8", "wgmma_bf16_tma_ws"): ("wgmma BF16 → wgmma FP8 (TMA + warp specialisation)", bf16_to_fp8),
    ("wgmma_fp8", "cublaslt_fp8"): ("wgmma FP8 vs cuBLASLt FP8", vs_cublaslt),
    ("wgmma_fp8_persistent", "wgmma_fp8"): ("wgmma FP8 → persistent", to_persistent),
    ("wgmma_fp8_persistent", "cublaslt_fp8"): ("wgmma FP8 persistent vs cuBLASLt FP8", vs_cublaslt),
}
