"""The documents the climb paragraphs are rendered from in tests/test_report_climb.py: the recorded
H200 runs, each also without its profile, and one constructed from the widest of them with
records for the rungs no recorded run holds (Triton, the TMA rungs), so every step's paragraph
is rendered. Built from the documents alone, so the expected paragraphs stay valid as the rung
records change."""

from __future__ import annotations

import copy
import json
from pathlib import Path

DATA = Path(__file__).parent / "data"
RECORDED = ("h200_report", "h200_report_levels", "h200_results")
EXPECTED = DATA / "expected" / "climb_paragraphs.json"

# rung -> (the recorded rung it is cloned from, its title, the factor on that rung's times)
_CLONES = {
    "triton_fp32": ("cublas", "Triton FP32 (ieee, CUDA cores)", 1.21),
    "triton_tf32": ("cublas_tf32", "Triton TF32", 1.37),
    "triton_tf32x3": ("mma_3xtf32", "Triton tf32x3 (FP32-accurate)", 1.9),
    "triton_bf16": ("cublas_bf16", "Triton BF16", 1.08),
    "wgmma_bf16_tma": ("wgmma_bf16", "wgmma BF16, TMA loads (Hopper)", 0.83),
    "wgmma_bf16_tma_ws": ("wgmma_bf16", "wgmma BF16, TMA + warp-specialised (Hopper)", 0.79),
}


def _scaled(rec: dict, name: str, title: str, factor: float) -> dict:
    out = copy.deepcopy(rec)
    out["kernel"], out["title"] = name, title
    t = out["timing"]
    t["times_ms"] = [x * factor for x in t["times_ms"]]
    for key in ("mean_ms", "median_ms", "min_ms", "max_ms"):
        t[key] *= factor
    return out


def constructed(doc: dict) -> dict:
    """The recorded document with the Triton and TMA rungs added (and profiled, for the TMA rungs)."""
    out = copy.deepcopy(doc)
    recs = {r["kernel"]: r for r in out["gemm"]["rungs"]}
    kernels = {k["label"]: k for k in out["profile"]["kernels"]}
    for name, (base, title, factor) in _CLONES.items():
        out["gemm"]["rungs"].append(_scaled(recs[base], name, title, factor))
        if name.startswith("wgmma"):
            prof = copy.deepcopy(kernels[base])
            prof["label"] = name
            out["profile"]["kernels"].append(prof)
    return out


def unprofiled(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    out.pop("profile", None)
    return out


def documents() -> dict[str, dict]:
    """name -> document, every one the paragraphs are compared on."""
    docs = {name: json.loads((DATA / f"{name}.json").read_text()) for name in RECORDED}
    docs["constructed"] = constructed(docs["h200_report_levels"])
    return {**docs, **{f"{name}, unprofiled": unprofiled(d) for name, d in docs.items()}}
