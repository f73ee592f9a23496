"""Which family a placed kernel belongs to, for pictures that split or filter by family: the FP32
CUDA-core (SIMT) rungs, the tensor-core rungs, the Triton rungs, the ceilings (FMA, copy) and the
user's own kernels (`rooflab bench`)."""

from __future__ import annotations

SIMT, TENSOR, TRITON, CEILINGS, USER = "SIMT", "tensor", "Triton", "ceilings", "user kernels"
ORDER = (SIMT, TENSOR, TRITON, CEILINGS, USER)
TITLES = {SIMT: "SIMT rungs (FP32 CUDA cores)", TENSOR: "tensor-core rungs", TRITON: "Triton rungs",
          CEILINGS: "ceilings (FMA, copy)", USER: "your kernels"}


def families(doc: dict) -> dict[str, str]:
    """Family of every kernel label the document places (GEMM rungs, bench rows, the ceilings)."""
    out = {"fma": CEILINGS, "copy": CEILINGS, "copy_scalar": CEILINGS}
    for rec in (doc.get("gemm") or {}).get("rungs", []):
        name = rec.get("kernel", "")
        if name.startswith("triton"):
            out[name] = TRITON
        else:
            out[name] = SIMT if rec.get("precision", "fp32") == "fp32" else TENSOR
    for rec in (doc.get("bench") or {}).get("rows", []):
        out.setdefault(rec.get("kernel") or rec.get("label") or "", USER)
    return out


def family(fams: dict[str, str], label: str) -> str:
    return fams.get(label, USER)
