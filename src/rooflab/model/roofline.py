"""The roofline (SPEC P9): roofs, the HBM slope, kernels placed on them, as numbers and as a picture.

A :class:`Roofline` holds one device's memory slope (bytes/s), its compute roofs (FLOP/s: the FP32
CUDA-core roof and, where they apply, tensor-core roofs) and the measured kernels as
:class:`Point` s. Each point names the roof it is judged against, so a TF32 or BF16 kernel is never
measured against the FP32 roof (SPEC G12).

``rows()`` gives the same points as a table; rooflab.report.picture draws it. Pure: no plotting here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from rooflab.errors import UsageError

__all__ = ["AddedCeiling", "Point", "Roof", "Roofline", "example"]

# Default x range (FLOP/byte) and how far it may grow to take in points that fall outside it.
# Points beyond the grown range (or with AI 0 / inf) are clamped to the edge with an arrow marker.
X_MIN, X_MAX = 1e-2, 1e4
X_MIN_CAP, X_MAX_CAP = 1e-3, 1e5


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


def _pos_finite(x: Any) -> bool:
    return _is_num(x) and 0 < x < math.inf


def _fmt(v: float) -> str:
    """A number for a label: three significant figures, no exponent below a million."""
    if not _is_num(v):
        return str(v)
    if v == math.inf:
        return "∞"
    a = abs(v)
    if a >= 1e6:
        return f"{v:.2g}".replace("e+0", "e").replace("e+", "e")
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _fmt_edge(x: float) -> str:
    """An axis-edge value: 1e4 rather than 10000, 1.1e4 rather than 11000."""
    e = math.log10(x)
    if abs(e - round(e)) < 1e-9 and abs(round(e)) >= 3:
        return f"1e{round(e)}"
    if x >= 1e4:
        m, p = f"{x:.2g}".split("e")  # "1.1", "+04"
        return f"{m}e{int(p)}"
    return _fmt(x)


def bandwidth_text(bytes_per_s: float) -> str:
    """``4.81 TB/s`` from one TB/s up, ``320 GB/s`` below."""
    if bytes_per_s >= 1e12:
        return f"{bytes_per_s / 1e12:.2f} TB/s"
    return f"{bytes_per_s / 1e9:.0f} GB/s"


def _enc(x: Any) -> Any:
    """Non-finite floats as strings, so to_dict() survives strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _dec(x: Any) -> Any:
    if isinstance(x, str) and x.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
        return float(x)
    return x


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------


@dataclass
class Roof:
    """A compute ceiling: ``flops`` peak FLOP/s for one kind of unit and precision."""

    name: str  # "FP32 CUDA cores", "BF16 tensor cores"
    flops: float  # peak FLOP/s
    kind: str = "compute"
    dashed: bool = False  # tensor-core roofs are drawn dashed
    precision: str = ""  # "FP32", "TF32", "BF16", ...; defaults to the first word of name

    def __post_init__(self) -> None:
        if not _pos_finite(self.flops):
            raise UsageError(f"roof {self.name!r}: peak must be a positive number of FLOP/s, got {self.flops!r}")
        if not self.precision:
            self.precision = self.name.split()[0] if self.name.split() else ""

    @property
    def is_tensor(self) -> bool:
        return "tensor" in self.name.lower()

    @property
    def label(self) -> str:
        """Short label with the value, e.g. ``FP32 66.9 TFLOP/s`` or ``BF16 tensor 989 TFLOP/s``."""
        prec = self.precision.upper()
        head = f"{prec} tensor" if self.is_tensor else (prec or self.name)
        return f"{head} {_fmt(self.flops / 1e12)} TFLOP/s"


@dataclass
class AddedCeiling:
    """A measured ceiling registered beyond rooflab's own (rooflab.model.ceiling), as the picture draws
    it: a flat roof for FLOP/s, a slope for bytes/s, named by its record, with what reached it."""

    name: str  # its record's name: "FP32 add chains"
    value: float  # FLOP/s or bytes/s
    unit: str  # "FLOP/s" | "B/s"
    what: str = ""  # the kernel or path whose figure it is

    def __post_init__(self) -> None:
        if self.unit not in ("FLOP/s", "B/s"):
            raise UsageError(f"ceiling {self.name!r}: unit must be FLOP/s or B/s, got {self.unit!r}")
        if not _pos_finite(self.value):
            raise UsageError(f"ceiling {self.name!r}: value must be a positive number of {self.unit}, "
                             f"got {self.value!r}")

    @property
    def is_bandwidth(self) -> bool:
        return self.unit == "B/s"

    @property
    def label(self) -> str:
        """``FP32 add chains 33.0 TFLOP/s``, ``L2 reads 9.10 TB/s``."""
        figure = bandwidth_text(self.value) if self.is_bandwidth else f"{_fmt(self.value / 1e12)} TFLOP/s"
        return f"{self.name} {figure}"


@dataclass
class Point:
    """One kernel on the roofline."""

    label: str  # "tiled32"
    ai: float | None  # arithmetic intensity, FLOP/byte; may be 0, inf or None (unknown)
    flops: float | None  # achieved FLOP/s
    ai_source: str  # "ncu" (measured DRAM bytes) or "model" (FLOPs / modelled bytes)
    roof: str  # name (or precision) of the roof it is judged against; "" = the first roof
    note: str = ""

    @property
    def measured_ai(self) -> bool:
        return self.ai_source.strip().lower() in ("ncu", "measured")


@dataclass
class Roofline:
    """A device's roofline: the HBM slope, its compute roofs and the kernels placed on them."""

    device: str
    bandwidth: float  # bytes/s, the slope
    bandwidth_label: str = ""  # "HBM3e 4.81 TB/s (memory clock × bus width)", "GDDR6 320 GB/s (datasheet)"
    roofs: list[Roof] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    measured_bandwidth: float | None = None  # measured copy bandwidth: a second, dotted slope
    title: str = ""
    # roofs whose peak is not known (an architecture missing from model/arch.py), by name, with what to say
    # where the peak would be: {"FP32 CUDA cores": "peak unknown for sm_130"}. Points may name them.
    unknown_peaks: dict[str, str] = field(default_factory=dict)
    measured_flops: float | None = None  # a measured FMA rate, drawn as a dotted ceiling (where the peak is unknown)
    # reference points that are not measured kernels (y = a·x's attainable point on a theoretical roofline):
    # drawn and labelled, never in rows()
    marks: list[Point] = field(default_factory=list)
    # measured ceilings registered beyond rooflab's own: drawn (a roof or a slope) and labelled, never in rows()
    added_ceilings: list[AddedCeiling] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not _pos_finite(self.bandwidth):
            raise UsageError(f"roofline for {self.device!r}: bandwidth must be a positive number of bytes/s, "
                             f"got {self.bandwidth!r}")
        if self.measured_bandwidth is not None and not _pos_finite(self.measured_bandwidth):
            raise UsageError(f"roofline for {self.device!r}: measured bandwidth must be positive, "
                             f"got {self.measured_bandwidth!r}")
        if self.measured_flops is not None and not _pos_finite(self.measured_flops):
            raise UsageError(f"roofline for {self.device!r}: measured FLOP/s must be positive, "
                             f"got {self.measured_flops!r}")
        if not self.bandwidth_label:
            self.bandwidth_label = f"memory {bandwidth_text(self.bandwidth)}"

    # -- lookups and arithmetic -----------------------------------------------------------------

    def _find(self, name: str) -> Roof | None:
        if not self.roofs:
            return None
        if not name:
            return self.roofs[0]
        for r in self.roofs:
            if r.name == name:
                return r
        key = name.strip().lower()
        for r in self.roofs:
            if r.name.lower() == key:
                return r
        for r in self.roofs:
            if r.precision.lower() == key:
                return r
        # "BF16 tensor" or "bf16" finds a roof shared by several precisions ("FP16/BF16 tensor")
        words = key.split()
        if words:
            for r in self.roofs:
                shared = words[0] in r.precision.lower().split("/")
                if shared and (len(words) == 1 or r.is_tensor == ("tensor" in words)):
                    return r
        return None

    def roof(self, name: str | Roof = "") -> Roof:
        """The roof called ``name`` (exact, then case-insensitive name, then precision); "" = first roof."""
        if isinstance(name, Roof):
            return name
        found = self._find(name)
        if found is not None:
            return found
        if not self.roofs:
            raise UsageError(f"roofline for {self.device!r} has no roofs")
        if name in self.unknown_peaks:
            raise UsageError(f"{name} on {self.device!r}: {self.unknown_peaks[name]}")
        raise UsageError(f"no roof called {name!r} on {self.device!r} "
                         f"(roofs: {', '.join(r.name for r in self.roofs)})")

    def ridge(self, roof: str | Roof = "") -> float:
        """The ridge point of ``roof``: its peak FLOP/s ÷ bandwidth, in FLOP/byte."""
        return self.roof(roof).flops / self.bandwidth

    def attainable(self, ai: float, roof: str | Roof = "") -> float:
        """min(peak, ai × bandwidth) in FLOP/s; ai may be 0 or inf."""
        if not _is_num(ai) or ai < 0:
            raise UsageError(f"arithmetic intensity must be a number ≥ 0, got {ai!r}")
        r = self.roof(roof)
        return min(r.flops, ai * self.bandwidth)

    def rows(self) -> list[dict[str, Any]]:
        """The points as a table, one dict per point.

        Keys: label, ai, ai_source, achieved_tflops, roof, ridge_ai, attainable_tflops,
        pct_of_attainable, bound ("memory-bound" / "compute-bound", or "unknown" without an AI or a
        peak), note, peak_note (why ridge and attainable are None when the roof's peak is unknown).
        """
        out = []
        for p in self.points:
            achieved = p.flops / 1e12 if _is_num(p.flops) else None
            if self._find(p.roof) is None and p.roof in self.unknown_peaks:
                out.append({"label": p.label, "ai": p.ai, "ai_source": p.ai_source, "achieved_tflops": achieved,
                            "roof": p.roof, "ridge_ai": None, "attainable_tflops": None, "pct_of_attainable": None,
                            "bound": "unknown", "note": p.note, "peak_note": self.unknown_peaks[p.roof]})
                continue
            r = self.roof(p.roof)
            ridge = self.ridge(r)
            if _is_num(p.ai) and p.ai >= 0:
                att = self.attainable(p.ai, r)
                bound = "memory-bound" if p.ai < ridge else "compute-bound"
                att_t = att / 1e12
                pct = 100.0 * p.flops / att if (achieved is not None and att > 0) else None
            else:
                att_t, pct, bound = None, None, "unknown"
            out.append({
                "label": p.label,
                "ai": p.ai,
                "ai_source": p.ai_source,
                "achieved_tflops": achieved,
                "roof": r.name,
                "ridge_ai": ridge,
                "attainable_tflops": att_t,
                "pct_of_attainable": pct,
                "bound": bound,
                "note": p.note,
                "peak_note": "",
            })
        return out

    # -- JSON -------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite numbers as "inf"/"nan" strings); from_dict() reads it back."""
        d = asdict(self)
        for p in d["points"] + d["marks"]:
            p["ai"], p["flops"] = _enc(p["ai"]), _enc(p["flops"])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Roofline:
        def points(key: str) -> list[Point]:
            return [Point(**{**p, "ai": _dec(p.get("ai")), "flops": _dec(p.get("flops"))}) for p in d.get(key, [])]

        try:
            roofs = [Roof(**{**r, "flops": _dec(r["flops"])}) for r in d.get("roofs", [])]
            return cls(
                device=d["device"],
                bandwidth=_dec(d["bandwidth"]),
                bandwidth_label=d.get("bandwidth_label", ""),
                roofs=roofs,
                points=points("points"),
                measured_bandwidth=_dec(d.get("measured_bandwidth")),
                title=d.get("title", ""),
                unknown_peaks=dict(d.get("unknown_peaks") or {}),
                measured_flops=_dec(d.get("measured_flops")),
                marks=points("marks"),
                added_ceilings=[AddedCeiling(**{**c, "value": _dec(c["value"])}) for c in d.get("added_ceilings", [])],
            )
        except (KeyError, TypeError) as e:
            raise UsageError(f"not a roofline: {e}") from e


# ----------------------------------------------------------------------------------------------
# an example (H200-like numbers), for tests and for the docs
# ----------------------------------------------------------------------------------------------


def example() -> Roofline:
    """An H200-like roofline with the copy and FMA kernels and the SGEMM ladder on it."""
    return Roofline(
        device="NVIDIA H200 (example numbers)",
        bandwidth=4.81e12,
        bandwidth_label="HBM 4.81 TB/s (memory clock × bus width)",
        roofs=[
            Roof("FP32 CUDA cores", 66.9e12, precision="FP32"),
            Roof("TF32 tensor cores", 494.7e12, dashed=True, precision="TF32"),
            Roof("BF16 tensor cores", 989e12, dashed=True, precision="BF16"),
        ],
        points=[
            Point("copy", 0.125, 0.53e12, "model", "FP32 CUDA cores", note="copy placed as y=a·x"),
            Point("fma", 1e6, 65e12, "ncu", "FP32 CUDA cores"),
            Point("naive", 0.25, 0.97e12, "model", "FP32 CUDA cores"),
            Point("coalesced", 0.25, 5.2e12, "model", "FP32 CUDA cores"),
            Point("tiled16", 4, 7e12, "model", "FP32 CUDA cores"),
            Point("tiled32", 8, 8.8e12, "model", "FP32 CUDA cores"),
            Point("cublas", 683, 50.4e12, "model", "FP32 CUDA cores"),
        ],
        measured_bandwidth=0.53e12 / 0.125,
    )
