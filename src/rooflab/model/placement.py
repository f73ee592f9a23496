"""Where each measured kernel sits on the roofline (P9), from a results document.

AI comes from Nsight Compute when the document has a profile of that kernel (a GEMM
rung's 2·M·N·K FLOPs, the FMA kernel's FP32 FLOPs, over the DRAM bytes ncu measured:
what the DRAM really moved; ncu's FP32 counters do not see tensor-core work), otherwise from the rung's
traffic model (which counts no cache reuse, so naive/coalesced points can land
above the HBM slope: the caches served part of the traffic).
"""

from __future__ import annotations

from dataclasses import replace

from rooflab.errors import UsageError
from rooflab.model.arch import peak_unknown
from rooflab.model.brackets import added
from rooflab.model.ceilings import summarize
from rooflab.model.hierarchy import Hierarchy, hierarchy, profiled_at_timed_shape
from rooflab.model.metrics import DERIVED_ROOFS, median_ms
from rooflab.model.ridge import SCALE_AI
from rooflab.model.roofline import AddedCeiling, Point, Roof, Roofline, bandwidth_text
from rooflab.model.specs import PRECISIONS, GpuSpec, find_spec

FP32_ROOF = "FP32 CUDA cores"


def _profiles(doc: dict) -> dict[str, dict]:
    return {k["label"]: k for k in (doc.get("profile") or {}).get("kernels", [])}


def roofs_for(device: dict) -> list[Roof]:
    """The device's compute roofs: FP32 CUDA cores where its peak is known, and a dashed roof for every
    tensor rate it has (precisions that share one rate share one roof: "FP16/BF16 tensor")."""
    roofs = [Roof(FP32_ROOF, device["fp32_peak_flops"], precision="fp32")] if device.get("fp32_peak_flops") else []
    rates = device.get("tensor_peaks") or {}
    shared: dict[float, list[str]] = {}
    for p in [p for p in PRECISIONS if p in rates] + [p for p in rates if p not in PRECISIONS]:
        if rates[p]:
            shared.setdefault(rates[p], []).append(p)
    for rate, precs in shared.items():
        roofs.append(Roof(f"{'/'.join(p.upper() for p in precs)} tensor", rate, dashed=True, precision="/".join(precs)))
    return roofs


def _spec(device: dict) -> GpuSpec | None:
    try:
        return find_spec(device["spec_key"]) if device.get("spec_key") else None
    except UsageError:
        return None


def bandwidth_label(device: dict) -> str:
    """The memory slope's label: memory type (from the spec table, where the part is in it), value, source."""
    spec = _spec(device)
    memory = spec.memory_type if spec and spec.memory_type else "memory"
    source = "datasheet" if device.get("spec_only") else "memory clock × bus width"
    return f"{memory} {bandwidth_text(device['hbm_peak_bytes_per_s'])} ({source})"


def roof_name(precision: str, roofs: list[Roof]) -> str:
    """The roof a kernel of this precision is judged against: FP32 CUDA cores, or the tensor roof
    whose precisions include it ("FP16/BF16 tensor" for bf16); FP32's when the device has none."""
    p = (precision or "fp32").lower()
    if p == "fp32":
        return FP32_ROOF
    for r in roofs:
        if p in r.precision.lower().split("/"):
            return r.name
    return FP32_ROOF


def derived_roofs(doc: dict, roofs: list[Roof]) -> list[Roof]:
    """Roofs that are a share of another, for the precisions the run used: 3xTF32 = TF32 ÷ 3."""
    used = {r.get("precision") for r in (doc.get("gemm") or {}).get("rungs", [])}
    out = []
    for prec, (base, share) in DERIVED_ROOFS.items():
        parent = next((r for r in roofs if base in r.precision.lower().split("/")), None)
        if prec in used and parent:
            out.append(Roof(f"{prec.replace('x', '×').upper().replace('×', 'x')} tensor (TF32 ÷ 3)",
                            parent.flops * share, dashed=True, precision=prec))
    return out


def points(doc: dict, roofs: list[Roof] | None = None) -> list[Point]:
    roofs = roofs if roofs is not None else roofs_for(doc["device"])
    prof = _profiles(doc)
    pts: list[Point] = []
    bw = doc.get("bandwidth")
    if bw and (bw.get("scale") or {}).get("gflops"):
        sc = bw["scale"]
        pts.append(Point("copy ≡ y=a·x", 0.125, sc["gflops"] * 1e9, "model", FP32_ROOF,
                         note=f"copy does no FLOPs; placed as the y = a·x kernel (same 8 bytes per element, "
                              f"1 FLOP): measured {sc['gbs']:,.0f} GB/s, {sc['gflops']:,.0f} GFLOP/s"))
    fl = doc.get("flops")
    if fl:
        rows = [r for r in fl["rows"] if r.get("tflops")]
        if rows:
            best = max(rows, key=lambda r: r["tflops"])
            p = prof.get("fma")
            ai = p["ai"] if p and p.get("ai") else best["flops"] / (best["threads"] * 4.0)
            pts.append(Point(f"fma ({best['accumulators']} acc)", ai, best["tflops"] * 1e12,
                             "ncu" if p and p.get("ai") else "model", FP32_ROOF))
    gm = doc.get("gemm")
    if gm:
        for rec in gm["rungs"]:
            ms = median_ms(rec)
            if not ms:
                continue  # a failed rung has no throughput, so no point
            p = prof.get(rec["kernel"])
            # measured bytes over the rung's own FLOPs (2·M·N·K): ncu's FP32 instruction counters do not
            # see tensor-core work, so a TF32/BF16 GEMM would land at the AI of its epilogue
            measured = (p is not None and bool(p.get("dram_bytes"))
                        and profiled_at_timed_shape(rec, (doc.get("profile") or {}).get("config") or {}))
            ai = rec["flops"] / p["dram_bytes"] if measured else rec["model"]["ai_flop_per_byte"]
            roof = roof_name(rec.get("precision", "fp32"), roofs)
            pts.append(Point(rec["kernel"], ai, rec["flops"] / (ms * 1e-3), "ncu" if measured else "model", roof))
    for rec in (doc.get("bench") or {}).get("rows", []):
        if rec.get("passed") and rec.get("timing") and rec.get("flops"):  # no FLOPs (a copy): no FLOP/s point
            s = rec["timing"]["median_ms"] * 1e-3
            roof = roof_name(rec.get("precision", "fp32"), roofs)
            pts.append(Point(rec["kernel"], rec["flops"] / rec["bytes"], rec["flops"] / s, "model", roof))
    return pts


def added_ceilings(doc: dict) -> list[AddedCeiling]:
    """Every ceiling registered beyond rooflab's own whose kernel the document measured, at the figure
    its bracket draws (the higher of its kernel's and its witness's; none above its physical limit). A
    witness alone is no measured roof, as in the summary's roofs table."""
    out = []
    for c in added(doc):
        for b in c.brackets(doc):
            if b.roof and b.ceiling:
                what = b.ceiling_what if b.ceiling == b.roof else b.witness_what
                out.append(AddedCeiling(b.name, b.roof, b.unit, what))
    return out


def hierarchical_roofline(doc: dict) -> Hierarchy | None:
    """The hierarchical roofline (rooflab.model.hierarchy) with the ceilings registered beyond
    rooflab's own, as the flat roofline has them; None without a device FP32 peak."""
    h = hierarchy(doc)
    return replace(h, added_ceilings=added_ceilings(doc)) if h is not None else None


def unknown_peaks(device: dict) -> dict[str, str]:
    """{roof name: what to say where its peak would be} for the roofs whose peak is unknown."""
    return {} if device.get("fp32_peak_flops") else {FP32_ROOF: peak_unknown(device["cc"])}


def _best_fma(doc: dict) -> float | None:
    rows = [r["tflops"] for r in (doc.get("flops") or {}).get("rows", []) if r.get("tflops")]
    return max(rows) * 1e12 if rows else None


def roofline(doc: dict) -> Roofline:
    dev = doc["device"]
    measured = None
    if doc.get("bandwidth"):
        best = summarize(doc["bandwidth"])["best"]
        measured = best["gbs"] * 1e9 if best else None
    unknown = unknown_peaks(dev)
    bw = dev["hbm_peak_bytes_per_s"]
    roofs = roofs_for(dev)
    roofs += derived_roofs(doc, roofs)
    marks = []
    if dev.get("spec_only"):  # nothing measured: show where y = a·x (the text's example) would land
        marks.append(Point(f"y = a·x: AI {SCALE_AI}, {SCALE_AI * bw / 1e12:.2g} TFLOP/s attainable", SCALE_AI,
                           SCALE_AI * bw, "spec", FP32_ROOF))
    return Roofline(
        device=dev["name"],
        bandwidth=bw,
        bandwidth_label=bandwidth_label(dev),
        roofs=roofs,
        points=points(doc, roofs),
        measured_bandwidth=measured,
        title=(f"{dev['name']} — theoretical (spec sheet), nothing measured" if dev.get("spec_only")
               else f"{dev['name']} — rooflab, {doc.get('created', '')[:10]}"),
        marks=marks,
        unknown_peaks=unknown,
        # where the FP32 peak is unknown, the measured FMA rate is the ceiling the picture can show
        measured_flops=_best_fma(doc) if unknown else None,
        added_ceilings=added_ceilings(doc),
    )
